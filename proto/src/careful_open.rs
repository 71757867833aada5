//! Opening a file to read it where someone else may have put something at its
//! name (a cloned repository, another process): a link is not followed and a
//! FIFO cannot hold the read. The open is the authority; callers check the
//! opened handle's type (`File::metadata`), never the path's.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Opens `path` for reading: on Unix with `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`
/// (a link answers `ELOOP`, a FIFO opens without waiting for a writer, a
/// terminal never becomes ours); on Windows with `FILE_FLAG_OPEN_REPARSE_POINT`,
/// so a link is opened as itself and its handle is not a regular file. Reads
/// of a regular file opened this way do not block on Unix either (the flag
/// means nothing for regular files).
pub fn open_read(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, 0x0020_0000);
    options.open(path)
}

/// Whether `e` is how [`open_read`] refuses a link.
pub fn is_link_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(windows)]
    return e.raw_os_error() == Some(681);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_opens_and_reads() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        std::fs::write(&p, "x").unwrap();
        let f = open_read(&p).unwrap();
        assert!(f.metadata().unwrap().is_file());
        assert_eq!(io::read_to_string(f).unwrap(), "x");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_refused_and_a_fifo_does_not_wait() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("target");
        std::fs::write(&target, "x").unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(is_link_refusal(&open_read(&link).unwrap_err()));
        let fifo = t.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let f = open_read(&fifo).unwrap();
        assert!(!f.metadata().unwrap().is_file());
    }
}
