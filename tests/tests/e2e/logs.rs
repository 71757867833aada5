//! Log files only their user may read: a log names the user's folders and
//! workspaces, and the machine may have other users.

// Unix modes; on Windows the log's folder inherits the user's access list.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use berth_tests::{TestEnv, bin};

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn the_daemon_log_is_0600_in_a_0700_folder() {
    let env = TestEnv::new();
    let _ = env.run_berth(["resolve"]).success();
    let log = env.log_file();
    assert_eq!(mode(&log), 0o600, "{}", env.listing());
    assert_eq!(mode(log.parent().unwrap()), 0o700);
}

#[test]
fn a_log_an_older_berth_left_readable_is_narrowed_and_kept() {
    let env = TestEnv::new();
    let log = env.log_file();
    let dir = log.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(&log, "an older line\n").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let _ = env.run_berth(["resolve"]).success();
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(dir), 0o700);
    assert!(env.log().starts_with("an older line\n"), "{}", env.log());
}

#[test]
fn the_hook_log_is_0600_in_a_0700_folder() {
    let env = TestEnv::new();
    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("session-start");
    let run = env.run_with_stdin(cmd, b"{}");
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let log = env
        .root()
        .join("state")
        .join("berth")
        .join("berth-hook.log");
    assert_eq!(mode(&log), 0o600, "{}", env.listing());
    assert_eq!(mode(log.parent().unwrap()), 0o700);
}
