//! Where each client session started, as its session-start hook said: the folder a
//! pre-tool call's session works in. A client may hand a later hook another folder (Codex
//! gives the pre-tool hook a shell call's `workdir` as its `cwd`), and the session's
//! workspace must not follow it (docs/decisions/0048-the-native-tool-guard.md).
//!
//! Memory only, and bounded: after a daemon restart, or once a session's entry went, the
//! guard judges by the call's own folder, as before.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The most sessions remembered; the oldest goes first.
pub const MAX_REMEMBERED: usize = 1024;

/// Each client session's starting folder, by client and the client's session id.
#[derive(Debug, Default)]
pub struct StartedIn {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    folders: HashMap<(String, String), PathBuf>,
    order: VecDeque<(String, String)>,
}

impl StartedIn {
    /// Records that `client`'s session `id` started in `folder`; a session started again
    /// (resumed) keeps its latest folder. A call without an id is not recorded.
    pub fn record(&self, client: &str, id: &str, folder: &Path) {
        if id.is_empty() {
            return;
        }
        let key = (client.to_string(), id.to_string());
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner
            .folders
            .insert(key.clone(), folder.to_path_buf())
            .is_none()
        {
            inner.order.push_back(key);
            while inner.order.len() > MAX_REMEMBERED {
                if let Some(old) = inner.order.pop_front() {
                    inner.folders.remove(&old);
                }
            }
        }
    }

    /// Where `client`'s session `id` started, when its session-start was seen.
    pub fn folder(&self, client: &str, id: &str) -> Option<PathBuf> {
        if id.is_empty() {
            return None;
        }
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .folders
            .get(&(client.to_string(), id.to_string()))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_its_client_and_id_and_the_latest_start_wins() {
        let s = StartedIn::default();
        s.record("codex", "a", Path::new("/w/shop"));
        assert_eq!(s.folder("codex", "a"), Some(PathBuf::from("/w/shop")));
        assert_eq!(s.folder("claude-code", "a"), None);
        assert_eq!(s.folder("codex", "b"), None);
        s.record("codex", "a", Path::new("/w/other"));
        assert_eq!(s.folder("codex", "a"), Some(PathBuf::from("/w/other")));
        s.record("codex", "", Path::new("/w/x"));
        assert_eq!(s.folder("codex", ""), None);
    }

    #[test]
    fn a_flood_of_sessions_keeps_the_newest_and_stays_bounded() {
        let s = StartedIn::default();
        for i in 0..MAX_REMEMBERED + 10 {
            s.record("codex", &i.to_string(), Path::new("/w"));
        }
        let inner = s.inner.lock().unwrap();
        assert_eq!(inner.folders.len(), MAX_REMEMBERED);
        assert_eq!(inner.order.len(), MAX_REMEMBERED);
        drop(inner);
        assert_eq!(s.folder("codex", "0"), None);
        assert!(
            s.folder("codex", &(MAX_REMEMBERED + 9).to_string())
                .is_some()
        );
    }
}
