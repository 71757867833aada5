//! Linking a hot-path client static and position-dependent, from its build
//! script (docs/decisions/0024-static-clients.md).
//!
//! A dynamically linked PIE makes the loader map libc, look up every
//! imported symbol and apply thousands of relative relocations, each
//! relocated page a copy-on-write fault: for `berth resolve` that was a
//! third of its instructions, more than all of `git rev-parse`. Linked static
//! and non-PIE, none of it happens.
//!
//! Cargo offers no stable per-binary compiler flag, and `-C
//! target-feature=+crt-static` for the whole workspace breaks its proc-macro
//! crates, so this works with linker arguments for one binary only
//! (`cargo:rustc-link-arg-bin`): `-static -no-pie`, and a folder of links
//! that makes the libraries rustc names (`-lc`, `-lgcc_s`, ...) resolve to
//! glibc's and libgcc's static archives, which the linker finds there before
//! the shared ones. Where those archives are missing, on another libc or
//! another OS, or with `BERTH_DYNAMIC_CLIENTS` set, nothing changes: the
//! binary links as before.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each library rustc asks for on `x86_64`/`aarch64` Linux with glibc, and
/// the static archive that stands for it. libgcc_s (the unwinder) has no
/// archive of its own: libgcc_eh is its static counterpart.
const ARCHIVES: [(&str, &str); 7] = [
    ("c", "libc.a"),
    ("m", "libm.a"),
    ("pthread", "libpthread.a"),
    ("dl", "libdl.a"),
    ("rt", "librt.a"),
    ("util", "libutil.a"),
    ("gcc_s", "libgcc_eh.a"),
];

/// Prints the build-script lines that link binary `bin` of the calling
/// package static and non-PIE, when the target and the toolchain allow it.
pub fn link_static(bin: &str) {
    println!("cargo:rerun-if-env-changed=BERTH_DYNAMIC_CLIENTS");
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
        || env::var_os("BERTH_DYNAMIC_CLIENTS").is_some()
    {
        return;
    }
    let dir = PathBuf::from(var("OUT_DIR")).join("static-libs");
    match archive_links(&dir) {
        Ok(()) => {
            println!("cargo:rustc-link-arg-bin={bin}=-L{}", dir.display());
            println!("cargo:rustc-link-arg-bin={bin}=-static");
            println!("cargo:rustc-link-arg-bin={bin}=-no-pie");
        }
        Err(why) => println!("cargo:warning={bin} links dynamically: {why}"),
    }
}

/// Fills `dir` with `lib<name>.a` links to the static archives.
fn archive_links(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, archive) in ARCHIVES {
        let found = find_archive(archive)?;
        let link = dir.join(format!("lib{name}.a"));
        let _ = std::fs::remove_file(&link);
        symlink(&found, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("not a Unix host"))
}

/// Where the C compiler rustc links with finds `archive`.
fn find_archive(archive: &str) -> Result<PathBuf, String> {
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .arg(format!("-print-file-name={archive}"))
        .output()
        .map_err(|e| format!("running {cc}: {e}"))?;
    // The compiler prints the bare name back when it has no such file.
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if path.is_absolute() && path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "{cc} finds no {archive} (install glibc's static libraries, e.g. libc6-dev)"
        ))
    }
}
