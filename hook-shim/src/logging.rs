//! The hook's log: `berth-hook.log` in berth's state folder, never stdout
//! (the client reads stdout). `BERTH_LOG` (RUST_LOG syntax) sets the filter
//! and also copies the log to stderr, for debugging; without it the file
//! gets `info` and above, and nothing goes to stderr.

use std::sync::Mutex;

use berth_client::paths::{self, EnvCtx};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

/// The log file's name in the state folder.
pub const LOG_FILE: &str = berth_client::logfile::HOOK_LOG;

/// Installs the global subscriber. Failing to open the log file is not an
/// error a hook may report: it then logs to stderr under `BERTH_LOG` only.
pub fn init(env: &EnvCtx) {
    let debug = std::env::var_os("BERTH_LOG").filter(|v| !v.is_empty());
    // Private like the daemon's: 0700 folder, 0600 file.
    let file = paths::state_dir(env)
        .ok()
        .and_then(|dir| berth_client::logfile::open_private(&dir, LOG_FILE).ok());
    let builder = tracing_subscriber::fmt().with_ansi(false);
    // The plain level filter skips parsing a filter on every session start.
    let _ = match (file, debug) {
        (Some(file), Some(_)) => builder
            .with_env_filter(EnvFilter::from_env("BERTH_LOG"))
            .with_writer(Mutex::new(file).and(std::io::stderr))
            .try_init(),
        (None, Some(_)) => builder
            .with_env_filter(EnvFilter::from_env("BERTH_LOG"))
            .with_writer(std::io::stderr)
            .try_init(),
        (Some(file), None) => builder
            .with_max_level(tracing::Level::INFO)
            .with_writer(Mutex::new(file))
            .try_init(),
        (None, None) => Ok(()),
    };
}
