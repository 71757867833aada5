//! The registry's daemon record: `<data>/berthd.json` says where the one
//! daemon of this data folder listens (socket, pid, version, data folder).
//!
//! The data folder is the registry's identity, so it is also where clients
//! look first: a client whose socket variables were stripped (Codex, the
//! MCP SDKs) still finds the daemon a full-environment client started. The
//! record only says where to look; the socket is verified like any other
//! before anything is sent, and the daemon checks every request's data
//! folder. See docs/decisions/0013-one-daemon-per-data-folder.md.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::paths;

/// What the running daemon wrote about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonRecord {
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Its process id.
    pub pid: u32,
    /// Its version.
    pub version: String,
    /// The data folder it serves.
    pub data_dir: PathBuf,
    /// Set when it listens in a folder of its own because the folder of
    /// the socket it derived was another user's (ADR 0042).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
}

/// Why a daemon listens in a folder of its own: the socket it derived, and
/// what was wrong with that socket's folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fallback {
    /// The derived socket, never used while its folder is refused.
    pub instead_of: PathBuf,
    /// What is wrong with its folder ("its folder ... belongs to uid ...").
    pub because: String,
}

/// Reads the record; `None` when there is none or it cannot be parsed (a
/// stale or half-made record only costs a fallback to the derived socket).
pub fn read(data_dir: &Path) -> Option<DaemonRecord> {
    let bytes = std::fs::read(paths::record_path(data_dir)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the record atomically (a new record is 0600), so a reader sees
/// the old record or the new one, never half of one.
pub fn write(data_dir: &Path, record: &DaemonRecord) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
    crate::atomic::write_atomic_mode(&paths::record_path(data_dir), &text, 0o600)
}

/// Removes the record if it is `pid`'s, so a daemon on its way out never
/// removes its successor's.
pub fn remove_if_ours(data_dir: &Path, pid: u32) {
    if read(data_dir).is_some_and(|r| r.pid == pid) {
        let _ = std::fs::remove_file(paths::record_path(data_dir));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_record_round_trips_is_private_and_is_removed_only_by_its_daemon() {
        let tmp = tempfile::tempdir().unwrap();
        let rec = DaemonRecord {
            socket: "/run/user/1000/berth/berthd.sock".into(),
            pid: 42,
            version: "0.1.0".into(),
            data_dir: tmp.path().into(),
            fallback: None,
        };
        assert_eq!(read(tmp.path()), None);
        write(tmp.path(), &rec).unwrap();
        assert_eq!(read(tmp.path()), Some(rec.clone()));
        let mode = std::fs::metadata(paths::record_path(tmp.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        remove_if_ours(tmp.path(), 43);
        assert_eq!(read(tmp.path()), Some(rec));
        remove_if_ours(tmp.path(), 42);
        assert_eq!(read(tmp.path()), None);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_record_without_a_fallback_reads_as_one_and_a_fallback_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        let older = br#"{"socket":"/s","pid":7,"version":"0.1.0","data_dir":"/d"}"#;
        std::fs::write(paths::record_path(tmp.path()), older).unwrap();
        assert_eq!(read(tmp.path()).unwrap().fallback, None);
        let rec = DaemonRecord {
            socket: "/tmp/berth-7-a1b2c3/berthd.sock".into(),
            pid: 7,
            version: "0.1.0".into(),
            data_dir: tmp.path().into(),
            fallback: Some(Fallback {
                instead_of: "/tmp/berth-7/berthd.sock".into(),
                because: "its folder belongs to uid 65534".into(),
            }),
        };
        write(tmp.path(), &rec).unwrap();
        assert_eq!(read(tmp.path()), Some(rec));
    }

    #[test]
    fn a_garbled_record_reads_as_none() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(paths::record_path(tmp.path()), b"{\"socket\":").unwrap();
        assert_eq!(read(tmp.path()), None);
    }
}
