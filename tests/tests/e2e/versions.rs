//! Version skew between clients and the daemon (client and daemon
//! exchange versions; a client meeting an older daemon restarts it or says
//! how: docs/reference.md, "The daemon"). An older daemon replaced by a newer client is in
//! `daemon.rs`; a newer daemon meeting an old client cannot be run end to
//! end (there is no old client binary), so its refusal is unit-tested at
//! the RPC level in `daemon/src/rpc/server.rs` (`check_client_version`).

use berth_tests::{TestEnv, VERSION, bin};
use serde_json::json;

/// A newer daemon on the same protocol serves this (older) client as it
/// is: replacing it would downgrade it, and two clients of different
/// versions would take turns restarting each other.
#[test]
fn a_newer_daemon_on_the_same_protocol_serves_an_older_client_and_is_kept() {
    let env = TestEnv::new();
    let mut cmd = env.command(bin("berthd"));
    cmd.args(["--advertise-version", "99.0.0"]);
    let _ = env.run(cmd).success();
    let pid = env.daemon_pid();
    let run = env.run_berth(["--json", "workspace", "list"]).success();
    assert_eq!(run.json()["active"], "default");
    assert!(
        !run.stderr().contains("restarting"),
        "an older client restarted a newer daemon: {}",
        run.stderr()
    );
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["version"], "99.0.0");
    assert_eq!(status["pid"], json!(pid));
    assert_eq!(env.daemon_pids(), vec![pid]);
}

/// Replacing an older daemon keeps what is stored, and the message names
/// both versions.
#[test]
fn replacing_an_older_daemon_keeps_the_registry_and_names_both_versions() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "kept"]);
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(std::time::Duration::from_secs(5));
    let mut cmd = env.command(bin("berthd"));
    cmd.args(["--advertise-version", "0.0.1"]);
    let _ = env.run(cmd).success();
    let old = env.daemon_pid();
    let run = env
        .run_berth(["--json", "workspace", "list"])
        .success()
        .stderr_has(&["0.0.1", VERSION, "restarting berthd"]);
    assert_eq!(berth_tests::names(&run.json()), ["default", "kept"]);
    assert_ne!(env.daemon_pid(), old);
    assert_eq!(env.json(["daemon", "status"])["version"], VERSION);
}
