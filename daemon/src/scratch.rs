//! Sweeping scratch folders (docs/reference.md, "Scratch folders"): a session without a project
//! gets `<data>/scratch/<session-id>`; once the session has ended and
//! `scratch.keep_hours` (default 24) have passed, the folder goes. The plan
//! is a pure function of `now`, so tests drive a fixed clock.
//!
//! **Architecture Invariant:** nothing of a live session is ever swept.

use std::collections::{HashMap, HashSet};

use crate::device::Device;
use crate::error::BerthError;
use crate::sessions::valid_id;
use crate::store::SessionRow;

/// Default grace period after a session ends.
pub const DEFAULT_KEEP_HOURS: i64 = 24;

/// A folder found under `<data>/scratch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchDir {
    /// Its name (a session id).
    pub name: String,
    /// Last modification, unix seconds.
    pub mtime: i64,
}

/// What to sweep: folder names and session rows to forget.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Folders to remove.
    pub folders: Vec<String>,
    /// Session rows to forget.
    pub forget: Vec<String>,
}

/// Decides what to sweep at `now` (unix seconds).
pub fn plan(
    now: i64,
    keep_hours: i64,
    sessions: &[SessionRow],
    dirs: &[ScratchDir],
    live: &HashSet<String>,
) -> Plan {
    let keep = keep_hours.max(0) * 3600;
    let rows: HashMap<&str, &SessionRow> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let expired = |ended: i64| ended + keep <= now;
    let mut out = Plan::default();
    for d in dirs {
        if !valid_id(&d.name) || live.contains(&d.name) {
            continue;
        }
        let sweep = match rows.get(d.name.as_str()) {
            Some(row) => row.ended_at.is_some_and(expired),
            // A folder no session row knows: judge it by its age.
            None => expired(d.mtime),
        };
        if sweep {
            out.folders.push(d.name.clone());
        }
    }
    for s in sessions {
        if !live.contains(&s.id) && s.ended_at.is_some_and(expired) {
            out.forget.push(s.id.clone());
        }
    }
    out.folders.sort();
    out.forget.sort();
    out
}

/// Sessions the store calls open that have ended unseen: not connected to this daemon, and
/// their shim is no longer running (or never said its pid). A session whose shim still runs
/// stays open, though a restarted daemon has not heard from it yet: its shim re-registers on
/// its next call, and its scratch folder must still be there.
pub fn ended_unseen(
    sessions: &[SessionRow],
    live: &HashSet<String>,
    running: impl Fn(u32) -> bool,
) -> Vec<String> {
    sessions
        .iter()
        .filter(|s| s.ended_at.is_none() && !live.contains(&s.id))
        .filter(|s| !s.pid.is_some_and(&running))
        .map(|s| s.id.clone())
        .collect()
}

/// Whether the shim with this pid still runs: the process exists and, where `/proc` tells,
/// is a `berth-mcp` (so a pid reused by another program does not keep a folder forever).
pub fn shim_running(pid: u32) -> bool {
    let Ok(pid_t) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid_t <= 0 {
        return false;
    }
    let proc = std::path::Path::new("/proc");
    if proc.join("self").exists() {
        return std::fs::read_to_string(proc.join(pid.to_string()).join("comm"))
            .is_ok_and(|comm| comm.trim_end().starts_with("berth-mcp"));
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

impl Device {
    /// Marks ended the sessions that ended while no daemon heard them (see [`ended_unseen`]).
    pub fn end_unseen_sessions(&self, now: i64) -> Result<usize, BerthError> {
        let ended = ended_unseen(
            &self.store.sessions()?,
            &self.live_session_ids(),
            shim_running,
        );
        self.store.end_sessions(&ended, now)?;
        if !ended.is_empty() {
            tracing::info!(count = ended.len(), "sessions ended while no daemon ran");
        }
        Ok(ended.len())
    }

    /// The grace period, in hours, that an ended session's scratch folder (and its row) is
    /// kept for: the `scratch.keep_hours` setting, else its default.
    pub fn scratch_keep_hours(&self) -> Result<i64, BerthError> {
        Ok(self
            .store
            .get_setting("scratch.keep_hours")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_KEEP_HOURS))
    }

    /// Sweeps expired scratch folders at `now`; returns how many went.
    pub fn sweep_scratch(&self, now: i64) -> Result<usize, BerthError> {
        self.end_unseen_sessions(now)?;
        let keep = self.scratch_keep_hours()?;
        let root = self.data_dir.join("scratch");
        let mut dirs = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&root) {
            for e in entries.flatten() {
                let Ok(meta) = e.metadata() else { continue };
                if !meta.is_dir() {
                    continue;
                }
                use std::os::unix::fs::MetadataExt;
                if let Some(name) = e.file_name().to_str() {
                    dirs.push(ScratchDir {
                        name: name.to_string(),
                        mtime: meta.mtime(),
                    });
                }
            }
        }
        let live = self.live_session_ids();
        let plan = plan(now, keep, &self.store.sessions()?, &dirs, &live);
        let mut swept = 0;
        for name in &plan.folders {
            match std::fs::remove_dir_all(root.join(name)) {
                Ok(()) => swept += 1,
                Err(e) => {
                    tracing::warn!(folder = %name, error = %e, "could not sweep a scratch folder")
                }
            }
        }
        self.store.forget_sessions(&plan.forget)?;
        // Logged even when nothing went: once at start and once an hour.
        tracing::info!(swept, "scratch sweep done");
        Ok(swept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3600;
    const A: &str = "00000000000000aa";
    const B: &str = "00000000000000bb";
    const C: &str = "00000000000000cc";

    fn row(id: &str, ended_at: Option<i64>) -> SessionRow {
        SessionRow {
            pid: None,
            id: id.into(),
            ended_at,
        }
    }

    fn dir(name: &str, mtime: i64) -> ScratchDir {
        ScratchDir {
            name: name.into(),
            mtime,
        }
    }

    #[test]
    fn an_open_session_ends_unseen_only_when_its_shim_is_gone() {
        let with_pid = |id: &str, pid: u32| SessionRow {
            pid: Some(pid),
            ..row(id, None)
        };
        const D: &str = "00000000000000dd";
        let sessions = [
            with_pid(A, 10), // its shim still runs: stays open
            with_pid(B, 20), // its shim is gone
            row(C, None),    // never said its pid (an older shim)
            SessionRow {
                // already ended: left as it is
                ended_at: Some(5),
                ..with_pid(D, 20)
            },
        ];
        let running = |pid: u32| pid == 10;
        assert_eq!(ended_unseen(&sessions, &HashSet::new(), running), [B, C]);
        let live: HashSet<String> = [B.to_string()].into();
        assert_eq!(
            ended_unseen(&sessions, &live, running),
            [C],
            "a connected session is open"
        );
    }

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

    #[test]
    fn a_session_ended_longer_ago_than_the_grace_is_swept_and_forgotten() {
        let p = plan(
            100 * H,
            24,
            &[row(A, Some(70 * H))],
            &[dir(A, 0)],
            &HashSet::new(),
        );
        assert_eq!(p.folders, [A]);
        assert_eq!(p.forget, [A]);
    }

    #[test]
    fn a_session_within_the_grace_is_kept() {
        let p = plan(
            100 * H,
            24,
            &[row(A, Some(90 * H))],
            &[dir(A, 0)],
            &HashSet::new(),
        );
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn a_live_session_is_never_swept_whatever_the_rows_say() {
        let live = HashSet::from([A.to_string()]);
        let p = plan(1000 * H, 0, &[row(A, Some(0))], &[dir(A, 0)], &live);
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn a_running_session_is_kept() {
        let p = plan(1000 * H, 0, &[row(B, None)], &[dir(B, 0)], &HashSet::new());
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn an_orphan_folder_is_judged_by_its_age() {
        let p = plan(
            100 * H,
            24,
            &[],
            &[dir(A, 10 * H), dir(C, 90 * H)],
            &HashSet::new(),
        );
        assert_eq!(p.folders, [A]);
    }

    #[test]
    fn folders_that_are_not_session_ids_are_left_alone() {
        let p = plan(
            100 * H,
            0,
            &[],
            &[dir("notes", 0), dir("../x", 0)],
            &HashSet::new(),
        );
        assert_eq!(p, Plan::default());
    }
}
