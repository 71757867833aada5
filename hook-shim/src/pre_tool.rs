//! `berth-hook pre-tool`: the native-tool guard (docs/reference.md, "The native-tool guard").
//! It reads the client's pre-tool payload, takes the files a write tool would touch
//! ([`berth_hook::tool_call`]), follows each through its links to where the write lands
//! (so that berthd can answer from memory, docs/decisions/0052-the-guard-answers-from-memory.md),
//! asks berthd whether any lies in another workspace's folders, and prints the client's
//! decision. It fails open: whatever goes wrong (no daemon, a daemon
//! not verified as the user's, a payload it cannot read, a patch that does not parse) is
//! logged, and the call is allowed with nothing on stdout.
//!
//! It never starts berthd: it runs before every tool call, and a session-start hook or an MCP
//! server has started the daemon of any session berth knows about.

use std::path::Path;
use std::time::Duration;

use berth_client::client::Connection;
use berth_client::landing::landing;
use berth_client::paths::EnvCtx;
use berth_hook::payload::{self, Client};
use berth_hook::tool_call::{ToolCall, tool_call};
use berth_proto::pb;

use crate::input::{self, Input};
use crate::output::{self, Verdict};
use crate::{CallError, caller, session_dir};

/// The largest pre-tool payload read (8 MiB): a Write carries the whole file. A larger one is
/// allowed unjudged, and logged.
pub const MAX_PAYLOAD: usize = 8 << 20;

/// The most the guard waits for berthd: the client waits for it before running the tool.
const RPC_BUDGET: Duration = Duration::from_secs(5);

/// Claude Code's permission modes in which nothing is put to the person.
const NO_QUESTION_MODES: [&str; 2] = ["dontAsk", "bypassPermissions"];

/// Handles one pre-tool call; returns what goes to stdout.
pub fn run(forced: Option<Client>, env: &EnvCtx) -> String {
    let event = "pre-tool";
    let bytes = match input::read_stdin(MAX_PAYLOAD, input::READ_TIMEOUT) {
        Input::Payload(b) => b,
        Input::TooLarge => {
            tracing::warn!(
                event,
                "payload larger than {MAX_PAYLOAD} bytes; the tool call is allowed unjudged"
            );
            return String::new();
        }
        Input::TimedOut => {
            tracing::warn!(
                event,
                "no complete payload on stdin within {:?}; the tool call is allowed unjudged",
                input::READ_TIMEOUT
            );
            return String::new();
        }
        Input::Failed(e) => {
            tracing::warn!(
                event,
                "reading the payload: {e}; the tool call is allowed unjudged"
            );
            return String::new();
        }
    };
    let (payload, obj) = match payload::parse_object(&bytes, forced) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(event, "{e}; the tool call is allowed unjudged");
            return String::new();
        }
    };
    let client = payload.client;
    if client == Client::Cursor {
        tracing::info!(
            event,
            "Cursor has no pre-tool hook for edits; nothing to judge"
        );
        return String::new();
    }
    let (tool, targets) = match tool_call(&obj) {
        ToolCall::Writes { tool, targets } => (tool, targets),
        ToolCall::NotJudged(tool) => {
            tracing::debug!(
                event,
                client = client.name(),
                tool,
                "not a write tool; not judged"
            );
            return String::new();
        }
        ToolCall::Unreadable { tool, why } => {
            tracing::warn!(
                event,
                client = client.name(),
                tool,
                "{why}; the tool call is allowed unjudged"
            );
            return String::new();
        }
    };
    let cwd = match session_dir(&payload, std::env::var("BERTH_CWD").ok()) {
        Ok(cwd) => cwd,
        Err(why) => {
            tracing::warn!(
                event,
                client = client.name(),
                tool,
                "{why}: the tool call is allowed unjudged"
            );
            return String::new();
        }
    };
    let request = pb::GuardRequest {
        caller: Some(caller(&cwd)),
        client: client.name().to_string(),
        client_session_id: payload.session_id.clone(),
        tool: tool.clone(),
        followed: followed(&cwd, &targets),
        targets,
    };
    let reply = match call(env, request) {
        Ok(r) => r,
        Err(e) => {
            let why = match e {
                CallError::NoAnswer(e) => format!("berthd did not answer: {e}"),
                CallError::NotOurs(e) => format!("berth used no daemon: {e}"),
                CallError::Answered(code, m) => {
                    format!("berthd answered with an error ({}): {m}", code.as_str())
                }
            };
            tracing::warn!(
                event,
                client = client.name(),
                tool,
                cwd,
                "{why}; the tool call is allowed unjudged"
            );
            return String::new();
        }
    };
    let verdict = match reply.decision.as_str() {
        "" => {
            tracing::debug!(event, client = client.name(), tool, cwd, "no objection");
            return String::new();
        }
        "ask" => Verdict::Ask,
        "warn" => Verdict::Warn,
        "deny" => Verdict::Deny,
        other => {
            tracing::warn!(
                event,
                "berthd answered an unknown decision {other:?}; the tool call is allowed"
            );
            return String::new();
        }
    };
    let mode = obj
        .get("permission_mode")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let asks = !NO_QUESTION_MODES.contains(&mode);
    tracing::info!(
        event,
        client = client.name(),
        session = payload.session_id,
        tool,
        cwd,
        workspace = reply.workspace,
        target = reply.target,
        other = reply.other_workspace,
        decision = reply.decision,
        "a write into another workspace's folder"
    );
    let notifier = output::Notifier::from_env(
        std::env::var("TERM_PROGRAM").ok().as_deref(),
        std::env::var("TERM").ok().as_deref(),
        std::env::var_os("KITTY_WINDOW_ID").is_some(),
    );
    output::pre_tool(client, verdict, &reply.reason, asks, notifier)
}

/// Each target followed through its links here, as the daemon would follow it, so that the
/// daemon need not touch the disk (docs/decisions/0052-the-guard-answers-from-memory.md).
/// Empty when a path is not text: the daemon then follows the targets itself.
fn followed(cwd: &str, targets: &[String]) -> Vec<pb::FollowedTarget> {
    let cwd = Path::new(cwd);
    let mut out = Vec::with_capacity(targets.len());
    for target in targets {
        // An empty path is no target (the daemon skips it too).
        if target.is_empty() {
            out.push(pb::FollowedTarget::default());
            continue;
        }
        let Some(l) = landing(cwd, target) else {
            // The daemon skips it as well: the system refuses such a path, so the write
            // cannot land anywhere.
            tracing::warn!(
                event = "pre-tool",
                target,
                "the target cannot be followed (a NUL byte, or a loop or chain of links longer \
                 than the system follows), so its write cannot land; it is not judged"
            );
            out.push(pb::FollowedTarget::default());
            continue;
        };
        match (
            l.path.into_os_string().into_string(),
            l.folder.into_os_string().into_string(),
        ) {
            (Ok(path), Ok(folder)) => out.push(pb::FollowedTarget { path, folder }),
            _ => return Vec::new(),
        }
    }
    out
}

/// One Guard RPC to a running berthd (none is started), within [`RPC_BUDGET`].
fn call(env: &EnvCtx, request: pb::GuardRequest) -> Result<pb::GuardReply, CallError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CallError::NoAnswer(format!("starting the runtime: {e}")))?;
    let answer = runtime.block_on(async {
        let rpc = async {
            let Some(mut conn) = Connection::open_existing(env).await? else {
                return Ok(None);
            };
            conn.call(|mut c| {
                let request = request.clone();
                async move { c.guard(request).await }
            })
            .await
            .map(Some)
        };
        tokio::time::timeout(RPC_BUDGET, rpc).await
    });
    runtime.shutdown_background();
    match answer {
        Ok(Ok(Some(reply))) => Ok(reply),
        Ok(Ok(None)) => Err(CallError::NoAnswer("no berthd is running".into())),
        Ok(Err(e)) => Err(crate::classify(e)),
        Err(_) => Err(CallError::NoAnswer(format!(
            "no answer within {RPC_BUDGET:?}"
        ))),
    }
}
