//! Homes against an attacker inside the user's own folders, through the MCP file tools (the
//! `CallTool` RPC `berth-mcp` forwards them as): homes never nest, a home is opened with no
//! link on its path and must be the folder that was approved, overwrites keep a file's mode
//! and group, temporary files do not pile up, and a bad registry row costs only its own
//! workspace.

#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

use berth_client::client::Connection;
use berth_proto::pb;
use berth_tests::TestEnv;
use serde_json::{Value, json};

/// An MCP session of `env`'s daemon, in the home (no project: qualified paths only).
struct Session {
    conn: Connection,
    id: String,
    _events: tonic::Streaming<pb::SessionEvent>,
}

impl Session {
    async fn open(env: &TestEnv) -> Session {
        let _ = env.json(["workspace", "list"]);
        let mut conn = env.connect().await;
        let req = pb::OpenSessionRequest {
            caller: Some(pb::Caller {
                cwd: env.home().display().to_string(),
                ..Default::default()
            }),
            client_name: "home-swaps".into(),
            ..Default::default()
        };
        let (first, events) = berth_tests::open_session(&mut conn, req).await;
        Session {
            conn,
            id: first.session_id,
            _events: events,
        }
    }

    /// Calls `tool`; returns (is_error, text, structured).
    async fn call(&mut self, tool: &str, args: Value) -> (bool, String, Value) {
        let req = pb::CallToolRequest {
            session_id: self.id.clone(),
            tool: tool.into(),
            arguments_json: args.to_string(),
        };
        let r = self
            .conn
            .call(|mut c| {
                let r = req.clone();
                async move { c.call_tool(r).await }
            })
            .await
            .expect("the daemon answers");
        let structured = serde_json::from_str(&r.structured_json).unwrap_or(Value::Null);
        (r.is_error, r.text, structured)
    }

    async fn ok(&mut self, tool: &str, args: Value) -> Value {
        let (err, text, s) = self.call(tool, args.clone()).await;
        assert!(!err, "{tool} {args}: {text}");
        s
    }

    async fn refused(&mut self, tool: &str, args: Value, needle: &str) {
        let (err, text, _) = self.call(tool, args.clone()).await;
        assert!(err, "{tool} {args} was done: {text}");
        assert!(
            text.contains(needle),
            "{tool} {args}: {text:?} lacks {needle:?}"
        );
    }
}

/// Writes a row straight into berth.db, as a hand edit or an older build would, with the
/// daemon stopped (it reads the registry when it starts).
fn insert_row(env: &TestEnv, name: &str, mode: &str, home: Option<&str>) {
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(std::time::Duration::from_secs(10));
    let db = rusqlite::Connection::open(env.db()).unwrap();
    db.execute(
        "INSERT INTO workspaces (name, home_mode, home_path, created_at) VALUES (?1, ?2, ?3, 0)",
        rusqlite::params![name, mode, home],
    )
    .unwrap();
}

fn create(env: &TestEnv, name: &str, home: &Path) {
    let _ = env.json([
        "workspace",
        "create",
        name,
        "--home",
        home.to_str().unwrap(),
    ]);
}

/// Every file and link below `dir`, with its content or target.
#[cfg(unix)]
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_symlink() {
                out.push((
                    p.clone(),
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_home_inside_another_or_containing_one_is_refused() {
    let env = TestEnv::new();
    let c = env.dir("home/c");
    let home_a = env.dir("home/c/homeA");
    let home_b = env.dir("home/c/homeA/sub/homeB");
    create(&env, "wa", &home_a);
    let _ = env
        .run_berth([
            "workspace",
            "create",
            "wb",
            "--home",
            home_b.to_str().unwrap(),
        ])
        .failure(1)
        .stderr_has(&["lies inside the home of workspace \"wa\"", "never nest"]);
    let _ = env
        .run_berth(["workspace", "create", "wc", "--home", c.to_str().unwrap()])
        .failure(1)
        .stderr_has(&["contains the home of workspace \"wa\"", "never nest"]);
    assert_eq!(
        berth_tests::names(&env.json(["workspace", "list"])),
        ["default", "wa"]
    );
}

/// The attack: with `wb`'s home nested in `wa`'s, `wa`'s tools move `wb`'s home away and put
/// a link in its place; `wb`'s writes must not follow it out, whether the link is absolute or
/// relative (a `..` link that points inside from deep down and outside from where it lands).
// Creating a symbolic link takes a privilege on Windows.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_or_a_folder_moved_into_a_homes_place_is_refused_and_nothing_lands_outside() {
    let env = TestEnv::new();
    let c = env.dir("home/c");
    let home_a = env.dir("home/c/homeA");
    let home_b = env.dir("home/c/homeA/sub/homeB");
    let outside = env.dir("home/c/outside");
    std::fs::write(outside.join("keep.txt"), "outside\n").unwrap();
    std::fs::write(home_b.join("sentinel"), "sentinel of wb\n").unwrap();
    std::os::unix::fs::symlink(&outside, home_a.join("lnk")).unwrap();
    std::fs::create_dir_all(home_a.join("a").join("b")).unwrap();
    std::os::unix::fs::symlink("../../outside", home_a.join("a/b/rel")).unwrap();
    std::fs::create_dir(home_a.join("decoy")).unwrap();
    create(&env, "wa", &home_a);
    // An older build let the nested home in.
    insert_row(&env, "wb", "local", Some(home_b.to_str().unwrap()));
    let before = tree(&outside);

    // Listed with a note on both, and still usable while in place.
    let wb = env.json(["workspace", "show", "wb"]);
    assert!(wb["error"].is_null(), "{wb}");
    assert!(
        wb["notes"][0]
            .as_str()
            .unwrap()
            .contains("inside the home of workspace \"wa\""),
        "{wb}"
    );
    let wa = env.json(["workspace", "show", "wa"]);
    assert!(wa["notes"][0].as_str().unwrap().contains("\"wb\""), "{wa}");
    // And reported in the log when the daemon starts.
    berth_tests::wait_until(std::time::Duration::from_secs(20), || {
        let log = env.log();
        log.contains("its home lies inside the home of workspace \"wa\"")
            .then_some(())
            .ok_or(log)
    })
    .unwrap_or_else(|log| panic!("nested homes not logged at start:\n{log}"));
    let mut s = Session::open(&env).await;
    s.ok("write", json!({"path": "wb/ok.txt", "content": "fine"}))
        .await;

    // The exact attack: an absolute link.
    s.ok("move", json!({"from": "wa/sub/homeB", "to": "wa/sub/old"}))
        .await;
    s.ok("move", json!({"from": "wa/lnk", "to": "wa/sub/homeB"}))
        .await;
    s.refused(
        "write",
        json!({"path": "wb/pwned.txt", "content": "x"}),
        "symlink",
    )
    .await;
    s.refused(
        "edit",
        json!({"path": "wb/sentinel", "old": "sentinel", "new": "pwned"}),
        "symlink",
    )
    .await;
    s.refused("ls", json!({"path": "wb/"}), "symlink").await;
    let _ = env
        .run_berth(["workspace", "show", "wb"])
        .failure(1)
        .stderr_has(&["symlink", "berth workspace delete wb"]);
    let listed = env.json(["workspace", "list"]);
    let error = listed["workspaces"][2]["error"].as_str().unwrap();
    assert!(error.contains("symlink"), "{listed}");
    assert!(listed["workspaces"][1]["error"].is_null(), "{listed}");

    // A relative link holding `..`, moved to a shallower place.
    s.ok("move", json!({"from": "wa/sub/homeB", "to": "wa/lnk"}))
        .await;
    s.ok("move", json!({"from": "wa/a/b/rel", "to": "wa/sub/homeB"}))
        .await;
    s.refused(
        "write",
        json!({"path": "wb/pwned.txt", "content": "x"}),
        "symlink",
    )
    .await;

    // Another plain folder moved into its place is not the folder that was approved.
    s.ok("move", json!({"from": "wa/sub/homeB", "to": "wa/a/b/rel"}))
        .await;
    s.ok("move", json!({"from": "wa/decoy", "to": "wa/sub/homeB"}))
        .await;
    s.refused(
        "write",
        json!({"path": "wb/x.txt", "content": "x"}),
        "not the one approved",
    )
    .await;

    // The original folder put back works again.
    s.ok("move", json!({"from": "wa/sub/homeB", "to": "wa/decoy"}))
        .await;
    s.ok("move", json!({"from": "wa/sub/old", "to": "wa/sub/homeB"}))
        .await;
    s.ok(
        "edit",
        json!({"path": "wb/sentinel", "old": "sentinel", "new": "still"}),
    )
    .await;

    assert_eq!(
        tree(&outside),
        before,
        "something changed outside every home"
    );
    assert!(!c.join("pwned.txt").exists());
    assert_eq!(
        std::fs::read_to_string(home_b.join("sentinel")).unwrap(),
        "still of wb\n"
    );
}

// Unix modes, groups and umask.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_write_keep_mode_and_group_and_a_new_file_follows_the_umask() {
    let env = TestEnv::new();
    let home = env.dir("home/notes");
    create(&env, "n", &home);
    let secret = home.join("secret.env");
    let run = home.join("run.sh");
    std::fs::write(&secret, "TOKEN=1\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&run, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::chown(&run, None, Some(65534)).unwrap();

    let mut s = Session::open(&env).await;
    s.ok(
        "edit",
        json!({"path": "n/secret.env", "old": "1", "new": "2"}),
    )
    .await;
    s.ok(
        "edit",
        json!({"path": "n/run.sh", "old": "hi", "new": "ho"}),
    )
    .await;
    s.ok(
        "write",
        json!({"path": "n/secret.env", "content": "TOKEN=3\n"}),
    )
    .await;
    s.ok("write", json!({"path": "n/fresh.txt", "content": "new"}))
        .await;

    let meta = |p: &Path| std::fs::metadata(p).unwrap();
    assert_eq!(meta(&secret).mode() & 0o7777, 0o600, "the secret's mode");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOKEN=3\n");
    assert_eq!(meta(&run).mode() & 0o7777, 0o750, "the script's mode");
    assert_eq!(meta(&run).gid(), 65534, "the script's group");
    let umask = daemon_umask(&env);
    assert_eq!(
        meta(&home.join("fresh.txt")).mode() & 0o7777,
        0o666 & !umask
    );
}

/// The daemon's umask, as the kernel reports it.
#[cfg(unix)]
fn daemon_umask(env: &TestEnv) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", env.daemon_pid())).unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_row_costs_only_its_own_workspace() {
    let env = TestEnv::new();
    let other = env.dir("home/other");
    create(&env, "other", &other);
    insert_row(&env, "bad", "local", Some("/"));

    let list = env.json(["workspace", "list"]);
    assert_eq!(berth_tests::names(&list), ["bad", "default", "other"]);
    let bad = &list["workspaces"][0];
    let err = bad["error"].as_str().unwrap();
    assert!(err.contains("berth workspace delete bad"), "{err}");
    assert!(list["workspaces"][2]["error"].is_null(), "{list}");
    let shown = env.json(["workspace", "show", "other"]);
    assert_eq!(shown["home"], json!(other));
    let text = env.run_berth(["workspace", "list"]).success().stdout();
    assert!(text.contains("error: workspace \"bad\""), "{text}");

    let mut s = Session::open(&env).await;
    let (is_err, text, listed) = s.call("ls", json!({"path": "/"})).await;
    assert!(!is_err, "{text}");
    assert_eq!(listed["workspaces"][0]["name"], "bad", "{listed}");
    assert_eq!(listed["workspaces"][2]["name"], "other", "{listed}");
    assert!(
        listed["workspaces"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("berth workspace delete bad")),
        "{listed}"
    );
    s.ok("write", json!({"path": "other/x.md", "content": "x"}))
        .await;
    s.refused(
        "write",
        json!({"path": "bad/x.md", "content": "x"}),
        "berth workspace delete bad",
    )
    .await;
    // The way out works.
    let _ = env.run_berth(["workspace", "delete", "bad"]).success();
    assert_eq!(
        berth_tests::names(&env.json(["workspace", "list"])),
        ["default", "other"]
    );
}

/// What writers killed mid-write left is swept at the next start, from the folders berth
/// writes to; a user's file of a like name and a live writer's file are kept.
#[test]
fn stale_temporary_files_of_dead_writers_are_removed_at_start() {
    let env = TestEnv::new();
    let notes = env.dir("home/notes");
    create(&env, "notes", &notes);
    let proj = env.git_root(env.dir("home/proj"));
    let _ = env.run_in(&proj, ["workspace", "use", "default"]).success();
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(std::time::Duration::from_secs(10));

    #[cfg(unix)]
    let mut child = std::process::Command::new("true").spawn().unwrap();
    #[cfg(windows)]
    let mut child = std::process::Command::new(berth_tests::bin("berth"))
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let dead = child.id();
    child.wait().unwrap();
    // Another berthd, running: its files may still be written.
    let other = TestEnv::new();
    let _ = other.json(["workspace", "list"]);
    let live = other.daemon_pid();

    let managed = env.managed_home("default");
    std::fs::create_dir_all(managed.join("d")).unwrap();
    std::fs::create_dir_all(notes.join("deep").join("er")).unwrap();
    let stale = [
        notes.join(format!("deep/er/.big.bin.berth-tmp-{dead}-0")),
        managed.join(format!("d/.x.md.berth-tmp-{dead}-1")),
        proj.join(format!(".berth/.workspace.json.berth-tmp-{dead}-2")),
    ];
    let kept = [
        notes.join(format!(".x.md.berth-tmp-{live}-0")),
        notes.join(".x.md.berth-tmp-notes"),
        notes.join(format!("x.md.berth-tmp-{dead}-0")),
        notes.join(format!("deep/.x.md.berth-tmp-{dead}")),
    ];
    std::fs::write(&stale[0], vec![b'x'; 3 << 20]).unwrap();
    for f in stale.iter().skip(1).chain(&kept) {
        std::fs::write(f, "x").unwrap();
    }

    // The last run may have stopped before its own sweep finished: count from here.
    let swept = |log: &str| log.matches("swept berth's stale temporary files").count();
    let before = swept(&env.log());
    let _ = env.json(["workspace", "list"]);
    berth_tests::wait_until(std::time::Duration::from_secs(20), || {
        let log = env.log();
        (swept(&log) > before).then_some(()).ok_or(log)
    })
    .unwrap_or_else(|log| panic!("no sweep logged at the restart:\n{log}"));
    for f in &stale {
        assert!(!f.exists(), "{} stayed", f.display());
    }
    for f in &kept {
        assert!(f.exists(), "{} was removed", f.display());
    }
}
