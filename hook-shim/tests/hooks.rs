//! End to end: the built `berth-hook` against a real daemon, one hermetic
//! [`TestEnv`] per test, payloads shaped like each client's real ones (the
//! fixtures in `tests/fixtures/`, with the test's directories put in).
//!
//! Run with `cargo test --workspace` (or `cargo build` first): the harness
//! runs the `berth` and `berthd` binaries.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use berth_tests::{TestEnv, describe};
use serde_json::{Value, json};

const HOOK: &str = env!("CARGO_BIN_EXE_berth-hook");

// ---- running the hook ----------------------------------------------------

/// A finished hook run and how to describe it when an expectation fails.
/// Its checks ([`HookRun::ok_within`], [`HookRun::silent`]) assert.
struct HookRun {
    description: String,
    stdin: Vec<u8>,
    output: Output,
    elapsed: Duration,
    log: String,
}

impl HookRun {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn fail(&self, why: &str) -> ! {
        panic!(
            "\n{why}\n\ncommand: {}\nstdin: {}\nexit status: {}\nelapsed: {:?}\n\n---- stdout ----\n{}\n---- stderr ----\n{}\n---- berth-hook.log ----\n{}",
            self.description,
            String::from_utf8_lossy(&self.stdin),
            self.output.status,
            self.elapsed,
            self.stdout(),
            String::from_utf8_lossy(&self.output.stderr),
            self.log,
        )
    }

    /// Exit 0 within `limit`, as every hook run must.
    fn ok_within(self, limit: Duration) -> HookRun {
        if self.output.status.code() != Some(0) {
            self.fail("expected exit status 0");
        }
        if self.elapsed > limit {
            self.fail(&format!("expected to finish within {limit:?}"));
        }
        self
    }

    /// Exit 0 quickly with nothing on stdout.
    fn silent(self) -> HookRun {
        let run = self.ok_within(Duration::from_secs(10));
        if !run.output.stdout.is_empty() {
            run.fail("expected nothing on stdout");
        }
        run
    }
}

fn log_of(env: &TestEnv) -> String {
    std::fs::read_to_string(
        env.root()
            .join("state")
            .join("berth")
            .join("berth-hook.log"),
    )
    .unwrap_or_default()
}

/// `berth-hook ARGS` with `stdin` written and closed (or, with `keep_open`,
/// left open until the hook exits), at most 60 s.
fn run_hook_cmd(env: &TestEnv, mut cmd: Command, stdin: &[u8], keep_open: bool) -> HookRun {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let description = describe(&cmd);
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawning berth-hook");
    let mut pipe = child.stdin.take().expect("stdin");
    // The hook may stop reading early (a payload over the limit).
    let _ = pipe.write_all(stdin);
    let held = if keep_open {
        Some(pipe)
    } else {
        drop(pipe);
        None
    };
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("waiting for berth-hook"),
        Err(_) => {
            berth_tests::kill(pid);
            panic!("{description} did not finish within 60 s");
        }
    };
    drop(held);
    HookRun {
        description,
        stdin: stdin.to_vec(),
        output,
        elapsed: started.elapsed(),
        log: log_of(env),
    }
}

fn hook(env: &TestEnv, args: &[&str], stdin: &[u8]) -> HookRun {
    let mut cmd = env.command(HOOK);
    cmd.args(args);
    run_hook_cmd(env, cmd, stdin, false)
}

// ---- payloads --------------------------------------------------------------

/// Whether a fixture is Cursor's: `workspace_roots` and no `cwd`.
fn is_cursor(fixture: &str) -> bool {
    fixture.starts_with("cursor-")
}

/// A fixture with `session` as its id and `dir` where its client puts the
/// session's folder: `cwd` (removed when `None`), or for Cursor, which sends
/// no `cwd`, the one entry of `workspace_roots` (the fixture's own, a folder
/// that does not exist here, when `None`).
fn payload(fixture: &str, dir: Option<&Path>, session: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let obj = v.as_object_mut().expect("fixture is an object");
    match (is_cursor(fixture), dir) {
        (false, Some(d)) => {
            obj.insert("cwd".into(), json!(d));
        }
        (false, None) => {
            obj.remove("cwd");
        }
        (true, Some(d)) => {
            obj.insert("workspace_roots".into(), json!([d]));
        }
        (true, None) => {}
    }
    for key in ["session_id", "sessionId", "conversation_id"] {
        if obj.contains_key(key) {
            obj.insert(key.into(), json!(session));
        }
    }
    serde_json::to_vec(&v).unwrap()
}

/// `berth-hook` for a session in `dir`, as its client can say where that is:
/// in the payload (see [`payload`]), or for Cursor, whose payloads carry no
/// `cwd`, through `BERTH_CWD` (ADR 0007).
fn hook_cmd(env: &TestEnv, fixture: &str, dir: Option<&Path>) -> Command {
    let mut cmd = env.command(HOOK);
    if let (true, Some(d)) = (is_cursor(fixture), dir) {
        cmd.env("BERTH_CWD", d);
    }
    cmd
}

/// A session id no other run of this test binary uses.
fn session_id() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "sess-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// How each client takes a session-start hook's context.
#[derive(Clone, Copy, Debug)]
enum Format {
    /// `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":…}}`
    HookSpecific,
    /// `{"additionalContext":…}`
    TopCamel,
    /// `{"additional_context":…}`
    TopSnake,
}

/// Every session-start shape, detected from the payload alone.
const SESSION_STARTS: &[(&str, Format)] = &[
    ("claude-code-session-start.json", Format::HookSpecific),
    ("codex-session-start.json", Format::HookSpecific),
    ("copilot-cli-session-start.json", Format::TopCamel),
    ("copilot-cli-pascal-session-start.json", Format::TopCamel),
    ("vscode-session-start.json", Format::HookSpecific),
    ("cursor-session-start.json", Format::TopSnake),
];

/// The context a session-start run printed, checking that stdout is exactly
/// one document of the client's format; `None` for empty stdout.
fn context(run: &HookRun, format: Format) -> Option<String> {
    let out = run.stdout();
    if out.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| run.fail(&format!("stdout is not one JSON document: {e}")));
    let text = match format {
        Format::HookSpecific => {
            let expect_keys = v.as_object().map(|o| o.len()) == Some(1)
                && v["hookSpecificOutput"]["hookEventName"] == "SessionStart";
            if !expect_keys {
                run.fail("expected only hookSpecificOutput with hookEventName SessionStart");
            }
            &v["hookSpecificOutput"]["additionalContext"]
        }
        Format::TopCamel | Format::TopSnake => {
            let key = match format {
                Format::TopCamel => "additionalContext",
                _ => "additional_context",
            };
            if v.as_object().map(|o| o.len()) != Some(1) {
                run.fail(&format!("expected only {key}"));
            }
            &v[key]
        }
    };
    match text.as_str() {
        Some(s) => Some(s.to_string()),
        None => run.fail("the context is not a string"),
    }
}

// ---- a world with every kind of directory ----------------------------------

struct World {
    env: TestEnv,
    /// A git project approved for workspace `w` (`berth workspace use w`).
    approved: PathBuf,
    /// A git project nothing assigns.
    unassigned: PathBuf,
    /// A project whose file names `w`, which has no root containing it.
    proposal: PathBuf,
    /// A folder in no project.
    plain: PathBuf,
}

fn world() -> World {
    let env = TestEnv::new();
    let approved = env.git_root(env.dir("code/approved"));
    let _ = env.run_in(&approved, ["workspace", "use", "w"]).success();
    let unassigned = env.git_root(env.dir("code/unassigned"));
    let proposal = env.dir("code/proposal");
    env.project_file(&proposal, r#"{"workspace": "w"}"#);
    let plain = env.dir("plain");
    World {
        env,
        approved,
        unassigned,
        proposal,
        plain,
    }
}

/// Runs every session-start shape in `dir` and checks what each printed.
fn every_shape_says(w: &World, dir: Option<&Path>, expect: impl Fn(Option<&str>) -> bool) {
    for &(fixture, format) in SESSION_STARTS {
        let mut cmd = hook_cmd(&w.env, fixture, dir);
        cmd.arg("session-start");
        let bytes = payload(fixture, dir, &session_id());
        let run = run_hook_cmd(&w.env, cmd, &bytes, false).ok_within(Duration::from_secs(10));
        let said = context(&run, format);
        if !expect(said.as_deref()) {
            run.fail(&format!("{fixture}: unexpected context {said:?}"));
        }
    }
}

// ---- session-start -----------------------------------------------------------

#[test]
fn every_client_in_an_approved_project_is_told_its_workspace_and_why() {
    let w = world();
    let line = format!(
        "uses workspace \"w\" (reason: project-file; project {})",
        w.approved.display()
    );
    every_shape_says(&w, Some(&w.approved), |c| {
        c.is_some_and(|c| c.contains(&line))
    });
}

/// docs/reference.md, "Roots, the walk and project files": a note about an ignored project file
/// reaches the user through the hook's context.
#[test]
fn every_client_hears_the_notes_about_an_ignored_project_file() {
    let w = world();
    let broken = w.env.git_root(w.env.dir("code/approved/broken"));
    w.env
        .project_file(&broken, r#"{"workspace": "Not A Name"}"#);
    let note = format!(
        "berth note: ignored {}",
        broken.join(".berth").join("workspace.json").display()
    );
    every_shape_says(&w, Some(&broken), |c| {
        c.is_some_and(|c| c.contains("uses workspace \"w\"") && c.contains(&note))
    });
}

#[test]
fn every_client_in_an_unassigned_project_is_asked_once() {
    let w = world();
    let situation = format!("The project {} is not assigned", w.unassigned.display());
    every_shape_says(&w, Some(&w.unassigned), |c| {
        c.is_some_and(|c| c.contains(&situation) && c.contains("use_workspace"))
    });
}

#[test]
fn every_client_in_a_project_proposing_an_unapproved_workspace_is_asked() {
    let w = world();
    every_shape_says(&w, Some(&w.proposal), |c| {
        c.is_some_and(|c| c.contains("proposing workspace \"w\"") && c.contains("use_workspace"))
    });
}

#[test]
fn every_client_outside_any_project_gets_the_default_and_is_never_asked() {
    let w = world();
    every_shape_says(&w, Some(&w.plain), |c| {
        c.is_some_and(|c| {
            c.contains("uses workspace \"default\" (reason: active; no project)")
                && !c.contains("use_workspace")
        })
    });
}

#[test]
fn every_client_without_a_cwd_hears_nothing_about_workspaces() {
    let w = world();
    every_shape_says(&w, None, |c| c.is_none());
}

/// docs/reference.md, "Resolution": a `BERTH_WORKSPACE` naming no workspace is an error. A
/// session-start shows the daemon's refusal in the client's format, so the
/// model learns its pin is wrong; a stop still prints and runs nothing
/// (ADR 0007, decision 2).
#[test]
fn every_client_with_an_unknown_berth_workspace_is_told_the_daemons_refusal() {
    let w = world();
    for &(fixture, format) in SESSION_STARTS {
        let mut cmd = hook_cmd(&w.env, fixture, Some(&w.approved));
        cmd.arg("session-start").env("BERTH_WORKSPACE", "nope");
        let bytes = payload(fixture, Some(&w.approved), &session_id());
        let run = run_hook_cmd(&w.env, cmd, &bytes, false).ok_within(Duration::from_secs(10));
        let said = context(&run, format);
        let told = said.as_deref().is_some_and(|c| {
            c.starts_with("berth: no workspace nope — workspaces: default, w")
                && c.contains("BERTH_WORKSPACE named it")
        });
        if !told {
            run.fail(&format!("{fixture}: expected the refusal, got {said:?}"));
        }
    }
    let trace = trace_stop_command(&w.env);
    for &(fixture, _) in STOPS {
        let mut cmd = hook_cmd(&w.env, fixture, Some(&w.approved));
        cmd.arg("stop").env("BERTH_WORKSPACE", "nope");
        let bytes = payload(fixture, Some(&w.approved), &session_id());
        let run = run_hook_cmd(&w.env, cmd, &bytes, false).silent();
        if !run
            .log
            .contains("berthd answered with an error: no workspace nope")
        {
            run.fail("the log should quote the daemon");
        }
    }
    assert!(
        !trace.exists(),
        "a stop command ran for a refused resolution"
    );
}

#[test]
fn the_notice_is_shown_once_per_client_session() {
    let w = world();
    let fixture = "claude-code-session-start.json";
    let start = |id: &str| {
        let run = hook(
            &w.env,
            &["session-start"],
            &payload(fixture, Some(&w.unassigned), id),
        )
        .ok_within(Duration::from_secs(10));
        let c = context(&run, Format::HookSpecific);
        (run, c.unwrap_or_default())
    };
    let id = session_id();
    let (run, first) = start(&id);
    if !first.contains("is not assigned") {
        run.fail("the first session-start should carry the notice");
    }
    // Resumed, cleared or compacted: the same id, already asked (the MCP
    // session of the same id would not ask either).
    let (run, again) = start(&id);
    let plain = format!(
        "uses workspace \"default\" (reason: active; project {})",
        w.unassigned.display()
    );
    if again.contains("is not assigned") || !again.contains(&plain) {
        run.fail("a second session-start with the same id should show the plain line");
    }
    let (run, other) = start(&session_id());
    if !other.contains("is not assigned") {
        run.fail("another session should be asked");
    }
}

#[test]
fn the_client_flag_decides_the_format() {
    let w = world();
    let bytes = payload(
        "claude-code-session-start.json",
        Some(&w.approved),
        &session_id(),
    );
    let run = hook(&w.env, &["session-start", "--client", "cursor"], &bytes)
        .ok_within(Duration::from_secs(10));
    let c = context(&run, Format::TopSnake);
    if !c.is_some_and(|c| c.contains("uses workspace \"w\"")) {
        run.fail("--client cursor should print additional_context");
    }
    // An unknown name falls back to the payload's shape.
    let run = hook(&w.env, &["session-start", "--client", "emacs"], &bytes)
        .ok_within(Duration::from_secs(10));
    if context(&run, Format::HookSpecific).is_none() {
        run.fail("an unknown --client should fall back to detection");
    }
}

// ---- never breaking the client ---------------------------------------------

fn garbage() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", b"".to_vec()),
        ("whitespace", b" \n\t".to_vec()),
        ("truncated JSON", br#"{"session_id": "s", "cwd": "/tm"#.to_vec()),
        ("null", b"null".to_vec()),
        ("an array", br#"[{"session_id": "s", "cwd": "/tmp"}]"#.to_vec()),
        ("a string", br#""/tmp""#.to_vec()),
        (
            "wrong types",
            br#"{"session_id": 7, "cwd": ["/tmp"], "workspace_roots": "/tmp", "transcript_path": {}}"#
                .to_vec(),
        ),
        ("non-UTF-8", b"{\"session_id\": \"s\", \"cwd\": \"/tmp/\xff\xfe\"}".to_vec()),
        (
            "a cwd that does not exist",
            br#"{"session_id": "s", "cwd": "/nonexistent/berth/hook/dir", "hook_event_name": "SessionStart"}"#
                .to_vec(),
        ),
        ("a relative cwd", br#"{"session_id": "s", "cwd": "code/shop"}"#.to_vec()),
        ("over 1 MiB", {
            let mut v = br#"{"session_id": "s", "cwd": "/tmp", "pad": ""#.to_vec();
            v.extend(std::iter::repeat_n(b'x', 2 << 20));
            v.extend_from_slice(b"\"}");
            v
        }),
    ]
}

#[test]
fn garbage_payloads_exit_0_quickly_with_nothing_on_stdout() {
    let env = TestEnv::new();
    let trace = trace_stop_command(&env);
    for (what, bytes) in garbage() {
        for event in ["session-start", "stop"] {
            let run = hook(&env, &[event], &bytes).silent();
            if run.elapsed > Duration::from_secs(5) {
                run.fail(&format!("{what}: took too long"));
            }
        }
    }
    assert!(!trace.exists(), "a stop command ran for a garbage payload");
    let log = log_of(&env);
    assert!(log.contains("not JSON"), "the log should say why:\n{log}");
    assert!(
        log.contains("larger than"),
        "the log should say why:\n{log}"
    );
}

/// The log says what was wrong with a cwd: a relative one was ignored, and
/// for one that does not exist the daemon's answer is quoted (it answered;
/// it was not unreachable).
#[test]
fn a_relative_or_missing_cwd_is_logged_for_what_it_is() {
    let env = TestEnv::new();
    for event in ["session-start", "stop"] {
        let run = hook(&env, &[event], br#"{"session_id": "s", "cwd": "shop"}"#).silent();
        if !run
            .log
            .contains("the payload's cwd \"shop\" is relative and was ignored")
        {
            run.fail("the log should say the cwd was relative");
        }
    }
    let gone = env.root().join("gone").join("shop");
    let bytes = serde_json::to_vec(&json!({
        "session_id": "s", "cwd": gone, "hook_event_name": "SessionStart"
    }))
    .unwrap();
    for event in ["session-start", "stop"] {
        let run = hook(&env, &[event], &bytes).silent();
        let quoted = format!(
            "berthd answered with an error: {}: no such file or directory",
            gone.display()
        );
        if !run.log.contains(&quoted) || run.log.contains("did not answer") {
            run.fail("the log should quote the daemon's answer");
        }
    }
}

#[test]
fn a_payload_on_a_stdin_that_never_closes_is_read_or_given_up_on_in_time() {
    let w = world();
    // A complete payload is taken without waiting for end of input.
    let bytes = payload(
        "claude-code-session-start.json",
        Some(&w.approved),
        &session_id(),
    );
    let mut cmd = w.env.command(HOOK);
    cmd.arg("session-start");
    let run = run_hook_cmd(&w.env, cmd, &bytes, true).ok_within(Duration::from_secs(10));
    if context(&run, Format::HookSpecific).is_none() {
        run.fail("a complete payload on an open stdin should be answered");
    }
    // A partial one is given up on after the read time limit.
    let mut cmd = w.env.command(HOOK);
    cmd.arg("session-start");
    run_hook_cmd(&w.env, cmd, br#"{"session_id": "s", "cwd": "#, true).silent();
}

#[test]
fn an_unreachable_daemon_that_cannot_be_started_is_logged_and_exits_0_quickly() {
    let env = TestEnv::new();
    let dir = env.git_root(env.dir("code/p"));
    for (event, fixture) in [
        ("session-start", "claude-code-session-start.json"),
        ("stop", "claude-code-stop.json"),
    ] {
        let mut cmd = env.command(HOOK);
        cmd.arg(event).env("BERTH_DAEMON", "/nonexistent/berthd");
        let run = run_hook_cmd(
            &env,
            cmd,
            &payload(fixture, Some(&dir), &session_id()),
            false,
        )
        .silent();
        if run.elapsed > Duration::from_secs(3) {
            run.fail("an unreachable daemon should be given up on quickly");
        }
        if !run.log.contains("berthd did not answer") {
            run.fail("the log should say the daemon did not answer");
        }
    }
    assert!(env.daemon_pids().is_empty(), "no daemon should run");
}

// ---- stop ----------------------------------------------------------------

/// Every stop shape and the client it is recorded as.
const STOPS: &[(&str, &str)] = &[
    ("claude-code-stop.json", "claude-code"),
    ("codex-stop.json", "codex"),
    ("copilot-cli-agent-stop.json", "copilot-cli"),
    ("copilot-cli-pascal-stop.json", "copilot-cli"),
    ("vscode-stop.json", "vscode"),
    ("cursor-stop.json", "cursor"),
];

/// The recorded conversations of `session`: (cwd, client, transcript, workspace).
fn conversations(env: &TestEnv, session: &str) -> Vec<(String, String, String, String)> {
    let db =
        rusqlite::Connection::open_with_flags(env.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the registry read-only");
    let mut q = db
        .prepare(
            "SELECT cwd, client, transcript_path, workspace FROM conversations
             WHERE client_session_id = ?1",
        )
        .expect("query conversations");
    q.query_map([session], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
    .expect("read conversations")
    .map(|r| r.expect("row"))
    .collect()
}

fn set(env: &TestEnv, key: &str, value: &str) {
    let _ = env.run_berth(["setting", "set", key, value]).success();
}

/// Sets a stop command that leaves `<root>/stop-ran` behind if it ever runs; returns that path.
fn trace_stop_command(env: &TestEnv) -> PathBuf {
    let trace = env.root().join("stop-ran");
    #[cfg(unix)]
    let command = format!("touch {}", trace.display());
    #[cfg(windows)]
    let command = format!("type nul > \"{}\"", trace.display());
    set(env, "hooks.stop_command", &command);
    trace
}

/// Writes what the stop command saw into `$OUT`, and says something on
/// both of its output streams.
#[cfg(unix)]
const RECORDING_COMMAND: &str = r#"printf '%s\n' "$BERTH_WORKSPACE" "$BERTH_REASON" "$BERTH_PROJECT" "$PWD" > "$OUT/env"; cat > "$OUT/payload"; echo said-on-stdout; echo said-on-stderr >&2"#;

// sh syntax; the cmd.exe version follows.
#[cfg(unix)]
#[test]
fn the_stop_command_runs_in_the_sessions_workspace_with_the_payload_for_every_client() {
    let w = world();
    set(&w.env, "hooks.stop_command", RECORDING_COMMAND);
    for &(fixture, client) in STOPS {
        let out = w.env.dir(&format!("out/{client}-{}", fixture.len()));
        let id = session_id();
        let bytes = payload(fixture, Some(&w.approved), &id);
        let mut cmd = hook_cmd(&w.env, fixture, Some(&w.approved));
        cmd.arg("stop").env("OUT", &out);
        let run = run_hook_cmd(&w.env, cmd, &bytes, false).silent();
        let seen = std::fs::read_to_string(out.join("env")).unwrap_or_default();
        let a = w.approved.display();
        if seen != format!("w\nproject-file\n{a}\n{a}\n") {
            run.fail(&format!("{fixture}: the stop command saw {seen:?}"));
        }
        if std::fs::read(out.join("payload")).unwrap_or_default() != bytes {
            run.fail(&format!(
                "{fixture}: the stop command did not get the payload"
            ));
        }
        if !run.log.contains("said-on-stdout") || !run.log.contains("said-on-stderr") {
            run.fail("the stop command's output should be in the log");
        }
        // The conversation is recorded for that client and workspace.
        let transcript = serde_json::from_slice::<Value>(&bytes).unwrap();
        let transcript = ["transcript_path", "transcriptPath"]
            .iter()
            .find_map(|k| transcript[*k].as_str())
            .unwrap_or("")
            .to_string();
        let rows = conversations(&w.env, &id);
        let expect = vec![(
            w.approved.display().to_string(),
            client.to_string(),
            transcript,
            "w".to_string(),
        )];
        if rows != expect {
            run.fail(&format!(
                "{fixture}: recorded {rows:?}, expected {expect:?}"
            ));
        }
    }
    let claim = w
        .env
        .json(["claim", "--cwd", &w.approved.display().to_string()]);
    assert_eq!(claim["workspaces"], json!(["w"]), "{claim}");
}

/// Under cmd.exe: the stop command sees the session's workspace, reason and
/// folder (its working directory), and its output streams reach the log.
#[cfg(windows)]
#[test]
fn the_stop_command_runs_under_cmd_in_the_sessions_workspace_for_every_client() {
    let w = world();
    set(
        &w.env,
        "hooks.stop_command",
        r#"echo %BERTH_WORKSPACE%> "%OUT%\env"& echo %BERTH_REASON%>> "%OUT%\env"& cd>> "%OUT%\env"& echo said-on-stdout& echo said-on-stderr 1>&2"#,
    );
    for &(fixture, client) in STOPS {
        let out = w.env.dir(&format!("out/{client}-{}", fixture.len()));
        let id = session_id();
        let bytes = payload(fixture, Some(&w.approved), &id);
        let mut cmd = hook_cmd(&w.env, fixture, Some(&w.approved));
        cmd.arg("stop").env("OUT", &out);
        let run = run_hook_cmd(&w.env, cmd, &bytes, false).silent();
        let seen = std::fs::read_to_string(out.join("env")).unwrap_or_default();
        let lines: Vec<&str> = seen.lines().map(str::trim_end).collect();
        let a = w.approved.display().to_string();
        if lines != ["w", "project-file", a.as_str()] {
            run.fail(&format!("{fixture}: the stop command saw {seen:?}"));
        }
        if !run.log.contains("said-on-stdout") || !run.log.contains("said-on-stderr") {
            run.fail("the stop command's output should be in the log");
        }
        let rows = conversations(&w.env, &id);
        if rows.len() != 1 || rows[0].1 != client || rows[0].3 != "w" {
            run.fail(&format!("{fixture}: recorded {rows:?}"));
        }
    }
}

#[test]
fn a_second_stop_of_the_same_session_records_the_conversation_once() {
    let w = world();
    let id = session_id();
    let bytes = payload("codex-stop.json", Some(&w.unassigned), &id);
    hook(&w.env, &["stop"], &bytes).silent();
    hook(&w.env, &["stop"], &bytes).silent();
    let rows = conversations(&w.env, &id);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, w.unassigned.display().to_string());
    assert_eq!(rows[0].3, "default");
}

#[test]
fn a_stop_without_a_cwd_runs_nothing_and_records_nothing() {
    let w = world();
    let trace = trace_stop_command(&w.env);
    for &(fixture, _) in STOPS {
        let id = session_id();
        hook(&w.env, &["stop"], &payload(fixture, None, &id)).silent();
        assert!(
            !trace.exists(),
            "{fixture}: the stop command ran without a session directory"
        );
        assert!(conversations(&w.env, &id).is_empty(), "{fixture}");
    }
}

// ---- Cursor: workspace roots are not a cwd ----------------------------------

/// A Cursor payload whose `workspace_roots` list `roots`, with `cwd` added
/// when given.
fn cursor_payload(fixture: &str, roots: &[&Path], cwd: Option<&Path>, session: &str) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&payload(fixture, None, session)).unwrap();
    v["workspace_roots"] = json!(roots);
    if let Some(c) = cwd {
        v["cwd"] = json!(c);
    }
    serde_json::to_vec(&v).unwrap()
}

#[test]
fn cursor_without_berth_cwd_says_nothing_and_runs_nothing_even_in_an_approved_root() {
    // docs/reference.md, "Hooks": Cursor's payloads have `workspace_roots` and no `cwd`, and a
    // multi-root window's first folder need not be where the agent works.
    let w = world();
    let trace = trace_stop_command(&w.env);
    let roots = [w.approved.as_path(), w.unassigned.as_path()];
    let id = session_id();
    let run = hook(
        &w.env,
        &["session-start"],
        &cursor_payload("cursor-session-start.json", &roots, None, &id),
    )
    .silent();
    if !run.log.contains("workspace_roots is not one") {
        run.fail("the log should say why nothing was said");
    }
    hook(
        &w.env,
        &["stop"],
        &cursor_payload("cursor-stop.json", &roots, None, &id),
    )
    .silent();
    assert!(!trace.exists(), "the stop command ran in a guessed folder");
    assert!(conversations(&w.env, &id).is_empty());
}

#[test]
fn a_cursor_payload_with_a_cwd_is_read_like_any_other() {
    let w = world();
    // Its roots name another project: the cwd decides, not the first root.
    let roots = [w.unassigned.as_path()];
    let run = hook(
        &w.env,
        &["session-start"],
        &cursor_payload(
            "cursor-session-start.json",
            &roots,
            Some(&w.approved),
            &session_id(),
        ),
    )
    .ok_within(Duration::from_secs(10));
    let c = context(&run, Format::TopSnake);
    if !c.is_some_and(|c| c.contains("uses workspace \"w\"")) {
        run.fail("a Cursor payload's cwd should be the session's directory");
    }
    let id = session_id();
    hook(
        &w.env,
        &["stop"],
        &cursor_payload("cursor-stop.json", &roots, Some(&w.approved), &id),
    )
    .silent();
    let rows = conversations(&w.env, &id);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].3.as_str()),
        (w.approved.to_str().unwrap(), "cursor", "w")
    );
}

#[test]
fn berth_cwd_wins_over_the_payloads_cwd() {
    let w = world();
    let bytes = payload(
        "claude-code-session-start.json",
        Some(&w.unassigned),
        &session_id(),
    );
    let mut cmd = w.env.command(HOOK);
    cmd.arg("session-start").env("BERTH_CWD", &w.approved);
    let run = run_hook_cmd(&w.env, cmd, &bytes, false).ok_within(Duration::from_secs(10));
    let c = context(&run, Format::HookSpecific);
    if !c.is_some_and(|c| c.contains("uses workspace \"w\"")) {
        run.fail("BERTH_CWD should be the session's directory");
    }
}

#[test]
fn a_failing_stop_command_is_logged_and_the_hook_exits_0() {
    let w = world();
    #[cfg(unix)]
    let failing = "echo broken >&2; exit 7";
    #[cfg(windows)]
    let failing = "echo broken>&2& exit 7";
    set(&w.env, "hooks.stop_command", failing);
    let run = hook(
        &w.env,
        &["stop"],
        &payload("claude-code-stop.json", Some(&w.approved), &session_id()),
    )
    .silent();
    if !run.log.contains("stop command failed") || !run.log.contains("broken") {
        run.fail("the failure and its stderr should be in the log");
    }
}

/// Whether `pid` has exited (gone, or a zombie nobody reaps).
#[cfg(unix)]
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|s| s == "Z" || s == "X"),
    }
}

// sh's `$$` and `$!`, and /proc; the cmd.exe version follows.
#[cfg(unix)]
#[test]
fn a_hanging_stop_command_is_stopped_with_its_children_at_its_time_limit() {
    let w = world();
    set(&w.env, "hooks.stop_timeout_secs", "1");
    set(
        &w.env,
        "hooks.stop_command",
        r#"echo $$ > "$OUT/leader"; sleep 60 & echo $! > "$OUT/child"; wait"#,
    );
    let out = w.env.dir("out");
    let mut cmd = w.env.command(HOOK);
    cmd.arg("stop").env("OUT", &out);
    let bytes = payload("claude-code-stop.json", Some(&w.approved), &session_id());
    let run = run_hook_cmd(&w.env, cmd, &bytes, false).silent();
    if run.elapsed < Duration::from_secs(1) || run.elapsed > Duration::from_secs(5) {
        run.fail("expected the hook to wait about the 1 s limit, then stop the command");
    }
    if !run.log.contains("was stopped") {
        run.fail("the timeout should be in the log");
    }
    for name in ["leader", "child"] {
        let pid: u32 = std::fs::read_to_string(out.join(name))
            .unwrap_or_default()
            .trim()
            .parse()
            .unwrap_or_else(|_| run.fail(&format!("no {name} pid written")));
        let gone = berth_tests::wait_until(Duration::from_secs(5), || {
            exited(pid).then_some(()).ok_or(())
        });
        if gone.is_err() {
            run.fail(&format!("the stop command's {name} (pid {pid}) still runs"));
        }
    }
}

/// Under cmd.exe a command that never ends is stopped at its time limit.
#[cfg(windows)]
#[test]
fn a_hanging_stop_command_under_cmd_is_stopped_at_its_time_limit() {
    let w = world();
    set(&w.env, "hooks.stop_timeout_secs", "1");
    // A `for /l` with a step of 0 never ends.
    set(&w.env, "hooks.stop_command", "for /l %i in (0,0,1) do @rem");
    let bytes = payload("claude-code-stop.json", Some(&w.approved), &session_id());
    let run = hook(&w.env, &["stop"], &bytes).silent();
    if run.elapsed < Duration::from_secs(1) || run.elapsed > Duration::from_secs(5) {
        run.fail("expected the hook to wait about the 1 s limit, then stop the command");
    }
    if !run.log.contains("was stopped") {
        run.fail("the timeout should be in the log");
    }
}
