//! Which tests this machine can run, decided when the tests are built, so a test
//! that cannot run here is counted as ignored (with the reason) rather than
//! passing without checking anything.
//!
//! - `berth_as_root`: the build runs as root, so tests may act as another user
//!   through `setpriv`.
//! - `berth_has_zsh`, `berth_has_fish`: those shells are installed
//!   (`.ci/run` installs them where it can).

use std::path::Path;
use std::process::Command;

fn main() {
    for cfg in ["berth_as_root", "berth_has_zsh", "berth_has_fish"] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rerun-if-env-changed=PATH");
    // Those tests run Unix programs; a Windows build (even on a Unix host,
    // run under Wine) has none of them.
    if std::env::var_os("CARGO_CFG_UNIX").is_none() {
        return;
    }
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.as_deref() == Some("0") {
        println!("cargo::rustc-cfg=berth_as_root");
    }
    for (shell, cfg) in [("zsh", "berth_has_zsh"), ("fish", "berth_has_fish")] {
        let found = ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(shell))
            .find(|p| p.exists());
        if let Some(p) = found {
            println!("cargo::rerun-if-changed={}", p.display());
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
