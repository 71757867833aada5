//! `berth workspace use [W] [--allow-overlap]` (docs/reference.md, "The CLI" and "Agent sessions").

use std::path::Path;

use berth_tests::{TestEnv, names};
use serde_json::json;

fn project_file_of(dir: &Path) -> std::path::PathBuf {
    dir.join(".berth").join("workspace.json")
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn in_a_git_project_it_creates_approves_and_writes_the_file_at_the_project() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    let sub = env.dir("proj/repo/src/deep");
    let out = env.json_in(&sub, ["workspace", "use", "app"]);
    let file = project_file_of(&repo);
    assert_eq!(out["workspace"], "app");
    assert_eq!(out["folder"], json!(repo));
    assert_eq!(out["created"], true);
    assert_eq!(out["root_added"], true);
    assert_eq!(out["project_file"], json!(file));
    assert!(
        out["notes"].to_string().contains("committing it"),
        "the note must leave committing to the user: {out}"
    );
    assert_eq!(read_json(&file), json!({"workspace": "app"}));
    assert!(!sub.join(".berth").exists());
    assert_eq!(
        env.json(["workspace", "show", "app"])["roots"],
        json!([repo])
    );
    let r = env.json_in(&sub, ["resolve"]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("app"), Some("project-file"))
    );
    assert_eq!(out["resolution"], r);
    // The active workspace is not switched.
    assert_eq!(env.json(["workspace", "list"])["active"], "default");
}

#[test]
fn using_it_again_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    env.json_in(&repo, ["workspace", "use", "app"]);
    let again = env.json_in(&repo, ["workspace", "use", "app"]);
    assert_eq!(again["created"], false);
    assert_eq!(again["root_added"], false);
    assert_eq!(again["project_file"], json!(null), "{again}");
    assert_eq!(
        env.json(["root", "list"])["roots"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn in_a_plain_folder_it_uses_the_cwd_itself() {
    let env = TestEnv::new();
    env.dir("proj/plain");
    let cwd = env.dir("proj/plain/here");
    let out = env.json_in(&cwd, ["workspace", "use", "notes"]);
    assert_eq!(out["folder"], json!(cwd));
    assert_eq!(
        read_json(&project_file_of(&cwd)),
        json!({"workspace": "notes"})
    );
    assert!(!env.dir("proj/plain").join(".berth").exists());
    let r = env.json_in(&cwd, ["resolve"]);
    assert_eq!(r["reason"], "project-file");
    assert_eq!(r["project"], json!(cwd));
}

#[test]
fn an_existing_workspace_is_used_not_recreated() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "app"]);
    let repo = env.git_root(env.dir("proj/repo"));
    let out = env.json_in(&repo, ["workspace", "use", "app"]);
    assert_eq!(out["created"], false);
    assert_eq!(out["root_added"], true);
}

#[test]
fn a_folder_already_inside_a_root_of_the_workspace_gets_no_new_root() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "app"]);
    let outer = env.dir("proj/mono");
    env.json(["root", "add", "app", outer.to_str().unwrap()]);
    let pkg = env.git_root(env.dir("proj/mono/pkg"));
    let out = env.json_in(&pkg, ["workspace", "use", "app"]);
    assert_eq!(out["root_added"], false);
    assert_eq!(
        env.json(["root", "list"])["roots"],
        json!([{"workspace": "app", "path": outer}])
    );
    assert_eq!(env.json_in(&pkg, ["resolve"])["reason"], "project-file");
}

fn assert_nothing_changed(env: &TestEnv, dir: &Path, ws: &str) {
    assert!(!names(&env.json(["workspace", "list"])).contains(&ws.to_string()));
    assert!(
        !dir.join(".berth").exists(),
        "a refused use wrote a file:\n{}",
        env.listing()
    );
}

#[test]
fn in_the_home_it_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    let home = env.home();
    let _ = env
        .run_in(&home, ["workspace", "use", "mine"])
        .failure(1)
        .stderr_has(&["home directory"]);
    assert_nothing_changed(&env, &home, "mine");
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
}

#[test]
fn at_the_filesystem_root_or_an_ancestor_of_the_home_it_is_refused() {
    let env = TestEnv::new();
    for dir in [Path::new("/"), env.root()] {
        let _ = env.run_in(dir, ["workspace", "use", "mine"]).failure(1);
        assert!(!names(&env.json(["workspace", "list"])).contains(&"mine".to_string()));
    }
    assert!(!env.root().join(".berth").exists());
    assert!(!Path::new("/.berth").exists());
}

#[test]
fn an_overlap_is_refused_with_nothing_changed_until_allow_overlap() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "a"]);
    let outer = env.dir("proj/o");
    env.json(["root", "add", "a", outer.to_str().unwrap()]);
    let repo = env.git_root(env.dir("proj/o/inner"));

    let _ = env
        .run_in(&repo, ["workspace", "use", "b"])
        .failure(1)
        .stderr_has(&[
            "workspace \"a\"",
            outer.to_str().unwrap(),
            "--allow-overlap",
        ]);
    assert_nothing_changed(&env, &repo, "b");
    assert_eq!(
        env.json(["root", "list"]),
        json!({"roots": [{"workspace": "a", "path": outer}]})
    );

    let out = env.json_in(&repo, ["workspace", "use", "b", "--allow-overlap"]);
    assert_eq!(out["created"], true);
    assert_eq!(out["root_added"], true);
    assert_eq!(
        read_json(&project_file_of(&repo)),
        json!({"workspace": "b"})
    );
    let r = env.json_in(&repo, ["resolve"]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("b"), Some("project-file"))
    );
}

#[test]
fn an_invalid_name_is_refused_with_nothing_written() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    let _ = env
        .run_in(&repo, ["workspace", "use", "Bad"])
        .failure(1)
        .stderr_has(&["invalid workspace name"]);
    assert!(!repo.join(".berth").exists());
}

#[test]
fn other_keys_of_an_existing_project_file_are_kept() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    let file = env.project_file(&repo, r#"{"workspace": "old", "comment": "ours"}"#);
    env.json_in(&repo, ["workspace", "use", "new"]);
    assert_eq!(
        read_json(&file),
        json!({"workspace": "new", "comment": "ours"})
    );
}

#[test]
fn without_a_name_and_without_a_terminal_it_is_a_usage_error() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    let _ = env
        .run_in(&repo, ["workspace", "use"])
        .failure(2)
        .stderr_has(&["berth workspace use <name>"]);
    assert!(!repo.join(".berth").exists());
}

/// Runs `berth ARGS` in `dir` with its address space capped at 1 GiB (a
/// daemon it starts inherits the cap), so a daemon that reads an endless
/// file dies instead of eating the machine.
// setrlimit, FIFOs, /dev/zero and /proc are Unix's.
#[cfg(unix)]
fn run_with_memory_cap(env: &TestEnv, dir: &Path, args: &[&str]) -> berth_tests::Run {
    use std::os::unix::process::CommandExt;
    let mut cmd = env.berth_in(dir, args);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    env.run(cmd)
}

/// A project file that is not a regular file (a FIFO, a link to /dev/zero)
/// must neither hang nor exhaust `workspace use`: resolving ignores such a file
/// (docs/reference.md, "Roots, the walk and project files"), and `use` must not read it blindly
/// either.
#[cfg(unix)]
fn use_over_a_special_file(make: impl FnOnce(&Path)) {
    let env = TestEnv::new();
    let _ = run_with_memory_cap(&env, &env.home(), &["daemon", "start"]).success();
    let pid = env.daemon_pid();
    let repo = env.git_root(env.dir("proj/repo"));
    std::fs::create_dir_all(repo.join(".berth")).unwrap();
    let file = project_file_of(&repo);
    make(&file);
    for _ in 0..2 {
        let run = run_with_memory_cap(&env, &repo, &["--json", "workspace", "use", "w"]);
        assert!(
            !run.stderr().contains("did not answer"),
            "workspace use wedged the daemon: {}",
            run.stderr()
        );
        match run.code() {
            Some(0) => {
                let r = env.json_in(&repo, ["resolve"]);
                assert_eq!(r["reason"], "project-file", "{r:#}");
            }
            Some(1) => assert!(
                run.stderr().contains(file.to_str().unwrap()),
                "a refusal must name the file: {}",
                run.stderr()
            ),
            _ => run.fail("expected exit 0 or 1"),
        }
    }
    // It never held much memory (an endless file read into memory would).
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    assert!(
        peak_kb < 200 * 1024,
        "berthd's peak memory was {} MiB: it read the file into memory",
        peak_kb / 1024
    );
    // The daemon still answers, and it is the same one.
    let list = env.json(["workspace", "list"]);
    assert_eq!(list["active"], "default");
    assert_eq!(
        env.daemon_pids(),
        vec![pid],
        "the daemon died or was replaced"
    );
}

#[cfg(unix)]
#[test]
fn use_over_a_fifo_project_file_neither_hangs_nor_wedges_the_daemon() {
    use std::os::unix::ffi::OsStrExt;
    use_over_a_special_file(|file| {
        let c = std::ffi::CString::new(file.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    });
}

#[cfg(unix)]
#[test]
fn use_over_a_project_file_linked_to_dev_zero_does_not_read_forever() {
    use_over_a_special_file(|file| std::os::unix::fs::symlink("/dev/zero", file).unwrap());
}

/// A `BERTH_WORKSPACE` naming no workspace would fail the answer given after the writes: it is
/// refused before anything is written. Using that very name creates it, and then it answers.
#[test]
fn an_unknown_berth_workspace_is_refused_before_anything_is_written() {
    let env = TestEnv::new();
    let dir = env.git_root(env.dir("proj"));
    let mut cmd = env.berth(["workspace", "use", "mine"]);
    cmd.current_dir(&dir).env("BERTH_WORKSPACE", "nope");
    let _ = env
        .run(cmd)
        .failure(1)
        .stderr_has(&["no workspace nope — workspaces: default", "BERTH_WORKSPACE"]);
    assert_nothing_changed(&env, &dir, "mine");
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
    let mut cmd = env.berth(["--json", "workspace", "use", "nope"]);
    cmd.current_dir(&dir).env("BERTH_WORKSPACE", "nope");
    let out = env.run(cmd).success().json();
    assert_eq!(out["created"], true, "{out}");
}

/// `berth workspace use` without a name, on a pseudo-terminal in `dir`:
/// the picker, driven as a user would.
// A pseudo-terminal (rexpect), Unix's.
#[cfg(unix)]
fn picker(env: &TestEnv, dir: &Path) -> rexpect::session::PtySession {
    // The daemon runs first, so it holds no end of the terminal.
    env.json(["workspace", "list"]);
    let mut cmd = env.berth_in(dir, ["workspace", "use"]);
    cmd.env("TERM", "xterm");
    // The harness gives commands no terminal; this one gets the pty's.
    cmd.stdin(std::process::Stdio::inherit())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit());
    let mut s = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn on a pty");
    s.exp_string("Which workspace should").expect("the picker");
    s
}

#[cfg(unix)]
fn exit_code(s: &rexpect::session::PtySession) -> i32 {
    match s.process().wait().expect("wait") {
        rexpect::process::WaitStatus::Exited(_, code) => code,
        other => panic!("berth ended by {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn esc_and_q_cancel_the_picker_and_write_nothing() {
    for key in ["\x1b", "q"] {
        let env = TestEnv::new();
        let repo = env.git_root(env.dir("proj/repo"));
        let mut s = picker(&env, &repo);
        s.send(key).unwrap();
        s.flush().unwrap();
        let rest = s.exp_eof().expect("berth ends");
        assert!(
            rest.contains("cancelled; nothing was changed"),
            "{key:?}: {rest}"
        );
        assert_eq!(exit_code(&s), 1, "{key:?}");
        assert!(
            !project_file_of(&repo).exists(),
            "{key:?}: a project file was written"
        );
        assert_eq!(
            env.json(["root", "list"])["roots"],
            json!([]),
            "{key:?}: a root was added"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_bad_new_name_is_asked_again_with_the_reason() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    let mut s = picker(&env, &repo);
    // The last item: a new workspace.
    s.send("\x1b[B").unwrap();
    s.send("\r").unwrap();
    s.flush().unwrap();
    s.exp_string("New workspace name")
        .expect("asked for a name");
    s.send("Bad Name\r").unwrap();
    s.flush().unwrap();
    s.exp_string("invalid workspace name").expect("the reason");
    s.exp_string("New workspace name").expect("asked again");
    s.send("good\r").unwrap();
    s.flush().unwrap();
    let rest = s.exp_eof().expect("berth ends");
    assert!(rest.contains("using workspace good"), "{rest}");
    assert_eq!(exit_code(&s), 0);
    assert_eq!(
        read_json(&project_file_of(&repo)),
        json!({"workspace": "good"})
    );
}
