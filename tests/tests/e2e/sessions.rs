//! `berth sessions [--all] [--json]`: the live agent sessions, and with
//! `--all` those ended within the grace period (docs/reference.md,
//! "berth sessions").

use std::time::Duration;

use berth_proto::pb;
use berth_tests::{TestEnv, wait_until};
use serde_json::{Value, json};

/// A session's stream and the connection it runs on: dropping both ends the
/// session, as a shim's exit does.
type Held = (
    tonic::Streaming<pb::SessionEvent>,
    berth_client::client::Connection,
);

/// Registers an agent session in `cwd` the way `berth-mcp` does, and gives
/// its id and what holds it open.
async fn open(env: &TestEnv, cwd: &std::path::Path, client: &str) -> (String, Held) {
    let mut conn = env.connect().await;
    let req = pb::OpenSessionRequest {
        caller: Some(pb::Caller {
            cwd: cwd.display().to_string(),
            ..Default::default()
        }),
        client_name: client.into(),
        client_version: "1.2.3".into(),
        client_session_id: format!("{client}-own-id"),
        pid: std::process::id(),
        ..Default::default()
    };
    let (first, events) = berth_tests::open_session(&mut conn, req).await;
    let id = first.session_id;
    (id, (events, conn))
}

/// Calls a tool in a session.
async fn tool(env: &TestEnv, session: &str, tool: &str, args: Value) -> pb::CallToolReply {
    let mut conn = env.connect().await;
    let req = pb::CallToolRequest {
        session_id: session.into(),
        tool: tool.into(),
        arguments_json: args.to_string(),
    };
    conn.call(|mut c| {
        let r = req.clone();
        async move { c.call_tool(r).await }
    })
    .await
    .expect("call the tool")
}

fn ids(doc: &Value) -> Vec<String> {
    doc["sessions"]
        .as_array()
        .expect("sessions is a list")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_sessions_are_listed_and_ended_ones_only_with_all() {
    let env = TestEnv::new();
    let shop = env.git_root(env.dir("shop"));
    env.json_in(&shop, ["workspace", "use", "shop"]);
    let plain = env.dir("plain");
    let (live, _held) = open(&env, &shop, "claude-code").await;
    let (ended, stream) = open(&env, &plain, "cline").await;
    // The projectless session gets its scratch folder on its first write.
    let wrote = tool(
        &env,
        &ended,
        "write",
        json!({"path": "note.txt", "content": "x"}),
    )
    .await;
    assert!(!wrote.is_error, "{}", wrote.text);
    let doc = env.json(["sessions"]);
    assert_eq!(ids(&doc), [live.clone(), ended.clone()]);
    let scratch = env.data_dir().join("scratch").join(&ended);
    assert_eq!(doc["sessions"][1]["scratch"], json!(scratch));

    drop(stream);
    wait_until(Duration::from_secs(10), || {
        let doc = env.json(["sessions"]);
        if ids(&doc) == [live.clone()] {
            Ok(doc)
        } else {
            Err(doc)
        }
    })
    .unwrap_or_else(|doc| panic!("the ended session is still listed as live: {doc}"));

    let doc = env.json(["sessions", "--all"]);
    assert_eq!(doc["keep_hours"], 24);
    assert_eq!(ids(&doc), [live.clone(), ended.clone()]);
    let (l, e) = (&doc["sessions"][0], &doc["sessions"][1]);
    assert_eq!(l["state"], "live");
    assert_eq!(l["connected"], true);
    assert_eq!(l["client"], "claude-code");
    assert_eq!(l["client_version"], "1.2.3");
    assert_eq!(l["client_session_id"], "claude-code-own-id");
    assert_eq!(l["pid"], json!(std::process::id()));
    assert_eq!(l["directory"], json!(shop));
    assert_eq!(l["workspace"], "shop");
    assert_eq!(l["reason"], "project-file");
    assert_eq!(l["project"], json!(shop));
    assert_eq!(l["ended_at"], Value::Null);
    assert_eq!(l["scratch"], Value::Null);
    for key in ["started_at", "pinned_at"] {
        let t = l[key].as_str().unwrap_or_else(|| panic!("{key} in {l}"));
        assert!(t.ends_with('Z') && t.contains('T'), "{key}: {t}");
    }
    assert_eq!(e["state"], "ended");
    assert_eq!(e["connected"], false);
    assert_eq!(e["workspace"], "default");
    assert_eq!(e["reason"], "active");
    assert_eq!(e["project"], Value::Null);
    assert!(e["ended_at"].is_string(), "{e}");
    // An ended session's folder is kept for the grace period, and shown.
    assert_eq!(e["scratch"], json!(scratch));

    // Text: one block per session, the fields as `key: value` lines.
    let text = env.run_berth(["sessions", "--all"]).success().stdout();
    assert!(
        text.contains(&format!("{live}  live  claude-code 1.2.3")),
        "{text}"
    );
    assert!(text.contains(&format!("{ended}  ended ")), "{text}");
    assert!(
        text.contains(&format!("  directory: {}\n", shop.display())),
        "{text}"
    );
    assert!(
        text.contains("  workspace: shop (project-file)\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("  scratch: {}\n", scratch.display())),
        "{text}"
    );
}

/// A session re-pinned by its own `use_workspace` shows the new pin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repinned_session_shows_its_new_workspace() {
    let env = TestEnv::new();
    let proj = env.git_root(env.dir("proj"));
    let _ = env.json(["workspace", "list"]);
    let (id, _held) = open(&env, &proj, "codex").await;
    let before = env.json(["sessions"]);
    assert_eq!(before["sessions"][0]["reason"], "active");
    let used = tool(&env, &id, "use_workspace", json!({"name": "proj"})).await;
    assert!(!used.is_error, "{}", used.text);
    let after = env.json(["sessions"]);
    assert_eq!(after["sessions"][0]["workspace"], "proj");
    assert_eq!(after["sessions"][0]["reason"], "project-file");
}

#[test]
fn no_sessions_say_so_and_bad_flags_are_usage_errors() {
    let env = TestEnv::new();
    let out = env.run_berth(["sessions"]).success().stdout();
    assert!(out.contains("no live sessions"), "{out}");
    let out = env.run_berth(["sessions", "--all"]).success().stdout();
    assert!(
        out.contains("no sessions live or ended in the last 24 h"),
        "{out}"
    );
    assert_eq!(
        env.json(["sessions"]),
        json!({"keep_hours": 24, "sessions": []})
    );
    let _ = env.run_berth(["sessions", "--bogus"]).failure(2);
}
