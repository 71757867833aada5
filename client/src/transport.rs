//! The local-socket stream both ends speak gRPC over: a Unix socket, or a
//! named pipe on Windows, through `interprocess`, so there is one code path.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use interprocess::local_socket::tokio::Stream as IpcStream;
use interprocess::local_socket::traits::tokio::Stream as _;
use interprocess::local_socket::{GenericFilePath, ToFsName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connected local socket, usable by tonic on either side.
#[derive(Debug)]
pub struct LocalStream(pub IpcStream);

impl LocalStream {
    /// Connects to the socket at `path`.
    pub async fn dial(path: &Path) -> io::Result<LocalStream> {
        // A file path, never a namespaced name: on Linux that would be an
        // abstract socket with no file permissions.
        let name = path.to_fs_name::<GenericFilePath>()?;
        IpcStream::connect(name).await.map(LocalStream)
    }

    /// The peer's effective uid, where the platform tells it.
    #[cfg(unix)]
    pub fn peer_uid(&self) -> io::Result<Option<u32>> {
        use interprocess::local_socket::traits::StreamCommon;
        self.0.peer_creds().map(|c| c.euid())
    }

    /// The peer's process id, as the kernel tells it (`SO_PEERCRED` on Linux,
    /// `LOCAL_PEEREPID` on macOS); 0, a pid outside our pid namespace, is none.
    #[cfg(unix)]
    pub fn peer_pid(&self) -> io::Result<u32> {
        let IpcStream::UdSocket(s) = &self.0;
        s.inner()
            .peer_cred()?
            .pid()
            .and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p != 0)
            .ok_or_else(|| io::Error::other("the system does not tell the peer's process id"))
    }

    /// The peer's process id: a client's, or the pipe server's.
    #[cfg(windows)]
    pub fn peer_pid(&self) -> io::Result<u32> {
        use interprocess::local_socket::traits::StreamCommon;
        self.0
            .peer_creds()?
            .pid()
            .ok_or_else(|| io::Error::other("the system does not tell the peer's process id"))
    }
}

impl AsyncRead for LocalStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for LocalStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for LocalStream {
    type ConnectInfo = ();

    fn connect_info(&self) -> Self::ConnectInfo {}
}
