//! `workspace use` and the MCP `use_workspace` tool (docs/reference.md, "Agent sessions" and "The
//! CLI"): act on the user's choice of workspace for the project around a directory.
//!
//! Creating the workspace, approving the folder as a root and writing the
//! project file happen together or not at all: the core's `UsePlan` decides
//! everything, every refusal included, before this writes anything.

use std::path::{Path, PathBuf};

use crate::error::{BerthError, is_disk_full};
use crate::ops::caller::Caller;
use crate::ops::device::Device;
use berth_core::names::check_workspace_name;
use berth_core::project_file::{PROJECT_DIR, project_file_path};
use berth_core::registry::{Home, Registry};
use berth_core::resolve::{Answer, Mode, WalkSummary, summarize_walk};
use berth_core::use_plan::{FileEdit, UsePlan, UseRefusal, plan};

/// What `use` did.
#[derive(Debug)]
pub struct UseOutcome {
    /// The folder now assigned; `None` for an agent session without a project.
    pub folder: Option<PathBuf>,
    /// Whether the workspace was created.
    pub created: bool,
    /// Whether the folder was approved as a new root.
    pub root_added: bool,
    /// The project file written, if one was.
    pub project_file: Option<PathBuf>,
    /// What the user should know.
    pub notes: Vec<String>,
    /// The caller's resolution afterwards.
    pub answer: Answer,
}

impl Device {
    /// Uses `name` for the project around the caller's cwd. The CLI falls
    /// back to the cwd itself when it is in no project (a person chose to run
    /// it there); an agent session without a project only creates the
    /// workspace and switches nothing.
    pub fn use_workspace(
        &self,
        caller: &Caller,
        name: &str,
        allow_overlap: bool,
        mode: Mode,
    ) -> Result<UseOutcome, BerthError> {
        self.use_or_overlap(caller, name, allow_overlap, mode)?
            .map_err(refused)
    }

    /// [`Device::use_workspace`], with an unconfirmed overlap kept apart from every other
    /// refusal, for a caller that asks the user about it itself (the session's question in the
    /// client's form). Nothing is changed when it is returned.
    pub(crate) fn use_or_overlap(
        &self,
        caller: &Caller,
        name: &str,
        allow_overlap: bool,
        mode: Mode,
    ) -> Result<Result<UseOutcome, UseRefusal>, BerthError> {
        check_workspace_name(name).map_err(|e| BerthError::invalid(e.to_string()))?;
        let gathered = self.gather(caller, "")?;
        let reg = self.registry();
        // A BERTH_WORKSPACE naming no workspace fails the answer given after the writes; refuse
        // before writing anything instead (ADR 0005). Using that very name creates it.
        if let Some(pin) = caller.env_workspace.as_deref()
            && pin != name
            && !reg.exists(pin)
        {
            return Err(self
                .resolve(caller, "", None, mode)
                .err()
                .unwrap_or_else(|| {
                    BerthError::not_found(format!("BERTH_WORKSPACE names no workspace {pin:?}"))
                }));
        }
        let summary = summarize_walk(&gathered.walk, &reg);
        if let Some(note) =
            already_approved_through_repository(&summary, &gathered.directory, name, &reg)
        {
            let answer = self.resolve(caller, "", None, mode)?;
            return Ok(Ok(UseOutcome {
                folder: summary.project,
                created: false,
                root_added: false,
                project_file: None,
                notes: vec![note],
                answer,
            }));
        }
        let folder = match (summary.project, mode) {
            (Some(project), _) => project,
            (None, Mode::Cli) => gathered.directory.clone(),
            (None, Mode::Agent) => {
                // Decided inside the write: a concurrent `use` of the same new
                // name has created it already, which is fine.
                let created = self.store().write(|w| {
                    let create = !w.registry().exists(name);
                    if create {
                        w.create_workspace(name, &Home::Managed)?;
                    }
                    Ok::<_, BerthError>(create)
                })?;
                if created {
                    self.refresh()?;
                }
                let answer = self.resolve(caller, "", None, mode)?;
                return Ok(Ok(UseOutcome {
                    folder: None,
                    created,
                    root_added: false,
                    project_file: None,
                    notes: vec![format!(
                        "this session has no project, so nothing was switched; pass workspace \"{name}\" on later calls"
                    )],
                    answer,
                }));
            }
        };
        self.check_root_place(&folder, caller.extra_home.as_deref())?;
        // One `use` at a time writes a project file and its registry rows: a
        // loser's putting back its file must not undo the winner's file.
        let _one_use = self
            .project_files()
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let file = project_file_path(&folder);
        let previous = read_existing(&file)?;
        // Everything is decided here, before the file is touched (ADR 0005). The registry rows
        // are decided again inside the write below, where no other write can slip in between.
        let planned = match plan(
            &self.registry(),
            name,
            &folder,
            previous.as_deref(),
            allow_overlap,
            mode,
        ) {
            Ok(planned) => planned,
            Err(refusal) => return Ok(Err(refusal)),
        };

        // The file first: if the registry write then fails, the file is put
        // back as it was, and an unapproved file only proposes anyway.
        let mut notes = Vec::new();
        let wrote = write_project_file(&file, &planned.file, &mut notes)?;
        let written = self.store().write(|w| {
            let plan = plan(
                w.registry(),
                name,
                &folder,
                previous.as_deref(),
                allow_overlap,
                mode,
            )
            .map_err(refused)?;
            if plan.create {
                w.create_workspace(name, &Home::Managed)?;
            }
            if plan.add_root {
                w.add_root(name, &folder)?;
            }
            Ok::<_, BerthError>(plan)
        });
        let UsePlan {
            create, add_root, ..
        } = match written {
            Ok(plan) => plan,
            Err(e) => {
                if wrote {
                    restore(&file, previous.as_deref());
                }
                return Err(e);
            }
        };
        self.refresh()?;
        self.invalidate(&folder);
        tracing::info!(
            workspace = name,
            ?folder,
            created = create,
            root_added = add_root,
            "used workspace"
        );
        if wrote {
            notes.push(format!(
                "wrote {}; committing it to version control is your choice",
                file.display()
            ));
        }
        let answer = self.resolve(caller, "", None, mode)?;
        Ok(Ok(UseOutcome {
            folder: Some(folder),
            created: create,
            root_added: add_root,
            project_file: wrote.then_some(file),
            notes,
            answer,
        }))
    }

    /// Forgets cached lookups at and below `dir` (the daemon's own writes
    /// invalidate before they are answered).
    pub(crate) fn invalidate(&self, dir: &std::path::Path) {
        self.fs().invalidate(dir);
    }
}

/// In a linked worktree of a repository a root of `name` already approves, and whose project
/// file (if any) names `name` too, `use` has nothing to do: the note saying so.
fn already_approved_through_repository(
    summary: &WalkSummary,
    directory: &Path,
    name: &str,
    reg: &Registry,
) -> Option<String> {
    let worktree = summary.worktree.as_ref()?;
    let here = summary.project.as_deref().unwrap_or(directory);
    let there = worktree.counterpart(here)?;
    let file_agrees = summary.file.as_ref().is_none_or(|f| f.workspace == name);
    (file_agrees && reg.root_of_workspace_contains(name, &there)).then(|| {
        format!(
            "{} is already approved for {name} through the repository {} (this folder is one of its git worktrees); nothing was changed",
            worktree.top.display(),
            worktree.repository.display()
        )
    })
}

fn refused(e: UseRefusal) -> BerthError {
    BerthError::refused(e.to_string()).hint(e.hint())
}

/// Applies the plan's project file: writes its text, first saving an unreadable old content
/// next to it. Returns whether anything was written.
fn write_project_file(
    file: &std::path::Path,
    edit: &FileEdit,
    notes: &mut Vec<String>,
) -> Result<bool, BerthError> {
    let FileEdit::Write { text, backup } = edit else {
        return Ok(false);
    };
    if let Some(bytes) = backup {
        let backup = file.with_extension("json.bak");
        berth_client::atomic::write_atomic(&backup, bytes).map_err(|e| {
            if is_disk_full(&e) {
                no_space(&backup)
            } else {
                BerthError::internal(format!("backing up {}: {e}", file.display()))
            }
        })?;
        notes.push(format!(
            "replaced the unreadable {}; its old content is in {}",
            file.display(),
            backup.display()
        ));
    }
    let dir = file.parent().expect("project file has a folder");
    debug_assert!(dir.ends_with(PROJECT_DIR));
    let made_dir = !dir.exists();
    std::fs::create_dir_all(dir)
        .and_then(|()| berth_client::atomic::write_atomic(file, text.as_bytes()))
        .map_err(|e| {
            // A `.berth` made for this file goes with it (only while empty).
            if made_dir {
                let _ = std::fs::remove_dir(dir);
            }
            if is_disk_full(&e) {
                no_space(file)
            } else {
                BerthError::refused(format!("writing {}: {e}", file.display()))
            }
        })?;
    Ok(true)
}

/// A project file (or its backup) not written for lack of space. The file comes before the
/// registry, so neither the workspace nor its root was added either.
fn no_space(file: &std::path::Path) -> BerthError {
    let folder = file.parent().and_then(|p| p.parent()).unwrap_or(file);
    let mut e = BerthError::disk_full(file.display(), folder.display());
    e.message.push_str(" (no workspace or root was added)");
    e
}

/// Reads the project file `use` is about to replace, as carefully as the walk
/// does: a symlink, FIFO, folder or device in its place, or a file over 64
/// KiB, is refused rather than read (a cloned repository may plant one).
fn read_existing(file: &std::path::Path) -> Result<Option<Vec<u8>>, BerthError> {
    use std::io::Read;
    let refuse = |what: &str| {
        BerthError::refused(format!(
            "{} is {what}, not a project file berth can replace; remove it, then run `workspace use` again",
            file.display()
        ))
    };
    let meta = match std::fs::symlink_metadata(file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(BerthError::refused(format!("{}: {e}", file.display()))),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse("a symlink"));
    }
    if !meta.is_file() {
        return Err(refuse("not a regular file"));
    }
    let limit = berth_core::project_file::MAX_PROJECT_FILE_BYTES as u64;
    let f = berth_client::careful_open::open_read(file)
        .map_err(|e| BerthError::refused(format!("{}: {e}", file.display())))?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(refuse("not a regular file"));
    }
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BerthError::refused(format!("{}: {e}", file.display())))?;
    if bytes.len() as u64 > limit {
        return Err(refuse("larger than 64 KiB"));
    }
    Ok(Some(bytes))
}

fn restore(file: &std::path::Path, previous: Option<&[u8]>) {
    let _ = match previous {
        Some(bytes) => berth_client::atomic::write_atomic(file, bytes),
        None => std::fs::remove_file(file),
    };
}
