//! The scratch sweep plan (docs/reference.md, "Scratch folders"): a session without a project
//! gets `<data>/scratch/<session-id>`; once the session has ended and
//! `scratch.keep_hours` (default 24) have passed, the folder goes. The plan
//! is a pure function of `now`, so tests drive a fixed clock; the daemon lists the folders,
//! reads the session rows and removes what the plan names.
//!
//! **Architecture Invariant:** nothing of a live session is ever swept.

use std::collections::{HashMap, HashSet};

/// Whether `id` has the form of a daemon-made session id: 16 lowercase hex digits. Anything
/// else under the scratch folder was not made by berth and is left alone.
pub fn valid_id(id: &str) -> bool {
    id.len() == 16
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// A session row, as the scratch sweep reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// The daemon-made id.
    pub id: String,
    /// Unix seconds when it ended; `None` while it runs.
    pub ended_at: Option<i64>,
    /// The shim's process id, when it sent one.
    pub pid: Option<u32>,
}

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
