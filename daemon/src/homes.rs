//! Where a workspace's files live (SPEC §2). [`home_of`] is the one function
//! that derives a home; no caller derives one itself.
//!
//! **Architecture Invariant:** every derivation re-applies the lexical guard,
//! so a row written straight into the database can never yield a home at `/`.

use std::path::{Path, PathBuf};

use crate::device::Device;
use crate::error::BerthError;
use crate::homeguard::{GuardCtx, HomeRefusal, check_home_lexical};
use crate::registry::{Home, WorkspaceEntry};

/// The folder where `entry`'s files live: `<data>/workspaces/<name>` for a
/// managed home, the stored folder for a local one, if it still passes the
/// lexical guard.
pub fn home_of(
    entry: &WorkspaceEntry,
    data_dir: &Path,
    ctx: &GuardCtx,
) -> Result<PathBuf, HomeRefusal> {
    match &entry.home {
        Home::Managed => Ok(data_dir.join("workspaces").join(&entry.name)),
        Home::Local(path) => {
            check_home_lexical(path, ctx)?;
            Ok(path.clone())
        }
    }
}

/// A stored home the guard refuses (a row written straight into the database), named by its
/// workspace, with the way out: deleting the workspace keeps the folder's files.
pub fn refused_home(entry: &WorkspaceEntry, why: &HomeRefusal) -> BerthError {
    BerthError::refused(format!(
        "workspace {:?} has a home berth refuses to use: {why}. Its files are untouched; \
         `berth workspace delete {}` removes the entry, then create it again with another --home",
        entry.name, entry.name
    ))
}

/// Checks a local home the user typed: the lexical guard on the typed and on
/// the symlink-resolved path, then that it exists, is a folder, and that the
/// daemon may write and search it. Returns the resolved path.
pub fn check_local_home(typed: &Path, ctx: &GuardCtx) -> Result<PathBuf, BerthError> {
    let refused = |e: HomeRefusal| BerthError::refused(e.to_string());
    check_home_lexical(typed, ctx).map_err(refused)?;
    let meta = std::fs::metadata(typed).map_err(|e| {
        BerthError::refused(match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "cannot use {:?} as a home: it does not exist; create it first (mkdir -p {:?})",
                typed, typed
            ),
            _ => format!("cannot use {typed:?} as a home: {e}"),
        })
    })?;
    if !meta.is_dir() {
        return Err(BerthError::refused(format!(
            "cannot use {typed:?} as a home: it is not a folder; give a folder's path"
        )));
    }
    let resolved = std::fs::canonicalize(typed)
        .map_err(|e| BerthError::refused(format!("cannot use {typed:?} as a home: {e}")))?;
    check_home_lexical(&resolved, ctx).map_err(refused)?;
    if !writable_and_searchable(&resolved) {
        return Err(BerthError::refused(format!(
            "cannot use {typed:?} as a home: berth may not write and search it; fix its permissions (chmod u+wx) or choose another folder"
        )));
    }
    Ok(resolved)
}

fn writable_and_searchable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

impl Device {
    /// The facts the home guard judges against.
    pub(crate) fn guard_ctx(&self) -> GuardCtx {
        let canon = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
        GuardCtx {
            homes: self.homes(None),
            temp_dir: canon(std::env::temp_dir()),
            data_dir: canon(self.data_dir.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> GuardCtx {
        GuardCtx {
            homes: vec![PathBuf::from("/home/u")],
            temp_dir: PathBuf::from("/tmp"),
            data_dir: PathBuf::from("/home/u/.local/share/berth"),
        }
    }

    #[test]
    fn a_row_written_straight_into_the_database_with_a_home_at_root_fails_derivation() {
        let entry = WorkspaceEntry {
            name: "evil".into(),
            home: Home::Local(PathBuf::from("/")),
        };
        let err = home_of(&entry, Path::new("/d"), &ctx()).unwrap_err();
        assert!(matches!(err, HomeRefusal::FilesystemRoot { .. }), "{err}");
    }

    #[test]
    fn a_managed_home_is_under_the_data_dir() {
        let entry = WorkspaceEntry {
            name: "w".into(),
            home: Home::Managed,
        };
        assert_eq!(
            home_of(&entry, Path::new("/d"), &ctx()).unwrap(),
            PathBuf::from("/d/workspaces/w")
        );
    }

    #[test]
    fn a_missing_local_home_is_refused_with_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let c = GuardCtx {
            homes: vec![tmp.path().to_path_buf()],
            temp_dir: PathBuf::from("/nonexistent-tmp"),
            data_dir: PathBuf::from("/nonexistent-data"),
        };
        let err = check_local_home(&tmp.path().join("nope"), &c).unwrap_err();
        assert!(err.message.contains("mkdir -p"), "{err}");
    }

    #[test]
    fn a_symlink_into_a_system_folder_is_judged_by_where_it_leads() {
        let tmp = tempfile::tempdir().unwrap();
        let link = tmp.path().join("notes");
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        let c = GuardCtx {
            homes: vec![tmp.path().to_path_buf()],
            temp_dir: PathBuf::from("/nonexistent-tmp"),
            data_dir: PathBuf::from("/nonexistent-data"),
        };
        let err = check_local_home(&link, &c).unwrap_err();
        assert!(err.message.contains("system folder"), "{err}");
    }
}
