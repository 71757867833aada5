//! Hook calls (docs/reference.md, "Hooks"): session-start gets the line to show; stop records
//! the conversation and hands back the configured stop command. The hook
//! process runs that command itself, bounded in time.

use berth_vocab::text::escaped;

use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::device::Device;
use crate::ops::links::{Link, link_of};
use crate::ops::live::Peer;
use crate::store::Conversation;
use berth_core::qualify::{Own, own_folder};
use berth_core::resolve::{Answer, Mode};
use berth_vocab::settings::Setting;

/// What a hook forwarded.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    /// `session-start` or `stop`.
    pub event: &'a str,
    /// Which client.
    pub client: &'a str,
    /// The client's session id.
    pub client_session_id: &'a str,
    /// The transcript, when given.
    pub transcript_path: &'a str,
    /// The hook process, as the kernel names it.
    pub peer: Peer,
}

/// What the hook should do.
#[derive(Debug)]
pub struct HookOutcome {
    /// The cwd's resolution (agent mode).
    pub answer: Answer,
    /// session-start: the line to show.
    pub context: String,
    /// stop: the command to run, if configured.
    pub stop_command: Option<String>,
    /// stop: its time limit.
    pub stop_timeout_secs: u32,
}

impl Device {
    /// Handles one hook call for the payload's cwd (the caller's cwd).
    pub fn hook(&self, caller: &Caller, call: &HookCall<'_>) -> Result<HookOutcome, BerthError> {
        let answer = self.resolve(caller, "", None, Mode::Agent)?;
        match call.event {
            "session-start" => {
                self.started_in()
                    .record(call.client, call.client_session_id, &caller.cwd);
                self.session_start(answer, call, true)?
                    .ok_or_else(|| BerthError::internal("a session-start line was not written"))
            }
            "stop" => {
                self.store().record_conversation(&Conversation {
                    client_session_id: call.client_session_id,
                    cwd: &answer.directory,
                    client: call.client,
                    transcript_path: call.transcript_path,
                    workspace: &answer.workspace,
                    reason: answer.reason.as_str(),
                })?;
                let stop_command = self.store().get_setting(Setting::HooksStopCommand.key())?;
                let timeout = self
                    .store()
                    .get_setting(Setting::HooksStopTimeoutSecs.key())?;
                let stop_timeout_secs =
                    u32::try_from(Setting::HooksStopTimeoutSecs.number(timeout.as_deref()))
                        .unwrap_or(u32::MAX);
                Ok(HookOutcome {
                    answer,
                    context: String::new(),
                    stop_command,
                    stop_timeout_secs,
                })
            }
            other => Err(BerthError::invalid(format!(
                "unknown hook event {other:?}; expected session-start or stop"
            ))),
        }
    }

    /// A `session-start` answered from memory, with no I/O, so that it may run on an async
    /// worker without the pool's hops (docs/decisions/0034-device-context-from-memory.md):
    /// `None` when the folder's resolution is not in memory (ADR 0025), or when the line
    /// needs the store or the process table (a question, which is linked to an MCP session by
    /// the client's session id or its process, or a scratch folder's lifetime setting). The
    /// pool then runs [`Device::hook`] as before.
    pub fn session_start_in_memory(
        &self,
        caller: &Caller,
        call: &HookCall<'_>,
    ) -> Option<Result<HookOutcome, BerthError>> {
        let answer = match self.resolve_in_memory(caller, "", None, Mode::Agent)? {
            Ok(answer) => answer,
            Err(e) => return Some(Err(e)),
        };
        let outcome = self.session_start(answer, call, false).transpose();
        if matches!(outcome, Some(Ok(_))) {
            self.started_in()
                .record(call.client, call.client_session_id, &caller.cwd);
        }
        outcome
    }

    /// The session-start line for `answer`; `None` when it would read the store and
    /// `may_use_store` is false.
    fn session_start(
        &self,
        answer: Answer,
        call: &HookCall<'_>,
        may_use_store: bool,
    ) -> Result<Option<HookOutcome>, BerthError> {
        let reg = self.registry();
        let notice = berth_core::notice::notice(&answer, &reg.names());
        let scratch = own_folder(&answer, reg.workspaces.len()) == Own::Scratch;
        if !may_use_store && (notice.is_some() || scratch) {
            return Ok(None);
        }
        let id = call.client_session_id;
        // Without an MCP session of its client session id, the client process may link one.
        let link = ((notice.is_some() || scratch) && self.live_session_of_client(id).is_none())
            .then(|| link_of(call.peer.pid, &answer.directory))
            .flatten();
        // Asked once between the hook and its MCP session, whichever links them.
        let ask = notice.is_some() && {
            let by_id = id.is_empty() || self.store().take_ask(id)?;
            let by_process = link
                .as_ref()
                .is_none_or(|l| self.sessions().hook_asks(l, crate::clock::now()));
            by_id && by_process
        };
        let line = match notice {
            Some(n) if ask => n,
            _ => plain_line(&answer),
        };
        let scratch = scratch.then(|| self.scratch_line(id, link.as_ref()));
        let context = berth_core::notice::joined(
            Some(line),
            berth_core::notice::joined(scratch, berth_core::notice::notes(&answer)),
        )
        .unwrap_or_default();
        Ok(Some(HookOutcome {
            answer,
            context,
            stop_command: None,
            stop_timeout_secs: 0,
        }))
    }
}

impl Device {
    /// What a session without a project must know about its own folder:
    /// where it is, and that it is temporary. The MCP session of the same
    /// client session (by its id, or else by `link`) names the exact folder when it
    /// registered first; otherwise the folder the scratch folders live in is named.
    fn scratch_line(&self, client_session_id: &str, link: Option<&Link>) -> String {
        let stored = self
            .store()
            .get_setting(Setting::ScratchKeepHours.key())
            .ok()
            .flatten();
        let keep = Setting::ScratchKeepHours.number(stored.as_deref());
        let linked = self
            .live_session_of_client(client_session_id)
            .or_else(|| self.live_session_linked(link?));
        let folder = match linked {
            Some(id) => format!("its scratch folder {}", shown(&self.scratch_dir(&id))),
            None => format!(
                "a scratch folder of its own in {}",
                shown(&self.scratch_dir(""))
            ),
        };
        format!(
            "berth: this session has no project, so its own folder is {folder}, a temporary folder: \
unqualified paths go there, and it is deleted {keep} hours after the session ends. \
Write anything worth keeping into a workspace as <workspace>/<path>."
        )
    }
}

fn shown(p: &std::path::Path) -> String {
    escaped(&p.display().to_string()).into_owned()
}

/// "berth: this session uses workspace W (reason: R, project P)." The model
/// reads it as text: the project's path is escaped like every human output.
fn plain_line(a: &Answer) -> String {
    let workspace = escaped(&a.workspace);
    match &a.project {
        Some(p) => format!(
            "berth: this session uses workspace \"{workspace}\" (reason: {}; project {}).",
            a.reason,
            escaped(&p.display().to_string())
        ),
        None => format!(
            "berth: this session uses workspace \"{workspace}\" (reason: {}; no project).",
            a.reason
        ),
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use crate::store::Store;
    use berth_core::registry::Home;

    fn call<'a>(client_session_id: &'a str) -> HookCall<'a> {
        HookCall {
            event: "session-start",
            client: "claude-code",
            client_session_id,
            transcript_path: "",
            peer: Peer::default(),
        }
    }

    #[test]
    fn a_session_start_from_memory_says_what_the_pool_says_or_leaves_it_to_the_pool() {
        let t = tempfile::tempdir().unwrap();
        let base = crate::canonical::canonicalize(t.path()).unwrap();
        let (data, approved, unknown) = (base.join("data"), base.join("a"), base.join("u/p"));
        for d in [&data, &approved, &unknown] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir(unknown.join(".git")).unwrap();
        let store = Store::open(&data.join("berth.db")).unwrap();
        for name in ["one", "two"] {
            store.create_workspace(name, &Home::Managed).unwrap();
        }
        store.add_root("one", &approved).unwrap();
        let home = Some(base.clone());
        let d = Device::for_test(store, &data, home);
        let caller = |dir: &std::path::Path| Caller::new(dir.to_str().unwrap(), "", "").unwrap();

        let here = caller(&approved);
        assert!(
            d.session_start_in_memory(&here, &call("")).is_none(),
            "a folder not seen yet needs the disk"
        );
        let pooled = d.hook(&here, &call("")).unwrap();
        let remembered = d
            .session_start_in_memory(&here, &call(""))
            .unwrap()
            .unwrap();
        assert_eq!(remembered.context, pooled.context);
        assert_eq!(remembered.answer, pooled.answer);
        // No notice, so a linked session has nothing to take from the store either.
        assert!(d.session_start_in_memory(&here, &call("c-1")).is_some());

        // An unapproved project asks; whether its MCP session already did is in the store (by
        // the client's session id) or found through the process table (without one).
        let there = caller(&unknown);
        d.hook(&there, &call("")).unwrap();
        let held = d.resolve_in_memory(&there, "", None, Mode::Agent);
        assert!(held.is_some_and(|a| a.is_ok()), "the folder is in memory");
        assert!(d.session_start_in_memory(&there, &call("")).is_none());
        assert!(d.session_start_in_memory(&there, &call("c-2")).is_none());

        // A folder outside every project gets a scratch line, whose lifetime is a setting.
        let loose = caller(&base.join("u"));
        d.hook(&loose, &call("")).unwrap();
        let held = d.resolve_in_memory(&loose, "", None, Mode::Agent);
        assert!(held.is_some_and(|a| a.is_ok()), "the folder is in memory");
        assert!(d.session_start_in_memory(&loose, &call("")).is_none());
    }
}
