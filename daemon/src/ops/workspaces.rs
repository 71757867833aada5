//! Workspaces: create, delete, switch, list, show.

use std::path::PathBuf;

use crate::error::BerthError;
use crate::ops::daemon::Daemon;
use berth_core::names::check_workspace_name;
use berth_core::registry::{Home, Registry};

/// A workspace as listed to clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceView {
    /// Its name.
    pub name: String,
    /// Whether it is the device's active workspace.
    pub active: bool,
    /// Its home folder (derived; see [`crate::ops::homes::home_of`]).
    pub home: PathBuf,
    /// `managed` or `local`.
    pub home_mode: &'static str,
    /// Its roots, sorted.
    pub roots: Vec<PathBuf>,
    /// Why its home cannot be used (a row berth refuses, a folder moved away or swapped), with
    /// the way out. Only this workspace is affected; the others list and work as ever.
    pub error: Option<String>,
    /// Things to know that do not stop it, such as a home nested with another's.
    pub notes: Vec<String>,
}

/// What deleting did beyond the delete itself.
#[derive(Debug, Default)]
pub struct Deleted {
    /// Notes for the user: a reset setting, files kept or purged.
    pub notes: Vec<String>,
    /// Whether a managed home's files were removed (a local home never is).
    pub purged: bool,
}

impl Daemon {
    /// Lists every workspace.
    pub fn list_workspaces(&self) -> Result<(String, Vec<WorkspaceView>), BerthError> {
        let reg = self.registry();
        let mut nested = crate::ops::homes::nested_homes(&reg);
        let views = reg
            .workspaces
            .keys()
            .map(|name| self.view_with(&reg, name, nested.remove(name).unwrap_or_default()))
            .collect();
        Ok((reg.active.clone(), views))
    }

    /// Shows one workspace.
    pub fn show_workspace(&self, name: &str) -> Result<WorkspaceView, BerthError> {
        let reg = self.registry();
        if !reg.exists(name) {
            return Err(self.unknown_workspace(name));
        }
        self.view(&reg, name)
    }

    fn view(&self, reg: &Registry, name: &str) -> Result<WorkspaceView, BerthError> {
        let notes = crate::ops::homes::nested_homes(reg)
            .remove(name)
            .unwrap_or_default();
        Ok(self.view_with(reg, name, notes))
    }

    /// One workspace as listed. A home that cannot be used is this workspace's error, never
    /// the listing's: one bad row costs only its own workspace.
    fn view_with(&self, reg: &Registry, name: &str, notes: Vec<String>) -> WorkspaceView {
        let entry = &reg.workspaces[name];
        let (home, error) =
            match crate::ops::homes::home_of(entry, self.data_dir(), &self.guard_ctx()) {
                Ok(home) => {
                    // A local home is opened as its tools would open it, so a folder moved away or
                    // swapped shows here; managed homes are berth's own and made on first use.
                    let error = match entry.home {
                        Home::Local(_) => self.open_home(entry).err().map(|e| e.message),
                        Home::Managed => None,
                    };
                    (home, error)
                }
                Err(why) => {
                    let stored = match &entry.home {
                        Home::Local(p) => p.clone(),
                        Home::Managed => PathBuf::new(),
                    };
                    (
                        stored,
                        Some(crate::ops::homes::refused_home(entry, &why).message),
                    )
                }
            };
        WorkspaceView {
            name: name.to_string(),
            active: reg.active == name,
            home,
            home_mode: match entry.home {
                Home::Managed => "managed",
                Home::Local(_) => "local",
            },
            roots: reg.roots_of(name).map(|r| r.path.clone()).collect(),
            error,
            notes,
        }
    }

    /// Creates a workspace with a managed home, or a local one at `home`.
    pub fn create_workspace(
        &self,
        name: &str,
        home: Option<&str>,
    ) -> Result<WorkspaceView, BerthError> {
        check_workspace_name(name).map_err(|e| BerthError::invalid(e.to_string()))?;
        let refuse_taken = |reg: &Registry| {
            if reg.exists(name) {
                return Err(BerthError::refused(format!(
                    "workspace {name:?} already exists; see it with `berth workspace show {name}`"
                )));
            }
            Ok(())
        };
        refuse_taken(&self.registry())?;
        let home = match home {
            None => Home::Managed,
            Some(typed) => Home::Local(crate::ops::homes::check_local_home(
                std::path::Path::new(typed),
                &self.guard_ctx(),
            )?),
        };
        // Decided inside the write, so two creates at once cannot both pass.
        self.store().write(|w| {
            refuse_taken(w.registry())?;
            refuse_shared_home(w.registry(), &home)?;
            if let Home::Local(path) = &home {
                crate::ops::homes::check_not_nested(path, name, w.registry())?;
            }
            Ok::<_, BerthError>(w.create_workspace(name, &home)?)
        })?;
        let reg = self.refresh()?;
        tracing::info!(workspace = name, ?home, "created workspace");
        // Opening a local home records which folder was approved (its device and inode).
        if let Err(e) = self.open_home(&reg.workspaces[name]) {
            tracing::warn!(workspace = name, error = %e.message, "a new home cannot be opened");
        }
        self.view(&reg, name)
    }

    /// Deletes a workspace: refuses the active one, removes its roots, resets
    /// `workspace.unassigned` when it names it, and keeps a managed home's
    /// files unless `purge`.
    pub fn delete_workspace(&self, name: &str, purge: bool) -> Result<Deleted, BerthError> {
        let reg = self.registry();
        let Some(entry) = reg.workspaces.get(name) else {
            return Err(self.unknown_workspace(name));
        };
        let home = crate::ops::homes::home_of(entry, self.data_dir(), &self.guard_ctx()).ok();
        let mut out = Deleted::default();
        // Decided inside the write: a `switch` to it at the same moment must
        // not leave the device's active workspace deleted.
        let reset = self.store().write(|w| {
            let reg = w.registry();
            if !reg.exists(name) {
                return Err(self.unknown_workspace(name));
            }
            if reg.active == name {
                return Err(BerthError::refused(format!(
                    "workspace {name:?} is the active workspace; switch to another first (`berth workspace switch <name>`)"
                )));
            }
            Ok(w.delete_workspace(name)?)
        })?;
        if reset {
            out.notes
                .push(format!("workspace.unassigned named {name:?} and was unset"));
        }
        self.refresh()?;
        tracing::info!(workspace = name, purge, "deleted workspace");
        match (&entry.home, home) {
            (Home::Managed, Some(home)) if home.exists() => {
                if purge {
                    std::fs::remove_dir_all(&home).map_err(|e| {
                        BerthError::internal(format!(
                            "workspace {name:?} was deleted, but purging its files at {} failed: {e}",
                            home.display()
                        ))
                    })?;
                    out.notes
                        .push(format!("purged its files at {}", home.display()));
                    out.purged = true;
                } else {
                    out.notes.push(format!(
                        "kept its files at {}; delete them with --purge",
                        home.display()
                    ));
                }
            }
            (Home::Local(path), _) => out.notes.push(format!(
                "its local home {} is your folder and was left in place",
                path.display()
            )),
            _ => {}
        }
        Ok(out)
    }

    /// Makes `name` the device's active workspace.
    pub fn switch_workspace(&self, name: &str) -> Result<WorkspaceView, BerthError> {
        self.store().write(|w| {
            if !w.registry().exists(name) {
                return Err(self.unknown_workspace(name));
            }
            Ok(w.set_active(name)?)
        })?;
        let reg = self.refresh()?;
        tracing::info!(workspace = name, "switched the active workspace");
        self.view(&reg, name)
    }
}

/// Two workspaces in one folder would mix their files: one is never told apart.
fn refuse_shared_home(reg: &Registry, home: &Home) -> Result<(), BerthError> {
    let Home::Local(path) = home else {
        return Ok(());
    };
    match reg
        .workspaces
        .values()
        .find(|e| matches!(&e.home, Home::Local(p) if p == path))
    {
        Some(other) => Err(BerthError::refused(format!(
            "{} is already the home of workspace {:?}; two workspaces in one folder would mix their files. Choose another folder, or use {:?}",
            path.display(),
            other.name,
            other.name
        ))),
        None => Ok(()),
    }
}
