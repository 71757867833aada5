//! Hook calls (docs/reference.md, "Hooks"): session-start gets the line to show; stop records
//! the conversation and hands back the configured stop command. The hook
//! process runs that command itself, bounded in time.

use berth_proto::text::escaped;

use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::device::Device;
use crate::store::Conversation;
use berth_core::qualify::{Own, own_folder};
use berth_core::resolve::{Answer, Mode};
use berth_core::scratch::DEFAULT_KEEP_HOURS;

/// Default time limit of `hooks.stop_command`.
pub const DEFAULT_STOP_TIMEOUT_SECS: u32 = 30;

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
                let reg = self.registry();
                let notice = berth_core::notice::notice(&answer, &reg.names());
                // Linked to the MCP session by the client's id: ask once.
                let ask = match &notice {
                    Some(_) if !call.client_session_id.is_empty() => {
                        self.store().take_ask(call.client_session_id)?
                    }
                    Some(_) => true,
                    None => false,
                };
                let line = match notice {
                    Some(n) if ask => n,
                    _ => plain_line(&answer),
                };
                let scratch = (own_folder(&answer, reg.workspaces.len()) == Own::Scratch)
                    .then(|| self.scratch_line(call.client_session_id));
                let context = berth_core::notice::joined(
                    Some(line),
                    berth_core::notice::joined(scratch, berth_core::notice::notes(&answer)),
                )
                .unwrap_or_default();
                Ok(HookOutcome {
                    answer,
                    context,
                    stop_command: None,
                    stop_timeout_secs: 0,
                })
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
                let stop_command = self.store().get_setting("hooks.stop_command")?;
                let stop_timeout_secs = self
                    .store()
                    .get_setting("hooks.stop_timeout_secs")?
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(DEFAULT_STOP_TIMEOUT_SECS);
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
}

impl Device {
    /// What a session without a project must know about its own folder:
    /// where it is, and that it is temporary. The MCP session of the same
    /// client session names the exact folder when it registered first;
    /// otherwise the folder the scratch folders live in is named.
    fn scratch_line(&self, client_session_id: &str) -> String {
        let keep = self
            .store()
            .get_setting("scratch.keep_hours")
            .ok()
            .flatten()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_KEEP_HOURS);
        let folder = match self.live_session_of_client(client_session_id) {
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
