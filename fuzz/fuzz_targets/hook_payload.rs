//! Fuzzes berth-hook's payload parser (pure: bytes in, a payload or a reason
//! out), through the `berth_hook` library target.
//! Invariants: never panics; a refusal has a message; an accepted payload's
//! cwd is absent or absolute, and is never empty.
#![no_main]

use berth_hook::payload;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut forced = vec![None];
    forced.extend(
        ["claude-code", "codex", "copilot-cli", "vscode", "cursor", "gemini-cli"]
            .into_iter()
            .map(payload::Client::from_name),
    );
    for client in forced {
        match payload::parse(data, client) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(p) => {
                if let Some(client) = client {
                    assert_eq!(p.client, client);
                }
                if let Some(cwd) = &p.cwd {
                    assert!(!cwd.is_empty(), "empty cwd from {data:?}");
                    assert!(
                        std::path::Path::new(cwd).is_absolute(),
                        "relative cwd {cwd:?} from {data:?}"
                    );
                }
            }
        }
    }
});
