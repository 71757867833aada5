//! Another user on the same machine plants a fake daemon where a client
//! looks for berthd. Every client refuses it before sending a byte: the
//! fake (`fake-berthd`, run as `nobody` through `setpriv`) records all it
//! receives, and its hook reply asks for a stop command that leaves a mark.

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;
#[cfg(unix)]
use std::process::{Child, Command, Stdio};
use std::time::Duration;

#[cfg(unix)]
use berth_tests::mcp::McpSession;
#[cfg(unix)]
use berth_tests::wait_until;
use berth_tests::{TestEnv, bin};

// The impostor is another user's process, run through setpriv: Unix only.
// (On Windows a pipe server of another user is refused by its token's SID.)
#[cfg(unix)]
pub(crate) const NOBODY: u32 = 65534;

/// A fake daemon run by another user, and where it listens.
#[cfg(unix)]
pub(crate) struct Impostor {
    pub(crate) socket: PathBuf,
    record: PathBuf,
    child: Child,
}

#[cfg(unix)]
impl Impostor {
    /// Starts the fake as `nobody` on `socket` and waits until it listens.
    pub(crate) fn start(env: &TestEnv, socket: &Path) -> Impostor {
        let record = env.root().join("impostor").join("received");
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
        // It says so itself: a probe of ours would be a connection it counts.
        let marker = beside(&record, ".listening");
        let listening = wait_until(Duration::from_secs(10), || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("fake-berthd exited: {status}");
            }
            marker.exists().then_some(()).ok_or(())
        });
        assert!(
            listening.is_ok(),
            "fake-berthd never listened on {socket:?}"
        );
        Impostor {
            socket: socket.to_path_buf(),
            record,
            child,
        }
    }

    /// How many bytes the fake has received from clients.
    pub(crate) fn received(&self) -> usize {
        std::fs::read(&self.record).map(|b| b.len()).unwrap_or(0)
    }

    /// How many connections the fake has accepted.
    pub(crate) fn connections(&self) -> usize {
        std::fs::read(beside(&self.record, ".connections"))
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0)
    }

    pub(crate) fn stop_ran(&self) -> bool {
        beside(&self.record, ".stop-ran").exists()
    }
}

/// `<path><suffix>`: the files fake-berthd keeps beside its record.
#[cfg(unix)]
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(unix)]
impl Drop for Impostor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A folder for the fake, owned by `nobody`: what an attacker can make in
/// /tmp before the victim's daemon ever runs.
#[cfg(unix)]
pub(crate) fn nobodys_folder(env: &TestEnv, name: &str) -> PathBuf {
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
#[cfg(unix)]
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

    let mut cmd = env.command(bin("berth-mcp"));
    cmd.env("BERTH_SOCKET", socket);
    let mcp = mcp_calls(
        cmd,
        &[r#"{"name":"write","arguments":{"path":"secret.txt","content":"the user's secret"}}"#],
    );
    assert!(
        mcp.contains("sent it nothing") && mcp.contains(expect),
        "berth-mcp must quote the refusal:\n{mcp}"
    );

    assert_eq!(fake.received(), 0, "the impostor received bytes");
    assert!(!fake.stop_ran(), "the impostor's stop command ran");
    assert!(env.daemon_pids().is_empty(), "a daemon was started");
}

// Another user's process, run through setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the fake daemon as another user"
)]
fn a_fake_daemon_in_a_folder_another_user_made_is_refused_by_every_client() {
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

// Another user's process, run through setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the fake daemon as another user"
)]
fn a_socket_of_another_user_in_our_folder_is_refused() {
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

// Another user's process, run through setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the fake daemon as another user"
)]
fn a_symlinked_socket_folder_is_refused() {
    let env = TestEnv::new();
    let dir = nobodys_folder(&env, "evil");
    let fake = Impostor::start(&env, &dir.join("berthd.sock"));
    let link = env.root().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).unwrap();
    every_client_refuses(&env, &link.join("berthd.sock"), &fake, "is a symlink");
}

// Another user's process, run through setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the fake daemon as another user"
)]
fn a_socket_and_folder_of_ours_with_another_user_listening_is_refused() {
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

// ---- one registry, one daemon ----

/// Live berthd processes whose environment has `HOME=<home>`, wherever
/// their socket and data variables pointed.
#[cfg(unix)]
fn daemons_with_home(home: &Path) -> Vec<u32> {
    let needle = format!("HOME={}", home.display());
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| berth_tests::is_live_berthd(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Kills every daemon of a home when the test ends, however it ends.
#[cfg(unix)]
struct KillDaemonsOf(PathBuf);

#[cfg(unix)]
impl Drop for KillDaemonsOf {
    fn drop(&mut self) {
        for pid in daemons_with_home(&self.0) {
            berth_tests::signal(pid, libc::SIGKILL);
        }
    }
}

/// A full-environment CLI call starts the daemon; then `berth-mcp` started
/// with only HOME, PATH, LANG, SHELL and TERM (as Codex and the MCP SDKs
/// start servers) derives another socket, finds the same daemon through the
/// data folder's record, and sees its writes at once, and the CLI sees the
/// MCP session's. One berthd in all; the stripped client's own socket folder
/// (`/tmp/berth-<uid>`) is never made.
// Environments from /proc, and /tmp/berth-<uid>; on Windows a stripped
// environment derives the user's one pipe, which a test may not take.
#[cfg(unix)]
#[test]
fn a_client_with_a_stripped_environment_reaches_the_same_daemon() {
    let env = TestEnv::new();
    let home = env.home();
    let _cleanup = KillDaemonsOf(home.clone());
    // Both derive the data folder from HOME, as a real user's clients do.
    let data = home.join(".local").join("share").join("berth");
    let full = |args: &[&str]| {
        let mut cmd = env.berth(args);
        cmd.env("BERTH_DATA_DIR", &data);
        env.run(cmd)
    };
    let uid = unsafe { libc::getuid() };
    let tmp_folder = PathBuf::from(format!("/tmp/berth-{uid}"));
    let tmp_folder_existed = tmp_folder.exists();
    let _ = full(&["workspace", "create", "from-cli"]).success();
    let daemon = daemons_with_home(&home);
    assert_eq!(daemon.len(), 1, "{daemon:?}");

    let mut stripped = Command::new(bin("berth-mcp"));
    stripped
        .env_clear()
        .env("HOME", &home)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", berth_tests::bin_dir().display()),
        )
        .env("LANG", "C.UTF-8")
        .env("SHELL", "/bin/sh")
        .env("TERM", "dumb")
        .current_dir(&home);
    let said = mcp_calls(
        stripped,
        &[
            r#"{"name":"list_workspaces","arguments":{}}"#,
            r#"{"name":"use_workspace","arguments":{"name":"from-mcp"}}"#,
        ],
    );
    assert!(
        said.contains("from-cli"),
        "the MCP session sees the CLI's write:\n{said}"
    );
    let listed = full(&["--json", "workspace", "list"]).success().stdout();
    assert!(
        listed.contains("from-mcp"),
        "the CLI sees the MCP session's write:\n{listed}"
    );
    assert_eq!(daemons_with_home(&home), daemon, "exactly one berthd");
    if !tmp_folder_existed {
        assert!(
            !tmp_folder.exists(),
            "the stripped client made {tmp_folder:?}"
        );
    }
}

/// Runs one MCP session: initialize, then each `tools/call` in turn; returns
/// everything the shim printed.
#[cfg(unix)]
pub(crate) fn mcp_calls(cmd: Command, calls: &[&str]) -> String {
    let (mut session, mut said) = McpSession::start(cmd);
    for params in calls {
        said.push_str(&session.call(params));
    }
    said
}

/// The daemon goes away mid-session and another user's process takes its
/// socket (folder and socket file ours, only the listener is not): the
/// session's reconnect is verified like its first dial, and the write it
/// was asked for reaches nobody.
// Another user's process, run through setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the fake daemon as another user"
)]
fn a_session_whose_daemon_was_replaced_by_an_impostor_sends_it_nothing() {
    let env = TestEnv::new();
    let _ = nobodys_folder(&env, "unused");
    let (mut session, _) = McpSession::start(env.command(bin("berth-mcp")));
    let listed = session.call(r#"{"name":"list_workspaces","arguments":{}}"#);
    assert!(listed.contains("default"), "{listed}");
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(Duration::from_secs(5));
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let fake = Impostor::start(&env, &env.socket());
    std::os::unix::fs::chown(&fake.socket, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(env.runtime_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let wrote = session.call(
        r#"{"name":"write","arguments":{"path":"secret.txt","content":"the user's secret"}}"#,
    );
    assert!(wrote.contains("runs as uid 65534"), "{wrote}");
    drop(session);
    assert_eq!(fake.received(), 0, "the impostor received bytes");
    assert!(env.daemon_pids().is_empty());
}

/// A second `berthd` for the same data folder, told another socket, exits
/// with an error naming the running daemon's pid and socket, and the first
/// keeps serving.
#[test]
fn a_second_daemon_for_the_same_data_folder_names_the_first_and_exits() {
    let env = TestEnv::new();
    let _ = env.run_berth(["daemon", "start"]).success();
    let first = env.daemon_pid();
    #[cfg(unix)]
    let other = {
        let other = env.dir("run2");
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
        other.join("berthd.sock")
    };
    #[cfg(windows)]
    let other = PathBuf::from(format!("{}-2", env.socket().display()));
    let mut cmd = env.command(bin("berthd"));
    cmd.env("BERTH_SOCKET", &other);
    let second = env.run(cmd).failure(1);
    let err = second.stderr();
    for part in [
        "another berthd".to_string(),
        format!("pid {first}"),
        format!("{:?}", env.socket()),
        "berth daemon stop".to_string(),
    ] {
        assert!(err.contains(&part), "{part:?} missing from:\n{err}");
    }
    assert!(!other.exists());
    assert_eq!(env.daemon_pids(), vec![first]);
    // A spawner reads the same on the readiness pipe (here: stdout), and
    // follows the data folder's record to the running daemon.
    let mut cmd = env.command(bin("berthd"));
    cmd.env("BERTH_SOCKET", &other).args(["--ready-fd", "1"]);
    let said = env.run(cmd).failure(1).stdout();
    assert!(
        said.starts_with("elsewhere: another berthd") && said.contains(&format!("pid {first}")),
        "{said}"
    );
    // A client told the other socket still reaches the one daemon.
    let mut resolve = env.berth(["--json", "daemon", "status"]);
    resolve.env("BERTH_SOCKET", &other);
    let status = env.run(resolve).success().json();
    assert_eq!(status["pid"], first);
    // And `daemon stop` told the other socket stops that one daemon.
    let mut stop = env.berth(["daemon", "stop"]);
    stop.env("BERTH_SOCKET", &other);
    let _ = env.run(stop).success();
    env.wait_no_daemon(Duration::from_secs(5));
}

/// A daemon of another registry on the socket a client derives (another
/// HOME, a test, `sudo -u` with a different HOME) refuses its requests,
/// naming both data folders; nothing is read from or written to the wrong
/// registry. `daemon status` still shows who listens there.
#[test]
fn a_daemon_of_another_data_folder_refuses_the_client_naming_both() {
    let env = TestEnv::new();
    let _ = env.run_berth(["workspace", "create", "theirs"]).success();
    let mine = env.dir("my-data");
    let as_other = |args: &[&str]| {
        let mut cmd = env.berth(args);
        cmd.env("BERTH_DATA_DIR", &mine);
        env.run(cmd)
    };
    let refused = as_other(&["workspace", "list"]).failure(1);
    let err = refused.stderr();
    for part in [
        format!("{:?}", env.data_dir()),
        format!("{mine:?}"),
        "BERTH_SOCKET".to_string(),
    ] {
        assert!(err.contains(&part), "{part:?} missing from:\n{err}");
    }
    assert!(!refused.stdout().contains("theirs"), "{}", refused.stdout());
    let _ = as_other(&["workspace", "create", "leak"]).failure(1);
    assert!(
        !env.run_berth(["workspace", "list"])
            .success()
            .stdout()
            .contains("leak")
    );
    let status = as_other(&["--json", "daemon", "status"]).success().json();
    assert_eq!(status["data_dir"], env.data_dir().display().to_string());
    // Spelled another way, the same folder is the same registry: with `..`,
    // through a symlink (Unix: a link takes a privilege on Windows), relative
    // to the client's cwd.
    let dotdot = (env.root().to_path_buf(), env.root().join("home/../data"));
    let relative = (env.home(), PathBuf::from("../data"));
    #[cfg(unix)]
    let spellings = {
        let link = env.root().join("data-link");
        std::os::unix::fs::symlink(env.data_dir(), &link).unwrap();
        [dotdot, (env.root().to_path_buf(), link), relative]
    };
    #[cfg(windows)]
    let spellings = [dotdot, relative];
    for (cwd, spelled) in spellings {
        let mut cmd = env.berth_in(&cwd, ["workspace", "list"]);
        cmd.env("BERTH_DATA_DIR", &spelled);
        let listed = env.run(cmd).success().stdout();
        assert!(
            listed.contains("theirs"),
            "{spelled:?} from {cwd:?}: {listed}"
        );
    }
}
