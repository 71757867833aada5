//! The live sessions: the table of sessions connected to this daemon, which the daemon holds
//! and the session operations (`ops::sessions`) read and change. A live session belongs to the
//! process that registered it (docs/decisions/0039-a-session-belongs-to-its-process.md).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use berth_core::resolve::Answer;

use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::links::{Link, Pending};

/// The process at the other end of a request's connection, as the kernel names it
/// (`SO_PEERCRED` on Linux, `LOCAL_PEEREPID` on macOS, `GetNamedPipeClientProcessId` on
/// Windows), never as the request says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peer {
    /// Its process id.
    pub pid: u32,
}

/// A live session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The daemon-made id (hex; also its scratch folder's name).
    pub id: String,
    /// Who the session is: its directory and forwarded environment.
    pub caller: Caller,
    /// The pinned resolution.
    pub pin: Answer,
    /// Why the pin is not the session's answer: `BERTH_WORKSPACE` names no workspace (an error:
    /// docs/reference.md, "Resolution"). `pin` is then the answer without it, for the folder a
    /// qualified path or a tool's own `workspace` reaches; calls without one get this error.
    pub pin_error: Option<BerthError>,
    /// `CLAUDE_CODE_SESSION_ID`, linking it to the same session's hooks.
    pub client_session_id: String,
    /// Whether the session already returned a tool result (the notice goes
    /// on the first one only).
    pub answered: bool,
    /// The process that registered it: the only one that may call its tools or register it
    /// again while it is live.
    pub owner: Peer,
    /// Which registration of the id this is, so that the end of a replaced registration's
    /// stream does not end the one that replaced it.
    pub registration: u64,
    /// Without a client session id: the client process and folder that link it to its
    /// session-start hook, when the system tells them.
    pub link: Option<Link>,
    /// Linked that way: whether the question was put, by its hook or by its own first result.
    pub asked: bool,
    /// Its question in the client's own form, once `berth-mcp` took it.
    pub question: Question,
}

/// Who holds a session id that another process asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// A live session of this process.
    Live(Peer),
    /// A registration of this process still under way.
    Registering(Peer),
}

/// The live sessions, by id, and the ids being registered again.
#[derive(Debug, Default)]
pub struct Sessions {
    live: Mutex<HashMap<String, Session>>,
    /// Ids whose re-registration is under way, and by whom: the store is written between the
    /// check and the insert, and another process must not slip in between.
    claims: Mutex<HashMap<String, Peer>>,
    registrations: AtomicU64,
    /// Hooks that put the question before their linked session registered. Locked only while
    /// the table is.
    pending: Mutex<Pending>,
}

/// The right to register `id` again, until it is inserted or dropped.
#[derive(Debug)]
pub struct Claim<'a> {
    sessions: &'a Sessions,
    id: String,
    peer: Peer,
}

impl Sessions {
    /// The table, locked. A thread that panicked while holding it cannot
    /// have left it half-changed (every change is one insert, removal or
    /// field write), so a poisoned lock is taken over rather than turned into
    /// a panic of every later request.
    pub(super) fn table(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn claims(&self) -> MutexGuard<'_, HashMap<String, Peer>> {
        self.claims.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new registration's number.
    pub(super) fn next_registration(&self) -> u64 {
        self.registrations.fetch_add(1, Ordering::Relaxed)
    }

    /// Claims `id` for `peer`'s re-registration: refused while another process's session of
    /// that id is live or its re-registration is under way.
    pub(super) fn claim(&self, id: &str, peer: Peer) -> Result<Claim<'_>, Held> {
        let live = self.table();
        if let Some(s) = live.get(id)
            && s.owner != peer
        {
            return Err(Held::Live(s.owner));
        }
        let mut claims = self.claims();
        match claims.get(id) {
            Some(&other) if other != peer => return Err(Held::Registering(other)),
            _ => {
                claims.insert(id.to_string(), peer);
            }
        }
        Ok(Claim {
            sessions: self,
            id: id.to_string(),
            peer,
        })
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Inserts a session registered under `claim`, or a new one (`None`: a fresh id). A linked
    /// session whose hook already put the question counts as asked.
    pub(super) fn insert(&self, claim: Option<Claim<'_>>, mut session: Session, now: Instant) {
        let mut live = self.table();
        if let Some(link) = &session.link
            && self.pending().take(link, now)
        {
            session.asked = true;
        }
        live.insert(session.id.clone(), session);
        drop(claim);
    }

    /// A session-start hook with `link` puts the question: `false` when its linked session was
    /// already asked (by its first result, or another hook of it); otherwise that session, or
    /// the one that registers with `link` later, counts as asked from now on.
    pub(super) fn hook_asks(&self, link: &Link, now: Instant) -> bool {
        let mut live = self.table();
        let linked = live
            .values_mut()
            .filter(|s| s.link.as_ref() == Some(link))
            .min_by_key(|s| (s.asked, s.registration));
        match linked {
            Some(s) => !std::mem::replace(&mut s.asked, true),
            None => {
                self.pending().insert(link.clone(), now);
                true
            }
        }
    }

    /// Removes registration `registration` of `id`; `false` when a later registration has
    /// replaced it (or it is gone).
    pub(super) fn remove(&self, id: &str, registration: u64) -> bool {
        let mut live = self.table();
        if live.get(id).is_some_and(|s| s.registration == registration) {
            live.remove(id);
            return true;
        }
        false
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut claims = self.sessions.claims();
        if claims.get(&self.id) == Some(&self.peer) {
            claims.remove(&self.id);
        }
    }
}

/// Where a session's question in the client's form stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Question {
    /// Not taken: the first result decides as it always did.
    #[default]
    NotTaken,
    /// Taken by the shim, which is asking; `notice` is what the first result gives unless an
    /// answer settles it.
    Open {
        /// The notice reserved.
        notice: String,
        /// The workspaces offered by name.
        offered: Vec<String>,
        /// After an answer whose folder overlaps other workspaces' roots: the workspace
        /// chosen, which only a confirmation of the sharing may use.
        overlap: Option<String>,
    },
    /// The answer could not be used: the first result gives the notice.
    Unanswered {
        /// The notice reserved.
        notice: String,
    },
    /// Answered and acted on: what the first result reports instead of the notice.
    Answered {
        /// One line per thing done.
        done: Vec<String>,
    },
    /// Settled: the first result went out.
    Closed,
}
