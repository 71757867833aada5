//! The daemon's life as clients see it (docs/reference.md, "The daemon").

#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::process::Stdio;
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

#[cfg(unix)]
use berth_tests::signal;
use berth_tests::{TestEnv, VERSION, bin, is_live_berthd, kill, names, pause, wait_until};
use serde_json::json;

#[cfg(unix)]
fn mode(p: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(p).expect("stat").mode() & 0o7777
}

/// Creates a workspace with a root and a local home, switches to it, and sets
/// `workspace.unassigned`: one of every kind of answered write.
fn write_everything(env: &TestEnv) -> serde_json::Value {
    let proj = env.dir("proj/durable");
    env.json(["workspace", "create", "durable"]);
    env.json(["workspace", "create", "other"]);
    env.json(["root", "add", "durable", proj.to_str().unwrap()]);
    env.json(["workspace", "switch", "durable"]);
    env.json(["setting", "set", "workspace.unassigned", "other"]);
    env.json(["workspace", "list"])
}

fn assert_everything_still_there(env: &TestEnv, before: &serde_json::Value) {
    assert_eq!(&env.json(["workspace", "list"]), before);
    assert_eq!(before["active"], "durable");
    // More fields (default, allowed values) may follow; these two are the contract.
    let got = env.json(["setting", "get", "workspace.unassigned"]);
    assert_eq!(
        (&got["key"], &got["value"]),
        (&json!("workspace.unassigned"), &json!("other"))
    );
    let proj = env.dir("proj/durable");
    assert_eq!(
        env.json(["root", "list"]),
        json!({"roots": [{"workspace": "durable", "path": proj}]})
    );
}

#[test]
fn status_without_a_daemon_says_not_running_and_starts_none() {
    let env = TestEnv::new();
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["running"], false);
    assert_eq!(status["pid"], json!(null));
    assert_eq!(status["version"], json!(null));
    assert_eq!(status["socket"], json!(env.socket()));
    assert_eq!(status["data_dir"], json!(env.data_dir()));
    assert_eq!(env.daemon_pids(), Vec::<u32>::new());
    assert!(!env.socket().exists());
}

#[test]
fn the_first_call_starts_the_daemon_and_status_describes_it() {
    let env = TestEnv::new();
    assert!(env.daemon_pids().is_empty());
    let r = env.json(["resolve"]);
    assert_eq!(r["workspace"], "default");
    assert_eq!(r["reason"], "active");
    let pid = env.daemon_pid();
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["running"], true);
    assert_eq!(status["pid"], json!(pid));
    assert_eq!(status["version"], VERSION);
    assert_eq!(status["socket"], json!(env.socket()));
    assert_eq!(status["data_dir"], json!(env.data_dir()));
    // Status never starts a second one.
    assert_eq!(env.daemon_pids(), vec![pid]);
}

// The session and the inherited descriptors are read from /proc.
#[cfg(unix)]
#[test]
fn the_daemon_is_detached_from_the_client_that_started_it() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let pid = env.daemon_pid();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // fields: state ppid pgrp session ...
    let session: u32 = fields[3].parse().unwrap();
    assert_eq!(session, pid, "berthd must lead its own session: {stat}");
    // Only stdio (/dev/null) and its own descriptors: no inherited pipes.
    let fds: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|l| l.display().to_string())
        .collect();
    for i in 0..3 {
        let l = std::fs::read_link(format!("/proc/{pid}/fd/{i}")).unwrap();
        assert_eq!(l, std::path::Path::new("/dev/null"), "fd {i}: {fds:?}");
    }
    assert!(
        !fds.iter().any(|l| l.starts_with("pipe:")),
        "berthd holds a pipe, so whoever waits on its spawner's pipes waits on it: {fds:?}"
    );
}

#[test]
fn twenty_four_concurrent_first_calls_start_exactly_one_daemon() {
    let env = TestEnv::new();
    let children: Vec<_> = (0..24)
        .map(|_| {
            let mut cmd = env.berth(["--json", "resolve"]);
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            cmd.spawn().expect("spawn berth")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "a concurrent first call failed: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["workspace"], "default");
    }
    // Losers of the race exit on their own; wait for them, then exactly one.
    let settled = wait_until(Duration::from_secs(5), || {
        let p = env.daemon_pids();
        (p.len() == 1).then_some(()).ok_or(p)
    });
    assert!(settled.is_ok(), "daemons: {:?}", settled.unwrap_err());
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["pid"], json!(env.daemon_pid()));
}

#[test]
fn every_answered_write_survives_kill_9_and_the_next_call_restarts_the_daemon() {
    let env = TestEnv::new();
    let before = write_everything(&env);
    let pid = env.daemon_pid();
    kill(pid);
    env.wait_no_daemon(Duration::from_secs(5));
    // The killed daemon's socket is still there: a stale socket. (A Windows
    // pipe goes with its server.)
    #[cfg(unix)]
    assert!(env.socket().exists(), "{}", env.listing());
    assert_everything_still_there(&env, &before);
    let new = env.daemon_pid();
    assert_ne!(new, pid);
}

#[test]
fn daemon_stop_leaves_no_daemon_and_state_survives_the_restart() {
    let env = TestEnv::new();
    let before = write_everything(&env);
    let pid = env.daemon_pid();
    let out = env.json(["daemon", "stop"]);
    assert_eq!(out["stopped"], true, "{out}");
    env.wait_no_daemon(Duration::from_secs(5));
    assert!(!is_live_berthd(pid));
    assert!(
        !env.socket().exists(),
        "a stopped daemon removes its socket"
    );
    assert_eq!(env.json(["daemon", "status"])["running"], false);
    // Stopping again is not an error: there is nothing to stop.
    assert_eq!(env.json(["daemon", "stop"])["stopped"], false);
    assert_everything_still_there(&env, &before);
    assert_ne!(env.daemon_pid(), pid);
}

// A socket file outliving its server is Unix's: a Windows pipe goes with it.
#[cfg(unix)]
#[test]
fn a_stale_socket_file_from_a_crash_is_replaced() {
    let env = TestEnv::new();
    // A socket nobody listens on, as a crashed daemon leaves it.
    let stale = std::os::unix::net::UnixListener::bind(env.socket()).expect("bind");
    drop(stale);
    let stale_ino = std::fs::metadata(env.socket()).unwrap().ino();
    let r = env.json(["resolve"]);
    assert_eq!(r["reason"], "active");
    let meta = std::fs::symlink_metadata(env.socket()).unwrap();
    assert_ne!(meta.ino(), stale_ino, "the stale socket was not replaced");
    assert_eq!(env.daemon_pids().len(), 1);
}

// Unix modes, and a derived socket path (on Windows the user's one pipe).
#[cfg(unix)]
#[test]
fn the_socket_folder_is_0700_and_the_socket_0600() {
    // No BERTH_SOCKET: the daemon derives <XDG_RUNTIME_DIR>/berth/berthd.sock
    // and creates the folder itself.
    let env = TestEnv::without_berth_socket();
    let folder = env.runtime_dir().join("berth");
    assert!(!folder.exists());
    let status = env.json(["daemon", "start"]);
    assert_eq!(status["socket"], json!(env.socket()));
    assert_eq!(mode(&folder), 0o700, "socket folder mode");
    assert_eq!(mode(&env.socket()), 0o600, "socket mode");
    assert!(
        std::fs::symlink_metadata(env.socket())
            .unwrap()
            .file_type()
            .is_socket()
    );
    // Client and daemon agree on the derived path.
    assert_eq!(
        env.json(["daemon", "status"])["socket"],
        json!(env.socket())
    );
}

/// A runtime dir made by hand (mkdir's 0755) still holds the socket: docs/reference.md ("Programs,
/// files and environment") names `$XDG_RUNTIME_DIR/berth/berthd.sock`, and the `berth` folder
/// inside is berth's own, 0700.
// Unix modes and XDG_RUNTIME_DIR; a Windows pipe has no folder.
#[cfg(unix)]
#[test]
fn a_readable_runtime_dir_of_ours_still_holds_the_derived_socket() {
    let env = TestEnv::without_berth_socket();
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let status = env.json(["daemon", "start"]);
    assert_eq!(
        status["socket"],
        json!(env.runtime_dir().join("berth").join("berthd.sock"))
    );
    assert_eq!(mode(&env.runtime_dir().join("berth")), 0o700);
    assert_eq!(
        mode(&env.runtime_dir()),
        0o755,
        "the runtime dir is left as it was"
    );
}

// Unix modes; a Windows pipe has no folder.
#[cfg(unix)]
#[test]
fn a_socket_folder_others_can_write_is_refused_with_what_to_do() {
    let env = TestEnv::new();
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o775)).unwrap();
    // The client refuses it before starting a daemon there.
    let _ = env.run_berth(["resolve"]).failure(1).stderr_has(&[
        "can be written by group or others",
        "mode 775",
        "chmod go-w",
    ]);
    assert!(env.daemon_pids().is_empty());
    assert!(!env.socket().exists());
}

/// A folder the user made for an explicit `BERTH_SOCKET` (mkdir's 0755) is
/// used as it is: nobody else can plant or swap the socket in it.
// Unix modes; a Windows pipe has no folder.
#[cfg(unix)]
#[test]
fn a_socket_folder_the_user_made_readable_is_used_and_left_as_it_was() {
    let env = TestEnv::new();
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(env.json(["resolve"])["workspace"], "default");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&env.runtime_dir()), 0o755);
    assert_eq!(mode(&env.socket()), 0o600);
}

/// A client running as `nobody` (uid 65534) through `setpriv`, with the
/// socket's folder and the socket opened to everyone, so only the daemon's
/// peer-uid check stands between them. The client is a raw one
/// (`fake-berthd --dial`): berth's own clients refuse such a folder before
/// connecting at all.
// Unix modes and setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run a client as another user"
)]
fn another_user_is_refused_and_the_daemon_still_serves_its_own() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "mine"]);
    let pid = env.daemon_pid();
    std::fs::set_permissions(env.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(env.socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let dial_as = |uid: &str| {
        let mut cmd = env.command("setpriv");
        cmd.args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
        ])
        .arg(bin("fake-berthd"))
        .arg("--dial")
        .arg(env.socket())
        .current_dir("/");
        env.run(cmd).success().stdout()
    };
    // The same dial as root is answered: the refusal below is about the uid.
    assert_eq!(dial_as("0").trim(), "answered");
    assert_eq!(dial_as("65534").trim(), "closed");
    // The daemon logged the refusal and serves root as before.
    let logged = wait_until(Duration::from_secs(5), || {
        env.log()
            .contains("refused a connection from another user")
            .then_some(())
            .ok_or(())
    });
    assert!(logged.is_ok(), "log:\n{}", env.log());
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(env.json(["workspace", "show", "mine"])["name"], "mine");
    assert_eq!(env.daemon_pids(), vec![pid]);
}

// SIGTERM is Unix's.
#[cfg(unix)]
#[test]
fn sigterm_ends_the_daemon_promptly_and_removes_its_socket() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let pid = env.daemon_pid();
    let start = Instant::now();
    signal(pid, libc::SIGTERM);
    env.wait_no_daemon(Duration::from_secs(3));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "took {:?}",
        start.elapsed()
    );
    let gone = wait_until(Duration::from_secs(1), || {
        (!env.socket().exists()).then_some(()).ok_or(())
    });
    assert!(gone.is_ok(), "socket left behind:\n{}", env.listing());
    assert_eq!(env.json(["daemon", "status"])["running"], false);
}

#[test]
fn a_stopped_daemon_is_reported_with_force_and_stop_force_recovers() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "kept"]);
    let pid = env.daemon_pid();
    pause(pid);

    let wedged = env.run_berth(["workspace", "list"]).failure(1);
    assert!(
        wedged.elapsed < Duration::from_secs(12),
        "the client took {:?} to give up",
        wedged.elapsed
    );
    let wedged = wedged.stderr_has(&["--force", &pid.to_string()]);
    drop(wedged);

    // No SIGCONT (no resumed thread): --force must deal with it as it is.
    let out = env.json(["daemon", "stop", "--force"]);
    assert_eq!(out["stopped"], true, "{out}");
    env.wait_no_daemon(Duration::from_secs(5));
    assert!(!is_live_berthd(pid));

    let list = env.json(["workspace", "list"]);
    assert_eq!(names(&list), ["default", "kept"]);
    let fresh = env.daemon_pid();
    assert_ne!(fresh, pid);
}

#[test]
fn daemon_stop_without_force_on_a_stopped_daemon_fails_and_says_force() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let pid = env.daemon_pid();
    pause(pid);
    let _ = env
        .run_berth(["daemon", "stop"])
        .failure(1)
        .stderr_has(&["--force"]);
    assert!(is_live_berthd(pid), "stop without --force must not kill");
}

fn assert_refused_and_untouched(env: &TestEnv, bytes: &[u8], needles: &[&str]) {
    for args in [&["resolve"][..], &["workspace", "list"][..]] {
        let run = env.run_berth(args).failure(1).stderr_has(needles);
        assert!(
            run.stderr().contains(env.db().to_str().unwrap()),
            "the message must name the file: {}",
            run.stderr()
        );
    }
    assert_eq!(
        std::fs::read(env.db()).unwrap(),
        bytes,
        "the database changed"
    );
    assert!(
        env.daemon_pids().is_empty(),
        "a daemon runs on a bad database"
    );
}

#[test]
fn a_garbage_database_is_reported_with_what_to_do_and_left_byte_identical() {
    let env = TestEnv::new();
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 13) as u8).collect();
    std::fs::write(env.db(), &garbage).unwrap();
    assert_refused_and_untouched(&env, &garbage, &["damaged", "Move it aside"]);
}

#[test]
fn a_database_from_a_newer_berth_is_reported_with_what_to_do_and_left_byte_identical() {
    let env = TestEnv::new();
    {
        let conn = rusqlite::Connection::open(env.db()).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let bytes = std::fs::read(env.db()).unwrap();
    assert_refused_and_untouched(&env, &bytes, &["schema version 99", "Upgrade berth"]);
}

#[test]
fn a_second_berthd_exits_and_leaves_the_first_serving() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let first = env.daemon_pid();
    let mut cmd = env.command(bin("berthd"));
    cmd.arg("--foreground");
    let second = env.run(cmd);
    assert_eq!(second.code(), Some(0), "{}", second.stderr());
    assert_eq!(env.daemon_pids(), vec![first]);
    assert_eq!(env.json(["daemon", "status"])["pid"], json!(first));
}

#[test]
fn daemon_start_starts_one_and_starting_again_keeps_it() {
    let env = TestEnv::new();
    let started = env.json(["daemon", "start"]);
    assert_eq!(started["running"], true);
    let pid = env.daemon_pid();
    assert_eq!(started["pid"], json!(pid));
    assert_eq!(env.json(["daemon", "start"])["pid"], json!(pid));
    assert_eq!(env.daemon_pids(), vec![pid]);
}

#[test]
fn a_client_meeting_an_older_daemon_replaces_it() {
    let env = TestEnv::new();
    // `berthd` without --foreground starts a detached copy and waits for it.
    let mut cmd = env.command(bin("berthd"));
    cmd.args(["--advertise-version", "0.0.1"]);
    let _ = env.run(cmd).success();
    let old = env.daemon_pid();
    assert_eq!(env.json(["daemon", "status"])["version"], "0.0.1");
    let run = env.run_berth(["--json", "workspace", "list"]).success();
    assert_eq!(run.json()["active"], "default");
    assert!(
        run.stderr().contains("restarting berthd"),
        "{}",
        run.stderr()
    );
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["version"], VERSION);
    assert_ne!(status["pid"], json!(old));
    assert_eq!(env.daemon_pids().len(), 1);
}

#[test]
fn the_daemon_logs_to_a_file_in_the_state_folder() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let log = env.log();
    assert!(
        log.contains("berthd ready"),
        "log at {}:\n{log}",
        env.log_file().display()
    );
}

#[test]
fn status_and_stop_treat_a_stale_socket_as_no_daemon() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    kill(env.daemon_pid());
    env.wait_no_daemon(Duration::from_secs(5));
    // A Windows pipe goes with its server.
    #[cfg(unix)]
    assert!(env.socket().exists());
    assert_eq!(env.json(["daemon", "status"])["running"], false);
    assert_eq!(env.json(["daemon", "stop"])["stopped"], false);
    assert_eq!(env.json(["daemon", "stop", "--force"])["stopped"], false);
    assert!(
        env.daemon_pids().is_empty(),
        "status or stop started a daemon"
    );
}

/// A temp cleaner removed the socket of a running daemon: it holds the lock
/// but nobody can reach it. A daemon that holds the lock but no longer answers
/// in time is reported with how to stop it, `--force` (docs/reference.md, "The daemon").
// A Windows pipe cannot be removed while its server runs.
#[cfg(unix)]
#[test]
fn a_daemon_whose_socket_vanished_is_reported_with_force_and_stop_force_recovers() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "kept"]);
    let pid = env.daemon_pid();
    std::fs::remove_file(env.socket()).unwrap();
    let run = env.run_berth(["workspace", "list"]).failure(1);
    assert!(
        run.elapsed < Duration::from_secs(12),
        "took {:?}",
        run.elapsed
    );
    let _ = run.stderr_has(&["--force"]);
    assert_eq!(
        env.daemon_pids(),
        vec![pid],
        "the unreachable daemon was replaced behind its lock"
    );
    let _ = env.run_berth(["daemon", "stop", "--force"]).success();
    env.wait_no_daemon(Duration::from_secs(5));
    assert_eq!(names(&env.json(["workspace", "list"])), ["default", "kept"]);
}

#[test]
fn concurrent_writes_from_many_clients_are_all_kept() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let children: Vec<_> = (0..16)
        .map(|i| {
            let mut cmd = env.berth(["workspace", "create", &format!("w{i:02}")]);
            cmd.stdout(Stdio::null()).stderr(Stdio::piped());
            cmd.spawn().expect("spawn")
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    kill(env.daemon_pid());
    env.wait_no_daemon(Duration::from_secs(5));
    let mut expected = vec!["default".to_string()];
    expected.extend((0..16).map(|i| format!("w{i:02}")));
    assert_eq!(names(&env.json(["workspace", "list"])), expected);
}

/// A daemon that is exiting still holds the lock for a moment, so a new one
/// started then answers `busy` and nobody would ever serve. The client must
/// start another once the lock comes free.
#[test]
fn a_busy_answer_from_a_daemon_on_its_way_out_is_followed_by_a_new_start() {
    let env = TestEnv::new();
    let lock_path = env.lock_file();
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap();
    assert!(berth_client::instance_lock::try_lock(&lock).unwrap());
    let client = env
        .berth(["workspace", "list", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let the client's first daemon find the lock taken.
    let log = env.root().join("state").join("berth").join("berthd.log");
    wait_until(Duration::from_secs(10), || {
        match std::fs::read_to_string(&log) {
            Ok(text) if text.contains("another berthd holds the lock") => Ok(()),
            _ => Err(()),
        }
    })
    .expect("the client's first daemon reports the lock taken");
    drop(lock);
    let out = client.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.daemon_pids().len(), 1);
}

/// `RUST_LOG`-style filters (docs/reference.md, "The daemon"). `BERTH_LOG` sets the daemon's
/// filter, else `RUST_LOG`, else `info`. (The harness sets `BERTH_LOG=debug`; each case starts
/// without it.)
#[test]
fn the_log_filter_comes_from_berth_log_then_rust_log() {
    for (vars, ready_logged) in [
        (vec![], true),
        (vec![("RUST_LOG", "warn")], false),
        (vec![("RUST_LOG", "warn"), ("BERTH_LOG", "info")], true),
        (vec![("BERTH_LOG", "warn")], false),
    ] {
        let env = TestEnv::new();
        let mut cmd = env.berth(["daemon", "start"]);
        cmd.env_remove("BERTH_LOG").envs(vars.iter().copied());
        let _ = env.run(cmd).success();
        let _ = env.run_berth(["daemon", "stop"]).success();
        assert_eq!(
            env.log().contains("berthd ready"),
            ready_logged,
            "{vars:?}:\n{}",
            env.log()
        );
    }
}

/// A daemon whose data folder is deleted, or moved away and replaced, stops
/// within seconds: it would otherwise keep writing a registry no client finds,
/// and a second daemon could take the same path. Unix only: Windows refuses to
/// delete or move a folder holding files the daemon has open.
#[cfg(unix)]
#[test]
fn a_daemon_whose_data_folder_is_deleted_or_replaced_stops() {
    let env = TestEnv::new();
    let _ = env.run_berth(["workspace", "create", "first"]).success();
    assert_eq!(env.daemon_pids().len(), 1);
    std::fs::remove_dir_all(env.data_dir()).unwrap();
    env.wait_no_daemon(Duration::from_secs(20));

    let _ = env.run_berth(["workspace", "create", "second"]).success();
    assert_eq!(env.daemon_pids().len(), 1);
    std::fs::rename(env.data_dir(), env.root().join("data.moved")).unwrap();
    std::fs::create_dir(env.data_dir()).unwrap();
    env.wait_no_daemon(Duration::from_secs(20));
    // The moved registry is intact, and the next client starts a daemon on the new folder.
    assert!(env.root().join("data.moved").join("berth.db").is_file());
    let listed = env.run_berth(["workspace", "list"]).success().stdout();
    assert!(!listed.contains("second"), "{listed}");
}
