//! The daemon's end of the local socket: a private folder, a socket that
//! appears only once the daemon can answer, and a peer check on every
//! connection.
//!
//! **Architecture Invariant:** a connection from another user is dropped
//! before HTTP/2 starts, even if the socket's permissions were opened up.
//!
//! Every connection it hands on is tracked (`connections`): idle ones are
//! closed and their number is capped, so a flood of connections costs
//! bounded memory and descriptors.
//!
//! On Windows the socket is a named pipe. It is created as the pipe's first
//! instance, so a pipe another process already holds under that name (a
//! squatter) makes the bind fail instead of sharing the name; its security
//! descriptor admits this user alone; remote clients are rejected; and each
//! client's process must run as this user.

use std::io;
#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use berth_client::paths::Uid;
use berth_client::transport::LocalStream;
use interprocess::local_socket::tokio::Listener;
use interprocess::local_socket::traits::tokio::Listener as _;
use interprocess::local_socket::{GenericFilePath, ListenerOptions, ToFsName};
use tokio_stream::Stream;

use crate::clock;
use crate::ops::live::Peer;
use crate::rpc::connections::{Table, Tracked};
use crate::rpc::throttle::Throttle;

/// A bound, listening socket at its final path.
pub struct BoundSocket {
    listener: Listener,
    path: PathBuf,
    /// The socket file's inode, when the file is ours to remove at exit
    /// (`None`: systemd's socket, which must outlive us).
    inode: Option<u64>,
}

/// Why the socket could not be bound.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// Another daemon answers on this socket.
    #[error("another berthd already answers on {0:?}")]
    InUse(PathBuf),
    /// The socket's folder is unsafe or cannot be made.
    #[error(transparent)]
    Dir(#[from] berth_client::paths::PrivateDirError),
    /// Binding or renaming failed.
    #[error("binding socket {path:?}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

impl BoundSocket {
    /// Binds the socket at `path`. Call while holding the instance lock. A
    /// socket file left by a crashed daemon is replaced; one that still
    /// answers is not (its daemon uses another data dir or lock).
    ///
    /// The socket is bound under a temporary name, made 0600, then renamed
    /// into place, so clients never see a socket that cannot answer yet.
    #[cfg(unix)]
    pub async fn bind(path: &Path, uid: Uid) -> Result<BoundSocket, BindError> {
        let io_err = |source| BindError::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("/"));
        berth_client::paths::ensure_private_dir(dir, uid)?;
        if path.exists() && LocalStream::dial(path).await.is_ok() {
            return Err(BindError::InUse(path.to_path_buf()));
        }
        let tmp = dir.join(format!(".berthd-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let name = tmp
            .as_path()
            .to_fs_name::<GenericFilePath>()
            .map_err(io_err)?;
        let mut listener = ListenerOptions::new()
            .name(name)
            .reclaim_name(false)
            .create_tokio()
            .map_err(io_err)?;
        // We unlink the final path ourselves, only if it is still ours.
        listener.do_not_reclaim_name_on_drop();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(io_err)?;
        std::fs::rename(&tmp, path).map_err(io_err)?;
        let inode = std::fs::symlink_metadata(path).map_err(io_err)?.ino();
        Ok(BoundSocket {
            listener,
            path: path.to_path_buf(),
            inode: Some(inode),
        })
    }

    /// Creates the named pipe `path` as its first instance, with a security
    /// descriptor that admits only this user. A pipe already there is
    /// another daemon's when it answers as ours; anything else holding the
    /// name is refused, naming the pipe.
    #[cfg(windows)]
    pub async fn bind(path: &Path, uid: Uid) -> Result<BoundSocket, BindError> {
        use interprocess::os::windows::local_socket::ListenerOptionsExt;
        let io_err = |source| BindError::Io {
            path: path.to_path_buf(),
            source,
        };
        let sd = berth_client::user_sid::pipe_security_descriptor().map_err(io_err)?;
        let name = path.to_fs_name::<GenericFilePath>().map_err(io_err)?;
        match ListenerOptions::new()
            .name(name)
            .security_descriptor(sd)
            .create_tokio()
        {
            Ok(listener) => Ok(BoundSocket {
                listener,
                path: path.to_path_buf(),
                inode: None,
            }),
            Err(e) => {
                if berth_client::verify::dial(path, uid).await.is_ok() {
                    return Err(BindError::InUse(path.to_path_buf()));
                }
                Err(io_err(io::Error::new(
                    e.kind(),
                    format!(
                        "{e}; another process may hold this pipe name: find it (Sysinternals `handle` or `pipelist`), or set {} to another \\\\.\\pipe\\ name",
                        berth_client::paths::BERTH_SOCKET
                    ),
                )))
            }
        }
    }

    /// Takes the listening socket systemd passed us (socket activation,
    /// `LISTEN_FDS`: the first one is descriptor 3), serving as `path`.
    /// Refused unless it is a listening Unix stream socket. The socket file
    /// stays when we exit: it is systemd's, and the next connection starts
    /// us again. Call while holding the instance lock, in the runtime.
    #[cfg(unix)]
    pub fn from_systemd(fd: std::os::fd::OwnedFd, path: &Path) -> Result<BoundSocket, BindError> {
        use std::os::fd::AsRawFd;
        let io_err = |source| BindError::Io {
            path: path.to_path_buf(),
            source,
        };
        let raw = fd.as_raw_fd();
        let int_opt = |opt| -> io::Result<libc::c_int> {
            let mut v: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: `raw` is a descriptor we own; `v` and `len` are valid
            // for the duration of the call and sized for an int option.
            let r = unsafe {
                libc::getsockopt(raw, libc::SOL_SOCKET, opt, (&raw mut v).cast(), &mut len)
            };
            if r == 0 {
                Ok(v)
            } else {
                Err(io::Error::last_os_error())
            }
        };
        let not = |what: &str| {
            io_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the descriptor systemd passed is not {what}; check ListenStream= in berthd.socket"
                ),
            ))
        };
        match int_opt(libc::SO_TYPE) {
            Ok(libc::SOCK_STREAM) => {}
            Ok(_) => return Err(not("a stream socket")),
            Err(e) if e.raw_os_error() == Some(libc::ENOTSOCK) => return Err(not("a socket")),
            Err(e) => return Err(io_err(e)),
        }
        if int_opt(libc::SO_ACCEPTCONN).map_err(io_err)? == 0 {
            return Err(not("listening"));
        }
        // SAFETY: as above; `addr` is large enough for any socket address.
        let family = unsafe {
            let mut addr: libc::sockaddr_storage = std::mem::zeroed();
            let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            if libc::getsockname(raw, (&raw mut addr).cast(), &mut len) != 0 {
                return Err(io_err(io::Error::last_os_error()));
            }
            addr.ss_family
        };
        if libc::c_int::from(family) != libc::AF_UNIX {
            return Err(not("a Unix socket"));
        }
        // Children (a hook's stop command) must not inherit it.
        // SAFETY: plain fcntl on a descriptor we own.
        unsafe { libc::fcntl(raw, libc::F_SETFD, libc::FD_CLOEXEC) };
        let uds = interprocess::os::unix::uds_local_socket::tokio::Listener::try_from(fd)
            .map_err(io_err)?;
        let mut listener = Listener::from(uds);
        listener.do_not_reclaim_name_on_drop();
        Ok(BoundSocket {
            listener,
            path: path.to_path_buf(),
            inode: None,
        })
    }

    /// Accepted connections from our own user only, each tracked in
    /// `table` (idle timeout, cap); others are logged and dropped.
    pub fn incoming(
        self,
        uid: Uid,
        table: Arc<Table>,
    ) -> (impl Stream<Item = io::Result<Tracked>>, SocketGuard) {
        let guard = SocketGuard {
            path: self.path.clone(),
            inode: self.inode,
        };
        let listener = self.listener;
        let stream = async_stream(listener, uid, table);
        (stream, guard)
    }
}

/// Lines about a flood (failing accepts, refused peers, evictions) are
/// logged at most once a second each, with the count held back.
const LOG_EVERY: Duration = Duration::from_secs(1);

fn async_stream(
    listener: Listener,
    uid: Uid,
    table: Arc<Table>,
) -> impl Stream<Item = io::Result<Tracked>> {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut failed = Throttle::new(LOG_EVERY);
        let mut refused = Throttle::new(LOG_EVERY);
        let mut full = Throttle::new(LOG_EVERY);
        loop {
            let conn = match listener.accept().await {
                Ok(s) => LocalStream(s),
                Err(e) => {
                    if let Some(held) = failed.admit(clock::now()) {
                        tracing::warn!(error = %e, held_back = held, "accept failed");
                    }
                    // Out of descriptors and the like: back off, don't spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let peer = match peer_of(&conn, uid) {
                Ok(Ok(peer)) => peer,
                Ok(Err(other)) => {
                    if let Some(held) = refused.admit(clock::now()) {
                        tracing::warn!(
                            peer = %other,
                            ours = ?uid,
                            held_back = held,
                            "refused a connection from another user"
                        );
                    }
                    continue;
                }
                Err(e) => {
                    if let Some(held) = refused.admit(clock::now()) {
                        tracing::warn!(error = %e, held_back = held, "refused a connection whose peer is unknown");
                    }
                    continue;
                }
            };
            let (conn, evicted) = table.admit(conn, peer);
            if evicted > 0
                && let Some(held) = full.admit(clock::now())
            {
                let cap = table.limits().max_connections;
                tracing::warn!(
                    cap,
                    held_back = held,
                    "{cap} connections open: closed the longest-silent one to answer a new one"
                );
            }
            if tx.is_closed() {
                return;
            }
            // HTTP/2 starts once the peer speaks (`Tracked::first_bytes`).
            let tx = tx.clone();
            tokio::spawn(async move {
                if let Some(conn) = conn.first_bytes().await {
                    let _ = tx.send(Ok(conn)).await;
                }
            });
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// The connected peer's process, when it runs as `uid`; `Ok(Err(who))` names the
/// other user it runs as. Its pid is what a session it registers belongs to.
#[cfg(unix)]
fn peer_of(conn: &LocalStream, uid: Uid) -> io::Result<Result<Peer, String>> {
    match conn.peer_uid()? {
        Some(peer) if peer == uid => Ok(Ok(Peer {
            pid: conn.peer_pid()?,
        })),
        Some(peer) => Ok(Err(format!("uid {peer}"))),
        None => Err(io::Error::other("the system does not tell the peer's uid")),
    }
}

/// The pipe client's process, when it runs as this user (its token's SID).
#[cfg(windows)]
fn peer_of(conn: &LocalStream, _: Uid) -> io::Result<Result<Peer, String>> {
    let pid = conn.peer_pid()?;
    if berth_client::verify::runs_as_us(pid)? {
        Ok(Ok(Peer { pid }))
    } else {
        Ok(Err(format!("the user of pid {pid}")))
    }
}

/// Removes the socket file on drop, if it is still the one we bound.
// A pipe has no file to remove: on Windows the guard keeps nothing it reads.
#[cfg_attr(windows, allow(dead_code))]
pub struct SocketGuard {
    path: PathBuf,
    inode: Option<u64>,
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        // A pipe goes with its last handle; only a socket file is left to remove.
        #[cfg(unix)]
        {
            let Some(inode) = self.inode else {
                return;
            };
            if std::fs::symlink_metadata(&self.path).map(|m| m.ino()).ok() == Some(inode) {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}
