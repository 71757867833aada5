//! The process link between a session-start hook and an MCP session that no client session id
//! links (Codex gives its servers none): both were started by the same client process, in the
//! same folder, so the question is put once between them
//! (docs/decisions/0046-a-hook-and-a-server-are-linked-by-their-client-process.md).
//!
//! A link lives in the live session it belongs to, or, for a hook that came before its MCP
//! session registered, in [`Pending`]: a few hundred entries at most, each for ten minutes at
//! most, so a flood of hooks cannot grow the daemon.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use berth_core::ancestry::ProcessId;

/// What a hook and an MCP session share when they belong to one client session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Link {
    /// Their nearest client ancestor.
    pub client: ProcessId,
    /// Their folder, canonical (the resolution's directory).
    pub folder: PathBuf,
}

/// The most hooks remembered for an MCP session that has not registered yet.
pub const PENDING_CAP: usize = 256;
/// How long such a hook is remembered: a client starts its servers with the session, seconds
/// from its session-start hook.
pub const PENDING_FOR: Duration = Duration::from_secs(600);

/// Hooks that put the question before their MCP session registered, oldest first.
#[derive(Debug, Default)]
pub struct Pending {
    entries: VecDeque<(Link, Instant)>,
}

impl Pending {
    fn expire(&mut self, now: Instant) {
        while self
            .entries
            .front()
            .is_some_and(|(_, at)| now.saturating_duration_since(*at) >= PENDING_FOR)
        {
            self.entries.pop_front();
        }
    }

    /// Remembers that `link`'s hook has put the question, at `now`; the oldest entry goes when
    /// the table is full.
    pub fn insert(&mut self, link: Link, now: Instant) {
        self.expire(now);
        self.entries.retain(|(l, _)| *l != link);
        self.entries.push_back((link, now));
        while self.entries.len() > PENDING_CAP {
            self.entries.pop_front();
        }
    }

    /// Whether `link`'s hook put the question (within [`PENDING_FOR`] of `now`); the entry is
    /// taken, since its session now holds it.
    pub fn take(&mut self, link: &Link, now: Instant) -> bool {
        self.expire(now);
        match self.entries.iter().position(|(l, _)| l == link) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// How many entries it holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The link of the process `pid` (a connection's peer, as the kernel named it) in `folder`:
/// its client process, when the system tells one for sure. Reads the process table.
pub fn link_of(pid: u32, folder: &Path) -> Option<Link> {
    let client = crate::procs::client_process(pid)?;
    Some(Link {
        client,
        folder: folder.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(pid: u32, folder: &str) -> Link {
        Link {
            client: ProcessId { pid, started: 7 },
            folder: PathBuf::from(folder),
        }
    }

    #[test]
    fn a_pending_hook_is_taken_once_and_only_by_its_own_link() {
        let (mut p, t0) = (Pending::default(), Instant::now());
        p.insert(link(1, "/a"), t0);
        assert!(!p.take(&link(1, "/b"), t0), "another folder");
        assert!(!p.take(&link(2, "/a"), t0), "another client");
        assert!(p.take(&link(1, "/a"), t0));
        assert!(!p.take(&link(1, "/a"), t0), "taken already");
    }

    #[test]
    fn a_pending_hook_expires() {
        let (mut p, t0) = (Pending::default(), Instant::now());
        p.insert(link(1, "/a"), t0);
        assert!(!p.take(&link(1, "/a"), t0 + PENDING_FOR));
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn a_flood_of_hooks_keeps_the_table_bounded_and_the_newest() {
        let (mut p, t0) = (Pending::default(), Instant::now());
        for i in 0..10 * PENDING_CAP as u32 {
            p.insert(link(i, "/a"), t0);
            // The same hook again is one entry.
            p.insert(link(i, "/a"), t0);
        }
        assert_eq!(p.len(), PENDING_CAP);
        assert!(!p.take(&link(0, "/a"), t0), "the oldest went");
        assert!(p.take(&link(10 * PENDING_CAP as u32 - 1, "/a"), t0));
    }
}
