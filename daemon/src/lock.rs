//! The instance lock: an exclusive `flock` on a file beside the socket
//! decides the one daemon for that socket. The kernel drops it when the
//! process dies, however it dies, so a crash never leaves a stale lock.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A held instance lock; released when dropped or when the process exits.
#[derive(Debug)]
pub struct InstanceLock {
    file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// Takes the lock at `path` without waiting; `Ok(None)` when another
    /// process holds it. On success the file holds our pid, for
    /// `berth daemon stop --force` and for error messages.
    pub fn try_acquire(path: &Path) -> io::Result<Option<InstanceLock>> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                return Ok(None);
            }
            return Err(err);
        }
        file.set_len(0)?;
        (&file).write_all(format!("{}\n", std::process::id()).as_bytes())?;
        Ok(Some(InstanceLock {
            file,
            path: path.to_path_buf(),
        }))
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for InstanceLock {
    fn drop(&mut self) {
        // Empty the pid before the kernel releases the lock, so nobody reads a
        // pid that no longer holds it.
        let _ = self.file.set_len(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.lock");
        let first = InstanceLock::try_acquire(&path).unwrap().expect("first");
        // flock locks belong to the open file description, so a second open
        // in the same process contends like another process would.
        assert!(InstanceLock::try_acquire(&path).unwrap().is_none());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap().trim(),
            std::process::id().to_string()
        );
        drop(first);
        assert!(InstanceLock::try_acquire(&path).unwrap().is_some());
    }
}
