//! Filesystem watches for the lookup cache: one watcher for every directory, non-recursive
//! watches, and raw events handed on at once. The watcher sits behind [`DirWatcher`], so the
//! cache does not know which notify it runs on.
//!
//! The handler runs on notify's own thread and a slow handler overflows the kernel queue, so it
//! only translates an event into a [`WatchEvent`] and passes it to an [`EventSink`]; the cache's
//! worker thread decides what it invalidates. Access events (opens and closes, the daemon's own
//! reads of project files and git's records among them) never change what a folder holds, so
//! they are not asked for ([`EVENT_KINDS`]): on Linux the kernel does not queue them at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use notify::event::{EventKind, ModifyKind};
use notify::{EventKindMask, PathOp, RecursiveMode, Watcher};

/// The events the cache is told of: creations, removals, writes, attribute changes (a hard
/// link made or taken away, a mode changed) and renames. No opens or closes: under notify 8,
/// which asked inotify for `IN_OPEN`, each of the daemon's own reads in a watched folder woke
/// the watcher's thread (docs/decisions/0055-the-watcher-asks-for-no-access-events.md).
/// A folder's own removal or move, the kernel's dropping of a watch and a queue overflow are
/// reported whatever the mask.
pub(crate) const EVENT_KINDS: EventKindMask = EventKindMask::CORE;

/// What happened to a path, as far as the cache cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Something appeared at the path (created, or moved there).
    Create,
    /// The path was deleted.
    Remove,
    /// The path was renamed, from or to (inotify's `MOVED_FROM`, `MOVED_TO`, `MOVE_SELF`).
    Rename,
    /// A file's content changed.
    Content,
    /// Permissions, owner or times changed.
    Metadata,
    /// Anything else: treated like a structural change.
    Other,
}

impl ChangeKind {
    /// Whether the path may now name a different file or folder than before.
    pub fn is_structural(self) -> bool {
        matches!(
            self,
            Self::Create | Self::Remove | Self::Rename | Self::Other
        )
    }
}

/// One raw event, already translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// `paths` changed.
    Change {
        kind: ChangeKind,
        paths: Vec<PathBuf>,
    },
    /// Events were lost (the kernel queue overflowed, or the watcher reported an error): nothing
    /// cached can be trusted any more.
    Overflow,
}

/// Why a watch could not be added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchError {
    /// The kernel's watch limit (inotify `max_user_watches`) is reached.
    Limit,
    /// The folder is gone.
    NotFound,
    /// Anything else, in words.
    Other(String),
}

/// Where a watcher delivers its events. Cloning shares the destination.
#[derive(Clone)]
pub struct EventSink(Arc<dyn Fn(WatchEvent) + Send + Sync>);

impl EventSink {
    pub fn new(f: impl Fn(WatchEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    pub fn send(&self, event: WatchEvent) {
        (self.0)(event);
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}

/// Non-recursive directory watches. Implementations deliver events for a watched folder's own
/// entries and for the folder itself (deleted, moved) to the sink they were built with.
pub trait DirWatcher: Send {
    /// Watches `dir` (not its subfolders). Watching a watched folder again is harmless.
    fn watch(&mut self, dir: &Path) -> Result<(), WatchError>;
    /// Watches `dirs` in turn, stopping at the first that cannot be watched: how many were, and
    /// why the next one was not.
    fn watch_all(&mut self, dirs: &[&Path]) -> (usize, Option<WatchError>) {
        for (i, dir) in dirs.iter().enumerate() {
            if let Err(e) = self.watch(dir) {
                return (i, Some(e));
            }
        }
        (dirs.len(), None)
    }
    /// Stops watching `dir`; a folder not watched (or already gone) is fine.
    fn unwatch(&mut self, dir: &Path);
}

/// The real watcher: one notify watcher (inotify on Linux) for every folder.
pub struct NotifyWatcher {
    inner: notify::RecommendedWatcher,
}

impl NotifyWatcher {
    /// Starts the watcher; its events go to `sink`.
    pub fn new(sink: EventSink) -> Result<Self, WatchError> {
        Self::with_handler(move |res| {
            if let Some(event) = translate(res) {
                sink.send(event);
            }
        })
    }

    /// Starts the watcher, asking for [`EVENT_KINDS`]; notify's raw events go to `handler`.
    pub(crate) fn with_handler(
        handler: impl FnMut(notify::Result<notify::Event>) + Send + 'static,
    ) -> Result<Self, WatchError> {
        let config = notify::Config::default().with_event_kinds(EVENT_KINDS);
        let inner = <notify::RecommendedWatcher as Watcher>::new(handler, config)
            .map_err(|e| error_of(&e))?;
        Ok(Self { inner })
    }
}

impl DirWatcher for NotifyWatcher {
    fn watch(&mut self, dir: &Path) -> Result<(), WatchError> {
        self.inner
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| error_of(&e))
    }

    /// One batch: one round trip to notify's thread (on macOS one rebuild of the stream)
    /// instead of one per folder.
    fn watch_all(&mut self, dirs: &[&Path]) -> (usize, Option<WatchError>) {
        let ops = dirs
            .iter()
            .map(|d| PathOp::watch_non_recursive(*d))
            .collect();
        match self.inner.update_paths(ops) {
            Ok(()) => (dirs.len(), None),
            // The operations before the one that failed were applied, the rest were not.
            Err(e) if e.origin.is_some() => (
                dirs.len() - 1 - e.remaining.len(),
                Some(error_of(&e.source)),
            ),
            // notify's thread did not answer: which were applied is unknown, so none is kept.
            Err(e) => {
                for dir in dirs {
                    self.unwatch(dir);
                }
                (0, Some(error_of(&e.source)))
            }
        }
    }

    fn unwatch(&mut self, dir: &Path) {
        // Not found is the usual answer for a folder the kernel already dropped.
        let _ = self.inner.unwatch(dir);
    }
}

fn error_of(e: &notify::Error) -> WatchError {
    match &e.kind {
        notify::ErrorKind::MaxFilesWatch => WatchError::Limit,
        notify::ErrorKind::PathNotFound => WatchError::NotFound,
        notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
            WatchError::NotFound
        }
        // inotify's way of saying its watches ran out.
        #[cfg(unix)]
        notify::ErrorKind::Io(io) if io.raw_os_error() == Some(libc::ENOSPC) => WatchError::Limit,
        _ => WatchError::Other(e.to_string()),
    }
}

/// A notify event as the cache sees it; `None` for events that change nothing it holds.
pub fn translate(res: notify::Result<notify::Event>) -> Option<WatchEvent> {
    // A watcher error means events may be missing: the only safe reading is an overflow.
    let Ok(event) = res else {
        return Some(WatchEvent::Overflow);
    };
    // Overflow arrives as an event with the Rescan flag and no paths, never as an error.
    if event.need_rescan() || event.paths.is_empty() {
        return Some(WatchEvent::Overflow);
    }
    let kind = match event.kind {
        // Not asked for (`EVENT_KINDS`); dropped should a backend send one anyway.
        EventKind::Access(_) => return None,
        EventKind::Create(_) => ChangeKind::Create,
        EventKind::Remove(_) => ChangeKind::Remove,
        EventKind::Modify(ModifyKind::Name(_)) => ChangeKind::Rename,
        EventKind::Modify(ModifyKind::Data(_)) => ChangeKind::Content,
        EventKind::Modify(ModifyKind::Metadata(_)) => ChangeKind::Metadata,
        EventKind::Modify(_) | EventKind::Any | EventKind::Other => ChangeKind::Other,
    };
    Some(WatchEvent::Change {
        kind,
        paths: event.paths,
    })
}

/// A watcher that never watches: every folder is then re-checked on use. Used when no watcher
/// can be started (the inotify instance limit), and as the `max_watches = 0` configuration.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoWatcher;

impl DirWatcher for NoWatcher {
    fn watch(&mut self, _dir: &Path) -> Result<(), WatchError> {
        Err(WatchError::Limit)
    }

    fn unwatch(&mut self, _dir: &Path) {}
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use notify::event::{AccessKind, CreateKind, Flag, RemoveKind, RenameMode};
    use rstest::rstest;

    use super::*;

    fn event(kind: EventKind, path: &str) -> notify::Result<notify::Event> {
        Ok(notify::Event::new(kind).add_path(path.into()))
    }

    #[rstest]
    #[case::a_creation_is_structural(EventKind::Create(CreateKind::Folder), ChangeKind::Create)]
    #[case::a_removal_is_structural(EventKind::Remove(RemoveKind::Any), ChangeKind::Remove)]
    #[case::a_rename_is_a_rename(
        EventKind::Modify(ModifyKind::Name(RenameMode::From)),
        ChangeKind::Rename
    )]
    #[case::a_write_is_content(
        EventKind::Modify(ModifyKind::Data(notify::event::DataChange::Any)),
        ChangeKind::Content
    )]
    #[case::a_chmod_is_metadata(
        EventKind::Modify(ModifyKind::Metadata(notify::event::MetadataKind::Any)),
        ChangeKind::Metadata
    )]
    #[case::an_unknown_kind_is_other(EventKind::Any, ChangeKind::Other)]
    fn events_are_translated(#[case] kind: EventKind, #[case] expected: ChangeKind) {
        assert_eq!(
            translate(event(kind, "/p/x")),
            Some(WatchEvent::Change {
                kind: expected,
                paths: vec!["/p/x".into()]
            })
        );
    }

    #[test]
    fn opens_and_closes_are_dropped() {
        let open = EventKind::Access(AccessKind::Open(notify::event::AccessMode::Any));
        assert_eq!(translate(event(open, "/p/.berth/workspace.json")), None);
    }

    #[test]
    fn a_rescan_flag_is_an_overflow() {
        let ev = notify::Event::new(EventKind::Other).set_flag(Flag::Rescan);
        assert_eq!(translate(Ok(ev)), Some(WatchEvent::Overflow));
    }

    #[test]
    fn a_watcher_error_is_an_overflow() {
        let err = notify::Error::generic("queue lost");
        assert_eq!(translate(Err(err)), Some(WatchEvent::Overflow));
    }

    #[test]
    fn the_limit_error_is_recognised() {
        let err = notify::Error::new(notify::ErrorKind::MaxFilesWatch);
        assert_eq!(error_of(&err), WatchError::Limit);
    }

    #[test]
    fn a_real_watch_reports_a_project_file_appearing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let (tx, rx) = mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let mut w = NotifyWatcher::new(EventSink::new(move |ev| {
            let _ = tx.lock().unwrap().send(ev);
        }))
        .unwrap();
        w.watch(&dir).unwrap();
        std::fs::create_dir(dir.join(".berth")).unwrap();
        let got = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(
            got,
            WatchEvent::Change {
                kind: ChangeKind::Create,
                paths: vec![dir.join(".berth")]
            }
        );
    }

    #[test]
    fn a_batch_stops_at_a_folder_it_cannot_watch_and_says_how_far_it_went() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        let mut w = NotifyWatcher::new(EventSink::new(|_| {})).unwrap();
        assert_eq!(w.watch_all(&[&dir, &a]), (2, None));
        let gone = dir.join("gone");
        assert_eq!(
            w.watch_all(&[&b, &gone, &dir]),
            (1, Some(WatchError::NotFound))
        );
    }

    #[test]
    fn watching_a_missing_folder_says_not_found() {
        let mut w = NotifyWatcher::new(EventSink::new(|_| {})).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            w.watch(&tmp.path().join("nonexistent/berth/test")),
            Err(WatchError::NotFound)
        );
    }
}
