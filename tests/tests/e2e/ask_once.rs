//! One question per client session when no session id links the hook and the MCP server, as
//! in Codex, which gives its servers none: the session-start hook (run through `sh -c`) and
//! `berth-mcp` of one client process in one folder are linked by that process (ADR 0046). Here
//! the test process plays the client, like Codex starting both itself; `fake-client` plays
//! another one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_tests::mcp::McpSession;
use berth_tests::{TestEnv, bin, wait_until};
use serde_json::{Value, json};

/// A phrase of the ask-once notice.
const NOTICE: &str = "Ask the user once which workspace this project should use";

/// A project nothing assigns, so a session there must ask once.
fn unassigned(env: &TestEnv, rel: &str) -> PathBuf {
    let dir = env.git_root(env.dir(rel));
    // Started by a command that exits, as a client's first hook or server would start it.
    env.json(["workspace", "list"]);
    dir
}

/// A Codex session-start payload (its schema's fields), with Codex's session id or none.
fn codex_payload(dir: &Path, session_id: Option<&str>) -> Vec<u8> {
    let mut p = json!({
        "transcript_path": dir.join("rollout.jsonl"),
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "model": "gpt-5.5",
        "permission_mode": "default",
        "source": "startup",
    });
    if let Some(id) = session_id {
        p["session_id"] = json!(id);
    }
    p.to_string().into_bytes()
}

/// The hook's command line as Codex runs it: through `sh -c`, which does not exec it here.
fn through_sh(env: &TestEnv) -> std::process::Command {
    let mut cmd = env.command("sh");
    cmd.args(["-c", r#""$0" session-start --client codex; exit $?"#])
        .arg(bin("berth-hook"));
    cmd
}

/// The context `cmd` (a session-start hook) printed for `payload`.
fn context_of(env: &TestEnv, cmd: std::process::Command, payload: &[u8]) -> String {
    let out = env.run_with_stdin(cmd, payload).success().stdout();
    context_in(&out)
}

fn context_in(out: &str) -> String {
    let doc: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no additionalContext in {doc}"))
        .to_string()
}

/// `berth-mcp` started in `dir` by this process, as Codex starts it: no session id.
fn server(env: &TestEnv, dir: &Path) -> McpSession {
    let mut cmd = env.command(bin("berth-mcp"));
    cmd.current_dir(dir);
    McpSession::start(cmd).0
}

/// Waits until the daemon holds a live session in `dir`.
fn registered(env: &TestEnv, dir: &Path) {
    let dir = dir.display().to_string();
    wait_until(Duration::from_secs(30), || {
        let listed = env.json(["sessions"]);
        let live = listed["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["connected"] == true && s["directory"] == dir.as_str());
        live.then_some(()).ok_or(listed)
    })
    .unwrap_or_else(|listed| panic!("no live session in {dir}: {listed}"));
}

/// The notice of the session's `device_context` result, from its structured content (all a
/// Codex model sees of it); `None` when it carries none.
fn notice_of_first_result(shim: &mut McpSession) -> Option<String> {
    let said = shim.call(r#"{"name":"device_context","arguments":{}}"#);
    let answer: Value = serde_json::from_str(said.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {said}"));
    let structured = &answer["result"]["structuredContent"];
    assert!(structured["workspace"].is_string(), "not a result: {said}");
    structured["notice"].as_str().map(str::to_string)
}

fn assert_asks(context: &str, what: &str) {
    assert!(context.contains(NOTICE), "{what} should ask: {context}");
}

fn assert_plain(context: &str, what: &str) {
    assert!(
        !context.contains(NOTICE) && context.starts_with("berth: this session uses workspace"),
        "{what} should not ask again: {context}"
    );
}

/// Codex as measured (ADR 0046): the server registers, then the session-start hook runs, then
/// the model's first call. The hook asks; the result does not ask again. Also with the hook
/// first, and with Codex's own session id in the payload, which its server never sees.
#[test]
fn a_codex_shaped_pair_is_asked_once_by_the_hook() {
    let env = TestEnv::new();
    for (n, (hook_first, id)) in [
        (false, None),
        (true, None),
        (false, Some("019af1d2-codex")),
        (true, Some("019af1d3-codex")),
    ]
    .into_iter()
    .enumerate()
    {
        let what = format!("hook first: {hook_first}, session id: {id:?}");
        let dir = unassigned(&env, &format!("p{n}"));
        let payload = codex_payload(&dir, id);
        let (context, mut shim) = if hook_first {
            let context = context_of(&env, through_sh(&env), &payload);
            (context, server(&env, &dir))
        } else {
            let shim = server(&env, &dir);
            registered(&env, &dir);
            (context_of(&env, through_sh(&env), &payload), shim)
        };
        assert_asks(&context, &format!("the hook ({what})"));
        assert_eq!(
            notice_of_first_result(&mut shim),
            None,
            "asked twice ({what})"
        );
        shim.exit();
    }
}

/// The other order: the server's first result asked before the hook ran, so the hook gives
/// the plain line.
#[test]
fn a_first_result_that_asked_leaves_the_hook_the_plain_line() {
    let env = TestEnv::new();
    let dir = unassigned(&env, "proj");
    let mut shim = server(&env, &dir);
    let notice = notice_of_first_result(&mut shim);
    assert!(
        notice.as_deref().is_some_and(|n| n.contains(NOTICE)),
        "{notice:?}"
    );
    let context = context_of(&env, through_sh(&env), &codex_payload(&dir, None));
    assert_plain(&context, "the hook after the first result");
    shim.exit();
}

/// One client process with a session in each of two folders: each hook links to the server
/// of its own folder only, so each session is asked exactly once.
#[test]
fn two_sessions_of_one_client_in_two_folders_are_asked_each_once() {
    let env = TestEnv::new();
    let (a, b) = (unassigned(&env, "a"), unassigned(&env, "b"));
    // b's server is the older one, which a's hook must still not take for its own.
    let mut shim_b = server(&env, &b);
    registered(&env, &b);
    let mut shim_a = server(&env, &a);
    registered(&env, &a);
    assert_asks(
        &context_of(&env, through_sh(&env), &codex_payload(&a, None)),
        "a's hook",
    );
    let b_first = notice_of_first_result(&mut shim_b);
    assert!(
        b_first.is_some(),
        "b's server was taken for a's hook's session"
    );
    assert_eq!(notice_of_first_result(&mut shim_a), None, "a asked twice");
    assert_plain(
        &context_of(&env, through_sh(&env), &codex_payload(&b, None)),
        "b's hook after b's first result",
    );
    shim_a.exit();
    shim_b.exit();
}

/// Hooks of other processes in the server's folder are other sessions: one run by another
/// client (`fake-client`), and one whose shell exited before it called, so that it belongs to
/// whatever adopted it. Each asks; the server's own client's hook then asks once for it.
#[cfg(unix)]
#[test]
fn hooks_of_another_client_or_of_none_are_not_linked() {
    let env = TestEnv::new();
    let dir = unassigned(&env, "proj");
    let mut shim = server(&env, &dir);
    registered(&env, &dir);
    let payload = codex_payload(&dir, None);

    let mut other = env.command(bin("fake-client"));
    other
        .args(["sh", "-c", r#""$0" session-start --client codex; exit $?"#])
        .arg(bin("berth-hook"));
    assert_asks(&context_of(&env, other, &payload), "another client's hook");
    assert_asks(&orphaned_hook(&env, &payload), "an orphaned hook");

    assert_asks(
        &context_of(&env, through_sh(&env), &payload),
        "the server's own client's hook",
    );
    assert_eq!(notice_of_first_result(&mut shim), None, "asked twice");
    shim.exit();
}

/// The context of a session-start hook whose shell has exited before the hook reads its
/// payload (from a FIFO written only then) and calls the daemon.
#[cfg(unix)]
fn orphaned_hook(env: &TestEnv, payload: &[u8]) -> String {
    use std::io::Write as _;
    use std::os::unix::ffi::OsStrExt as _;
    let fifo = env.root().join("orphan.fifo");
    let out = env.root().join("orphan.out");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let mut sh = env.command("sh");
    // Its output goes to the file before the hook waits on the FIFO, so no pipe stays open.
    sh.args([
        "-c",
        r#"exec >"$2" 2>/dev/null; "$0" session-start --client codex <"$1" &"#,
    ])
    .arg(bin("berth-hook"))
    .arg(&fifo)
    .arg(&out);
    let _ = env.run(sh).success();
    // The shell has exited: only now does the hook get its payload.
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the FIFO");
    w.write_all(payload).expect("write the payload");
    drop(w);
    let said = wait_until(Duration::from_secs(30), || {
        let s = std::fs::read_to_string(&out).unwrap_or_default();
        s.ends_with('\n').then_some(s.clone()).ok_or(s)
    })
    .unwrap_or_else(|s| panic!("the orphaned hook said {s:?}"));
    context_in(&said)
}

/// A session without a project: the hook of the server's own client names the server's exact
/// scratch folder, as a client session id lets Claude Code's hook do.
#[test]
fn the_linked_hook_of_a_projectless_session_names_its_scratch_folder() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    env.json(["workspace", "list"]);
    let shim = server(&env, &plain);
    registered(&env, &plain);
    let listed = env.json(["sessions"]);
    let id = listed["sessions"][0]["id"]
        .as_str()
        .expect("an id")
        .to_string();
    let context = context_of(&env, through_sh(&env), &codex_payload(&plain, None));
    let folder = env.data_dir().join("scratch").join(&id);
    assert!(
        context.contains(&format!(
            "its scratch folder {}, a temporary folder",
            folder.display()
        )),
        "{context}"
    );
    shim.exit();
}
