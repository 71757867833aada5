//! Opening a file to read it where someone else may have put something at its
//! name (a cloned repository, another process): a link is not followed and a
//! FIFO cannot hold the read. The open is the authority; callers check the
//! opened handle's type (`File::metadata`), never the path's.
//!
//! Beneath a folder handle (a `cap_std::fs::Dir`), [`open_dir_in`] and [`open_read_in`] open one
//! name at a time the same way, so a walk built from them follows no link on any component and
//! cannot leave the folder it started from.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Component, Path};

use cap_std::fs::Dir;

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

/// Opens `path` for reading as [`open_read`] does, except that a link is followed: for a file a
/// user may have made a link themselves (a dotfile manager's). A FIFO still cannot hold the open.
pub fn open_read_following(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    options.open(path)
}

/// Whether `e` is how [`open_read`], [`open_read_in`] and [`open_dir_in`] refuse a link.
pub fn is_link_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(windows)]
    return e.raw_os_error() == Some(ERROR_STOPPED_ON_SYMLINK);
}

/// What Windows answers for a link where none may be (and what this module answers then).
#[cfg(windows)]
const ERROR_STOPPED_ON_SYMLINK: i32 = 681;

/// `name` when it is one plain name: no separator, no `.` or `..`, so an open of it stays in the
/// folder it is opened in.
fn one_name(name: &OsStr) -> io::Result<&OsStr> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(n)), None) if n == name => Ok(n),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not one plain name"),
        )),
    }
}

/// Opens the folder `name` in `dir`, refusing a link there (see [`is_link_refusal`]). On Unix
/// `openat(O_DIRECTORY | O_NOFOLLOW)`; on Windows the handle is opened as the reparse point
/// itself and refused when it is one (a symlink or a junction).
pub fn open_dir_in(dir: &Dir, name: &OsStr) -> io::Result<Dir> {
    let name = one_name(name)?;
    #[cfg(unix)]
    {
        use rustix::fs::{AtFlags, FileType, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(dir, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Dir::from_std_file(File::from(fd))),
            // Some systems answer ENOTDIR for a link opened this way: say what it is.
            Err(rustix::io::Errno::NOTDIR)
                if rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink) =>
            {
                Err(io::Error::from_raw_os_error(libc::ELOOP))
            }
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(windows)]
    {
        use cap_std::fs::OpenOptionsExt;
        // FILE_FLAG_BACKUP_SEMANTICS (a folder) | FILE_FLAG_OPEN_REPARSE_POINT (the link itself).
        let mut options = cap_std::fs::OpenOptions::new();
        options.read(true).custom_flags(0x0200_0000 | 0x0020_0000);
        let f = dir.open_with(name, &options)?;
        let meta = f.metadata()?;
        if meta.file_type().is_symlink() {
            return Err(io::Error::from_raw_os_error(ERROR_STOPPED_ON_SYMLINK));
        }
        if !meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{name:?} is not a folder"),
            ));
        }
        Ok(Dir::from_std_file(f.into_std()))
    }
}

/// Opens the file `name` in `dir` for reading as [`open_read`] opens a path: a link there is not
/// followed (on Unix `ELOOP`; on Windows the handle is the link's, which is no regular file) and
/// a FIFO does not wait. Callers check the handle's type.
pub fn open_read_in(dir: &Dir, name: &OsStr) -> io::Result<File> {
    let name = one_name(name)?;
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(
            dir,
            name,
            flags,
            Mode::empty(),
        )?))
    }
    #[cfg(windows)]
    {
        use cap_std::fs::OpenOptionsExt;
        let mut options = cap_std::fs::OpenOptions::new();
        options.read(true).custom_flags(0x0020_0000);
        Ok(dir.open_with(name, &options)?.into_std())
    }
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
        let f = open_read_following(&fifo).unwrap();
        assert!(!f.metadata().unwrap().is_file());
        assert_eq!(
            io::read_to_string(open_read_following(&link).unwrap()).unwrap(),
            "x"
        );
    }

    /// Beneath a folder handle, on every platform: a plain folder and file open by one name
    /// each, and a name of more than one component is refused before anything is opened.
    #[test]
    fn beneath_a_handle_a_plain_folder_and_file_open_by_one_name() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("sub")).unwrap();
        std::fs::write(t.path().join("sub").join("f"), "x").unwrap();
        let dir = Dir::open_ambient_dir(t.path(), cap_std::ambient_authority()).unwrap();
        let sub = open_dir_in(&dir, OsStr::new("sub")).unwrap();
        let f = open_read_in(&sub, OsStr::new("f")).unwrap();
        assert!(f.metadata().unwrap().is_file());
        assert_eq!(io::read_to_string(f).unwrap(), "x");
        assert!(
            open_dir_in(&sub, OsStr::new("f")).is_err(),
            "a file is no folder"
        );
        let two = Path::new("sub").join("f");
        for name in [two.as_os_str(), OsStr::new(".."), OsStr::new(".")] {
            let e = open_read_in(&dir, name).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name:?}");
        }
    }

    /// Beneath a folder handle: a plain folder and file open; a link at either name is refused
    /// (one to a folder inside too); a FIFO does not wait; a name with more than one component
    /// is refused before anything is opened.
    #[cfg(unix)]
    #[test]
    fn beneath_a_handle_one_name_opens_without_a_link_or_a_wait() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("top");
        std::fs::create_dir_all(top.join("sub")).unwrap();
        std::fs::write(top.join("sub/f"), "x").unwrap();
        std::os::unix::fs::symlink(top.join("sub"), top.join("to-sub")).unwrap();
        std::os::unix::fs::symlink(t.path(), top.join("out")).unwrap();
        std::os::unix::fs::symlink(top.join("sub/f"), top.join("sub/to-f")).unwrap();
        let c = std::ffi::CString::new(top.join("sub/p").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let dir = Dir::open_ambient_dir(&top, cap_std::ambient_authority()).unwrap();
        let sub = open_dir_in(&dir, OsStr::new("sub")).unwrap();
        let f = open_read_in(&sub, OsStr::new("f")).unwrap();
        assert_eq!(io::read_to_string(f).unwrap(), "x");
        for name in ["to-sub", "out"] {
            let e = open_dir_in(&dir, OsStr::new(name)).unwrap_err();
            assert!(is_link_refusal(&e), "{name}: {e}");
        }
        assert!(is_link_refusal(
            &open_read_in(&sub, OsStr::new("to-f")).unwrap_err()
        ));
        let p = open_read_in(&sub, OsStr::new("p")).unwrap();
        assert!(!p.metadata().unwrap().is_file());
        for name in ["sub/f", "..", ".", "/etc"] {
            let e = open_read_in(&dir, OsStr::new(name)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name}");
            let e = open_dir_in(&dir, OsStr::new(name)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name}");
        }
    }
}
