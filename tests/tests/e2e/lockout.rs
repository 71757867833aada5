//! Another user makes the socket folder a user without a runtime folder
//! derives, `/tmp/berth-<uid>`, before berth ever runs, and listens in it.
//! berth still works: the daemon listens in a fresh private folder of its
//! own, which clients find through the data folder's record, and nothing is
//! ever sent to, or even connected to, the other user's folder (ADR 0042).
//!
//! The victim runs as a uid of its own (`TestEnv::as_throwaway_user`), so
//! its `/tmp/berth-<uid>` is no other test's; the squatter is `nobody`
//! running `fake-berthd`, which counts every connection it accepts.
//! Unix only: Windows has no such folder (its pipe is ADR 0042's last part).

#![cfg(unix)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_tests::{TestEnv, bin};
use serde_json::{Value, json};

use crate::impostor::{Impostor, NOBODY, mcp_calls, nobodys_folder};

/// Makes `/tmp/berth-<uid>` as `nobody` would (its owner, mode 0755) and
/// starts the fake daemon in it.
fn squat(env: &TestEnv) -> Impostor {
    let _ = nobodys_folder(env, "unused");
    let dir = PathBuf::from(format!("/tmp/berth-{}", env.uid()));
    std::fs::create_dir(&dir).expect("the throwaway uid's /tmp folder is free");
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    Impostor::start(env, &dir.join("berthd.sock"))
}

/// The folder of its own the running daemon listens in, checked to be a
/// fresh private one beside the squatted folder: `/tmp/berth-<uid>-XXXXXX`,
/// the victim's, 0700, no link. `daemon status` says why, both ways.
fn own_folder(env: &TestEnv, fake: &Impostor) -> PathBuf {
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["running"], true, "{status}");
    let socket = PathBuf::from(status["socket"].as_str().expect("a socket"));
    let dir = socket.parent().expect("a folder").to_path_buf();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let prefix = format!("berth-{}-", env.uid());
    assert!(
        dir.parent() == Some(Path::new("/tmp")) && name.starts_with(&prefix),
        "{status}"
    );
    assert!(
        name.len() > prefix.len() + 5,
        "an unpredictable name: {name}"
    );
    let meta = std::fs::symlink_metadata(&dir).unwrap();
    assert!(meta.is_dir(), "{dir:?}");
    assert_eq!(meta.uid(), env.uid(), "{dir:?}");
    assert_eq!(meta.mode() & 0o7777, 0o700, "{dir:?}");
    assert_eq!(
        status["fallback"]["instead_of"],
        json!(fake.socket),
        "{status}"
    );
    let because = status["fallback"]["because"].as_str().unwrap_or_default();
    assert!(because.contains("belongs to uid 65534"), "{status}");
    let text = env.run_berth(["daemon", "status"]).success().stdout();
    for part in [
        socket.display().to_string(),
        fake.socket.display().to_string(),
        "belongs to uid 65534".into(),
    ] {
        assert!(text.contains(&part), "{part:?} missing from:\n{text}");
    }
    dir
}

fn nothing_reached(fake: &Impostor) {
    assert_eq!(fake.connections(), 0, "a client connected to the squatter");
    assert_eq!(fake.received(), 0, "the squatter received bytes");
    assert!(!fake.stop_ran(), "the squatter's stop command ran");
}

/// The CLI, both hooks and an MCP session work; `daemon status` and
/// `doctor` say where the daemon listens and why; one daemon; the
/// squatter saw no connection.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the squatter and the victim as other users"
)]
fn a_tmp_folder_another_user_made_first_locks_no_client_out() {
    let env = TestEnv::as_throwaway_user();
    let fake = squat(&env);

    assert_eq!(env.json(["resolve"])["workspace"], "default");
    let dir = own_folder(&env, &fake);

    let home = env.home();
    for (event, name) in [("session-start", "SessionStart"), ("stop", "Stop")] {
        let payload = json!({"session_id": "s1", "cwd": home, "hook_event_name": name});
        let mut cmd = env.command(bin("berth-hook"));
        cmd.arg(event);
        let hook = env
            .run_with_stdin(cmd, payload.to_string().as_bytes())
            .success();
        assert!(!hook.stderr().contains("refusing"), "{}", hook.stderr());
        if event == "session-start" {
            let doc: Value = serde_json::from_str(&hook.stdout()).expect("one JSON document");
            let context = doc["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap_or_default();
            assert!(context.contains("scratch folder"), "{doc}");
        }
    }

    let said = mcp_calls(
        env.command(bin("berth-mcp")),
        &[
            r#"{"name":"list_workspaces","arguments":{}}"#,
            r#"{"name":"use_workspace","arguments":{"name":"from-mcp"}}"#,
        ],
    );
    assert!(
        said.contains("default") && !said.contains("sent it nothing"),
        "{said}"
    );
    let listed = env.json(["workspace", "list"]);
    assert_eq!(berth_tests::names(&listed), ["default", "from-mcp"]);

    let doctor = env.run_berth(["--json", "doctor"]).json();
    let checks = doctor["checks"].as_array().expect("checks");
    let socket = checks
        .iter()
        .find(|c| c["name"] == "daemon")
        .unwrap_or_else(|| panic!("no daemon check in {doctor}"));
    let detail = socket["detail"].as_str().unwrap_or_default();
    assert_eq!(socket["status"], "ok", "{socket}");
    for part in [
        dir.display().to_string(),
        fake.socket.display().to_string(),
        "belongs to uid 65534".into(),
    ] {
        assert!(detail.contains(&part), "{part:?} missing from {socket}");
    }

    assert_eq!(env.daemon_pids().len(), 1, "one daemon");
    nothing_reached(&fake);
}

/// Clients racing to start the daemon past the squatted folder end with one
/// daemon, every one answered; a stopped daemon takes its folder with it,
/// and the next round gets a fresh one.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the squatter and the victim as other users"
)]
fn clients_racing_past_a_squatted_tmp_folder_start_one_daemon() {
    let env = TestEnv::as_throwaway_user();
    let fake = squat(&env);
    let mut folders = Vec::new();
    for round in 0..2 {
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let cmd = env.berth(["--json", "resolve"]);
                    barrier.wait();
                    let run = env.run(cmd).success();
                    assert_eq!(run.json()["workspace"], "default", "round {round}");
                });
            }
        });
        assert_eq!(env.daemon_pids().len(), 1, "round {round}: one daemon");
        let dir = own_folder(&env, &fake);
        let _ = env.run_berth(["daemon", "stop"]).success();
        env.wait_no_daemon(Duration::from_secs(5));
        assert!(!dir.exists(), "a stopped daemon left {dir:?}");
        folders.push(dir);
    }
    assert_ne!(folders[0], folders[1], "each daemon makes a fresh folder");
    nothing_reached(&fake);
}

/// A daemon killed with SIGKILL leaves its folder; the next daemon removes
/// it and makes a fresh one. Meanwhile `BERTH_SOCKET` naming the squatted
/// socket is refused, saying that the user named it, and starts nothing.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the squatter and the victim as other users"
)]
fn a_killed_daemons_folder_is_removed_and_berth_socket_naming_the_squatted_one_refuses() {
    let env = TestEnv::as_throwaway_user();
    let fake = squat(&env);
    assert_eq!(env.json(["resolve"])["workspace"], "default");
    let first = own_folder(&env, &fake);
    assert!(berth_tests::kill_and_wait(
        env.daemon_pid(),
        Duration::from_secs(5)
    ));
    assert!(
        first.join("berthd.sock").exists(),
        "a killed daemon leaves its socket"
    );

    let mut named = env.berth(["resolve"]);
    named.env("BERTH_SOCKET", &fake.socket);
    let refused = env.run(named).failure(1);
    let err = refused.stderr();
    for part in [
        "refusing to talk to the berthd socket",
        "belongs to uid 65534",
        "BERTH_SOCKET names this socket",
    ] {
        assert!(err.contains(part), "{part:?} missing from:\n{err}");
    }
    assert!(env.daemon_pids().is_empty(), "a daemon was started");

    assert_eq!(env.json(["resolve"])["workspace"], "default");
    let second = own_folder(&env, &fake);
    assert_ne!(first, second);
    assert!(
        !first.exists(),
        "the killed daemon's folder is left: {first:?}"
    );
    nothing_reached(&fake);
}
