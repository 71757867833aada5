//! An in-memory filesystem view for tests: folders not listed hold nothing. Compiled for the
//! core's own tests and, through the `test-support` feature, for other crates' tests; never
//! part of the daemon's build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fsview::{DirLook, FsView};

/// An in-memory filesystem view: folders not listed hold nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemFs {
    dirs: BTreeMap<PathBuf, DirLook>,
}

impl MemFs {
    pub fn new<P: Into<PathBuf>>(entries: impl IntoIterator<Item = (P, DirLook)>) -> Self {
        entries.into_iter().collect()
    }

    /// Sets what `dir` holds, replacing any earlier entry.
    pub fn insert(&mut self, dir: impl Into<PathBuf>, look: DirLook) {
        self.dirs.insert(dir.into(), look);
    }
}

impl<P: Into<PathBuf>> FromIterator<(P, DirLook)> for MemFs {
    fn from_iter<I: IntoIterator<Item = (P, DirLook)>>(iter: I) -> Self {
        Self {
            dirs: iter.into_iter().map(|(p, l)| (p.into(), l)).collect(),
        }
    }
}

impl FsView for MemFs {
    fn look(&self, dir: &Path) -> DirLook {
        self.dirs.get(dir).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsview::look_along;

    #[test]
    fn mem_fs_answers_listed_folders_and_nothing_elsewhere() {
        let fs = MemFs::new([("/p", DirLook::file("a").with_git())]);
        assert_eq!(fs.look(Path::new("/p")), DirLook::file("a").with_git());
        assert_eq!(fs.look(Path::new("/q")), DirLook::default());
    }

    #[test]
    fn look_along_keeps_the_walk_order() {
        let fs = MemFs::new([("/a", DirLook::git())]);
        let steps = look_along(&fs, vec![PathBuf::from("/a/b"), PathBuf::from("/a")]);
        let dirs: Vec<_> = steps.iter().map(|s| (s.dir.clone(), s.look.git)).collect();
        assert_eq!(dirs, vec![("/a/b".into(), false), ("/a".into(), true)]);
    }
}
