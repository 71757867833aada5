//! The small view of the filesystem a walk needs: for one folder, its project file (if any, and
//! what it says), whether it is a git root, and what its `.git` file amounts to. Plain data shared by the walk, resolution and the
//! daemon's lookup cache; the daemon's `RealFs` reads the disk, `memfs::MemFs` stands in
//! for it in tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::project_file::ProjectFileError;
use crate::worktree::GitLink;

/// One folder of the walk and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkStep {
    pub dir: PathBuf,
    pub look: DirLook,
}

/// What one folder holds, as far as resolution cares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirLook {
    /// `None`: no project file at all. `Some(Err)`: a file that is ignored, and why.
    pub project_file: Option<Result<String, ProjectFileError>>,
    /// A `.git` folder or file (worktrees and submodules use a file) is present.
    pub git: bool,
    /// What a `.git` *file* amounts to, judged against git's records; `None` without one.
    /// Shared: a cached look is cloned on every use, and the verdict holds two paths.
    pub link: Option<Arc<GitLink>>,
}

impl DirLook {
    /// A folder holding a valid project file naming `workspace`.
    pub fn file(workspace: &str) -> Self {
        Self {
            project_file: Some(Ok(workspace.to_owned())),
            git: false,
            link: None,
        }
    }

    /// A folder holding a project file that is ignored for `why`.
    pub fn bad_file(why: ProjectFileError) -> Self {
        Self {
            project_file: Some(Err(why)),
            git: false,
            link: None,
        }
    }

    /// A git root without a project file.
    pub fn git() -> Self {
        Self {
            project_file: None,
            git: true,
            link: None,
        }
    }

    /// The same, marked as a git root too.
    pub fn with_git(self) -> Self {
        Self { git: true, ..self }
    }

    /// The same, with a `.git` file judged `link` (a `.git` file is a git root too).
    pub fn with_link(self, link: GitLink) -> Self {
        Self {
            git: true,
            link: Some(Arc::new(link)),
            ..self
        }
    }
}

/// Looks at one folder. Implementations never fail: a problem is part of the look.
pub trait FsView {
    fn look(&self, dir: &Path) -> DirLook;
}

/// Looks at every folder of a walk, nearest first.
pub fn look_along<F: FsView + ?Sized>(fs: &F, dirs: Vec<PathBuf>) -> Vec<WalkStep> {
    dirs.into_iter()
        .map(|dir| WalkStep {
            look: fs.look(&dir),
            dir,
        })
        .collect()
}
