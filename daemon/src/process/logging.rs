//! Logging through `tracing`: a file in the state folder, filtered by
//! `BERTH_LOG`, else `RUST_LOG` (default `info`), plus stderr in the
//! foreground. The folder is 0700 and the file 0600.

use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::writer::MakeWriterExt;

use berth_client::logfile::DAEMON_LOG as LOG_FILE;

/// Installs the global subscriber. Returns an error only when the log file
/// cannot be opened; logging then goes to stderr alone.
pub fn init(state_dir: &Path, foreground: bool) -> std::io::Result<()> {
    let filter = EnvFilter::try_from_env("BERTH_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // 0700 folder, 0600 file: the log names the user's folders and workspaces.
    let opened = berth_client::logfile::open_private(state_dir, LOG_FILE);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    match opened {
        Ok(file) if foreground => builder
            .with_writer(Mutex::new(file).and(std::io::stderr))
            .init(),
        Ok(file) => builder.with_writer(Mutex::new(file)).init(),
        Err(e) => {
            builder.with_writer(std::io::stderr).init();
            return Err(e);
        }
    }
    Ok(())
}
