//! The lookup cache is never stale (ADR 0004): a seeded generator creates, edits, renames and
//! deletes folders, project files (valid and invalid) and `.git` markers under a temp tree, while
//! a second thread keeps resolving random folders through a `Device` built as the daemon builds
//! it. After every burst of changes, once the last change is 20 ms old, every folder of the tree
//! is resolved as the daemon serves a request (from memory when the cache can, else through the
//! disk) and compared with the uncached oracle (the pure core over `RealFs`, from a fresh
//! `canonicalize`). Folders are also swapped for symbolic links, links retargeted and links
//! swapped back for folders, and every link is resolved too, so an answer from memory that
//! still believes a path is canonical shows up. Project files are given second names (hard
//! links) in a folder nothing watches, written through those names, made names of each other
//! across folders, and have names taken away again, so an answer that trusts watches for a file
//! with more than one name shows up too. Linked git worktrees are added, moved, removed and
//! pruned as git does it (a `.git` file, and an admin folder in a repository's
//! `.git/worktrees/` with its back-link and `commondir`), their admin records rewritten, and
//! their `.git` files copied into other folders as forgeries, so an answer that still trusts a
//! worktree whose records changed shows up as well. Two roots are made checkouts of separate
//! git folders (`git init --separate-git-dir`), worktrees are added to those, the folders' `config`
//! turns bare and back, and a checkout's `.git` file is copied into other folders (the other
//! root among them), so an answer that still takes a root for the repository of a separate git
//! folder after its `.git` file, its config or the other roots changed shows up. Zero stale answers are allowed; see below
//! for answers late at 20 ms.
//!
//! `BERTH_STRESS_OPS` sets the number of filesystem changes (default 2,000; the long run is
//! 1,000,000), `BERTH_STRESS_SEED` the seed, and `BERTH_STRESS_LATE_PER_MILLE` how many
//! answers per thousand may still be wrong at 20 ms yet turn right later (unset: counted and
//! printed, not asserted, since it measures the CPU's load as much as the cache). A stale
//! answer (still wrong 10 s after the change, or at quiescence) always fails.
// Tests write files freely (clippy.toml's bans are for product code).
#![allow(clippy::disallowed_methods)]
// Unix only: it swaps Unix symlinks and hard links under the cache on every component.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use berth_core::fsview::{DirLook, FsView, look_along};
use berth_core::project_file::project_file_path;
use berth_core::registry::Home;
use berth_core::resolve::{Answer, Facts, Mode, resolve};
use berth_core::walk::walk_plan;
use berth_core::worktree;
use berthd::Caller;
use berthd::Device;
use berthd::RealFs;
use berthd::Store;
use berthd::{CacheConfig, LookupCache};
use berthd::{EventSink, NotifyWatcher, WatchEvent};

/// When answers are first compared, after the last change of a burst.
const PROPAGATION: Duration = Duration::from_millis(20);
/// How long a wrong answer may take to turn right before it counts as stale.
const SETTLE: Duration = Duration::from_secs(10);

/// splitmix64: small, seeded, and good enough to pick operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// A temp world: a home the walks stop at, a tree beside it, a folder beside both that nothing
/// watches, and a device over a fresh store.
struct World {
    _tmp: tempfile::TempDir,
    tree: PathBuf,
    outside: PathBuf,
    homes: Vec<PathBuf>,
    device: Arc<Device>,
}

impl World {
    fn new(settings: &[(&str, &str)]) -> World {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let home = base.join("home");
        let tree = base.join("tree");
        let data = base.join("data");
        let outside = base.join("outside");
        for d in [&home, &tree, &data, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        let store = Store::open(&data.join("berth.db")).unwrap();
        for name in ["alpha", "beta"] {
            store.create_workspace(name, &Home::Managed).unwrap();
        }
        store.add_root("alpha", &tree).unwrap();
        // Roots that may become checkouts of separate git folders, and where those folders go.
        for (name, checkout) in [("beta", CHECKOUTS[0]), ("alpha", CHECKOUTS[1])] {
            std::fs::create_dir(tree.join(checkout)).unwrap();
            store.add_root(name, &tree.join(checkout)).unwrap();
        }
        std::fs::create_dir(tree.join(GITS)).unwrap();
        for (k, v) in settings {
            store.set_setting(k, v).unwrap();
        }
        // `base` is an ancestor of the home, so every walk stops inside the tree.
        let device = Device::new(
            store,
            data,
            base.join("sock"),
            Some(home.clone()),
            "test".into(),
        )
        .unwrap();
        World {
            _tmp: tmp,
            tree,
            outside,
            homes: vec![home],
            device: Arc::new(device),
        }
    }

    fn caller(&self) -> Caller {
        Caller::new(self.tree.to_str().unwrap(), "", "").unwrap()
    }

    /// `None` when the device and the oracle agree about `dir` (or `dir` is gone), else both.
    /// The mismatch still there after `within`, checked with growing pauses: `None` as soon
    /// as the cached answer agrees with the oracle.
    fn still_wrong_after(&self, dir: &Path, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        let mut pause = Duration::from_millis(5);
        loop {
            let m = self.mismatch(dir)?;
            if Instant::now() >= deadline {
                return Some(m);
            }
            // Paces the poll: the subject is a real wall-clock bound (how late an event may be).
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// `None` when what the daemon serves for `spelling` agrees with the oracle, else both. A
    /// spelling that no longer exists must be refused, not answered from memory.
    fn mismatch(&self, spelling: &Path) -> Option<String> {
        let caller = self.caller();
        let (served, how) = served(&self.device, &caller, spelling);
        let oracle = self.oracle(spelling);
        let agree = match (&served, &oracle) {
            (Ok(a), Some(b)) => a == b,
            (Err(_), None) => true,
            // Gone meanwhile, or made unreadable: only the oracle's own race.
            (Err(_), Some(_)) => self.oracle(spelling).is_none(),
            (Ok(_), None) => false,
        };
        (!agree).then(|| {
            format!(
                "{}:\n  served ({how}) {served:?}\n  oracle {oracle:?}",
                spelling.display()
            )
        })
    }

    /// The uncached answer: a fresh canonical path, and the pure core over the real disk.
    fn oracle(&self, spelling: &Path) -> Option<Answer> {
        let target = std::fs::canonicalize(spelling).ok()?;
        let directory = if target.is_dir() {
            target
        } else {
            target.parent()?.to_path_buf()
        };
        let plan = walk_plan(&directory, &self.homes);
        let registry = self.device.registry();
        let mut walk = look_along(&RealFs, plan.dirs);
        worktree::settle(&RealFs, &registry, &mut walk);
        resolve(&Facts {
            directory,
            argument: None,
            env_pin: None,
            walk,
            stop: plan.stop,
            registry: &registry,
            mode: Mode::Agent,
        })
        .ok()
    }
}

/// Answers [`served`] from memory, in every test of this file: the checks must exercise it.
static FROM_MEMORY: AtomicU64 = AtomicU64::new(0);

/// What the daemon answers for `spelling`, the way the RPC serves it: from memory when it
/// can, else through the disk. Also says which.
fn served(
    device: &Device,
    caller: &Caller,
    spelling: &Path,
) -> (Result<Answer, String>, &'static str) {
    let path = spelling.to_str().unwrap();
    match device.resolve_in_memory(caller, path, None, Mode::Agent) {
        Some(a) => {
            FROM_MEMORY.fetch_add(1, Ordering::Relaxed);
            (a.map_err(|e| e.to_string()), "memory")
        }
        None => (
            device
                .resolve(caller, path, None, Mode::Agent)
                .map_err(|e| e.to_string()),
            "disk",
        ),
    }
}

/// The generator's view of the tree: the plain folders that exist, the symbolic links (each
/// pointing at a folder that existed when it was made), and the second names of project files
/// (hard links, in a folder outside the tree).
struct Generator {
    rng: Rng,
    tree: PathBuf,
    outside: PathBuf,
    dirs: Vec<PathBuf>,
    links: Vec<PathBuf>,
    names: Vec<PathBuf>,
    /// Linked worktrees made: (the worktree's folder, its admin folder), as last placed.
    worktrees: Vec<(PathBuf, PathBuf)>,
    /// Separate git folders made.
    separate: Vec<PathBuf>,
    serial: u64,
}

const NAMES: &[&str] = &["alpha", "beta", "gamma", "default", "Bad Name"];
/// The roots inside the tree that may become checkouts of separate git folders.
const CHECKOUTS: [&str; 2] = ["c1", "c2"];
/// The folder of the tree holding the separate git folders.
const GITS: &str = "gits";

impl Generator {
    fn random_dir(&mut self) -> PathBuf {
        if self.dirs.is_empty() {
            return self.tree.clone();
        }
        self.rng.pick(&self.dirs).clone()
    }

    /// Every path the checks resolve: the tree, its folders and its links.
    fn spellings(&self) -> Vec<PathBuf> {
        let mut all = self.dirs.clone();
        all.extend(self.links.iter().cloned());
        all.push(self.tree.clone());
        all.extend(CHECKOUTS.iter().map(|c| self.tree.join(c)));
        all
    }

    /// A symbolic link at `at` to `target`, made aside and renamed into place (an atomic swap
    /// when something is there already).
    fn link(&mut self, target: &Path, at: &Path) -> bool {
        let name = format!(".link{}", self.fresh_name());
        let tmp = self.tree.join(name);
        std::os::unix::fs::symlink(target, &tmp).is_ok() && std::fs::rename(&tmp, at).is_ok()
    }

    /// Renames `dir` (with its subtree) to a fresh name under another folder; its new path.
    fn move_aside(&mut self, dir: &Path) -> Option<PathBuf> {
        let parent = self.random_dir();
        if dir == self.tree || parent.starts_with(dir) {
            return None;
        }
        let to = parent.join(self.fresh_name());
        std::fs::rename(dir, &to).ok()?;
        for d in &mut self.dirs {
            if let Ok(rest) = d.strip_prefix(dir) {
                *d = to.join(rest);
            }
        }
        Some(to)
    }

    fn fresh_name(&mut self) -> String {
        self.serial += 1;
        format!("d{}", self.serial)
    }

    /// Changes a file in place (the same file, whichever of its names `path` is): one letter
    /// moved on, so the size stays, or a new body.
    fn edit_in_place(&mut self, path: &Path) {
        let Ok(old) = std::fs::read(path) else { return };
        let new = if self.rng.below(2) == 0 {
            let mut new = old;
            if let Some(pos) = new.iter().position(|b| b.is_ascii_lowercase()) {
                new[pos] = if new[pos] == b'z' { b'a' } else { new[pos] + 1 };
            }
            new
        } else {
            self.project_body().into_bytes()
        };
        // std's write truncates and writes the same file: no rename, no new inode.
        let _ = std::fs::write(path, new);
    }

    fn project_body(&mut self) -> String {
        match self.rng.below(6) {
            0 => "{ not json".into(),
            1 => r#"{"other": 1}"#.into(),
            2 => "[]".into(),
            _ => format!(r#"{{"workspace": "{}"}}"#, self.rng.pick(NAMES)),
        }
    }

    /// One change. Failures (a folder that went away meanwhile) are part of the game.
    fn step(&mut self) {
        let dir = self.random_dir();
        let berth = dir.join(".berth");
        let file = berth.join("workspace.json");
        match self.rng.below(30) {
            24..=27 => self.worktree_step(),
            28 | 29 => self.separate_step(),
            0..=2 => {
                if dir.components().count() - self.tree.components().count() < 6 {
                    let new = dir.join(self.fresh_name());
                    if std::fs::create_dir(&new).is_ok() {
                        self.dirs.push(new);
                    }
                }
            }
            3 => {
                if dir != self.tree && self.dirs.len() > 20 {
                    let _ = std::fs::remove_dir_all(&dir);
                    self.dirs.retain(|d| !d.starts_with(&dir));
                }
            }
            4 | 5 => {
                // Rename a folder (with its subtree) under another parent, or over a name a
                // folder just vacated.
                let _ = self.move_aside(&dir);
            }
            6..=8 => {
                let _ = std::fs::create_dir(&berth);
                let _ = std::fs::write(&file, self.project_body());
            }
            9 => {
                // In place, same size: only a watch (or a fine timestamp) can tell.
                if let Ok(old) = std::fs::read(&file) {
                    let mut new = old.clone();
                    if let Some(pos) = new.iter().position(|b| b.is_ascii_lowercase()) {
                        new[pos] = if new[pos] == b'z' { b'a' } else { new[pos] + 1 };
                    }
                    let _ = std::fs::write(&file, new);
                }
            }
            20 => {
                // A second name for the project file, in a folder nothing watches.
                let fresh = format!("{}.json", self.fresh_name());
                let name = self.outside.join(fresh);
                if std::fs::hard_link(&file, &name).is_ok() {
                    self.names.push(name);
                }
            }
            21 => {
                // Written through that other name: no watched folder holds it.
                if !self.names.is_empty() {
                    let name = self.rng.pick(&self.names).clone();
                    self.edit_in_place(&name);
                }
            }
            22 => {
                // The project file becomes a name of another folder's (linked aside, renamed
                // over it), so the two folders share one file.
                let from = project_file_path(&self.random_dir());
                let tmp = berth.join(".workspace.json.link");
                let _ = std::fs::create_dir(&berth);
                if std::fs::hard_link(&from, &tmp).is_ok() && std::fs::rename(&tmp, &file).is_err()
                {
                    let _ = std::fs::remove_file(&tmp);
                }
            }
            23 => {
                // A second name goes: the file may be down to one name again.
                if !self.names.is_empty() {
                    let name = self.names.swap_remove(self.rng.below(self.names.len()));
                    let _ = std::fs::remove_file(name);
                }
            }
            10 => {
                // Atomic replace, as `berth workspace use` writes.
                let tmp = berth.join(".workspace.json.tmp");
                if std::fs::write(&tmp, self.project_body()).is_ok() {
                    let _ = std::fs::rename(&tmp, &file);
                }
            }
            11 => {
                let _ = std::fs::remove_file(&file);
            }
            12 => {
                let _ = std::fs::remove_dir_all(&berth);
            }
            13 => {
                let _ = std::fs::create_dir(dir.join(".git"));
            }
            16 => {
                // A new link to some folder.
                let target = self.random_dir();
                let at = dir.join(self.fresh_name());
                if self.link(&target, &at) {
                    self.links.push(at);
                }
            }
            17 => {
                // A link turned to another folder, swapped atomically.
                if !self.links.is_empty() {
                    let at = self.rng.pick(&self.links).clone();
                    let target = self.random_dir();
                    let _ = self.link(&target, &at);
                }
            }
            18 => {
                // A folder the cache knows by name becomes a link: moved aside, and a link in
                // its place (to itself under its new name, or to another folder).
                if let Some(moved) = self.move_aside(&dir) {
                    let target = if self.rng.below(2) == 0 {
                        moved
                    } else {
                        self.random_dir()
                    };
                    if self.link(&target, &dir) {
                        self.links.push(dir);
                    }
                }
            }
            19 => {
                // A link becomes a folder again.
                if !self.links.is_empty() {
                    let at = self.links.swap_remove(self.rng.below(self.links.len()));
                    if std::fs::remove_file(&at).is_ok() && std::fs::create_dir(&at).is_ok() {
                        self.dirs.push(at);
                    }
                }
            }
            14 => {
                let _ = std::fs::write(dir.join(".git"), "gitdir: elsewhere\n");
            }
            _ => {
                let git = dir.join(".git");
                let _ = std::fs::remove_dir_all(&git).or_else(|_| std::fs::remove_file(&git));
            }
        }
    }
}

impl Generator {
    /// One change to linked worktrees, made as git makes it (git itself would be too slow to
    /// run thousands of times).
    fn worktree_step(&mut self) {
        match self.rng.below(6) {
            0 | 1 => {
                // `git worktree add`: in a repository of the tree (or a separate git folder), to
                // a folder anywhere in it.
                let mut commons: Vec<PathBuf> = self
                    .dirs
                    .iter()
                    .filter(|d| d.join(".git").is_dir())
                    .map(|d| d.join(".git"))
                    .collect();
                // Half the time one of the newest separate git folders, which a root may name.
                let newest = &self.separate[self.separate.len().saturating_sub(2)..];
                if !newest.is_empty() && (commons.is_empty() || self.rng.below(2) == 0) {
                    commons = newest.to_vec();
                }
                if commons.is_empty() {
                    return;
                }
                let common = self.rng.pick(&commons).clone();
                let admin = common.join("worktrees").join(self.fresh_name());
                let at = self.random_dir().join(self.fresh_name());
                if std::fs::create_dir_all(&admin).is_err() || std::fs::create_dir(&at).is_err() {
                    return;
                }
                let _ = std::fs::write(admin.join("commondir"), "../..\n");
                let _ = std::fs::write(
                    admin.join("gitdir"),
                    format!("{}\n", at.join(".git").display()),
                );
                let _ = std::fs::write(at.join(".git"), format!("gitdir: {}\n", admin.display()));
                self.dirs.push(at.clone());
                self.worktrees.push((at, admin));
            }
            2 => {
                // `git worktree move`: the folder renamed, the back-link rewritten.
                let Some(i) = self.some_worktree() else {
                    return;
                };
                let (at, admin) = self.worktrees[i].clone();
                if let Some(to) = self.move_aside(&at) {
                    let _ = std::fs::write(
                        admin.join("gitdir"),
                        format!("{}\n", to.join(".git").display()),
                    );
                    self.worktrees[i].0 = to;
                }
            }
            3 => {
                // `git worktree remove`, or a prune after the folder was deleted (only the admin
                // folder goes; a folder left behind keeps its now dangling `.git`).
                let Some(i) = self.some_worktree() else {
                    return;
                };
                let (at, admin) = self.worktrees.swap_remove(i);
                let _ = std::fs::remove_dir_all(&admin);
                if self.rng.below(2) == 0 && at != self.tree {
                    let _ = std::fs::remove_dir_all(&at);
                    self.dirs.retain(|d| !d.starts_with(&at));
                }
            }
            4 => {
                // The admin records changed: the back-link names another folder (or this one
                // again), or `commondir` another repository (or the right one again).
                let Some(i) = self.some_worktree() else {
                    return;
                };
                let (at, admin) = self.worktrees[i].clone();
                let other = self.random_dir();
                let (file, text) = match self.rng.below(4) {
                    0 => ("gitdir", format!("{}\n", other.join(".git").display())),
                    1 => ("gitdir", format!("{}\n", at.join(".git").display())),
                    2 => ("commondir", format!("{}\n", other.join(".git").display())),
                    _ => ("commondir", "../..\n".to_owned()),
                };
                let tmp = admin.join(format!("{file}.lock"));
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, admin.join(file));
                }
            }
            _ => {
                // A forgery: a worktree's `.git` file copied into another folder.
                let Some(i) = self.some_worktree() else {
                    return;
                };
                let from = self.worktrees[i].0.join(".git");
                let to = self.random_dir().join(".git");
                if !to.is_dir() {
                    let _ = std::fs::copy(from, to);
                }
            }
        }
    }

    /// One change to separate git folders and their checkouts.
    fn separate_step(&mut self) {
        let checkout = self.tree.join(self.rng.pick(&CHECKOUTS));
        match self.rng.below(4) {
            0 => {
                // `git init --separate-git-dir`: the root's `.git` names a new git folder.
                let common = self
                    .tree
                    .join(GITS)
                    .join(format!("{}.git", self.fresh_name()));
                if std::fs::create_dir(&common).is_err() {
                    return;
                }
                let _ = std::fs::write(common.join("config"), "[core]\n\tbare = false\n");
                let _ = std::fs::remove_dir_all(checkout.join(".git"));
                let _ = std::fs::write(
                    checkout.join(".git"),
                    format!("gitdir: {}\n", common.display()),
                );
                self.separate.push(common);
            }
            1 => {
                // The git folder's config turns bare, or back, as git writes it.
                if self.separate.is_empty() {
                    return;
                }
                let common = self.rng.pick(&self.separate).clone();
                let bare = if self.rng.below(2) == 0 {
                    "true"
                } else {
                    "false"
                };
                let tmp = common.join("config.lock");
                if std::fs::write(&tmp, format!("[core]\n\tbare = {bare}\n")).is_ok() {
                    let _ = std::fs::rename(&tmp, common.join("config"));
                }
            }
            2 => {
                // A forgery: a checkout's `.git` file copied into another folder (or root).
                let to = if self.rng.below(2) == 0 {
                    self.tree.join(self.rng.pick(&CHECKOUTS))
                } else {
                    self.random_dir()
                };
                if !to.join(".git").is_dir() {
                    let _ = std::fs::copy(checkout.join(".git"), to.join(".git"));
                }
            }
            _ => {
                // The checkout's `.git` goes.
                let _ = std::fs::remove_file(checkout.join(".git"));
            }
        }
    }

    fn some_worktree(&mut self) -> Option<usize> {
        (!self.worktrees.is_empty()).then(|| self.rng.below(self.worktrees.len()))
    }
}

#[derive(Debug, Default)]
struct Tally {
    changes: u64,
    checks: u64,
    late: u64,
    stale: u64,
    background: u64,
}

/// Runs the generator for `ops` changes in bursts, checking after each burst.
fn stress(world: &World, ops: u64, seed: u64) -> Tally {
    let mut generator = Generator {
        rng: Rng(seed),
        tree: world.tree.clone(),
        outside: world.outside.clone(),
        dirs: Vec::new(),
        links: Vec::new(),
        names: Vec::new(),
        worktrees: Vec::new(),
        separate: Vec::new(),
        serial: 0,
    };
    let shared_dirs: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let background = Arc::new(AtomicU64::new(0));
    let mut tally = Tally::default();
    std::thread::scope(|s| {
        // Resolves racing the changes: they fill the cache while it is being invalidated.
        s.spawn(|| {
            let mut rng = Rng(seed ^ 0xABCD);
            let caller = world.caller();
            while !stop.load(Ordering::Relaxed) {
                let dir = {
                    let dirs = shared_dirs.lock().unwrap();
                    if dirs.is_empty() {
                        world.tree.clone()
                    } else {
                        rng.pick(&dirs).clone()
                    }
                };
                let _ = served(&world.device, &caller, &dir);
                background.fetch_add(1, Ordering::Relaxed);
            }
        });
        let mut rng = Rng(seed ^ 0x1234);
        while tally.changes < ops {
            let burst = 1 + rng.below(64) as u64;
            for _ in 0..burst.min(ops - tally.changes) {
                generator.step();
                tally.changes += 1;
                // Sometimes resolve right after a change, before its event can have arrived.
                if rng.below(4) == 0 {
                    let d = generator.random_dir();
                    let _ = world.mismatch(&d);
                }
            }
            *shared_dirs.lock().unwrap() = generator.spellings();
            let last_change = Instant::now();
            // The subject is a real wall-clock bound: answers are right within PROPAGATION.
            std::thread::sleep(PROPAGATION.saturating_sub(last_change.elapsed()));
            let mut suspects = Vec::new();
            for d in &generator.spellings() {
                tally.checks += 1;
                if world.mismatch(d).is_some() {
                    suspects.push(d.clone());
                }
            }
            if !suspects.is_empty() {
                tally.late += suspects.len() as u64;
                // Still wrong long after the change: a stale answer, the failure that matters.
                // A late answer turns right once its event arrives, however starved the CPU;
                // a stale one never does, so waiting longer costs only the failing case.
                for d in &suspects {
                    if let Some(m) = world.still_wrong_after(d, SETTLE) {
                        tally.stale += 1;
                        eprintln!("STALE after {SETTLE:?}: {m}");
                    }
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    tally.background = background.load(Ordering::Relaxed);
    // Quiescence: everything agrees.
    for d in &generator.spellings() {
        if let Some(m) = world.mismatch(d) {
            tally.stale += 1;
            eprintln!("STALE at quiescence: {m}");
        }
    }
    tally
}

fn run(name: &str, settings: &[(&str, &str)]) {
    let ops = env_u64("BERTH_STRESS_OPS", 2_000);
    let seed = env_u64("BERTH_STRESS_SEED", 0x5EED_4B1D);
    let world = World::new(settings);
    let start = Instant::now();
    let from_memory = FROM_MEMORY.load(Ordering::Relaxed);
    let t = stress(&world, ops, seed);
    eprintln!(
        "{name}: seed {seed:#x}, {} changes, {} checks at {} ms, {} background resolves, {} late, {} stale, in {:.1?} (answers from memory, in all tests so far: {})",
        t.changes,
        t.checks,
        PROPAGATION.as_millis(),
        t.background,
        t.late,
        t.stale,
        start.elapsed(),
        FROM_MEMORY.load(Ordering::Relaxed)
    );
    assert_eq!(t.stale, 0, "stale answers (seed {seed:#x})");
    assert!(
        FROM_MEMORY.load(Ordering::Relaxed) > from_memory,
        "no answer came from memory: the path the daemon serves most requests by was not checked"
    );
    // A late answer is right in the end but not yet at 20 ms: event delivery held up by a
    // starved CPU. How late is a speed figure (docs/benchmarks.md, invalidation latency), so
    // it is asserted only when a run asks for it, on a machine known to be quiet.
    let Some(late_budget) = std::env::var("BERTH_STRESS_LATE_PER_MILLE")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    assert!(
        t.late * 1000 <= t.checks * late_budget,
        "{} of {} answers still wrong {} ms after the change, more than {late_budget} per mille (seed {seed:#x})",
        t.late,
        t.checks,
        PROPAGATION.as_millis()
    );
}

#[test]
fn the_cache_is_never_stale() {
    run("default limits", &[]);
}

/// A tiny watch limit and a tiny cache: most folders are stat-checked or refilled, watches are
/// given back on eviction all the time.
#[test]
fn the_cache_is_never_stale_with_a_tiny_watch_limit() {
    run(
        "tiny limits",
        &[("cache.max_watches", "8"), ("cache.max_entries", "40")],
    );
}

/// A real kernel queue overflow: the event handler is held up while a flood of events arrives,
/// so inotify drops events (among them the project file's change) and reports a Rescan. The
/// cache must drop everything and answer from the disk again.
#[test]
fn a_real_queue_overflow_drops_the_cache_and_answers_stay_correct() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".berth")).unwrap();
    let file = root.join(".berth/workspace.json");
    std::fs::write(&file, r#"{"workspace": "aaaa"}"#).unwrap();
    // Not held yet: the first look's watches go through notify's thread, which the handler
    // would block (other tests write in the watched ancestors of the temp folder). Once the
    // test holds the gate, the handler waits on it until the flood is written.
    let gate = Arc::new(Mutex::new(()));
    let overflow_seen = Arc::new(AtomicBool::new(false));
    let cache = LookupCache::with_parts(CacheConfig::default(), Arc::new(RealFs), {
        let gate = gate.clone();
        let overflow_seen = overflow_seen.clone();
        move |sink| {
            let slow = EventSink::new(move |ev| {
                drop(gate.lock().unwrap_or_else(|p| p.into_inner()));
                if ev == WatchEvent::Overflow {
                    overflow_seen.store(true, Ordering::Relaxed);
                }
                sink.send(ev);
            });
            Box::new(NotifyWatcher::new(slow).unwrap())
        }
    });
    assert_eq!(cache.look(&root), DirLook::file("aaaa"));
    let held = gate.lock().unwrap();
    // More events than max_queued_events (16,384 here) while the handler is held up.
    let queued: u64 = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    for i in 0..queued / 2 + 100 {
        let f = root.join(format!("f{}", i % 64));
        std::fs::write(&f, "x").unwrap();
        std::fs::remove_file(&f).unwrap();
    }
    std::fs::write(&file, r#"{"workspace": "bbbb"}"#).unwrap();
    drop(held);
    let start = Instant::now();
    while cache.look(&root) != DirLook::file("bbbb") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still stale after the overflow"
        );
        // Pacing a poll of the kernel's events draining through notify, which nothing outside
        // the crate can await; the loop cannot end before the cache has caught up.
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        overflow_seen.load(Ordering::Relaxed),
        "the flood did not overflow the queue"
    );
    assert!(cache.stats().overflows >= 1);
}
