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
use crate::clock::{self, WallClock};
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

/// What a device is made of besides its version; the real ones come from [`Device::new`].
struct Parts {
    store: Store,
    data_dir: PathBuf,
    socket: PathBuf,
    home: Option<PathBuf>,
    start_ctx: GuardCtx,
    fs: Arc<LookupCache>,
    wall: WallClock,
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
    /// The time of day: the system's, or a test's (docs/decisions/0054-the-daemon-on-its-own-clock.md).
    wall: WallClock,
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
        Device::assemble(
            Parts {
                store,
                data_dir,
                socket,
                home,
                start_ctx,
                fs: cache,
                wall: clock::system(),
            },
            version,
        )
    }

    fn assemble(parts: Parts, version: String) -> Result<Device, StoreError> {
        let Parts {
            store,
            data_dir,
            socket,
            home,
            start_ctx,
            fs,
            wall,
        } = parts;
        Ok(Device {
            snapshot: RwLock::new(Snapshot::read(&store)?),
            store,
            data_dir,
            start_ctx,
            socket,
            home,
            fs,
            wall,
            version,
            stop: tokio::sync::watch::channel(false).0,
            sessions: Sessions::default(),
            pool: Pool::default(),
            project_files: Mutex::new(()),
            answers: Answers::default(),
            started_in: StartedIn::default(),
        })
    }

    /// The time of day, in seconds since the epoch, on the device's wall clock.
    pub(crate) fn now_secs(&self) -> i64 {
        clock::secs((self.wall)())
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

/// The devices tests build: one constructor for each kind, so no test spells the parts that
/// never change.
#[cfg(test)]
impl Device {
    /// A device over `store` whose data folder is `data` (a real folder): the socket beside it,
    /// the version "test", `home` where walks stop.
    pub(crate) fn for_test(store: Store, data: &Path, home: Option<PathBuf>) -> Device {
        Device::new(
            store,
            data.to_path_buf(),
            data.join("berthd.sock"),
            home,
            "test".into(),
        )
        .expect("a test device")
    }

    /// A device that touches no folder and no clock of its own: the store in memory, walks
    /// looking at `fs` (no watches, so nothing is answered from memory), the time of day on the
    /// returned manual clock, deadlines on tokio's. Its data folder, home (`/home/u`) and socket
    /// are names only.
    pub(crate) fn in_memory(
        fs: impl berth_core::fsview::FsView + Send + Sync + 'static,
    ) -> (Device, clock::ManualWall) {
        let wall = clock::ManualWall::new();
        let home = PathBuf::from("/home/u");
        let data_dir = home.join(".local/share/berth");
        let fs = LookupCache::with_wall_clock(
            CacheConfig::default(),
            Arc::new(fs),
            |_| Box::new(crate::cache::watch::NoWatcher),
            wall.clock(),
        );
        let device = Device::assemble(
            Parts {
                store: Store::in_memory(),
                socket: data_dir.join("berthd.sock"),
                start_ctx: GuardCtx {
                    homes: vec![home.clone()],
                    temp_dir: PathBuf::from("/tmp"),
                    data_dir: data_dir.clone(),
                },
                data_dir,
                home: Some(home),
                fs,
                wall: wall.clock(),
            },
            "test".into(),
        )
        .expect("an in-memory device");
        (device, wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::Lane;
    use berth_core::memfs::MemFs;
    use berth_core::registry::Home;
    use berth_vocab::codes::Code;
    use std::sync::mpsc;
    use std::time::Duration;
    use tokio::task::JoinHandle;

    const JUST: Duration = Duration::from_millis(1);

    /// Lets every task woken so far run.
    async fn settle() {
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
    }

    /// A call on the pool that writes workspace `name` once `go` says so (or gives up when
    /// `go` is dropped), started before this returns; `wrote` says whether the write landed.
    async fn a_write_under_way(
        d: &Arc<Device>,
        name: &'static str,
    ) -> (
        JoinHandle<Result<(), BerthError>>,
        mpsc::Sender<()>,
        mpsc::Receiver<bool>,
    ) {
        let (go, wait) = mpsc::channel::<()>();
        let (wrote, landed) = mpsc::channel();
        let (started, on_start) = tokio::sync::oneshot::channel();
        let call = tokio::spawn({
            let d = d.clone();
            async move {
                let pool_d = d.clone();
                d.pool()
                    .run(Lane::Requests, move || {
                        let _ = started.send(());
                        wait.recv().map_err(|_| BerthError::internal("let go"))?;
                        let done = pool_d.store().create_workspace(name, &Home::Managed);
                        wrote.send(done.is_ok()).unwrap();
                        Ok(done?)
                    })
                    .await
            }
        });
        on_start.await.unwrap();
        (call, go, landed)
    }

    fn has(d: &Device, name: &str) -> bool {
        d.store().snapshot().unwrap().names().contains(&name)
    }

    #[test]
    fn the_device_reads_the_time_of_day_from_its_wall_clock() {
        let (d, wall) = Device::in_memory(MemFs::default());
        let before = d.now_secs();
        assert_eq!(d.now_secs(), before, "the manual clock moved by itself");
        wall.advance(Duration::from_secs(3600));
        assert_eq!(d.now_secs(), before + 3600);
    }

    /// Paused: the test steps tokio's clock through the grace period.
    #[tokio::test(start_paused = true)]
    async fn a_stop_refuses_new_work_and_lets_a_call_under_way_commit_within_the_grace() {
        let (d, _) = Device::in_memory(MemFs::default());
        let d = Arc::new(d);
        let (call, go, landed) = a_write_under_way(&d, "late").await;
        let stop = tokio::spawn({
            let d = d.clone();
            async move { d.shut_down(STOP_GRACE).await }
        });
        settle().await;
        let refused = d.pool().run(Lane::Requests, || Ok(())).await.unwrap_err();
        assert_eq!(refused.code, Code::ShuttingDown, "{refused}");
        tokio::time::advance(STOP_GRACE - JUST).await;
        settle().await;
        assert!(!stop.is_finished(), "stopped with a call under way");
        go.send(()).unwrap();
        assert!(landed.recv().unwrap(), "a call within the grace may commit");
        call.await.unwrap().unwrap();
        stop.await.unwrap();
        assert!(has(&d, "late"));
        let after = d.store().create_workspace("after", &Home::Managed);
        assert!(after.is_err(), "a write after the stop committed");
        assert!(!has(&d, "after"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_stuck_past_the_grace_is_answered_stopped_and_its_write_never_lands() {
        let (d, _) = Device::in_memory(MemFs::default());
        let d = Arc::new(d);
        let (call, go, landed) = a_write_under_way(&d, "stuck").await;
        let stop = tokio::spawn({
            let d = d.clone();
            async move { d.shut_down(STOP_GRACE).await }
        });
        settle().await;
        tokio::time::advance(STOP_GRACE - JUST).await;
        settle().await;
        assert!(!stop.is_finished(), "stopped before the grace was over");
        tokio::time::advance(JUST).await;
        // The stop ends at the grace, with the call still stuck.
        settle().await;
        assert!(stop.is_finished(), "not stopped at the end of the grace");
        assert!(call.is_finished(), "the stuck call was not answered");
        let err = call.await.unwrap().unwrap_err();
        assert_eq!(err.code, Code::ShuttingDown, "{err}");
        go.send(()).unwrap();
        assert!(!landed.recv().unwrap(), "a call answered as stopped wrote");
        assert!(!has(&d, "stuck"));
    }
}
