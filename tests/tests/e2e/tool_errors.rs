//! Errors say what happened and what to do, with a stable code
//! (docs/reference.md, "Qualified paths and file tools";
//! docs/decisions/0041-placeholders-are-data-never-code.md): a folder moved
//! into itself, a pin that cannot be a workspace's name, what `ls` calls a
//! FIFO, and a full disk under the file tools, a project file and the
//! registry.

use std::path::Path;

use berth_proto::pb;
use berth_tests::TestEnv;
use serde_json::{Value, json};

/// A session's stream and the connection it runs on, kept open.
type Held = (
    tonic::Streaming<pb::SessionEvent>,
    berth_client::client::Connection,
);

/// Registers an agent session in `cwd`, as `berth-mcp` does.
async fn open(env: &TestEnv, cwd: &Path) -> (String, Held) {
    let mut conn = env.connect().await;
    let req = pb::OpenSessionRequest {
        caller: Some(pb::Caller {
            cwd: cwd.display().to_string(),
            ..Default::default()
        }),
        client_name: "claude-code".into(),
        client_version: "1.2.3".into(),
        pid: std::process::id(),
        ..Default::default()
    };
    let (first, events) = berth_tests::open_session(&mut conn, req).await;
    (first.session_id, (events, conn))
}

/// Calls a tool; its structured content, and whether it failed.
async fn tool(env: &TestEnv, session: &str, name: &str, args: Value) -> (Value, bool) {
    let mut conn = env.connect().await;
    let req = pb::CallToolRequest {
        session_id: session.into(),
        tool: name.into(),
        arguments_json: args.to_string(),
    };
    let reply = conn
        .call(|mut c| {
            let r = req.clone();
            async move { c.call_tool(r).await }
        })
        .await
        .expect("call the tool");
    let content: Value = serde_json::from_str(&reply.structured_json).expect("structured JSON");
    (content, reply.is_error)
}

/// Asserts a failed call's code, exact message and hints.
fn failed(got: (Value, bool), code: &str, error: &str, hints: &[&str]) {
    let (content, is_error) = got;
    assert!(is_error, "{content}");
    assert_eq!(content["code"], code, "{content}");
    assert_eq!(content["error"], error, "{content}");
    let want: Vec<Value> = hints.iter().map(|h| json!(h)).collect();
    assert_eq!(content["hints"], Value::Array(want), "{content}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_moved_into_itself_is_refused_in_words_and_moves_nothing() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "notes"]);
    let plain = env.dir("plain");
    let (id, _held) = open(&env, &plain).await;
    let (_, err) = tool(
        &env,
        &id,
        "write",
        json!({"path": "notes/a/keep.md", "content": "x"}),
    )
    .await;
    assert!(!err);
    failed(
        tool(
            &env,
            &id,
            "move",
            json!({"from": "notes/a", "to": "notes/a/b"}),
        )
        .await,
        "invalid",
        "notes/a cannot be moved to notes/a/b, which is inside it: a folder cannot be moved into itself; nothing was moved",
        &["choose a target outside notes/a"],
    );
    let keep = env.managed_home("notes").join("a").join("keep.md");
    assert_eq!(std::fs::read_to_string(keep).unwrap(), "x");
    assert!(!env.managed_home("notes").join("a").join("b").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_that_cannot_be_a_name_is_never_offered_for_creation() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let plain = env.dir("plain");
    let (id, _held) = open(&env, &plain).await;
    let rule =
        "a name is 1 to 40 characters of a-z, 0-9 and '-', and starts with a letter or digit";
    let (content, is_error) =
        tool(&env, &id, "ls", json!({"path": "./", "workspace": "../x"})).await;
    assert!(is_error, "{content}");
    assert_eq!(content["code"], "invalid", "{content}");
    assert_eq!(
        content["error"],
        format!(
            "no workspace ../x — workspaces: default, shop (the workspace argument named it), and it cannot name one: invalid workspace name \"../x\" (it contains '.'): {rule}; name one of those workspaces, or create one with a valid name (`berth workspace create NAME`)"
        ),
        "{content}"
    );
    // A capitalised name points to the one that exists.
    let (content, _) = tool(&env, &id, "ls", json!({"path": "./", "workspace": "Shop"})).await;
    assert!(
        content["error"]
            .as_str()
            .unwrap()
            .ends_with("; did you mean shop?"),
        "{content}"
    );
    // use_workspace states the rule and creates nothing.
    let (content, is_error) = tool(&env, &id, "use_workspace", json!({"name": "../x"})).await;
    assert!(is_error, "{content}");
    assert_eq!(content["code"], "invalid", "{content}");
    assert!(
        !content["error"]
            .as_str()
            .unwrap()
            .contains("workspace create ../x"),
        "{content}"
    );
    // The CLI, and the pin in the environment, say the same.
    for mut cmd in [env.berth(["resolve", "-w", "../x"]), env.berth(["resolve"])] {
        cmd.env("BERTH_WORKSPACE", "../x");
        let run = env
            .run(cmd)
            .failure(1)
            .stderr_has(&["cannot name one", rule]);
        assert!(!run.stderr().contains("create ../x"), "{}", run.stderr());
    }
    // A valid name is still offered.
    let _ = env
        .run_berth(["resolve", "-w", "shopp"])
        .failure(1)
        .stderr_has(&["create it with `berth workspace create shopp`"]);
}

// FIFOs and sockets are Unix's.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_names_a_fifo_and_a_socket_as_what_they_are() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "notes"]);
    let home = env.managed_home("notes");
    std::fs::create_dir_all(&home).unwrap();
    let fifo = std::ffi::CString::new(home.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let _sock = std::os::unix::net::UnixListener::bind(home.join("sock")).unwrap();
    std::fs::write(home.join("a.md"), "abc").unwrap();
    let plain = env.dir("plain");
    let (id, _held) = open(&env, &plain).await;
    let (content, is_error) = tool(&env, &id, "ls", json!({"path": "notes/"})).await;
    assert!(!is_error, "{content}");
    assert_eq!(
        content["entries"],
        json!([
            {"path": "notes/a.md", "kind": "file", "size": 3},
            {"path": "notes/pipe", "kind": "fifo", "size": 0},
            {"path": "notes/sock", "kind": "socket", "size": 0},
        ])
    );
    let (content, _) = tool(&env, &id, "ls", json!({"path": "notes/pipe"})).await;
    assert_eq!(content["entries"][0]["kind"], "fifo", "{content}");
}

/// A small tmpfs mounted for one test, detached when it ends.
#[cfg(target_os = "linux")]
struct Tmpfs(std::path::PathBuf);

#[cfg(target_os = "linux")]
impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(dir)
            .status()
            .expect("run mount");
        assert!(status.success(), "mounting a tmpfs at {}", dir.display());
        Tmpfs(dir.to_path_buf())
    }

    /// Fills it to the last byte.
    fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.0.join("filler")).unwrap();
        for chunk in [&[0u8; 65536][..], &[0u8; 1]] {
            loop {
                match filler.write_all(chunk) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                    Err(e) => panic!("filling {}: {e}", self.0.display()),
                }
            }
        }
    }

    /// Frees it again.
    fn empty(&self) {
        std::fs::remove_file(self.0.join("filler")).unwrap();
    }
}

#[cfg(target_os = "linux")]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: the daemon may still hold files there until the test's end kills it.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// The names in a folder, sorted.
#[cfg(target_os = "linux")]
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

// A real ENOSPC: a small tmpfs, which only root may mount.
#[cfg(target_os = "linux")]
#[cfg_attr(not(berth_as_root), ignore = "needs root to mount a small tmpfs")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_a_home_or_a_project_is_disk_full_and_changes_nothing() {
    let env = TestEnv::new();
    let disk = Tmpfs::mount(&env.root().join("disk"), "256k");
    let home = disk.0.join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("keep.md"), "old").unwrap();
    let project = env.git_root(disk.0.join("proj"));
    env.json([
        "workspace",
        "create",
        "notes",
        "--home",
        home.to_str().unwrap(),
    ]);
    let plain = env.dir("plain");
    let (id, _held) = open(&env, &plain).await;
    disk.fill();

    let why =
        "could not be written: the disk is full (no space left on device); nothing was changed";
    failed(
        tool(
            &env,
            &id,
            "write",
            json!({"path": "notes/new.md", "content": "x".repeat(10_000)}),
        )
        .await,
        "disk-full",
        &format!("notes/new.md {why}"),
        &["free some space on the disk that holds notes/new.md, then try again"],
    );
    failed(
        tool(
            &env,
            &id,
            "edit",
            json!({"path": "notes/keep.md", "old": "old", "new": "new".repeat(5000)}),
        )
        .await,
        "disk-full",
        &format!("notes/keep.md {why}"),
        &["free some space on the disk that holds notes/keep.md, then try again"],
    );
    // No new file, no temporary file, the old content as it was.
    assert_eq!(names(&home), ["keep.md"]);
    assert_eq!(
        std::fs::read_to_string(home.join("keep.md")).unwrap(),
        "old"
    );

    // A project file: neither the file nor the workspace nor its root.
    let file = project.join(".berth").join("workspace.json");
    let _ = env
        .run_in(&project, ["workspace", "use", "shop"])
        .failure(1)
        .stderr_has(&[
            &format!(
                "Error: {} {why} (no workspace or root was added)",
                file.display()
            ),
            &format!(
                "Hint: free some space on the disk that holds {}, then try again",
                project.display()
            ),
        ]);
    assert_eq!(names(&project), [".git"]);
    let list = env.json(["workspace", "list"]);
    assert_eq!(berth_tests::names(&list), ["default", "notes"]);

    // Space again: the same calls work.
    disk.empty();
    let (_, is_error) = tool(
        &env,
        &id,
        "write",
        json!({"path": "notes/new.md", "content": "x"}),
    )
    .await;
    assert!(!is_error);
    env.json_in(&project, ["workspace", "use", "shop"]);
}

// A real ENOSPC under the data folder, which holds the registry.
#[cfg(target_os = "linux")]
#[cfg_attr(not(berth_as_root), ignore = "needs root to mount a small tmpfs")]
#[test]
fn a_full_disk_under_the_registry_is_disk_full_and_commits_nothing() {
    let env = TestEnv::new();
    assert!(
        env.daemon_pids().is_empty(),
        "the daemon starts on the tmpfs"
    );
    let disk = Tmpfs::mount(&env.data_dir(), "8m");
    env.json(["workspace", "create", "first"]);
    disk.fill();
    let db = env.db();
    let _ = env
        .run_berth(["workspace", "create", "second"])
        .failure(1)
        .stderr_has(&[
            &format!(
                "Error: the registry {} could not be written: the disk is full (no space left on device); nothing was changed",
                db.display()
            ),
            &format!(
                "Hint: free some space on the disk that holds {}, then try again",
                env.data_dir().display()
            ),
        ]);
    let list = env.json(["workspace", "list"]);
    assert_eq!(berth_tests::names(&list), ["default", "first"]);
    disk.empty();
    env.json(["workspace", "create", "second"]);
}
