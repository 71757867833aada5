//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/`) through the
//! same checks the fuzz targets run (`berth_fuzz_checks`), on stable, so
//! CI keeps every seed and every past finding honest without nightly.
//!
//! The `hook_payload` corpus is replayed end to end instead, through the
//! real `berth-hook` (`tests/tests/e2e/hostile.rs`), so that this crate
//! needs only the pure core.

use std::path::{Path, PathBuf};

use berth_fuzz_checks::{check_home, check_project_file, check_qualify};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "{}: only {} seeds; the corpus is checked in",
        dir.display(),
        files.len()
    );
    files
}

/// Runs `check` on every file of `target`'s corpus, naming the file that fails.
fn replay(target: &str, check: fn(&[u8])) {
    for (path, bytes) in corpus(target) {
        if std::panic::catch_unwind(|| check(&bytes)).is_err() {
            panic!(
                "{} breaks the {target} invariants (replay it with `cargo +nightly fuzz run {target} {}`)",
                path.display(),
                path.display()
            );
        }
    }
}

#[test]
fn the_project_file_corpus_holds() {
    replay("project_file", check_project_file);
}

#[test]
fn the_qualify_corpus_holds() {
    replay("qualify", check_qualify);
}

#[test]
fn the_homeguard_corpus_holds() {
    replay("homeguard", check_home);
}
