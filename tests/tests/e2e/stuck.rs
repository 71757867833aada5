//! No file can wedge the daemon, and stop means stopped.
//!
//! A FIFO in a workspace's folder used to leave a thread blocked in open()
//! for good on every `read` or `search` that met it; enough of them starved
//! the daemon, and `daemon stop` then left a process running with the
//! database open. See docs/decisions/0015-stop-means-stopped.md.

use std::path::Path;
use std::time::{Duration, Instant};

use berth_proto::client::Connection;
use berth_proto::pb;
use berth_tests::TestEnv;
use serde_json::{Value, json};

/// A refusal of a special file is immediate; this only bounds a broken run.
const QUICK: Duration = Duration::from_secs(3);

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

async fn connect(env: &TestEnv) -> Connection {
    let ctx = berth_proto::paths::EnvCtx {
        berth_socket: Some(env.socket().into()),
        uid: berth_proto::paths::current_uid(),
        ..Default::default()
    };
    Connection::open_existing(&ctx)
        .await
        .expect("connect")
        .expect("a daemon runs")
}

/// Opens an MCP session in the user's home (no project: qualified paths).
async fn session(env: &TestEnv, conn: &mut Connection) -> String {
    let open = pb::OpenSessionRequest {
        caller: Some(pb::Caller {
            cwd: env.home().display().to_string(),
            ..Default::default()
        }),
        client_name: "stuck".into(),
        ..Default::default()
    };
    let mut stream = conn
        .call(|mut c| {
            let r = open.clone();
            async move { c.open_session(r).await }
        })
        .await
        .expect("open a session");
    let first = stream.message().await.expect("first event").expect("event");
    // Keep the stream open for the session's life.
    tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
    first.session_id
}

async fn tool(conn: &mut Connection, session: &str, tool: &str, args: Value) -> pb::CallToolReply {
    let req = pb::CallToolRequest {
        session_id: session.to_string(),
        tool: tool.to_string(),
        arguments_json: args.to_string(),
    };
    conn.call(|mut c| {
        let r = req.clone();
        async move { c.call_tool(r).await }
    })
    .await
    .unwrap_or_else(|e| panic!("{tool}: the daemon did not answer: {e}"))
}

/// A workspace `app` whose home holds `notes.md` (with a needle) and the
/// FIFOs `pipe0..pipe{fifos}`.
fn app_with_fifos(env: &TestEnv, fifos: usize) {
    let _ = env.run_berth(["workspace", "create", "app"]).success();
    let home = env.managed_home("app");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("notes.md"), "one\na needle here\n").unwrap();
    for i in 0..fifos {
        mkfifo(&home.join(format!("pipe{i}")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_not_a_regular_file_for_read_and_edit_and_search_skips_it() {
    let env = TestEnv::new();
    app_with_fifos(&env, 1);
    let mut conn = connect(&env).await;
    let id = session(&env, &mut conn).await;
    for (name, args) in [
        ("read", json!({"path": "app/pipe0"})),
        ("edit", json!({"path": "app/pipe0", "old": "a", "new": "b"})),
    ] {
        let started = Instant::now();
        let reply = tokio::time::timeout(QUICK, tool(&mut conn, &id, name, args))
            .await
            .unwrap_or_else(|_| panic!("{name} of a FIFO blocked"));
        assert!(reply.is_error, "{name}: {}", reply.text);
        assert!(
            reply.text.contains("not a regular file"),
            "{name}: {}",
            reply.text
        );
        let structured: Value = serde_json::from_str(&reply.structured_json).unwrap();
        assert_eq!(
            structured["code"], "not-regular-file",
            "{name}: {structured}"
        );
        assert!(
            started.elapsed() < QUICK,
            "{name} took {:?}",
            started.elapsed()
        );
    }
    let reply = tokio::time::timeout(
        QUICK,
        tool(
            &mut conn,
            &id,
            "search",
            json!({"query": "needle", "path": "app/"}),
        ),
    )
    .await
    .expect("search over a folder with a FIFO blocked");
    assert!(!reply.is_error, "{}", reply.text);
    let structured: Value = serde_json::from_str(&reply.structured_json).unwrap();
    assert_eq!(
        structured["matches"][0]["path"], "app/notes.md",
        "{structured}"
    );
    assert_eq!(structured["matches"].as_array().unwrap().len(), 1);
}
