//! `resolve --explain`-style accounts of an answer: what each folder of the walk held, where the
//! walk stopped and which rule decided, in words. Pure, built from the same facts as the answer.

use std::path::PathBuf;

use crate::registry::Registry;
use crate::resolve::{
    Answer, Approval, Facts, Mode, Reason, linked_worktree, roots_decide_at, summarize_walk,
};
use crate::walk::Stop;
use crate::worktree::{GitLink, MAX_CHECKOUT_ROOTS, Separate};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainStep {
    pub dir: PathBuf,
    /// Empty when the folder held nothing of interest.
    pub findings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    pub steps: Vec<ExplainStep>,
    pub stopped: String,
    pub decided: String,
}

pub fn explain(facts: &Facts<'_>, answer: &Answer) -> Explanation {
    let registry = facts.registry;
    let nearest = summarize_walk(&facts.walk, registry).file;
    let mut passed_nearest = false;
    let steps = facts
        .walk
        .iter()
        .map(|step| {
            let mut findings = Vec::new();
            match &step.look.project_file {
                None => {}
                Some(Err(why)) => findings.push(format!("project file ignored: {why}")),
                Some(Ok(_)) if passed_nearest => {
                    findings.push("project file not consulted: a nearer one decides".into());
                }
                Some(Ok(workspace)) => {
                    passed_nearest = true;
                    let approval = nearest
                        .as_ref()
                        .map(|f| f.approval.clone())
                        .unwrap_or(Approval::NoRoot);
                    findings.push(file_finding(workspace, &approval));
                }
            }
            match &step.look.link {
                None if step.look.git => {
                    findings.push(".git present: a git repository root".into());
                }
                None => {}
                Some(link) => findings.push(link_finding(link)),
            }
            for root in registry.roots.iter().filter(|r| r.path == step.dir) {
                findings.push(format!("a root of {}", root.workspace));
            }
            if answer.project.as_ref() == Some(&step.dir) {
                findings.push("this is the project".into());
            }
            ExplainStep {
                dir: step.dir.clone(),
                findings,
            }
        })
        .collect();
    Explanation {
        steps,
        stopped: stopped(&facts.stop, facts.walk.is_empty()),
        decided: decided(facts, answer, registry),
    }
}

fn file_finding(workspace: &str, approval: &Approval) -> String {
    match approval {
        Approval::Approved {
            root,
            through: None,
        } => format!(
            "project file: approved for {workspace} (by its root {})",
            root.display()
        ),
        Approval::Approved {
            root,
            through: Some(repository),
        } => format!(
            "project file: approved for {workspace} through the repository {} (by its root {}; this folder is one of its git worktrees)",
            repository.display(),
            root.display()
        ),
        Approval::NoRoot => format!(
            "project file: proposes {workspace}, not approved (no root of {workspace} contains this folder)"
        ),
        Approval::NoSuchWorkspace => format!(
            "project file: proposes {workspace}, not approved (no workspace {workspace} exists)"
        ),
    }
}

/// What a `.git` file amounted to: the admin folder it names, the back-link check, and R.
fn link_finding(link: &GitLink) -> String {
    match link {
        GitLink::Worktree {
            admin,
            repository,
            separate,
            ..
        } => format!(
            ".git file: gitdir {}, whose back-link names this folder: a linked worktree of the repository {}{}",
            admin.display(),
            repository.display(),
            separate.as_ref().map(separate_finding).unwrap_or_default()
        ),
        GitLink::Refused {
            admin: Some(admin),
            why,
        } => format!(
            ".git file: gitdir {}, but not a linked worktree: {why}; judged as an ordinary folder",
            admin.display()
        ),
        GitLink::Refused { admin: None, why } => {
            format!(".git file: not a linked worktree: {why}; judged as an ordinary folder")
        }
    }
}

/// How R was found for a separate git folder, which git does not record.
fn separate_finding(separate: &Separate) -> String {
    const TAKEN: &str = "so the git folder itself stands for the repository";
    match separate {
        Separate::Checkout { common } => format!(
            " (its git folder {} is a separate one; this root's own .git file names it)",
            common.display()
        ),
        Separate::Unfound { roots } if roots.is_empty() => {
            format!(" (a separate git folder, which no root's own .git file names, {TAKEN})")
        }
        Separate::Unfound { roots } => format!(
            " (a separate git folder, which the .git files of several roots name ({}), {TAKEN})",
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Separate::TooManyRoots => format!(
            " (a separate git folder; there are more than {MAX_CHECKOUT_ROOTS} roots to look for its checkout among, {TAKEN})"
        ),
        Separate::Unsettled => format!(" (a separate git folder, {TAKEN})"),
    }
}

fn stopped(stop: &Stop, nothing_walked: bool) -> String {
    let why = match stop {
        Stop::FilesystemRoot(_) => "the filesystem root".to_owned(),
        Stop::Home(_) => "a home directory".to_owned(),
        Stop::AncestorOfHome { home, .. } => {
            format!("it contains the home directory {}", home.display())
        }
    };
    if nothing_walked {
        format!(
            "walked nothing: {} is {why}, where no project file is read",
            stop.dir().display()
        )
    } else {
        format!("stopped before {}: {why}", stop.dir().display())
    }
}

fn decided(facts: &Facts<'_>, answer: &Answer, registry: &Registry) -> String {
    let ws = &answer.workspace;
    let dir = answer.directory.display();
    match answer.reason {
        Reason::Argument => format!("rule 1: the workspace argument names {ws}"),
        Reason::Env => format!("rule 2: BERTH_WORKSPACE names {ws}"),
        Reason::ProjectFile => {
            let file = answer
                .project_file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let through =
                summarize_walk(&facts.walk, registry)
                    .file
                    .and_then(|f| match f.approval {
                        Approval::Approved {
                            through: Some(repository),
                            ..
                        } => Some(repository),
                        _ => None,
                    });
            match through {
                Some(repository) => format!(
                    "rule 3: the project file {file} names {ws}, and this device approved it through the repository {} (this folder is one of its git worktrees)",
                    repository.display()
                ),
                None => format!(
                    "rule 3: the project file {file} names {ws}, and this device approved it"
                ),
            }
        }
        Reason::Root => {
            let worktree = linked_worktree(&facts.walk);
            let (at, through) = roots_decide_at(registry, &answer.directory, worktree.as_ref());
            let root = registry
                .deepest_root_of_workspace_containing(ws, &at)
                .map(|r| r.path.display().to_string())
                .unwrap_or_default();
            match worktree.filter(|_| through) {
                Some(wt) => format!(
                    "rule 4: {dir} is in a linked worktree of the repository {}, where it stands at {}; the most specific root containing that is {root}, a root of {ws}",
                    wt.repository.display(),
                    at.display()
                ),
                None => format!(
                    "rule 4: the most specific root containing {dir} is {root}, a root of {ws}"
                ),
            }
        }
        Reason::UnassignedSetting => format!(
            "rule 5b: nothing above applies, so this agent session uses the workspace.unassigned setting, {ws}"
        ),
        Reason::Active if facts.mode == Mode::Agent => format!(
            "rule 5b: nothing above applies and workspace.unassigned names no workspace, so this agent session uses the active workspace, {ws}"
        ),
        Reason::Active => {
            format!("rule 5a: nothing above applies, so the active workspace, {ws}")
        }
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::fsview::DirLook;
    use crate::memfs::MemFs;
    use crate::project_file::ProjectFileError;
    use crate::registry::fixtures::registry;
    use crate::resolve::resolve;
    use crate::resolve::testing::facts;
    #[cfg(unix)] // used by the tests written with Unix paths
    use crate::worktree::GitLink;

    fn world() -> Registry {
        registry(
            &["default", "work", "oss"],
            "default",
            &[("work", "/home/u/code"), ("oss", "/home/u/code/lib")],
        )
    }

    fn fs() -> MemFs {
        MemFs::new([
            (
                "/home/u/code/app/sub",
                DirLook::bad_file(ProjectFileError::MissingWorkspace),
            ),
            ("/home/u/code/app", DirLook::file("work").with_git()),
            ("/home/u/code", DirLook::file("oss")),
            ("/srv/p", DirLook::file("nope")),
        ])
    }

    fn run(dir: &str, mode: Mode) -> Explanation {
        let reg = world();
        let fs = fs();
        let f = facts(dir, &fs, &reg, mode);
        let answer = resolve(&f).unwrap();
        explain(&f, &answer)
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn each_folder_says_what_it_held() {
        let e = run("/home/u/code/app/sub", Mode::Cli);
        let steps: Vec<_> = e
            .steps
            .iter()
            .map(|s| (s.dir.to_str().unwrap(), s.findings.clone()))
            .collect();
        assert_eq!(
            steps,
            vec![
                (
                    "/home/u/code/app/sub",
                    vec!["project file ignored: it has no \"workspace\" key".to_owned()]
                ),
                (
                    "/home/u/code/app",
                    vec![
                        "project file: approved for work (by its root /home/u/code)".to_owned(),
                        ".git present: a git repository root".to_owned(),
                        "this is the project".to_owned(),
                    ]
                ),
                (
                    "/home/u/code",
                    vec![
                        "project file not consulted: a nearer one decides".to_owned(),
                        "a root of work".to_owned(),
                    ]
                ),
            ]
        );
        assert_eq!(e.stopped, "stopped before /home/u: a home directory");
        assert_eq!(
            e.decided,
            "rule 3: the project file /home/u/code/app/.berth/workspace.json names work, and this device approved it"
        );
    }

    #[rstest]
    #[case::an_unapproved_file_is_shown_as_a_proposal(
        "/home/u/code/lib/x",
        "project file: proposes oss, not approved (no root of oss contains this folder)"
    )]
    #[case::a_file_naming_a_missing_workspace_says_so(
        "/srv/p",
        "project file: proposes nope, not approved (no workspace nope exists)"
    )]
    fn the_deciding_file_gets_a_verdict(#[case] dir: &str, #[case] finding: &str) {
        let e = run(dir, Mode::Cli);
        assert!(
            e.steps
                .iter()
                .any(|s| s.findings.iter().any(|f| f == finding)),
            "{e:#?}"
        );
    }

    #[rstest]
    #[case::a_root_decision_names_the_root(
        "/home/u/code/lib/x",
        Mode::Cli,
        "rule 4: the most specific root containing /home/u/code/lib/x is /home/u/code/lib, a root of oss"
    )]
    #[case::the_cli_fallback_names_the_active_workspace(
        "/srv/q",
        Mode::Cli,
        "rule 5a: nothing above applies, so the active workspace, default"
    )]
    #[case::the_agent_fallback_names_rule_5b(
        "/srv/q",
        Mode::Agent,
        "rule 5b: nothing above applies and workspace.unassigned names no workspace, so this agent session uses the active workspace, default"
    )]
    fn the_decision_names_its_rule(#[case] dir: &str, #[case] mode: Mode, #[case] decided: &str) {
        assert_eq!(run(dir, mode).decided, decided);
    }

    #[rstest]
    #[cfg(unix)] // written with Unix paths
    #[case::outside_home_the_walk_stops_before_the_root(
        "/srv/q",
        "stopped before /: the filesystem root"
    )]
    #[case::beside_home_the_walk_stops_before_its_ancestor(
        "/home/v/x",
        "stopped before /home: it contains the home directory /home/u"
    )]
    #[case::at_home_nothing_is_walked(
        "/home/u",
        "walked nothing: /home/u is a home directory, where no project file is read"
    )]
    fn the_stop_is_told_in_words(#[case] dir: &str, #[case] stopped: &str) {
        assert_eq!(run(dir, Mode::Cli).stopped, stopped);
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_worktree_shows_its_git_file_the_back_link_and_the_repository() {
        let reg = world();
        let link = GitLink::worktree("/home/u/code/app/.git/worktrees/t", "/home/u/code/app");
        let fs = MemFs::new([("/srv/t", DirLook::git().with_link(link))]);
        let f = facts("/srv/t/x", &fs, &reg, Mode::Cli);
        let e = explain(&f, &resolve(&f).unwrap());
        assert_eq!(
            e.steps[1].findings[0],
            ".git file: gitdir /home/u/code/app/.git/worktrees/t, whose back-link names this folder: a linked worktree of the repository /home/u/code/app"
        );
        assert_eq!(
            e.decided,
            "rule 4: /srv/t/x is in a linked worktree of the repository /home/u/code/app, where it stands at /home/u/code/app/x; the most specific root containing that is /home/u/code, a root of work"
        );
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_refused_link_says_why() {
        let reg = world();
        let link = GitLink::Refused {
            admin: Some("/home/u/code/app/.git/worktrees/t".into()),
            why: crate::worktree::LinkRefusal::BackLinkElsewhere("/srv/t/.git".into()),
        };
        let fs = MemFs::new([("/srv/forged", DirLook::file("work").with_link(link))]);
        let f = facts("/srv/forged", &fs, &reg, Mode::Cli);
        let e = explain(&f, &resolve(&f).unwrap());
        assert!(
            e.steps[0].findings.contains(
                &".git file: gitdir /home/u/code/app/.git/worktrees/t, but not a linked worktree: git's back-link names /srv/t/.git, not this folder's .git; judged as an ordinary folder".to_owned()
            ),
            "{e:#?}"
        );
        assert_eq!(
            e.decided,
            "rule 5a: nothing above applies, so the active workspace, default"
        );
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_file_approved_through_the_repository_says_so() {
        let reg = world();
        let link = GitLink::worktree("/home/u/code/app/.git/worktrees/t", "/home/u/code/app");
        let fs = MemFs::new([("/srv/t", DirLook::file("work").with_link(link))]);
        let f = facts("/srv/t", &fs, &reg, Mode::Cli);
        let e = explain(&f, &resolve(&f).unwrap());
        assert_eq!(
            e.decided,
            "rule 3: the project file /srv/t/.berth/workspace.json names work, and this device approved it through the repository /home/u/code/app (this folder is one of its git worktrees)"
        );
        assert!(e.steps[0].findings[0].starts_with(
            "project file: approved for work through the repository /home/u/code/app (by its root /home/u/code;"
        ), "{e:#?}");
    }

    #[test]
    fn pins_are_explained_as_rules_one_and_two() {
        let reg = world();
        let fs = fs();
        let mut f = facts("/srv/q", &fs, &reg, Mode::Cli);
        f.env_pin = Some("oss".into());
        let a = resolve(&f).unwrap();
        assert_eq!(explain(&f, &a).decided, "rule 2: BERTH_WORKSPACE names oss");
        f.argument = Some("work".into());
        let a = resolve(&f).unwrap();
        assert_eq!(
            explain(&f, &a).decided,
            "rule 1: the workspace argument names work"
        );
    }
}
