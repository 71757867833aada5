//! A live session belongs to its process (ADR 0039): another client of the same user, a
//! hostile agent say, that knows a running `berth-mcp`'s session id (`berth sessions` lists it)
//! can neither register it again with another pin nor call its tools, even claiming the
//! shim's pid; the shim's later writes still land in its own workspace. Once the shim has
//! exited, the id may be registered again by anyone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_client::client::{ClientError, Connection};
use berth_proto::pb;
use berth_tests::mcp::McpSession;
use berth_tests::{TestEnv, bin, wait_until};
use berth_vocab::codes::Code;
use serde_json::{Value, json};

/// A project approved for workspace `mine`, a second workspace `theirs`, and a `berth-mcp`
/// session in the project, registered (it has written `first.md`). Gives the project, the
/// shim, its session id and its pid as `berth sessions` shows them.
fn a_running_session(env: &TestEnv) -> (PathBuf, McpSession, String) {
    let mine = env.git_root(env.dir("mine"));
    env.json_in(&mine, ["workspace", "use", "mine"]);
    let _ = env.json(["workspace", "create", "theirs"]);
    let mut cmd = env.command(bin("berth-mcp"));
    cmd.current_dir(&mine);
    let (mut shim, _) = McpSession::start(cmd);
    let wrote = write(&mut shim, "./first.md");
    assert!(
        env.managed_home("mine").join("first.md").is_file(),
        "{wrote}"
    );
    let listed = env.json(["sessions"]);
    let s = &listed["sessions"][0];
    assert_eq!(s["workspace"], "mine", "{listed}");
    assert_eq!(s["pid"], json!(shim.pid()), "{listed}");
    let id = s["id"].as_str().expect("an id").to_string();
    (mine, shim, id)
}

/// The shim's `write` of `path`; its answer must not be an error.
fn write(shim: &mut McpSession, path: &str) -> String {
    let said = shim.call(
        &json!({"name": "write", "arguments": {"path": path, "content": "mine"}}).to_string(),
    );
    assert!(!said.contains(r#""isError":true"#), "{said}");
    said
}

/// `OpenSession` for `id` pinned to `workspace`, claiming to come from pid `claimed`.
fn register_again(cwd: &Path, id: &str, workspace: &str, claimed: u32) -> pb::OpenSessionRequest {
    pb::OpenSessionRequest {
        caller: Some(pb::Caller {
            cwd: cwd.display().to_string(),
            ..Default::default()
        }),
        client_name: "hostile".into(),
        session_id: id.into(),
        pin: Some(pb::Resolution {
            workspace: workspace.into(),
            reason: "argument".into(),
            directory: cwd.display().to_string(),
            ..Default::default()
        }),
        pid: claimed,
        ..Default::default()
    }
}

async fn open(
    conn: &mut Connection,
    req: &pb::OpenSessionRequest,
) -> Result<tonic::Streaming<pb::SessionEvent>, ClientError> {
    conn.call(|mut c| {
        let r = req.clone();
        async move { c.open_session(r).await }
    })
    .await
}

/// The refusal of `r`, which must carry the code `session-owned` and name both processes.
fn owned<T: std::fmt::Debug>(what: &str, r: Result<T, ClientError>, owner: u32) -> String {
    let e = match r {
        Err(e) => e,
        Ok(v) => panic!("{what}: expected session-owned, was accepted: {v:?}"),
    };
    assert_eq!(e.code(), Some(Code::SessionOwned), "{what}: {e}");
    let msg = e.to_string();
    for part in [
        format!("process {owner}"),
        format!("process {}", std::process::id()),
    ] {
        assert!(msg.contains(&part), "{what}: {part:?} missing from {msg}");
    }
    msg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_cannot_take_a_live_session_and_its_writes_stay_home() {
    let env = TestEnv::new();
    let (mine, mut shim, id) = a_running_session(&env);
    let shim_pid = shim.pid();
    let mut conn = env.connect().await;

    // Registering the live id with another pin, claiming to be the shim.
    let hijack = register_again(&mine, &id, "theirs", shim_pid);
    owned("re-registering", open(&mut conn, &hijack).await, shim_pid);
    // Its own use_workspace, called from another process (which would also rewrite the
    // project file).
    let project_file = std::fs::read(mine.join(".berth").join("workspace.json")).unwrap();
    let repin = pb::CallToolRequest {
        session_id: id.clone(),
        tool: "use_workspace".into(),
        arguments_json: json!({"name": "theirs", "allow_overlap": true}).to_string(),
    };
    let called = conn
        .call(|mut c| {
            let r = repin.clone();
            async move { c.call_tool(r).await }
        })
        .await;
    owned("calling a tool", called, shim_pid);
    assert_eq!(
        std::fs::read(mine.join(".berth").join("workspace.json")).unwrap(),
        project_file
    );

    write(&mut shim, "./note.md");
    assert!(env.managed_home("mine").join("note.md").is_file());
    assert!(!env.managed_home("theirs").join("note.md").exists());
    let listed = env.json(["sessions"]);
    assert_eq!(listed["sessions"][0]["workspace"], "mine", "{listed}");
    assert_eq!(listed["sessions"][0]["pid"], json!(shim_pid), "{listed}");

    // Once the shim has exited, its session may be registered again, by any process; the pid
    // recorded is the kernel's, not the one the request claims.
    shim.exit();
    wait_until(Duration::from_secs(10), || {
        let listed = env.json(["sessions"]);
        if listed["sessions"] == json!([]) {
            Ok(())
        } else {
            Err(listed)
        }
    })
    .unwrap_or_else(|l| panic!("the shim's session is still live: {l}"));
    let mut events = open(&mut conn, &hijack)
        .await
        .expect("an ended session's id may be registered again");
    let first = events
        .message()
        .await
        .expect("the first event")
        .expect("a first event before the stream ends");
    assert_eq!(first.session_id, id);
    assert_eq!(first.resolution.unwrap().workspace, "theirs");
    let listed = env.json(["sessions"]);
    let s: &Value = &listed["sessions"][0];
    assert_eq!(s["id"], json!(id), "{listed}");
    assert_eq!(s["pid"], json!(std::process::id()), "{listed}");
}

/// Stopping the daemon ends every stream; the new daemon knows the session only from the store.
/// While the shim runs, its session is still its own: another process's registration of the id
/// is refused, and the shim registers it again itself on its next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_daemon_restart_a_running_shims_session_is_still_its_own() {
    let env = TestEnv::new();
    let (mine, mut shim, id) = a_running_session(&env);
    let shim_pid = shim.pid();
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(Duration::from_secs(10));
    let _ = env.run_berth(["daemon", "start"]).success();
    let mut conn = env.connect().await;

    let hijack = register_again(&mine, &id, "theirs", shim_pid);
    let msg = owned(
        "re-registering after a restart",
        open(&mut conn, &hijack).await,
        shim_pid,
    );
    assert!(msg.contains("still runs"), "{msg}");

    write(&mut shim, "./note.md");
    assert!(env.managed_home("mine").join("note.md").is_file());
    assert!(!env.managed_home("theirs").join("note.md").exists());
    let listed = env.json(["sessions"]);
    let s = &listed["sessions"][0];
    assert_eq!(s["id"], json!(id), "{listed}");
    assert_eq!(s["workspace"], "mine", "{listed}");
    assert_eq!(s["pid"], json!(shim_pid), "{listed}");
}
