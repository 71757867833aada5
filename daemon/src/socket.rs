//! The daemon's end of the local socket: a private folder, a socket that
//! appears only once the daemon can answer, and a peer check on every
//! connection.
//!
//! **Architecture Invariant:** a connection from another user is dropped
//! before HTTP/2 starts, even if the socket's permissions were opened up.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use berth_proto::transport::LocalStream;
use interprocess::local_socket::tokio::Listener;
use interprocess::local_socket::traits::tokio::Listener as _;
use interprocess::local_socket::{GenericFilePath, ListenerOptions, ToFsName};
use tokio_stream::Stream;

/// A bound, listening socket at its final path.
pub struct BoundSocket {
    listener: Listener,
    path: PathBuf,
    inode: u64,
}

/// Why the socket could not be bound.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// Another daemon answers on this socket.
    #[error("another berthd already answers on {0:?}")]
    InUse(PathBuf),
    /// The socket's folder is unsafe or cannot be made.
    #[error(transparent)]
    Dir(#[from] berth_proto::paths::PrivateDirError),
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
    pub async fn bind(path: &Path, uid: u32) -> Result<BoundSocket, BindError> {
        let io_err = |source| BindError::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = path.parent().unwrap_or(Path::new("/"));
        berth_proto::paths::ensure_private_dir(dir, uid)?;
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
            inode,
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepted connections from our own user only; others are logged and
    /// dropped.
    pub fn incoming(self, uid: u32) -> (impl Stream<Item = io::Result<LocalStream>>, SocketGuard) {
        let guard = SocketGuard {
            path: self.path.clone(),
            inode: self.inode,
        };
        let listener = self.listener;
        let stream = async_stream(listener, uid);
        (stream, guard)
    }
}

fn async_stream(listener: Listener, uid: u32) -> impl Stream<Item = io::Result<LocalStream>> {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let conn = match listener.accept().await {
                Ok(s) => LocalStream(s),
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    // Out of descriptors and the like: back off, don't spin.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            match conn.peer_uid() {
                Ok(Some(peer)) if peer == uid => {}
                Ok(peer) => {
                    tracing::warn!(?peer, ours = uid, "refused a connection from another user");
                    continue;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "refused a connection whose peer is unknown");
                    continue;
                }
            }
            if tx.send(Ok(conn)).await.is_err() {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// Removes the socket file on drop, if it is still the one we bound.
pub struct SocketGuard {
    path: PathBuf,
    inode: u64,
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        if std::fs::symlink_metadata(&self.path).map(|m| m.ino()).ok() == Some(self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
