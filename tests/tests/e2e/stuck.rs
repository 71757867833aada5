//! No file can wedge the daemon, and stop means stopped.
//!
//! A FIFO in a workspace's folder used to leave a thread blocked in open()
//! for good on every `read` or `search` that met it; enough of them starved
//! the daemon, and `daemon stop` then left a process running with the
//! database open. See docs/decisions/0015-stop-means-stopped.md.

#[cfg(unix)]
use std::path::Path;
use std::time::{Duration, Instant};

#[cfg(unix)]
use berth_client::client::Connection;
#[cfg(unix)]
use berth_proto::pb;
use berth_tests::TestEnv;
#[cfg(unix)]
use serde_json::{Value, json};

/// A refusal of a special file is immediate; this only bounds a broken run.
#[cfg(unix)]
const QUICK: Duration = Duration::from_secs(3);

// FIFOs are Unix's.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

/// Waits until at least `n` calls run on the daemon's threads (`daemon status` counts them),
/// so a test knows its calls are in flight, not just sent.
fn until_running(env: &TestEnv, n: u64) {
    let seen = berth_tests::wait_until(Duration::from_secs(20), || {
        let running = env.json(["daemon", "status"])["calls_running"]
            .as_u64()
            .unwrap_or(0);
        if running >= n {
            Ok(running)
        } else {
            Err(running)
        }
    });
    if let Err(running) = seen {
        panic!("{running} calls ran on the daemon's threads, not the {n} sent");
    }
}

/// Whether `pid` is gone, or about to be. An exiting process closes its
/// files (so its lock comes free) a moment before the kernel marks it a
/// zombie; a process that lives on is still there after this.
fn gone_soon(pid: u32) -> bool {
    berth_tests::wait_until(Duration::from_secs(1), || {
        if berth_tests::is_live_berthd(pid) {
            Err(())
        } else {
            Ok(())
        }
    })
    .is_ok()
}

/// Opens an MCP session in the user's home (no project: qualified paths).
#[cfg(unix)]
async fn session(env: &TestEnv, conn: &mut Connection) -> String {
    let open = pb::OpenSessionRequest {
        caller: Some(pb::Caller {
            cwd: env.home().display().to_string(),
            ..Default::default()
        }),
        client_name: "stuck".into(),
        ..Default::default()
    };
    let (first, mut stream) = berth_tests::open_session(conn, open).await;
    // Keep the stream open for the session's life.
    tokio::spawn(async move { while let Ok(Some(_)) = stream.message().await {} });
    first.session_id
}

#[cfg(unix)]
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
#[cfg(unix)]
fn app_with_fifos(env: &TestEnv, fifos: usize) {
    let _ = env.run_berth(["workspace", "create", "app"]).success();
    let home = env.managed_home("app");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("notes.md"), "one\na needle here\n").unwrap();
    for i in 0..fifos {
        mkfifo(&home.join(format!("pipe{i}")));
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_not_a_regular_file_for_read_and_edit_and_search_skips_it() {
    let env = TestEnv::new();
    app_with_fifos(&env, 1);
    let mut conn = env.connect().await;
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

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_fifty_reads_of_fifos_in_flight_the_daemon_answers_others_and_stops() {
    const READS: usize = 50;
    let env = std::sync::Arc::new(TestEnv::new());
    app_with_fifos(&env, READS);
    let pid = env.daemon_pid();
    let mut conn = env.connect().await;
    let id = session(&env, &mut conn).await;
    let mut reads = tokio::task::JoinSet::new();
    for i in 0..READS {
        let (env, id) = (env.clone(), id.clone());
        reads.spawn(async move {
            let mut conn = env.connect().await;
            tool(
                &mut conn,
                &id,
                "read",
                json!({"path": format!("app/pipe{i}")}),
            )
            .await
        });
    }
    // Another client, while the reads are in flight.
    let create = {
        let env = env.clone();
        tokio::task::spawn_blocking(move || env.run_berth(["workspace", "create", "other"]))
    };
    let created = tokio::time::timeout(Duration::from_secs(10), create)
        .await
        .expect("workspace create was not answered")
        .unwrap();
    let _ = created.success();
    let all = tokio::time::timeout(Duration::from_secs(10), async {
        let mut replies = Vec::new();
        while let Some(r) = reads.join_next().await {
            replies.push(r.unwrap());
        }
        replies
    })
    .await
    .expect("reads of FIFOs did not all come back");
    for r in &all {
        assert!(
            r.is_error && r.text.contains("not a regular file"),
            "{}",
            r.text
        );
    }
    drop(conn);
    let stop = {
        let env = env.clone();
        tokio::task::spawn_blocking(move || env.run_berth(["daemon", "stop"]))
    };
    let _ = stop.await.unwrap().success();
    assert!(
        gone_soon(pid),
        "berthd {pid} still runs after `daemon stop` said it stopped"
    );
}

/// Writes stuck behind the database's write lock (another process holds it,
/// as a hung disk would) while `daemon stop` runs: the stop is answered, the
/// process is gone when `stop` says so, `status` never says "not running"
/// while it is still there, and the writes, whose clients were told they
/// failed, never commit, even once the lock is let go.
#[test]
fn after_stop_is_answered_no_write_commits_and_status_sees_the_process_until_it_is_gone() {
    let env = std::sync::Arc::new(TestEnv::new());
    let _ = env.run_berth(["workspace", "create", "first"]).success();
    let pid = env.daemon_pid();
    let holder = rusqlite::Connection::open(env.db()).unwrap();
    holder.busy_timeout(Duration::from_secs(5)).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let writes: Vec<_> = [
        vec!["setting", "set", "hooks.stop_timeout_secs", "7"],
        vec!["workspace", "create", "zz"],
    ]
    .into_iter()
    .map(|args| {
        let env = env.clone();
        std::thread::spawn(move || env.run_berth(args))
    })
    .collect();
    // Both are in flight: one waits on SQLite, the other behind it.
    until_running(&env, 2);
    let stopping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let (env, stopping) = (env.clone(), stopping.clone());
        std::thread::spawn(move || {
            let mut looks = 0;
            while stopping.load(std::sync::atomic::Ordering::SeqCst) {
                let out = env.run_berth(["daemon", "status", "--json"]);
                let said_running = out.code() == Some(0) && out.json()["running"] == true;
                if !said_running && !gone_soon(pid) {
                    panic!(
                        "status said {:?} {:?} while berthd {pid} still runs",
                        out.stdout(),
                        out.stderr()
                    );
                }
                looks += 1;
            }
            looks
        })
    };
    let stop = env.run_berth(["daemon", "stop"]);
    stopping.store(false, std::sync::atomic::Ordering::SeqCst);
    let _ = stop.success();
    assert!(
        gone_soon(pid),
        "berthd {pid} still runs after `daemon stop` said it stopped"
    );
    let looks = watcher.join().expect("status was wrong");
    assert!(looks > 0, "status was never asked during the stop");
    for w in writes {
        let out = w.join().unwrap();
        assert_eq!(
            out.code(),
            Some(1),
            "a write stuck at the stop did not fail: {}",
            out.stdout()
        );
    }
    // Let go of the lock: nothing the stopped daemon was asked may land now. It is gone (seen
    // above), so what the store holds now is final: no writer is left to land later.
    holder.execute_batch("COMMIT").unwrap();
    let names: Vec<String> = holder
        .prepare("SELECT name FROM workspaces ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        names,
        ["default", "first"],
        "a write committed after the stop"
    );
    let set: Option<String> = holder
        .query_row(
            "SELECT value FROM settings WHERE key = 'hooks.stop_timeout_secs'",
            [],
            |r| r.get(0),
        )
        .ok();
    assert_eq!(set, None, "a setting was written after the stop");
}

/// Calls stuck on the database (another process holds its write lock) wait
/// on pool threads, never on the async workers: `status` and a resolve,
/// which need no database, answer at once while writes and reads of
/// settings are stuck behind the lock.
#[test]
fn with_calls_stuck_on_the_database_status_and_resolve_still_answer_at_once() {
    let env = std::sync::Arc::new(TestEnv::new());
    let _ = env.run_berth(["workspace", "create", "first"]).success();
    let folder = env.dir("elsewhere");
    let holder = rusqlite::Connection::open(env.db()).unwrap();
    holder.busy_timeout(Duration::from_secs(5)).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut stuck = Vec::new();
    for i in 0..2 {
        let env = env.clone();
        let value = format!("{}", i + 3);
        stuck.push(std::thread::spawn(move || {
            env.run_berth(["setting", "set", "hooks.stop_timeout_secs", value.as_str()])
        }));
    }
    for _ in 0..4 {
        let env = env.clone();
        stuck.push(std::thread::spawn(move || {
            env.run_berth(["setting", "get", "hooks.stop_timeout_secs"])
        }));
    }
    // The two writes at least: whether the reads wait too depends on where they queue.
    until_running(&env, 2);
    // Far below the 5 s a stuck write waits on SQLite; far above a CLI call.
    let bound = Duration::from_secs(2);
    let started = Instant::now();
    let status = env.run_berth(["daemon", "status", "--json"]);
    let took = started.elapsed();
    assert_eq!(status.json()["running"], true, "{}", status.stdout());
    assert!(took < bound, "status took {took:?} while calls were stuck");
    let started = Instant::now();
    let resolved = env.json(["resolve", folder.to_str().unwrap()]);
    let took = started.elapsed();
    assert_eq!(resolved["workspace"], "default", "{resolved}");
    assert!(took < bound, "resolve took {took:?} while calls were stuck");
    holder.execute_batch("COMMIT").unwrap();
    for s in stuck {
        let _ = s.join().unwrap();
    }
}
