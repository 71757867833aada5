//! `berth-hook`: the hook executable coding clients run at session start
//! and when a turn stops (docs/reference.md, "Hooks"). It only translates: it reads the
//! client's payload, forwards the session's cwd to berthd, and prints the
//! reply in the client's format. It never breaks its client: whatever goes
//! wrong is logged (see [`logging`]) and it exits 0 with nothing on stdout
//! the client would reject.
//!
//! - `berth-hook session-start [--client NAME]`: prints the line naming the
//!   session's workspace and why, or the ask-once notice, or the daemon's
//!   refusal to resolve it (a `BERTH_WORKSPACE` naming no workspace).
//! - `berth-hook stop [--client NAME]`: records the conversation and runs
//!   `hooks.stop_command`, printing nothing.
//! - `berth-hook pre-tool [--client NAME]`: before a client's own write tool runs, objects
//!   to a file in another workspace's folders (see [`pre_tool`]); prints nothing otherwise.
//!
//! The session's directory is `BERTH_CWD` when set (bridges), else the
//! payload's `cwd`. Cursor sends no `cwd`, and its `workspace_roots` are not
//! one (ADR 0007): without `BERTH_CWD` a Cursor hook says and does nothing.
#![cfg_attr(all(unix, not(test)), no_main)]

mod input;
mod logging;
mod output;
mod pre_tool;
mod stop;

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use berth_client::client::{ClientError, Connection};
use berth_client::paths::EnvCtx;
use berth_proto::pb;
use berth_vocab::codes::Code;
use clap::Parser;

use crate::input::Input;
use berth_hook::payload::{self, Client, Payload};

/// The hook executable of berth: tells a coding session which workspace it
/// uses, and runs Stop-time work in that workspace.
#[derive(Debug, Parser)]
#[command(name = "berth-hook", version)]
struct Args {
    #[command(subcommand)]
    event: Event,
}

#[derive(Debug, clap::Subcommand)]
enum Event {
    /// A session starts: print its workspace and why, in the client's format.
    SessionStart(EventArgs),
    /// A turn stops: record the conversation and run `hooks.stop_command`.
    Stop(EventArgs),
    /// A client's own tool is about to write: object to a file in another workspace's
    /// folders, in the client's format (`guard.cross_workspace`).
    PreTool(EventArgs),
}

#[derive(Debug, clap::Args)]
struct EventArgs {
    /// The calling client: claude-code, codex, copilot-cli, vscode, cursor
    /// or gemini-cli. Without it, the payload's shape decides.
    #[arg(long, value_name = "NAME")]
    client: Option<String>,
}

/// The most a hook waits for berthd, start included: every client's own
/// hook time limit (30 s and up) stays well ahead.
const RPC_BUDGET: Duration = Duration::from_secs(10);

/// The C entry point: the hook skips Rust's standard start-up, see
/// `berth_entry` for why and what it keeps. Even a panic outside the
/// hook's own `catch_unwind` exits 0: a hook never fails its client.
#[cfg(all(unix, not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: the C runtime passes `argc` valid C strings in `argv`.
    unsafe {
        berth_entry::run(argc, argv, "berth-hook", 0, |args| {
            hook_main(args);
            0
        })
    }
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    #[cfg(windows)]
    berth_entry::keep_standard_handles();
    hook_main(std::env::args_os().collect());
    std::process::ExitCode::SUCCESS
}

/// Runs the hook and prints its output. A hook always exits 0.
#[cfg_attr(test, allow(dead_code))]
fn hook_main(argv: Vec<OsString>) {
    let env = EnvCtx::from_process();
    logging::init(&env);
    std::panic::set_hook(Box::new(|info| {
        tracing::error!("berth-hook failed: {info}")
    }));
    let out = match Args::try_parse_from(argv) {
        Ok(args) => std::panic::catch_unwind(|| run(&args, &env)).unwrap_or_default(),
        Err(e) => {
            // --help and --version print; a registration mistake is logged,
            // and the client still gets an exit 0 with nothing on stdout.
            if e.use_stderr() {
                tracing::warn!("bad arguments: {}", e.render());
            }
            let _ = e.print();
            String::new()
        }
    };
    let mut stdout = std::io::stdout().lock();
    // A client that stopped listening is not an error worth reporting.
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Handles one hook call; returns what goes to stdout.
fn run(args: &Args, env: &EnvCtx) -> String {
    let (event, ea) = match &args.event {
        Event::SessionStart(a) => ("session-start", a),
        Event::Stop(a) => ("stop", a),
        Event::PreTool(a) => ("pre-tool", a),
    };
    let forced = ea.client.as_deref().and_then(|name| {
        let c = Client::from_name(name);
        if c.is_none() {
            tracing::warn!(
                event,
                "unknown --client {name:?}; the payload's shape decides"
            );
        }
        c
    });
    if event == "pre-tool" {
        return pre_tool::run(forced, env);
    }
    let bytes = match input::read_stdin(input::MAX_PAYLOAD, input::READ_TIMEOUT) {
        Input::Payload(b) => b,
        Input::TooLarge => {
            tracing::warn!(
                event,
                "payload larger than {} bytes; ignored",
                input::MAX_PAYLOAD
            );
            return String::new();
        }
        Input::TimedOut => {
            tracing::warn!(
                event,
                "no complete payload on stdin within {:?}; ignored",
                input::READ_TIMEOUT
            );
            return String::new();
        }
        Input::Failed(e) => {
            tracing::warn!(event, "reading the payload: {e}");
            return String::new();
        }
    };
    let payload = match payload::parse(&bytes, forced) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(event, "{e}; nothing to do");
            return String::new();
        }
    };
    let cwd = match session_dir(&payload, std::env::var("BERTH_CWD").ok()) {
        Ok(cwd) => cwd,
        Err(why) => {
            tracing::info!(
                event,
                client = payload.client.name(),
                "{why}: nothing to say about workspaces"
            );
            return String::new();
        }
    };
    let request = pb::HookRequest {
        caller: Some(caller(&cwd)),
        event: event.to_string(),
        client: payload.client.name().to_string(),
        client_session_id: payload.session_id.clone(),
        transcript_path: payload.transcript_path.clone(),
        payload: if event == "stop" {
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            String::new()
        },
    };
    let reply = match call(env, request) {
        Ok(r) => r,
        Err(CallError::NoAnswer(e)) => {
            tracing::warn!(event, cwd, "berthd did not answer: {e}");
            return String::new();
        }
        Err(CallError::NotOurs(e)) => {
            tracing::warn!(event, cwd, "berth used no daemon, so ran nothing: {e}");
            return String::new();
        }
        Err(CallError::Answered(code, message)) => {
            tracing::warn!(
                event,
                cwd,
                code = code.as_str(),
                "berthd answered with an error: {message}"
            );
            let dir_exists = Path::new(&cwd).is_dir();
            return match event {
                "session-start" if shows_refusal(code, dir_exists) => {
                    output::session_start(payload.client, &format!("berth: {message}"))
                }
                _ => String::new(),
            };
        }
    };
    let res = reply.resolution.clone().unwrap_or_default();
    tracing::info!(
        event,
        client = payload.client.name(),
        session = payload.session_id,
        cwd,
        workspace = res.workspace,
        reason = res.reason,
        "answered"
    );
    match event {
        "session-start" => output::session_start(payload.client, &reply.context),
        _ => {
            run_stop_command(&reply, &res, &cwd, bytes);
            String::new()
        }
    }
}

/// `BERTH_CWD` (bridges) when absolute, else the payload's `cwd`; never a
/// guess from Cursor's `workspace_roots` (docs/reference.md, "Hooks"). Without one, why not.
fn session_dir(payload: &Payload, berth_cwd: Option<String>) -> Result<String, String> {
    let over = berth_cwd.filter(|c| !c.is_empty());
    match &over {
        Some(c) if Path::new(c).is_absolute() => return Ok(c.clone()),
        _ => {}
    }
    if let Some(c) = &payload.cwd {
        return Ok(c.clone());
    }
    let payload_says = match (&payload.relative_cwd, payload.client) {
        (Some(rel), _) => format!("the payload's cwd {rel:?} is relative and was ignored"),
        // Cursor's payloads list its window's folders, not the session's.
        (None, Client::Cursor) => "no cwd in the payload (workspace_roots is not one)".into(),
        (None, _) => "no cwd in the payload".into(),
    };
    Err(match over {
        Some(c) => format!("{payload_says}, and BERTH_CWD {c:?} is relative and was ignored"),
        None => format!("{payload_says}, and no BERTH_CWD"),
    })
}

/// Whether a session-start shows the daemon's error to the model (ADR 0007,
/// decision 2). It does when the daemon judged the request and refused the
/// resolution (a `BERTH_WORKSPACE` naming no workspace, say) for a folder
/// that exists: the model would otherwise never learn that its pin is
/// wrong. A folder that is gone, and a daemon failing inside, are nothing
/// the model can act on; they are only logged.
fn shows_refusal(code: Code, dir_exists: bool) -> bool {
    dir_exists && matches!(code, Code::NotFound | Code::Refused | Code::Invalid)
}

/// The caller a hook forwards: the session's folder and this process's pins.
fn caller(cwd: &str) -> pb::Caller {
    pb::Caller {
        cwd: cwd.to_string(),
        env_workspace: env_text("BERTH_WORKSPACE"),
        extra_home: env_text("BERTH_EXTRA_HOME"),
    }
}

/// A variable as UTF-8 text; "" when unset or not UTF-8 (said in the log).
fn env_text(key: &str) -> String {
    match std::env::var(key) {
        Ok(v) => v,
        Err(std::env::VarError::NotPresent) => String::new(),
        Err(std::env::VarError::NotUnicode(_)) => {
            tracing::warn!("{key} is not UTF-8; ignored");
            String::new()
        }
    }
}

/// Why a Hook RPC gave no reply.
#[derive(Debug)]
enum CallError {
    /// berthd answered with an error: its code and what it said.
    Answered(Code, String),
    /// berthd could not be reached or started, or did not answer in time.
    NoAnswer(String),
    /// The data folder is not the user's alone: no daemon was asked or started.
    NotOurs(String),
}

/// One Hook RPC on a current-thread runtime, starting berthd if needed,
/// within [`RPC_BUDGET`].
fn call(env: &EnvCtx, request: pb::HookRequest) -> Result<pb::HookReply, CallError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CallError::NoAnswer(format!("starting the runtime: {e}")))?;
    let answer = runtime.block_on(async {
        let rpc = async {
            let mut conn = Connection::open(env).await?;
            conn.call(|mut c| {
                let request = request.clone();
                async move { c.hook(request).await }
            })
            .await
        };
        tokio::time::timeout(RPC_BUDGET, rpc).await
    });
    // A daemon start still waiting on a blocking thread must not hold the
    // hook up: leave it behind.
    runtime.shutdown_background();
    match answer {
        Ok(reply) => reply.map_err(classify),
        Err(_) => Err(CallError::NoAnswer(format!(
            "no answer within {RPC_BUDGET:?}"
        ))),
    }
}

/// Why a call failed. Every error the daemon makes carries a berth code; one without is the
/// transport's.
fn classify(e: ClientError) -> CallError {
    match (&e, e.code()) {
        (ClientError::NotOurs(_), _) => CallError::NotOurs(e.to_string()),
        (_, Some(code)) => CallError::Answered(code, e.to_string()),
        (_, None) => CallError::NoAnswer(e.to_string()),
    }
}

/// Runs `hooks.stop_command`, if set, with the session's resolution in its
/// environment and the payload on its stdin; its output goes to the log.
fn run_stop_command(reply: &pb::HookReply, res: &pb::Resolution, cwd: &str, payload: Vec<u8>) {
    if reply.stop_command.trim().is_empty() {
        tracing::debug!("no hooks.stop_command set");
        return;
    }
    // 0: a daemon that sends none; the setting's default then applies.
    let timeout = Duration::from_secs(match reply.stop_timeout_secs {
        0 => berth_vocab::settings::Setting::HooksStopTimeoutSecs.number(None),
        s => s.into(),
    });
    let dir = Path::new(cwd);
    let run = stop::run(stop::StopCommand {
        command: &reply.stop_command,
        env: vec![
            ("BERTH_WORKSPACE", res.workspace.clone()),
            ("BERTH_REASON", res.reason.clone()),
            ("BERTH_PROJECT", res.project.clone()),
        ],
        // The session's folder, when it (still) exists.
        cwd: dir.is_dir().then_some(dir),
        stdin: payload,
        timeout,
    });
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(
                command = reply.stop_command,
                "starting the stop command: {e}"
            );
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    match run.status {
        Some(s) if s.success() => tracing::info!(
            command = reply.stop_command,
            elapsed = ?run.elapsed,
            %stdout,
            %stderr,
            "stop command done"
        ),
        Some(s) => tracing::warn!(
            command = reply.stop_command,
            status = %s,
            %stdout,
            %stderr,
            "stop command failed"
        ),
        None => tracing::warn!(
            command = reply.stop_command,
            %stdout,
            %stderr,
            "stop command ran over its {timeout:?} and was stopped"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(json: &str) -> Payload {
        payload::parse(json.as_bytes(), None).unwrap()
    }

    // Unix paths, which are not absolute on Windows; the Windows version follows.
    #[cfg(unix)]
    #[test]
    fn berth_cwd_wins_and_the_payloads_cwd_comes_next() {
        let p = payload(r#"{"session_id": "s", "cwd": "/p"}"#);
        assert_eq!(session_dir(&p, Some("/b".into())), Ok("/b".into()));
        assert_eq!(session_dir(&p, None), Ok("/p".into()));
        assert_eq!(session_dir(&p, Some("rel".into())), Ok("/p".into()));
        assert_eq!(session_dir(&p, Some(String::new())), Ok("/p".into()));
    }

    #[cfg(windows)]
    #[test]
    fn berth_cwd_wins_and_the_payloads_cwd_comes_next_with_windows_paths() {
        let p = payload(r#"{"session_id": "s", "cwd": "C:\\p"}"#);
        assert_eq!(session_dir(&p, Some(r"D:\b".into())), Ok(r"D:\b".into()));
        assert_eq!(session_dir(&p, None), Ok(r"C:\p".into()));
        assert_eq!(session_dir(&p, Some("/b".into())), Ok(r"C:\p".into()));
        assert_eq!(session_dir(&p, Some(String::new())), Ok(r"C:\p".into()));
    }

    #[test]
    fn without_a_cwd_the_reason_names_what_was_ignored() {
        let relative = payload(r#"{"session_id": "s", "cwd": "shop"}"#);
        assert_eq!(
            session_dir(&relative, None),
            Err("the payload's cwd \"shop\" is relative and was ignored, and no BERTH_CWD".into())
        );
        assert_eq!(
            session_dir(&relative, Some("b".into())),
            Err("the payload's cwd \"shop\" is relative and was ignored, and BERTH_CWD \"b\" is relative and was ignored".into())
        );
        let absent = payload(r#"{"session_id": "s"}"#);
        assert_eq!(
            session_dir(&absent, None),
            Err("no cwd in the payload, and no BERTH_CWD".into())
        );
        let cursor = payload(r#"{"conversation_id": "c", "workspace_roots": ["/a"]}"#);
        assert_eq!(
            session_dir(&cursor, None),
            Err("no cwd in the payload (workspace_roots is not one), and no BERTH_CWD".into())
        );
    }

    #[test]
    fn a_refusal_for_an_existing_folder_is_shown_and_nothing_else_is() {
        for code in [Code::NotFound, Code::Refused, Code::Invalid] {
            assert!(shows_refusal(code, true), "{code:?}");
            assert!(
                !shows_refusal(code, false),
                "{code:?} for a folder that is gone"
            );
        }
        for code in [Code::Internal, Code::DaemonOutdated, Code::ClientOutdated] {
            assert!(!shows_refusal(code, true), "{code:?}");
        }
    }
}
