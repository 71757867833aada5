//! Whole outputs under test: what a person reads from `explain`, `resolve`, `sessions`,
//! `doctor`, the errors with their hints, and `--help`, kept as `insta` snapshots
//! (`e2e/snapshots/`). A change to any of them shows as a diff to review
//! (`cargo insta review`, or `INSTA_UPDATE=always` and `git diff`), never as a silent pass.
//!
//! The test's own folder becomes `[ROOT]`, and what changes from run to run (versions, times,
//! process ids, session ids) is replaced by a named placeholder.

use berth_tests::mcp::McpSession;
use berth_tests::{Run, TestEnv, bin};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

/// The placeholders for what moves between runs, on top of the test's root.
fn settings(env: &TestEnv) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(false);
    s.add_filter(&regex_escape(&env.root().display().to_string()), "[ROOT]");
    s.add_filter(
        r"berth(d|-mcp|-hook)? \d+\.\d+\.\d+\S*",
        "berth$1 [VERSION]",
    );
    s.add_filter(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b", "[TIME]");
    s.add_filter(r"\bpid \d+\b", "pid [PID]");
    s.add_filter(r"\b[0-9a-f]{16}\b", "[SESSION]");
    s.add_filter(r"\b\d+ (s|min|h|days) ago\b", "[AGO]");
    // doctor's readings of this machine: file modes set by the umask, the inotify budget.
    s.add_filter(r"\(0[0-7]{3}\)", "([MODE])");
    s.add_filter(
        r"hold \d+ of the \d+ allowed",
        "hold [N] of the [MAX] allowed",
    );
    s.add_filter(r"are both \d+\.\d+\.\d+\S*", "are both [VERSION]");
    s
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// stdout and stderr of a run, as a person sees them, with the exit code.
fn seen(run: &Run) -> String {
    let code = run
        .output
        .status
        .code()
        .map_or("signal".into(), |c| c.to_string());
    format!(
        "exit {code}\n--- stdout\n{}--- stderr\n{}",
        run.stdout(),
        String::from_utf8_lossy(&run.output.stderr)
    )
}

/// A project approved for `app` through its project file, and a folder in it.
fn approved_project(env: &TestEnv) -> std::path::PathBuf {
    let repo = env.git_root(env.dir("src/shop"));
    env.json_in(&repo, ["workspace", "use", "app"]);
    env.dir("src/shop/lib/deep")
}

#[test]
fn explain_draws_the_walk_and_the_rule_that_decided() {
    let env = TestEnv::new();
    let dir = approved_project(&env);
    let run = env.run_in(&dir, ["explain"]);
    settings(&env).bind(|| insta::assert_snapshot!("explain", seen(&run)));
}

#[test]
fn explain_of_a_proposal_this_device_never_approved() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("clone"));
    std::fs::create_dir_all(repo.join(".berth")).unwrap();
    std::fs::write(
        repo.join(".berth/workspace.json"),
        r#"{"workspace": "theirs"}"#,
    )
    .unwrap();
    let run = env.run_in(&repo, ["explain"]);
    settings(&env).bind(|| insta::assert_snapshot!("explain_proposal", seen(&run)));
}

#[test]
fn resolve_says_the_workspace_and_why() {
    let env = TestEnv::new();
    let dir = approved_project(&env);
    let run = env.run_in(&dir, ["resolve"]);
    settings(&env).bind(|| insta::assert_snapshot!("resolve", seen(&run)));
}

#[test]
fn errors_carry_their_hints() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "a"]);
    env.json(["workspace", "create", "b"]);
    let proj = env.dir("proj");
    let sub = env.dir("proj/sub");
    env.json(["root", "add", "a", proj.to_str().unwrap()]);
    let mut all = String::new();
    let mut show = |dir: &std::path::Path, args: &[&str]| {
        all.push_str(&format!(
            "$ berth {}\n{}\n",
            args.join(" "),
            seen(&env.run_in(dir, args))
        ));
    };
    let home = env.home();
    show(&home, &["workspace", "delete", "default"]);
    show(&home, &["root", "add", "nosuch", "/"]);
    show(&home, &["root", "add", "b", sub.to_str().unwrap()]);
    show(&home, &["workspace", "use", "a"]);
    show(&home, &["workspace", "create", "Not Valid"]);
    show(&home, &["setting", "get", "no.such.key"]);
    show(&home, &["setting", "set", "guard.cross_workspace", "maybe"]);
    show(&home, &["workspace", "show", "ghost"]);
    settings(&env).bind(|| insta::assert_snapshot!("errors", all));
}

#[test]
fn help_lists_every_command() {
    let env = TestEnv::new();
    let mut all = String::new();
    for args in [
        vec!["--help"],
        vec!["workspace", "--help"],
        vec!["exec", "--help"],
    ] {
        all.push_str(&format!(
            "$ berth {}\n{}\n",
            args.join(" "),
            seen(&env.run_berth(&args))
        ));
    }
    settings(&env).bind(|| insta::assert_snapshot!("help", all));
}

#[test]
fn sessions_lists_a_live_session_with_its_folder_and_workspace() {
    let env = TestEnv::new();
    let dir = approved_project(&env);
    let payload = json!({
        "session_id": "snapshot-session-1",
        "transcript_path": dir.join("t.jsonl"),
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let mut hook = env.command(bin("berth-hook"));
    hook.args(["session-start", "--client", "claude-code"]);
    let _ = env
        .run_with_stdin(hook, payload.to_string().as_bytes())
        .success();
    // An MCP session, registered before its first tool call is answered.
    let mut mcp = env.command(bin("berth-mcp"));
    mcp.current_dir(&dir);
    let (mut session, _) = McpSession::start(mcp);
    session.call(r#"{"name":"device_context","arguments":{}}"#);
    let run = env.run_berth(["sessions", "--all"]);
    session.exit();
    settings(&env).bind(|| insta::assert_snapshot!("sessions", seen(&run)));
}

#[test]
fn doctor_on_a_fresh_device() {
    let env = TestEnv::new();
    // Started by the first command, as a user's first call would.
    env.json(["workspace", "list"]);
    // One problem, the same on every machine whatever its umask: a data folder others may list.
    std::fs::set_permissions(env.data_dir(), std::fs::Permissions::from_mode(0o750)).unwrap();
    let run = env.run_berth(["doctor"]);
    settings(&env).bind(|| insta::assert_snapshot!("doctor", seen(&run)));
}
