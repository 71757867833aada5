//! The one client connector: find the socket, connect, start `berthd` when
//! nobody answers, and keep client and daemon versions in step.
//!
//! Every reply is sorted into ready, needs-restart (an older daemon) or
//! unreachable, and each failure says what happened and what to run.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::ownership::{self, NotOurs};
use crate::paths::{self, EnvCtx, PathError};
use crate::record;
use crate::spawn::{self, Readiness};
use crate::transport::LocalStream;
use crate::verify::{self, DialError, Untrusted};
use berth_proto::pb::berth_client::BerthClient;
use berth_proto::status::CodeStatus as _;
use berth_proto::{CLIENT_VERSION_HEADER, DATA_DIR_HEADER, PROTOCOL, VERSION};
use berth_vocab::codes::Code;

/// How long a daemon may take to become ready after it was spawned.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connected daemon may take to answer one request before it is
/// reported as wedged.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A typed gRPC client that stamps every request with this client's version
/// and data folder.
pub type Client = BerthClient<InterceptedService<Channel, VersionStamp>>;

/// Adds [`CLIENT_VERSION_HEADER`] and, when known, [`DATA_DIR_HEADER`] to
/// each request, so a daemon of another registry refuses instead of
/// answering from the wrong one.
#[derive(Clone)]
pub struct VersionStamp {
    data_dir: Option<DataDirValue>,
}

type DataDirValue = tonic::metadata::MetadataValue<tonic::metadata::Binary>;

/// The data folder as the daemon compares it: canonical when it exists, so a
/// symlink, `..` or a path relative to this client's cwd names the same
/// registry, and the daemon never touches the disk to compare (its async
/// workers must not block). A folder not made yet is sent as spelled; the
/// daemon this client starts is given the same spelling.
fn data_dir_value(data_dir: Option<&Path>) -> Option<DataDirValue> {
    data_dir.map(|d| {
        // Spelled as the daemon spells its own (without Windows' `\\?\` where possible).
        let canonical = d
            .canonicalize()
            .map(berth_vocab::pathform::without_verbatim);
        let d = canonical.as_deref().unwrap_or(d);
        DataDirValue::from_bytes(paths::path_to_wire(d))
    })
}

impl tonic::service::Interceptor for VersionStamp {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        req.metadata_mut().insert(
            CLIENT_VERSION_HEADER,
            version_stamp().parse().expect("version is ASCII"),
        );
        if let Some(d) = &self.data_dir {
            req.metadata_mut().insert_bin(DATA_DIR_HEADER, d.clone());
        }
        Ok(req)
    }
}

/// `<version>/<protocol>`, as sent in [`CLIENT_VERSION_HEADER`].
pub fn version_stamp() -> String {
    format!("{VERSION}/{PROTOCOL}")
}

/// Why a client could not get an answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No socket path could be derived.
    #[error(transparent)]
    Path(#[from] PathError),
    /// No daemon runs, and this call does not start one.
    #[error("berthd is not running (socket {socket:?})")]
    NotRunning {
        /// The socket tried.
        socket: PathBuf,
    },
    /// The socket exists but connecting failed for another reason.
    #[error(
        "failed to connect to berthd at {socket:?}: {source}. Is it running? Try `berth daemon start`"
    )]
    Unreachable {
        /// The socket tried.
        socket: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// No `berthd` executable was found to start.
    #[error(
        "cannot find berthd to start it: looked in BERTH_DAEMON, beside this program and on PATH; install berthd or set BERTH_DAEMON"
    )]
    DaemonNotFound,
    /// Spawning `berthd` failed.
    #[error("starting {exe:?}: {source}")]
    SpawnFailed {
        /// The executable.
        exe: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// `berthd` started and reported that it cannot run.
    #[error("berthd could not start: {0}")]
    DaemonFailed(String),
    /// `berthd` was started but never answered.
    #[error(
        "berthd did not become ready at {socket:?} within {secs} s; see its log in the berth state folder"
    )]
    NotReady {
        /// The socket tried.
        socket: PathBuf,
        /// How long we waited.
        secs: u64,
    },
    /// `berthd` was started to listen in a folder of its own, but its record
    /// never named a socket that answers.
    #[error(
        "berthd did not say where it listens in {record:?} within {secs} s; see its log in the berth state folder"
    )]
    NoRecord {
        /// The data folder's record.
        record: PathBuf,
        /// How long we waited.
        secs: u64,
    },
    /// A daemon holds the lock but does not answer in time.
    #[error(
        "berthd{pid} at {socket:?} accepted the connection but did not answer within {secs} s; stop it with `berth daemon stop --force`"
    )]
    Wedged {
        /// The socket.
        socket: PathBuf,
        /// " (pid N)" when the lock file names it.
        pid: String,
        /// How long we waited.
        secs: u64,
    },
    /// The connection broke before the daemon answered.
    #[error(
        "lost the connection to berthd at {socket:?} before it answered ({detail}); it may have crashed or been stopped. Run the command again; if it keeps failing, see `berth daemon status`"
    )]
    ConnectionLost {
        /// The socket.
        socket: PathBuf,
        /// What the transport said.
        detail: String,
    },
    /// What listens on the socket is not this user's daemon; nothing was sent.
    #[error(transparent)]
    Untrusted(#[from] Untrusted),
    /// The data folder, or a file berth reads in it, is not this user's alone: nothing was
    /// read from it and no daemon was started on it.
    #[error(transparent)]
    NotOurs(#[from] NotOurs),
    /// The daemon refused or failed the request; its message says why.
    #[error("{}", .0.message())]
    Rpc(tonic::Status),
}

impl ClientError {
    /// The daemon's machine code, when the error came from it.
    pub fn code(&self) -> Option<Code> {
        match self {
            ClientError::Rpc(s) => Code::of(s),
            _ => None,
        }
    }

    /// The next steps the daemon sent with its error, in order.
    pub fn hints(&self) -> Vec<String> {
        match self {
            ClientError::Rpc(s) => berth_proto::status::hints(s),
            _ => Vec::new(),
        }
    }
}

/// An open connection to the daemon.
pub struct Connection {
    client: Client,
    /// Without the version stamp: status and shutdown must reach any daemon,
    /// whatever its version (shutdown still names the data folder).
    plain: BerthClient<Channel>,
    socket: PathBuf,
    data_dir: Option<DataDirValue>,
    env: EnvCtx,
}

impl Connection {
    /// Connects, starting the daemon when nobody answers. The daemon of
    /// this data folder comes first, wherever its record says it listens;
    /// then the socket this environment derives.
    pub async fn open(env: &EnvCtx) -> Result<Connection, ClientError> {
        let socket = paths::socket_path(env)?;
        let data_dir = checked_data_dir(env)?;
        if let Some((stream, at)) = via_record(data_dir.as_deref(), &socket, env.uid).await {
            return Connection::over(stream, at, env.clone()).await;
        }
        // A folder of another user is refused here, before anything is
        // started in it or connected to.
        let (stream, at) = match verify::dial(&socket, env.uid).await {
            Ok(s) => (s, socket),
            Err(DialError::Absent(_)) => {
                start_and_dial(&socket, data_dir.as_deref(), env.uid).await?
            }
            // A derived one: the daemon listens in a folder of its own.
            Err(DialError::Untrusted(u)) => {
                match in_own_folder(env, &socket, data_dir.as_deref()).await {
                    Some(found) => found?,
                    None => return Err(named_by_user(env, ClientError::Untrusted(u))),
                }
            }
            Err(e) => return Err(named_by_user(env, dial_failed(&socket, e))),
        };
        Connection::over(stream, at, env.clone()).await
    }

    /// Connects to a running daemon of this data folder (or on the derived
    /// socket); `Ok(None)` when none runs.
    pub async fn open_existing(env: &EnvCtx) -> Result<Option<Connection>, ClientError> {
        let socket = paths::socket_path(env)?;
        let data_dir = checked_data_dir(env)?;
        if let Some((stream, at)) = via_record(data_dir.as_deref(), &socket, env.uid).await {
            return Connection::over(stream, at, env.clone()).await.map(Some);
        }
        match verify::dial(&socket, env.uid).await {
            Ok(s) => Connection::over(s, socket, env.clone()).await.map(Some),
            Err(DialError::Absent(_)) => Ok(None),
            // No daemon of ours listens in another user's folder.
            Err(DialError::Untrusted(_)) if refused(env, &socket).is_some() => Ok(None),
            Err(e) => Err(named_by_user(env, dial_failed(&socket, e))),
        }
    }

    async fn over(
        first: LocalStream,
        socket: PathBuf,
        env: EnvCtx,
    ) -> Result<Connection, ClientError> {
        // The first stream is the one just dialled; later reconnects dial
        // anew and are verified just the same.
        let first = Arc::new(Mutex::new(Some(first)));
        let path = socket.clone();
        let uid = env.uid;
        let connector = tower::service_fn(move |_: Uri| {
            let first = first.lock().unwrap_or_else(|p| p.into_inner()).take();
            let path = path.clone();
            async move {
                let stream = match first {
                    Some(s) => s,
                    None => verify::dial(&path, uid)
                        .await
                        .map_err(|e| io::Error::other(dial_failed(&path, e)))?,
                };
                Ok::<_, io::Error>(TokioIo::new(stream))
            }
        });
        let endpoint = Endpoint::from_static("http://berthd.invalid");
        let channel =
            tokio::time::timeout(ANSWER_TIMEOUT, endpoint.connect_with_connector(connector))
                .await
                .map_err(|_| wedged(&socket))?
                .map_err(|e| ClientError::Unreachable {
                    socket: socket.clone(),
                    source: io::Error::other(e),
                })?;
        let data_dir = data_dir_value(paths::data_dir(&env).ok().as_deref());
        let stamp = VersionStamp {
            data_dir: data_dir.clone(),
        };
        Ok(Connection {
            plain: BerthClient::new(channel.clone()),
            client: BerthClient::with_interceptor(channel, stamp)
                .max_decoding_message_size(berth_proto::MAX_MESSAGE_BYTES)
                .max_encoding_message_size(berth_proto::MAX_MESSAGE_BYTES),
            socket,
            data_dir,
            env,
        })
    }

    /// The socket this connection uses.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Runs one RPC. A daemon older than this client is stopped and replaced
    /// once (said on stderr); a daemon that does not answer in time is
    /// reported as wedged.
    pub async fn call<T, F, Fut>(&mut self, mut rpc: F) -> Result<T, ClientError>
    where
        F: FnMut(Client) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        match self.call_once(&mut rpc).await {
            Err(ClientError::Rpc(status)) if Code::of(&status) == Some(Code::DaemonOutdated) => {
                eprintln!(
                    "berth: {}; restarting berthd with this version ({VERSION})",
                    status.message()
                );
                self.replace_daemon().await?;
                self.call_once(&mut rpc).await
            }
            other => other,
        }
    }

    async fn call_once<T, F, Fut>(&mut self, rpc: &mut F) -> Result<T, ClientError>
    where
        F: FnMut(Client) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        match tokio::time::timeout(ANSWER_TIMEOUT, rpc(self.client.clone())).await {
            Ok(Ok(reply)) => Ok(reply.into_inner()),
            Ok(Err(status)) => Err(classify(&self.socket, status)),
            Err(_) => Err(wedged(&self.socket)),
        }
    }

    /// One RPC on a clone of this connection's channel, to run while
    /// another call holds the connection (HTTP/2 carries both at once). The
    /// returned future owns what it needs. Unlike [`Connection::call`], an
    /// outdated daemon is not replaced: its error is returned.
    pub fn alongside<T, F, Fut>(
        &self,
        rpc: F,
    ) -> impl Future<Output = Result<T, ClientError>> + Send + 'static
    where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>> + Send + 'static,
    {
        let reply = rpc(self.client.clone());
        let socket = self.socket.clone();
        async move {
            match tokio::time::timeout(ANSWER_TIMEOUT, reply).await {
                Ok(Ok(reply)) => Ok(reply.into_inner()),
                Ok(Err(status)) => Err(classify(&socket, status)),
                Err(_) => Err(wedged(&socket)),
            }
        }
    }

    async fn replace_daemon(&mut self) -> Result<(), ClientError> {
        let _ = self.shutdown().await;
        wait_for_release(&self.socket, START_TIMEOUT).await;
        *self = Connection::open(&self.env.clone()).await?;
        Ok(())
    }

    /// The daemon's status. Sent unstamped, so any version answers.
    pub async fn status(&mut self) -> Result<berth_proto::pb::StatusReply, ClientError> {
        let mut c = self.plain.clone();
        match tokio::time::timeout(ANSWER_TIMEOUT, c.status(berth_proto::pb::StatusRequest {}))
            .await
        {
            Ok(Ok(r)) => Ok(r.into_inner()),
            Ok(Err(s)) => Err(classify(&self.socket, s)),
            Err(_) => Err(wedged(&self.socket)),
        }
    }

    /// Asks the daemon to exit. Sent without a version, so any version
    /// obeys; with the data folder, so a daemon of another registry refuses.
    pub async fn shutdown(&mut self) -> Result<(), ClientError> {
        let mut c = self.plain.clone();
        let mut req = tonic::Request::new(berth_proto::pb::ShutdownRequest {});
        if let Some(d) = &self.data_dir {
            req.metadata_mut().insert_bin(DATA_DIR_HEADER, d.clone());
        }
        match tokio::time::timeout(ANSWER_TIMEOUT, c.shutdown(req)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(s)) => Err(ClientError::Rpc(s)),
            Err(_) => Err(wedged(&self.socket)),
        }
    }
}

/// The data folder, when one can be derived, once it passed [`ownership::check_data_folder`]:
/// before its record is read or a daemon is started on it, since its registry names a command
/// the hook runs.
fn checked_data_dir(env: &EnvCtx) -> Result<Option<PathBuf>, ClientError> {
    let Ok(dir) = paths::data_dir(env) else {
        return Ok(None);
    };
    ownership::check_data_folder(&dir, env.uid)?;
    Ok(Some(dir))
}

/// Sorts a failed call: the daemon's own errors carry a code; a status
/// without one came from the transport.
pub fn classify(socket: &Path, status: tonic::Status) -> ClientError {
    let transport = Code::of(&status).is_none()
        && matches!(
            status.code(),
            tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
        );
    if transport {
        ClientError::ConnectionLost {
            socket: socket.to_path_buf(),
            detail: status.message().to_string(),
        }
    } else {
        ClientError::Rpc(status)
    }
}

/// A failed verified dial as the client's error.
fn dial_failed(socket: &Path, e: DialError) -> ClientError {
    match e {
        DialError::Untrusted(u) => ClientError::Untrusted(u),
        DialError::Absent(source) | DialError::Io(source) => ClientError::Unreachable {
            socket: socket.to_path_buf(),
            source,
        },
    }
}

/// A refusal of the socket `BERTH_SOCKET` names says so: the user chose
/// it, so berth looks for no other.
fn named_by_user(env: &EnvCtx, e: ClientError) -> ClientError {
    match e {
        ClientError::Untrusted(mut u) if env.berth_socket.is_some() => {
            u.next = format!(
                "{} names this socket, so berth uses no other. {}",
                paths::BERTH_SOCKET,
                u.next
            );
            ClientError::Untrusted(u)
        }
        e => e,
    }
}

/// Why the socket this environment derives is not used: its folder is
/// another user's, a link, or writable by others (`verify::check_folder`).
/// `None` when it is fine, does not exist yet, or `BERTH_SOCKET` names the
/// socket (the user's choice is refused, never replaced). The daemon then
/// listens in a folder of its own, found through the data folder's record.
#[cfg(unix)]
pub fn refused_derived_socket(env: &EnvCtx) -> Option<Untrusted> {
    refused(env, &paths::socket_path(env).ok()?)
}

/// [`refused_derived_socket`] of `socket`, which `env` derives.
#[cfg(unix)]
fn refused(env: &EnvCtx, socket: &Path) -> Option<Untrusted> {
    if env.berth_socket.is_some() {
        return None;
    }
    verify::check_folder(socket, env.uid).err()
}

/// A pipe has no folder to refuse (ADR 0042).
#[cfg(windows)]
fn refused(_: &EnvCtx, _: &Path) -> Option<Untrusted> {
    None
}

/// The daemon in a folder of its own, started if need be, when the derived
/// `socket`'s folder is refused; `None` when it is not.
async fn in_own_folder(
    env: &EnvCtx,
    socket: &Path,
    data_dir: Option<&Path>,
) -> Option<Result<(LocalStream, PathBuf), ClientError>> {
    let refused = refused(env, socket)?;
    #[cfg(unix)]
    {
        // Without a data folder there is no record to find it by.
        let data_dir = data_dir?;
        tracing::debug!("{refused}; starting berthd in a folder of its own");
        Some(start_in_own_folder(socket, data_dir, env.uid).await)
    }
    #[cfg(windows)]
    {
        let _ = (refused, data_dir);
        None
    }
}

/// Where to look for the lock and pid of this data folder's daemon: the
/// derived socket, or, when its folder is refused, the socket the record
/// names once its folder passes the checks (the refused folder is never
/// looked into: a FIFO there would hang whoever opens it). `None`: nowhere.
pub fn lock_socket(env: &EnvCtx) -> Option<PathBuf> {
    #[cfg(unix)]
    if refused_derived_socket(env).is_some() {
        let rec = record::read(&paths::data_dir(env).ok()?)?;
        return verify::check_folder(&rec.socket, env.uid)
            .is_ok_and(|exists| exists)
            .then_some(rec.socket);
    }
    paths::socket_path(env).ok()
}

fn wedged(socket: &Path) -> ClientError {
    ClientError::Wedged {
        socket: socket.to_path_buf(),
        pid: daemon_pid(socket)
            .map(|p| format!(" (pid {p})"))
            .unwrap_or_default(),
        secs: ANSWER_TIMEOUT.as_secs(),
    }
}

/// The pid written in the daemon's lock file, if any.
pub fn daemon_pid(socket: &Path) -> Option<u32> {
    std::fs::read_to_string(paths::lock_path(socket))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether a daemon holds the lock for `socket` right now.
pub fn lock_is_held(socket: &Path) -> bool {
    crate::instance_lock::is_held(&paths::lock_path(socket))
}

/// Waits, with growing pauses, until no daemon holds the lock for `socket`.
/// Returns whether it was released in time.
pub async fn wait_for_release(socket: &Path, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    while lock_is_held(socket) {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    true
}

/// The daemon this data folder's record names, when it listens on another
/// socket than the derived one and passes the same checks. A record whose
/// daemon is gone, or whose socket is not trusted, is passed over: the
/// derived socket is verified in its turn.
async fn via_record(
    data_dir: Option<&Path>,
    derived: &Path,
    uid: paths::Uid,
) -> Option<(LocalStream, PathBuf)> {
    let rec = record::read(data_dir?)?;
    if rec.socket == derived {
        return None;
    }
    match verify::dial(&rec.socket, uid).await {
        Ok(s) => Some((s, rec.socket)),
        Err(e) => {
            tracing::debug!(socket = ?rec.socket, "the data folder's record names no usable daemon: {}", dial_failed(&rec.socket, e));
            None
        }
    }
}

async fn start_and_dial(
    socket: &Path,
    data_dir: Option<&Path>,
    uid: paths::Uid,
) -> Result<(LocalStream, PathBuf), ClientError> {
    let exe =
        spawn::find_daemon(std::env::var_os("BERTH_DAEMON")).ok_or(ClientError::DaemonNotFound)?;
    let deadline = Instant::now() + START_TIMEOUT;
    // A daemon that said `busy` may itself be on its way out (a killed one
    // still holds the lock for a moment while it exits): when the lock comes
    // free and nobody answers, start another, a few times at most.
    for _ in 0..MAX_SPAWNS {
        let said = spawn_blocking_detached(&exe).await?;
        match said {
            Readiness::Ready => {
                return verify::dial(socket, uid)
                    .await
                    .map(|s| (s, socket.to_path_buf()))
                    .map_err(|e| dial_failed(socket, e));
            }
            // This data folder's daemon listens elsewhere: use that one.
            Readiness::Elsewhere(which) => {
                return via_record(data_dir, socket, uid)
                    .await
                    .ok_or(ClientError::DaemonFailed(which));
            }
            Readiness::Failed(why) => return Err(ClientError::DaemonFailed(why)),
            // Another client's daemon won the race; it appears shortly.
            Readiness::Busy | Readiness::Silent => {
                match wait_for_holder(socket, uid, deadline).await? {
                    Some(stream) => return Ok((stream, socket.to_path_buf())),
                    None => continue,
                }
            }
        }
    }
    Err(not_ready(socket))
}

/// How many daemons one client starts before it gives up.
const MAX_SPAWNS: usize = 3;

/// Starts the daemon when the derived socket's folder is refused: it
/// listens in a folder of its own and says where in the data folder's
/// record, written before it says `ready`. Whatever it says (`ready`, or
/// `busy`: another daemon of this data folder won the race), the record is
/// where to look; nothing is dialled in the refused folder.
#[cfg(unix)]
async fn start_in_own_folder(
    derived: &Path,
    data_dir: &Path,
    uid: paths::Uid,
) -> Result<(LocalStream, PathBuf), ClientError> {
    let exe =
        spawn::find_daemon(std::env::var_os("BERTH_DAEMON")).ok_or(ClientError::DaemonNotFound)?;
    let deadline = Instant::now() + START_TIMEOUT;
    for _ in 0..MAX_SPAWNS {
        if let Readiness::Failed(why) = spawn_blocking_detached(&exe).await? {
            return Err(ClientError::DaemonFailed(why));
        }
        if let Some(found) = wait_for_record(data_dir, derived, uid, deadline).await? {
            return Ok(found);
        }
    }
    Err(no_record(data_dir))
}

/// Reads the record with growing pauses until it names a socket that
/// answers (`Some`), or the data folder's lock holder is gone with none
/// named (`None`: start one). The holder is known by the pid in its lock
/// file, read without touching the lock (ADR 0013: a probe could make a
/// starting daemon believe it lost the race).
#[cfg(unix)]
async fn wait_for_record(
    data_dir: &Path,
    derived: &Path,
    uid: paths::Uid,
    deadline: Instant,
) -> Result<Option<(LocalStream, PathBuf)>, ClientError> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(found) = via_record(Some(data_dir), derived, uid).await {
            return Ok(Some(found));
        }
        if !data_folder_holder_runs(data_dir) {
            // It may have written its record just before it went.
            return Ok(via_record(Some(data_dir), derived, uid).await);
        }
        if Instant::now() >= deadline {
            return Err(no_record(data_dir));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Whether the process whose pid the data folder's lock file holds runs.
/// An empty file (a holder that let go) or no file: nobody.
#[cfg(unix)]
fn data_folder_holder_runs(data_dir: &Path) -> bool {
    let pid = std::fs::read_to_string(paths::data_lock_path(data_dir))
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let Some(pid) = pid
        .filter(|&p| p > 0)
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    // Signal 0 only asks whether the process exists; EPERM says it does, as another user's.
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

#[cfg(unix)]
fn no_record(data_dir: &Path) -> ClientError {
    ClientError::NoRecord {
        record: paths::record_path(data_dir),
        secs: START_TIMEOUT.as_secs(),
    }
}

async fn spawn_blocking_detached(exe: &Path) -> Result<Readiness, ClientError> {
    let failed = |source| ClientError::SpawnFailed {
        exe: exe.to_path_buf(),
        source,
    };
    let owned = exe.to_path_buf();
    tokio::task::spawn_blocking(move || spawn::spawn_detached(&owned, &[], START_TIMEOUT))
        .await
        .map_err(|e| failed(io::Error::other(e)))?
        .map_err(failed)
}

/// Dials with growing pauses until the lock holder's socket answers
/// (`Some`), or the lock is free with nobody answering (`None`: start one).
/// A lock held past the deadline by a daemon that never answers is a wedged
/// daemon.
async fn wait_for_holder(
    socket: &Path,
    uid: paths::Uid,
    deadline: Instant,
) -> Result<Option<LocalStream>, ClientError> {
    let mut pause = Duration::from_millis(1);
    loop {
        match verify::dial(socket, uid).await {
            Ok(s) => return Ok(Some(s)),
            Err(DialError::Absent(_)) => {}
            Err(e) => return Err(dial_failed(socket, e)),
        }
        if !lock_is_held(socket) {
            // The holder went away between its `busy` and now; one more dial
            // covers a daemon that bound its socket just before releasing.
            return match verify::dial(socket, uid).await {
                Ok(s) => Ok(Some(s)),
                Err(DialError::Untrusted(u)) => Err(ClientError::Untrusted(u)),
                Err(_) => Ok(None),
            };
        }
        if Instant::now() >= deadline {
            return Err(wedged(socket));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn not_ready(socket: &Path) -> ClientError {
    ClientError::NotReady {
        socket: socket.to_path_buf(),
        secs: START_TIMEOUT.as_secs(),
    }
}
