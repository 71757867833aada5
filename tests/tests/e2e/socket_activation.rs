//! A daemon started by systemd on the first connection (docs/decisions/0009-systemd-socket-activation.md):
//! it serves the listening socket handed over as descriptor 3, and a descriptor 3 that is not a
//! listening socket is refused with a clear error, not served.

use std::os::fd::AsRawFd;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use berth_tests::{TestEnv, bin, kill_and_wait};

/// `berthd --foreground` as systemd starts it: `fd` as descriptor 3, `LISTEN_FDS=1`, and
/// `LISTEN_PID` the daemon's own pid (a shell that `exec`s keeps its pid).
fn activated(env: &TestEnv, fd: std::os::fd::RawFd) -> Command {
    let mut cmd = env.command("/bin/sh");
    cmd.args([
        "-c",
        r#"export LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=berthd.socket; exec "$0" --foreground"#,
    ])
    .arg(bin("berthd"))
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    // SAFETY: between fork and exec only async-signal-safe calls (dup2, fcntl) are made.
    unsafe {
        cmd.pre_exec(move || {
            if fd == 3 {
                if libc::fcntl(3, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, 3) != 3 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

fn stop(mut child: Child) {
    kill_and_wait(child.id(), Duration::from_secs(10));
    let _ = child.wait();
}

#[test]
fn the_socket_systemd_hands_over_is_the_one_served() {
    let env = TestEnv::new();
    let socket = env.socket();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(socket.parent().unwrap())
        .unwrap();
    let listener = UnixListener::bind(&socket).unwrap();
    let child = activated(&env, listener.as_raw_fd()).spawn().unwrap();
    // The client finds a socket that accepts, so it starts no daemon of its own: the answer
    // comes from the activated one.
    let status = env.json(["daemon", "status", "--json"]);
    assert_eq!(status["pid"], child.id(), "{status}");
    let r = env.json(["resolve", "--json"]);
    assert_eq!(r["workspace"], "default", "{r}");
    assert_eq!(env.daemon_pids(), vec![child.id()]);
    stop(child);
    // The socket is systemd's: it stays for the next connection.
    assert!(socket.exists());
}

#[test]
fn a_descriptor_that_is_not_a_listening_socket_is_refused_with_the_fix() {
    let env = TestEnv::new();
    let file = env.root().join("not-a-socket");
    std::fs::write(&file, "keep me").unwrap();
    let handle = std::fs::File::open(&file).unwrap();
    let out = activated(&env, handle.as_raw_fd()).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not") && stderr.contains("ListenStream="),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    assert!(env.daemon_pids().is_empty());
}
