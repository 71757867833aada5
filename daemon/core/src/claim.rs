//! Conversation claims (docs/reference.md, "Conversations"): which workspaces may learn a
//! conversation, given the cwds it ran in. Pure: the caller supplies each cwd's approved project
//! file (from the walk) and the registry snapshot.

use std::collections::BTreeSet;
use std::path::Path;

use crate::fsview::WalkStep;
use crate::registry::Registry;
use crate::resolve::{roots_decide_at, summarize_walk};
use crate::worktree::LinkedWorktree;

/// The workspaces claiming `directory`: the one its approved project file names, otherwise every
/// workspace with a root containing it (possibly none). Unlike resolution, roots of several
/// workspaces do not cancel out here: each of them claims the folder.
pub fn claimers(
    directory: &Path,
    approved_file: Option<&str>,
    registry: &Registry,
) -> BTreeSet<String> {
    claimers_in(directory, approved_file, registry, None)
}

/// [`claimers`] for a folder that may lie in a linked worktree: there the roots are asked where
/// the folder stands in the repository, as resolution asks them.
pub fn claimers_in(
    directory: &Path,
    approved_file: Option<&str>,
    registry: &Registry,
    worktree: Option<&LinkedWorktree>,
) -> BTreeSet<String> {
    if let Some(workspace) = approved_file {
        return BTreeSet::from([workspace.to_owned()]);
    }
    let (at, _) = roots_decide_at(registry, directory, worktree);
    registry
        .roots_containing(&at)
        .into_iter()
        .map(|root| root.workspace.clone())
        .collect()
}

/// [`claimers`], with the approved file read off the walk from `directory`.
pub fn claimers_from_walk(
    directory: &Path,
    walk: &[WalkStep],
    registry: &Registry,
) -> BTreeSet<String> {
    let summary = summarize_walk(walk, registry);
    let approved = summary
        .file
        .as_ref()
        .filter(|f| f.is_approved())
        .map(|f| f.workspace.as_str());
    claimers_in(directory, approved, registry, summary.worktree.as_ref())
}

/// Whether `workspace` may learn a conversation: every cwd is claimed by it or by nobody.
/// A conversation with no cwds is claimed by nobody, so every workspace may learn it.
pub fn conversation_allowed(per_cwd_claims: &[BTreeSet<String>], workspace: &str) -> bool {
    per_cwd_claims
        .iter()
        .all(|claims| claims.is_empty() || claims.contains(workspace))
}

/// The workspaces of `all` (in that order) that may learn a conversation.
pub fn conversation_workspaces(per_cwd_claims: &[BTreeSet<String>], all: &[String]) -> Vec<String> {
    all.iter()
        .filter(|w| conversation_allowed(per_cwd_claims, w))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::fsview::DirLook;
    use crate::memfs::MemFs;
    use crate::registry::fixtures::registry;
    use crate::resolve::Mode;
    use crate::resolve::testing::facts;

    fn world() -> Registry {
        registry(
            &["default", "work", "notes", "oss"],
            "default",
            &[
                ("work", "/home/u/code"),
                ("notes", "/home/u/code/docs"),
                ("oss", "/home/u/code/docs"),
            ],
        )
    }

    fn fs() -> MemFs {
        MemFs::new([
            ("/home/u/code/docs/app", DirLook::file("notes")),
            ("/home/u/code/rogue", DirLook::file("default")),
            ("/srv/proj", DirLook::file("work")),
        ])
    }

    fn claims(dir: &str) -> BTreeSet<String> {
        let reg = world();
        let f = facts(dir, &fs(), &reg, Mode::Cli);
        claimers_from_walk(Path::new(dir), &f.walk, &reg)
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[rstest]
    #[case::a_root_claims_the_folders_beneath_it("/home/u/code/x", &["work"])]
    #[case::an_approved_file_beats_the_roots_around_it("/home/u/code/docs/app/src", &["notes"])]
    #[case::every_workspace_with_a_containing_root_claims(
        "/home/u/code/docs/a", &["notes", "oss", "work"]
    )]
    #[case::an_unapproved_file_claims_nothing_and_roots_still_do("/home/u/code/rogue", &["work"])]
    #[case::a_file_outside_its_workspaces_roots_claims_nothing("/srv/proj", &[])]
    #[case::a_folder_outside_every_root_is_unclaimed("/tmp/x", &[])]
    #[case::a_prefix_named_sibling_of_a_root_is_unclaimed("/home/u/code2", &[])]
    fn a_cwd_is_claimed_by_its_file_or_its_roots(#[case] dir: &str, #[case] expected: &[&str]) {
        assert_eq!(claims(dir), set(expected));
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::a_worktree_without_a_file_is_claimed_by_the_repositorys_roots("/srv/wt/x", None, &["notes", "oss", "work"])]
    #[case::a_worktrees_file_approved_through_the_repository("/srv/wt/x", Some("notes"), &["notes"])]
    #[case::a_forged_worktree_is_claimed_as_an_ordinary_folder("/srv/forged", None, &[])]
    fn a_cwd_in_a_worktree_is_claimed_as_the_repositorys_folder(
        #[case] dir: &str,
        #[case] file: Option<&str>,
        #[case] expected: &[&str],
    ) {
        use crate::worktree::{GitLink, LinkRefusal};
        let link = GitLink::worktree("/home/u/code/docs/.git/worktrees/wt", "/home/u/code/docs");
        let look = match file {
            Some(ws) => DirLook::file(ws),
            None => DirLook::default(),
        };
        let fs = MemFs::new([
            ("/srv/wt", look.with_link(link)),
            (
                "/srv/forged",
                DirLook::default()
                    .with_link(GitLink::refused(LinkRefusal::Malformed { file: ".git" })),
            ),
        ]);
        let reg = world();
        let f = facts(dir, &fs, &reg, Mode::Cli);
        assert_eq!(
            claimers_from_walk(Path::new(dir), &f.walk, &reg),
            set(expected)
        );
    }

    #[rstest]
    #[case::one_claimed_cwd_belongs_to_its_claimer(vec![vec!["work"]], &["work"])]
    #[case::unclaimed_cwds_belong_to_everyone(vec![vec![], vec![]], &["default", "notes", "oss", "work"])]
    #[case::an_unclaimed_cwd_does_not_block_a_claimer(vec![vec!["work"], vec![]], &["work"])]
    #[case::mixed_owners_belong_to_nobody(vec![vec!["work"], vec!["notes"]], &[])]
    #[case::shared_roots_allow_each_sharer(vec![vec!["notes", "oss"], vec!["oss"]], &["oss"])]
    #[case::no_cwds_belong_to_everyone(vec![], &["default", "notes", "oss", "work"])]
    fn a_conversation_belongs_where_every_cwd_agrees(
        #[case] per_cwd: Vec<Vec<&str>>,
        #[case] expected: &[&str],
    ) {
        let per_cwd: Vec<_> = per_cwd.iter().map(|c| set(c)).collect();
        let all: Vec<String> = world().names().into_iter().map(str::to_owned).collect();
        assert_eq!(conversation_workspaces(&per_cwd, &all), expected);
        for w in &all {
            assert_eq!(
                conversation_allowed(&per_cwd, w),
                expected.contains(&w.as_str())
            );
        }
    }

    #[test]
    fn claims_from_real_walks_combine() {
        let per_cwd = [
            claims("/home/u/code/x"),
            claims("/tmp/x"),
            claims("/home/u/code/docs"),
        ];
        let all: Vec<String> = world().names().into_iter().map(str::to_owned).collect();
        assert_eq!(conversation_workspaces(&per_cwd, &all), vec!["work"]);
    }
}
