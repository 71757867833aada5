//! The walk plan (docs/reference.md, "Roots, the walk and project files"): which folders a lookup
//! from a directory visits, nearest first, and where and why it stops. A pure function of (start,
//! homes); the caller binds `$HOME` and `BERTH_EXTRA_HOME` in. Inputs are absolute, already
//! canonical paths.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::pathutil::{is_strict_ancestor_normal, normalized};

/// Where a walk stopped, and why. The walk stops *before* this folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    FilesystemRoot(PathBuf),
    Home(PathBuf),
    AncestorOfHome { dir: PathBuf, home: PathBuf },
}

impl Stop {
    /// The folder the walk did not enter.
    pub fn dir(&self) -> &Path {
        match self {
            Self::FilesystemRoot(dir) | Self::Home(dir) | Self::AncestorOfHome { dir, .. } => dir,
        }
    }
}

impl fmt::Display for Stop {
    /// Why this folder ends a walk, e.g. "/home/u: a home directory".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FilesystemRoot(dir) => write!(f, "{}: the filesystem root", dir.display()),
            Self::Home(dir) => write!(f, "{}: a home directory", dir.display()),
            Self::AncestorOfHome { dir, home } => write!(
                f,
                "{}: it contains the home directory {}",
                dir.display(),
                home.display()
            ),
        }
    }
}

/// The folders to look in, nearest first, and where the walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkPlan {
    pub dirs: Vec<PathBuf>,
    pub stop: Stop,
}

/// Whether `dir` ends a walk: the filesystem root, a home, or an ancestor of a home. A project
/// file in any of those would assign every folder beneath it, so none is ever looked at.
pub fn guard(dir: &Path, homes: &[PathBuf]) -> Option<Stop> {
    guard_normal(&normalized(dir), homes, &normalize_all(homes))
}

fn normalize_all(homes: &[PathBuf]) -> Vec<Cow<'_, Path>> {
    homes.iter().map(|home| normalized(home)).collect()
}

/// [`guard`] for a `dir` in normal form, with `normal_homes[i]` the normal form of `homes[i]`.
fn guard_normal(dir: &Path, homes: &[PathBuf], normal_homes: &[Cow<'_, Path>]) -> Option<Stop> {
    if dir.parent().is_none() {
        return Some(Stop::FilesystemRoot(dir.to_path_buf()));
    }
    // Being a home is checked across all homes first: a home that is also an ancestor of another
    // (an odd setup) reads better as "a home".
    // Both in normal form: the same folder is the same bytes.
    if normal_homes
        .iter()
        .any(|home| home.as_os_str() == dir.as_os_str())
    {
        return Some(Stop::Home(dir.to_path_buf()));
    }
    homes
        .iter()
        .zip(normal_homes)
        .find(|(_, normal)| is_strict_ancestor_normal(dir, normal))
        .map(|(home, _)| Stop::AncestorOfHome {
            dir: dir.to_path_buf(),
            home: home.clone(),
        })
}

/// The walk from `start`: `start` and its ancestors, nearest first, up to but excluding the first
/// folder [`guard`] stops at. When `start` itself is such a folder, `dirs` is empty.
pub fn walk_plan(start: &Path, homes: &[PathBuf]) -> WalkPlan {
    let normal_homes = normalize_all(homes);
    let start = normalized(start);
    // The parent of a path in normal form is in normal form, so each step borrows from `start`.
    let mut dirs = Vec::new();
    let mut dir: &Path = &start;
    loop {
        if let Some(stop) = guard_normal(dir, homes, &normal_homes) {
            return WalkPlan { dirs, stop };
        }
        dirs.push(dir.to_path_buf());
        // guard_normal() stops at any folder without a parent, so there is always one here.
        dir = dir.parent().unwrap_or(Path::new("/"));
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    #[test]
    fn a_walk_stops_before_a_drive_root_a_share_root_and_the_home() {
        let plan = walk_plan(Path::new(r"C:\src\shop"), &[]);
        assert_eq!(
            plan.dirs,
            [PathBuf::from(r"C:\src\shop"), PathBuf::from(r"C:\src")]
        );
        assert_eq!(plan.stop, Stop::FilesystemRoot(PathBuf::from(r"C:\")));
        let home = PathBuf::from(r"C:\Users\u");
        let plan = walk_plan(
            Path::new(r"C:\Users\u\src\shop"),
            std::slice::from_ref(&home),
        );
        assert_eq!(plan.dirs.len(), 2);
        assert_eq!(plan.stop, Stop::Home(home.clone()));
        // The home's ancestors are never looked at either.
        let plan = walk_plan(Path::new(r"C:\Users"), &[home]);
        assert!(plan.dirs.is_empty(), "{plan:?}");
        let wsl = walk_plan(Path::new(r"\\wsl.localhost\Ubuntu\home\u\p"), &[]);
        assert_eq!(wsl.stop.dir(), Path::new(r"\\wsl.localhost\Ubuntu\"));
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    fn home(dir: &str) -> Stop {
        Stop::Home(dir.into())
    }

    fn ancestor(dir: &str, home: &str) -> Stop {
        Stop::AncestorOfHome {
            dir: dir.into(),
            home: home.into(),
        }
    }

    #[rstest]
    #[case::a_project_in_home_stops_before_home(
        "/home/u/code/app/src", &["/home/u"],
        &["/home/u/code/app/src", "/home/u/code/app", "/home/u/code"], home("/home/u")
    )]
    #[case::a_folder_outside_home_stops_before_the_filesystem_root(
        "/srv/data/app", &["/home/u"],
        &["/srv/data/app", "/srv/data", "/srv"], Stop::FilesystemRoot("/".into())
    )]
    #[case::a_sibling_of_home_stops_before_the_ancestor_of_home(
        "/home/other/app", &["/home/u"],
        &["/home/other/app", "/home/other"], ancestor("/home", "/home/u")
    )]
    #[case::a_prefix_named_sibling_of_home_is_not_inside_home(
        "/home/u2/app", &["/home/u"],
        &["/home/u2/app", "/home/u2"], ancestor("/home", "/home/u")
    )]
    #[case::the_extra_home_stops_a_walk_too(
        "/mnt/c/Users/u/proj", &["/home/u", "/mnt/c/Users/u"],
        &["/mnt/c/Users/u/proj"], home("/mnt/c/Users/u")
    )]
    #[case::the_ancestor_of_the_extra_home_stops_a_walk(
        "/mnt/c/Windows/x", &["/home/u", "/mnt/c/Users/u"],
        &["/mnt/c/Windows/x", "/mnt/c/Windows"], ancestor("/mnt/c", "/mnt/c/Users/u")
    )]
    #[case::without_homes_only_the_filesystem_root_stops(
        "/a/b", &[], &["/a/b", "/a"], Stop::FilesystemRoot("/".into())
    )]
    fn the_walk_visits_ancestors_nearest_first_and_stops_before_a_boundary(
        #[case] start: &str,
        #[case] homes: &[&str],
        #[case] dirs: &[&str],
        #[case] stop: Stop,
    ) {
        let plan = walk_plan(Path::new(start), &paths(homes));
        assert_eq!(
            plan,
            WalkPlan {
                dirs: paths(dirs),
                stop
            }
        );
    }

    #[rstest]
    #[case::starting_at_home_visits_nothing("/home/u", home("/home/u"))]
    #[case::starting_at_the_extra_home_visits_nothing("/mnt/c/Users/u", home("/mnt/c/Users/u"))]
    #[case::starting_at_an_ancestor_of_home_visits_nothing("/home", ancestor("/home", "/home/u"))]
    #[case::starting_at_the_filesystem_root_visits_nothing("/", Stop::FilesystemRoot("/".into()))]
    fn a_start_that_is_a_boundary_is_skipped(#[case] start: &str, #[case] stop: Stop) {
        let plan = walk_plan(Path::new(start), &paths(&["/home/u", "/mnt/c/Users/u"]));
        assert_eq!(plan, WalkPlan { dirs: vec![], stop });
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::a_plain_folder_is_no_boundary("/home/u/code", None)]
    #[case::home_with_a_trailing_slash_is_still_home("/home/u/", Some(home("/home/u")))]
    #[case::the_filesystem_root_is_a_boundary("/", Some(Stop::FilesystemRoot("/".into())))]
    fn guard_recognises_boundaries(#[case] dir: &str, #[case] expected: Option<Stop>) {
        assert_eq!(guard(Path::new(dir), &paths(&["/home/u"])), expected);
    }

    #[test]
    fn a_stop_says_why_in_words() {
        assert_eq!(home("/home/u").to_string(), "/home/u: a home directory");
        assert_eq!(
            ancestor("/home", "/home/u").to_string(),
            "/home: it contains the home directory /home/u"
        );
    }
}
