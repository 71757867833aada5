//! The instance locks' primitive: an exclusive, non-blocking lock on a file
//! that the system drops when the process dies, however it dies, so a crash
//! never leaves a stale lock. The daemon takes it; clients only ask whether
//! someone holds it.
//!
//! Unix: `flock` (std's `File::try_lock`). Windows: `LockFileEx` on one byte
//! far past the end of the file, so the pid written at its start stays
//! readable by clients (a Windows lock over the whole file would refuse
//! their reads).

use std::fs::File;
use std::io;
use std::path::Path;

/// Takes `file`'s exclusive lock without waiting: `Ok(false)` when another
/// open file holds it (in this process or another).
pub fn try_lock(file: &File) -> io::Result<bool> {
    imp::try_lock(file, true)
}

/// Whether someone holds the lock on `path` right now (a missing file is
/// held by nobody). Asks with a shared lock, taken and let go at once.
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    matches!(imp::try_lock(&file, false), Ok(false))
}

#[cfg(unix)]
mod imp {
    use std::fs::{File, TryLockError};
    use std::io;

    pub fn try_lock(file: &File, exclusive: bool) -> io::Result<bool> {
        let got = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match got {
            Ok(()) => Ok(true),
            Err(TryLockError::WouldBlock) => Ok(false),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Foundation::ERROR_LOCK_VIOLATION;
    use windows_sys::Win32::Storage::FileSystem::{
        LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx,
    };
    use windows_sys::Win32::System::IO::OVERLAPPED;

    pub fn try_lock(file: &File, exclusive: bool) -> io::Result<bool> {
        let mut flags = LOCKFILE_FAIL_IMMEDIATELY;
        if exclusive {
            flags |= LOCKFILE_EXCLUSIVE_LOCK;
        }
        // SAFETY: all-zero is a valid OVERLAPPED; its offset is set below.
        let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
        // The last byte of the largest offset: past any content.
        at.Anonymous.Anonymous.Offset = u32::MAX - 1;
        at.Anonymous.Anonymous.OffsetHigh = u32::MAX;
        // SAFETY: a handle we own and an OVERLAPPED that lives for the call.
        let ok = unsafe { LockFileEx(file.as_raw_handle(), flags, 0, 1, 0, &mut at) };
        if ok != 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
            return Ok(false);
        }
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_refused_and_seen_and_its_content_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        assert!(!is_held(&path), "no file, no holder");
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .unwrap()
        };
        let first = open();
        assert!(try_lock(&first).unwrap());
        std::io::Write::write_all(&mut &first, b"42\n").unwrap();
        // Another open file contends as another process would.
        assert!(!try_lock(&open()).unwrap());
        assert!(is_held(&path));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "42\n");
        drop(first);
        assert!(!is_held(&path));
        assert!(try_lock(&open()).unwrap());
    }
}
