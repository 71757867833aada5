//! The hook's log: `berth-hook.log` in berth's state folder, never stdout
//! (the client reads stdout). `BERTH_LOG` (RUST_LOG syntax) sets the filter
//! and also copies the log to stderr, for debugging; without it the file
//! gets `info` and above, and nothing goes to stderr.
//!
//! The file is opened at the first line written, not at start: a pre-tool
//! hook with no objection (the call made before every tool use) writes
//! none, and checking and opening the state folder is a dozen system calls.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;

use berth_client::paths::{self, EnvCtx};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::{MakeWriterExt, OptionalWriter};

/// The log file's name in the state folder.
pub const LOG_FILE: &str = berth_client::logfile::HOOK_LOG;

/// Installs the global subscriber. Failing to open the log file is not an
/// error a hook may report: its lines are then dropped (and go to stderr
/// under `BERTH_LOG`).
pub fn init(env: &EnvCtx) {
    let debug = std::env::var_os("BERTH_LOG").filter(|v| !v.is_empty());
    let file = LazyFile::new(paths::state_dir(env).ok());
    let builder = tracing_subscriber::fmt().with_ansi(false);
    // The plain level filter skips parsing a filter on every session start.
    let _ = match debug {
        Some(_) => builder
            .with_env_filter(EnvFilter::from_env("BERTH_LOG"))
            .with_writer(file.and(io::stderr))
            .try_init(),
        None => builder
            .with_max_level(tracing::Level::INFO)
            .with_writer(file)
            .try_init(),
    };
}

/// The log file, opened (private like the daemon's: 0700 folder, 0600 file)
/// when the first line is written; lines go nowhere when it cannot be. Each
/// line is one append of its whole text, so the writer needs no lock.
struct LazyFile {
    dir: Option<PathBuf>,
    file: OnceLock<Option<File>>,
}

impl LazyFile {
    fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            file: OnceLock::new(),
        }
    }

    fn file(&self) -> Option<&File> {
        self.file
            .get_or_init(|| {
                let dir = self.dir.as_deref()?;
                berth_client::logfile::open_private(dir, LOG_FILE).ok()
            })
            .as_ref()
    }
}

impl<'a> MakeWriter<'a> for LazyFile {
    type Writer = OptionalWriter<&'a File>;

    fn make_writer(&'a self) -> Self::Writer {
        self.file()
            .map_or_else(OptionalWriter::none, OptionalWriter::some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_file_is_made_at_the_first_line_and_not_before() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        let lazy = LazyFile::new(Some(dir.clone()));
        assert!(!dir.exists(), "nothing is made before a line is written");
        writeln!(lazy.make_writer(), "one").unwrap();
        writeln!(lazy.make_writer(), "two").unwrap();
        let text = std::fs::read_to_string(dir.join(LOG_FILE)).unwrap();
        assert_eq!(text, "one\ntwo\n");
    }

    #[test]
    fn a_folder_that_cannot_be_made_drops_the_lines() {
        let blocker = tempfile::NamedTempFile::new().unwrap();
        let lazy = LazyFile::new(Some(blocker.path().join("state")));
        writeln!(lazy.make_writer(), "dropped").unwrap();
        assert!(lazy.file().is_none());
        assert_eq!(std::fs::read(blocker.path()).unwrap(), b"");
    }
}
