//! The one way the daemon canonicalises a path: the system's answer, in the form people and
//! programs write it (on Windows without the `\\?\` prefix where that names the same file,
//! `berth_core::pathutil::without_verbatim`). Answers, notes and stored roots all spell a
//! folder this one way, so they compare equal.

use std::io;
use std::path::{Path, PathBuf};

/// `path` with every link, `.` and `..` resolved.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    std::fs::canonicalize(path).map(berth_core::pathutil::without_verbatim)
}
