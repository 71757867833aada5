//! The session-start context of a session without a project names its
//! scratch folder and says it is temporary, as the MCP session does.

use berth_proto::pb;
use berth_tests::{TestEnv, bin};
use serde_json::{Value, json};

/// The session-start hook's context for a session in `cwd`.
fn session_start(env: &TestEnv, cwd: &std::path::Path, session: &str) -> String {
    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("session-start");
    let payload = json!({
        "session_id": session,
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let out = env
        .run_with_stdin(cmd, payload.to_string().as_bytes())
        .success()
        .stdout();
    let doc: Value = serde_json::from_str(&out).expect("one JSON document");
    doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no additionalContext in {doc}"))
        .to_string()
}

#[test]
fn a_projectless_session_start_names_the_scratch_folder_and_says_it_is_temporary() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    env.json(["setting", "set", "scratch.keep_hours", "5"]);
    let context = session_start(&env, &plain, "s-plain");
    let folder = format!(
        "{}{}",
        env.data_dir().join("scratch").display(),
        std::path::MAIN_SEPARATOR
    );
    assert!(
        context.contains(&format!(
            "its own folder is a scratch folder of its own in {folder}, a temporary folder"
        )),
        "{context}"
    );
    assert!(
        context.contains("deleted 5 hours after the session ends"),
        "{context}"
    );
    assert!(context.contains("<workspace>/<path>"), "{context}");

    // A session with a project has a workspace's folder: no scratch line.
    let proj = env.git_root(env.dir("proj"));
    env.json_in(&proj, ["workspace", "use", "w"]);
    let context = session_start(&env, &proj, "s-proj");
    assert!(!context.contains("scratch"), "{context}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_session_of_the_same_client_session_is_named_exactly() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let _ = env.json(["workspace", "list"]);
    let mut conn = env.connect().await;
    let req = pb::OpenSessionRequest {
        caller: Some(pb::Caller {
            cwd: plain.display().to_string(),
            ..Default::default()
        }),
        client_name: "scratch-context".into(),
        client_session_id: "s-linked".into(),
        ..Default::default()
    };
    let (first, _events) = berth_tests::open_session(&mut conn, req).await;
    let id = first.session_id;
    // The MCP session registered first; the hook finds it by the client's id.
    let context = session_start(&env, &plain, "s-linked");
    let folder = env.data_dir().join("scratch").join(&id);
    assert!(
        context.contains(&format!(
            "its own folder is its scratch folder {}, a temporary folder",
            folder.display()
        )),
        "{context}"
    );
    assert!(context.contains("deleted 24 hours after"), "{context}");
}
