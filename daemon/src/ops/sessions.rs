//! Agent sessions: one per `berth-mcp` process. The daemon makes each
//! session's id, keeps its pinned resolution, and learns when it ends (the
//! shim holds a stream open; its end is the session's end).
//!
//! **Architecture Invariant:** a session's pin changes only through its own
//! `use_workspace`; a switch of the active workspace never moves it.
//!
//! **Architecture Invariant:** a live session belongs to the process that registered it: only
//! that process (by the kernel's pid) may call its tools or register its id again, until its
//! stream ends; after a daemon restart, until that process has exited
//! (docs/decisions/0039-a-session-belongs-to-its-process.md).

use std::path::PathBuf;

use crate::clock;
use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::device::Device;
use crate::ops::links::{Link, link_of};
use crate::ops::live::Question;
use crate::ops::live::{Held, Peer, Session};
use crate::ops::scratch::shim_running;
use crate::store::NewSession;
use berth_core::resolve::{Answer, Mode};
use berth_core::scratch::valid_id;

/// What a session's first result carries besides the tool's own answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FirstResult {
    /// The ask-once notice, when the user must be asked.
    pub notice: Option<String>,
    /// The resolution's notes.
    pub notes: Vec<String>,
}

/// What a shim sent to register.
#[derive(Debug, Default, Clone)]
pub struct Registration {
    /// MCP client info.
    pub client_name: String,
    /// MCP client info.
    pub client_version: String,
    /// `CLAUDE_CODE_SESSION_ID`.
    pub client_session_id: String,
    /// Re-registering after a daemon restart: the old id and pin.
    pub resume: Option<(String, Answer)>,
    /// Re-registering: whether a result of the session already reached its
    /// client (then the notice was shown, or was not owed).
    pub first_result_sent: bool,
    /// The registering process, as the kernel names it (the request's own `pid` field is
    /// not trusted).
    pub peer: Peer,
}

/// A fresh session id: 16 random hex digits, from the operating system's
/// random source.
fn new_id() -> Result<String, BerthError> {
    let n = getrandom::u64()
        .map_err(|e| BerthError::internal(format!("no random numbers for a session id: {e}")))?;
    Ok(format!("{n:016x}"))
}

/// The refusal of a request for session `id` that another process holds.
fn held_elsewhere(id: &str, held: Held, peer: Peer) -> BerthError {
    let (owner, what) = match held {
        Held::Live(owner) => (owner, "registered it and holds it open"),
        Held::Registering(owner) => (owner, "is registering it again"),
    };
    owned(format!(
        "session {id:?} belongs to process {}, which {what}; process {} may not register it or call its tools: a live session is used only by its own process, and registered again by another only once it has ended",
        owner.pid, peer.pid
    ))
}

/// A `session-owned` refusal, with the ways forward.
fn owned(message: String) -> BerthError {
    BerthError::owned(message)
        .hint("to start a session of your own, register without a session id (as berth-mcp does at start)")
        .hint("`berth sessions` lists the sessions and the process of each")
}

impl Device {
    /// Registers a session: resolves its directory in agent mode and pins the
    /// answer, or re-adopts a session a restarted daemon lost, with its pin. A
    /// session id another process holds is refused: while it is live, or while the process
    /// the store names for it still runs.
    pub fn open_session(&self, caller: Caller, reg: Registration) -> Result<Session, BerthError> {
        let peer = reg.peer;
        let (id, pin, answered, pin_error, claim) = match reg.resume {
            Some((id, pin)) if valid_id(&id) => {
                let claim = self
                    .sessions()
                    .claim(&id, peer)
                    .map_err(|held| held_elsewhere(&id, held, peer))?;
                self.check_not_running_elsewhere(&id, peer)?;
                let pin_error = self.env_pin_error(&caller);
                (id, pin, reg.first_result_sent, pin_error, Some(claim))
            }
            Some((id, _)) => {
                return Err(BerthError::invalid(format!(
                    "{id:?} is not a berth session id"
                )));
            }
            None => {
                let (pin, pin_error) = match self.resolve(&caller, "", None, Mode::Agent) {
                    Ok(pin) => (pin, None),
                    // Without an argument, only BERTH_WORKSPACE can fail a resolution.
                    Err(e) => {
                        let unpinned = Caller {
                            env_workspace: None,
                            ..caller.clone()
                        };
                        (self.resolve(&unpinned, "", None, Mode::Agent)?, Some(e))
                    }
                };
                (new_id()?, pin, false, pin_error, None)
            }
        };
        self.store().upsert_session(&NewSession {
            id: &id,
            cwd: &caller.cwd,
            client_name: &reg.client_name,
            client_version: &reg.client_version,
            client_session_id: &reg.client_session_id,
            workspace: &pin.workspace,
            reason: pin.reason.as_str(),
            project: pin.project.as_deref(),
            pid: Some(peer.pid),
        })?;
        // Only a session no client session id links is linked through its client process.
        let link = reg
            .client_session_id
            .is_empty()
            .then(|| link_of(peer.pid, &pin.directory))
            .flatten();
        let session = Session {
            id: id.clone(),
            caller,
            pin,
            pin_error,
            client_session_id: reg.client_session_id,
            answered,
            owner: peer,
            registration: self.sessions().next_registration(),
            link,
            // A result that already went out put the question, or owed none.
            asked: answered,
            question: Default::default(),
        };
        tracing::info!(session = %id, workspace = %session.pin.workspace, reason = %session.pin.reason, pid = peer.pid, client = ?session.link.as_ref().map(|l| l.client.pid), "session opened");
        self.sessions().insert(claim, session.clone(), clock::now());
        Ok(session)
    }

    /// A session the store still calls open after a daemon restart belongs to the process that
    /// registered it for as long as that process runs as a shim (the judgement of ADR 0011).
    fn check_not_running_elsewhere(&self, id: &str, peer: Peer) -> Result<(), BerthError> {
        match self.store().session_pid(id)? {
            Some(owner) if owner != peer.pid && shim_running(owner) => Err(owned(format!(
                "session {id:?} belongs to process {owner}, which registered it and still runs; process {} may not register it again: a session is registered again only by its own process, or by another once that one has exited",
                peer.pid
            ))),
            _ => Ok(()),
        }
    }

    /// The end of registration `registration` of session `id` (its shim went away). A later
    /// registration of the same id that replaced it goes on.
    pub fn close_session(&self, id: &str, registration: u64) {
        if !self.sessions().remove(id, registration) {
            tracing::debug!(session = id, "a replaced registration's stream ended");
            return;
        }
        if let Err(e) = self.store().end_session(id, self.now_secs()) {
            tracing::warn!(session = id, error = %e, "could not record the session's end");
        }
        tracing::info!(session = id, "session ended");
    }

    /// The live session `id`, when `peer` is the process it belongs to.
    pub fn own_session(&self, id: &str, peer: Peer) -> Result<Session, BerthError> {
        let session = self.session(id)?;
        if session.owner != peer {
            return Err(held_elsewhere(id, Held::Live(session.owner), peer));
        }
        Ok(session)
    }

    /// A live session.
    pub fn session(&self, id: &str) -> Result<Session, BerthError> {
        self.sessions().table().get(id).cloned().ok_or_else(|| {
            BerthError::not_found(format!(
                "no live session {id:?}; restart the MCP server (berth-mcp) so it registers again"
            ))
        })
    }

    /// The error a session's `BERTH_WORKSPACE` gives, if it names no workspace.
    fn env_pin_error(&self, caller: &Caller) -> Option<BerthError> {
        caller.env_workspace.as_ref()?;
        self.resolve(caller, "", None, Mode::Agent).err()
    }

    /// The answer a call without a `workspace` argument runs under: the pin, or the error of a
    /// `BERTH_WORKSPACE` naming no workspace. Once that workspace exists, the session resolves
    /// again and is pinned to the answer.
    pub(crate) fn pinned_answer(&self, s: &Session) -> Result<Answer, BerthError> {
        if s.pin_error.is_none() {
            return Ok(s.pin.clone());
        }
        let answer = self.resolve(&s.caller, "", None, Mode::Agent)?;
        self.repin(&s.id, answer.clone())?;
        Ok(answer)
    }

    /// Re-pins a session (its own `use_workspace`).
    pub(crate) fn repin(&self, id: &str, pin: Answer) -> Result<(), BerthError> {
        self.store()
            .repin_session(id, &pin.workspace, pin.reason.as_str())?;
        if let Some(s) = self.sessions().table().get_mut(id) {
            s.pin = pin;
            s.pin_error = None;
        }
        Ok(())
    }

    /// What this session's first result carries: the notice, unless the question was already
    /// asked (by its session-start hook, linked through the client's session id or, without
    /// one, through the client process), and the resolution's notes. Taking it marks the
    /// session as asked, so the caller must put both in the result it returns, in the
    /// structured content as well as the text.
    pub(crate) fn take_notice(&self, id: &str) -> Result<FirstResult, BerthError> {
        let reg = self.registry();
        let (session, notice) = {
            let mut live = self.sessions().table();
            let Some(s) = live.get_mut(id) else {
                return Ok(FirstResult::default());
            };
            if s.answered {
                return Ok(FirstResult::default());
            }
            s.answered = true;
            // A question taken for the client's form settles the first result: what the
            // answer did, or the notice it reserved.
            match std::mem::replace(&mut s.question, Question::Closed) {
                Question::Open { notice, .. } | Question::Unanswered { notice } => {
                    return Ok(FirstResult {
                        notice: Some(notice),
                        notes: s.pin.notes.clone(),
                    });
                }
                Question::Answered { done } => {
                    let mut notes = s.pin.notes.clone();
                    notes.extend(done);
                    return Ok(FirstResult {
                        notice: None,
                        notes,
                    });
                }
                Question::NotTaken | Question::Closed => {}
            }
            if s.pin_error.is_some() {
                // The error itself is what the session must hear first.
                return Ok(FirstResult::default());
            }
            let mut notice = berth_core::notice::notice(&s.pin, &reg.names());
            // Decided under the table's lock, as its hook decides.
            if notice.is_some() && s.link.is_some() && std::mem::replace(&mut s.asked, true) {
                notice = None;
            }
            (s.clone(), notice)
        };
        let notice = match notice {
            Some(_)
                if !session.client_session_id.is_empty()
                    && !self.store().take_ask(&session.client_session_id)? =>
            {
                None
            }
            notice => notice,
        };
        Ok(FirstResult {
            notice,
            notes: session.pin.notes.clone(),
        })
    }

    /// The ids of the sessions connected now.
    pub fn live_session_ids(&self) -> std::collections::HashSet<String> {
        self.sessions().table().keys().cloned().collect()
    }

    /// The live MCP session a client's session id belongs to, if it has
    /// registered (linking a session-start hook to its MCP session).
    pub fn live_session_of_client(&self, client_session_id: &str) -> Option<String> {
        if client_session_id.is_empty() {
            return None;
        }
        self.sessions()
            .table()
            .values()
            .find(|s| s.client_session_id == client_session_id)
            .map(|s| s.id.clone())
    }

    /// The live MCP session linked to a hook through `link` (its client process and folder),
    /// if it has registered.
    pub fn live_session_linked(&self, link: &Link) -> Option<String> {
        self.sessions()
            .table()
            .values()
            .filter(|s| s.link.as_ref() == Some(link))
            .min_by_key(|s| s.registration)
            .map(|s| s.id.clone())
    }

    /// The session's scratch folder (not created here).
    pub fn scratch_dir(&self, id: &str) -> PathBuf {
        self.data_dir().join("scratch").join(id)
    }
}

/// A session as `berth sessions` shows it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// What the store holds about it.
    pub record: crate::store::SessionRecord,
    /// Its scratch folder, when one exists.
    pub scratch: Option<PathBuf>,
    /// Whether its shim is connected to this daemon now.
    pub connected: bool,
}

impl Device {
    /// The open sessions, and with `all` those that ended within the scratch grace period
    /// before `now` (the same period their folders are kept for). Also gives that period in
    /// hours.
    pub fn list_sessions(&self, all: bool, now: i64) -> Result<(Vec<Listed>, i64), BerthError> {
        let keep_hours = self.scratch_keep_hours()?;
        let since = all.then(|| now - keep_hours * 3600);
        let live = self.live_session_ids();
        let listed = self
            .store()
            .list_sessions(since)?
            .into_iter()
            .map(|record| {
                let dir = self.scratch_dir(&record.id);
                Listed {
                    scratch: (valid_id(&record.id) && dir.is_dir()).then_some(dir),
                    connected: live.contains(&record.id),
                    record,
                }
            })
            .collect();
        Ok((listed, keep_hours))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use berth_vocab::codes::Code;

    fn device(data: &std::path::Path) -> Device {
        Device::for_test(Store::open(&data.join("berth.db")).unwrap(), data, None)
    }

    #[test]
    fn session_ids_are_random_and_valid() {
        let ids: std::collections::HashSet<String> = (0..64).map(|_| new_id().unwrap()).collect();
        assert_eq!(ids.len(), 64);
        assert!(ids.iter().all(|id| valid_id(id)), "{ids:?}");
    }

    /// A request that panicked while holding the session table leaves it
    /// poisoned; later requests still answer instead of panicking.
    #[test]
    fn a_poisoned_session_table_is_taken_over() {
        let t = tempfile::tempdir().unwrap();
        let device = device(t.path());
        std::thread::scope(|s| {
            let poisoner = s.spawn(|| {
                let _held = device.sessions().table();
                panic!("a request failed while holding the session table");
            });
            assert!(poisoner.join().is_err());
        });
        let caller = Caller {
            cwd: t.path().to_path_buf(),
            env_workspace: None,
            extra_home: None,
        };
        let s = device
            .open_session(caller, Registration::default())
            .unwrap();
        assert_eq!(device.session(&s.id).unwrap().id, s.id);
        assert!(device.live_session_ids().contains(&s.id));
        device.close_session(&s.id, s.registration);
        assert!(device.session(&s.id).is_err());
    }

    fn caller(dir: &std::path::Path) -> Caller {
        Caller {
            cwd: dir.to_path_buf(),
            env_workspace: None,
            extra_home: None,
        }
    }

    /// A re-registration of `s` with another pin, from `pid`.
    fn again(s: &Session, workspace: &str, pid: u32) -> Registration {
        let pin = Answer {
            workspace: workspace.into(),
            ..s.pin.clone()
        };
        Registration {
            resume: Some((s.id.clone(), pin)),
            peer: Peer { pid },
            ..Registration::default()
        }
    }

    /// While a session is live, only the process that registered it may register it again or
    /// call its tools; another is refused and the pin stays. Once it ended, anyone may.
    #[test]
    fn a_live_session_belongs_to_the_process_that_registered_it() {
        let t = tempfile::tempdir().unwrap();
        let device = device(t.path());
        let (shim, other) = (Peer { pid: 4242 }, Peer { pid: 4343 });
        let reg = Registration {
            peer: shim,
            ..Registration::default()
        };
        let s = device.open_session(caller(t.path()), reg).unwrap();
        let err = device
            .open_session(caller(t.path()), again(&s, "elsewhere", other.pid))
            .unwrap_err();
        assert_eq!(err.code, Code::SessionOwned, "{err}");
        for part in [s.id.as_str(), "process 4242", "process 4343"] {
            assert!(err.message.contains(part), "{part:?} missing from {err}");
        }
        assert!(!err.hints.is_empty());
        assert_eq!(
            device.session(&s.id).unwrap().pin.workspace,
            s.pin.workspace
        );
        let err = device.own_session(&s.id, other).unwrap_err();
        assert_eq!(err.code, Code::SessionOwned, "{err}");
        assert_eq!(device.own_session(&s.id, shim).unwrap().id, s.id);

        // Its own process re-registers it (a dropped connection, a daemon restart).
        let again_own = device
            .open_session(caller(t.path()), again(&s, &s.pin.workspace, shim.pid))
            .unwrap();
        assert_eq!(again_own.id, s.id);
        // The replaced registration's stream ending does not end the new one.
        device.close_session(&s.id, s.registration);
        assert_eq!(
            device.own_session(&s.id, shim).unwrap().registration,
            again_own.registration
        );

        // Ended, and its process no shim: another process may take the id.
        device.close_session(&s.id, again_own.registration);
        let taken = device
            .open_session(caller(t.path()), again(&s, "elsewhere", other.pid))
            .unwrap();
        assert_eq!(taken.pin.workspace, "elsewhere");
        assert_eq!(taken.owner, other);
        assert_eq!(device.store().session_pid(&s.id).unwrap(), Some(other.pid));
    }

    /// A hook and the session its client process links to it put the question once, in each
    /// order: the hook before the registration, between the registration and the first result,
    /// or after the first result.
    #[test]
    fn a_hook_and_its_linked_session_put_the_question_once_in_every_order() {
        let t = tempfile::tempdir().unwrap();
        let base = crate::canonical::canonicalize(t.path()).unwrap();
        let (data, proj) = (base.join("data"), base.join("p"));
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        let d = Device::for_test(
            Store::open(&data.join("berth.db")).unwrap(),
            &data,
            Some(base),
        );
        let now = std::time::Instant::now();
        for (order, started) in [
            ("hook, register", 1),
            ("register, hook", 2),
            ("result, hook", 3),
        ] {
            let s = d
                .open_session(caller(&proj), Registration::default())
                .unwrap();
            let link = Link {
                client: berth_core::ancestry::ProcessId { pid: 9, started },
                folder: s.pin.directory.clone(),
            };
            let linked = Session {
                link: Some(link.clone()),
                ..s.clone()
            };
            let hook = |d: &Device| d.sessions().hook_asks(&link, now);
            let notice = match order {
                "hook, register" => {
                    assert!(hook(&d), "{order}: the hook asks");
                    d.sessions().insert(None, linked, now);
                    d.take_notice(&s.id).unwrap().notice
                }
                "register, hook" => {
                    d.sessions().insert(None, linked, now);
                    assert!(hook(&d), "{order}: the hook asks");
                    d.take_notice(&s.id).unwrap().notice
                }
                _ => {
                    d.sessions().insert(None, linked, now);
                    let notice = d.take_notice(&s.id).unwrap().notice;
                    assert!(notice.is_some(), "{order}: the first result asks");
                    assert!(!hook(&d), "{order}: the hook does not ask again");
                    None
                }
            };
            assert_eq!(notice, None, "{order}: asked twice");
            // Another folder of the same client is another session.
            let elsewhere = Link {
                folder: proj.join("sub"),
                ..link.clone()
            };
            assert!(d.sessions().hook_asks(&elsewhere, now), "{order}");
        }
    }

    /// Between the check and the insert the store is written; a second process's re-registration
    /// of the same id meanwhile is refused.
    #[test]
    fn a_re_registration_under_way_holds_the_id() {
        let (device, _) = Device::in_memory(berth_core::memfs::MemFs::default());
        let id = new_id().unwrap();
        let claim = device.sessions().claim(&id, Peer { pid: 1 }).unwrap();
        assert_eq!(
            device.sessions().claim(&id, Peer { pid: 2 }).unwrap_err(),
            Held::Registering(Peer { pid: 1 })
        );
        drop(claim);
        assert!(device.sessions().claim(&id, Peer { pid: 2 }).is_ok());
    }
}
