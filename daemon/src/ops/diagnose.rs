//! What `berth doctor` asks the daemon about its own state: where its data and log are, and
//! whether the database is sound. The judging (modes, limits, what to run) is the CLI's; the
//! daemon answers only what it alone can see
//! (docs/decisions/0029-doctor-reads-the-database-through-the-daemon.md).

use std::path::PathBuf;

use crate::error::BerthError;
use crate::ops::device::Device;

/// The daemon's answer to a diagnosis.
#[derive(Debug, Clone)]
pub struct Diagnosis {
    /// The data folder it serves.
    pub data_dir: PathBuf,
    /// Its database file.
    pub database: PathBuf,
    /// `PRAGMA quick_check`'s lines (`["ok"]` when sound).
    pub integrity: Vec<String>,
    /// Its log file.
    pub log_file: PathBuf,
}

impl Device {
    /// Checks the database (read-only) and says where things are.
    pub fn diagnose(&self) -> Result<Diagnosis, BerthError> {
        // The daemon's environment never changes after start, so this is the folder its
        // logging opened the file in.
        let state = berth_client::paths::state_dir(&berth_client::paths::EnvCtx::from_process())
            .unwrap_or_else(|_| self.data_dir().join("log"));
        Ok(Diagnosis {
            data_dir: self.data_dir().to_path_buf(),
            database: berth_client::paths::database_path(self.data_dir()),
            integrity: self.store().quick_check()?,
            log_file: state.join(berth_client::logfile::DAEMON_LOG),
        })
    }
}
