//! Roots: the folders this device approved for a workspace (docs/reference.md, "Roots, the walk and
//! project files"). One approval both claims the folders beneath it and accepts the project
//! files inside it, so adding one is guarded.

use std::path::{Path, PathBuf};

use crate::error::BerthError;
use crate::ops::caller::{Caller, canonical_dir};
use crate::ops::daemon::Daemon;
use berth_core::pathutil::is_within;
use berth_core::registry::Root;
use berth_core::use_plan::overlap_message;
use berth_core::walk::{Stop, guard};

impl Daemon {
    /// Approves `path` (relative to the caller's cwd) as a root of
    /// `workspace`. Returns the canonical path and whether it was new.
    pub fn add_root(
        &self,
        caller: &Caller,
        workspace: &str,
        path: &str,
        allow_overlap: bool,
    ) -> Result<(PathBuf, bool), BerthError> {
        if !self.registry().exists(workspace) {
            return Err(self.unknown_workspace(workspace));
        }
        let dir = canonical_dir(&caller.absolute(path))?;
        self.check_root_place(&dir, caller.extra_home.as_deref())?;
        // Decided inside the write: two workspaces' nested roots approved at
        // once must not both pass a check made before either was written.
        let added = self.store().write(|w| {
            let reg = w.registry();
            if !reg.exists(workspace) {
                return Err(self.unknown_workspace(workspace));
            }
            if !allow_overlap {
                refuse_overlap(
                    &reg.overlapping_roots(&dir, workspace),
                    &dir,
                    "repeat with --allow-overlap",
                )?;
            }
            Ok(w.add_root(workspace, &dir)?)
        })?;
        self.refresh()?;
        tracing::info!(workspace, root = ?dir, added, "approved root");
        Ok((dir, added))
    }

    /// Refuses the filesystem root, a home, an ancestor of a home, and any folder of berth's
    /// own data dir (managed homes, scratch folders: never roots, docs/reference.md, "Scratch
    /// folders").
    pub(crate) fn check_root_place(
        &self,
        dir: &Path,
        extra_home: Option<&Path>,
    ) -> Result<(), BerthError> {
        let data_dir = crate::canonical::canonicalize(self.data_dir())
            .unwrap_or(self.data_dir().to_path_buf());
        if is_within(dir, &data_dir) {
            return Err(BerthError::refused(format!(
                "{} is inside berth's data folder {} (workspace homes and session scratch folders), which is never a root. Choose a project folder",
                dir.display(),
                data_dir.display()
            )));
        }
        match guard(dir, &self.homes(extra_home)) {
            None => Ok(()),
            Some(Stop::FilesystemRoot(_)) => Err(BerthError::refused(format!(
                "{} is the filesystem root; approving it would claim every folder on this device. Choose a project folder",
                dir.display()
            ))),
            Some(Stop::Home(_)) => Err(BerthError::refused(format!(
                "{} is a home directory; approving it would claim every folder beneath it. Choose a project folder inside it",
                dir.display()
            ))),
            Some(Stop::AncestorOfHome { home, .. }) => Err(BerthError::refused(format!(
                "{} contains the home directory {}; approving it would claim every folder beneath it. Choose a project folder",
                dir.display(),
                home.display()
            ))),
        }
    }

    /// Removes a root of `workspace`.
    pub fn remove_root(
        &self,
        caller: &Caller,
        workspace: &str,
        path: &str,
    ) -> Result<PathBuf, BerthError> {
        if !self.registry().exists(workspace) {
            return Err(self.unknown_workspace(workspace));
        }
        let typed = caller.absolute(path);
        // A root whose folder was deleted can still be removed by its path.
        let dir = crate::canonical::canonicalize(&typed).unwrap_or(typed);
        if !self.store().remove_root(workspace, &dir)? {
            return Err(BerthError::not_found(format!(
                "{} is not a root of workspace {workspace:?}; see `berth root list {workspace}`",
                dir.display()
            )));
        }
        self.refresh()?;
        tracing::info!(workspace, root = ?dir, "removed root");
        Ok(dir)
    }

    /// Lists roots, of one workspace or of all.
    pub fn list_roots(&self, workspace: Option<&str>) -> Result<Vec<Root>, BerthError> {
        let reg = self.registry();
        match workspace {
            Some(ws) if !reg.exists(ws) => Err(self.unknown_workspace(ws)),
            Some(ws) => Ok(reg.roots_of(ws).cloned().collect()),
            None => Ok(reg.roots.clone()),
        }
    }
}

/// Refuses a root that equals, contains or lies inside another workspace's
/// root, naming them. `confirm`, the hint, says how the caller confirms (a flag, a tool argument).
pub(crate) fn refuse_overlap(
    others: &[&Root],
    dir: &Path,
    confirm: &str,
) -> Result<(), BerthError> {
    if others.is_empty() {
        return Ok(());
    }
    Err(BerthError::refused(overlap_message(others.iter().copied(), dir)).hint(confirm))
}
