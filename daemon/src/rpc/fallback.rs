//! The socket folder of the daemon's own, for when the folder of the socket it derived is
//! another user's, a link, or writable by others: anyone can make `/tmp/berth-<uid>` before
//! berth runs, which would otherwise lock the user out (ADR 0042).
//!
//! The folder is made fresh beside the derived one, `<derived folder>-<random>`
//! (`/tmp/berth-<uid>-k3v9q2m7x4ab`), with `mkdir`'s exclusive creation, so nobody can have
//! made it first; then its handle, not its name, is checked to be a directory of ours, mode
//! 0700. Clients find it through the data folder's record, which says it is a fallback, so the
//! next daemon removes a folder a killed one left.
//!
//! Unix only: a Windows pipe has no folder.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use berth_client::paths::{BERTH_SOCKET, MAX_SOCKET_PATH, Uid};
use berth_client::record;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// Names tried before giving up; each is 60 random bits, so a second is already unlikely.
const ATTEMPTS: usize = 16;

/// Makes a fresh private folder beside the derived socket's and returns the socket's path in
/// it (the derived socket's file name).
pub(crate) fn make(derived: &Path, uid: Uid) -> io::Result<PathBuf> {
    let invalid = || io::Error::new(io::ErrorKind::InvalidInput, "the socket has no folder");
    let dir = derived.parent().ok_or_else(invalid)?;
    let (parent, base) = (
        dir.parent().ok_or_else(invalid)?,
        dir.file_name().ok_or_else(invalid)?,
    );
    let file = derived.file_name().ok_or_else(invalid)?;
    let parent_fd = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for _ in 0..ATTEMPTS {
        let mut name = OsString::from(base);
        name.push(format!("-{}", suffix()?));
        let socket = parent.join(&name).join(file);
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{socket:?} would be longer than the {MAX_SOCKET_PATH} bytes a socket path may have; set {BERTH_SOCKET}"
                ),
            ));
        }
        match rustix::fs::mkdirat(&parent_fd, &name, Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
        return match private(&parent_fd, &name, uid, true) {
            Ok(_) => Ok(socket),
            Err(e) => {
                let _ = rustix::fs::unlinkat(&parent_fd, &name, AtFlags::REMOVEDIR);
                Err(e)
            }
        };
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{ATTEMPTS} random names beside {dir:?} were all taken"),
    ))
}

/// Opens `name` in `parent` without following a link and checks, through the handle, that it
/// is a directory of ours, mode 0700. `just_made`: the folder is the one `make` created, whose
/// mode is set again first (the umask may have taken bits); any other is only looked at.
fn private(
    parent: &OwnedFd,
    name: &std::ffi::OsStr,
    uid: Uid,
    just_made: bool,
) -> io::Result<OwnedFd> {
    let fd = rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    if just_made {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))?;
    }
    let st = rustix::fs::fstat(&fd)?;
    let mode = st.st_mode as u32 & 0o7777;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory
        || st.st_uid != uid
        || mode != 0o700
    {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the new folder {name:?} is not a private folder of ours (owner uid {}, mode {mode:o})",
                st.st_uid
            ),
        ));
    }
    Ok(fd)
}

/// Twelve characters of `[a-z0-9]` (60 bits) from the system's random source.
fn suffix() -> io::Result<String> {
    const ALPHABET: &[u8; 32] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let n = getrandom::u64().map_err(|e| io::Error::other(format!("no random numbers: {e}")))?;
    Ok((0..12)
        .map(|i| ALPHABET[((n >> (i * 5)) & 31) as usize] as char)
        .collect())
}

/// Removes the folder of `socket`, a fallback folder daemon `pid` listened in: its socket, the
/// socket's lock and the daemon's temporary socket, then the folder, only if nothing else is
/// left in it. A folder that is not ours, a link, or not 0700 is left alone.
pub(crate) fn remove(socket: &Path, pid: u32, uid: Uid) {
    let (Some(dir), Some(file)) = (socket.parent(), socket.file_name()) else {
        return;
    };
    let Some(parent) = dir.parent() else {
        return;
    };
    let Some(name) = dir.file_name() else {
        return;
    };
    let Ok(parent_fd) = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let fd = match private(&parent_fd, name, uid, false) {
        Ok(fd) => fd,
        Err(e) => {
            tracing::debug!(folder = ?dir, error = %e, "not removing a folder that is not a private one of ours");
            return;
        }
    };
    let mut lock = file.to_os_string();
    lock.push(".lock");
    let temporary = OsString::from(format!(".berthd-{pid}.sock"));
    for (entry, kind) in [
        (file.to_os_string(), FileType::Socket),
        (temporary, FileType::Socket),
        (lock, FileType::RegularFile),
    ] {
        let is = rustix::fs::statat(&fd, &entry, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == kind);
        if is {
            let _ = rustix::fs::unlinkat(&fd, &entry, AtFlags::empty());
        }
    }
    match rustix::fs::unlinkat(&parent_fd, name, AtFlags::REMOVEDIR) {
        Ok(()) => tracing::info!(folder = ?dir, "removed the socket folder of its own"),
        Err(e) => {
            tracing::warn!(folder = ?dir, error = %e, "could not remove a socket folder of berth's own")
        }
    }
}

/// Removes the folder of its own a killed daemon of this data folder left, as its record
/// names it. Call holding the data folder's lock, before writing a record: any record there is
/// then a dead daemon's.
pub(crate) fn remove_stale(data_dir: &Path, uid: Uid) {
    if let Some(stale) =
        record::read(data_dir).filter(|r| r.fallback.is_some() && r.pid != std::process::id())
    {
        remove(&stale.socket, stale.pid, uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn uid() -> Uid {
        berth_client::paths::current_uid()
    }

    #[test]
    fn a_fresh_folder_is_made_beside_the_derived_one_private_and_unpredictable() {
        let tmp = tempfile::tempdir().unwrap();
        let derived = tmp.path().join("berth-7").join("berthd.sock");
        let a = make(&derived, uid()).unwrap();
        let b = make(&derived, uid()).unwrap();
        assert_ne!(a, b);
        for socket in [&a, &b] {
            assert_eq!(socket.file_name(), derived.file_name());
            let dir = socket.parent().unwrap();
            assert_eq!(dir.parent(), Some(tmp.path()));
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("berth-7-") && name.len() == "berth-7-".len() + 12);
            let meta = std::fs::symlink_metadata(dir).unwrap();
            assert!(meta.is_dir());
            assert_eq!(meta.mode() & 0o7777, 0o700);
        }
        assert!(
            !derived.parent().unwrap().exists(),
            "the derived folder is not made"
        );
    }

    #[test]
    fn removing_takes_berths_files_and_the_folder_and_leaves_anything_else() {
        let tmp = tempfile::tempdir().unwrap();
        let derived = tmp.path().join("berth-7").join("berthd.sock");
        let socket = make(&derived, uid()).unwrap();
        let dir = socket.parent().unwrap().to_path_buf();
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        std::fs::write(dir.join("berthd.sock.lock"), "42\n").unwrap();
        remove(&socket, 42, uid());
        assert!(!dir.exists(), "{dir:?} is left");

        let socket = make(&derived, uid()).unwrap();
        let dir = socket.parent().unwrap().to_path_buf();
        std::fs::write(dir.join("notes"), "mine").unwrap();
        remove(&socket, 42, uid());
        assert!(
            dir.join("notes").exists(),
            "a file not berth's is kept, and its folder"
        );
    }

    #[test]
    fn a_folder_that_is_not_private_or_is_a_link_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("berth-7-open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(open.join("berthd.sock.lock"), "").unwrap();
        remove(&open.join("berthd.sock"), 1, uid());
        assert!(open.join("berthd.sock.lock").exists());

        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(real.join("berthd.sock.lock"), "").unwrap();
        let link = tmp.path().join("berth-7-link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        remove(&link.join("berthd.sock"), 1, uid());
        assert!(real.join("berthd.sock.lock").exists(), "followed the link");
        assert!(link.exists());
    }
}
