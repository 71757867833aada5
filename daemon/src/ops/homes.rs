//! Where a workspace's files live (docs/reference.md, "Workspaces and homes"). [`home_of`] is the
//! one function that derives a home; no caller derives one itself. [`Daemon::open_home`] is
//! the one way file tools reach a home: opened with no symlink anywhere on its
//! path, and, for a local home, checked to be the very folder (device and
//! inode) that was approved. Homes never nest: one workspace's tools could
//! otherwise move another's home away and put a link in its place
//! (docs/decisions/0016-homes-never-nest-and-are-opened-without-links.md).
//!
//! **Architecture Invariant:** every derivation re-applies the lexical guard,
//! so a row written straight into the database can never yield a home at `/`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::error::{BerthError, is_disk_full};
use crate::files::atomic::{Budget, sweep_stale};
use crate::files::linkfree::{self, Handle, Identity};
use crate::ops::daemon::Daemon;
use berth_core::homeguard::{GuardCtx, HomeRefusal, check_home_lexical};
use berth_core::pathutil::{is_strict_ancestor, normalize};
use berth_core::registry::{Home, Registry, WorkspaceEntry};

/// How much the start-up sweep of temporary files may read: entries in all, and folders deep.
pub const SWEEP_BUDGET: Budget = Budget {
    entries: 200_000,
    depth: 64,
};

/// A workspace's home, opened: the handle its file tools work through.
pub struct OpenedHome {
    /// Where it is (for messages; the handle is what is used).
    pub path: PathBuf,
    /// The folder itself, opened without following any link.
    pub dir: cap_std::fs::Dir,
}

/// The folder where `entry`'s files live: `<data>/workspaces/<name>` for a
/// managed home, the stored folder for a local one, if it still passes the
/// lexical guard.
pub fn home_of(
    entry: &WorkspaceEntry,
    data_dir: &Path,
    ctx: &GuardCtx,
) -> Result<PathBuf, HomeRefusal> {
    match &entry.home {
        Home::Managed => Ok(managed_home(entry, data_dir)),
        Home::Local(path) => {
            check_home_lexical(path, ctx)?;
            Ok(path.clone())
        }
    }
}

/// The folder of the data folder that holds the managed homes.
const MANAGED_HOMES: &str = "workspaces";

/// Where a managed home lives: a name under the data folder, which no guard needs to check.
pub fn managed_home(entry: &WorkspaceEntry, data_dir: &Path) -> PathBuf {
    data_dir.join(MANAGED_HOMES).join(&entry.name)
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

fn unopenable(entry: &WorkspaceEntry, path: &Path, e: &std::io::Error) -> BerthError {
    let name = &entry.name;
    BerthError::refused(if linkfree::is_link_refusal(e) {
        format!(
            "the home of workspace {name:?} at {path:?} cannot be used: a part of its path is a \
             symlink, and berth never follows a link to a home (a link moved into its place \
             could send files anywhere). If the folder moved on purpose, `berth workspace delete \
             {name}` (its files stay) and create it again with --home set to its real path"
        )
    } else if e.kind() == std::io::ErrorKind::NotFound {
        format!(
            "the home of workspace {name:?} at {path:?} does not exist any more; put the folder \
             back (the folder itself: another one made in its place is not the one approved), \
             or `berth workspace delete {name}` (its roots go with it) and create it again with \
             --home"
        )
    } else {
        format!("the home of workspace {name:?} at {path:?} cannot be opened: {e}")
    })
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
    let resolved = crate::canonical::canonicalize(typed)
        .map_err(|e| BerthError::refused(format!("cannot use {typed:?} as a home: {e}")))?;
    check_home_lexical(&resolved, ctx).map_err(refused)?;
    if !writable_and_searchable(&resolved) {
        return Err(BerthError::refused(format!(
            "cannot use {typed:?} as a home: berth may not write and search it; fix its permissions (chmod u+wx) or choose another folder"
        )));
    }
    Ok(resolved)
}

/// Refuses `path` as `name`'s new home when it lies inside another workspace's local home or
/// contains one. (Managed homes live in berth's data dir, which no local home may overlap.)
pub fn check_not_nested(path: &Path, name: &str, reg: &Registry) -> Result<(), BerthError> {
    for other in reg.workspaces.values().filter(|e| e.name != name) {
        let Home::Local(theirs) = &other.home else {
            continue;
        };
        let (how, instead) = if is_strict_ancestor(theirs, path) {
            ("lies inside", "a folder outside it")
        } else if is_strict_ancestor(path, theirs) {
            ("contains", "a folder that does not contain it")
        } else {
            continue;
        };
        return Err(BerthError::refused(format!(
            "cannot use {path:?} as a home: it {how} the home of workspace {:?} ({theirs:?}); \
             homes never nest, or one workspace's file tools could move the other's folder \
             away. Choose {instead}",
            other.name
        )));
    }
    Ok(())
}

/// Notes on every workspace whose local home nests with another's (rows from before homes
/// were refused to nest): by workspace name. Looks up each home's ancestors, so its cost
/// follows the paths' depth, not the square of the number of homes.
pub fn nested_homes(reg: &Registry) -> BTreeMap<String, Vec<String>> {
    let local: HashMap<PathBuf, &str> = reg
        .workspaces
        .values()
        .filter_map(|e| match &e.home {
            Home::Local(p) => Some((normalize(p), e.name.as_str())),
            Home::Managed => None,
        })
        .collect();
    let mut notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (inner, inner_name) in &local {
        for outer in inner.ancestors().skip(1) {
            let Some(outer_name) = local.get(outer) else {
                continue;
            };
            let fix = "homes must not nest; move one of the folders and create its workspace \
                       again, or delete one of them (`berth workspace delete <name>` keeps the files)";
            notes
                .entry(inner_name.to_string())
                .or_default()
                .push(format!(
                    "its home lies inside the home of workspace {outer_name:?} ({outer:?}); {fix}"
                ));
            notes
                .entry(outer_name.to_string())
                .or_default()
                .push(format!(
                    "the home of workspace {inner_name:?} ({inner:?}) lies inside its home; {fix}"
                ));
        }
    }
    for list in notes.values_mut() {
        list.sort();
    }
    notes
}

/// True when `e` says something that is not a folder is where one should be.
fn is_not_a_folder(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    let code = libc::ENOTDIR;
    // ERROR_DIRECTORY: "the directory name is invalid", what opening a file as a folder answers.
    #[cfg(windows)]
    let code = 267;
    e.kind() == std::io::ErrorKind::NotADirectory || e.raw_os_error() == Some(code)
}

#[cfg(unix)]
fn writable_and_searchable(dir: &Path) -> bool {
    use rustix::fs::Access;
    rustix::fs::access(dir, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

/// Windows keeps access in lists, not mode bits: a folder that is not marked read-only is
/// taken as writable, and a write that the access list refuses says so itself.
#[cfg(windows)]
fn writable_and_searchable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| m.is_dir() && !m.permissions().readonly())
}

impl Daemon {
    /// Opens `entry`'s home for its file tools. A managed home is created on first use and
    /// opened beneath berth's data dir; a local home is opened from `/`. Either way no symlink
    /// on the path is followed, and a local home must be the folder that was approved: its
    /// device and inode, recorded when it was approved (or, for a row from an older build, at
    /// the first start or open since), must match.
    pub fn open_home(&self, entry: &WorkspaceEntry) -> Result<OpenedHome, BerthError> {
        let path = home_of(entry, self.data_dir(), &self.guard_ctx())
            .map_err(|e| refused_home(entry, &e))?;
        let fd = match &entry.home {
            Home::Managed => self.open_managed_home(&entry.name, &path)?,
            Home::Local(_) => {
                let fd = linkfree::open_dir(&path).map_err(|e| unopenable(entry, &path, &e))?;
                self.check_identity(entry, &path, &fd)?;
                fd
            }
        };
        Ok(OpenedHome {
            path,
            dir: cap_std::fs::Dir::from(fd),
        })
    }

    /// The home of workspace `name`, opened as its file tools open it (so a managed one is
    /// made on the spot): for `berth exec`, whose command is handed the folder's path and
    /// must find a folder there (docs/decisions/0026-berth-exec.md).
    pub fn ready_home(&self, name: &str) -> Result<PathBuf, BerthError> {
        let reg = self.registry();
        let entry = reg
            .workspaces
            .get(name)
            .ok_or_else(|| self.unknown_workspace(name))?;
        Ok(self.open_home(entry)?.path)
    }

    /// A managed home sits in berth's own data dir, which the user chose and no tool can reach:
    /// the data dir is opened as configured, then `workspaces` and the home in it are made
    /// where missing and opened, one name at a time, never through a link. So a link or a
    /// file planted in either place is refused, and nothing is ever made where it leads.
    fn open_managed_home(&self, name: &str, path: &Path) -> Result<Handle, BerthError> {
        let internal = |e: std::io::Error| {
            BerthError::internal(format!(
                "opening the home of workspace {name:?} at {path:?}: {e}"
            ))
        };
        let data = self.open_data_dir().map_err(internal)?;
        let step = |at: &Handle, part: &str, place: &Path| {
            linkfree::make_dir_beneath(at, part).map_err(|e| {
                // The home itself, or the folder of all managed homes on its path.
                let what = if place == path {
                    format!("the home of workspace {name:?} at {path:?}")
                } else {
                    format!("the home of workspace {name:?} at {path:?} cannot be used: {place:?}")
                };
                let aside = |suffix: &str| {
                    let mut p = place.as_os_str().to_owned();
                    p.push(suffix);
                    PathBuf::from(p)
                };
                if linkfree::is_link_refusal(&e) {
                    BerthError::refused(format!(
                        "{what} is a symlink, and berth never follows a link to a home (a link \
                         can send files anywhere). Move the link away (mv {place:?} {:?}); \
                         berth makes a fresh folder on next use, and files where the link led \
                         can be moved into it",
                        aside(".link")
                    ))
                } else if is_not_a_folder(&e) {
                    BerthError::refused(format!(
                        "{what} is not a folder. Move it away (mv {place:?} {:?}); berth makes \
                         a fresh folder on next use",
                        aside(".moved")
                    ))
                } else if is_disk_full(&e) {
                    BerthError::disk_full(
                        format_args!("the home of workspace {name:?} ({})", path.display()),
                        path.display(),
                    )
                } else {
                    internal(e)
                }
            })
        };
        let homes = step(&data, MANAGED_HOMES, &self.data_dir().join(MANAGED_HOMES))?;
        step(&homes, name, path)
    }

    /// berth's data dir, opened as the user configured it (a link there is their choice).
    fn open_data_dir(&self) -> std::io::Result<Handle> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            Ok(rustix::fs::open(self.data_dir(), flags, Mode::empty())?)
        }
        #[cfg(windows)]
        {
            let dir =
                cap_std::fs::Dir::open_ambient_dir(self.data_dir(), cap_std::ambient_authority())?;
            Ok(dir.into_std_file().into())
        }
    }

    /// Compares the opened home with the folder that was approved; records it when no record
    /// exists yet (a row from before identities were kept).
    fn check_identity(
        &self,
        entry: &WorkspaceEntry,
        path: &Path,
        fd: &Handle,
    ) -> Result<(), BerthError> {
        let now = linkfree::identity(fd).map_err(|e| unopenable(entry, path, &e))?;
        match self.store().home_identity(&entry.name)? {
            Some((dev, ino)) if (Identity { dev, ino }) == now => Ok(()),
            Some(_) => Err(BerthError::refused(format!(
                "the folder at {path:?} is not the one approved as the home of workspace {:?}: \
                 another folder was moved into its place, so berth will not use it. Put the \
                 original folder back; or, if this folder is meant, `berth workspace delete {}` \
                 (its files stay) and create it again with --home {path:?}",
                entry.name, entry.name
            ))),
            None => {
                self.store()
                    .set_home_identity(&entry.name, now.dev, now.ino)?;
                tracing::info!(workspace = %entry.name, ?path, "recorded which folder the home is");
                Ok(())
            }
        }
    }

    /// Records the identity of every local home that has none yet, and logs nested homes.
    /// Run once at start, so a row from an older build is pinned to its folder as early as
    /// possible (a tool's first open would record it too).
    pub fn check_homes_at_start(&self) {
        let reg = self.registry();
        for entry in reg.workspaces.values() {
            if !matches!(entry.home, Home::Local(_)) {
                continue;
            }
            if let Err(e) = self.open_home(entry) {
                tracing::warn!(workspace = %entry.name, error = %e.message, "a home cannot be used");
            }
        }
        for (name, notes) in nested_homes(&reg) {
            for note in notes {
                tracing::warn!(workspace = %name, "{note}");
            }
        }
    }

    /// Removes the temporary files that writers killed mid-write left in the folders berth
    /// writes to: every home that exists, the scratch folders, and the `.berth` folder of each
    /// root (where project files are written). Only files of berth's own pattern whose writer
    /// no longer runs; no link is followed, and the whole sweep reads at most
    /// [`SWEEP_BUDGET`]. Runs once at start, beside the serving daemon.
    pub fn sweep_stale_temps(&self) -> usize {
        let mut budget = SWEEP_BUDGET;
        let reg = self.registry();
        let mut removed = 0;
        for entry in reg.workspaces.values() {
            let Ok(path) = home_of(entry, self.data_dir(), &self.guard_ctx()) else {
                continue;
            };
            // A managed home is made on first use; the sweep does not make one.
            if matches!(entry.home, Home::Managed) && !path.is_dir() {
                continue;
            }
            if let Ok(home) = self.open_home(entry) {
                removed += sweep_stale(&home.dir, &mut budget, 0);
            }
        }
        let scratch = self
            .open_data_dir()
            .and_then(|data| linkfree::open_dir_beneath(Some(&data), Path::new("scratch")));
        if let Ok(fd) = scratch {
            removed += sweep_stale(&cap_std::fs::Dir::from(fd), &mut budget, 0);
        }
        for root in &reg.roots {
            if let Ok(fd) = linkfree::open_dir(&root.path.join(".berth")) {
                // Only that folder: the project's own files are not berth's to look through.
                let depth = budget.depth;
                removed += sweep_stale(&cap_std::fs::Dir::from(fd), &mut budget, depth);
            }
        }
        if budget.entries == 0 {
            tracing::warn!(
                "the sweep of temporary files stopped after {} entries; the rest waits for the next start",
                SWEEP_BUDGET.entries
            );
        }
        tracing::info!(removed, "swept berth's stale temporary files");
        removed
    }

    /// The facts the home guard judges against.
    pub(crate) fn guard_ctx(&self) -> GuardCtx {
        let canon = |p: PathBuf| crate::canonical::canonicalize(&p).unwrap_or(p);
        GuardCtx {
            homes: self.homes(None),
            temp_dir: canon(std::env::temp_dir()),
            data_dir: canon(self.data_dir().to_path_buf()),
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
    #[cfg(unix)] // written with Unix paths
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
    #[cfg(unix)] // Unix links, modes or FIFOs
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

    fn with_local(homes: &[(&str, &str)]) -> Registry {
        let mut reg = berth_core::registry::fixtures::registry(&["default"], "default", &[]);
        for (name, home) in homes {
            reg.workspaces.insert(
                name.to_string(),
                WorkspaceEntry {
                    name: name.to_string(),
                    home: Home::Local(PathBuf::from(home)),
                },
            );
        }
        reg
    }

    #[test]
    fn a_home_inside_or_around_another_local_home_is_refused_a_sibling_is_not() {
        let reg = with_local(&[("wa", "/h/c/homeA")]);
        for (path, needle) in [
            (
                "/h/c/homeA/sub/homeB",
                "lies inside the home of workspace \"wa\"",
            ),
            ("/h/c", "contains the home of workspace \"wa\""),
        ] {
            let err = check_not_nested(Path::new(path), "new", &reg).unwrap_err();
            assert!(err.message.contains(needle), "{path}: {err}");
        }
        for ok in ["/h/c/homeAB", "/h/d", "/h/c/other/homeA"] {
            check_not_nested(Path::new(ok), "new", &reg).unwrap();
        }
        // A workspace is not nested with itself.
        check_not_nested(Path::new("/h/c/homeA/x"), "wa", &reg).unwrap();
    }

    #[test]
    fn nested_homes_in_the_registry_get_a_note_on_both_sides() {
        let reg = with_local(&[
            ("wa", "/h/a"),
            ("wb", "/h/a/sub/b"),
            ("wc", "/h/a/sub/b/c"),
            ("wd", "/h/ab"),
        ]);
        let notes = nested_homes(&reg);
        assert_eq!(notes.keys().collect::<Vec<_>>(), ["wa", "wb", "wc"]);
        assert_eq!(notes["wa"].len(), 2, "{:?}", notes["wa"]);
        assert_eq!(notes["wb"].len(), 2, "{:?}", notes["wb"]);
        assert!(
            notes["wc"].iter().all(|n| n.contains("lies inside")),
            "{:?}",
            notes["wc"]
        );
    }
}
