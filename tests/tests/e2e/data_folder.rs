//! The data folder, its database and the path to them are the user's alone, or berth uses
//! none of it (docs/decisions/0036-berths-folders-are-the-users-alone.md): another user who
//! could change the registry could set `hooks.stop_command`, which the hook runs as the user.
//! Each test puts the bad thing at the environment's own data folder path, so every daemon a
//! client might start there is one the harness sees (and none may be).

// Owners, modes and setpriv's uid 65534 are Unix's.
#![cfg(unix)]

use std::os::unix::fs::{PermissionsExt, chown, lchown, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_tests::{Run, TestEnv, bin};

use crate::impostor::mcp_calls;

const NOBODY: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The file the seeded stop command writes in the home of whoever runs it.
fn pwned(env: &TestEnv) -> PathBuf {
    env.home().join("PWNED")
}

/// `berth-hook stop` for a session in the home.
fn hook_stop(env: &TestEnv) -> Run {
    let payload = format!(
        r#"{{"session_id": "s1", "cwd": "{}", "hook_event_name": "Stop"}}"#,
        env.home().display()
    );
    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("stop");
    env.run_with_stdin(cmd, payload.as_bytes())
}

/// A registry whose `hooks.stop_command` is `id > ~/PWNED`, as another user would seed it: made
/// by a real berth in an environment of its own, where the hook is seen to run the command.
fn seeded_registry() -> Vec<u8> {
    let seed = TestEnv::new();
    let _ = seed
        .run_berth(["setting", "set", "hooks.stop_command", "id > ~/PWNED"])
        .success();
    let _ = hook_stop(&seed).success();
    assert!(
        pwned(&seed).exists(),
        "the seeded registry's stop command must run where the folder is the user's:\n{}",
        seed.listing()
    );
    let _ = seed.run_berth(["daemon", "stop"]).success();
    seed.wait_no_daemon(Duration::from_secs(5));
    assert!(
        !Path::new(&format!("{}-wal", seed.db().display())).exists(),
        "a clean stop leaves no WAL"
    );
    std::fs::read(seed.db()).expect("the seeded berth.db")
}

/// Replaces the environment's data folder with one `nobody` owns, mode 0777, holding `db`.
fn nobodys_data_folder(env: &TestEnv, db: &[u8]) {
    let dir = env.data_dir();
    std::fs::remove_dir(&dir).expect("the harness's empty data folder");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(env.db(), db).unwrap();
    chown(env.db(), Some(NOBODY), Some(NOBODY)).unwrap();
    chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    chmod(&dir, 0o777);
}

/// What the data folder holds, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The hook runs nothing and says nothing; `berth resolve` and `berthd` refuse, with every
/// part of `expect` in their message; no daemon runs, and the folder holds what it held.
fn everyone_refuses(env: &TestEnv, expect: &[&str]) {
    let before = names_in(&env.data_dir());
    let db = std::fs::read(env.db()).ok();
    let hook = hook_stop(env).success();
    assert_eq!(hook.stdout(), "", "the hook prints nothing");
    assert!(
        !pwned(env).exists(),
        "the registry's stop command ran as the user"
    );
    let resolve = env.run_berth(["resolve"]).failure(1);
    let daemon = env.run(env.command(bin("berthd"))).failure(1);
    for (who, run) in [("berth resolve", &resolve), ("berthd", &daemon)] {
        for part in expect {
            if !run.stderr().contains(part) {
                run.fail(&format!("{who} must say {part:?}"));
            }
        }
    }
    let mcp = mcp_calls(
        env.command(bin("berth-mcp")),
        &[r#"{"name":"write","arguments":{"path":"secret.txt","content":"the user's secret"}}"#],
    );
    assert!(
        mcp.contains("berth started no daemon and read nothing of its data")
            && mcp.contains(&expect[0].replace('"', "\\\"")),
        "berth-mcp must quote the refusal:\n{mcp}"
    );
    assert!(
        env.daemon_pids().is_empty(),
        "a daemon was started on the folder"
    );
    assert_eq!(names_in(&env.data_dir()), before, "nothing was made there");
    assert_eq!(
        std::fs::read(env.db()).ok(),
        db,
        "the database is untouched"
    );
}

// Files of another user, made through chown.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to make files of another user"
)]
fn a_data_folder_another_user_owns_and_opened_to_all_is_refused_and_its_stop_command_never_runs() {
    let env = TestEnv::new();
    nobodys_data_folder(&env, &seeded_registry());
    let dir = env.data_dir();
    everyone_refuses(
        &env,
        &[
            &format!(
                "refusing the data folder {dir:?}: it belongs to uid 65534, not to you (uid 0), and has mode 0777"
            ),
            "berth neither read nor wrote anything there",
            &format!(
                "as root: `chown -R 0 {d} && chmod go-w {d}`",
                d = dir.display()
            ),
            "otherwise set BERTH_DATA_DIR to a folder of your own",
        ],
    );
    // The hook says why in its log.
    let log = std::fs::read_to_string(env.root().join("state/berth/berth-hook.log")).unwrap();
    assert!(
        log.contains("berth used no daemon, so ran nothing: refusing the data folder"),
        "{log}"
    );
}

// Files of another user, made through chown.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to make files of another user"
)]
fn a_database_another_user_owns_in_our_own_folder_is_refused() {
    let env = TestEnv::new();
    chmod(&env.data_dir(), 0o700);
    std::fs::write(env.db(), seeded_registry()).unwrap();
    chown(env.db(), Some(NOBODY), Some(NOBODY)).unwrap();
    chmod(&env.db(), 0o644);
    everyone_refuses(
        &env,
        &[
            &format!(
                "refusing the database file {:?}: it belongs to uid 65534, not to you (uid 0), and has mode 0644",
                env.db()
            ),
            &format!(
                "move it aside (`mv {d} {d}.foreign`): berth then starts an empty registry",
                d = env.db().display()
            ),
        ],
    );
}

#[test]
fn a_data_folder_of_ours_that_group_can_write_is_refused_until_it_is_closed() {
    let env = TestEnv::new();
    chmod(&env.data_dir(), 0o770);
    let dir = env.data_dir();
    everyone_refuses(
        &env,
        &[
            &format!(
                "refusing the data folder {dir:?}: it is yours, but group or others can write it (mode 0770)"
            ),
            &format!("Run `chmod go-w {}`", dir.display()),
        ],
    );
    // The fix, and mkdir's 0755 is the user's own choice.
    chmod(&dir, 0o755);
    assert_eq!(env.json(["resolve"])["workspace"], "default");
    assert!(env.db().exists());
}

// A link of another user, made through lchown.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to make a link of another user"
)]
fn a_data_folder_reached_through_a_link_another_user_owns_is_refused() {
    let env = TestEnv::new();
    let real = env.root().join("real-data");
    std::fs::rename(env.data_dir(), &real).unwrap();
    chmod(&real, 0o700);
    std::fs::write(real.join("berth.db"), seeded_registry()).unwrap();
    symlink(&real, env.data_dir()).unwrap();
    lchown(env.data_dir(), Some(NOBODY), Some(NOBODY)).unwrap();
    let link = env.data_dir();
    everyone_refuses(
        &env,
        &[
            &format!(
                "refusing the data folder {link:?}: it is reached through the symlink {link:?} (to {real:?}), which belongs to uid 65534, not to you (uid 0)"
            ),
            &format!(
                "set BERTH_DATA_DIR={r}) or replace the link with one of your own (`rm {l} && ln -s {r} {l}`)",
                r = real.display(),
                l = link.display()
            ),
        ],
    );
    // The fix keeps the registry: the link of our own reaches it, stop command and all.
    std::fs::remove_file(&link).unwrap();
    symlink(&real, &link).unwrap();
    let _ = hook_stop(&env).success();
    assert!(pwned(&env).exists(), "the user's own registry works again");
}

// A folder of another user, made through chown.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to make a folder of another user"
)]
fn a_state_folder_another_user_owns_is_refused_and_no_log_is_written_there() {
    let env = TestEnv::new();
    let state = env.root().join("state").join("berth");
    std::fs::create_dir(&state).unwrap();
    chown(&state, Some(NOBODY), Some(NOBODY)).unwrap();
    chmod(&state, 0o777);
    let _ = env.run_berth(["resolve"]).failure(1).stderr_has(&[
        &format!(
            "berthd could not start: refusing the state folder {state:?}: it belongs to uid 65534, not to you (uid 0), and has mode 0777"
        ),
        "otherwise set XDG_STATE_HOME to a folder of your own",
    ]);
    let _ = hook_stop(&env).success();
    assert!(env.daemon_pids().is_empty(), "a daemon runs");
    assert!(names_in(&state).is_empty(), "a log was written there");
}

/// `berth --json doctor`'s check `name`.
fn doctor_check(env: &TestEnv, name: &str) -> (Run, serde_json::Value) {
    let run = env.run_berth(["--json", "doctor"]);
    let doc = run.json();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name:?} in {doc:#}"))
        .clone();
    (run, check)
}

#[test]
fn doctor_names_a_link_to_our_own_folder_and_berth_keeps_using_it() {
    let env = TestEnv::new();
    let real = env.root().join("real-data");
    std::fs::rename(env.data_dir(), &real).unwrap();
    chmod(&real, 0o700);
    symlink(&real, env.data_dir()).unwrap();
    env.json(["workspace", "create", "kept"]);
    assert!(
        real.join("berth.db").exists(),
        "the registry is in the link's target"
    );
    let (run, check) = doctor_check(&env, "data folder");
    assert_eq!(run.code(), Some(0), "{}", run.stdout());
    assert_eq!(check["status"], "ok");
    assert_eq!(
        check["detail"],
        format!(
            "{} is a symlink to {r}; {r} is this user's, mode 0700, closed to others, so berth uses it",
            env.data_dir().display(),
            r = real.display()
        )
    );
    assert_eq!(env.json(["workspace", "show", "kept"])["name"], "kept");
}

// A folder of another user, made through chown.
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to make a folder of another user"
)]
fn doctor_names_a_link_to_another_users_folder_with_a_fix_that_keeps_the_data() {
    let env = TestEnv::new();
    let theirs = env.root().join("their-data");
    std::fs::rename(env.data_dir(), &theirs).unwrap();
    std::fs::write(theirs.join("berth.db"), seeded_registry()).unwrap();
    chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    chmod(&theirs, 0o755);
    symlink(&theirs, env.data_dir()).unwrap();
    let (run, check) = doctor_check(&env, "data folder");
    assert_eq!(run.code(), Some(1), "{}", run.stdout());
    assert_eq!(check["status"], "problem");
    let t = theirs.display();
    assert_eq!(
        check["detail"],
        format!(
            "{} is a symlink to {t}: it leads to {theirs:?}, which belongs to uid 65534, not to you (uid 0), and has mode 0755",
            env.data_dir().display()
        )
    );
    assert_eq!(
        check["fix"],
        format!(
            "If it holds your data, have it given back to you (as root: `chown -R 0 {t} && chmod go-w {t}`); otherwise set BERTH_DATA_DIR to a folder of your own"
        )
    );
    let _ = env.run_berth(["resolve"]).failure(1);
    assert!(!pwned(&env).exists() && env.daemon_pids().is_empty());
}
