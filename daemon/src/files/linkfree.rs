//! Opening a folder so that no component of its path is a symlink, and telling folders apart
//! by device and inode. A home is opened this way: a link moved into its place, or into the
//! place of any folder above it, can then never redirect berth's writes
//! (docs/decisions/0016-homes-never-nest-and-are-opened-without-links.md).
//!
//! On Linux 5.6 and later one `openat2(RESOLVE_NO_SYMLINKS)` does it. Elsewhere, or where the
//! call is missing or filtered, the path is walked one component at a time with
//! `O_NOFOLLOW | O_DIRECTORY`, each step relative to the folder opened before it. On Windows
//! the walk is cap-std's: each component opened beneath the one before, refusing a symlink or
//! junction (`ERROR_STOPPED_ON_SYMLINK`).

use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

#[cfg(unix)]
use rustix::fs::{CWD, Mode, OFlags};

/// An open folder: a descriptor on Unix, a handle on Windows.
#[cfg(unix)]
pub type Handle = OwnedFd;
/// An open folder: a descriptor on Unix, a handle on Windows.
#[cfg(windows)]
pub type Handle = std::os::windows::io::OwnedHandle;

/// Which folder a handle is: its device and inode (on Windows, its volume serial number and
/// file index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// The identity of an opened file or folder.
#[cfg(windows)]
pub fn identity(h: &Handle) -> io::Result<Identity> {
    let (dev, ino) = crate::files::identity::of_handle(h)?;
    Ok(Identity { dev, ino })
}

/// True when `e` says a component was a symlink or junction.
#[cfg(windows)]
pub fn is_link_refusal(e: &io::Error) -> bool {
    const ERROR_STOPPED_ON_SYMLINK: i32 = 681;
    const ERROR_TOO_MANY_LINKS: i32 = 1142;
    matches!(
        e.raw_os_error(),
        Some(ERROR_STOPPED_ON_SYMLINK | ERROR_TOO_MANY_LINKS)
    )
}

/// Opens the absolute folder `path`, refusing any link on the way.
#[cfg(windows)]
pub fn open_dir(path: &Path) -> io::Result<Handle> {
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an absolute path",
        ));
    }
    open_dir_beneath(None, path)
}

/// [`open_dir`] for a folder whose files are then opened beneath it, never the folder read.
#[cfg(windows)]
pub fn open_dir_to_open_in(path: &Path) -> io::Result<Handle> {
    open_dir(path)
}

/// Opens the folder `rel` below `base` (or the absolute `rel` from its drive's root when `base`
/// is `None`), one component at a time, refusing any link on the way and any `..`.
#[cfg(windows)]
pub fn open_dir_beneath(base: Option<&Handle>, rel: &Path) -> io::Result<Handle> {
    if rel.components().any(|c| c == Component::ParentDir) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a \"..\" segment",
        ));
    }
    let mut at = match base {
        Some(h) => std::fs::File::from(h.try_clone()?),
        None => {
            // The drive (or share) and its root are where the walk starts.
            let root: std::path::PathBuf = rel
                .components()
                .take_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
                .collect();
            cap_primitives::fs::open_ambient_dir(&root, cap_std::ambient_authority())?
        }
    };
    for c in rel.components() {
        if let Component::Normal(name) = c {
            at = cap_primitives::fs::open_dir_nofollow(&at, Path::new(name))?;
        }
    }
    Ok(at.into())
}

/// Makes the folder `name` in `base` when nothing has that name, then opens it as
/// [`open_dir_beneath`] does. The make never follows a link: a link or a file in its place
/// stays as it is, and the open refuses it (a link: `ELOOP`; a file: `ENOTDIR`).
pub fn make_dir_beneath(base: &Handle, name: &str) -> io::Result<Handle> {
    #[cfg(unix)]
    let made = rustix::fs::mkdirat(base, name, Mode::from_raw_mode(0o777)).map_err(io::Error::from);
    #[cfg(windows)]
    let made = {
        let at = std::fs::File::from(base.try_clone()?);
        cap_primitives::fs::create_dir(&at, Path::new(name), &cap_primitives::fs::DirOptions::new())
    };
    match made {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    open_dir_beneath(Some(base), Path::new(name))
}

/// The identity of an opened file or folder.
#[cfg(unix)]
pub fn identity(fd: impl AsFd) -> io::Result<Identity> {
    let st = rustix::fs::fstat(fd)?;
    Ok(Identity {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
    })
}

/// True when `e` says a component was a symlink (what both ways of opening answer then).
#[cfg(unix)]
pub fn is_link_refusal(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// Opens the absolute folder `path` for reading, refusing any symlink on the way (`ELOOP`).
#[cfg(unix)]
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an absolute path",
        ));
    }
    open_dir_beneath(None, path)
}

/// [`open_dir`] for a folder whose files are then opened beneath it, never the folder read. On
/// Linux an `O_PATH` handle: opening it raises no inotify event, so reading git's records in a
/// folder the lookup cache watches does not wake the cache's watcher for the folder itself.
#[cfg(unix)]
pub fn open_dir_to_open_in(path: &Path) -> io::Result<OwnedFd> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if path.is_absolute() && !path.components().any(|c| c == Component::ParentDir) {
        use rustix::fs::ResolveFlags;
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
            Ok(fd) => return Ok(fd),
            Err(e) if e == rustix::io::Errno::NOSYS || e == rustix::io::Errno::PERM => {}
            Err(e) => return Err(e.into()),
        }
    }
    open_dir(path)
}

/// Opens the folder `rel` below the folder `base` (or the absolute `rel` when `base` is
/// `None`), refusing any symlink on the way and any `..`.
#[cfg(unix)]
pub fn open_dir_beneath(base: Option<&OwnedFd>, rel: &Path) -> io::Result<OwnedFd> {
    if rel.components().any(|c| c == Component::ParentDir) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a \"..\" segment",
        ));
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::ResolveFlags;
        // No O_NOFOLLOW: RESOLVE_NO_SYMLINKS covers the last component too, and answers ELOOP.
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let resolve = match base {
            Some(_) => ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
            None => ResolveFlags::NO_SYMLINKS,
        };
        let r = match base {
            Some(fd) => rustix::fs::openat2(fd, dot(rel), flags, Mode::empty(), resolve),
            None => rustix::fs::openat2(CWD, rel, flags, Mode::empty(), resolve),
        };
        match r {
            Ok(fd) => return Ok(fd),
            // Too old a kernel, or a sandbox that filters the call: walk instead.
            Err(e) if e == rustix::io::Errno::NOSYS || e == rustix::io::Errno::PERM => {}
            Err(e) => return Err(e.into()),
        }
    }
    walk(base, rel)
}

/// The portable way: one `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
#[cfg(unix)]
pub fn walk(base: Option<&OwnedFd>, rel: &Path) -> io::Result<OwnedFd> {
    let step = OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let mut at: OwnedFd = match base {
        Some(fd) => fd.try_clone()?,
        None => rustix::fs::openat(CWD, "/", step | OFlags::RDONLY, Mode::empty())?,
    };
    let names: Vec<_> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    for name in names {
        at =
            rustix::fs::openat(&at, name, step | OFlags::RDONLY, Mode::empty()).map_err(
                |e| match e {
                    // A link opened with O_NOFOLLOW | O_DIRECTORY answers ENOTDIR on some systems:
                    // say what it is, as openat2 would.
                    rustix::io::Errno::NOTDIR if is_link(&at, name) => {
                        io::Error::from_raw_os_error(libc::ELOOP)
                    }
                    e => e.into(),
                },
            )?;
    }
    Ok(at)
}

#[cfg(unix)]
fn is_link(at: &OwnedFd, name: &std::ffi::OsStr) -> bool {
    rustix::fs::statat(at, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
    })
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn dot(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn both(base: Option<&OwnedFd>, rel: &Path) -> [io::Result<OwnedFd>; 2] {
        [open_dir_beneath(base, rel), walk(base, rel)]
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_folder_opened_to_open_in_raises_no_inotify_event_and_refuses_links() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().canonicalize().unwrap().join("a");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("f"), "x").unwrap();
        // SAFETY: plain calls on a descriptor this test owns; the path outlives them.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        let c = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()).unwrap();
        assert!(unsafe { libc::inotify_add_watch(fd, c.as_ptr(), libc::IN_OPEN) } >= 0);
        let pending = || {
            let mut buf = [0u8; 4096];
            // SAFETY: `buf` is valid for its length.
            unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) > 0 }
        };
        let handle = open_dir_to_open_in(&d).unwrap();
        assert!(!pending(), "opening the folder raised an event");
        let file = rustix::fs::openat(&handle, "f", OFlags::RDONLY, Mode::empty()).unwrap();
        drop(file);
        assert!(pending(), "a file opened beneath it does (the control)");
        drop(open_dir(&d).unwrap());
        assert!(pending(), "a folder opened to be read does (the control)");
        // SAFETY: `fd` is this test's own.
        unsafe { libc::close(fd) };

        std::os::unix::fs::symlink(&d, t.path().join("l")).unwrap();
        let through = t.path().canonicalize().unwrap().join("l");
        assert!(is_link_refusal(&open_dir_to_open_in(&through).unwrap_err()));
    }

    #[test]
    fn a_plain_folder_opens_and_keeps_its_identity() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b");
        std::fs::create_dir_all(&d).unwrap();
        let want = identity(std::fs::File::open(&d).unwrap()).unwrap();
        for fd in both(None, &d) {
            assert_eq!(identity(fd.unwrap()).unwrap(), want);
        }
    }

    #[test]
    fn a_link_anywhere_on_the_path_is_refused_both_ways() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("real/inner")).unwrap();
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
        for path in ["link", "link/inner"] {
            for r in both(None, &t.path().join(path)) {
                let e = r.expect_err(path);
                assert!(is_link_refusal(&e), "{path}: {e}");
            }
        }
    }

    #[test]
    fn a_folder_is_made_beneath_a_base_but_never_through_a_link_or_over_a_file() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("base");
        std::fs::create_dir_all(&base).unwrap();
        let at = open_dir(&base).unwrap();
        let made = make_dir_beneath(&at, "new").unwrap();
        let want = identity(std::fs::File::open(base.join("new")).unwrap()).unwrap();
        assert_eq!(identity(made).unwrap(), want);
        // Made once: the second call opens the same folder.
        assert_eq!(
            identity(make_dir_beneath(&at, "new").unwrap()).unwrap(),
            want
        );
        std::os::unix::fs::symlink(t.path().join("gone"), base.join("dangling")).unwrap();
        std::os::unix::fs::symlink(t.path(), base.join("away")).unwrap();
        for link in ["dangling", "away"] {
            assert!(
                is_link_refusal(&make_dir_beneath(&at, link).unwrap_err()),
                "{link}"
            );
        }
        assert!(!t.path().join("gone").exists());
        std::fs::write(base.join("file"), "x").unwrap();
        let e = make_dir_beneath(&at, "file").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR), "{e}");
    }

    #[test]
    fn beneath_a_base_links_and_dot_dot_are_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("base/d")).unwrap();
        std::os::unix::fs::symlink("d", t.path().join("base/l")).unwrap();
        let base = open_dir(&t.path().join("base")).unwrap();
        for r in both(Some(&base), Path::new("d")) {
            r.unwrap();
        }
        for r in both(Some(&base), Path::new("l")) {
            assert!(is_link_refusal(&r.unwrap_err()));
        }
        assert!(open_dir_beneath(Some(&base), Path::new("d/../..")).is_err());
    }
}
