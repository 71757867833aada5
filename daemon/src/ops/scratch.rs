//! Sweeping scratch folders: the daemon's half of the sweep. What to sweep is decided by the
//! core's `scratch::plan`; this lists `<data>/scratch`, asks whether a session's shim still
//! runs, and removes what the plan names.
//!
//! **Architecture Invariant:** nothing of a live session is ever swept.

use berth_core::scratch::{ScratchDir, ended_unseen, plan};
use berth_vocab::settings::Setting;

use crate::error::BerthError;
use crate::ops::device::Device;

/// Whether the shim with this pid still runs: the process exists and, where `/proc` tells,
/// is a `berth-mcp` (so a pid reused by another program does not keep a folder forever).
pub fn shim_running(pid: u32) -> bool {
    crate::pids::runs(pid, "berth-mcp")
}

impl Device {
    /// Marks ended the sessions that ended while no daemon heard them (see [`ended_unseen`]).
    pub fn end_unseen_sessions(&self, now: i64) -> Result<usize, BerthError> {
        let ended = ended_unseen(
            &self.store().sessions()?,
            &self.live_session_ids(),
            shim_running,
        );
        self.store().end_sessions(&ended, now)?;
        if !ended.is_empty() {
            tracing::info!(count = ended.len(), "sessions ended while no daemon ran");
        }
        Ok(ended.len())
    }

    /// The grace period, in hours, that an ended session's scratch folder (and its row) is
    /// kept for: the `scratch.keep_hours` setting, else its default.
    pub fn scratch_keep_hours(&self) -> Result<i64, BerthError> {
        let stored = self.store().get_setting(Setting::ScratchKeepHours.key())?;
        Ok(i64::try_from(Setting::ScratchKeepHours.number(stored.as_deref())).unwrap_or(i64::MAX))
    }

    /// Sweeps expired scratch folders at `now`; returns how many went.
    pub fn sweep_scratch(&self, now: i64) -> Result<usize, BerthError> {
        self.end_unseen_sessions(now)?;
        let keep = self.scratch_keep_hours()?;
        let root = self.data_dir().join("scratch");
        let mut dirs = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                let Ok(meta) = e.metadata() else { continue };
                if !meta.is_dir() {
                    continue;
                }
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
                if let Some(name) = e.file_name().to_str() {
                    dirs.push(ScratchDir {
                        name: name.to_string(),
                        mtime,
                    });
                }
            }
        }
        let live = self.live_session_ids();
        let plan = plan(now, keep, &self.store().sessions()?, &dirs, &live);
        let mut swept = 0;
        for name in &plan.folders {
            match std::fs::remove_dir_all(root.join(name)) {
                Ok(()) => swept += 1,
                Err(e) => {
                    tracing::warn!(folder = %name, error = %e, "could not sweep a scratch folder")
                }
            }
        }
        self.store().forget_sessions(&plan.forget)?;
        // Logged even when nothing went: once at start and once an hour.
        tracing::info!(swept, "scratch sweep done");
        Ok(swept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_pid_past_the_limit_does_not() {
        // The test binary is no berth-mcp, so on Linux even our own pid does not count.
        let me = std::process::id();
        assert_eq!(
            shim_running(me),
            !std::path::Path::new("/proc/self").exists()
        );
        assert!(!shim_running(0));
        assert!(!shim_running(u32::MAX));
    }
}
