//! The device: the daemon's state and the operations on it. It owns the
//! store, an in-memory snapshot of the registry that every resolution reads,
//! the filesystem view, and the stop signal.
//!
//! **Architecture Invariant:** every write goes to the store first and is
//! answered only after it committed; the snapshot is then rebuilt from the
//! store, so what resolution reads is never ahead of what is durable.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use crate::cache::{CacheConfig, LookupCache};
use crate::error::BerthError;
use crate::ops::answers::Answers;
use crate::ops::live::Sessions;
use crate::ops::started_in::StartedIn;
use crate::pool::Pool;
use crate::store::{Store, StoreError};
use berth_core::homeguard::GuardCtx;
use berth_core::registry::Registry;
use berth_vocab::settings::Setting;

/// How long calls under way may run once a stop starts; after it, nothing
/// commits any more (docs/decisions/0015-stop-means-stopped.md).
pub(crate) const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// What every request reads from memory, rebuilt from the store after each committed write.
struct Snapshot {
    registry: Arc<Registry>,
    /// `guard.cross_workspace` in effect, so that the guard never reads the store for it.
    guard: &'static str,
}

impl Snapshot {
    fn read(store: &Store) -> Result<Self, StoreError> {
        let registry = Arc::new(store.snapshot()?);
        let guard = store.get_setting(Setting::GuardCrossWorkspace.key())?;
        Ok(Self {
            registry,
            guard: Setting::GuardCrossWorkspace.choice(guard.as_deref()),
        })
    }
}

/// The daemon's state.
pub struct Device {
    store: Store,
    snapshot: RwLock<Snapshot>,
    data_dir: PathBuf,
    /// The data folder and the temporary folder canonical, read once at start: the guard's
    /// homes are spelled with them, and it must not touch the disk for them.
    start_ctx: GuardCtx,
    socket: PathBuf,
    /// The user's home directory, where every walk stops.
    home: Option<PathBuf>,
    /// The lookup cache every walk looks through (the real filesystem inside).
    fs: Arc<LookupCache>,
    version: String,
    stop: tokio::sync::watch::Sender<bool>,
    sessions: Sessions,
    /// Where blocking work runs (docs/decisions/0015-stop-means-stopped.md).
    pool: Pool,
    /// Held by `workspace use` from writing the project file until its
    /// registry write is done (see `use_workspace`).
    project_files: Mutex<()>,
    /// Resolutions from memory, kept while the cache and the registry stay as they were.
    answers: Answers,
    /// Where each client session started, as its session-start hook said.
    started_in: StartedIn,
}

impl Device {
    /// Wraps an opened store.
    pub fn new(
        store: Store,
        data_dir: PathBuf,
        socket: PathBuf,
        home: Option<PathBuf>,
        version: String,
    ) -> Result<Device, StoreError> {
        let snapshot = RwLock::new(Snapshot::read(&store)?);
        // Compare canonical paths: a walk from /home/u/x must stop at the
        // home even when $HOME is spelled through a symlink.
        let home = home.map(|h| crate::canonical::canonicalize(&h).unwrap_or(h));
        let canon = |p: PathBuf| crate::canonical::canonicalize(&p).unwrap_or(p);
        let start_ctx = GuardCtx {
            homes: home.iter().cloned().collect(),
            temp_dir: canon(std::env::temp_dir()),
            data_dir: canon(data_dir.clone()),
        };
        // Read once, at start: changing these settings takes effect on the next daemon.
        let cache = LookupCache::new(CacheConfig::from_settings(|setting| {
            store.get_setting(setting.key()).ok().flatten()
        }));
        Ok(Device {
            store,
            snapshot,
            data_dir,
            start_ctx,
            socket,
            home,
            fs: cache,
            version,
            stop: tokio::sync::watch::channel(false).0,
            sessions: Sessions::default(),
            pool: Pool::default(),
            project_files: Mutex::new(()),
            answers: Answers::default(),
            started_in: StartedIn::default(),
        })
    }

    /// The version this daemon advertises.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The registry on disk.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The data folder this daemon serves.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The socket this daemon listens on.
    pub(crate) fn socket(&self) -> &Path {
        &self.socket
    }

    /// The lookup cache every walk looks through.
    pub(crate) fn fs(&self) -> &Arc<LookupCache> {
        &self.fs
    }

    /// The sessions connected to this daemon.
    pub(crate) fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Resolutions from memory, kept while the cache and the registry stay as they were.
    pub(crate) fn answers(&self) -> &Answers {
        &self.answers
    }

    /// Where each client session started, as its session-start hook said.
    pub(crate) fn started_in(&self) -> &StartedIn {
        &self.started_in
    }

    /// Where blocking work runs.
    pub(crate) fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Held by `workspace use` from writing the project file until its registry write is done.
    pub(crate) fn project_files(&self) -> &Mutex<()> {
        &self.project_files
    }

    /// The current registry snapshot.
    pub fn registry(&self) -> Arc<Registry> {
        self.snapshot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .registry
            .clone()
    }

    /// The registry snapshot and `guard.cross_workspace` in effect with it.
    pub(crate) fn registry_and_guard(&self) -> (Arc<Registry>, &'static str) {
        let s = self.snapshot.read().unwrap_or_else(|p| p.into_inner());
        (s.registry.clone(), s.guard)
    }

    /// The guard's context read at start (the data folder and the temporary folder canonical).
    pub(crate) fn start_guard_ctx(&self) -> &GuardCtx {
        &self.start_ctx
    }

    /// Rebuilds the snapshot after a committed write.
    pub(crate) fn refresh(&self) -> Result<Arc<Registry>, BerthError> {
        let fresh = Snapshot::read(&self.store)?;
        let registry = fresh.registry.clone();
        *self.snapshot.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(registry)
    }

    /// Stops the daemon's work (docs/decisions/0015-stop-means-stopped.md):
    /// new calls are refused at once; calls under way get `grace` to finish;
    /// then every write is refused in the store itself, and once a commit
    /// let through just before has ended, [`Device::stopped`] completes. So
    /// when this returns (and the stop is answered), no write commits any
    /// more, whatever threads are still stuck.
    pub async fn shut_down(&self, grace: std::time::Duration) {
        self.pool.stop_taking_work();
        if !self.pool.drain(grace).await {
            tracing::warn!(
                ?grace,
                "calls still running after the grace period; they can no longer write"
            );
        }
        self.store.close_writes();
        // A commit let through just before finishes in milliseconds; a call
        // holding the connection longer is waiting on SQLite and will be
        // refused when it tries to commit.
        let until = tokio::time::Instant::now() + std::time::Duration::from_millis(500);
        while !self.store.is_idle() && tokio::time::Instant::now() < until {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        self.pool.close();
        self.stop.send_replace(true);
    }

    /// Completes once [`Device::shut_down`] has finished.
    pub fn stopped(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.stop.subscribe();
        async move {
            let _ = rx.wait_for(|stopped| *stopped).await;
        }
    }

    /// The user's home, the only home of a caller without an extra one (borrowed: a
    /// resolution from memory allocates as little as it can).
    pub(crate) fn own_homes(&self) -> &[PathBuf] {
        self.home.as_slice()
    }

    /// The homes every walk stops at: the user's, and the caller's extra one.
    pub(crate) fn homes(&self, extra_home: Option<&Path>) -> Vec<PathBuf> {
        let mut homes: Vec<PathBuf> = self.home.iter().cloned().collect();
        if let Some(extra) = extra_home {
            homes.push(
                crate::canonical::canonicalize(extra).unwrap_or_else(|_| extra.to_path_buf()),
            );
        }
        homes
    }

    /// `no workspace x — workspaces: a, b`
    pub(crate) fn unknown_workspace(&self, name: &str) -> BerthError {
        let reg = self.registry();
        BerthError::not_found(berth_vocab::text::no_workspace(name, &reg.names()))
    }
}
