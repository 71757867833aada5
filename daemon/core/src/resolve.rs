//! Resolution (docs/reference.md, "Resolution"): which workspace a directory belongs to, and why,
//! as one pure function of gathered facts. No I/O, no environment, no clock: the daemon walks
//! through its cache, reads the pins and snapshots the registry, then calls [`resolve`].
//!
//! An invalid project file is treated as absent and the search continues to farther files: a typo
//! in a nested file should not silently block the project's real file, and the note naming the
//! file and the reason tells the user. Only the nearest *valid* file speaks; it is honoured when a
//! root of its workspace contains its folder, and is otherwise a proposal that assigns nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::fsview::WalkStep;
use crate::names::check_workspace_name;
use crate::project_file::project_file_path;
use crate::registry::Registry;
use crate::walk::Stop;
use crate::worktree::{GitLink, LinkedWorktree};
use berth_vocab::text::no_workspace;

/// Who is asking, because the last step of the order differs: the CLI ends at the active
/// workspace, an agent session at the unassigned setting first (docs/reference.md, "Resolution").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Cli,
    Agent,
}

/// Everything resolution needs, gathered by the caller.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub directory: PathBuf,
    /// An explicit workspace argument (`--workspace`, a tool's `workspace`).
    pub argument: Option<String>,
    /// `BERTH_WORKSPACE`.
    pub env_pin: Option<String>,
    /// The walk from `directory`, nearest first.
    pub walk: Vec<WalkStep>,
    pub stop: Stop,
    pub registry: &'a Registry,
    pub mode: Mode,
}

/// Which rule answered. The strings are the `reason` field of the CLI and tool contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    Argument,
    Env,
    ProjectFile,
    Root,
    Active,
    UnassignedSetting,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Argument => "argument",
            Self::Env => "env",
            Self::ProjectFile => "project-file",
            Self::Root => "root",
            Self::Active => "active",
            Self::UnassignedSetting => "unassigned-setting",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub workspace: String,
    pub reason: Reason,
    pub directory: PathBuf,
    /// The nearest folder on the walk holding a valid project file or a `.git`.
    pub project: Option<PathBuf>,
    /// The nearest valid project file, approved or not.
    pub project_file: Option<PathBuf>,
    /// The workspace an unapproved project file names.
    pub proposal: Option<String>,
    pub notes: Vec<String>,
}

/// Where a pinned workspace name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinSource {
    Argument,
    Env,
}

impl fmt::Display for PinSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Argument => "the workspace argument",
            Self::Env => "BERTH_WORKSPACE",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResolveError {
    // The field is `from`, not `source`: thiserror would take `source` as the error's cause.
    #[error("{}", unknown_workspace(name, *from, known))]
    UnknownWorkspace {
        name: String,
        from: PinSource,
        known: Vec<String>,
    },
}

impl ResolveError {
    /// Whether the pin is not even a valid name, so no workspace can ever have it.
    pub fn is_invalid_name(&self) -> bool {
        match self {
            Self::UnknownWorkspace { name, .. } => check_workspace_name(name).is_err(),
        }
    }
}

/// The message for a pin naming no workspace. Creating it is suggested only under a name that
/// can be created: `berth workspace create ../x` would only fail again.
fn unknown_workspace(name: &str, from: PinSource, known: &[String]) -> String {
    let missing = format!("{} ({from} named it)", no_workspace(name, known));
    let Err(invalid) = check_workspace_name(name) else {
        return format!("{missing}; create it with `berth workspace create {name}`");
    };
    let lower = name.to_ascii_lowercase();
    let instead = if check_workspace_name(&lower).is_err() {
        "name one of those workspaces, or create one with a valid name (`berth workspace create NAME`)"
            .to_string()
    } else if known.contains(&lower) {
        format!("did you mean {lower}?")
    } else {
        format!("did you mean {lower}? create it with `berth workspace create {lower}`")
    };
    format!("{missing}, and it cannot name one: {invalid}; {instead}")
}

/// Whether a project file's workspace is honoured on this device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// A root of the workspace (the most specific one is given) contains the file's folder, or,
    /// in a linked worktree, the folder's counterpart in the repository (`through` names it).
    Approved {
        root: PathBuf,
        through: Option<PathBuf>,
    },
    NoSuchWorkspace,
    NoRoot,
}

/// The nearest valid project file and what this device makes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVerdict {
    /// The folder holding `.berth/`.
    pub dir: PathBuf,
    pub path: PathBuf,
    pub workspace: String,
    pub approval: Approval,
}

impl FileVerdict {
    pub fn is_approved(&self) -> bool {
        matches!(self.approval, Approval::Approved { .. })
    }

    /// Approved through a linked worktree's repository rather than by a root of its own.
    pub fn is_approved_through_repository(&self) -> bool {
        matches!(
            self.approval,
            Approval::Approved {
                through: Some(_),
                ..
            }
        )
    }
}

/// What the walk says, before any rule is applied. Shared by resolution, claims and explain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkSummary<'w> {
    pub project: Option<PathBuf>,
    pub file: Option<FileVerdict>,
    /// The linked worktree the walk passed, when the nearest `.git` is one git's records confirm.
    pub worktree: Option<LinkedWorktree<'w>>,
    /// One note per invalid file passed on the way to the nearest valid one.
    pub notes: Vec<String>,
}

/// Judges a project file in `dir` naming `workspace`.
pub fn approval(registry: &Registry, workspace: &str, dir: &Path) -> Approval {
    if !registry.exists(workspace) {
        return Approval::NoSuchWorkspace;
    }
    match registry.deepest_root_of_workspace_containing(workspace, dir) {
        Some(root) => Approval::Approved {
            root: root.path.clone(),
            through: None,
        },
        None => Approval::NoRoot,
    }
}

/// [`approval`], and for a folder of a linked worktree, the approval of its counterpart in the
/// repository first: exactly as if the file sat in the repository's folder. Asked there first,
/// a worktree costs one root query, as its repository does.
pub fn approval_in(
    registry: &Registry,
    workspace: &str,
    dir: &Path,
    worktree: Option<&LinkedWorktree<'_>>,
) -> Approval {
    let Some((wt, there)) = worktree.and_then(|wt| Some((wt, wt.counterpart(dir)?))) else {
        return approval(registry, workspace, dir);
    };
    match approval(registry, workspace, &there) {
        Approval::Approved { root, .. } => Approval::Approved {
            root,
            through: Some(wt.repository.to_path_buf()),
        },
        Approval::NoSuchWorkspace => Approval::NoSuchWorkspace,
        Approval::NoRoot => approval(registry, workspace, dir),
    }
}

/// The linked worktree a walk passed: the nearest folder with a `.git`, when git's records
/// confirm it is one. A nearer plain `.git` folder (a nested clone) is a repository of its own.
pub fn linked_worktree(walk: &[WalkStep]) -> Option<LinkedWorktree<'_>> {
    let step = walk.iter().find(|s| s.look.git)?;
    match step.look.link.as_deref() {
        Some(GitLink::Worktree { repository, .. }) => Some(LinkedWorktree {
            top: &step.dir,
            repository,
        }),
        _ => None,
    }
}

/// Finds the project, the nearest valid project file and the notes for invalid ones.
pub fn summarize_walk<'w>(walk: &'w [WalkStep], registry: &Registry) -> WalkSummary<'w> {
    let mut summary = WalkSummary {
        project: None,
        file: None,
        worktree: linked_worktree(walk),
        notes: Vec::new(),
    };
    for step in walk {
        let valid = match &step.look.project_file {
            Some(Ok(workspace)) if summary.file.is_none() => {
                summary.file = Some(FileVerdict {
                    dir: step.dir.clone(),
                    path: project_file_path(&step.dir),
                    workspace: workspace.clone(),
                    approval: approval_in(
                        registry,
                        workspace,
                        &step.dir,
                        summary.worktree.as_ref(),
                    ),
                });
                true
            }
            Some(Ok(_)) => true,
            // Invalid files beyond the nearest valid one changed nothing, so they go unmentioned.
            Some(Err(why)) if summary.file.is_none() => {
                let file = project_file_path(&step.dir);
                summary
                    .notes
                    .push(format!("ignored {}: {why}", file.display()));
                false
            }
            Some(Err(_)) | None => false,
        };
        // A folder holding only an invalid file is not a project: the file does not count.
        if summary.project.is_none() && (valid || step.look.git) {
            summary.project = Some(step.dir.clone());
        }
        if summary.project.is_some() && summary.file.is_some() {
            break;
        }
    }
    summary
}

/// Which folder's roots answer rule 4 for `dir`: `dir` itself, except in a linked worktree,
/// where the counterpart in the repository answers (the device approved the repository) unless a
/// root inside the worktree itself is the most specific for `dir` (a record about this very
/// checkout) or no root contains the counterpart. The second value: whether it is the
/// counterpart.
pub fn roots_decide_at(
    registry: &Registry,
    dir: &Path,
    worktree: Option<&LinkedWorktree<'_>>,
) -> (PathBuf, bool) {
    let own = || (dir.to_path_buf(), false);
    let Some((wt, there)) = worktree.and_then(|wt| Some((wt, wt.counterpart(dir)?))) else {
        return own();
    };
    let inside_worktree = registry
        .roots_containing(dir)
        .into_iter()
        .any(|r| crate::pathutil::is_within(&r.path, wt.top));
    if inside_worktree || registry.roots_containing(&there).is_empty() {
        return own();
    }
    (there, true)
}

/// Answers the resolution order (docs/reference.md, "Resolution") for `facts.directory`; the first
/// rule that answers wins.
pub fn resolve(facts: &Facts<'_>) -> Result<Answer, ResolveError> {
    let registry = facts.registry;
    let summary = summarize_walk(&facts.walk, registry);
    let mut notes = summary.notes;

    let proposal = match &summary.file {
        Some(file) if !file.is_approved() => {
            notes.push(proposal_note(file));
            Some(file.workspace.clone())
        }
        _ => None,
    };

    let answer = |workspace: String, reason: Reason, notes: Vec<String>| Answer {
        workspace,
        reason,
        directory: facts.directory.clone(),
        project: summary.project.clone(),
        project_file: summary.file.as_ref().map(|f| f.path.clone()),
        proposal: proposal.clone(),
        notes,
    };

    // 1 and 2: an explicit pin beats everything the directory says, and must name a workspace.
    for (pin, from, reason) in [
        (&facts.argument, PinSource::Argument, Reason::Argument),
        (&facts.env_pin, PinSource::Env, Reason::Env),
    ] {
        if let Some(name) = pin {
            if !registry.exists(name) {
                return Err(ResolveError::UnknownWorkspace {
                    name: name.clone(),
                    from,
                    known: registry.names().into_iter().map(str::to_owned).collect(),
                });
            }
            return Ok(answer(name.clone(), reason, notes));
        }
    }

    // 3: an approved project file beats roots, even a more specific root of another workspace:
    // the approval already says this device accepts the file for everything beneath it.
    if let Some(file) = summary.file.as_ref().filter(|f| f.is_approved()) {
        if let (true, Some(wt)) = (file.is_approved_through_repository(), &summary.worktree) {
            notes.push(wt.note());
        }
        return Ok(answer(file.workspace.clone(), Reason::ProjectFile, notes));
    }

    // 4: the most specific root; a tie between workspaces answers nothing. In a linked worktree
    // the repository's roots answer where its counterpart folder stands.
    let (at_dir, through) = roots_decide_at(registry, &facts.directory, summary.worktree.as_ref());
    let (_, workspaces) = registry.most_specific_root_workspaces(&at_dir);
    match workspaces.as_slice() {
        [one] => {
            if let (true, Some(wt)) = (through, &summary.worktree) {
                notes.push(wt.note());
            }
            return Ok(answer(one.clone(), Reason::Root, notes));
        }
        [] => {}
        tied => {
            let at = registry
                .roots_containing(&at_dir)
                .into_iter()
                .max_by_key(|r| crate::pathutil::depth(&r.path))
                .map(|r| r.path.display().to_string())
                .unwrap_or_default();
            notes.push(format!(
                "tied roots: {} at {at} — none of them was used; keep one with `berth root remove <workspace> {at}`",
                tied.join(", ")
            ));
        }
    }

    // Last step, for an agent session: it uses the unassigned setting when it still names a
    // workspace.
    if facts.mode == Mode::Agent
        && let Some(name) = &registry.unassigned
    {
        if registry.exists(name) {
            return Ok(answer(name.clone(), Reason::UnassignedSetting, notes));
        }
        notes.push(format!(
            "the workspace.unassigned setting names \"{name}\", which no longer exists; using the active workspace \"{}\"",
            registry.active
        ));
    }

    // Last step, for the CLI, and for a session without a usable setting.
    Ok(answer(registry.active.clone(), Reason::Active, notes))
}

fn proposal_note(file: &FileVerdict) -> String {
    let why = match file.approval {
        Approval::NoSuchWorkspace => "which does not exist on this device",
        _ => "which this device has not approved",
    };
    format!(
        "{} proposes workspace \"{}\", {why}; run `berth workspace use {}` in {} to approve it",
        file.path.display(),
        file.workspace,
        file.workspace,
        file.dir.display()
    )
}

/// Whether a session should ask the user once (docs/reference.md, "Agent sessions"): it has a
/// project, and either nothing assigned its workspace or its project file proposes an unapproved
/// one. A session without a project is never asked.
pub fn needs_asking(answer: &Answer) -> bool {
    answer.project.is_some()
        && (matches!(answer.reason, Reason::Active | Reason::UnassignedSetting)
            || answer.proposal.is_some())
}

#[cfg(test)]
pub(crate) mod testing {
    //! A small world for resolution tests: homes, a filesystem, and facts built through the real
    //! walk plan, so tests read as "in this directory, with these files and roots".

    use super::*;
    use crate::fsview::look_along;
    use crate::memfs::MemFs;
    use crate::registry::Registry;
    use crate::walk::walk_plan;

    pub(crate) const HOME: &str = "/home/u";

    pub(crate) fn facts<'a>(
        directory: &str,
        fs: &MemFs,
        registry: &'a Registry,
        mode: Mode,
    ) -> Facts<'a> {
        let homes = [PathBuf::from(HOME), PathBuf::from("/mnt/c/Users/u")];
        let plan = walk_plan(Path::new(directory), &homes);
        Facts {
            directory: directory.into(),
            argument: None,
            env_pin: None,
            walk: look_along(fs, plan.dirs),
            stop: plan.stop,
            registry,
            mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::testing::facts;
    use super::*;
    use crate::fsview::DirLook;
    use crate::memfs::MemFs;
    use crate::project_file::ProjectFileError;
    use crate::registry::fixtures::registry;
    #[cfg(unix)] // used by the worktree tests, written with Unix paths
    use crate::worktree::GitLink;

    const P: &str = "/home/u/code/app";

    fn world() -> Registry {
        registry(
            &["default", "work", "notes", "oss", "side"],
            "default",
            &[
                ("work", "/home/u/code"),
                ("notes", "/home/u/code/app/docs"),
                ("oss", "/home/u/shared"),
                ("side", "/home/u/shared"),
                ("notes", "/home/u/notes-repo"),
            ],
        )
    }

    /// Resolves with the given pins and returns (workspace, reason).
    fn check(
        dir: &str,
        fs: &MemFs,
        registry: &Registry,
        pins: (Option<&str>, Option<&str>),
        mode: Mode,
    ) -> (String, &'static str) {
        let mut f = facts(dir, fs, registry, mode);
        f.argument = pins.0.map(str::to_owned);
        f.env_pin = pins.1.map(str::to_owned);
        let a = resolve(&f).unwrap();
        (a.workspace, a.reason.as_str())
    }

    fn approved_file() -> MemFs {
        MemFs::new([(P, DirLook::file("work").with_git())])
    }

    #[rstest]
    #[case::an_argument_beats_env(Some("oss"), Some("side"), ("oss", "argument"))]
    #[case::env_beats_an_approved_project_file(None, Some("side"), ("side", "env"))]
    #[case::an_approved_file_answers_without_pins(None, None, ("work", "project-file"))]
    fn pins_come_first(
        #[case] argument: Option<&str>,
        #[case] env: Option<&str>,
        #[case] expected: (&str, &str),
    ) {
        let got = check(P, &approved_file(), &world(), (argument, env), Mode::Cli);
        assert_eq!((got.0.as_str(), got.1), expected);
    }

    #[rstest]
    #[case::an_approved_file_beats_a_more_specific_root_of_another_workspace(
        "/home/u/code/app/docs/x", &[(P, DirLook::file("work"))], ("work", "project-file")
    )]
    #[case::a_root_beats_the_active_workspace(
        "/home/u/code/app/docs/x", &[], ("notes", "root")
    )]
    #[case::the_most_specific_root_wins("/home/u/code/app/docs", &[], ("notes", "root"))]
    #[case::a_less_specific_root_still_answers("/home/u/code/other", &[], ("work", "root"))]
    #[case::the_active_workspace_answers_last("/srv/x", &[], ("default", "active"))]
    #[case::the_nearest_approved_file_wins(
        "/home/u/code/app/docs/x",
        &[("/home/u/code/app/docs", DirLook::file("notes")), (P, DirLook::file("work"))],
        ("notes", "project-file")
    )]
    #[case::an_invalid_nearer_file_lets_a_valid_farther_one_answer(
        "/home/u/code/app/docs/x",
        &[("/home/u/code/app/docs/x", DirLook::bad_file(ProjectFileError::MissingWorkspace)),
          (P, DirLook::file("work"))],
        ("work", "project-file")
    )]
    #[case::an_unapproved_nearer_file_hides_a_farther_approved_one(
        "/home/u/code/app/x",
        &[("/home/u/code/app/x", DirLook::file("oss")), (P, DirLook::file("work"))],
        ("work", "root")
    )]
    #[case::a_file_outside_any_root_of_its_workspace_is_not_honoured(
        "/home/u/shared/lib",
        &[("/home/u/shared/lib", DirLook::file("work"))],
        ("default", "active")
    )]
    #[case::a_file_in_a_home_is_never_read(
        "/home/u", &[("/home/u", DirLook::file("work"))], ("default", "active")
    )]
    #[case::a_file_above_home_is_never_read(
        "/home/u/code/app", &[("/home", DirLook::file("notes"))], ("work", "root")
    )]
    #[case::a_file_in_the_extra_home_is_never_read(
        "/mnt/c/Users/u/proj",
        &[("/mnt/c/Users/u", DirLook::file("work"))],
        ("default", "active")
    )]
    #[case::a_file_at_the_filesystem_root_is_never_read(
        "/srv/x", &[("/", DirLook::file("work"))], ("default", "active")
    )]
    #[case::tied_roots_fall_through_to_the_active_workspace(
        "/home/u/shared/lib", &[], ("default", "active")
    )]
    fn the_order_of_rules_is_kept(
        #[case] dir: &str,
        #[case] files: &[(&str, DirLook)],
        #[case] expected: (&str, &str),
    ) {
        let reg = world();
        let fs = MemFs::new(files.iter().cloned());
        let got = check(dir, &fs, &reg, (None, None), Mode::Cli);
        assert_eq!((got.0.as_str(), got.1), expected);
    }

    #[rstest]
    #[case::the_cli_uses_the_active_workspace(Mode::Cli, Some("side"), ("default", "active"))]
    #[case::an_agent_uses_the_unassigned_setting(
        Mode::Agent, Some("side"), ("side", "unassigned-setting")
    )]
    #[case::an_agent_without_the_setting_uses_the_active_workspace(
        Mode::Agent, None, ("default", "active")
    )]
    #[case::an_unassigned_setting_naming_a_deleted_workspace_falls_back_to_active(
        Mode::Agent, Some("gone"), ("default", "active")
    )]
    fn the_last_step_depends_on_who_asks(
        #[case] mode: Mode,
        #[case] unassigned: Option<&str>,
        #[case] expected: (&str, &str),
    ) {
        let mut reg = world();
        reg.unassigned = unassigned.map(str::to_owned);
        let got = check("/srv/x", &MemFs::default(), &reg, (None, None), mode);
        assert_eq!((got.0.as_str(), got.1), expected);
    }

    #[test]
    fn a_deleted_unassigned_workspace_leaves_a_note() {
        let mut reg = world();
        reg.unassigned = Some("gone".into());
        let a = resolve(&facts("/srv/x", &MemFs::default(), &reg, Mode::Agent)).unwrap();
        assert_eq!(a.notes.len(), 1);
        assert!(
            a.notes[0].contains("\"gone\", which no longer exists"),
            "{:?}",
            a.notes
        );
    }

    #[test]
    fn a_root_answers_agents_before_the_unassigned_setting() {
        let mut reg = world();
        reg.unassigned = Some("side".into());
        let a = resolve(&facts(
            "/home/u/code/x",
            &MemFs::default(),
            &reg,
            Mode::Agent,
        ))
        .unwrap();
        assert_eq!(a.reason, Reason::Root);
    }

    #[rstest]
    #[case::an_unknown_argument_is_an_error(Some("nope"), None, PinSource::Argument)]
    #[case::an_unknown_env_pin_is_an_error(None, Some("nope"), PinSource::Env)]
    #[case::an_unknown_argument_is_an_error_even_with_a_valid_env_pin(
        Some("nope"),
        Some("work"),
        PinSource::Argument
    )]
    fn a_pin_naming_a_missing_workspace_lists_the_workspaces(
        #[case] argument: Option<&str>,
        #[case] env: Option<&str>,
        #[case] from: PinSource,
    ) {
        let reg = registry(&["default", "b", "a"], "default", &[]);
        let mut f = facts(P, &MemFs::default(), &reg, Mode::Cli);
        f.argument = argument.map(str::to_owned);
        f.env_pin = env.map(str::to_owned);
        let err = resolve(&f).unwrap_err();
        assert_eq!(
            err,
            ResolveError::UnknownWorkspace {
                name: "nope".into(),
                from,
                known: vec!["a".into(), "b".into(), "default".into()],
            }
        );
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!(
                "no workspace nope — workspaces: a, b, default ({from} named it)"
            )),
            "{msg}"
        );
    }

    #[rstest]
    #[case::a_valid_name_may_be_created(
        "nope",
        false,
        "no workspace nope — workspaces: a, b, default (the workspace argument named it); create it with `berth workspace create nope`"
    )]
    #[case::a_path_is_no_name_and_none_is_suggested(
        "../x",
        true,
        "no workspace ../x — workspaces: a, b, default (the workspace argument named it), and it cannot name one: invalid workspace name \"../x\" (it contains '.'): a name is 1 to 40 characters of a-z, 0-9 and '-', and starts with a letter or digit; name one of those workspaces, or create one with a valid name (`berth workspace create NAME`)"
    )]
    #[case::capitals_suggest_the_existing_lower_case_name(
        "A",
        true,
        "no workspace A — workspaces: a, b, default (the workspace argument named it), and it cannot name one: invalid workspace name \"A\" (it contains 'A'): a name is 1 to 40 characters of a-z, 0-9 and '-', and starts with a letter or digit; did you mean a?"
    )]
    #[case::capitals_suggest_creating_the_lower_case_name(
        "Shop",
        true,
        "no workspace Shop — workspaces: a, b, default (the workspace argument named it), and it cannot name one: invalid workspace name \"Shop\" (it contains 'S'): a name is 1 to 40 characters of a-z, 0-9 and '-', and starts with a letter or digit; did you mean shop? create it with `berth workspace create shop`"
    )]
    fn only_a_valid_name_is_suggested_for_creation(
        #[case] pin: &str,
        #[case] invalid: bool,
        #[case] want: &str,
    ) {
        let reg = registry(&["default", "b", "a"], "default", &[]);
        let mut f = facts(P, &MemFs::default(), &reg, Mode::Cli);
        f.argument = Some(pin.to_owned());
        let err = resolve(&f).unwrap_err();
        assert_eq!(err.to_string(), want);
        assert_eq!(err.is_invalid_name(), invalid);
    }

    #[rstest]
    #[case::a_file_naming_an_existing_workspace_without_a_root_is_a_proposal(
        "oss",
        "which this device has not approved"
    )]
    #[case::a_file_naming_a_missing_workspace_is_a_proposal(
        "brand-new",
        "which does not exist on this device"
    )]
    #[cfg(unix)] // written with Unix paths
    fn an_unapproved_file_proposes_and_assigns_nothing(#[case] ws: &str, #[case] why: &str) {
        let reg = world();
        let fs = MemFs::new([("/srv/proj", DirLook::file(ws))]);
        let a = resolve(&facts("/srv/proj/src", &fs, &reg, Mode::Agent)).unwrap();
        assert_eq!(a.reason, Reason::Active);
        assert_eq!(a.proposal.as_deref(), Some(ws));
        assert_eq!(a.project, Some("/srv/proj".into()));
        assert_eq!(
            a.project_file,
            Some("/srv/proj/.berth/workspace.json".into())
        );
        assert_eq!(
            a.notes,
            vec![format!(
                "/srv/proj/.berth/workspace.json proposes workspace \"{ws}\", {why}; \
                 run `berth workspace use {ws}` in /srv/proj to approve it"
            )]
        );
        assert!(needs_asking(&a));
    }

    #[test]
    fn a_proposal_is_reported_even_when_a_pin_answers() {
        let reg = world();
        let fs = MemFs::new([("/srv/proj", DirLook::file("oss"))]);
        let mut f = facts("/srv/proj", &fs, &reg, Mode::Cli);
        f.env_pin = Some("work".into());
        let a = resolve(&f).unwrap();
        assert_eq!(
            (a.reason, a.proposal.as_deref()),
            (Reason::Env, Some("oss"))
        );
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn an_invalid_file_is_noted_and_the_farther_file_is_reported() {
        let reg = world();
        let fs = MemFs::new([
            (
                "/home/u/code/app/x",
                DirLook::bad_file(ProjectFileError::TooLarge),
            ),
            (P, DirLook::file("work")),
        ]);
        let a = resolve(&facts("/home/u/code/app/x/y", &fs, &reg, Mode::Cli)).unwrap();
        assert_eq!(a.reason, Reason::ProjectFile);
        assert_eq!(a.project, Some(P.into()));
        assert_eq!(
            a.project_file,
            Some(format!("{P}/.berth/workspace.json").into())
        );
        assert_eq!(
            a.notes,
            vec!["ignored /home/u/code/app/x/.berth/workspace.json: it is larger than 64 KiB"]
        );
    }

    #[test]
    fn invalid_files_beyond_the_nearest_valid_one_are_not_noted() {
        let reg = world();
        let fs = MemFs::new([
            (P, DirLook::file("work")),
            (
                "/home/u/code",
                DirLook::bad_file(ProjectFileError::MissingWorkspace),
            ),
        ]);
        let a = resolve(&facts(P, &fs, &reg, Mode::Cli)).unwrap();
        assert!(a.notes.is_empty(), "{:?}", a.notes);
    }

    #[test]
    fn tied_roots_leave_a_note_naming_them() {
        let a = resolve(&facts(
            "/home/u/shared/x",
            &MemFs::default(),
            &world(),
            Mode::Cli,
        ))
        .unwrap();
        assert_eq!(a.reason, Reason::Active);
        assert_eq!(a.notes.len(), 1);
        assert!(
            a.notes[0].starts_with("tied roots: oss, side at /home/u/shared"),
            "{:?}",
            a.notes
        );
    }

    #[rstest]
    #[case::a_git_root_is_the_project(&[(P, DirLook::git())], Some(P))]
    #[case::a_valid_file_makes_a_project(&[(P, DirLook::file("work"))], Some(P))]
    #[case::an_unapproved_file_still_makes_a_project(&[(P, DirLook::file("oss"))], Some(P))]
    #[case::the_nearest_of_git_and_file_is_the_project(
        &[("/home/u/code/app/sub", DirLook::git()), (P, DirLook::file("work"))],
        Some("/home/u/code/app/sub")
    )]
    #[case::a_folder_with_only_an_invalid_file_is_no_project(
        &[("/home/u/code/app/sub", DirLook::bad_file(ProjectFileError::MissingWorkspace))],
        None
    )]
    #[case::an_invalid_file_next_to_git_is_still_a_git_project(
        &[(P, DirLook::bad_file(ProjectFileError::MissingWorkspace).with_git())], Some(P)
    )]
    #[case::a_plain_folder_has_no_project(&[], None)]
    #[case::git_in_home_does_not_make_a_project(&[("/home/u", DirLook::git())], None)]
    fn the_project_is_the_nearest_file_or_git_root(
        #[case] files: &[(&str, DirLook)],
        #[case] project: Option<&str>,
    ) {
        let fs = MemFs::new(files.iter().cloned());
        let a = resolve(&facts("/home/u/code/app/sub", &fs, &world(), Mode::Cli)).unwrap();
        assert_eq!(a.project, project.map(PathBuf::from));
    }

    #[test]
    fn starting_at_home_walks_nothing_but_still_answers() {
        let fs = MemFs::new([("/home/u", DirLook::file("work").with_git())]);
        let a = resolve(&facts("/home/u", &fs, &world(), Mode::Agent)).unwrap();
        assert!(!needs_asking(&a));
        assert_eq!(
            (a.reason, a.project, a.project_file),
            (Reason::Active, None, None)
        );
    }

    #[rstest]
    #[case::a_project_on_the_active_workspace_asks(Some("/p"), Reason::Active, None, true)]
    #[case::a_project_on_the_unassigned_setting_asks(
        Some("/p"),
        Reason::UnassignedSetting,
        None,
        true
    )]
    #[case::a_project_with_a_proposal_asks_even_on_a_root(
        Some("/p"),
        Reason::Root,
        Some("x"),
        true
    )]
    #[case::a_project_on_an_approved_file_does_not_ask(
        Some("/p"),
        Reason::ProjectFile,
        None,
        false
    )]
    #[case::a_project_on_a_root_does_not_ask(Some("/p"), Reason::Root, None, false)]
    #[case::no_project_never_asks(None, Reason::Active, None, false)]
    fn sessions_ask_only_about_projects(
        #[case] project: Option<&str>,
        #[case] reason: Reason,
        #[case] proposal: Option<&str>,
        #[case] expected: bool,
    ) {
        let a = Answer {
            workspace: "default".into(),
            reason,
            directory: "/p".into(),
            project: project.map(PathBuf::from),
            project_file: None,
            proposal: proposal.map(str::to_owned),
            notes: vec![],
        };
        assert_eq!(needs_asking(&a), expected);
    }

    #[cfg(unix)] // for the worktree tests, written with Unix paths
    /// A linked worktree at `top` of the repository `/home/u/src/shop`, as the daemon judged it.
    fn worktree_of_shop() -> GitLink {
        GitLink::worktree("/home/u/src/shop/.git/worktrees/feat", "/home/u/src/shop")
    }

    #[cfg(unix)] // for the worktree tests, written with Unix paths
    fn shop_world() -> Registry {
        registry(
            &["default", "shop", "misc", "web"],
            "default",
            &[
                ("shop", "/home/u/src/shop"),
                ("misc", "/home/u/src"),
                ("web", "/home/u/src/shop/web"),
            ],
        )
    }

    #[cfg(unix)] // for the worktree tests, written with Unix paths
    fn in_worktree(dir: &str, files: &[(&str, DirLook)], reg: &Registry) -> Answer {
        let fs = MemFs::new(files.iter().cloned());
        resolve(&facts(dir, &fs, reg, Mode::Agent)).unwrap()
    }

    #[cfg(unix)] // for the worktree tests, written with Unix paths
    const NOTE: &str = "approved through the repository /home/u/src/shop (this folder is one of its git worktrees)";

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::beside_the_repository("/home/u/src/shop-feat")]
    #[case::far_away("/srv/agents/task-7")]
    fn a_worktrees_project_file_is_approved_through_its_repository(#[case] top: &str) {
        let reg = shop_world();
        let look = DirLook::file("shop").with_link(worktree_of_shop());
        let a = in_worktree(&format!("{top}/src"), &[(top, look)], &reg);
        assert_eq!(
            (a.workspace.as_str(), a.reason),
            ("shop", Reason::ProjectFile)
        );
        assert_eq!(a.proposal, None);
        assert_eq!(a.project, Some(top.into()));
        assert_eq!(a.notes, vec![NOTE.to_owned()]);
        assert!(!needs_asking(&a));
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::the_repositorys_own_root("/srv/w", "shop")]
    #[case::a_deeper_root_of_the_repository("/srv/w/web/x", "web")]
    fn a_worktree_without_a_file_resolves_by_the_repositorys_roots(
        #[case] dir: &str,
        #[case] want: &str,
    ) {
        let reg = shop_world();
        let a = in_worktree(
            dir,
            &[("/srv/w", DirLook::git().with_link(worktree_of_shop()))],
            &reg,
        );
        assert_eq!((a.workspace.as_str(), a.reason), (want, Reason::Root));
        assert_eq!(a.notes, vec![NOTE.to_owned()]);
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn the_repositorys_root_beats_a_shallower_root_around_the_worktree() {
        let a = in_worktree(
            "/home/u/src/shop-feat",
            &[(
                "/home/u/src/shop-feat",
                DirLook::git().with_link(worktree_of_shop()),
            )],
            &shop_world(),
        );
        assert_eq!((a.workspace.as_str(), a.reason), ("shop", Reason::Root));
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_root_inside_the_worktree_itself_is_the_most_specific_record() {
        let mut reg = shop_world();
        reg.roots.push(crate::registry::Root {
            workspace: "web".into(),
            path: "/home/u/src/shop-feat".into(),
        });
        let reg = Registry {
            root_index: Default::default(),
            ..reg
        };
        let a = in_worktree(
            "/home/u/src/shop-feat/x",
            &[(
                "/home/u/src/shop-feat",
                DirLook::git().with_link(worktree_of_shop()),
            )],
            &reg,
        );
        assert_eq!((a.workspace.as_str(), a.reason), ("web", Reason::Root));
        assert!(a.notes.is_empty(), "{:?}", a.notes);
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_bare_repository_under_a_root_approves_its_worktrees() {
        let reg = registry(&["default", "shop"], "default", &[("shop", "/srv/repos")]);
        let link = GitLink::worktree("/srv/repos/shop.git/worktrees/a", "/srv/repos/shop.git");
        for top in ["/tmp/a", "/opt/b"] {
            let a = in_worktree(
                top,
                &[(top, DirLook::file("shop").with_link(link.clone()))],
                &reg,
            );
            assert_eq!(
                (a.workspace.as_str(), a.reason),
                ("shop", Reason::ProjectFile)
            );
        }
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_file_naming_a_workspace_the_repository_is_not_approved_for_stays_a_proposal() {
        let a = in_worktree(
            "/srv/w",
            &[(
                "/srv/w",
                DirLook::file("default").with_link(worktree_of_shop()),
            )],
            &shop_world(),
        );
        assert_eq!(a.proposal.as_deref(), Some("default"));
        assert_eq!((a.workspace.as_str(), a.reason), ("shop", Reason::Root));
        assert!(needs_asking(&a));
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_refused_link_is_judged_as_an_ordinary_folder() {
        let link = GitLink::Refused {
            admin: Some("/home/u/src/shop/.git/worktrees/feat".into()),
            why: crate::worktree::LinkRefusal::BackLinkElsewhere(
                "/home/u/src/shop-feat/.git".into(),
            ),
        };
        let a = in_worktree(
            "/srv/forged",
            &[("/srv/forged", DirLook::file("shop").with_link(link))],
            &shop_world(),
        );
        assert_eq!(
            (a.workspace.as_str(), a.reason),
            ("default", Reason::Active)
        );
        assert_eq!(a.proposal.as_deref(), Some("shop"));
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_nested_plain_clone_inside_a_worktree_is_its_own_repository() {
        let a = in_worktree(
            "/srv/w/vendor/lib",
            &[
                ("/srv/w/vendor/lib", DirLook::git()),
                (
                    "/srv/w",
                    DirLook::file("shop").with_link(worktree_of_shop()),
                ),
            ],
            &shop_world(),
        );
        // The file is the worktree's, but the nearest repository is the clone: no standing in R.
        assert_eq!(a.reason, Reason::Active);
        assert_eq!(a.proposal.as_deref(), Some("shop"));
    }

    #[rstest]
    #[case::argument(Reason::Argument, "argument")]
    #[case::env(Reason::Env, "env")]
    #[case::project_file(Reason::ProjectFile, "project-file")]
    #[case::root(Reason::Root, "root")]
    #[case::active(Reason::Active, "active")]
    #[case::unassigned_setting(Reason::UnassignedSetting, "unassigned-setting")]
    fn reasons_have_their_contract_strings(#[case] reason: Reason, #[case] text: &str) {
        assert_eq!(reason.as_str(), text);
        assert_eq!(reason.to_string(), text);
    }
}
