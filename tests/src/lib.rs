//! The end-to-end test environment: real binaries, one hermetic environment
//! per test, one daemon per environment.
//!
//! Modelled on jj's `TestEnvironment` and ripgrep's `Dir`/`TestCommand`.
//!
//! **Run the suite with `cargo test --workspace`** (or `cargo build` first,
//! then `cargo test -p berth-tests`): cargo cannot depend on another
//! package's binaries, so only a workspace build guarantees that
//! `target/<profile>/berth` and `berthd` exist and are fresh. The harness
//! checks that they exist and panics with this advice otherwise.
//!
//! Every child process starts from an empty environment (`env_clear`) and
//! gets only the variables listed in [`TestEnv::base_env`], all pointing into
//! the test's own temporary root, so tests run in parallel and never share a
//! daemon. Dropping a [`TestEnv`] kills every daemon it started.
//!
//! On Windows the socket is a named pipe per environment, and processes are
//! found, read and killed through the process APIs instead of /proc and
//! signals ([`win`]).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[cfg(windows)]
mod win;

pub mod mcp;

/// The version every binary of the workspace reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// git as the test runner's own PATH finds it (the hermetic PATH of [`TestEnv::base_env`] may
/// hold an older one, or none). Panics when there is none: the worktree tests need real git.
pub fn git_program() -> &'static Path {
    static GIT: OnceLock<PathBuf> = OnceLock::new();
    GIT.get_or_init(|| {
        let name = exe_name("git");
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(&name))
            .find(|p| p.is_file())
            .expect("git on the test runner's PATH")
    })
}

/// A binary's file name: `name`, with `.exe` on Windows.
fn exe_name(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// The directory holding the workspace's binaries (`target/<profile>`), or
/// `$BERTH_TEST_BINARIES` when set: a folder of binaries built another way (the Linux
/// release clients, linked against musl) that the same tests then run.
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("BERTH_TEST_BINARIES").filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            for bin in ["berth", "berthd", "berth-hook", "berth-mcp"] {
                let bin = dir.join(exe_name(bin));
                assert!(
                    bin.is_file(),
                    "BERTH_TEST_BINARIES: {} is missing",
                    bin.display()
                );
            }
            return dir;
        }
        // target/<profile>/deps/e2e-<hash>: the profile dir is the first
        // ancestor holding berth.
        let exe = std::env::current_exe().expect("current_exe");
        let dir = exe
            .ancestors()
            .skip(1)
            .find(|d| d.join(exe_name("berth")).is_file())
            .map(Path::to_path_buf);
        let Some(dir) = dir else {
            panic!(
                "cannot find the berth binaries above {}.\n\
                 The end-to-end tests run the real binaries; build them first:\n\
                 \tcargo test --workspace\n\
                 or\tcargo build && cargo test -p berth-tests",
                exe.display()
            );
        };
        for bin in ["berth", "berthd"] {
            let bin = exe_name(bin);
            assert!(
                dir.join(&bin).is_file(),
                "{} is missing; run `cargo build` (or `cargo test --workspace`) first",
                dir.join(&bin).display()
            );
        }
        warn_if_stale(&dir);
        dir
    })
}

/// Says on stderr when a binary is older than the sources it is built
/// from: `cargo test -p berth-tests` alone does not rebuild them.
fn warn_if_stale(dir: &Path) {
    fn newest(p: &Path) -> Option<std::time::SystemTime> {
        let meta = std::fs::metadata(p).ok()?;
        if meta.is_file() {
            return meta.modified().ok();
        }
        std::fs::read_dir(p)
            .ok()?
            .flatten()
            .filter_map(|e| newest(&e.path()))
            .max()
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (bin, srcs) in [
        ("berth", &["client-cli/src", "proto/src"][..]),
        ("berthd", &["daemon/src", "proto/src"][..]),
    ] {
        let built = std::fs::metadata(dir.join(exe_name(bin)))
            .and_then(|m| m.modified())
            .ok();
        let src = srcs.iter().filter_map(|s| newest(&workspace.join(s))).max();
        if let (Some(built), Some(src)) = (built, src)
            && src > built
        {
            eprintln!(
                "warning: {} is older than its sources; run `cargo build` (or `cargo test --workspace`) to test the current code",
                dir.join(exe_name(bin)).display()
            );
        }
    }
}

/// `path` with every link, `.` and `..` resolved, spelled as the daemon
/// spells it: on Windows without the `\\?\` prefix the system's answer
/// has (the harness's folders have plain names, for which the prefix changes
/// nothing).
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    let path = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    if let Some(std::path::Component::Prefix(p)) = path.components().next()
        && let std::path::Prefix::VerbatimDisk(drive) = p.kind()
    {
        let rest: PathBuf = path.components().skip(1).collect();
        return Ok(PathBuf::from(format!("{}:", drive as char)).join(rest));
    }
    Ok(path)
}

/// A workspace binary by name (`berth`, `berthd`, ...).
pub fn bin(name: &str) -> PathBuf {
    bin_dir().join(exe_name(name))
}

/// One test's world: a temporary root holding the home, the data dir, the
/// socket's folder and the XDG folders. Its daemon dies with it.
pub struct TestEnv {
    root: PathBuf,
    socket: Option<PathBuf>,
    /// Every daemon pid seen for this env: an exiting process's environ
    /// reads empty before it becomes a zombie, so it is recognised by pid.
    seen: std::sync::Mutex<std::collections::BTreeSet<u32>>,
    /// The uid of its own every process of this env runs as, when it has one.
    #[cfg(unix)]
    user: Option<ThrowawayUser>,
    _tmp: tempfile::TempDir,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// A fresh environment with `BERTH_SOCKET` at `<root>/run/berthd.sock`
    /// (on Windows the pipe `\\.\pipe\berth-test-<root's name>`).
    pub fn new() -> TestEnv {
        let mut env = Self::bare();
        #[cfg(unix)]
        let socket = env.root.join("run").join("berthd.sock");
        #[cfg(windows)]
        let socket = PathBuf::from(format!(
            r"\\.\pipe\berth-test-{}",
            env.root
                .file_name()
                .expect("a named temp root")
                .to_string_lossy()
        ));
        env.socket = Some(socket);
        env
    }

    /// A fresh environment without `BERTH_SOCKET`: the socket path is then
    /// derived from `XDG_RUNTIME_DIR` (`<root>/run/berth/berthd.sock`).
    /// Unix only: on Windows the derived pipe is the user's one pipe, which
    /// no test may take from another or from the user's own daemon.
    #[cfg(unix)]
    pub fn without_berth_socket() -> TestEnv {
        Self::bare()
    }

    /// A fresh environment whose processes run as a uid of their own (through `setpriv`),
    /// without `BERTH_SOCKET` and without `XDG_RUNTIME_DIR`, so its socket is derived in
    /// `/tmp/berth-<uid>`, as for a user with no runtime folder (containers, `su`, cron). The
    /// uid is one no account has and no other environment uses at the same time, so that
    /// folder is this environment's alone; it, and any `/tmp/berth-<uid>-*` folder, is
    /// removed with the environment. Needs root.
    #[cfg(unix)]
    pub fn as_throwaway_user() -> TestEnv {
        let mut env = Self::bare();
        let user = ThrowawayUser::reserve();
        for d in [
            "", "home", "data", "run", "state", "config", "xdg-data", "tmp",
        ] {
            std::os::unix::fs::chown(env.root.join(d), Some(user.uid), Some(user.uid))
                .expect("chown env dir");
        }
        env.user = Some(user);
        env
    }

    /// The uid this environment's processes run as.
    #[cfg(unix)]
    pub fn uid(&self) -> u32 {
        self.user.as_ref().map_or_else(
            // SAFETY: getuid has no preconditions.
            || unsafe { libc::getuid() },
            |u| u.uid,
        )
    }

    fn bare() -> TestEnv {
        let _ = bin_dir();
        // Short, so the socket path stays far below the 107-byte limit.
        #[cfg(unix)]
        let parent = PathBuf::from("/tmp");
        #[cfg(windows)]
        let parent = std::env::temp_dir();
        let tmp = tempfile::Builder::new()
            .prefix("b")
            .tempdir_in(parent)
            .expect("temp root");
        let root = canonical(tmp.path()).expect("canonical temp root");
        for d in ["home", "data", "run", "state", "config", "xdg-data", "tmp"] {
            std::fs::create_dir(root.join(d)).expect("create env dir");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(root.join("run"), std::fs::Permissions::from_mode(0o700))
                .expect("chmod run");
        }
        TestEnv {
            root,
            socket: None,
            seen: Default::default(),
            #[cfg(unix)]
            user: None,
            _tmp: tmp,
        }
    }

    /// The temporary root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `$HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// `$BERTH_DATA_DIR`.
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The registry database.
    pub fn db(&self) -> PathBuf {
        self.data_dir().join("berth.db")
    }

    /// `$XDG_RUNTIME_DIR`.
    pub fn runtime_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    /// The socket clients and the daemon meet on.
    pub fn socket(&self) -> PathBuf {
        #[cfg(unix)]
        if let Some(user) = &self.user {
            return user.tmp_folder().join("berthd.sock");
        }
        self.socket
            .clone()
            .unwrap_or_else(|| self.root.join("run").join("berth").join("berthd.sock"))
    }

    /// The daemon's lock file: beside the socket (on Windows, named after
    /// the pipe in the user's local application data).
    pub fn lock_file(&self) -> PathBuf {
        berth_client::paths::lock_path(&self.socket())
    }

    /// The daemon's log file.
    pub fn log_file(&self) -> PathBuf {
        self.root.join("state").join("berth").join("berthd.log")
    }

    /// The daemon's log, or "" when there is none yet.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_file()).unwrap_or_default()
    }

    /// The managed home of workspace `name`.
    pub fn managed_home(&self, name: &str) -> PathBuf {
        self.data_dir().join("workspaces").join(name)
    }

    /// The environment every child gets, and nothing else (on Windows also
    /// the variables its system libraries need, and the Windows names of the
    /// home, the temporary folder and the application data).
    pub fn base_env(&self) -> Vec<(&'static str, OsString)> {
        let r = &self.root;
        #[cfg(unix)]
        let path = OsString::from(format!("{}:/usr/bin:/bin", bin_dir().display()));
        #[cfg(windows)]
        let system_root = std::env::var_os("SystemRoot").unwrap_or_else(|| r"C:\Windows".into());
        #[cfg(windows)]
        let path = std::env::join_paths([
            bin_dir().to_path_buf(),
            Path::new(&system_root).join("System32"),
            PathBuf::from(&system_root),
        ])
        .expect("PATH");
        let mut v: Vec<(&'static str, OsString)> = vec![
            ("HOME", r.join("home").into()),
            ("BERTH_DATA_DIR", r.join("data").into()),
            ("XDG_STATE_HOME", r.join("state").into()),
            ("XDG_DATA_HOME", r.join("xdg-data").into()),
            ("XDG_CONFIG_HOME", r.join("config").into()),
            ("TMPDIR", r.join("tmp").into()),
            ("PATH", path),
            ("NO_COLOR", "1".into()),
            ("BERTH_LOG", "debug".into()),
        ];
        #[cfg(windows)]
        v.extend([
            ("SystemRoot", system_root),
            ("USERPROFILE", r.join("home").into()),
            ("APPDATA", r.join("config").into()),
            ("TMP", r.join("tmp").into()),
            ("TEMP", r.join("tmp").into()),
        ]);
        #[cfg(unix)]
        let own_user = self.user.is_some();
        #[cfg(windows)]
        let own_user = false;
        if !own_user {
            v.push(("XDG_RUNTIME_DIR", r.join("run").into()));
        }
        if let Some(s) = &self.socket {
            v.push(("BERTH_SOCKET", s.into()));
        }
        v
    }

    /// A command for `program` with this environment, run in the home (as the
    /// environment's own uid when it has one).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        #[cfg(unix)]
        let mut cmd = match &self.user {
            Some(user) => {
                let mut cmd = Command::new("/usr/bin/setpriv");
                cmd.args([
                    format!("--reuid={}", user.uid),
                    format!("--regid={}", user.uid),
                    "--clear-groups".into(),
                ])
                .arg(program);
                cmd
            }
            None => Command::new(program),
        };
        #[cfg(windows)]
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .envs(self.base_env())
            .current_dir(self.home())
            .stdin(Stdio::null());
        cmd
    }

    /// `berth ARGS`, run in the home.
    pub fn berth<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.command(bin("berth"));
        cmd.args(args);
        cmd
    }

    /// `berth ARGS`, run in `dir`.
    pub fn berth_in<I, S>(&self, dir: impl AsRef<Path>, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.berth(args);
        cmd.current_dir(dir.as_ref());
        cmd
    }

    /// Runs `cmd` to completion (at most 60 s) and captures its output.
    pub fn run(&self, cmd: Command) -> Run {
        self.run_within(cmd, Duration::from_secs(60))
    }

    /// Runs `cmd` to completion and captures its output; the test fails (and `cmd` is killed)
    /// when it has not finished within `timeout`, so a command that hangs cannot wedge it.
    pub fn run_within(&self, mut cmd: Command, timeout: Duration) -> Run {
        let started = Instant::now();
        let output = wait_with_deadline(&mut cmd, timeout);
        Run {
            description: describe(&cmd),
            root: self.root.clone(),
            output,
            elapsed: started.elapsed(),
        }
    }

    /// Runs `cmd` with `stdin` written to its standard input (then closed),
    /// to completion (at most 60 s), and captures its output.
    pub fn run_with_stdin(&self, mut cmd: Command, stdin: &[u8]) -> Run {
        let started = Instant::now();
        cmd.stdin(Stdio::piped());
        let output =
            wait_with_deadline_fed(&mut cmd, Duration::from_secs(60), Some(stdin.to_vec()));
        Run {
            description: describe(&cmd),
            root: self.root.clone(),
            output,
            elapsed: started.elapsed(),
        }
    }

    /// Shorthand: runs `berth ARGS` in the home.
    pub fn run_berth<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.run(self.berth(args))
    }

    /// Shorthand: runs `berth ARGS` in `dir`.
    pub fn run_in<I, S>(&self, dir: impl AsRef<Path>, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.run(self.berth_in(dir, args))
    }

    /// Shorthand: `berth --json ARGS` in the home, which must succeed; its JSON.
    pub fn json<I, S>(&self, args: I) -> serde_json::Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.berth(["--json"]);
        cmd.args(args);
        self.run(cmd).success().json()
    }

    /// Shorthand: `berth --json ARGS` in `dir`, which must succeed; its JSON.
    pub fn json_in<I, S>(&self, dir: impl AsRef<Path>, args: I) -> serde_json::Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.berth_in(dir, ["--json"]);
        cmd.args(args);
        self.run(cmd).success().json()
    }

    /// Creates `<root>/<rel>` (and its parents) and returns its canonical path.
    pub fn dir(&self, rel: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(&p).expect("create dir");
        canonical(&p).expect("canonical dir")
    }

    /// Makes `dir` the root of a git repository (a `.git` folder; git itself
    /// is never run). Returns `dir`.
    pub fn git_root(&self, dir: impl AsRef<Path>) -> PathBuf {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir.join(".git")).expect("create .git");
        dir.to_path_buf()
    }

    /// Runs git (the one the test runner's PATH finds, see [`git_program`]) in `dir` with no
    /// system or global configuration and a fixed author, and expects it to succeed.
    pub fn git<I, S>(&self, dir: impl AsRef<Path>, args: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let config = self.root.join("gitconfig");
        if !config.exists() {
            std::fs::write(&config, "").expect("an empty git configuration");
        }
        let mut cmd = Command::new(git_program());
        cmd.env_clear()
            .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
            .envs(std::env::var_os("SystemRoot").map(|p| ("SystemRoot", p)))
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", &config)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "berth tests")
            .env("GIT_AUTHOR_EMAIL", "tests@berth.invalid")
            .env("GIT_COMMITTER_NAME", "berth tests")
            .env("GIT_COMMITTER_EMAIL", "tests@berth.invalid")
            .args(["-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir.as_ref())
            .stdin(Stdio::null());
        let _ = self.run(cmd).success();
    }

    /// Writes `<dir>/.berth/workspace.json` with `content`; returns its path.
    pub fn project_file(&self, dir: impl AsRef<Path>, content: impl AsRef<[u8]>) -> PathBuf {
        let berth = dir.as_ref().join(".berth");
        std::fs::create_dir_all(&berth).expect("create .berth");
        let file = berth.join("workspace.json");
        std::fs::write(&file, content).expect("write project file");
        file
    }

    /// A protocol connection to this env's running daemon, for tests that
    /// send RPCs straight to it. Panics when no daemon runs.
    pub async fn connect(&self) -> berth_client::client::Connection {
        let ctx = berth_client::paths::EnvCtx {
            berth_socket: Some(self.socket().into()),
            uid: berth_client::paths::current_uid(),
            ..Default::default()
        };
        berth_client::client::Connection::open_existing(&ctx)
            .await
            .expect("connect")
            .expect("a daemon runs")
    }

    /// The pids of live `berthd` processes started for this environment
    /// (their environment holds this env's `BERTH_DATA_DIR`, or they were
    /// seen so before and have not exited yet), found in /proc (on Windows
    /// in the process list, each one's environment read from its memory).
    pub fn daemon_pids(&self) -> Vec<u32> {
        let needle = self.env_marker();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut pids = Vec::new();
        for pid in all_pids() {
            if !is_live_berthd(pid) {
                continue;
            }
            if seen.contains(&pid) {
                pids.push(pid);
                continue;
            }
            if has_env_entry(pid, &needle) {
                seen.insert(pid);
                pids.push(pid);
            }
        }
        pids.sort_unstable();
        pids
    }

    /// The `NAME=value` entry only the processes of this environment have.
    fn env_marker(&self) -> String {
        format!("BERTH_DATA_DIR={}", self.data_dir().display())
    }

    /// The one daemon of this environment; panics unless exactly one runs.
    pub fn daemon_pid(&self) -> u32 {
        let pids = self.daemon_pids();
        assert_eq!(pids.len(), 1, "expected exactly one berthd, found {pids:?}");
        pids[0]
    }

    /// Waits until no daemon of this environment runs; panics after `timeout`.
    pub fn wait_no_daemon(&self, timeout: Duration) {
        let pids = wait_until(timeout, || {
            let p = self.daemon_pids();
            p.is_empty().then_some(()).ok_or(p)
        });
        if let Err(p) = pids {
            panic!("berthd {p:?} still runs after {timeout:?}");
        }
        // A killed process leaves /proc's view before the kernel has closed
        // its files: wait until its lock is released too.
        let lock = self.lock_file();
        let released = wait_until(timeout, || {
            if berth_client::instance_lock::is_held(&lock) {
                Err(())
            } else {
                Ok(())
            }
        });
        assert!(released.is_ok(), "{lock:?} still held after {timeout:?}");
    }

    /// A listing of the temp root, for failure messages.
    pub fn listing(&self) -> String {
        listing(&self.root)
    }
}

impl TestEnv {
    /// Every live process started with this env's environment: daemons, and
    /// the clients, shims and commands a test left running.
    fn env_processes(&self) -> Vec<u32> {
        let needle = self.env_marker();
        let me = std::process::id();
        all_pids()
            .into_iter()
            .filter(|&pid| pid != me)
            .filter(|&pid| has_env_entry(pid, &needle))
            .collect()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        // SIGKILL works on stopped processes too (as TerminateProcess does on
        // Windows); nothing of the daemon's state matters once the test is over. Clients go too, and again until
        // none is left: a shim that outlived its test would otherwise start a
        // daemon in a folder about to be removed, which then runs on in the
        // folders it recreates.
        let _ = wait_until(Duration::from_secs(5), || {
            let left: Vec<u32> = self
                .env_processes()
                .into_iter()
                .chain(self.daemon_pids())
                .collect();
            for &pid in &left {
                kill(pid);
            }
            left.is_empty().then_some(()).ok_or(())
        });
    }
}

/// A uid no account has, held by one environment: `/tmp/berth-test-uid-<uid>` is made
/// exclusively to reserve it, so two environments (in this process or another) never share it.
#[cfg(unix)]
struct ThrowawayUser {
    uid: u32,
}

#[cfg(unix)]
impl ThrowawayUser {
    /// Far above the uids accounts get, below the 2^31 some tools take as the limit.
    const FIRST: u32 = 1_500_000_000;
    const SPREAD: u32 = 500_000_000;

    fn reserve() -> ThrowawayUser {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut pick = std::process::id()
            .wrapping_mul(2_654_435_761)
            .wrapping_add(nanos);
        for _ in 0..1000 {
            let uid = Self::FIRST + pick % Self::SPREAD;
            pick = pick.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let user = ThrowawayUser { uid };
            if berth_client::paths::passwd_home(uid).is_some()
                || std::fs::symlink_metadata(user.tmp_folder()).is_ok()
            {
                continue;
            }
            if std::fs::create_dir(user.reservation()).is_ok() {
                return user;
            }
        }
        panic!("no free uid to run a test environment as");
    }

    fn reservation(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/berth-test-uid-{}", self.uid))
    }

    /// The socket folder this uid derives without a runtime folder.
    fn tmp_folder(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/berth-{}", self.uid))
    }
}

#[cfg(unix)]
impl Drop for ThrowawayUser {
    fn drop(&mut self) {
        let mine = format!("berth-{}-", self.uid);
        let theirs = std::fs::read_dir("/tmp")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
            .map(|e| e.path());
        for dir in theirs.chain([self.tmp_folder()]) {
            // Follows no link: a link is removed, not what it points to.
            let _ = std::fs::remove_dir_all(&dir).or_else(|_| std::fs::remove_file(&dir));
        }
        let _ = std::fs::remove_dir(self.reservation());
    }
}

/// Registers an agent session over `conn` and reads its first event (the id and the pin).
/// Keep the returned stream open for as long as the session should live.
pub async fn open_session(
    conn: &mut berth_client::client::Connection,
    req: berth_proto::pb::OpenSessionRequest,
) -> (
    berth_proto::pb::SessionEvent,
    tonic::Streaming<berth_proto::pb::SessionEvent>,
) {
    let mut events = conn
        .call(|mut c| {
            let r = req.clone();
            async move { c.open_session(r).await }
        })
        .await
        .expect("open a session");
    let first = events
        .message()
        .await
        .expect("the session's first event")
        .expect("a first event before the stream ends");
    (first, events)
}

/// Every process id there is: /proc's numbered entries (on Windows, the
/// process list).
fn all_pids() -> Vec<u32> {
    #[cfg(unix)]
    {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .collect()
    }
    #[cfg(windows)]
    {
        win::processes().into_iter().map(|(pid, _)| pid).collect()
    }
}

/// Whether `pid`'s environment holds the entry `kv` (`NAME=value`).
fn has_env_entry(pid: u32, kv: &str) -> bool {
    #[cfg(unix)]
    {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == kv.as_bytes()))
    }
    #[cfg(windows)]
    {
        win::has_env_entry(pid, kv)
    }
}

/// Sends `sig` to `pid`.
#[cfg(unix)]
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Kills `pid` at once, without waiting: SIGKILL (on Windows, TerminateProcess).
pub fn kill(pid: u32) {
    #[cfg(unix)]
    signal(pid, libc::SIGKILL);
    #[cfg(windows)]
    win::terminate(pid);
}

/// Sends SIGKILL to `pid` and waits until the whole process has exited, at
/// most `timeout`; returns whether it did (or was gone already).
///
/// `kill(2)` only queues the signal: until every thread of the process is
/// torn down, its listening socket still accepts connections, and a client
/// that dials then loses its daemon before any answer. A pidfd becomes
/// readable only once the whole thread group has exited (its descriptors
/// closed), which `/proc/<pid>/stat` cannot tell: a multi-threaded process
/// shows as a zombie while its other threads still hold its files.
#[cfg(target_os = "linux")]
pub fn kill_and_wait(pid: u32, timeout: Duration) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; nothing else is touched.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return true;
    }
    // SAFETY: the descriptor was just opened and is owned here alone.
    let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) };
    // Signalled through the pidfd, so a recycled pid is never hit.
    // SAFETY: pidfd_send_signal on a descriptor we own, no siginfo.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd for the call's duration.
    unsafe { libc::poll(&mut pfd, 1, millis) == 1 }
}

/// Terminates `pid` and waits until it has exited, at most `timeout`,
/// through one process handle (so a recycled pid is never hit); returns
/// whether it did (or was gone already).
#[cfg(windows)]
pub fn kill_and_wait(pid: u32, timeout: Duration) -> bool {
    win::terminate_and_wait(pid, timeout)
}

/// Sends SIGKILL to `pid` and waits until it has exited, at most `timeout`.
/// Without pidfds (macOS), exit shows as `kill(pid, 0)` failing; a pid
/// recycled within the wait would look alive, which only costs the timeout.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn kill_and_wait(pid: u32, timeout: Duration) -> bool {
    signal(pid, libc::SIGKILL);
    let deadline = Instant::now() + timeout;
    // SAFETY: kill with signal 0 only checks the pid.
    while unsafe { libc::kill(pid as i32, 0) } == 0 {
        if Instant::now() >= deadline {
            return false;
        }
        // Pacing a poll of another process's exit; nothing else can be waited on here.
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Whether `pid` is a berthd that has not exited (zombies do not count:
/// nobody may reap a detached daemon in a container).
#[cfg(unix)]
pub fn is_live_berthd(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "pid (comm) S ...": the state follows the last ')'.
    let Some(close) = stat.rfind(')') else {
        return false;
    };
    let comm = stat[..close].split_once('(').map(|x| x.1).unwrap_or("");
    let state = stat[close + 1..].split_whitespace().next().unwrap_or("");
    comm == "berthd" && state != "Z" && state != "X"
}

/// Whether `pid` runs `berthd.exe` and has not exited.
#[cfg(windows)]
pub fn is_live_berthd(pid: u32) -> bool {
    win::is_live(pid, "berthd.exe")
}

/// Stops `pid` where it is, as a hung process would be, and waits until it
/// is: SIGSTOP (on Windows, every thread of it suspended). Panics when it
/// cannot be.
pub fn pause(pid: u32) {
    #[cfg(unix)]
    {
        signal(pid, libc::SIGSTOP);
        let stopped = wait_until(Duration::from_secs(5), || {
            is_stopped(pid).then_some(()).ok_or(())
        });
        assert!(stopped.is_ok(), "{pid} did not stop");
    }
    #[cfg(windows)]
    assert!(win::suspend(pid), "no thread of {pid} could be suspended");
}

/// Whether `pid` is stopped (`T`). Unix only: Windows stops no process by a
/// signal.
#[cfg(unix)]
pub fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let close = s.rfind(')')?;
            s[close + 1..].split_whitespace().next().map(|st| st == "T")
        })
        .unwrap_or(false)
}

/// Polls `f` with growing pauses until it returns `Ok`, or `timeout` passes
/// (then the last `Err`). For state only another process can change (a daemon's, a shim's),
/// which nothing here can await: it cannot return `Ok` before that state is reached.
pub fn wait_until<T, E>(timeout: Duration, mut f: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
        }
    }
}

fn wait_with_deadline(cmd: &mut Command, timeout: Duration) -> Output {
    wait_with_deadline_fed(cmd, timeout, None)
}

fn wait_with_deadline_fed(cmd: &mut Command, timeout: Duration, stdin: Option<Vec<u8>>) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {}: {e}", describe(cmd)));
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A writer thread: a child that never reads must not block the test.
        std::thread::spawn(move || {
            use std::io::Write as _;
            let _ = pipe.write_all(&bytes);
        });
    }
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.unwrap_or_else(|e| panic!("waiting for {}: {e}", describe(cmd))),
        Err(_) => {
            kill(pid);
            panic!("{} did not finish within {timeout:?}", describe(cmd));
        }
    }
}

/// The command line, cwd and the variables that differ from the usual.
pub fn describe(cmd: &Command) -> String {
    let mut s = format!("{}", cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        let _ = write!(s, " {:?}", a.to_string_lossy());
    }
    if let Some(d) = cmd.get_current_dir() {
        let _ = write!(s, "\n  cwd: {}", d.display());
    }
    for (k, v) in cmd.get_envs() {
        let k = k.to_string_lossy();
        if matches!(
            k.as_ref(),
            "BERTH_WORKSPACE" | "BERTH_EXTRA_HOME" | "BERTH_CWD"
        ) {
            let _ = write!(
                s,
                "\n  env: {k}={}",
                v.map(|v| v.to_string_lossy()).unwrap_or_default()
            );
        }
    }
    s
}

fn listing(root: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries.into_iter().rev() {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let _ = writeln!(out, "  {}", rel.display());
            if p.is_dir() && !p.is_symlink() && out.len() < 8000 {
                stack.push(p);
            }
        }
    }
    out
}

/// A finished command: its output and how to describe it when an
/// expectation fails.
#[must_use]
pub struct Run {
    description: String,
    root: PathBuf,
    /// What it printed and how it ended.
    pub output: Output,
    /// How long it took.
    pub elapsed: Duration,
}

impl Run {
    /// Its stdout as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// Its stderr as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Its exit code (`None` when killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// Panics, with everything a reader needs, unless it exited 0.
    pub fn success(self) -> Run {
        if !self.output.status.success() {
            self.fail("expected success");
        }
        self
    }

    /// Panics, with everything a reader needs, unless it exited `code`.
    pub fn failure(self, code: i32) -> Run {
        if self.output.status.code() != Some(code) {
            self.fail(&format!("expected exit code {code}"));
        }
        self
    }

    /// Asserts that stderr contains every one of `needles`.
    pub fn stderr_has(self, needles: &[&str]) -> Run {
        let err = self.stderr();
        for n in needles {
            if !err.contains(n) {
                self.fail(&format!("expected stderr to contain {n:?}"));
            }
        }
        self
    }

    /// Stdout parsed as exactly one JSON document.
    pub fn json(&self) -> serde_json::Value {
        match serde_json::from_slice(&self.output.stdout) {
            Ok(v) => v,
            Err(e) => self.fail(&format!("stdout is not one JSON document: {e}")),
        }
    }

    /// Panics with `why` and the whole story of this command.
    pub fn fail(&self, why: &str) -> ! {
        panic!(
            "\n{why}\n\ncommand: {}\nexit status: {}\n\n---- stdout ----\n{}\n---- stderr ----\n{}\n---- test root {} ----\n{}",
            self.description,
            self.output.status,
            self.stdout(),
            self.stderr(),
            self.root.display(),
            listing(&self.root),
        )
    }
}

/// The workspace names of a `workspace list --json` document, in order.
pub fn names(list: &serde_json::Value) -> Vec<String> {
    list["workspaces"]
        .as_array()
        .unwrap_or_else(|| panic!("no workspaces array in {list}"))
        .iter()
        .map(|w| w["name"].as_str().expect("name").to_string())
        .collect()
}
