//! berth's log files, which only their user may read: a log names folders,
//! workspaces and errors, and the machine may have other users.
//!
//! The daemon and `berth-hook` open their logs here, so both get the same
//! rules: the state folder is 0700 and each log file 0600, and a folder or
//! file an older berth left wider open is tightened on the next start.

use std::fs::File;
use std::io;
use std::path::Path;

/// The daemon's log file, in the state folder (`paths::state_dir`); `berth doctor` names it.
pub const DAEMON_LOG: &str = "berthd.log";

/// `berth-hook`'s log file, in the state folder.
pub const HOOK_LOG: &str = "berth-hook.log";

/// Opens `dir/name` for appending, creating the folder (0700) and the file
/// (0600) as needed and narrowing either when others may read it. Refuses,
/// naming it, a folder that fails [`crate::ownership::check_state_folder`]
/// (before anything is made in it) and a file that is a symlink or belongs
/// to another user.
#[cfg(unix)]
pub fn open_private(dir: &Path, name: &str) -> io::Result<File> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    crate::ownership::check_state_folder(dir, crate::paths::current_uid())
        .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()))?;
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let uid = crate::paths::current_uid();
    let refuse = |what: &Path, why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}; remove it so berth can create its own",
                what.display()
            ),
        )
    };
    // A link of the user's own passed the check above and is followed.
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(refuse(dir, "is not a directory".into()));
    }
    if meta.uid() != uid {
        return Err(refuse(dir, format!("belongs to uid {}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let path = dir.join(name);
    // A log is appended to, never replaced.
    #[allow(clippy::disallowed_methods)]
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refuse(&path, "is a symlink".into())
            } else {
                e
            }
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse(&path, "is not a regular file".into()));
    }
    if meta.uid() != uid {
        return Err(refuse(&path, format!("belongs to uid {}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Opens `dir/name` for appending, creating the folder as needed (the
/// platform's own access rules apply).
#[cfg(not(unix))]
// A log is appended to, never replaced.
#[allow(clippy::disallowed_methods)]
pub fn open_private(dir: &Path, name: &str) -> io::Result<File> {
    std::fs::create_dir_all(dir)?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn creates_a_private_folder_and_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state/berth");
        open_private(&dir, "x.log").unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("x.log")), 0o600);
    }

    #[test]
    fn narrows_what_an_older_version_left_open() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("berth");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("x.log"), "kept\n").unwrap();
        std::fs::set_permissions(dir.join("x.log"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        open_private(&dir, "x.log").unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("x.log")), 0o600);
        assert_eq!(
            std::fs::read_to_string(dir.join("x.log")).unwrap(),
            "kept\n"
        );
    }

    #[test]
    fn refuses_a_symlinked_log_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("berth");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), dir.join("x.log")).unwrap();
        let e = open_private(&dir, "x.log").unwrap_err();
        assert!(e.to_string().contains("is a symlink"), "{e}");
        assert!(!tmp.path().join("elsewhere").exists());
    }
}
