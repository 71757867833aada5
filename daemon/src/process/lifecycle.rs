//! The daemon's life: take the data folder's lock, then the socket's, open the store, bind the socket, say
//! ready, serve until SIGTERM or a shutdown request, and clean up. The socket is the derived one,
//! or, when its folder is another user's, one in a folder of the daemon's own (ADR 0042).
//!
//! **Architecture Invariant:** the socket appears only once the daemon can
//! answer, and a second daemon for the same data folder or socket exits
//! without touching anything of the first's.

use std::io::Write;
#[cfg(unix)]
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use berth_client::ownership;
use berth_client::paths::{self, EnvCtx, Uid};
use berth_client::record::Fallback;

use crate::ops::daemon::{Daemon, STOP_GRACE};
use crate::process::lock::{DataFolder, InstanceLock};
use crate::rpc::socket::BoundSocket;
use crate::store::Store;

/// Why the daemon did not start, or stopped serving: said once, on stderr, in the log, and on
/// the ready pipe to the client that started it.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    #[error(transparent)]
    Path(#[from] paths::PathError),
    #[error(transparent)]
    NotOurs(#[from] ownership::NotOurs),
    #[error(transparent)]
    PrivateDir(#[from] paths::PrivateDirError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Daemon(#[from] crate::error::BerthError),
    #[error(transparent)]
    Bind(#[from] crate::rpc::socket::BindError),
    /// A step that failed with the system's error.
    #[error("{what}: {source}")]
    Failed {
        what: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Another daemon's, or the system's, state keeps this one from serving.
    #[error("{0}")]
    Refused(String),
}

impl BootError {
    fn failed<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
        what: impl Into<String>,
    ) -> impl FnOnce(E) -> BootError {
        let what = what.into();
        move |e| BootError::Failed {
            what,
            source: e.into(),
        }
    }
}

/// Once stopped, how long the server may take to send its last answers
/// (the stop's own) before the process exits regardless.
const FLUSH: Duration = Duration::from_millis(200);
/// How long the exit waits for pool threads; one stuck in a system call
/// (a hung mount) must not keep the process, so this is short.
const THREADS_EXIT_WAIT: Duration = Duration::from_millis(100);

/// How `berthd` was started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stay attached to the terminal (systemd, debugging).
    pub foreground: bool,
    /// A pipe to report readiness on (set by the client that spawned us).
    pub ready_fd: Option<i32>,
    /// The version to advertise instead of this build's (for tests of
    /// version skew between clients and daemons).
    pub advertise_version: Option<String>,
    /// The idle timeout and connection cap (docs/decisions/0014-bounded-connections.md).
    pub limits: crate::rpc::connections::Limits,
}

/// The one line a spawner waits for.
struct ReadyPipe(Option<std::fs::File>);

impl ReadyPipe {
    #[cfg(unix)]
    fn from_fd(fd: Option<i32>) -> ReadyPipe {
        // SAFETY: the spawner passed this descriptor to us for this purpose
        // and nothing else in this process owns it.
        ReadyPipe(fd.map(|fd| std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) })))
    }

    /// On Windows the spawner's pipe is our standard output (`--ready-fd 1`):
    /// taken over, so that saying the line also closes it and the spawner
    /// reads its end.
    #[cfg(windows)]
    fn from_fd(fd: Option<i32>) -> ReadyPipe {
        use std::os::windows::io::{AsRawHandle, FromRawHandle};
        ReadyPipe(fd.filter(|&fd| fd == 1).map(|_| {
            // SAFETY: the spawner gave us this handle as our stdout for this
            // line alone; nothing else here writes to stdout (logs go to a file).
            unsafe { std::fs::File::from_raw_handle(std::io::stdout().as_raw_handle()) }
        }))
    }

    fn say(&mut self, line: &str) {
        if let Some(mut f) = self.0.take() {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Runs the daemon to completion.
pub fn run(opts: Options) -> ExitCode {
    let mut ready = ReadyPipe::from_fd(opts.ready_fd);
    match boot(&opts, &mut ready) {
        Ok(code) => code,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("berthd: {message}");
            ready.say(&format!("error: {message}"));
            ExitCode::FAILURE
        }
    }
}

fn boot(opts: &Options, ready: &mut ReadyPipe) -> Result<ExitCode, BootError> {
    // Before any thread: it takes the LISTEN_* variables out of the environment.
    let inherited = systemd_socket();
    let env = EnvCtx::from_process();
    let derived = paths::socket_path(&env)?;
    let data_dir = paths::data_dir(&env)?;
    let state_dir = paths::state_dir(&env)?;
    // Before anything is read or made there (docs/decisions/0036-berths-folders-are-the-users-alone.md).
    ownership::check_state_folder(&state_dir, env.uid)?;
    ownership::check_data_folder(&data_dir, env.uid)?;
    if let Err(e) = crate::process::logging::init(&state_dir, opts.foreground) {
        tracing::warn!(dir = ?state_dir, error = %e, "cannot open the log file; logging to stderr");
    }
    // A pipe has no folder; its security descriptor is set when it is made.
    #[cfg(unix)]
    let fallback = derived_folder(&derived, &env, inherited.is_some())?;
    #[cfg(windows)]
    let fallback: Option<Fallback> = None;
    // The data folder first: it is the registry's identity, and a daemon for
    // it may already listen on another socket.
    create_data_dir(&data_dir, env.uid)?;
    let data_lock = match crate::process::lock::claim_data_folder(&data_dir, &derived).map_err(
        BootError::failed(format!("taking the lock in the data folder {data_dir:?}")),
    )? {
        DataFolder::Ours(lock) => lock,
        held if inherited.is_some() => {
            return Err(BootError::Refused(format!(
                "started by systemd, but another berthd serves the data folder {data_dir:?} ({held:?}); \
                 stop it with `berth daemon stop` so systemd's socket takes over"
            )));
        }
        DataFolder::Elsewhere(running) => {
            let message = format!(
                "another berthd (pid {}) already serves the data folder {data_dir:?} on {:?}, and every client of that folder uses it; \
                 to move it to {derived:?}, stop it first with `berth daemon stop`",
                running.pid, running.socket
            );
            eprintln!("berthd: {message}");
            ready.say(&format!("elsewhere: {message}"));
            return Ok(ExitCode::FAILURE);
        }
        DataFolder::SameSocket | DataFolder::Unknown => {
            tracing::debug!(?data_dir, "another berthd serves this data folder; exiting");
            ready.say("busy");
            return Ok(ExitCode::SUCCESS);
        }
    };
    // Only now, holding the data folder's lock: a racing daemon of the same
    // folder makes no folder it would not use.
    #[cfg(unix)]
    crate::rpc::fallback::remove_stale(&data_dir, env.uid);
    #[cfg(unix)]
    let socket = match &fallback {
        None => derived.clone(),
        Some(why) => {
            let own = crate::rpc::fallback::make(&derived, env.uid).map_err(BootError::failed(
                format!(
                    "the socket {derived:?} is not used ({}), and making a folder of berth's own beside it failed",
                    why.because
                ),
            ))?;
            tracing::warn!(instead_of = ?derived, socket = ?own, because = %why.because, "listening in a folder of its own");
            own
        }
    };
    #[cfg(windows)]
    let socket = derived.clone();
    let lock_path = paths::lock_path(&socket);
    // A pipe's lock lives in a folder of its own (see `paths::lock_path`).
    #[cfg(windows)]
    if let Some(dir) = lock_path.parent() {
        paths::ensure_private_dir(dir, env.uid)?;
    }
    let Some(lock) = InstanceLock::try_acquire(&lock_path)
        .map_err(BootError::failed(format!("taking the lock {lock_path:?}")))?
    else {
        if inherited.is_some() {
            // Exiting quietly would make systemd start us again for the
            // same waiting connection, over and over.
            return Err(BootError::Refused(format!(
                "started by systemd, but another berthd holds the lock {lock_path:?}; \
                 stop it with `berth daemon stop` so systemd's socket takes over"
            )));
        }
        tracing::debug!(?lock_path, "another berthd holds the lock; exiting");
        ready.say("busy");
        return Ok(ExitCode::SUCCESS);
    };
    let store = Store::open(&paths::database_path(&data_dir))?;
    let version = opts
        .advertise_version
        .clone()
        .unwrap_or_else(|| berth_proto::VERSION.to_string());
    let daemon = Daemon::new(
        store,
        data_dir.clone(),
        socket.clone(),
        env.home.clone().map(PathBuf::from),
        version,
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(BootError::failed("starting the runtime"))?;
    let limits = match crate::rpc::connections::raise_descriptor_limit() {
        Ok(descriptors) => opts.limits.within_descriptors(descriptors),
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the descriptor limit");
            opts.limits
        }
    };
    let data_lock_file = match data_lock.identity() {
        Ok(identity) => Some((data_lock.path().to_path_buf(), identity)),
        Err(e) => {
            tracing::warn!(error = %e, "cannot stat the data folder's lock");
            None
        }
    };
    let result = runtime.block_on(serve(
        Arc::new(daemon),
        Listen {
            socket: socket.clone(),
            fallback: fallback.clone(),
        },
        inherited,
        env.uid,
        limits,
        data_lock_file,
        ready,
    ));
    // Dropping the runtime would wait for every pool thread, for ever for one
    // stuck in open() or on a hung mount: wait briefly, then leave. The lock
    // is held until the process is gone (the kernel drops it at exit), so
    // `status` and `stop --force` see a process as long as there is one.
    runtime.shutdown_timeout(THREADS_EXIT_WAIT);
    berth_client::record::remove_if_ours(&data_dir, std::process::id());
    // The folder of its own goes with it; its lock file too, a moment before
    // the process (nobody else locks in that folder).
    #[cfg(unix)]
    if fallback.is_some() {
        crate::rpc::fallback::remove(&socket, std::process::id(), env.uid);
    }
    result?;
    // Without running the locks' destructors: they go with the process.
    tracing::info!(lock = ?lock.path(), data_lock = ?data_lock.path(), "berthd exits; the kernel releases its locks");
    std::process::exit(0)
}

/// Where the daemon listens, and why there when it is not the derived socket.
struct Listen {
    socket: PathBuf,
    fallback: Option<Fallback>,
}

/// Whether the daemon can listen on the socket it derived. Its folder is made 0700 when
/// missing. One another user made, a link, or one others can write is refused; unless
/// `BERTH_SOCKET` named it (the user's choice is never replaced) or systemd passed the socket,
/// the daemon then listens in a folder of its own and says why (ADR 0042). Clients decide the
/// same with `verify::check_folder`.
#[cfg(unix)]
fn derived_folder(
    socket: &std::path::Path,
    env: &EnvCtx,
    inherited: bool,
) -> Result<Option<Fallback>, BootError> {
    let dir = socket.parent().unwrap_or(std::path::Path::new("/"));
    match paths::ensure_private_dir(dir, env.uid) {
        Ok(()) => Ok(None),
        Err(e @ paths::PrivateDirError::Unsafe { .. })
            if env.berth_socket.is_none() && !inherited =>
        {
            let because = berth_client::verify::check_folder(socket, env.uid)
                .err()
                .map_or_else(|| e.to_string(), |u| u.problem);
            Ok(Some(Fallback {
                instead_of: socket.to_path_buf(),
                because,
            }))
        }
        Err(e) => Err(e.into()),
    }
}

async fn serve(
    daemon: Arc<Daemon>,
    Listen { socket, fallback }: Listen,
    inherited: Option<Inherited>,
    uid: Uid,
    limits: crate::rpc::connections::Limits,
    data_lock_file: Option<(PathBuf, (u64, u64))>,
    ready: &mut ReadyPipe,
) -> Result<(), BootError> {
    let bound = match inherited {
        #[cfg(unix)]
        Some(fd) => BoundSocket::from_systemd(fd, &socket),
        #[cfg(windows)]
        Some(never) => match never {},
        None => BoundSocket::bind(&socket, uid).await,
    }?;
    // No session is connected before the socket exists: those the store still
    // calls open whose shim is gone are taken as ended now; a shim still
    // running keeps its session (and scratch folder) and re-registers later.
    if let Err(e) = daemon.end_unseen_sessions(daemon.now_secs()) {
        tracing::warn!(error = %e, "could not close the sessions of the last run");
    }
    // Record which folders the local homes are, report nested ones, then sweep the temporary
    // files killed writers left; off the serving path, so a slow mount never delays start-up.
    tokio::task::spawn_blocking({
        let daemon = daemon.clone();
        move || {
            daemon.check_homes_at_start();
            daemon.sweep_stale_temps()
        }
    });
    tokio::spawn(sweep_periodically(daemon.clone()));
    if let Some((lock, identity)) = data_lock_file {
        tokio::spawn(exit_when_the_data_folder_goes(
            daemon.clone(),
            lock,
            identity,
        ));
    }
    let connections = crate::rpc::connections::Table::new(limits);
    tokio::spawn(connections.clone().sweep_idle());
    let (incoming, _socket_guard) = bound.incoming(uid, connections);
    let service = crate::rpc::server::service(daemon.clone());
    // Pings keep a live client's connection read from, so only silent ones
    // reach the idle timeout (docs/decisions/0014-bounded-connections.md).
    // Spawned, not polled by `block_on`: the accept loop hands each connection to this
    // future, and on the runtime's main thread every hand-over woke that thread and the I/O
    // driver (two more context switches per call; docs/benchmarks.md, 2026-12-07).
    let mut server = tokio::spawn(
        tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(limits.keepalive_interval()))
            // No stricter than the idle rule: a client that acks within the
            // timeout is live by both.
            .http2_keepalive_timeout(Some(limits.idle_timeout))
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, daemon.stopped()),
    );
    let stop_signal = stop_signal()?;
    tokio::spawn({
        let daemon = daemon.clone();
        async move {
            stop_signal.await;
            daemon.shut_down(STOP_GRACE).await;
        }
    });
    // Clients of this data folder whose own socket path differs (a stripped
    // environment) find us through this record.
    let in_own_folder = fallback.is_some();
    let record = berth_client::record::DaemonRecord {
        socket: socket.clone(),
        pid: std::process::id(),
        version: daemon.version().to_string(),
        data_dir: daemon.data_dir().to_path_buf(),
        fallback,
    };
    if let Err(e) = berth_client::record::write(daemon.data_dir(), &record) {
        // In a folder of its own, the record is the only way to this daemon.
        if in_own_folder {
            return Err(BootError::Refused(format!(
                "cannot write the daemon record {:?} ({e}), which is how clients find a daemon listening in a folder of its own",
                berth_client::paths::record_path(daemon.data_dir())
            )));
        }
        tracing::warn!(error = %e, "cannot write the daemon record; clients with other socket variables will not find this daemon");
    }
    tracing::info!(
        socket = ?socket,
        pid = std::process::id(),
        version = %daemon.version(),
        idle_timeout = ?limits.idle_timeout,
        max_connections = limits.max_connections,
        "berthd ready"
    );
    ready.say("ready");
    tokio::select! {
        // The task's own failure (a panic), then the server's.
        result = &mut server => result
            .map_err(BootError::failed("serving"))?
            .map_err(BootError::failed("serving"))?,
        () = async {
            daemon.stopped().await;
            // Long-lived calls (a session's stream) must not hold up exit.
            tokio::time::sleep(FLUSH).await;
        } => tracing::info!("stopped; exiting"),
    }
    // Its connections go with it, as they did when the future was dropped here.
    server.abort();
    tracing::info!("berthd stopped");
    Ok(())
}

/// Resolves when the system asks the daemon to stop: SIGTERM or SIGINT.
#[cfg(unix)]
fn stop_signal() -> Result<impl std::future::Future<Output = ()>, BootError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())
        .map_err(BootError::failed("installing the SIGTERM handler"))?;
    let mut int = signal(SignalKind::interrupt())
        .map_err(BootError::failed("installing the SIGINT handler"))?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}

/// Resolves when the console asks the daemon to stop: Ctrl+C, Ctrl+Break,
/// or the console closing (only a foreground daemon has a console; a
/// detached one is stopped with `berth daemon stop`).
#[cfg(windows)]
fn stop_signal() -> Result<impl std::future::Future<Output = ()>, BootError> {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
    let handler = |what: &str| BootError::failed(format!("installing the {what} handler"));
    let mut c = ctrl_c().map_err(handler("Ctrl+C"))?;
    let mut brk = ctrl_break().map_err(handler("Ctrl+Break"))?;
    let mut close = ctrl_close().map_err(handler("console close"))?;
    Ok(async move {
        tokio::select! {
            _ = c.recv() => tracing::info!("Ctrl+C: shutting down"),
            _ = brk.recv() => tracing::info!("Ctrl+Break: shutting down"),
            _ = close.recv() => tracing::info!("console closed: shutting down"),
        }
    })
}

/// What socket activation hands over: a descriptor on Unix; nothing can be
/// handed over on Windows.
#[cfg(unix)]
type Inherited = OwnedFd;
#[cfg(windows)]
type Inherited = std::convert::Infallible;

/// The listening socket systemd passed us (socket activation), when
/// `LISTEN_PID` is our pid and `LISTEN_FDS` is at least 1: descriptor 3
/// (`SD_LISTEN_FDS_START`). See docs/decisions/0009-systemd-socket-activation.md.
#[cfg(unix)]
fn systemd_socket() -> Option<OwnedFd> {
    let var = |k| std::env::var(k).ok()?.trim().parse::<u32>().ok();
    let (pid, fds) = (var("LISTEN_PID"), var("LISTEN_FDS"));
    // They were meant for this process alone, whatever they say: gone before anything runs.
    for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] {
        // SAFETY: called first thing in `boot`, before the daemon starts any thread, so nothing
        // reads the environment meanwhile.
        unsafe { std::env::remove_var(name) };
    }
    let (pid, fds) = (pid?, fds?);
    if pid != std::process::id() || fds < 1 {
        return None;
    }
    // SAFETY: systemd's protocol hands descriptor 3 to this process, which
    // opened nothing there itself; we take sole ownership of it here.
    Some(unsafe { OwnedFd::from_raw_fd(3) })
}

/// Windows has no socket activation.
#[cfg(windows)]
fn systemd_socket() -> Option<Inherited> {
    None
}

/// Creates the data dir where its path leads (through a link of the user's to a folder not
/// made yet, at the link's target): 0700 when we create it; on Windows it inherits the
/// profile's access list. An existing one that passed the ownership check is the user's
/// choice and is used as it is; what was made is checked again before it is used.
fn create_data_dir(dir: &std::path::Path, uid: Uid) -> Result<(), BootError> {
    let found = ownership::check_data_folder(dir, uid)?;
    if found.exists {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&found.real)
        .map_err(BootError::failed(format!(
            "creating the data directory {dir:?}"
        )))?;
    match ownership::check_data_folder(dir, uid) {
        Ok(found) if found.exists => Ok(()),
        Ok(_) => Err(BootError::Refused(format!(
            "the data directory {dir:?} is not there after it was made"
        ))),
        Err(e) => Err(e.into()),
    }
}

/// How often the daemon checks that its data folder is still where it was.
const DATA_FOLDER_CHECK: Duration = Duration::from_secs(2);

/// Stops the daemon once its data folder is deleted, moved or replaced: it would otherwise
/// serve, and write to, a registry no client can find again, and a new daemon could take the
/// same path (docs/decisions/0013-one-daemon-per-data-folder.md).
async fn exit_when_the_data_folder_goes(
    daemon: Arc<Daemon>,
    lock: std::path::PathBuf,
    identity: (u64, u64),
) {
    stop_once_gone(daemon, move || {
        crate::process::lock::still_in_place(&lock, identity)
    })
    .await;
}

/// Asks `still_there` every [`DATA_FOLDER_CHECK`] on tokio's clock, and stops the daemon the
/// first time it says no.
async fn stop_once_gone(
    daemon: Arc<Daemon>,
    still_there: impl Fn() -> bool + Clone + Send + 'static,
) {
    let mut every = tokio::time::interval(DATA_FOLDER_CHECK);
    loop {
        every.tick().await;
        // A stat can hang on a dead mount: off the async workers.
        let here = tokio::task::spawn_blocking(still_there.clone()).await;
        if here.is_ok_and(|here| !here) {
            tracing::warn!(
                data_dir = ?daemon.data_dir(),
                "the data folder was removed or replaced; stopping, so nothing is written where no client looks"
            );
            daemon.shut_down(STOP_GRACE).await;
            return;
        }
    }
}

/// Sweeps scratch folders at start and every hour after.
async fn sweep_periodically(daemon: Arc<Daemon>) {
    let mut every = tokio::time::interval(Duration::from_secs(3600));
    loop {
        every.tick().await;
        let d = daemon.clone();
        let swept = tokio::task::spawn_blocking(move || d.sweep_scratch(d.now_secs())).await;
        if let Ok(Err(e)) = swept {
            tracing::warn!(error = %e, "sweeping scratch folders failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_core::memfs::MemFs;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Paused: the test steps tokio's clock, so each check comes exactly a period after the last.
    #[tokio::test(start_paused = true)]
    async fn the_daemon_stops_at_the_first_check_that_finds_its_data_folder_gone() {
        let (daemon, _) = Daemon::in_memory(MemFs::default());
        let daemon = Arc::new(daemon);
        let there = Arc::new(AtomicBool::new(true));
        let (checked, mut checks) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(stop_once_gone(daemon.clone(), {
            let there = there.clone();
            move || {
                let here = there.load(Ordering::SeqCst);
                checked.send(here).unwrap();
                here
            }
        }));
        // The next check, and how long after the last it came; `None` once the checks ended.
        let mut next = async || {
            let since = tokio::time::Instant::now();
            let got = tokio::time::timeout(DATA_FOLDER_CHECK * 2, checks.recv()).await;
            got.ok().flatten().map(|_| since.elapsed())
        };
        assert_eq!(next().await, Some(Duration::ZERO), "a check at start");
        for _ in 0..5 {
            // Each check that found the folder let the loop go on to the next one.
            assert_eq!(next().await, Some(DATA_FOLDER_CHECK));
        }
        assert!(daemon.pool().is_taking_work());
        there.store(false, Ordering::SeqCst);
        assert_eq!(next().await, Some(DATA_FOLDER_CHECK));
        tokio::time::timeout(STOP_GRACE * 2, daemon.stopped())
            .await
            .expect("the daemon did not stop once its data folder was gone");
        assert_eq!(next().await, None, "checks went on after the stop");
    }
}
