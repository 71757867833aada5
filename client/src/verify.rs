//! Is the daemon behind a socket ours? Checked on every dial, before a
//! single byte is sent: anyone who can plant a socket where a client looks
//! would otherwise read its requests (file contents, hook payloads) and
//! answer them (a stop command the hook runs as the user).
//!
//! Three facts, each of which another user cannot fake:
//! - the socket's folder is ours, no symlink, and nobody else can write it,
//!   so nobody else can plant or swap the socket inside;
//! - the socket file is ours;
//! - the process that accepted the connection runs as us (`SO_PEERCRED` on
//!   Linux, `getpeereid` on macOS), checked on the connected stream itself.
//!
//! On Windows the socket is a named pipe, whose namespace every user shares,
//! so a pipe squatted by another user is the fake daemon to fear. The daemon
//! creates its pipe as the first instance (a squatter's pipe makes that fail)
//! with a descriptor admitting only the user; the client, before it writes,
//! asks the pipe for the server's process id and compares that process's
//! token user with its own.

use std::io;
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::paths::{BERTH_SOCKET, Uid};
use crate::transport::LocalStream;

/// Why a socket is not trusted: names the path, who owns it and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to talk to the berthd socket {socket:?}: {problem}. Another user may be impersonating berthd, so nothing was sent. {next}"
)]
pub struct Untrusted {
    /// The socket the client meant to use.
    pub socket: PathBuf,
    /// What is wrong, naming the owner.
    pub problem: String,
    /// What to do about it.
    pub next: String,
}

/// What a verified dial found.
#[derive(Debug)]
pub enum DialError {
    /// Nobody listens there (no folder, no socket, or a dead one): start one.
    Absent(io::Error),
    /// Something is there that is not ours: refuse, start nothing there.
    Untrusted(Untrusted),
    /// Connecting failed for another reason.
    Io(io::Error),
}

/// What to do instead, said after each refusal.
#[cfg(unix)]
fn elsewhere() -> String {
    format!("or set {BERTH_SOCKET} to a socket in a folder only you own")
}

/// Checks the socket's folder without looking inside it: ours, no symlink,
/// not writable by group or others. `Ok(false)` when it does not exist yet.
/// The daemon listens in a folder of its own when the folder of the socket
/// it derived fails this (ADR 0042).
#[cfg(unix)]
pub fn check_folder(socket: &Path, uid: Uid) -> Result<bool, Untrusted> {
    let dir = socket.parent().unwrap_or(Path::new("/"));
    let untrusted = |problem: String, next: String| Untrusted {
        socket: socket.to_path_buf(),
        problem,
        next,
    };
    let elsewhere = elsewhere();
    let dir_meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(untrusted(
                format!("its folder {dir:?} cannot be inspected ({e})"),
                format!("Check that folder, {elsewhere}"),
            ));
        }
    };
    if dir_meta.file_type().is_symlink() {
        let target = std::fs::read_link(dir)
            .map(|t| format!(" to {t:?}"))
            .unwrap_or_default();
        return Err(untrusted(
            format!(
                "its folder {dir:?} is a symlink{target} owned by uid {}",
                dir_meta.uid()
            ),
            format!("Remove the symlink if you did not make it, {elsewhere}"),
        ));
    }
    if !dir_meta.is_dir() {
        return Err(untrusted(
            format!("{dir:?} is not a directory"),
            format!("Remove it, {elsewhere}"),
        ));
    }
    if dir_meta.uid() != uid {
        return Err(untrusted(
            format!(
                "its folder {dir:?} belongs to uid {}, not to you (uid {uid})",
                dir_meta.uid()
            ),
            format!("Have that folder removed (it may be stale), {elsewhere}"),
        ));
    }
    let mode = dir_meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(untrusted(
            format!("its folder {dir:?} can be written by group or others (mode {mode:o})"),
            format!("Run `chmod go-w {}`, {elsewhere}", dir.display()),
        ));
    }
    Ok(true)
}

/// Checks the socket's folder ([`check_folder`]) and file without
/// connecting. `Ok(false)` when the folder or the socket does not exist yet.
#[cfg(unix)]
pub fn check_path(socket: &Path, uid: Uid) -> Result<bool, Untrusted> {
    if !check_folder(socket, uid)? {
        return Ok(false);
    }
    let untrusted = |problem: String, next: String| Untrusted {
        socket: socket.to_path_buf(),
        problem,
        next,
    };
    let elsewhere = elsewhere();
    let meta = match std::fs::symlink_metadata(socket) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(untrusted(
                format!("it cannot be inspected ({e})"),
                format!("Check it, {elsewhere}"),
            ));
        }
    };
    if meta.uid() != uid {
        return Err(untrusted(
            format!(
                "the socket belongs to uid {}, not to you (uid {uid})",
                meta.uid()
            ),
            format!("Remove it (your own folder holds it), {elsewhere}"),
        ));
    }
    if meta.file_type().is_symlink() {
        return Err(untrusted(
            "the socket is a symlink".into(),
            format!("Remove it, {elsewhere}"),
        ));
    }
    if !meta.file_type().is_socket() {
        // Not a daemon; connecting fails and the daemon replaces the file.
        return Ok(false);
    }
    Ok(true)
}

/// Connects to `socket` only after [`check_path`], and keeps the stream only
/// when its peer runs as `uid`. Nothing is written before both checks pass.
#[cfg(unix)]
pub async fn dial(socket: &Path, uid: Uid) -> Result<LocalStream, DialError> {
    check_path(socket, uid).map_err(DialError::Untrusted)?;
    let stream = match LocalStream::dial(socket).await {
        Ok(s) => s,
        Err(e) if is_absent(&e) => return Err(DialError::Absent(e)),
        Err(e) => return Err(DialError::Io(e)),
    };
    match stream.peer_uid() {
        Ok(Some(peer)) if peer == uid => Ok(stream),
        Ok(Some(peer)) => Err(DialError::Untrusted(Untrusted {
            socket: socket.to_path_buf(),
            problem: format!(
                "the process listening on it runs as uid {peer}, not as you (uid {uid})"
            ),
            next: format!("Find it with `ss -xlp` and stop it, {}", elsewhere()),
        })),
        Ok(None) | Err(_) => Err(DialError::Untrusted(Untrusted {
            socket: socket.to_path_buf(),
            problem: "this system does not tell who listens on it".into(),
            next: "berth needs peer credentials (SO_PEERCRED or getpeereid) to trust a socket"
                .into(),
        })),
    }
}

/// Connects to the pipe `socket` and keeps the stream only when the process
/// serving it runs as this process's user. Nothing is written before.
#[cfg(windows)]
pub async fn dial(socket: &Path, uid: Uid) -> Result<LocalStream, DialError> {
    let _ = uid;
    let stream = match LocalStream::dial(socket).await {
        Ok(s) => s,
        Err(e) if is_absent(&e) => return Err(DialError::Absent(e)),
        Err(e) => return Err(DialError::Io(e)),
    };
    let untrusted = |problem: String| {
        DialError::Untrusted(Untrusted {
            socket: socket.to_path_buf(),
            problem,
            next: format!(
                "Find the process that holds this pipe (Sysinternals `handle` or `pipelist`) and stop it, or set {BERTH_SOCKET} to another pipe name"
            ),
        })
    };
    let server = stream.peer_pid().map_err(|e| {
        untrusted(format!(
            "the pipe does not tell which process serves it ({e})"
        ))
    })?;
    match runs_as_us(server) {
        Ok(true) => Ok(stream),
        Ok(false) => Err(untrusted(format!(
            "the process serving it (pid {server}) runs as another user"
        ))),
        Err(e) => Err(untrusted(format!(
            "the user of the process serving it (pid {server}) cannot be read ({e})"
        ))),
    }
}

/// Whether process `pid` runs as this process's user (their token SIDs):
/// the pipe server's for a client, a client's for the daemon.
#[cfg(windows)]
pub fn runs_as_us(pid: u32) -> io::Result<bool> {
    use crate::user_sid::Sid;
    Ok(Sid::of_process(pid)?.same_user(&Sid::of_this_process()?))
}

/// Whether a failed connect means nobody listens there.
pub fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::current_uid;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_missing_folder_or_socket_is_absent_not_untrusted() {
        let tmp = tempfile::tempdir().unwrap();
        let uid = current_uid();
        assert_eq!(check_path(&tmp.path().join("no/s.sock"), uid), Ok(false));
        assert_eq!(check_path(&tmp.path().join("s.sock"), uid), Ok(false));
    }

    #[test]
    fn a_folder_of_another_uid_a_writable_one_or_a_symlink_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        std::fs::create_dir(&dir).unwrap();
        let sock = dir.join("s.sock");
        let err = check_path(&sock, current_uid() + 1).unwrap_err();
        assert!(err.problem.contains("belongs to uid"), "{err}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = check_path(&sock, current_uid()).unwrap_err();
        assert!(err.problem.contains("mode 777"), "{err}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check_path(&sock, current_uid()), Ok(false));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let err = check_path(&link.join("s.sock"), current_uid()).unwrap_err();
        assert!(err.problem.contains("symlink"), "{err}");
        assert!(err.to_string().contains("BERTH_SOCKET"), "{err}");
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    #[test]
    fn our_own_process_is_our_user_and_a_missing_one_is_an_error() {
        assert!(runs_as_us(std::process::id()).unwrap());
        // No process has an id that is not a multiple of four.
        assert!(runs_as_us(3).is_err());
    }
}
