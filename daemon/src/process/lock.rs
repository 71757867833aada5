//! The instance locks: an exclusive lock (`berth_client::instance_lock`) on
//! `<data>/berthd.lock` decides the one daemon of a registry
//! (docs/decisions/0013-one-daemon-per-data-folder.md), and one on a file
//! beside the socket (for a Windows pipe, a file named after it) the one
//! daemon for that socket. The system drops them when the process dies,
//! however it dies, so a crash never leaves a stale lock.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use berth_client::record::{self, DaemonRecord};

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
        let mut options = std::fs::OpenOptions::new();
        // A lock file: its holder's pid is written into it in place; nothing replaces it.
        #[allow(clippy::disallowed_methods)]
        options.read(true).write(true).create(true).truncate(false);
        // std opens with O_CLOEXEC already; a hook's stop command inherits nothing.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        if !berth_client::instance_lock::try_lock(&file)? {
            return Ok(None);
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

    /// Which file the lock is held on (device, inode), to notice later that its path names
    /// another file or none.
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        crate::files::identity::of_file(&self.file)
    }
}

/// Whether `path` still names the file a lock was taken on: false once the folder holding it
/// was deleted, moved or replaced. Another daemon could then lock a new file there, and
/// nothing written to the old folder would be found again.
pub fn still_in_place(path: &Path, identity: (u64, u64)) -> bool {
    File::open(path)
        .and_then(|f| crate::files::identity::of_file(&f))
        .is_ok_and(|now| now == identity)
}

impl Drop for InstanceLock {
    fn drop(&mut self) {
        // Empty the pid before the kernel releases the lock, so nobody reads a
        // pid that no longer holds it.
        let _ = self.file.set_len(0);
    }
}

/// Who serves a data folder, as its lock and record tell a starting daemon.
#[derive(Debug)]
pub enum DataFolder {
    /// We hold its lock now.
    Ours(InstanceLock),
    /// Another daemon holds it and listens on the socket we were given.
    SameSocket,
    /// Another daemon holds it and listens on another socket.
    Elsewhere(DaemonRecord),
    /// Another daemon holds it and has not said where it listens (yet).
    Unknown,
}

/// How long a starting daemon that lost the data-folder lock waits for the
/// winner's record: the winner writes it once its socket is bound.
const RECORD_WAIT: Duration = Duration::from_secs(1);

/// Takes the data folder's lock, or finds out who holds it.
// The wait runs at boot, before the runtime exists, and is paced by `thread::sleep`: its
// deadline is real time, not the clock a test steps.
#[allow(clippy::disallowed_methods)]
pub fn claim_data_folder(data_dir: &Path, socket: &Path) -> io::Result<DataFolder> {
    let path = berth_client::paths::data_lock_path(data_dir);
    if let Some(lock) = InstanceLock::try_acquire(&path)? {
        return Ok(DataFolder::Ours(lock));
    }
    let deadline = Instant::now() + RECORD_WAIT;
    let mut pause = Duration::from_millis(1);
    loop {
        // A record whose pid is gone is a crashed daemon's: the holder's
        // own comes shortly.
        if let Some(rec) = record::read(data_dir).filter(|r| is_alive(r.pid)) {
            // One listening in a folder of its own instead of this socket is
            // where this daemon would be too (ADR 0042).
            let instead = rec
                .fallback
                .as_ref()
                .is_some_and(|f| f.instead_of == socket);
            return Ok(if rec.socket == socket || instead {
                DataFolder::SameSocket
            } else {
                DataFolder::Elsewhere(rec)
            });
        }
        if Instant::now() >= deadline {
            return Ok(DataFolder::Unknown);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn is_alive(pid: u32) -> bool {
    // Any program: a daemon's record names its own pid, and the lock is the proof.
    crate::pids::runs(pid, "")
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

    #[test]
    fn a_second_daemon_learns_where_the_first_listens_from_its_record() {
        let data = tempfile::tempdir().unwrap();
        let here = Path::new("/run/a/berthd.sock");
        let DataFolder::Ours(_held) = claim_data_folder(data.path(), here).unwrap() else {
            panic!("the first claim takes the lock")
        };
        let rec = DaemonRecord {
            socket: here.into(),
            pid: std::process::id(),
            version: "0.1.0".into(),
            data_dir: data.path().into(),
            fallback: None,
        };
        record::write(data.path(), &rec).unwrap();
        assert!(matches!(
            claim_data_folder(data.path(), here).unwrap(),
            DataFolder::SameSocket
        ));
        match claim_data_folder(data.path(), Path::new("/run/b/berthd.sock")).unwrap() {
            DataFolder::Elsewhere(r) => assert_eq!(r, rec),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_first_daemon_in_a_folder_of_its_own_instead_of_our_socket_is_the_same_socket() {
        let data = tempfile::tempdir().unwrap();
        let derived = Path::new("/tmp/berth-7/berthd.sock");
        let DataFolder::Ours(_held) = claim_data_folder(data.path(), derived).unwrap() else {
            panic!("the first claim takes the lock")
        };
        let rec = DaemonRecord {
            socket: "/tmp/berth-7-abc/berthd.sock".into(),
            pid: std::process::id(),
            version: "0.1.0".into(),
            data_dir: data.path().into(),
            fallback: Some(record::Fallback {
                instead_of: derived.into(),
                because: "its folder belongs to uid 65534".into(),
            }),
        };
        record::write(data.path(), &rec).unwrap();
        assert!(matches!(
            claim_data_folder(data.path(), derived).unwrap(),
            DataFolder::SameSocket
        ));
        assert!(matches!(
            claim_data_folder(data.path(), Path::new("/run/b/berthd.sock")).unwrap(),
            DataFolder::Elsewhere(_)
        ));
    }
}
