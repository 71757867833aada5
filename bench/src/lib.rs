//! Fixtures for berth's benchmarks: a real directory tree of a given depth, and a registry with
//! a given number of roots, so resolution can be timed cached and uncached in-process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use berth_core::fsview::{FsView, look_along};
use berth_core::registry::{Home, Registry, Root, WorkspaceEntry};
use berth_core::resolve::{Answer, Facts, Mode, resolve};
use berth_core::walk::walk_plan;

/// A temp tree `d1/d2/.../dN` below a fake home's sibling, with a project file half-way down
/// and a `.git` near the top, as a real checkout would have.
pub struct Tree {
    _tmp: tempfile::TempDir,
    /// The deepest folder: where resolutions start.
    pub leaf: PathBuf,
    /// The top of the tree (the approved root).
    pub top: PathBuf,
    /// The homes walks stop at.
    pub homes: Vec<PathBuf>,
}

impl Tree {
    pub fn new(depth: usize) -> Tree {
        Self::build(depth, false)
    }

    /// The same, with the project file a hard link to a file beside the tree: a file with two
    /// names, which the lookup cache checks on every use (docs/decisions/0038-a-hard-linked-project-file-is-checked-on-use.md).
    pub fn with_linked_project_file(depth: usize) -> Tree {
        Self::build(depth, true)
    }

    fn build(depth: usize, linked: bool) -> Tree {
        let tmp = tempfile::tempdir().expect("temp dir");
        let base = tmp.path().canonicalize().expect("canonical temp dir");
        let home = base.join("home");
        std::fs::create_dir(&home).expect("home");
        let top = base.join("tree");
        let mut leaf = top.clone();
        for i in 1..depth {
            leaf.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&leaf).expect("tree");
        std::fs::create_dir(top.join(".git")).expect(".git");
        let mid: PathBuf = leaf.ancestors().nth(depth / 2).expect("mid").to_path_buf();
        std::fs::create_dir(mid.join(".berth")).expect(".berth");
        let file = mid.join(".berth/workspace.json");
        std::fs::write(&file, r#"{"workspace": "w1"}"#).expect("project file");
        if linked {
            std::fs::hard_link(&file, base.join("other-name.json")).expect("a second name");
        }
        Tree {
            _tmp: tmp,
            leaf,
            top,
            homes: vec![home],
        }
    }
}

/// A repository at `tree` (`Tree::new(depth)`'s shape) with a linked worktree beside it of the
/// same shape, made as `git worktree add` makes it: a `.git` file, and an admin folder in the
/// repository's `.git/worktrees/` with its back-link and `commondir`. Resolutions from the two
/// leaves walk the same number of folders and find the same project file, approved by the
/// root at the repository (through it, for the worktree).
pub struct WorktreePair {
    pub repository: Tree,
    /// The worktree's deepest folder.
    pub worktree_leaf: PathBuf,
}

impl WorktreePair {
    pub fn new(depth: usize) -> WorktreePair {
        let repository = Tree::new(depth);
        let base = repository
            .top
            .parent()
            .expect("the tree's folder")
            .to_path_buf();
        let top = base.join("worktree");
        let rel = repository
            .leaf
            .strip_prefix(&repository.top)
            .expect("inside");
        let leaf = top.join(rel);
        std::fs::create_dir_all(&leaf).expect("worktree");
        let mid = leaf.ancestors().nth(depth / 2).expect("mid").to_path_buf();
        std::fs::create_dir(mid.join(".berth")).expect(".berth");
        std::fs::write(mid.join(".berth/workspace.json"), r#"{"workspace": "w1"}"#)
            .expect("project file");
        let admin = repository.top.join(".git/worktrees/worktree");
        std::fs::create_dir_all(&admin).expect("admin folder");
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", top.join(".git").display()),
        )
        .expect("back-link");
        std::fs::write(admin.join("commondir"), "../..\n").expect("commondir");
        std::fs::write(top.join(".git"), format!("gitdir: {}\n", admin.display()))
            .expect(".git file");
        WorktreePair {
            repository,
            worktree_leaf: leaf,
        }
    }
}

/// A registry with `n` roots: one real one (workspace `w1`, at `top`) and `n - 1` elsewhere,
/// spread over 100 workspaces.
pub fn registry(n: usize, top: &Path) -> Registry {
    let workspaces: BTreeMap<String, WorkspaceEntry> = (0..100)
        .map(|i| {
            let name = format!("w{i}");
            let entry = WorkspaceEntry {
                name: name.clone(),
                home: Home::Managed,
            };
            (name, entry)
        })
        .collect();
    let mut roots: Vec<Root> = (1..n)
        .map(|i| Root {
            workspace: format!("w{}", i % 100),
            path: PathBuf::from(format!("/srv/projects/group{}/repo{i}", i % 97)),
        })
        .collect();
    roots.push(Root {
        workspace: "w1".into(),
        path: top.to_path_buf(),
    });
    Registry {
        workspaces,
        active: "w0".into(),
        unassigned: None,
        roots,
        root_index: Default::default(),
    }
}

/// One in-process resolution of `dir`: plan the walk, look along it through `fs`, resolve.
pub fn resolve_once<F: FsView + ?Sized>(
    fs: &F,
    dir: &Path,
    homes: &[PathBuf],
    registry: &Registry,
) -> Answer {
    let plan = walk_plan(dir, homes);
    let walk = look_along(fs, plan.dirs);
    resolve(&Facts {
        directory: dir.to_path_buf(),
        argument: None,
        env_pin: None,
        walk,
        stop: plan.stop,
        registry,
        mode: Mode::Agent,
    })
    .expect("resolves")
}
