//! A plain-data snapshot of the registry, as resolution reads it: workspaces, the active one, the
//! `workspace.unassigned` setting and the roots. The store builds it; nothing here writes.
//! Root questions go through the methods below. The ones on the resolution path look roots up
//! by the folder's ancestors in an index built on first use, so their cost follows the walk's
//! depth, not the number of roots (100k roots resolve as fast as 10).
//!
//! Invariant the store keeps: every root and `active` name an existing workspace, and
//! `unassigned` may name a deleted one only between a delete and its reset (resolution copes).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::pathutil::{depth, is_within, normalize, normalized};

/// Where a workspace's files live (docs/reference.md, "Workspaces and homes"). The path of a
/// managed home is derived by the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Home {
    Managed,
    Local(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceEntry {
    pub name: String,
    pub home: Home,
}

/// A folder this device approved for a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub workspace: String,
    pub path: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    pub workspaces: BTreeMap<String, WorkspaceEntry>,
    pub active: String,
    pub unassigned: Option<String>,
    pub roots: Vec<Root>,
    /// Built from `roots` on first use: a registry is a snapshot, so build a new one rather
    /// than editing `roots` after asking it anything.
    pub root_index: RootIndex,
}

/// Roots by their (normalised) path, as positions in `roots`.
#[derive(Debug, Default)]
pub struct RootIndex(OnceLock<HashMap<PathBuf, Vec<usize>, foldhash::fast::RandomState>>);

impl Clone for RootIndex {
    /// A clone rebuilds its index from its own roots.
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for RootIndex {
    /// Derived data: registries are equal when their roots are.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RootIndex {}

impl Registry {
    /// Workspace names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.workspaces.keys().map(String::as_str).collect()
    }

    pub fn exists(&self, name: &str) -> bool {
        self.workspaces.contains_key(name)
    }

    /// Roots equal to or above `dir`, in `roots` order: one index lookup per ancestor of `dir`.
    pub fn roots_containing(&self, dir: &Path) -> Vec<&Root> {
        let index = self.root_index.0.get_or_init(|| {
            let mut map: HashMap<PathBuf, Vec<usize>, _> = HashMap::default();
            for (i, root) in self.roots.iter().enumerate() {
                map.entry(normalize(&root.path)).or_default().push(i);
            }
            map
        });
        let mut found: Vec<usize> = normalized(dir)
            .ancestors()
            .filter_map(|a| index.get(a))
            .flatten()
            .copied()
            .collect();
        found.sort_unstable();
        found.into_iter().map(|i| &self.roots[i]).collect()
    }

    /// The depth of the deepest roots containing `dir` and their workspaces, sorted and
    /// distinct. More than one workspace is a tie. `(0, [])` when no root contains `dir` (a root
    /// is never the filesystem root, so depth 0 means none).
    pub fn most_specific_root_workspaces(&self, dir: &Path) -> (usize, Vec<String>) {
        let containing = self.roots_containing(dir);
        let Some(deepest) = containing.iter().map(|r| depth(&r.path)).max() else {
            return (0, Vec::new());
        };
        let workspaces: BTreeSet<&str> = containing
            .iter()
            .filter(|r| depth(&r.path) == deepest)
            .map(|r| r.workspace.as_str())
            .collect();
        (deepest, workspaces.into_iter().map(str::to_owned).collect())
    }

    /// True when a root of `workspace` is `dir` or above it: the approval a project file needs.
    pub fn root_of_workspace_contains(&self, workspace: &str, dir: &Path) -> bool {
        self.deepest_root_of_workspace_containing(workspace, dir)
            .is_some()
    }

    /// The most specific root of `workspace` containing `dir`, for explanations.
    pub fn deepest_root_of_workspace_containing(
        &self,
        workspace: &str,
        dir: &Path,
    ) -> Option<&Root> {
        self.roots_containing(dir)
            .into_iter()
            .filter(|r| r.workspace == workspace)
            .max_by_key(|r| depth(&r.path))
    }

    /// Roots of workspaces other than `except_workspace` that equal, contain or lie inside
    /// `path`: what `root add` refuses without `--allow-overlap`.
    pub fn overlapping_roots(&self, path: &Path, except_workspace: &str) -> Vec<&Root> {
        self.roots
            .iter()
            .filter(|r| r.workspace != except_workspace)
            .filter(|r| is_within(path, &r.path) || is_within(&r.path, path))
            .collect()
    }

    /// The roots of one workspace.
    pub fn roots_of<'a>(&'a self, workspace: &'a str) -> impl Iterator<Item = &'a Root> + 'a {
        self.roots.iter().filter(move |r| r.workspace == workspace)
    }
}

/// Builders for tests.
#[cfg(any(test, feature = "test-support"))]
pub mod fixtures {
    use super::*;

    /// A registry with managed workspaces `names`, `active` active, and `(workspace, path)` roots.
    pub fn registry(names: &[&str], active: &str, roots: &[(&str, &str)]) -> Registry {
        Registry {
            workspaces: names
                .iter()
                .map(|n| {
                    let entry = WorkspaceEntry {
                        name: (*n).to_owned(),
                        home: Home::Managed,
                    };
                    ((*n).to_owned(), entry)
                })
                .collect(),
            active: active.to_owned(),
            unassigned: None,
            roots: roots
                .iter()
                .map(|(w, p)| Root {
                    workspace: (*w).to_owned(),
                    path: PathBuf::from(p),
                })
                .collect(),
            root_index: RootIndex::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::fixtures::registry;
    use super::*;

    fn sample() -> Registry {
        registry(
            &["default", "work", "notes", "oss"],
            "default",
            &[
                ("work", "/home/u/work"),
                ("notes", "/home/u/work/notes"),
                ("oss", "/home/u/work/shared"),
                ("notes", "/home/u/work/shared"),
            ],
        )
    }

    #[test]
    fn names_are_sorted() {
        assert_eq!(sample().names(), vec!["default", "notes", "oss", "work"]);
    }

    #[rstest]
    #[case::no_root_contains_a_folder_elsewhere("/srv/x", 0, &[])]
    #[case::a_single_root_answers("/home/u/work/app", 3, &["work"])]
    #[case::the_root_folder_itself_is_contained("/home/u/work", 3, &["work"])]
    #[case::the_deeper_root_wins("/home/u/work/notes/x", 4, &["notes"])]
    #[case::two_workspaces_at_the_same_depth_tie("/home/u/work/shared/x", 4, &["notes", "oss"])]
    #[case::a_prefix_named_sibling_is_not_contained("/home/u/work/notes2", 3, &["work"])]
    fn the_most_specific_roots_are_found(
        #[case] dir: &str,
        #[case] depth: usize,
        #[case] workspaces: &[&str],
    ) {
        let (d, ws) = sample().most_specific_root_workspaces(Path::new(dir));
        assert_eq!(
            (d, ws),
            (depth, workspaces.iter().map(|s| s.to_string()).collect())
        );
    }

    #[test]
    fn the_same_root_listed_twice_is_no_tie() {
        let reg = registry(&["a"], "a", &[("a", "/p"), ("a", "/p")]);
        assert_eq!(
            reg.most_specific_root_workspaces(Path::new("/p/x")),
            (1, vec!["a".into()])
        );
    }

    #[rstest]
    #[case::a_root_of_the_workspace_above_approves("notes", "/home/u/work/notes/app", true)]
    #[case::a_root_of_another_workspace_does_not("notes", "/home/u/work/app", false)]
    #[case::a_less_specific_root_still_approves("work", "/home/u/work/notes/app", true)]
    fn approval_needs_a_root_of_that_workspace(
        #[case] ws: &str,
        #[case] dir: &str,
        #[case] expected: bool,
    ) {
        assert_eq!(
            sample().root_of_workspace_contains(ws, Path::new(dir)),
            expected
        );
    }

    #[rstest]
    #[case::an_equal_root_overlaps("/home/u/work/notes", "default", &["/home/u/work", "/home/u/work/notes"])]
    #[case::a_containing_root_overlaps("/home/u/work/app", "default", &["/home/u/work"])]
    #[case::a_root_inside_overlaps(
        "/home/u", "default",
        &["/home/u/work", "/home/u/work/notes", "/home/u/work/shared", "/home/u/work/shared"]
    )]
    #[case::own_roots_do_not_count("/home/u/work/app", "work", &[])]
    #[case::a_prefix_named_sibling_does_not_overlap("/home/u/workshop", "default", &[])]
    fn overlaps_go_both_ways(#[case] path: &str, #[case] except: &str, #[case] expected: &[&str]) {
        let reg = sample();
        let found: Vec<_> = reg
            .overlapping_roots(Path::new(path), except)
            .iter()
            .map(|r| r.path.to_str().unwrap())
            .collect();
        assert_eq!(found, expected);
    }
}
