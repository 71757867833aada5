//! Which tests this machine can run, decided when the tests are built, so a test
//! that cannot run here is counted as ignored (with the reason) rather than
//! passing without checking anything.
//!
//! - `berth_as_root`: the build runs as root, so tests may act as another user
//!   through `setpriv`.
//! - `berth_has_zsh`, `berth_has_fish`: those shells are installed
//!   (`.ci/run` installs them where it can).
//! - `berth_has_python_mcp`: a Python with the official MCP SDK, 2.3 or newer,
//!   is `$BERTH_TEST_PYTHON` or `python3` on the PATH (`.ci/run` makes one in
//!   a venv); the tests run it as `BERTH_TEST_PYTHON_BIN`.

use std::path::Path;
use std::process::Command;

fn main() {
    for cfg in [
        "berth_as_root",
        "berth_has_zsh",
        "berth_has_fish",
        "berth_has_python_mcp",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=BERTH_TEST_PYTHON");
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
    if let Some(python) = python_with_mcp() {
        println!("cargo::rerun-if-changed={python}");
        println!("cargo::rustc-cfg=berth_has_python_mcp");
        println!("cargo::rustc-env=BERTH_TEST_PYTHON_BIN={python}");
    }
}

/// A Python whose `mcp` package is 2.3 or newer (both protocol eras), as an absolute path.
fn python_with_mcp() -> Option<String> {
    let candidate = std::env::var("BERTH_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&candidate)
        .args([
            "-c",
            "import sys, importlib.metadata as m; v = m.version('mcp').split('.'); \
             ok = (int(v[0]), int(v[1])) >= (2, 3); print(sys.executable if ok else '')",
        ])
        .output()
        .ok()?;
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !exe.is_empty()).then_some(exe)
}
