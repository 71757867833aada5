//! Another user on the same machine plants a fake daemon where a client
//! looks for berthd. Every client refuses it before sending a byte: the
//! fake (`fake-berthd`, run as `nobody` through `setpriv`) records all it
//! receives, and its hook reply asks for a stop command that leaves a mark.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use berth_tests::{TestEnv, bin, wait_until};

const NOBODY: u32 = 65534;

/// A fake daemon run by another user, and where it listens.
struct Impostor {
    socket: PathBuf,
    record: PathBuf,
    child: Child,
}

impl Impostor {
    /// Starts the fake as `nobody` on `socket` and waits until it listens.
    fn start(env: &TestEnv, socket: &Path) -> Impostor {
        let record = env.root().join("impostor/received");
        let mut child = Command::new("setpriv")
            .args([
                &format!("--reuid={NOBODY}"),
                &format!("--regid={NOBODY}"),
                "--clear-groups",
            ])
            .arg(bin("fake-berthd"))
            .arg(socket)
            .arg(&record)
            .env_clear()
            .stdin(Stdio::null())
            .spawn()
            .expect("start fake-berthd");
        let listening = wait_until(Duration::from_secs(10), || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("fake-berthd exited: {status}");
            }
            std::os::unix::net::UnixStream::connect(socket)
                .map(drop)
                .map_err(|_| ())
        });
        assert!(
            listening.is_ok(),
            "fake-berthd never listened on {socket:?}"
        );
        // The probe above connected and sent nothing; start from empty.
        std::fs::write(&record, b"").expect("empty record");
        Impostor {
            socket: socket.to_path_buf(),
            record,
            child,
        }
    }

    /// How many bytes the fake has received from clients.
    fn received(&self) -> usize {
        std::fs::read(&self.record).map(|b| b.len()).unwrap_or(0)
    }

    fn stop_ran(&self) -> bool {
        let mut marker = self.record.clone().into_os_string();
        marker.push(".stop-ran");
        Path::new(&marker).exists()
    }
}

impl Drop for Impostor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A folder for the fake, owned by `nobody`: what an attacker can make in
/// /tmp before the victim's daemon ever runs.
fn nobodys_folder(env: &TestEnv, name: &str) -> PathBuf {
    std::fs::set_permissions(env.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = env.root().join("impostor");
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::chown(&shared, Some(NOBODY), Some(NOBODY)).unwrap();
    let dir = env.root().join(name);
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Every client, pointed at `socket`, refuses the fake: `berth resolve`
/// fails naming the socket and the other uid; both hooks print nothing and
/// exit 0; an MCP session's instructions quote the refusal. The fake
/// received nothing, no stop command ran and no daemon was started.
fn every_client_refuses(env: &TestEnv, socket: &Path, fake: &Impostor, expect: &str) {
    let with_socket = |mut cmd: Command| {
        cmd.env("BERTH_SOCKET", socket);
        cmd
    };
    let resolve = env.run(with_socket(env.berth(["resolve"])));
    if resolve.code() != Some(1) {
        resolve.fail("berth resolve must refuse the impostor with exit 1");
    }
    let err = resolve.stderr();
    for part in [
        "refusing to talk to the berthd socket",
        &socket.display().to_string(),
        expect,
        "BERTH_SOCKET",
    ] {
        assert!(err.contains(part), "{part:?} missing from:\n{err}");
    }
    assert!(!resolve.stdout().contains("evil"), "{}", resolve.stdout());

    let home = env.home();
    for (event, name) in [("session-start", "SessionStart"), ("stop", "Stop")] {
        let payload = format!(
            r#"{{"session_id": "s1", "cwd": "{}", "hook_event_name": "{name}"}}"#,
            home.display()
        );
        let mut cmd = with_socket(env.command(bin("berth-hook")));
        cmd.arg(event);
        let hook = env.run_with_stdin(cmd, payload.as_bytes());
        let hook = hook.success();
        assert_eq!(hook.stdout(), "", "berth-hook {event} must print nothing");
        assert!(
            hook.stderr()
                .contains("refusing to talk to the berthd socket"),
            "berth-hook {event} logs the refusal:\n{}",
            hook.stderr()
        );
    }

    let mcp = mcp_session(env, socket);
    assert!(
        mcp.contains("sent it nothing") && mcp.contains(expect),
        "berth-mcp must quote the refusal:\n{mcp}"
    );

    assert_eq!(fake.received(), 0, "the impostor received bytes");
    assert!(!fake.stop_ran(), "the impostor's stop command ran");
    assert!(env.daemon_pids().is_empty(), "a daemon was started");
}

/// One MCP session against `socket`: initialize, then a `write` tool call;
/// returns everything the shim printed.
fn mcp_session(env: &TestEnv, socket: &Path) -> String {
    let mut child = env
        .command(bin("berth-mcp"))
        .env("BERTH_SOCKET", socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn berth-mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = String::new();
    let mut ask = |msg: &str, id: Option<u64>| {
        writeln!(stdin, "{msg}").expect("write to berth-mcp");
        let Some(id) = id else { return };
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .expect("berth-mcp answered in time");
            said.push_str(&line);
            said.push('\n');
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if v["id"] == id {
                break;
            }
        }
    };
    ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}"#,
        Some(1),
    );
    ask(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        None,
    );
    ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"secret.txt","content":"the user's secret"}}}"#,
        Some(2),
    );
    drop(stdin);
    let _ = child.wait();
    said
}

#[test]
fn a_fake_daemon_in_a_folder_another_user_made_is_refused_by_every_client() {
    if !is_root() {
        eprintln!("skipped: needs root to run the fake daemon as another user");
        return;
    }
    let env = TestEnv::new();
    let dir = nobodys_folder(&env, "evil");
    let fake = Impostor::start(&env, &dir.join("berthd.sock"));
    every_client_refuses(
        &env,
        &fake.socket,
        &fake,
        "belongs to uid 65534, not to you (uid 0)",
    );
}

#[test]
fn a_socket_of_another_user_in_our_folder_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to run the fake daemon as another user");
        return;
    }
    let env = TestEnv::new();
    let _ = nobodys_folder(&env, "unused");
    // Our folder, opened long enough for the other user to bind in it.
    let dir = env.root().join("ours");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let fake = Impostor::start(&env, &dir.join("berthd.sock"));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    every_client_refuses(&env, &fake.socket, &fake, "the socket belongs to uid 65534");
}

#[test]
fn a_symlinked_socket_folder_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to run the fake daemon as another user");
        return;
    }
    let env = TestEnv::new();
    let dir = nobodys_folder(&env, "evil");
    let fake = Impostor::start(&env, &dir.join("berthd.sock"));
    let link = env.root().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).unwrap();
    every_client_refuses(&env, &link.join("berthd.sock"), &fake, "is a symlink");
}

#[test]
fn a_socket_and_folder_of_ours_with_another_user_listening_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to run the fake daemon as another user");
        return;
    }
    let env = TestEnv::new();
    let _ = nobodys_folder(&env, "unused");
    let dir = env.root().join("ours");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let fake = Impostor::start(&env, &dir.join("berthd.sock"));
    // Folder and socket file now look ours: only the peer's uid tells.
    std::os::unix::fs::chown(&fake.socket, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    every_client_refuses(
        &env,
        &fake.socket,
        &fake,
        "runs as uid 65534, not as you (uid 0)",
    );
}
