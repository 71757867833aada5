//! Qualified paths (docs/reference.md, "Qualified paths and file tools"): one pure function maps a
//! tool's path, the session's own folder and the registry to a place and a relative path, or
//! a refusal. Every path berth returns is qualified, so an agent can quote
//! it back.
//!
//! Forms, in order: `/` lists the workspaces; `./<path>` is in the session's
//! own folder; `<ws>/<path>` whose first segment names a workspace is in
//! that workspace's home (a workspace name wins over a folder of the same
//! name; `./` reaches the folder); an absolute path only inside a home or
//! the session's scratch folder; anything else is unqualified and goes to
//! the session's own folder.
//!
//! An unqualified path whose first segment is neither a workspace nor an
//! entry of the own folder is most likely a mistyped workspace name: the
//! tools that would create or list it refuse it ([`unknown_first_segment`],
//! ADR 0019), so a typo never becomes a new folder.
//!
//! **Architecture Invariant:** no result of [`qualify`] has a `..` or an
//! absolute component in its relative path; containment against symlinks is
//! then the file layer's job (a directory handle, never a path string).

use std::path::{Component, Path, PathBuf};

use berth_vocab::text::{no_workspace, shown};

use crate::pathutil::is_within;
use crate::resolve::{Answer, Reason};

/// Where a session's unqualified paths go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Own {
    /// That workspace's home.
    Home(String),
    /// The session's scratch folder (a session without a project).
    Scratch,
    /// Only a default picked the workspace while several exist: a guess
    /// would put data in the wrong place, so unqualified paths are refused.
    Ambiguous,
}

/// A session's own folder, from its resolution and the number of workspaces.
pub fn own_folder(answer: &Answer, workspace_count: usize) -> Own {
    match answer.reason {
        Reason::Argument | Reason::Env | Reason::ProjectFile | Reason::Root => {
            Own::Home(answer.workspace.clone())
        }
        Reason::Active | Reason::UnassignedSetting => {
            if answer.project.is_none() {
                Own::Scratch
            } else if workspace_count >= 2 {
                Own::Ambiguous
            } else {
                Own::Home(answer.workspace.clone())
            }
        }
    }
}

/// A folder berth may hand to tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A workspace's home.
    Home(String),
    /// The session's scratch folder.
    Scratch,
}

/// What a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/`: the list of workspaces.
    Workspaces,
    /// A path inside a place; `rel` is empty for the place itself.
    In {
        /// The folder.
        place: Place,
        /// Relative, normalised, with no `..`.
        rel: PathBuf,
    },
}

impl Target {
    /// The qualified spelling: `<ws>/<rel>`, `./<rel>`, or `/`.
    pub fn qualified(&self) -> String {
        match self {
            Target::Workspaces => "/".to_string(),
            Target::In { place, rel } => {
                let prefix = match place {
                    Place::Home(ws) => ws.as_str(),
                    Place::Scratch => ".",
                };
                format!("{prefix}/{}", crate::pathutil::slashed(rel))
            }
        }
    }
}

/// The facts a qualification needs.
#[derive(Debug, Clone)]
pub struct QualifyCtx<'a> {
    /// Every workspace name.
    pub names: &'a [String],
    /// Each workspace's home, for absolute paths.
    pub homes: &'a [(String, PathBuf)],
    /// The session's own folder.
    pub own: Own,
    /// The session's scratch folder, when it has one.
    pub scratch: Option<&'a Path>,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QualifyError {
    /// An empty path.
    #[error(
        "empty path; give a path such as notes.md, <workspace>/notes.md, or / to list the workspaces"
    )]
    Empty,
    /// Unqualified in a session whose workspace is only a default.
    #[error(
        "{}; this session's workspace is only a default, so qualify the path as <workspace>/{path}",
        no_workspace(first, names)
    )]
    Ambiguous {
        /// The path's first segment.
        first: String,
        /// The path as given.
        path: String,
        /// The workspaces.
        names: Vec<String>,
    },
    /// `./…` in a session whose workspace is only a default: it has no folder of its own.
    #[error(
        "{given}: this session has no folder of its own (its workspace is only a default and several exist) — workspaces: {}; qualify the path as <workspace>/{path}",
        names.join(", ")
    )]
    NoOwnFolder {
        /// The path as given.
        given: String,
        /// The path below `./`.
        path: String,
        /// The workspaces.
        names: Vec<String>,
    },
    /// An absolute path outside every home and the scratch folder.
    #[error(
        "{0} is outside every workspace home and this session's folder; use <workspace>/<path>"
    )]
    Outside(String),
    /// `..` would leave the folder.
    #[error("{0} leads outside its folder (\"..\" past the top)")]
    Escapes(String),
    /// A NUL byte or similar.
    #[error("{0:?} is not a valid path")]
    Invalid(String),
    /// An unqualified path whose first segment names no workspace and no entry of the own folder.
    #[error(
        "{}; to reach a workspace, qualify the path as <workspace>/{rest}; to create a new top-level folder {} in this session's own folder on purpose, write ./{path}",
        no_workspace(first, names),
        shown(first)
    )]
    UnknownFirstSegment {
        /// The path's first segment.
        first: String,
        /// The path as given.
        path: String,
        /// The path below its first segment.
        rest: String,
        /// The workspaces.
        names: Vec<String>,
    },
}

/// The first segment of `path` when the path is unqualified (no `/`, no
/// `./`, not absolute, and its first segment names no workspace): the
/// segment a mistyped workspace name would be. `None` for every other form.
pub fn unqualified_first_segment<'p>(path: &'p str, names: &[String]) -> Option<&'p str> {
    if path.is_empty()
        || path.trim_end_matches('/').is_empty()
        || path == "."
        || path.starts_with("./")
        || Path::new(path).is_absolute()
    {
        return None;
    }
    let first = path.split('/').next().unwrap_or(path);
    (!names.iter().any(|n| n == first)).then_some(first)
}

/// The refusal for an unqualified path whose first segment `exists` says is
/// not in the own folder: `write` and `move` refuse it only when it would
/// become a new folder (the path goes on below it), `ls` whenever it is
/// missing. `None` when the path may go ahead.
pub fn unknown_first_segment(
    path: &str,
    names: &[String],
    creates_only_folders: bool,
    exists: impl FnOnce(&str) -> bool,
) -> Option<QualifyError> {
    let first = unqualified_first_segment(path, names)?;
    let rest = path[first.len()..].trim_start_matches('/');
    if creates_only_folders && rest.is_empty() {
        return None;
    }
    if exists(first) {
        return None;
    }
    Some(QualifyError::UnknownFirstSegment {
        first: first.to_string(),
        path: path.to_string(),
        rest: rest.to_string(),
        names: names.to_vec(),
    })
}

/// Qualifies `path` for a session.
pub fn qualify(path: &str, ctx: &QualifyCtx<'_>) -> Result<Target, QualifyError> {
    if path.is_empty() {
        return Err(QualifyError::Empty);
    }
    if path.contains('\0') {
        return Err(QualifyError::Invalid(path.to_string()));
    }
    if path.trim_end_matches('/').is_empty() {
        return Ok(Target::Workspaces);
    }
    if let Some(rest) = path.strip_prefix("./").or((path == ".").then_some("")) {
        if ctx.own == Own::Ambiguous {
            return Err(QualifyError::NoOwnFolder {
                given: path.to_string(),
                path: rest.to_string(),
                names: ctx.names.to_vec(),
            });
        }
        return own(rest, path, ctx);
    }
    if Path::new(path).is_absolute() {
        return absolute(path, ctx);
    }
    let (first, rest) = path.split_once('/').unwrap_or((path, ""));
    if ctx.names.iter().any(|n| n == first) {
        return Ok(Target::In {
            place: Place::Home(first.to_string()),
            rel: relative(rest, path)?,
        });
    }
    own(path, path, ctx)
}

fn own(rest: &str, path: &str, ctx: &QualifyCtx<'_>) -> Result<Target, QualifyError> {
    let place = match &ctx.own {
        Own::Home(ws) => Place::Home(ws.clone()),
        Own::Scratch => Place::Scratch,
        Own::Ambiguous => {
            let first = rest.split('/').next().unwrap_or(rest).to_string();
            return Err(QualifyError::Ambiguous {
                first,
                path: rest.to_string(),
                names: ctx.names.to_vec(),
            });
        }
    };
    Ok(Target::In {
        place,
        rel: relative(rest, path)?,
    })
}

fn absolute(path: &str, ctx: &QualifyCtx<'_>) -> Result<Target, QualifyError> {
    let lexical = relative(path.trim_start_matches('/'), path)?;
    let abs = Path::new("/").join(lexical);
    // The most specific folder wins (a local home inside another's).
    let mut best: Option<(usize, Place, PathBuf)> = None;
    let mut consider = |folder: &Path, place: Place| {
        if is_within(&abs, folder) {
            let depth = folder.components().count();
            if best.as_ref().is_none_or(|(d, _, _)| depth > *d) {
                let rel = abs
                    .strip_prefix(folder)
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                best = Some((depth, place, rel));
            }
        }
    };
    for (ws, home) in ctx.homes {
        consider(home, Place::Home(ws.clone()));
    }
    if let Some(scratch) = ctx.scratch {
        consider(scratch, Place::Scratch);
    }
    match best {
        Some((_, place, rel)) => Ok(Target::In { place, rel }),
        None => Err(QualifyError::Outside(path.to_string())),
    }
}

/// Normalises a relative path: drops `.` and empty segments, applies `..`
/// within the path, and refuses `..` past its top.
fn relative(rest: &str, whole: &str) -> Result<PathBuf, QualifyError> {
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in Path::new(rest).components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                if out.pop().is_none() {
                    return Err(QualifyError::Escapes(whole.to_string()));
                }
            }
        }
    }
    Ok(out.iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn names() -> Vec<String> {
        vec!["default".into(), "notes".into(), "work".into()]
    }

    fn homes() -> Vec<(String, PathBuf)> {
        vec![
            ("default".into(), PathBuf::from("/d/workspaces/default")),
            ("notes".into(), PathBuf::from("/d/workspaces/notes")),
            ("work".into(), PathBuf::from("/home/u/work-notes")),
        ]
    }

    fn check(path: &str, own: Own) -> Result<String, QualifyError> {
        let names = names();
        let homes = homes();
        let ctx = QualifyCtx {
            names: &names,
            homes: &homes,
            own,
            scratch: Some(Path::new("/d/scratch/0123456789abcdef")),
        };
        qualify(path, &ctx).map(|t| t.qualified())
    }

    #[rstest]
    #[case::root_lists_workspaces("/", Own::Scratch, "/")]
    #[case::a_workspace_name_selects_its_home("notes/a.md", Own::Scratch, "notes/a.md")]
    #[case::unqualified_goes_to_the_sessions_home("a.md", Own::Home("work".into()), "work/a.md")]
    #[case::unqualified_goes_to_scratch_without_a_project("a.md", Own::Scratch, "./a.md")]
    #[case::dot_slash_reaches_a_folder_named_like_a_workspace("./notes/a.md", Own::Home("work".into()), "work/notes/a.md")]
    #[case::dotdot_inside_the_path_is_applied("notes/x/../a.md", Own::Scratch, "notes/a.md")]
    #[case::an_absolute_path_in_a_home_is_qualified(
        "/home/u/work-notes/b/c.md",
        Own::Scratch,
        "work/b/c.md"
    )]
    #[case::an_absolute_path_in_scratch_is_qualified(
        "/d/scratch/0123456789abcdef/x",
        Own::Ambiguous,
        "./x"
    )]
    #[cfg(unix)] // written with Unix paths
    #[case::a_workspace_alone_is_its_home("notes", Own::Scratch, "notes/")]
    fn paths_qualify(#[case] path: &str, #[case] own: Own, #[case] expect: &str) {
        assert_eq!(check(path, own).unwrap(), expect);
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::dotdot_past_the_top("notes/../../etc/passwd")]
    #[case::dotdot_from_unqualified("../x")]
    #[case::absolute_outside_every_home("/etc/passwd")]
    #[case::absolute_with_dotdot_leaving_a_home("/home/u/work-notes/../../../etc/passwd")]
    #[case::a_prefix_trap("/home/u/work-notes-evil/x")]
    #[case::empty("")]
    #[case::nul("a\0b")]
    fn escapes_are_refused(#[case] path: &str) {
        assert!(check(path, Own::Scratch).is_err(), "{path}");
    }

    #[test]
    fn an_ambiguous_session_refuses_unqualified_paths_naming_the_workspaces() {
        let err = check("plans/a.md", Own::Ambiguous).unwrap_err().to_string();
        assert!(
            err.starts_with("no workspace plans — workspaces: default, notes, work;"),
            "{err}"
        );
        assert!(err.contains("<workspace>/plans/a.md"), "{err}");
        let odd = check("two words/a.md", Own::Ambiguous)
            .unwrap_err()
            .to_string();
        assert!(odd.starts_with("no workspace \"two words\" — "), "{odd}");
    }

    #[rstest]
    #[case::dot_slash("./a.md", "./a.md: ", "<workspace>/a.md")]
    #[case::a_lone_dot(".", ".: ", "<workspace>/")]
    fn an_ambiguous_session_has_no_own_folder_for_dot_slash(
        #[case] path: &str,
        #[case] starts: &str,
        #[case] hint: &str,
    ) {
        let err = check(path, Own::Ambiguous).unwrap_err().to_string();
        assert!(err.starts_with(starts), "{err}");
        assert!(err.contains("has no folder of its own"), "{err}");
        assert!(err.contains("workspaces: default, notes, work"), "{err}");
        assert!(err.contains(hint), "{err}");
        assert!(!err.contains("no workspace"), "{err}");
    }

    #[test]
    fn an_ambiguous_session_still_reaches_qualified_paths() {
        assert_eq!(check("notes/a.md", Own::Ambiguous).unwrap(), "notes/a.md");
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::a_typo_of_a_workspace_is_refused_for_write("notse/a.md", true, false, true)]
    #[case::an_existing_folder_goes_ahead("plans/a.md", true, true, false)]
    #[case::a_new_top_level_file_goes_ahead("a.md", true, false, false)]
    #[case::ls_refuses_a_missing_first_segment("nosuchws", false, false, true)]
    #[case::ls_of_an_existing_entry_goes_ahead("plans", false, true, false)]
    #[case::dot_slash_creates_on_purpose("./notse/a.md", true, false, false)]
    #[case::a_workspace_is_never_unknown("notes/new/a.md", true, false, false)]
    #[case::slash_lists_the_workspaces("/", false, false, false)]
    #[case::an_absolute_path_is_judged_elsewhere("/d/workspaces/notes/x/a.md", true, false, false)]
    fn unknown_first_segments_are_refused(
        #[case] path: &str,
        #[case] creates_only_folders: bool,
        #[case] exists: bool,
        #[case] refused: bool,
    ) {
        let got = unknown_first_segment(path, &names(), creates_only_folders, |_| exists);
        assert_eq!(got.is_some(), refused, "{path}: {got:?}");
    }

    #[test]
    fn the_unknown_segment_refusal_names_the_workspaces_and_the_way_to_create_it() {
        let err = unknown_first_segment("notse/x/a.md", &names(), true, |_| false)
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("no workspace notse — workspaces: default, notes, work;"),
            "{err}"
        );
        assert!(err.contains("<workspace>/x/a.md"), "{err}");
        assert!(err.contains("write ./notse/x/a.md"), "{err}");
    }

    fn answer(reason: Reason, project: bool) -> Answer {
        Answer {
            workspace: "w".into(),
            reason,
            directory: "/p".into(),
            project: project.then(|| PathBuf::from("/p")),
            project_file: None,
            proposal: None,
            notes: vec![],
        }
    }

    #[rstest]
    #[case::root_gives_its_home(Reason::Root, true, 3, Own::Home("w".into()))]
    #[case::argument_without_project_gives_its_home(Reason::Argument, false, 3, Own::Home("w".into()))]
    #[case::no_project_gives_scratch(Reason::Active, false, 3, Own::Scratch)]
    #[case::a_defaulted_project_among_several_is_ambiguous(
        Reason::UnassignedSetting,
        true,
        2,
        Own::Ambiguous
    )]
    #[case::a_defaulted_project_with_one_workspace_uses_it(Reason::Active, true, 1, Own::Home("w".into()))]
    fn the_own_folder_follows_the_reason(
        #[case] reason: Reason,
        #[case] project: bool,
        #[case] count: usize,
        #[case] expect: Own,
    ) {
        assert_eq!(own_folder(&answer(reason, project), count), expect);
    }
}
