//! The lookup cache (docs/reference.md, "The daemon"): for each directory a walk visits, what
//! [`RealFs`] saw there (the project file's parsed result and whether `.git` exists), shared by
//! every request and kept correct by filesystem watches.
//!
//! How an entry stays true:
//! - **Watched**: before the disk is read, the folder, each of its ancestors and its `.berth/`
//!   folder are watched (non-recursive). Any later change that could alter the entry produces an
//!   event, and the worker thread drops the entry. A change before the watch is seen by the read.
//!   On Linux the project file is watched by itself too: inotify watches a file, not a name, so
//!   a write or a new hard link made through a folder nobody watches is still an event.
//! - **Linked**: a project file with more than one name (a hard link) is watched as above but
//!   also stat-checked on every use (device, inode, links, size, mtime, ctime), so it is never
//!   answered from watches alone (docs/decisions/0038-a-hard-linked-project-file-is-checked-on-use.md).
//! - **Stat-checked**: when no watch can be had (the configured limit, the kernel's limit, or a
//!   network filesystem that delivers no events), the entry keeps a fingerprint of the folder,
//!   `.berth/` and the project file (device, inode, size, mtime, ctime) and is re-checked on
//!   every use. An entry whose fingerprint (or a linked file's stamp) is younger than
//!   [`CacheConfig::trust_after`] is not kept at all: timestamps are coarse and two writes
//!   within one tick look alike.
//! - **Never cached**: a `.berth` or project file that is a symlink (its target can change
//!   without any event here), and relative paths.
//!
//! A fill races with invalidation through a token: the fill puts a pending slot in first, and
//! stores its result only if that very slot is still there, so an invalidation that lands while
//! the disk is read wins. An overflow (a lost event) drops every entry and every watch.
//!
//! **Architecture Invariant:** a path is watched only while all its ancestors are (renaming an
//! ancestor is then always seen), and a watch is forgotten before the entries it guards are
//! dropped, so a fill can never store an entry behind a watch that is no longer there. On Linux
//! the kernel keeps one watch per file, so paths watching one file (two names of a project file,
//! a folder and a path through a link to it) are forgotten together.

pub(crate) mod filekind;
pub(crate) mod gitlink;
pub(crate) mod realfs;
pub(crate) mod watch;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak, mpsc};
use std::time::{Duration, SystemTime};

use berth_core::fsview::{DirLook, FsView, WalkStep};
use berth_core::worktree::{self, GitLink};

use crate::cache::realfs::RealFs;
use crate::cache::watch::{
    ChangeKind, DirWatcher, EventSink, NoWatcher, NotifyWatcher, WatchError,
};
use crate::cache::watch::{WatchEvent, WatchEvent::Change};
use berth_core::project_file::{PROJECT_DIR, project_file_path};
use berth_vocab::settings::Setting;

/// How the cache is bounded. Read from settings at daemon start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    /// The most directories kept (least recently used go first). 0 turns the cache off.
    pub max_entries: usize,
    /// The most watches held (folders and `.berth/` folders). 0: every entry is stat-checked.
    pub max_watches: usize,
    /// How old a stat-checked entry's timestamps must be before it is trusted.
    pub trust_after: Duration,
}

impl Default for CacheConfig {
    /// The settings' defaults.
    fn default() -> Self {
        Self::from_settings(|_| None)
    }
}

impl CacheConfig {
    /// The configuration from settings (`get` returns a setting's value); unset or unreadable
    /// values keep their default.
    pub fn from_settings(get: impl Fn(Setting) -> Option<String>) -> Self {
        let num = |s: Setting| usize::try_from(s.number(get(s).as_deref())).unwrap_or(usize::MAX);
        Self {
            max_entries: num(Setting::CacheMaxEntries),
            max_watches: num(Setting::CacheMaxWatches),
            trust_after: Duration::from_secs(2),
        }
    }
}

/// What `berth daemon status` shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: usize,
    pub watches: usize,
    pub hits: u64,
    pub misses: u64,
    pub invalidations: u64,
    pub overflows: u64,
}

/// Why a stored entry is still true.
#[derive(Debug, Clone)]
enum Check {
    /// The watches alone: no I/O on use.
    Watched,
    /// Watched, but the project file has more than one name: a write through a name in a folder
    /// nobody watches is no event on this one, so the file's stamp is compared on every use.
    Linked(Box<Stamp>),
    Stat(Box<Fingerprint>),
}

impl Check {
    /// Whether the entry is true without a look at the disk: only such entries may answer from
    /// memory (ADR 0025, ADR 0034).
    fn watches_suffice(&self) -> bool {
        matches!(self, Check::Watched)
    }
}

#[derive(Debug)]
enum SlotState {
    /// A fill is reading the disk; it stores its result only if this token is still here.
    Pending(u64),
    Ready {
        look: DirLook,
        check: Check,
        /// Watched, and the folder's path was its canonical spelling once every watch on it and
        /// its ancestors was in place: until an event says otherwise, the path still names this
        /// very folder, with no link on the way, and no I/O is needed to know it.
        canonical: bool,
    },
}

#[derive(Debug)]
struct Slot {
    state: SlotState,
    /// The clock when last used: an approximate LRU that reads update without a write lock.
    used: AtomicU64,
    /// The linked worktree's admin folder this look's `.git` verdict rests on, watched like the
    /// folder itself (indexed in `Entries::dependents`).
    admin: Option<PathBuf>,
}

impl Slot {
    fn pending(token: u64) -> Self {
        Self {
            state: SlotState::Pending(token),
            used: AtomicU64::new(0),
            admin: None,
        }
    }
}

#[derive(Debug, Default)]
struct Entries {
    /// foldhash: every walk hashes a dozen paths here, and SipHash was a tenth of a cached
    /// resolution (docs/benchmarks.md). Seeded per process, so keys cannot be aimed at it.
    slots: HashMap<Arc<Path>, Slot, foldhash::fast::RandomState>,
    /// The same keys in path order, so a folder's subtree is one range.
    order: BTreeSet<Arc<Path>>,
    /// Folders whose `.git` verdict rests on an admin folder, by that folder: a change there (or
    /// to a folder above it) is a change to their looks.
    dependents: BTreeMap<PathBuf, BTreeSet<Arc<Path>>>,
    /// Admin folders whose last dependent went: the worker gives their watches back.
    orphans: Vec<PathBuf>,
}

impl Entries {
    fn under<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = &'a Arc<Path>> + 'a {
        self.order
            .range::<Path, _>((Bound::Included(dir), Bound::Unbounded))
            .take_while(move |p| p.starts_with(dir))
    }

    fn remove_under(&mut self, dir: &Path) -> usize {
        let gone: Vec<Arc<Path>> = self.under(dir).cloned().collect();
        for p in &gone {
            self.remove_one(p);
        }
        gone.len()
    }

    fn remove_one(&mut self, dir: &Path) -> bool {
        self.order.remove(dir);
        let Some(slot) = self.slots.remove(dir) else {
            return false;
        };
        self.undepend(dir, slot.admin.as_deref());
        true
    }

    fn undepend(&mut self, dir: &Path, admin: Option<&Path>) {
        let Some(admin) = admin else { return };
        if let Some(dirs) = self.dependents.get_mut(admin) {
            dirs.remove(dir);
            if dirs.is_empty() {
                self.dependents.remove(admin);
                self.orphans.push(admin.to_path_buf());
            }
        }
    }

    /// Whether nothing cached needs a watch at or beneath `path`: no entry there, and no look
    /// resting on an admin folder there.
    fn idle_under(&self, path: &Path) -> bool {
        self.under(path).next().is_none()
            && self
                .dependents
                .range::<Path, _>((Bound::Included(path), Bound::Unbounded))
                .next()
                .is_none_or(|(admin, _)| !admin.starts_with(path))
    }

    /// Records that the fill holding `token` for `dir` rests on `admin`; false when that fill
    /// has lost its slot already.
    fn depend(&mut self, dir: &Path, token: u64, admin: &Path) -> bool {
        let Some(key) = self.order.get(dir).cloned() else {
            return false;
        };
        let Some(slot) = self.slots.get_mut(dir) else {
            return false;
        };
        if !matches!(slot.state, SlotState::Pending(t) if t == token) {
            return false;
        }
        slot.admin = Some(admin.to_path_buf());
        self.dependents
            .entry(admin.to_path_buf())
            .or_default()
            .insert(key);
        true
    }

    /// The folders whose looks a change at `path` may alter through their admin folder: the
    /// admin folder or one above it changed, git's `gitdir` or `commondir` in it did, or the
    /// `config` of the common folder holding it.
    fn dependents_of(&self, path: &Path) -> Vec<Arc<Path>> {
        let mut found: Vec<Arc<Path>> = self
            .dependents
            .range::<Path, _>((Bound::Included(path), Bound::Unbounded))
            .take_while(|(admin, _)| admin.starts_with(path))
            .flat_map(|(_, dirs)| dirs.iter().cloned())
            .collect();
        let record = path
            .file_name()
            .is_some_and(|n| n == worktree::BACK_LINK || n == worktree::COMMON_DIR);
        if record && let Some(dirs) = path.parent().and_then(|a| self.dependents.get(a)) {
            found.extend(dirs.iter().cloned());
        }
        // A common folder's `config` says whether it is bare or a separate git folder: a change
        // there alters the looks of its worktrees.
        if path.file_name().is_some_and(|n| n == worktree::CONFIG)
            && let Some(worktrees) = path.parent().map(|c| c.join(worktree::WORKTREES_DIR))
        {
            found.extend(
                self.dependents
                    .range::<Path, _>((Bound::Included(worktrees.as_path()), Bound::Unbounded))
                    .take_while(|(admin, _)| admin.starts_with(&worktrees))
                    .flat_map(|(_, dirs)| dirs.iter().cloned()),
            );
        }
        found
    }

    fn insert(&mut self, dir: &Path, slot: Slot) {
        if let Some(old) = self.slots.get_mut(dir) {
            let admin = old.admin.take();
            *old = slot;
            self.undepend(dir, admin.as_deref());
            return;
        }
        let key: Arc<Path> = Arc::from(dir);
        self.order.insert(key.clone());
        self.slots.insert(key, slot);
    }

    /// Drops the least recently used entries (with everything cached beneath each, so an entry
    /// never outlives the watches of its ancestors) until `keep` remain. Returns the dropped
    /// subtrees' tops.
    fn evict(&mut self, keep: usize) -> Vec<Arc<Path>> {
        let mut by_age: Vec<(u64, Arc<Path>)> = self
            .slots
            .iter()
            .filter(|(_, s)| matches!(s.state, SlotState::Ready { .. }))
            .map(|(p, s)| (s.used.load(Relaxed), p.clone()))
            .collect();
        by_age.sort_unstable();
        let mut dropped = Vec::new();
        for (_, path) in by_age {
            if self.slots.len() <= keep {
                break;
            }
            if self.slots.contains_key(&path) && self.remove_under(&path) > 0 {
                dropped.push(path);
            }
        }
        dropped
    }
}

/// The watches held, behind one lock with the watcher itself so that deciding and acting agree.
struct WatchTable {
    watcher: Box<dyn DirWatcher>,
    watched: BTreeSet<PathBuf>,
    max: usize,
    /// The kernel refused a watch; cleared when a watch is given back.
    kernel_full: bool,
    /// The file (device, inode) each watch is on, where the kernel keeps one watch per file, not
    /// per path (Linux). Two paths of one file (two names of a project file; a folder and a path
    /// through a link to it) share that watch, events come under one of them only, and giving it
    /// back for one takes it from both: so they are given back together.
    on: HashMap<PathBuf, (u64, u64)>,
    /// The same, by file.
    paths_of: HashMap<(u64, u64), Vec<PathBuf>>,
    /// Paths whose watches went with another path's: their entries, and everything beneath
    /// them, must go too. The cache drains this after every change to the table.
    dropped: Vec<PathBuf>,
}

/// What a watch just added is on.
// Only inotify shares watches by file; elsewhere every watch is `Unshared`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Landed {
    /// The path's own file, whose (device, inode) and link count the look after the watch saw.
    On((u64, u64), u64),
    /// The path was a link, or gone, by then: inotify follows a link, so the watch may be on
    /// another file, whose (device, inode) is given when known.
    Elsewhere(Option<(u64, u64)>),
    /// This platform's watcher does not share watches by file.
    #[cfg(not(target_os = "linux"))]
    Unshared,
}

impl WatchTable {
    /// Watches those of `paths` not watched yet, in order, in one batch; false unless all are
    /// held. Each path lies beneath the one before it (a folder's ancestors, farthest first, then
    /// the folder and its `.berth`), so one that cannot be held takes the batch's watches beneath
    /// it along: a path stays watched only while its ancestors are.
    fn add_all(&mut self, paths: &[&Path]) -> bool {
        let new: Vec<&Path> = paths
            .iter()
            .copied()
            .filter(|p| !self.watched.contains(*p))
            .collect();
        if new.is_empty() {
            return true;
        }
        if self.kernel_full {
            return false;
        }
        let room = self.max.saturating_sub(self.watched.len());
        let asked = &new[..new.len().min(room)];
        if asked.is_empty() {
            return false;
        }
        let (added, refused) = self.watcher.watch_all(asked);
        if refused == Some(WatchError::Limit) {
            self.limit_reached();
        }
        // Each is looked at after the whole batch, so after its own watch, as in `add_new`.
        let mut lost = None;
        for path in &asked[..added] {
            if matches!(self.settle(path), Landed::Elsewhere(_)) && lost.is_none() {
                lost = Some(*path);
            }
        }
        match lost {
            Some(top) => {
                self.forget_under(top);
                false
            }
            None => added == new.len(),
        }
    }

    fn limit_reached(&mut self) {
        tracing::warn!(
            watches = self.watched.len(),
            "the kernel's watch limit is reached; further folders are re-checked on use"
        );
        self.kernel_full = true;
    }

    /// Adds a watch on `path`, not watched yet; `None` when none can be had. Only a project
    /// file's own watch comes one at a time, and only inotify watches files.
    #[cfg(target_os = "linux")]
    fn add_new(&mut self, path: &Path) -> Option<Landed> {
        if self.watched.len() >= self.max || self.kernel_full {
            return None;
        }
        match self.watcher.watch(path) {
            Ok(()) => {}
            Err(WatchError::Limit) => {
                self.limit_reached();
                return None;
            }
            Err(_) => return None,
        }
        Some(self.settle(path))
    }

    /// Records the watch just added on `path` by what it landed on; one that landed elsewhere
    /// is given back.
    fn settle(&mut self, path: &Path) -> Landed {
        let landed = landed(path);
        match landed {
            Landed::On(file, _) => {
                self.watched.insert(path.to_path_buf());
                self.record(path, file);
            }
            #[cfg(not(target_os = "linux"))]
            Landed::Unshared => {
                self.watched.insert(path.to_path_buf());
            }
            Landed::Elsewhere(file) => {
                // Giving it back may take another path's watch of the same file with it.
                self.watcher.unwatch(path);
                self.kernel_full = false;
                if let Some(file) = file {
                    self.forget_sharing(&[file]);
                }
            }
        }
        landed
    }

    /// Forgets `dir` and every watch beneath it, and every other path watching a file whose
    /// watch went here (with everything beneath it; see `dropped`).
    fn forget_under(&mut self, dir: &Path) {
        let gone: Vec<PathBuf> = self
            .watched
            .range::<Path, _>((Bound::Included(dir), Bound::Unbounded))
            .take_while(|p| p.starts_with(dir))
            .cloned()
            .collect();
        let mut files = Vec::new();
        for p in &gone {
            self.forget(p);
            files.extend(self.unrecord(p));
        }
        self.forget_sharing(&files);
    }

    /// Forgets, with everything beneath them, the paths whose watches are on one of `files`.
    fn forget_sharing(&mut self, files: &[(u64, u64)]) {
        for file in files {
            for p in self.paths_of.remove(file).unwrap_or_default() {
                self.on.remove(&p);
                self.forget_under(&p);
                self.dropped.push(p);
            }
        }
    }

    fn record(&mut self, path: &Path, file: (u64, u64)) {
        self.on.insert(path.to_path_buf(), file);
        self.paths_of
            .entry(file)
            .or_default()
            .push(path.to_path_buf());
    }

    fn unrecord(&mut self, path: &Path) -> Option<(u64, u64)> {
        let file = self.on.remove(path)?;
        if let Some(paths) = self.paths_of.get_mut(&file) {
            paths.retain(|p| p != path);
            if paths.is_empty() {
                self.paths_of.remove(&file);
            }
        }
        Some(file)
    }

    fn forget(&mut self, p: &Path) {
        self.watcher.unwatch(p);
        self.watched.remove(p);
        self.kernel_full = false;
    }

    fn forget_all(&mut self) {
        for p in std::mem::take(&mut self.watched) {
            self.watcher.unwatch(&p);
        }
        self.on.clear();
        self.paths_of.clear();
        self.dropped.clear();
        self.kernel_full = false;
    }
}

/// What the watch just added on `path` is on. inotify keeps one watch per file (and follows
/// links); the look comes after the watch, so a path that changes in between produces an event.
#[cfg(target_os = "linux")]
fn landed(path: &Path) -> Landed {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_symlink() => Landed::On((m.dev(), m.ino()), m.nlink()),
        _ => Landed::Elsewhere(std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))),
    }
}

/// FSEvents and `ReadDirectoryChangesW` watch paths.
#[cfg(not(target_os = "linux"))]
fn landed(_path: &Path) -> Landed {
    Landed::Unshared
}

/// Messages for the worker thread that applies invalidations.
enum WorkerMsg {
    Event(WatchEvent),
    Evicted(Vec<Arc<Path>>),
    /// A fill lost its race with an invalidation: give its watches back unless something is
    /// cached there again.
    Release(PathBuf),
    /// Answered once every message before it is applied: a test's barrier.
    #[cfg(test)]
    Flush(mpsc::Sender<()>),
}

/// How a fill will keep its result true.
enum Plan {
    Watched,
    Linked(Box<Stamp>),
    Stat(Box<Fingerprint>),
    Uncached,
}

/// What watching a project file by itself gave (Linux only watches a file by itself).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum FileWatch {
    /// Watched, on the file the look before saw there.
    Held,
    /// Another file was put at the name meanwhile: its event is on the way.
    Moved,
    /// Watched, but the file gained a name meanwhile: checked on use.
    Linked,
    /// No watch to be had.
    Refused,
}

/// Where the cache reads the time of day from.
pub use crate::clock::WallClock;

/// The lookup cache. See the module documentation.
pub struct LookupCache {
    inner: Arc<dyn FsView + Send + Sync>,
    entries: RwLock<Entries>,
    watches: Mutex<WatchTable>,
    config: CacheConfig,
    to_worker: mpsc::Sender<WorkerMsg>,
    clock: AtomicU64,
    /// The time a stat-checked entry's timestamps are judged against: the system's, or a
    /// test's own, so no test waits for the trust window to pass.
    wall_clock: WallClock,
    tokens: AtomicU64,
    /// Moves on every change to the entries (taken with the write lock, before the change): an
    /// answer computed from entries at one generation is still what they say at the same one.
    generation: AtomicU64,
    watch_count: AtomicUsize,
    hits: AtomicU64,
    misses: AtomicU64,
    invalidations: AtomicU64,
    overflows: AtomicU64,
    /// Counts the messages the worker applied, for tests that wait for an event to land.
    #[cfg(test)]
    applied: (Mutex<u64>, std::sync::Condvar),
}

impl std::fmt::Debug for LookupCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LookupCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl LookupCache {
    /// The daemon's cache: the real filesystem, watched by notify. When no watcher can be
    /// started, every entry is stat-checked instead.
    pub fn new(config: CacheConfig) -> Arc<Self> {
        Self::with_parts(config, Arc::new(RealFs), |sink| {
            match NotifyWatcher::new(sink) {
                Ok(w) => Box::new(w),
                Err(e) => {
                    tracing::warn!(error = ?e, "cannot start the filesystem watcher; every lookup is re-checked on use");
                    Box::new(NoWatcher)
                }
            }
        })
    }

    /// A cache over `inner`, with the watcher `make_watcher` builds around the sink it is given.
    pub fn with_parts(
        config: CacheConfig,
        inner: Arc<dyn FsView + Send + Sync>,
        make_watcher: impl FnOnce(EventSink) -> Box<dyn DirWatcher>,
    ) -> Arc<Self> {
        Self::with_wall_clock(config, inner, make_watcher, crate::clock::system())
    }

    /// [`LookupCache::with_parts`] on a wall clock of the caller's.
    pub fn with_wall_clock(
        config: CacheConfig,
        inner: Arc<dyn FsView + Send + Sync>,
        make_watcher: impl FnOnce(EventSink) -> Box<dyn DirWatcher>,
        wall_clock: WallClock,
    ) -> Arc<Self> {
        let (tx, rx) = mpsc::channel();
        let sink = EventSink::new({
            let tx = tx.clone();
            move |ev| {
                let _ = tx.send(WorkerMsg::Event(ev));
            }
        });
        let watcher = make_watcher(sink);
        let cache = Arc::new(Self {
            inner,
            entries: RwLock::new(Entries::default()),
            watches: Mutex::new(WatchTable {
                watcher,
                watched: BTreeSet::new(),
                max: config.max_watches,
                kernel_full: false,
                on: HashMap::new(),
                paths_of: HashMap::new(),
                dropped: Vec::new(),
            }),
            config,
            to_worker: tx,
            clock: AtomicU64::new(0),
            wall_clock,
            tokens: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            watch_count: AtomicUsize::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            invalidations: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            #[cfg(test)]
            applied: Default::default(),
        });
        let weak = Arc::downgrade(&cache);
        std::thread::Builder::new()
            .name("berth-cache".into())
            .spawn(move || worker(&weak, &rx))
            .expect("spawning the cache worker thread");
        cache
    }

    /// Forgets `dir` and everything cached beneath it. Synchronous: the daemon's own writes
    /// call it before they answer.
    pub fn invalidate(&self, dir: &Path) {
        let n = self.write_entries().remove_under(dir);
        self.invalidations.fetch_add(n as u64, Relaxed);
    }

    /// Forgets every entry (watches stay: they are still true).
    pub fn clear(&self) {
        let mut e = self.write_entries();
        let n = e.slots.len();
        let orphans = e.dependents.keys().cloned().collect();
        *e = Entries {
            orphans,
            ..Entries::default()
        };
        self.invalidations.fetch_add(n as u64, Relaxed);
    }

    /// Counts for `berth daemon status`.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            entries: self.read_entries().slots.len(),
            watches: self.watch_count.load(Relaxed),
            hits: self.hits.load(Relaxed),
            misses: self.misses.load(Relaxed),
            invalidations: self.invalidations.load(Relaxed),
            overflows: self.overflows.load(Relaxed),
        }
    }

    fn read_entries(&self) -> std::sync::RwLockReadGuard<'_, Entries> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write_entries(&self) -> std::sync::RwLockWriteGuard<'_, Entries> {
        let entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        entries
    }

    /// The entries' generation: equal at two moments, nothing was added, changed or dropped in
    /// between.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn lock_watches(&self) -> MutexGuard<'_, WatchTable> {
        self.watches.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A stored entry that is still true, if any. Never does I/O under the lock.
    fn lookup(&self, dir: &Path) -> Option<DirLook> {
        let (look, check) = {
            let entries = self.read_entries();
            let slot = entries.slots.get(dir)?;
            let SlotState::Ready { look, check, .. } = &slot.state else {
                return None;
            };
            slot.used.store(self.clock.load(Relaxed), Relaxed);
            if check.watches_suffice() {
                self.hits.fetch_add(1, Relaxed);
                return Some(look.clone());
            }
            (look.clone(), check.clone())
        };
        let still = match check {
            Check::Watched => true,
            Check::Linked(stamp) => Stamp::of(&project_file_path(dir)).as_ref() == Some(&*stamp),
            Check::Stat(fingerprint) => Fingerprint::take(dir).as_ref() == Some(&*fingerprint),
        };
        if still {
            self.hits.fetch_add(1, Relaxed);
            Some(look)
        } else {
            None
        }
    }

    /// Whether `dir` is a folder's canonical path, known from memory alone: an entry filled under
    /// watches that found it canonical, and no event since.
    pub(crate) fn knows_canonical_dir(&self, dir: &Path) -> bool {
        self.read_entries().slots.get(dir).is_some_and(|slot| {
            matches!(
                &slot.state,
                SlotState::Ready {
                    check,
                    canonical: true,
                    ..
                } if check.watches_suffice()
            )
        })
    }

    /// [`look_along`] from memory alone: `None` unless every folder has a watched entry. Never
    /// touches the disk, so it may run on an async worker.
    ///
    /// [`look_along`]: berth_core::fsview::look_along
    pub(crate) fn look_along_in_memory(&self, dirs: Vec<PathBuf>) -> Option<Vec<WalkStep>> {
        let entries = self.read_entries();
        let now = self.clock.load(Relaxed);
        let mut steps = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let slot = entries.slots.get(dir.as_path())?;
            let SlotState::Ready { look, check, .. } = &slot.state else {
                return None;
            };
            if !check.watches_suffice() {
                return None;
            }
            slot.used.store(now, Relaxed);
            steps.push(WalkStep {
                look: look.clone(),
                dir,
            });
        }
        self.hits.fetch_add(steps.len() as u64, Relaxed);
        Some(steps)
    }

    /// Reads `dir` from the disk and stores the result if nothing invalidated it meanwhile.
    fn fill(&self, dir: &Path) -> DirLook {
        self.misses.fetch_add(1, Relaxed);
        if self.config.max_entries == 0 || !dir.is_absolute() {
            return self.inner.look(dir);
        }
        let token = self.tokens.fetch_add(1, Relaxed) + 1;
        {
            let mut entries = self.write_entries();
            if let Some(Slot {
                state: SlotState::Pending(_),
                ..
            }) = entries.slots.get(dir)
            {
                // Another request is filling it: read through rather than wait.
                drop(entries);
                return self.inner.look(dir);
            }
            entries.insert(dir, Slot::pending(token));
        }
        // The watches (or the fingerprint) come before the read: a change after them is seen,
        // a change before them is in what the read returns.
        let plan = self.plan(dir);
        // After the watches: a link or rename on the way from now on is an event.
        let canonical = matches!(plan, Plan::Watched) && is_canonical_dir(dir);
        let mut look = self.inner.look(dir);
        let plan = match look
            .link
            .as_deref()
            .and_then(GitLink::admin)
            .map(Path::to_path_buf)
        {
            None => plan,
            // A `.git` verdict rests on git's admin folder too: watched like the folder, and
            // read again after its watches, so a change from then on is an event.
            // Where a link in git's records leads is not watched, nor where one on a path a
            // record names could lead.
            Some(_) if look.link.as_deref().is_some_and(GitLink::rests_on_links) => Plan::Uncached,
            Some(admin) => match plan {
                Plan::Watched if self.watch_admin(dir, token, &admin) => {
                    look = self.inner.look(dir);
                    let same = look.link.as_deref().and_then(GitLink::admin) == Some(&*admin)
                        && !look.link.as_deref().is_some_and(GitLink::rests_on_links);
                    // The worker may have given an orphaned admin folder's watch back between
                    // the watch and the dependency; once the dependency is in, it cannot.
                    let held = self.with_watches(|table| table.watched.contains(&admin));
                    if same && held {
                        Plan::Watched
                    } else {
                        Plan::Uncached
                    }
                }
                _ => Plan::Uncached,
            },
        };
        let check = match plan {
            Plan::Watched => Check::Watched,
            Plan::Linked(stamp) => Check::Linked(stamp),
            Plan::Stat(fp) => Check::Stat(fp),
            Plan::Uncached => {
                let mut entries = self.write_entries();
                if matches!(entries.slots.get(dir), Some(Slot { state: SlotState::Pending(t), .. }) if *t == token)
                {
                    entries.remove_one(dir);
                }
                return look;
            }
        };
        let mut stored = false;
        let evicted = {
            let mut entries = self.write_entries();
            if let Some(slot) = entries.slots.get_mut(dir)
                && matches!(slot.state, SlotState::Pending(t) if t == token)
            {
                stored = true;
                slot.state = SlotState::Ready {
                    look: look.clone(),
                    check,
                    canonical,
                };
                slot.used
                    .store(self.clock.fetch_add(1, Relaxed) + 1, Relaxed);
            }
            if entries.slots.len() > self.config.max_entries {
                entries.evict(self.config.max_entries - self.config.max_entries / 10)
            } else {
                Vec::new()
            }
        };
        if !stored {
            let _ = self.to_worker.send(WorkerMsg::Release(dir.to_path_buf()));
        }
        if !evicted.is_empty() {
            // Giving the watches back is the worker's job, off the request path.
            let _ = self.to_worker.send(WorkerMsg::Evicted(evicted));
        }
        look
    }

    /// Decides how a fill of `dir` stays true, setting up its watches if it can have them.
    fn plan(&self, dir: &Path) -> Plan {
        // The folder's watch comes before looking at `.berth`: a `.berth` created after the look
        // is then reported on the folder's watch, and one created before it is seen and watched.
        // (Looking first left a gap where `.berth` appeared unwatched and its file came later.)
        let dir_watched = delivers_events(dir) && self.watch(dir, None);
        let berth = dir.join(PROJECT_DIR);
        let berth_meta = std::fs::symlink_metadata(&berth).ok();
        if berth_meta
            .as_ref()
            .is_some_and(|m| m.file_type().is_symlink())
        {
            return Plan::Uncached;
        }
        let berth_is_dir = berth_meta.as_ref().is_some_and(|m| m.is_dir());
        let watched = dir_watched && (!berth_is_dir || self.watch(dir, Some(&berth)));
        // After `.berth`'s watch, as the read is: a project file that appears or is replaced
        // from now on is an event, and whichever file the read finds is the one looked at here
        // or a later one.
        let file = project_file_path(dir);
        let file_meta = berth_is_dir
            .then(|| std::fs::symlink_metadata(&file).ok())
            .flatten();
        if file_meta
            .as_ref()
            .is_some_and(|m| m.file_type().is_symlink())
        {
            return Plan::Uncached;
        }
        if watched {
            let Some(meta) = file_meta.filter(|m| m.is_file()) else {
                return Plan::Watched;
            };
            let stamp = Stamp::of_metadata(&meta);
            if names(&file, &meta) > 1 {
                return self.linked(stamp);
            }
            match self.watch_file(&file, &stamp) {
                FileWatch::Held => return Plan::Watched,
                FileWatch::Moved => return Plan::Uncached,
                FileWatch::Linked => {
                    return Stamp::of(&file).map_or(Plan::Uncached, |now| self.linked(now));
                }
                FileWatch::Refused => {}
            }
        }
        match Fingerprint::take(dir) {
            Some(fp) if !fp.is_recent((self.wall_clock)(), self.config.trust_after) => {
                Plan::Stat(Box::new(fp))
            }
            _ => Plan::Uncached,
        }
    }

    /// Watches `admin` and the folders above it for the fill holding `token` for `dir`, and
    /// records that `dir`'s look rests on it.
    fn watch_admin(&self, dir: &Path, token: u64, admin: &Path) -> bool {
        delivers_events(admin)
            && self.watch(admin, None)
            && self.write_entries().depend(dir, token, admin)
    }

    /// Drops the looks that a change at `path` alters through their admin folder.
    fn invalidate_dependents(&self, path: &Path) {
        let dirs = self.read_entries().dependents_of(path);
        if dirs.is_empty() {
            return;
        }
        let mut entries = self.write_entries();
        for dir in dirs {
            if entries.remove_one(&dir) {
                self.invalidations.fetch_add(1, Relaxed);
            }
        }
    }

    /// The plan for a watched folder whose project file has more than one name.
    fn linked(&self, stamp: Stamp) -> Plan {
        if stamp.is_recent((self.wall_clock)(), self.config.trust_after) {
            Plan::Uncached
        } else {
            Plan::Linked(Box::new(stamp))
        }
    }

    /// Watches the project file `file` by itself, `seen` being its stamp from just before. Only
    /// inotify watches files rather than names; elsewhere the folder's watch is all there is.
    #[cfg(target_os = "linux")]
    fn watch_file(&self, file: &Path, seen: &Stamp) -> FileWatch {
        self.with_watches(|table| {
            if let Some(on) = table.on.get(file) {
                // Otherwise the name holds another file now, and that change's event will
                // forget the watch.
                return if *on == seen.id() {
                    FileWatch::Held
                } else {
                    FileWatch::Moved
                };
            }
            match table.add_new(file) {
                None => FileWatch::Refused,
                // The name still holds the file seen before: the watch is on it.
                Some(Landed::On(on, links)) if on == seen.id() && links > 1 => FileWatch::Linked,
                Some(Landed::On(on, _)) if on == seen.id() => FileWatch::Held,
                Some(Landed::On(..)) => {
                    table.forget_under(file);
                    FileWatch::Moved
                }
                Some(Landed::Elsewhere(_)) => FileWatch::Moved,
            }
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn watch_file(&self, _file: &Path, _seen: &Stamp) -> FileWatch {
        FileWatch::Held
    }

    /// Runs `f` on the watch table; then drops the entries that paths whose watches went with
    /// another's guarded (after the watches, as the module's invariant wants).
    fn with_watches<T>(&self, f: impl FnOnce(&mut WatchTable) -> T) -> T {
        let (out, dropped) = {
            let mut table = self.lock_watches();
            let out = f(&mut table);
            self.watch_count.store(table.watched.len(), Relaxed);
            (out, std::mem::take(&mut table.dropped))
        };
        for path in &dropped {
            self.invalidate_under_if_cached(path);
            self.invalidate_named(path);
            self.invalidate_dependents(path);
        }
        out
    }

    /// Watches `dir`, the ancestors not watched yet (farthest first), and `berth`, in one batch.
    fn watch(&self, dir: &Path, berth: Option<&Path>) -> bool {
        self.with_watches(|table| {
            let mut paths: Vec<&Path> = dir
                .ancestors()
                .take_while(|d| d.parent().is_some() && !table.watched.contains(*d))
                .collect();
            paths.reverse();
            paths.extend(berth);
            table.add_all(&paths)
        })
    }

    /// Forgets the watches at and under `dir` (before the entries they guard go), and those of
    /// other paths sharing one of them, whose entries it drops.
    fn forget_watches_under(&self, dir: &Path) {
        let forgot = self.with_watches(|table| {
            let any = table
                .watched
                .range::<Path, _>((Bound::Included(dir), Bound::Unbounded))
                .next()
                .is_some_and(|p| p.starts_with(dir));
            if any {
                table.forget_under(dir);
            }
            any
        });
        // An admin folder whose watch went no longer guards the looks resting on it.
        if forgot {
            self.invalidate_dependents(dir);
        }
    }

    fn invalidate_under_if_cached(&self, dir: &Path) {
        if self.read_entries().under(dir).next().is_some() {
            self.invalidate(dir);
        }
    }

    fn invalidate_one(&self, dir: &Path) {
        if self.read_entries().slots.contains_key(dir) && self.write_entries().remove_one(dir) {
            self.invalidations.fetch_add(1, Relaxed);
        }
    }

    /// Applies one change at `path`.
    fn on_change(&self, kind: ChangeKind, path: &Path) {
        if kind.is_structural() {
            // The path may now name another folder: its watches (and those beneath, which
            // notify drops itself) no longer guard it.
            self.forget_watches_under(path);
        }
        if kind.is_structural() || kind == ChangeKind::Metadata {
            // A folder moved, deleted or made unreadable changes every entry beneath it.
            self.invalidate_under_if_cached(path);
        }
        self.invalidate_named(path);
        self.invalidate_dependents(path);
    }

    /// Drops the entry of the folder whose look `path` is part of, by its name: a `.berth` or
    /// `.git` is its parent's, a project file its folder's.
    fn invalidate_named(&self, path: &Path) {
        let name = path.file_name().and_then(|n| n.to_str());
        let parent = path.parent();
        match name {
            Some(PROJECT_DIR | ".git") => {
                if let Some(parent) = parent {
                    self.invalidate_one(parent);
                }
            }
            Some("workspace.json") => {
                if let Some(parent) = parent
                    && parent.file_name().is_some_and(|n| n == PROJECT_DIR)
                    && let Some(dir) = parent.parent()
                {
                    self.invalidate_one(dir);
                }
            }
            _ => {}
        }
    }

    fn apply(&self, msg: WorkerMsg) {
        self.apply_one(msg);
        self.release_orphans();
        #[cfg(test)]
        {
            *self.applied.0.lock().unwrap() += 1;
            self.applied.1.notify_all();
        }
    }

    /// Gives back the watches of admin folders no look rests on any more, with the ancestors
    /// watched only for them (`.git/worktrees`, `.git`), so evicting or invalidating a worktree's
    /// look does not leave its admin folder's watches held.
    fn release_orphans(&self) {
        let orphans = std::mem::take(&mut self.write_entries().orphans);
        for admin in orphans {
            let mut top = None;
            for p in admin.ancestors().take_while(|p| p.parent().is_some()) {
                if !self.read_entries().idle_under(p) {
                    break;
                }
                top = Some(p);
            }
            if let Some(top) = top {
                self.forget_watches_under(top);
            }
        }
    }

    fn apply_one(&self, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Event(WatchEvent::Overflow) => {
                tracing::info!("filesystem events were lost; dropping the lookup cache");
                self.overflows.fetch_add(1, Relaxed);
                {
                    let mut table = self.lock_watches();
                    table.forget_all();
                    self.watch_count.store(0, Relaxed);
                }
                self.clear();
            }
            WorkerMsg::Event(Change { kind, paths }) => {
                for p in &paths {
                    self.on_change(kind, p);
                }
            }
            WorkerMsg::Release(dir) => {
                if self.read_entries().under(&dir).next().is_none() {
                    // Watches first, then entries: a fill that slipped in meanwhile loses.
                    self.forget_watches_under(&dir);
                    self.write_entries().remove_under(&dir);
                }
            }
            #[cfg(test)]
            WorkerMsg::Flush(done) => {
                self.release_orphans();
                let _ = done.send(());
            }
            WorkerMsg::Evicted(tops) => {
                for top in &tops {
                    self.forget_watches_under(top);
                    self.write_entries().remove_under(top);
                }
            }
        }
    }
}

impl FsView for LookupCache {
    fn look(&self, dir: &Path) -> DirLook {
        match self.lookup(dir) {
            Some(look) => look,
            None => self.fill(dir),
        }
    }
}

/// Waiting for the worker, so a test waits for an event to land rather than polling.
#[cfg(test)]
impl LookupCache {
    /// How many messages the worker has applied so far.
    pub(crate) fn applied(&self) -> u64 {
        *self.applied.0.lock().unwrap()
    }

    /// Waits until the worker has applied more than `seen` messages; `false` when none came
    /// within a few seconds (the kernel sent no event).
    pub(crate) fn applies_past(&self, seen: u64) -> bool {
        let count = self.applied.0.lock().unwrap();
        let (count, _) = self
            .applied
            .1
            .wait_timeout_while(count, Duration::from_secs(5), |n| *n <= seen)
            .unwrap();
        *count > seen
    }
}

fn worker(cache: &Weak<LookupCache>, rx: &mpsc::Receiver<WorkerMsg>) {
    while let Ok(msg) = rx.recv() {
        let Some(cache) = cache.upgrade() else { break };
        cache.apply(msg);
    }
}

/// What a stat-checked entry compares on use.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    dir: Stamp,
    berth: Option<Stamp>,
    file: Option<Stamp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    /// How many names the file has (0 where the platform does not say).
    links: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        Some(Self::of_metadata(&std::fs::symlink_metadata(path).ok()?))
    }

    #[cfg(unix)]
    fn of_metadata(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            links: m.nlink(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Windows tells a path's attributes, size, and write and creation times (100 ns ticks
    /// since 1601) without opening it; no file id and no change time, so a stamp here is the
    /// weaker one. Entries under watches, which is every local file system on Windows, do
    /// not rely on it.
    #[cfg(windows)]
    fn of_metadata(m: &std::fs::Metadata) -> Stamp {
        use std::os::windows::fs::MetadataExt;
        const DIRECTORY: u32 = 0x10;
        let ticks = |t: u64| {
            // 1601 to 1970, in 100 ns ticks.
            let unix = t as i64 - 116_444_736_000_000_000;
            (
                unix.div_euclid(10_000_000),
                unix.rem_euclid(10_000_000) * 100,
            )
        };
        Stamp {
            dev: 0,
            ino: 0,
            mode: if m.file_attributes() & DIRECTORY != 0 {
                0o040_000
            } else {
                0o100_000
            },
            links: 0,
            size: m.file_size(),
            mtime: ticks(m.last_write_time()),
            ctime: ticks(m.creation_time()),
        }
    }

    /// Which file it is: (device, inode).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Whether a timestamp is within `window` of `now` (or in the future): a second change in
    /// the same clock tick would then leave the stamp unchanged.
    fn is_recent(&self, now: SystemTime, window: Duration) -> bool {
        let limit = now
            .checked_sub(window)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        ns(self.mtime) >= limit || ns(self.ctime) >= limit
    }
}

/// How many names (hard links) the file at `path`, whose `lstat` is `meta`, has.
#[cfg(unix)]
fn names(_path: &Path, meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

/// How many names (hard links) the file at `path` has. Windows says it only through a handle;
/// a file that cannot be asked counts as linked, so it is checked on use.
#[cfg(windows)]
fn names(path: &Path, _meta: &std::fs::Metadata) -> u64 {
    use std::os::windows::fs::OpenOptionsExt;
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
        FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, GetFileInformationByHandle,
    };
    // No access asked: the attributes alone, and no writer or deleter is kept out meanwhile.
    let Ok(f) = std::fs::OpenOptions::new()
        .access_mode(0)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
    else {
        return u64::MAX;
    };
    // SAFETY: all-zero is a valid value of this plain struct.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a live handle and a struct that lives for the call.
    if unsafe { GetFileInformationByHandle(f.as_raw_handle(), &mut info) } == 0 {
        return u64::MAX;
    }
    u64::from(info.nNumberOfLinks)
}

impl Fingerprint {
    /// The folder's own stamp covers `.git` and `.berth` appearing, going or being renamed (its
    /// mtime and ctime move); the others cover the project file.
    fn take(dir: &Path) -> Option<Fingerprint> {
        let dir_stamp = Stamp::of(dir)?;
        // A link's own stamp says nothing of where it leads.
        if dir_stamp.mode & 0o170_000 == 0o120_000 {
            return None;
        }
        let berth = Stamp::of(&dir.join(PROJECT_DIR));
        // The file-type bits are the same on every Unix (and stamped so on Windows); libc's
        // types for them are not.
        let is_dir = berth.is_some_and(|b| b.mode & 0o170_000 == 0o040_000);
        let file = if is_dir {
            Stamp::of(&project_file_path(dir))
        } else {
            None
        };
        Some(Fingerprint {
            dir: dir_stamp,
            berth,
            file,
        })
    }

    /// Whether any of its stamps is recent (see [`Stamp::is_recent`]).
    fn is_recent(&self, now: SystemTime, window: Duration) -> bool {
        [Some(self.dir), self.berth, self.file]
            .into_iter()
            .flatten()
            .any(|s| s.is_recent(now, window))
    }
}

/// Whether `dir` is a folder spelled canonically (no link, `.` or `..` on the way).
fn is_canonical_dir(dir: &Path) -> bool {
    crate::canonical::canonicalize(dir).is_ok_and(|c| c == dir) && dir.is_dir()
}

/// Whether changes on `dir`'s filesystem reach this machine's watches. Network and FUSE
/// filesystems report only the changes made through this client, so their entries are
/// stat-checked instead (docs/decisions/0004-network-filesystems-and-the-cache.md).
#[cfg(target_os = "linux")]
fn delivers_events(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const NO_EVENTS: &[u32] = &[
        0x6969,      // NFS
        0x517B,      // SMB
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x6573_5546, // FUSE (sshfs, rclone, virtiofs, ...)
        0x0102_1997, // 9p (WSL2's /mnt/c, VMs)
        0x00C3_6400, // Ceph
        0x5346_414F, // AFS
        0x6B41_4653, // kAFS
        0x7375_7245, // Coda
        0x564C,      // NCP
        0x7461_636F, // OCFS2
        0x0116_1970, // GFS2
        0x0BD0_0BD0, // Lustre
        0x1366_1366, // OrangeFS
        0x786F_4256, // VirtualBox shared folders
        0x4750_4653, // GPFS
    ];
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: an all-zero statfs is a valid value for this plain C struct.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `st` is a valid, writable statfs.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)]
    let magic = (st.f_type as u64 & 0xFFFF_FFFF) as u32;
    !NO_EVENTS.contains(&magic)
}

#[cfg(not(target_os = "linux"))]
fn delivers_events(_dir: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use berth_core::fsview::look_along;

    use super::*;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        (tmp, root)
    }

    fn write_file(dir: &Path, body: &str) {
        std::fs::create_dir_all(dir.join(PROJECT_DIR)).unwrap();
        std::fs::write(project_file_path(dir), body).unwrap();
    }

    /// Waits, event by event, until the cache agrees with the disk; fails when the events stop
    /// coming first.
    fn settles(cache: &LookupCache, dir: &Path) -> Duration {
        let start = Instant::now();
        loop {
            let seen = cache.applied();
            if cache.look(dir) == RealFs.look(dir) {
                return start.elapsed();
            }
            assert!(
                cache.applies_past(seen),
                "the cache still disagrees with the disk about {dir:?}, and no further event came"
            );
        }
    }

    fn config(max_entries: usize, max_watches: usize) -> CacheConfig {
        CacheConfig {
            max_entries,
            max_watches,
            ..CacheConfig::default()
        }
    }

    /// A repository `r` with a linked worktree `w`, as git lays them out.
    fn worktree(root: &Path) -> PathBuf {
        worktree_named(root, "w")
    }

    /// A linked worktree `name` of the repository `r`, as git lays it out; its admin folder.
    fn worktree_named(root: &Path, name: &str) -> PathBuf {
        let admin = root.join("r/.git/worktrees").join(name);
        let top = root.join(name);
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir(&top).unwrap();
        std::fs::write(top.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", top.join(".git").display()),
        )
        .unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        admin
    }

    /// The daemon's own reads in watched folders (a project file, a worktree's `.git` file and
    /// git's records) raise no event: the watcher's thread sleeps through a fill and through
    /// uncached resolutions (under notify 8's mask each read was an `IN_OPEN`). One inotify
    /// instance delivers in order, so a folder made after the reads is the barrier.
    #[test]
    #[cfg(target_os = "linux")]
    fn reading_watched_project_files_and_git_records_raises_no_event() {
        let (_t, root) = tree();
        let admin = worktree(&root);
        let w = root.join("w");
        write_file(&w, r#"{"workspace": "aaaa"}"#);
        let (tx, raw) = mpsc::channel::<Result<notify::Event, String>>();
        let cache = LookupCache::with_parts(CacheConfig::default(), Arc::new(RealFs), |sink| {
            Box::new(
                NotifyWatcher::with_handler(move |res: notify::Result<notify::Event>| {
                    let _ = tx.send(res.as_ref().cloned().map_err(|e| e.to_string()));
                    if let Some(ev) = watch::translate(res) {
                        sink.send(ev);
                    }
                })
                .unwrap(),
            )
        });
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Worktree { .. })
        ));
        assert_eq!(
            cache.look(&w).project_file,
            DirLook::file("aaaa").project_file
        );
        let watched = cache.watched();
        for held in [&w, &w.join(PROJECT_DIR), &admin] {
            assert!(watched.contains(held), "{held:?} not in {watched:?}");
        }
        // Uncached resolutions read the same files again under those watches.
        for _ in 0..3 {
            assert_eq!(RealFs.look(&w), cache.look(&w));
        }
        let barrier = root.join("barrier");
        std::fs::create_dir(&barrier).unwrap();
        // Other tests change the temp folder, an ancestor watched too: only this tree counts.
        let first = std::iter::from_fn(|| raw.recv_timeout(Duration::from_secs(10)).ok())
            .find(|ev| match ev {
                Ok(ev) => ev.paths.iter().any(|p| p.starts_with(&root)),
                Err(_) => true,
            })
            .expect("the barrier's event");
        let first = first.expect("no watcher error");
        assert_eq!(
            (first.kind, first.paths),
            (
                notify::EventKind::Create(notify::event::CreateKind::Folder),
                vec![barrier]
            ),
            "the reads raised an event"
        );
    }

    #[test]
    fn a_worktrees_look_is_held_under_watches_and_follows_its_admin_folder() {
        let (_t, root) = tree();
        let admin = worktree(&root);
        let w = root.join("w");
        let cache = LookupCache::new(CacheConfig::default());
        let verified = cache.look(&w);
        assert!(
            matches!(verified.link.as_deref(), Some(GitLink::Worktree { .. })),
            "{verified:?}"
        );
        // From memory: the admin folder's watches keep the verdict true.
        assert!(cache.look_along_in_memory(vec![w.clone()]).is_some());
        // The back-link rewritten (the worktree moved elsewhere), then restored.
        std::fs::write(admin.join("gitdir"), "/elsewhere/.git\n").unwrap();
        settles(&cache, &w);
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Refused { .. })
        ));
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", w.join(".git").display()),
        )
        .unwrap();
        settles(&cache, &w);
        assert_eq!(cache.look(&w), verified);
        // The commondir changed, and the admin folder pruned.
        std::fs::write(admin.join("commondir"), "/other/.git\n").unwrap();
        settles(&cache, &w);
        std::fs::remove_dir_all(&admin).unwrap();
        settles(&cache, &w);
        let pruned = cache.look(&w).link.as_deref().cloned();
        // On Windows (seen under Wine) the folder can linger, empty, while a watch on it is
        // open: its back-link is what is missing then. Either way the link is refused.
        assert!(
            matches!(
                pruned,
                Some(GitLink::Refused {
                    why: berth_core::worktree::LinkRefusal::AdminMissing(_),
                    ..
                })
            ) || (cfg!(windows)
                && matches!(
                    pruned,
                    Some(GitLink::Refused {
                        why: berth_core::worktree::LinkRefusal::NoBackLink(_),
                        ..
                    })
                )),
            "{pruned:?}"
        );
    }

    #[test]
    fn a_separate_git_folders_config_is_part_of_its_worktrees_look() {
        let (_t, root) = tree();
        // `git init --separate-git-dir gits/r.git r`, then a worktree `w`.
        let common = root.join("gits/r.git");
        let admin = common.join("worktrees/w");
        let w = root.join("w");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir_all(root.join("r")).unwrap();
        std::fs::create_dir(&w).unwrap();
        std::fs::write(
            root.join("r/.git"),
            format!("gitdir: {}\n", common.display()),
        )
        .unwrap();
        std::fs::write(w.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", w.join(".git").display()),
        )
        .unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        std::fs::write(common.join("config"), "[core]\n\tbare = false\n").unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        let separate = |cache: &LookupCache| match cache.look(&w).link.as_deref() {
            Some(GitLink::Worktree { separate, .. }) => separate.clone(),
            other => panic!("not a worktree: {other:?}"),
        };
        assert_eq!(separate(&cache), Some(worktree::Separate::Unsettled));
        assert!(cache.look_along_in_memory(vec![w.clone()]).is_some());
        // The checkout's `.git` names the git folder itself: no worktree, but it names it.
        let checkout = cache.look(&root.join("r"));
        assert_eq!(
            checkout.link.as_deref().and_then(GitLink::names_git_folder),
            Some(common.as_path())
        );
        // Made bare, as git writes its config (a lock file renamed over it), and back.
        for (text, want) in [
            ("[core]\n\tbare = true\n", None),
            (
                "[core]\n\tbare = false\n",
                Some(worktree::Separate::Unsettled),
            ),
        ] {
            std::fs::write(common.join("config.lock"), text).unwrap();
            std::fs::rename(common.join("config.lock"), common.join("config")).unwrap();
            settles(&cache, &w);
            assert_eq!(separate(&cache), want);
        }
        // Written in place too.
        std::fs::write(common.join("config"), "[core]\n\tbare = true\n").unwrap();
        settles(&cache, &w);
        assert_eq!(separate(&cache), None);
    }

    #[cfg(unix)] // a symbolic link
    #[test]
    fn a_worktree_whose_back_link_passes_a_link_is_never_held() {
        let (_t, root) = tree();
        let admin = worktree(&root);
        let w = root.join("w");
        std::os::unix::fs::symlink(&w, root.join("alias")).unwrap();
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", root.join("alias/.git").display()),
        )
        .unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        let link = cache.look(&w).link;
        assert!(
            link.as_deref().is_some_and(GitLink::through_link),
            "{link:?}"
        );
        assert!(cache.look_along_in_memory(vec![w.clone()]).is_none());
        // The link turned to another folder, which no watch reports: refused at once.
        std::fs::remove_file(root.join("alias")).unwrap();
        std::os::unix::fs::symlink(root.join("r"), root.join("alias")).unwrap();
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Refused { .. })
        ));
    }

    /// The mirror: a record naming another path refuses only while no link on that path leads
    /// here, and a link made or turned there is no event for any watch the look has.
    #[cfg(unix)] // a symbolic link
    #[test]
    fn a_worktree_refused_for_a_record_naming_another_path_is_never_held() {
        let (_t, root) = tree();
        let admin = worktree(&root);
        let w = root.join("w");
        std::fs::create_dir(root.join("other")).unwrap();
        let retarget = |alias: &str, to: &Path| {
            let _ = std::fs::remove_file(root.join(alias));
            std::os::unix::fs::symlink(to, root.join(alias)).unwrap();
        };
        let cache = LookupCache::new(CacheConfig::default());
        for (record, alias, named, right) in [
            ("gitdir", "alias", "alias/.git", w.clone()),
            ("commondir", "alias2", "alias2/.git", root.join("r")),
        ] {
            retarget(alias, &root.join("other"));
            let text = format!("{}\n", root.join(named).display());
            std::fs::write(admin.join(record), text).unwrap();
            settles(&cache, &w);
            let link = cache.look(&w).link;
            assert!(
                matches!(link.as_deref(), Some(GitLink::Refused { .. })),
                "{link:?}"
            );
            assert!(cache.look_along_in_memory(vec![w.clone()]).is_none());
            // The link turned to the right folder: the record names it now, and only the disk
            // can say so.
            retarget(alias, &right);
            let link = cache.look(&w).link;
            assert!(
                link.as_deref().is_some_and(GitLink::through_link),
                "{record}: {link:?}"
            );
            std::fs::write(
                admin.join("gitdir"),
                format!("{}\n", w.join(".git").display()),
            )
            .unwrap();
        }
    }

    #[test]
    fn a_worktree_whose_repository_folder_moves_is_judged_again() {
        let (_t, root) = tree();
        worktree(&root);
        let w = root.join("w");
        let cache = LookupCache::new(CacheConfig::default());
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Worktree { .. })
        ));
        std::fs::rename(root.join("r"), root.join("r2")).unwrap();
        settles(&cache, &w);
        std::fs::rename(root.join("r2"), root.join("r")).unwrap();
        settles(&cache, &w);
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Worktree { .. })
        ));
    }

    #[test]
    fn a_second_look_is_a_hit_and_watches_the_folder_and_its_ancestors() {
        let (_t, root) = tree();
        let dir = root.join("a/b");
        std::fs::create_dir_all(&dir).unwrap();
        write_file(&dir, r#"{"workspace": "notes"}"#);
        let cache = LookupCache::new(CacheConfig::default());
        assert_eq!(cache.look(&dir), DirLook::file("notes"));
        assert_eq!(cache.look(&dir), DirLook::file("notes"));
        let s = cache.stats();
        assert_eq!((s.entries, s.hits, s.misses), (1, 1, 1));
        // dir, .berth, and every ancestor but `/`; on Linux the project file too.
        let file = usize::from(cfg!(target_os = "linux"));
        assert_eq!(s.watches, dir.ancestors().count() - 1 + 1 + file);
    }

    /// Waits, event by event, until `dir` is no longer known as canonical.
    #[cfg(unix)]
    fn forgotten(cache: &LookupCache, dir: &Path) {
        loop {
            let seen = cache.applied();
            if !cache.knows_canonical_dir(dir) {
                return;
            }
            assert!(
                cache.applies_past(seen),
                "{dir:?} is still known as canonical, and no further event came"
            );
        }
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_watched_folder_is_known_canonical_until_an_ancestor_becomes_a_link() {
        let (_t, root) = tree();
        let dir = root.join("a/b");
        std::fs::create_dir_all(&dir).unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        assert!(
            !cache.knows_canonical_dir(&dir),
            "nothing is known before a look"
        );
        cache.look(&dir);
        assert!(cache.knows_canonical_dir(&dir));
        // `a` becomes a link to where it went: `a/b` is a path through a link now.
        std::fs::rename(root.join("a"), root.join("moved")).unwrap();
        std::os::unix::fs::symlink(root.join("moved"), root.join("a")).unwrap();
        forgotten(&cache, &dir);
        assert!(cache.look_along_in_memory(vec![dir.clone()]).is_none());
        // Looked at again (as the disk path does once it has canonicalised), only the real
        // spelling is known.
        cache.look(&root.join("moved/b"));
        assert!(cache.knows_canonical_dir(&root.join("moved/b")));
        assert!(!cache.knows_canonical_dir(&dir));
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_path_through_a_link_is_never_known_canonical() {
        let (_t, root) = tree();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        // Only the disk path's canonicalisation keeps links out of a walk; the cache checks too.
        cache.look(&root.join("link"));
        assert!(!cache.knows_canonical_dir(&root.join("link")));
    }

    #[test]
    fn a_walk_comes_from_memory_only_when_every_folder_is_held_under_watches() {
        let (_t, root) = tree();
        let dir = root.join("a/b");
        std::fs::create_dir_all(&dir).unwrap();
        write_file(&root, r#"{"workspace": "notes"}"#);
        let walk = vec![dir.clone(), root.join("a"), root.clone()];
        let cache = LookupCache::new(CacheConfig::default());
        cache.look(&dir);
        assert!(cache.look_along_in_memory(walk.clone()).is_none());
        let from_disk = look_along(cache.as_ref(), walk.clone());
        let hits = cache.stats().hits;
        assert_eq!(cache.look_along_in_memory(walk.clone()), Some(from_disk));
        assert_eq!(cache.stats().hits, hits + 3);
        // Stat-checked entries need the disk on every use: never from memory.
        let stat_checked = LookupCache::new(CacheConfig {
            trust_after: Duration::ZERO,
            ..config(100, 0)
        });
        look_along(stat_checked.as_ref(), walk.clone());
        assert!(stat_checked.stats().entries > 0);
        assert!(stat_checked.look_along_in_memory(walk).is_none());
        assert!(!stat_checked.knows_canonical_dir(&dir));
    }

    #[test]
    fn editing_the_project_file_in_place_is_seen() {
        let (_t, root) = tree();
        write_file(&root, r#"{"workspace": "aaaa"}"#);
        let cache = LookupCache::new(CacheConfig::default());
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        // Same size, same second: only the watch can tell.
        std::fs::write(project_file_path(&root), r#"{"workspace": "bbbb"}"#).unwrap();
        settles(&cache, &root);
        assert_eq!(cache.look(&root), DirLook::file("bbbb"));
    }

    #[test]
    fn a_berth_folder_created_later_is_watched_from_then_on() {
        let (_t, root) = tree();
        let cache = LookupCache::new(CacheConfig::default());
        assert_eq!(cache.look(&root), DirLook::default());
        write_file(&root, r#"{"workspace": "aaaa"}"#);
        settles(&cache, &root);
        std::fs::write(project_file_path(&root), r#"{"workspace": "bbbb"}"#).unwrap();
        settles(&cache, &root);
        std::fs::write(project_file_path(&root), "not json").unwrap();
        settles(&cache, &root);
        assert!(matches!(cache.look(&root).project_file, Some(Err(_))));
    }

    #[test]
    fn git_appearing_and_going_is_seen() {
        let (_t, root) = tree();
        let cache = LookupCache::new(CacheConfig::default());
        assert!(!cache.look(&root).git);
        std::fs::create_dir(root.join(".git")).unwrap();
        settles(&cache, &root);
        assert!(cache.look(&root).git);
        std::fs::remove_dir(root.join(".git")).unwrap();
        settles(&cache, &root);
        assert!(!cache.look(&root).git);
    }

    #[test]
    fn renaming_an_ancestor_drops_everything_beneath_it() {
        let (_t, root) = tree();
        let dir = root.join("a/b/c");
        std::fs::create_dir_all(&dir).unwrap();
        write_file(&dir, r#"{"workspace": "old"}"#);
        let other = root.join("x/b/c");
        std::fs::create_dir_all(&other).unwrap();
        write_file(&other, r#"{"workspace": "new"}"#);
        let cache = LookupCache::new(CacheConfig::default());
        // Only the deep folder is looked at, so `a` is watched as an ancestor only.
        assert_eq!(cache.look(&dir), DirLook::file("old"));
        std::fs::rename(root.join("a"), root.join("gone")).unwrap();
        std::fs::rename(root.join("x"), root.join("a")).unwrap();
        settles(&cache, &dir);
        assert_eq!(cache.look(&dir), DirLook::file("new"));
    }

    #[test]
    fn invalidate_drops_the_folder_and_its_subtree_only() {
        let (_t, root) = tree();
        for d in ["p", "p/q", "pq"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let cache = LookupCache::new(CacheConfig::default());
        for d in ["p", "p/q", "pq"] {
            cache.look(&root.join(d));
        }
        cache.invalidate(&root.join("p"));
        let e = cache.read_entries();
        let kept: Vec<_> = e.order.iter().map(|p| p.to_path_buf()).collect();
        assert_eq!(kept, vec![root.join("pq")]);
    }

    impl LookupCache {
        /// Waits until the worker has applied every message sent before.
        fn flush(&self) {
            let (tx, rx) = mpsc::channel();
            self.to_worker.send(WorkerMsg::Flush(tx)).unwrap();
            rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }

        fn watched(&self) -> Vec<PathBuf> {
            self.with_watches(|table| table.watched.iter().cloned().collect())
        }
    }

    #[test]
    fn an_evicted_worktrees_admin_folder_gives_its_watches_back() {
        let (_t, root) = tree();
        let admin = worktree(&root);
        let w = root.join("w");
        // Made before anything is watched, so no event races the eviction.
        let others: Vec<PathBuf> = (0..40).map(|i| root.join(format!("d{i}"))).collect();
        for d in &others {
            std::fs::create_dir(d).unwrap();
        }
        let cache = LookupCache::new(config(10, 1000));
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Worktree { .. })
        ));
        cache.flush();
        assert!(cache.watched().contains(&admin));
        for d in &others {
            cache.look(d);
        }
        cache.flush();
        assert!(
            !cache.read_entries().slots.contains_key(w.as_path()),
            "{:?}",
            cache.read_entries().order
        );
        let repository = root.join("r");
        let held: Vec<_> = cache
            .watched()
            .into_iter()
            .filter(|p| p.starts_with(&repository))
            .collect();
        assert_eq!(held, Vec::<PathBuf>::new());
        // Looked at again, it is verified and watched again.
        assert!(matches!(
            cache.look(&w).link.as_deref(),
            Some(GitLink::Worktree { .. })
        ));
        assert!(cache.watched().contains(&admin));
    }

    #[test]
    fn an_admin_folder_another_worktree_rests_on_keeps_its_watches() {
        let (_t, root) = tree();
        let admin = worktree(&root);
        // A second worktree of the same repository.
        let admin2 = worktree_named(&root, "w2");
        let cache = LookupCache::new(config(1000, 1000));
        cache.look(&root.join("w"));
        cache.look(&root.join("w2"));
        cache.invalidate(&root.join("w"));
        cache.flush();
        let watched = cache.watched();
        assert!(!watched.contains(&admin), "{watched:?}");
        assert!(watched.contains(&admin2), "{watched:?}");
        assert!(
            watched.contains(&root.join("r/.git/worktrees")),
            "{watched:?}"
        );
        assert!(cache.look_along_in_memory(vec![root.join("w2")]).is_some());
    }

    #[test]
    fn the_entry_bound_holds_and_evicted_watches_are_given_back() {
        let (_t, root) = tree();
        let cache = LookupCache::new(config(10, 1000));
        for i in 0..40 {
            let d = root.join(format!("d{i}"));
            std::fs::create_dir(&d).unwrap();
            cache.look(&d);
            assert!(cache.stats().entries <= 10);
        }
        let ancestors = root.ancestors().count() - 1;
        // The worker gives an evicted entry's watches back: once it has caught up, they are.
        cache.flush();
        assert!(
            cache.stats().watches <= ancestors + 10,
            "watches were not given back: {:?}",
            cache.stats()
        );
    }

    #[test]
    fn without_watches_entries_are_stat_checked_and_recent_ones_are_not_kept() {
        let (_t, root) = tree();
        write_file(&root, r#"{"workspace": "aaaa"}"#);
        // The cache's clock moves only when the test says.
        let wall = crate::clock::ManualWall::new();
        let cache = LookupCache::with_wall_clock(
            CacheConfig {
                trust_after: Duration::from_secs(2),
                ..config(100, 0)
            },
            Arc::new(RealFs),
            |_| Box::new(NoWatcher),
            wall.clock(),
        );
        // Just written: too recent to trust a fingerprint, so read every time.
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        assert_eq!(cache.stats().entries, 0);
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        assert_eq!(cache.stats().entries, 0, "kept while still recent");
        wall.advance(Duration::from_secs(3));
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        assert_eq!(cache.stats().entries, 1);
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        assert_eq!(cache.stats().hits, 1);
        // No watch exists, yet the very next look sees the change.
        std::fs::write(project_file_path(&root), r#"{"workspace": "bbbb"}"#).unwrap();
        assert_eq!(cache.look(&root), DirLook::file("bbbb"));
        std::fs::create_dir(root.join(".git")).unwrap();
        assert!(cache.look(&root).git);
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_symlinked_project_file_is_never_cached() {
        let (_t, root) = tree();
        std::fs::create_dir(root.join(PROJECT_DIR)).unwrap();
        let target = root.join("target.json");
        std::fs::write(&target, r#"{"workspace": "aaaa"}"#).unwrap();
        std::os::unix::fs::symlink(&target, project_file_path(&root)).unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        assert_eq!(cache.stats().entries, 0);
        std::fs::write(&target, r#"{"workspace": "bbbb"}"#).unwrap();
        assert_eq!(cache.look(&root), DirLook::file("bbbb"));
    }

    /// A cache whose watches are real but whose events are all dropped: what it answers right
    /// comes from checks on use alone.
    fn deaf_cache(trust_after: Duration) -> Arc<LookupCache> {
        LookupCache::with_parts(
            CacheConfig {
                trust_after,
                ..CacheConfig::default()
            },
            Arc::new(RealFs),
            |_| Box::new(NotifyWatcher::new(EventSink::new(|_| {})).unwrap()),
        )
    }

    #[test]
    fn a_project_file_with_two_names_is_checked_on_every_use_and_never_from_memory() {
        let (_t, root) = tree();
        let dir = root.join("top/proj");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        let other = root.join("other/pf.json");
        std::fs::write(&other, r#"{"workspace": "aaaa"}"#).unwrap();
        std::fs::create_dir(dir.join(PROJECT_DIR)).unwrap();
        std::fs::hard_link(&other, project_file_path(&dir)).unwrap();
        // No event ever arrives, and the file's stamp is trusted at once: only the check on use
        // can see a write through the other name.
        let cache = deaf_cache(Duration::ZERO);
        assert_eq!(cache.look(&dir), DirLook::file("aaaa"));
        assert_eq!(cache.stats().entries, 1, "kept, with its stamp");
        assert_eq!(cache.look(&dir), DirLook::file("aaaa"));
        assert_eq!(cache.stats().hits, 1);
        assert!(cache.look_along_in_memory(vec![dir.clone()]).is_none());
        assert!(!cache.knows_canonical_dir(&dir));
        std::fs::write(&other, r#"{"workspace": "bbbbbb"}"#).unwrap();
        assert_eq!(cache.look(&dir), DirLook::file("bbbbbb"));
        // A fresh stamp is not trusted: a second write in the same tick would look the same.
        let recent = deaf_cache(Duration::from_secs(3600));
        assert_eq!(recent.look(&dir), DirLook::file("bbbbbb"));
        assert_eq!(recent.stats().entries, 0);
    }

    // Under Wine 8 the file is not seen to have one name, so it is checked on use (the safe
    // side); real Windows is unchecked (ADR 0038).
    #[cfg(unix)]
    #[test]
    fn a_project_file_with_one_name_is_answered_from_memory() {
        let (_t, root) = tree();
        write_file(&root, r#"{"workspace": "aaaa"}"#);
        let cache = deaf_cache(Duration::ZERO);
        cache.look(&root);
        assert!(cache.look_along_in_memory(vec![root.clone()]).is_some());
        assert!(cache.knows_canonical_dir(&root));
    }

    /// inotify watches files, not names: a hard link made later, and a write through it, reach
    /// the project file's own watch though no watched folder holds the new name.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_hard_link_made_later_and_a_write_through_it_are_seen() {
        let (_t, root) = tree();
        let dir = root.join("proj");
        std::fs::create_dir(&dir).unwrap();
        write_file(&dir, r#"{"workspace": "aaaa"}"#);
        let elsewhere = tempfile::tempdir().unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        assert_eq!(cache.look(&dir), DirLook::file("aaaa"));
        assert!(cache.look_along_in_memory(vec![dir.clone()]).is_some());
        let x = elsewhere.path().join("x");
        std::fs::hard_link(project_file_path(&dir), &x).unwrap();
        std::fs::write(&x, r#"{"workspace": "bbbb"}"#).unwrap();
        settles(&cache, &dir);
        assert_eq!(cache.look(&dir), DirLook::file("bbbb"));
        assert!(
            cache.look_along_in_memory(vec![dir.clone()]).is_none(),
            "two names now: checked on use"
        );
    }

    /// A watcher that records what it was asked.
    #[derive(Default, Clone)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl DirWatcher for Recorder {
        fn watch(&mut self, dir: &Path) -> Result<(), WatchError> {
            self.0
                .lock()
                .unwrap()
                .push(format!("watch {}", dir.display()));
            Ok(())
        }
        fn unwatch(&mut self, dir: &Path) {
            self.0
                .lock()
                .unwrap()
                .push(format!("unwatch {}", dir.display()));
        }
    }

    fn table_over(watcher: Recorder) -> WatchTable {
        WatchTable {
            watcher: Box::new(watcher),
            watched: BTreeSet::new(),
            max: 100,
            kernel_full: false,
            on: HashMap::new(),
            paths_of: HashMap::new(),
            dropped: Vec::new(),
        }
    }

    /// A batch whose folder turns out to be a link (inotify follows it) gives back the watches
    /// it added beneath that folder too, so a path is never watched while an ancestor is not.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_batch_gives_back_what_it_added_beneath_a_link() {
        let (_t, root) = tree();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let (link, sub) = (root.join("link"), root.join("link/sub"));
        let calls = Recorder::default();
        let mut table = table_over(calls.clone());
        assert!(!table.add_all(&[&root, &link, &sub, &sub.join(PROJECT_DIR)]));
        let left: Vec<&PathBuf> = table.watched.iter().collect();
        assert_eq!(left, [&root]);
        let calls = calls.0.lock().unwrap();
        for gone in [&link, &sub] {
            assert!(
                calls.contains(&format!("unwatch {}", gone.display())),
                "{calls:?}"
            );
        }
        // Watched folders are left out of a batch; a full one adds nothing.
        drop(calls);
        let mut table = table_over(Recorder::default());
        assert!(table.add_all(&[&root, &root.join("real")]));
        assert!(table.add_all(&[&root, &root.join("real"), &root.join("real/sub")]));
        assert_eq!(table.watched.len(), 3);
        table.max = 3;
        assert!(!table.add_all(&[&root.join("real/sub/none")]));
        assert_eq!(table.watched.len(), 3);
    }

    #[test]
    fn paths_watching_one_file_are_given_back_together_with_what_is_beneath_them() {
        let calls = Recorder::default();
        let mut table = table_over(calls.clone());
        // Two names of one project file, a folder and a path through a link to it, and others.
        let files = [
            ("/a/.berth/f", (1, 7)),
            ("/b/.berth/f", (1, 7)),
            ("/c/.berth/f", (1, 8)),
            ("/real", (1, 9)),
            ("/real/sub", (1, 10)),
            ("/link", (1, 9)),
        ];
        for (path, file) in files {
            table.watched.insert(PathBuf::from(path));
            table.record(Path::new(path), file);
        }
        table.forget_under(Path::new("/a"));
        table.forget_under(Path::new("/link"));
        assert_eq!(
            table.dropped,
            [PathBuf::from("/b/.berth/f"), PathBuf::from("/real")]
        );
        let left: Vec<&Path> = table.watched.iter().map(PathBuf::as_path).collect();
        assert_eq!(left, [Path::new("/c/.berth/f")]);
        assert_eq!(table.on.len(), 1);
        assert_eq!(table.paths_of.len(), 1);
        let calls = calls.0.lock().unwrap();
        for gone in ["/b/.berth/f", "/real", "/real/sub"] {
            assert!(calls.contains(&format!("unwatch {gone}")), "{calls:?}");
        }
    }

    /// inotify follows a link: a watch added on a path that is a link by then (a fill racing a
    /// folder turned into a link) lands on the real folder's watch. It is given back at once,
    /// with the real folder's, whose entries go, so removing the link later takes nothing.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_watch_through_a_link_never_outlives_the_real_folders() {
        let (_t, root) = tree();
        let real = root.join("real");
        std::fs::create_dir(&real).unwrap();
        let cache = LookupCache::new(CacheConfig::default());
        assert!(!cache.look(&real).git);
        std::os::unix::fs::symlink(&real, root.join("link")).unwrap();
        cache.look(&root.join("link"));
        assert_eq!(
            cache.stats().entries,
            0,
            "the real folder's entry went with its watch"
        );
        std::fs::remove_file(root.join("link")).unwrap();
        assert!(!cache.look(&real).git);
        std::fs::create_dir(real.join(".git")).unwrap();
        settles(&cache, &real);
        assert!(cache.look(&real).git);
    }

    /// A watcher whose events are swallowed unless the test lets them through: it shows the
    /// cache really depends on events, and that an overflow alone restores correctness.
    #[test]
    fn an_overflow_drops_the_cache_and_its_watches() {
        let (_t, root) = tree();
        write_file(&root, r#"{"workspace": "aaaa"}"#);
        let injected: Arc<Mutex<Option<EventSink>>> = Arc::default();
        let cache = LookupCache::with_parts(CacheConfig::default(), Arc::new(RealFs), {
            let injected = injected.clone();
            move |sink| {
                *injected.lock().unwrap() = Some(sink);
                // Events are dropped on the floor.
                Box::new(NotifyWatcher::new(EventSink::new(|_| {})).unwrap())
            }
        });
        assert_eq!(cache.look(&root), DirLook::file("aaaa"));
        std::fs::write(project_file_path(&root), r#"{"workspace": "bbbb"}"#).unwrap();
        // Whatever the worker had queued is applied: still nothing tells it of the write.
        cache.flush();
        assert_eq!(
            cache.look(&root),
            DirLook::file("aaaa"),
            "stale without events"
        );
        let sink = injected.lock().unwrap().clone().unwrap();
        sink.send(WatchEvent::Overflow);
        settles(&cache, &root);
        assert_eq!(cache.look(&root), DirLook::file("bbbb"));
        assert_eq!(cache.stats().overflows, 1);
    }

    #[test]
    fn a_fill_racing_an_invalidation_stores_nothing() {
        let (_t, root) = tree();
        let cache = LookupCache::new(CacheConfig::default());
        {
            let mut e = cache.write_entries();
            e.insert(&root, Slot::pending(u64::MAX));
        }
        // A concurrent fill reads through and leaves the other fill's slot alone.
        assert_eq!(cache.look(&root), DirLook::default());
        cache.invalidate(&root);
        assert_eq!(cache.stats().entries, 0);
    }

    #[test]
    fn settings_bound_the_cache() {
        let c = CacheConfig::from_settings(|s| match s {
            Setting::CacheMaxEntries => Some("500".into()),
            Setting::CacheMaxWatches => Some("nonsense".into()),
            _ => None,
        });
        assert_eq!(c.max_entries, 500);
        assert_eq!(c.max_watches, 65_536);
        assert_eq!(CacheConfig::default().max_entries, 100_000);
    }

    #[test]
    fn a_local_temp_folder_delivers_events() {
        let (_t, root) = tree();
        // tmpfs or a disk filesystem here; a network one would make this test meaningless.
        assert!(delivers_events(&root));
    }
}
