//! The registry's durable storage: workspaces, roots, settings and the
//! device's active workspace, in SQLite.
//!
//! One connection, behind a mutex: a per-user daemon writes rarely, and one
//! writer keeps every write serial. A registry rule that spans rows (roots
//! that overlap, one home per folder, unique names, an active workspace that
//! exists) is decided inside the write it guards, through [`Store::write`]. Writes use `synchronous=FULL` in WAL mode,
//! so a write that was answered survives a crash of the daemon or the machine. The one
//! exception is a session's registration, which a power cut may take back together with the
//! session itself (docs/decisions/0031-a-sessions-registration-does-not-wait-for-the-disk.md).
//! A database that is not berth's, is damaged or is newer than this build is
//! reported and left exactly as it was: it is checked read-only before
//! anything writes to it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use berth_vocab::settings::Setting;
use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};

use berth_core::registry::{Home, Registry, Root, WorkspaceEntry};
use berth_core::scratch::SessionRow;

use crate::error::BerthError;

/// The schema version this build writes. Each step of [`MIGRATIONS`] moves
/// `user_version` up by one, in its own transaction.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const MIGRATIONS: &[&str] = &[
    // 1: the registry.
    "CREATE TABLE workspaces (
        name TEXT PRIMARY KEY NOT NULL
            CHECK (length(name) BETWEEN 1 AND 40
                   AND name NOT GLOB '*[^a-z0-9-]*'
                   AND substr(name, 1, 1) <> '-'),
        home_mode TEXT NOT NULL CHECK (home_mode IN ('managed', 'local')),
        home_path TEXT,
        created_at INTEGER NOT NULL,
        CHECK ((home_mode = 'local') = (home_path IS NOT NULL))
     ) STRICT;
     CREATE TABLE roots (
        workspace TEXT NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
        path TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (workspace, path)
     ) STRICT;
     CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
     CREATE TABLE device (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT;
     INSERT INTO workspaces (name, home_mode, home_path, created_at)
        VALUES ('default', 'managed', NULL, unixepoch());
     INSERT INTO device (key, value) VALUES ('active', 'default');",
    // 2: agent sessions, the conversations hooks recorded, and which linked
    // sessions were already asked.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        cwd TEXT NOT NULL,
        client_name TEXT NOT NULL DEFAULT '',
        client_version TEXT NOT NULL DEFAULT '',
        client_session_id TEXT NOT NULL DEFAULT '',
        workspace TEXT NOT NULL,
        reason TEXT NOT NULL,
        project TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER
     ) STRICT;
     CREATE TABLE conversations (
        client_session_id TEXT NOT NULL,
        cwd TEXT NOT NULL,
        client TEXT NOT NULL,
        transcript_path TEXT NOT NULL DEFAULT '',
        workspace TEXT NOT NULL,
        reason TEXT NOT NULL,
        recorded_at INTEGER NOT NULL,
        PRIMARY KEY (client_session_id, cwd)
     ) STRICT;
     CREATE TABLE asked (
        client_session_id TEXT PRIMARY KEY NOT NULL,
        asked_at INTEGER NOT NULL
     ) STRICT;",
    // 3: the shim's pid, so a restarted daemon can tell a live session it has
    // not heard from yet from one that ended while no daemon ran.
    "ALTER TABLE sessions ADD COLUMN pid INTEGER;",
    // 4: which folder a local home was approved as (device and inode), so a folder moved into
    // its place is told apart. Rows from before are recorded at the next start.
    "CREATE TABLE home_identity (
        workspace TEXT PRIMARY KEY NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
        dev INTEGER NOT NULL,
        ino INTEGER NOT NULL
     ) STRICT;",
    // 5: when each session's pin was last set (registration or its own use_workspace), for
    // `berth sessions`. Rows from before fall back to their start.
    "ALTER TABLE sessions ADD COLUMN pinned_at INTEGER;",
];

/// A session as `berth sessions` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// The daemon-made id.
    pub id: String,
    /// Its directory.
    pub cwd: PathBuf,
    /// MCP client info.
    pub client_name: String,
    /// MCP client info.
    pub client_version: String,
    /// The client's own session id.
    pub client_session_id: String,
    /// The pinned workspace.
    pub workspace: String,
    /// Why.
    pub reason: String,
    /// The session's project, if any.
    pub project: Option<PathBuf>,
    /// Unix seconds: registered, pin last set, ended (`None` while open).
    pub started_at: i64,
    /// See `started_at`.
    pub pinned_at: i64,
    /// See `started_at`.
    pub ended_at: Option<i64>,
    /// The process that registered it (from the socket's credentials; in rows from older
    /// daemons, the pid the shim sent), when known.
    pub pid: Option<u32>,
}

/// A session being registered.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// The daemon-made id.
    pub id: &'a str,
    /// Its directory.
    pub cwd: &'a Path,
    /// MCP client info.
    pub client_name: &'a str,
    /// MCP client info.
    pub client_version: &'a str,
    /// `CLAUDE_CODE_SESSION_ID`, when set.
    pub client_session_id: &'a str,
    /// The pinned workspace.
    pub workspace: &'a str,
    /// Why.
    pub reason: &'a str,
    /// The session's project, if any.
    pub project: Option<&'a Path>,
    /// The registering process, from the socket's credentials.
    pub pid: Option<u32>,
}

/// A conversation a Stop hook recorded.
#[derive(Debug, Clone)]
pub struct Conversation<'a> {
    /// The client's session id.
    pub client_session_id: &'a str,
    /// The payload's cwd.
    pub cwd: &'a Path,
    /// Which client.
    pub client: &'a str,
    /// The transcript, when the client gave one.
    pub transcript_path: &'a str,
    /// The workspace the cwd resolved to.
    pub workspace: &'a str,
    /// Why.
    pub reason: &'a str,
}

/// Why the store could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not a database, or SQLite reports damage.
    #[error(
        "the database {path:?} is damaged or not a berth database ({detail}); berth left it untouched. Move it aside (mv {path:?} {path:?}.bad) and start berthd again to begin with an empty registry, or restore a backup"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// The schema is newer than this build understands.
    #[error(
        "the database {path:?} has schema version {found}, newer than the {supported} this berthd understands; berth left it untouched. Upgrade berth, or move the file aside to start over"
    )]
    TooNew {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: i64,
        /// Ours.
        supported: i64,
    },
    /// A constraint refused a write (a duplicate, a dangling reference).
    #[error("{0}")]
    Constraint(String),
    /// SQLite found no space left for the database or its journal; the
    /// transaction was rolled back.
    #[error(
        "the registry {path:?} could not be written: the disk is full (no space left on device); nothing was changed. Free some space on that disk"
    )]
    DiskFull {
        /// The database file.
        path: PathBuf,
    },
    /// Any other SQLite failure.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// The registry's storage.
pub struct Store {
    conn: Mutex<Connection>,
    /// The database file, named when it cannot be written.
    path: PathBuf,
    /// Set once the daemon stops: from then on every commit is rolled back.
    writes_closed: Arc<AtomicBool>,
}

impl Store {
    /// Opens (or creates) the database at `path`, refusing one that is
    /// damaged, foreign or too new, then migrates it to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if path.exists() {
            check_readonly(path)?;
        }
        Store::on(Connection::open(path)?, path)
    }

    /// A store held in memory alone, for tests that need no folder.
    #[cfg(test)]
    pub(crate) fn in_memory() -> Store {
        Store::on(
            Connection::open_in_memory().expect("an in-memory database"),
            Path::new(":memory:"),
        )
        .expect("an in-memory store")
    }

    /// Sets up and migrates the database on `conn`, opened from `path`.
    fn on(mut conn: Connection, path: &Path) -> Result<Store, StoreError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let writes_closed = Arc::new(AtomicBool::new(false));
        conn.commit_hook(Some(refuse_commit(writes_closed.clone())))?;
        let mut store = Store {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            writes_closed,
        };
        store.migrate().map_err(|e| full_at(&store.path, e))?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let conn = self.conn.get_mut().expect("store lock");
        let mut version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        while (version as usize) < MIGRATIONS.len() {
            let tx = conn.transaction()?;
            tx.execute_batch(MIGRATIONS[version as usize])?;
            version += 1;
            tx.pragma_update(None, "user_version", version)?;
            tx.commit()?;
            tracing::info!(version, "migrated the registry schema");
        }
        Ok(())
    }

    /// Refuses every write from now on: each commit becomes a rollback.
    pub fn close_writes(&self) {
        self.writes_closed.store(true, Ordering::SeqCst);
    }

    /// Whether no statement runs right now. Commits hold the connection, so
    /// once writes are closed and this is `true`, no write can land any more.
    pub fn is_idle(&self) -> bool {
        !matches!(
            self.conn.try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        )
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut conn).map_err(|e| full_at(&self.path, e))
    }

    /// [`Store::with`] under `synchronous=NORMAL`: what `f` commits is atomic, seen by every
    /// later read and kept across a crash of the daemon, and reaches the disk with the next
    /// durable write or checkpoint. `FULL` is back before the connection is let go.
    fn with_relaxed_sync<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let out = f(&mut conn).map_err(|e| full_at(&self.path, e));
        conn.pragma_update(None, "synchronous", "FULL")?;
        out
    }

    /// Runs `decide` in one write transaction (`BEGIN IMMEDIATE`) and commits
    /// what it wrote when it returns `Ok`; an `Err` writes nothing.
    ///
    /// `decide` sees the registry as it stands inside the transaction, not a
    /// snapshot taken before it: two requests that each pass a check against
    /// an older snapshot could both write what only one of them may (two
    /// workspaces' nested roots approved at once).
    pub fn write<T, E: From<StoreError>>(
        &self,
        decide: impl FnOnce(&Write<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let full = |e: rusqlite::Error| full_at(&self.path, StoreError::from(e));
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(full)?;
        let registry = read_registry(&tx)?;
        let write = Write {
            tx,
            registry,
            path: &self.path,
        };
        let out = decide(&write)?;
        write.tx.commit().map_err(full)?;
        Ok(out)
    }

    /// Reads the whole registry.
    pub fn snapshot(&self) -> Result<Registry, StoreError> {
        self.with(|c| read_registry(c))
    }

    /// Adds a workspace.
    pub fn create_workspace(&self, name: &str, home: &Home) -> Result<(), StoreError> {
        self.with(|c| insert_workspace(c, name, home))
    }

    /// Deletes a workspace, its roots, and the `workspace.unassigned` setting
    /// when it names it. Returns whether the setting was reset.
    pub fn delete_workspace(&self, name: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            let tx = c.transaction()?;
            let reset = remove_workspace(&tx, name)?;
            tx.commit()?;
            Ok(reset)
        })
    }

    /// Makes `name` the active workspace.
    pub fn set_active(&self, name: &str) -> Result<(), StoreError> {
        self.with(|c| update_active(c, name))
    }

    /// Approves `path` as a root of `workspace`; `false` if it already was.
    pub fn add_root(&self, workspace: &str, path: &Path) -> Result<bool, StoreError> {
        self.with(|c| insert_root(c, workspace, path))
    }

    /// Removes a root; `false` if there was no such root.
    pub fn remove_root(&self, workspace: &str, path: &Path) -> Result<bool, StoreError> {
        self.with(|c| {
            Ok(c.execute(
                "DELETE FROM roots WHERE workspace = ?1 AND path = ?2",
                params![workspace, path_text(path)],
            )? > 0)
        })
    }

    /// A setting's value.
    pub fn get_setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.with(|c| {
            Ok(
                c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                    r.get(0)
                })
                .optional()?,
            )
        })
    }

    /// Sets a setting.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.with(|c| upsert_setting(c, key, value))
    }

    /// Unsets a setting; `false` if it was not set.
    pub fn unset_setting(&self, key: &str) -> Result<bool, StoreError> {
        self.with(|c| Ok(c.execute("DELETE FROM settings WHERE key = ?1", [key])? > 0))
    }

    /// Registers a session, or re-opens one a restarted daemon lost. Committed without waiting
    /// for the disk: the row lives as long as its process, which a power cut ends too, and every
    /// session start would otherwise wait on an fsync
    /// (docs/decisions/0031-a-sessions-registration-does-not-wait-for-the-disk.md).
    pub fn upsert_session(&self, s: &NewSession<'_>) -> Result<(), StoreError> {
        self.with_relaxed_sync(|c| {
            c.execute(
                "INSERT INTO sessions (id, cwd, client_name, client_version, client_session_id,
                                       workspace, reason, project, started_at, ended_at, pid,
                                       pinned_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, unixepoch(), NULL, ?9, unixepoch())
                 ON CONFLICT (id) DO UPDATE SET workspace = excluded.workspace,
                     reason = excluded.reason, ended_at = NULL, pid = excluded.pid,
                     pinned_at = coalesce(sessions.pinned_at, excluded.pinned_at)",
                params![
                    s.id,
                    path_text(s.cwd),
                    s.client_name,
                    s.client_version,
                    s.client_session_id,
                    s.workspace,
                    s.reason,
                    s.project.map(path_text),
                    s.pid,
                ],
            )?;
            Ok(())
        })
    }

    /// Records the session's new pin (after `use_workspace`).
    pub fn repin_session(&self, id: &str, workspace: &str, reason: &str) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE sessions SET workspace = ?2, reason = ?3, pinned_at = unixepoch()
                 WHERE id = ?1",
                params![id, workspace, reason],
            )?;
            Ok(())
        })
    }

    /// Marks a session ended at `now` (unix seconds).
    pub fn end_session(&self, id: &str, now: i64) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "UPDATE sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
                params![id, now],
            )?;
            Ok(())
        })
    }

    /// Marks sessions ended at `now` (those still open only).
    pub fn end_sessions(&self, ids: &[String], now: i64) -> Result<(), StoreError> {
        self.with(|c| {
            let tx = c.transaction()?;
            for id in ids {
                tx.execute(
                    "UPDATE sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
                    params![id, now],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// The process that last registered session `id`, if the store knows one.
    pub fn session_pid(&self, id: &str) -> Result<Option<u32>, StoreError> {
        self.with(|c| {
            Ok(
                c.query_row("SELECT pid FROM sessions WHERE id = ?1", [id], |r| r.get(0))
                    .optional()?
                    .flatten(),
            )
        })
    }

    /// Every session, for the scratch sweep.
    pub fn sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare("SELECT id, ended_at, pid FROM sessions")?;
            let rows = stmt
                .query_map([], |r| {
                    Ok(SessionRow {
                        id: r.get(0)?,
                        ended_at: r.get(1)?,
                        pid: r.get(2)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// The sessions still open, and those that ended at `ended_since` (unix seconds) or
    /// later; open ones first, then ended ones, each group oldest first.
    pub fn list_sessions(
        &self,
        ended_since: Option<i64>,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare(
                "SELECT id, cwd, client_name, client_version, client_session_id, workspace,
                        reason, project, started_at, coalesce(pinned_at, started_at), ended_at, pid
                 FROM sessions
                 WHERE ended_at IS NULL OR ended_at >= ?1
                 ORDER BY ended_at IS NOT NULL, started_at, rowid",
            )?;
            let rows = stmt
                .query_map([ended_since.unwrap_or(i64::MAX)], |r| {
                    Ok(SessionRecord {
                        id: r.get(0)?,
                        cwd: PathBuf::from(r.get::<_, String>(1)?),
                        client_name: r.get(2)?,
                        client_version: r.get(3)?,
                        client_session_id: r.get(4)?,
                        workspace: r.get(5)?,
                        reason: r.get(6)?,
                        project: r.get::<_, Option<String>>(7)?.map(PathBuf::from),
                        started_at: r.get(8)?,
                        pinned_at: r.get(9)?,
                        ended_at: r.get(10)?,
                        pid: r.get(11)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// `PRAGMA quick_check`: `["ok"]` when the database is sound, else what SQLite found.
    pub fn quick_check(&self) -> Result<Vec<String>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare("PRAGMA quick_check")?;
            let lines = stmt
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(lines)
        })
    }

    /// Forgets sessions whose scratch folders were swept.
    pub fn forget_sessions(&self, ids: &[String]) -> Result<(), StoreError> {
        self.with(|c| {
            let tx = c.transaction()?;
            for id in ids {
                tx.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// Records a conversation (idempotent per client session and cwd).
    pub fn record_conversation(&self, conv: &Conversation<'_>) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO conversations (client_session_id, cwd, client, transcript_path,
                                            workspace, reason, recorded_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, unixepoch())
                 ON CONFLICT (client_session_id, cwd) DO UPDATE SET
                     transcript_path = excluded.transcript_path,
                     workspace = excluded.workspace, reason = excluded.reason,
                     recorded_at = excluded.recorded_at",
                params![
                    conv.client_session_id,
                    path_text(conv.cwd),
                    conv.client,
                    conv.transcript_path,
                    conv.workspace,
                    conv.reason,
                ],
            )?;
            Ok(())
        })
    }

    /// The cwds recorded for a client session.
    pub fn conversation_cwds(&self, client_session_id: &str) -> Result<Vec<PathBuf>, StoreError> {
        self.with(|c| {
            let mut stmt = c.prepare(
                "SELECT cwd FROM conversations WHERE client_session_id = ?1 ORDER BY cwd",
            )?;
            let rows = stmt
                .query_map([client_session_id], |r| {
                    Ok(PathBuf::from(r.get::<_, String>(0)?))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// Marks a linked session (by the client's id) as asked; `true` the
    /// first time only, so the question is shown once per session.
    pub fn take_ask(&self, client_session_id: &str) -> Result<bool, StoreError> {
        self.with(|c| {
            Ok(c.execute(
                "INSERT INTO asked (client_session_id, asked_at) VALUES (?1, unixepoch())
                 ON CONFLICT (client_session_id) DO NOTHING",
                [client_session_id],
            )? > 0)
        })
    }

    /// The device and inode a local home was approved as, once recorded.
    pub fn home_identity(&self, workspace: &str) -> Result<Option<(u64, u64)>, StoreError> {
        self.with(|c| {
            Ok(c.query_row(
                "SELECT dev, ino FROM home_identity WHERE workspace = ?1",
                [workspace],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .optional()?)
        })
    }

    /// Records the device and inode of a local home (replacing any earlier record).
    pub fn set_home_identity(&self, workspace: &str, dev: u64, ino: u64) -> Result<(), StoreError> {
        self.with(|c| {
            c.execute(
                "INSERT INTO home_identity (workspace, dev, ino) VALUES (?1, ?2, ?3)
                 ON CONFLICT (workspace) DO UPDATE SET dev = excluded.dev, ino = excluded.ino",
                params![workspace, dev as i64, ino as i64],
            )
            .map_err(|e| constraint(e, || format!("no workspace {workspace:?}")))?;
            Ok(())
        })
    }

    /// Runs SQLite's integrity check; `"ok"` when sound.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.with(|c| Ok(c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?))
    }
}

/// A write transaction of [`Store::write`]: the registry inside it, and the
/// registry writes whose rules span rows.
pub struct Write<'c> {
    tx: Transaction<'c>,
    registry: Registry,
    path: &'c Path,
}

impl Write<'_> {
    /// The registry as this transaction sees it; no other write can change
    /// it before this one commits.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Adds a workspace.
    pub fn create_workspace(&self, name: &str, home: &Home) -> Result<(), StoreError> {
        insert_workspace(&self.tx, name, home).map_err(|e| full_at(self.path, e))
    }

    /// Deletes a workspace with its roots, and the `workspace.unassigned`
    /// setting when it names it. Returns whether the setting was reset.
    pub fn delete_workspace(&self, name: &str) -> Result<bool, StoreError> {
        remove_workspace(&self.tx, name).map_err(|e| full_at(self.path, e))
    }

    /// Makes `name` the active workspace.
    pub fn set_active(&self, name: &str) -> Result<(), StoreError> {
        update_active(&self.tx, name).map_err(|e| full_at(self.path, e))
    }

    /// Approves `path` as a root of `workspace`; `false` if it already was.
    pub fn add_root(&self, workspace: &str, path: &Path) -> Result<bool, StoreError> {
        insert_root(&self.tx, workspace, path).map_err(|e| full_at(self.path, e))
    }

    /// Sets a setting.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        upsert_setting(&self.tx, key, value).map_err(|e| full_at(self.path, e))
    }
}

/// Checks a database read-only, so a damaged or foreign file is never
/// modified: not even its header or a WAL is written.
fn check_readonly(path: &Path) -> Result<(), StoreError> {
    let corrupt = |e: rusqlite::Error| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(corrupt)?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(corrupt)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let verdict: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(corrupt)?;
    if verdict != "ok" {
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: verdict,
        });
    }
    if version > 0 {
        // A file with berth's version must have berth's tables.
        conn.query_row("SELECT count(*) FROM workspaces", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(corrupt)?;
    } else {
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(corrupt)?;
        if tables > 0 {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: "it holds tables but no berth schema version".into(),
            });
        }
    }
    Ok(())
}

fn path_text(path: &Path) -> String {
    // Paths reach the daemon as UTF-8 (the protocol's strings), so this is exact.
    path.to_string_lossy().into_owned()
}

/// The gate every commit passes, in the store itself so that no write path
/// can miss it: once writes are closed (the daemon stops), or when the call
/// that writes was given up at its deadline, the commit becomes a rollback.
/// SQLite then answers `SQLITE_CONSTRAINT_COMMITHOOK` ([`is_refused_commit`]).
fn refuse_commit(closed: Arc<AtomicBool>) -> impl FnMut() -> bool + Send + 'static {
    move || closed.load(Ordering::SeqCst) || !crate::pool::fate::may_commit()
}

/// `e` naming the database `path` when SQLite found the disk full (`SQLITE_FULL`).
fn full_at(path: &Path, e: StoreError) -> StoreError {
    match e {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if f.code == rusqlite::ErrorCode::DiskFull =>
        {
            StoreError::DiskFull {
                path: path.to_path_buf(),
            }
        }
        other => other,
    }
}

/// Whether SQLite refused a commit because the gate said no.
pub fn is_refused_commit(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_COMMITHOOK)
}

fn constraint(e: rusqlite::Error, what: impl FnOnce() -> String) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation && !is_refused_commit(&e) =>
        {
            StoreError::Constraint(what())
        }
        other => StoreError::Sqlite(other),
    }
}

fn insert_workspace(c: &Connection, name: &str, home: &Home) -> Result<(), StoreError> {
    let (mode, path) = match home {
        Home::Managed => ("managed", None),
        Home::Local(p) => ("local", Some(path_text(p))),
    };
    c.execute(
        "INSERT INTO workspaces (name, home_mode, home_path, created_at) VALUES (?1, ?2, ?3, unixepoch())",
        params![name, mode, path],
    )
    .map_err(|e| constraint(e, || format!("workspace {name:?} already exists")))?;
    Ok(())
}

fn insert_root(c: &Connection, workspace: &str, path: &Path) -> Result<bool, StoreError> {
    let n = c
        .execute(
            "INSERT INTO roots (workspace, path, created_at) VALUES (?1, ?2, unixepoch())
             ON CONFLICT (workspace, path) DO NOTHING",
            params![workspace, path_text(path)],
        )
        .map_err(|e| constraint(e, || format!("no workspace {workspace:?}")))?;
    Ok(n > 0)
}

fn remove_workspace(c: &Connection, name: &str) -> Result<bool, StoreError> {
    let reset = c.execute(
        "DELETE FROM settings WHERE key = ?1 AND value = ?2",
        [Setting::WorkspaceUnassigned.key(), name],
    )? > 0;
    c.execute("DELETE FROM workspaces WHERE name = ?1", [name])?;
    Ok(reset)
}

fn update_active(c: &Connection, name: &str) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO device (key, value) VALUES ('active', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [name],
    )?;
    Ok(())
}

fn upsert_setting(c: &Connection, key: &str, value: &str) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO settings (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

fn read_registry(c: &Connection) -> Result<Registry, StoreError> {
    let mut workspaces = std::collections::BTreeMap::new();
    let mut stmt = c.prepare("SELECT name, home_mode, home_path FROM workspaces")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
        ))
    })?;
    for row in rows {
        let (name, mode, path) = row?;
        let home = match (mode.as_str(), path) {
            ("local", Some(p)) => Home::Local(PathBuf::from(p)),
            _ => Home::Managed,
        };
        workspaces.insert(name.clone(), WorkspaceEntry { name, home });
    }
    let mut stmt = c.prepare("SELECT workspace, path FROM roots ORDER BY workspace, path")?;
    let roots = stmt
        .query_map([], |r| {
            Ok(Root {
                workspace: r.get(0)?,
                path: PathBuf::from(r.get::<_, String>(1)?),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let active: Option<String> = c
        .query_row("SELECT value FROM device WHERE key = 'active'", [], |r| {
            r.get(0)
        })
        .optional()?;
    let unassigned: Option<String> = c
        .query_row(
            "SELECT value FROM settings WHERE key = ?1",
            [Setting::WorkspaceUnassigned.key()],
            |r| r.get(0),
        )
        .optional()?;
    // The active workspace always exists: deleting it is refused. Should a
    // hand-edited database break that, fall back to `default` visibly.
    let active = active
        .filter(|a| workspaces.contains_key(a))
        .unwrap_or_else(|| "default".to_string());
    Ok(Registry {
        workspaces,
        active,
        unassigned,
        roots,
        root_index: Default::default(),
    })
}

/// A store failure as a request's failure: a broken rule is a refusal, a write cut off
/// by a stop says so, anything else is internal (and logged).
impl From<StoreError> for BerthError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Constraint(m) => BerthError::refused(m),
            StoreError::DiskFull { path } => {
                let data = path.parent().unwrap_or(&path).display().to_string();
                BerthError::disk_full(format_args!("the registry {}", path.display()), data)
            }
            StoreError::Sqlite(e) if is_refused_commit(&e) => BerthError::shutting_down(
                "berthd is stopping, so this write was not made; run the command again in a moment (it starts a new berthd)",
            ),
            other => {
                tracing::error!(error = %other, "storage failed");
                BerthError::internal(other.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("berth.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn a_fresh_registry_holds_default_and_it_is_active() {
        let (_d, store) = fresh();
        let reg = store.snapshot().unwrap();
        assert_eq!(reg.active, "default");
        assert_eq!(reg.workspaces.keys().collect::<Vec<_>>(), ["default"]);
    }

    #[test]
    fn the_schema_refuses_a_local_home_without_a_path() {
        let (_d, store) = fresh();
        let err = store
            .with(|c| Ok(c.execute("INSERT INTO workspaces VALUES ('x', 'local', NULL, 0)", [])?));
        assert!(err.is_err());
        let err = store.with(|c| {
            Ok(c.execute(
                "INSERT INTO workspaces VALUES ('y', 'managed', '/tmp', 0)",
                [],
            )?)
        });
        assert!(err.is_err());
    }

    #[test]
    fn the_schema_refuses_an_invalid_name() {
        let (_d, store) = fresh();
        for bad in ["-x", "Upper", "a b", ""] {
            assert!(
                store.create_workspace(bad, &Home::Managed).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn deleting_a_workspace_removes_its_roots_and_resets_unassigned() {
        let (_d, store) = fresh();
        store.create_workspace("w", &Home::Managed).unwrap();
        store.add_root("w", Path::new("/p")).unwrap();
        store
            .set_setting(Setting::WorkspaceUnassigned.key(), "w")
            .unwrap();
        assert!(store.delete_workspace("w").unwrap());
        let reg = store.snapshot().unwrap();
        assert!(reg.roots.is_empty());
        assert_eq!(reg.unassigned, None);
    }

    #[test]
    fn a_write_that_refuses_writes_nothing_and_one_that_decides_sees_its_own_rows() {
        let (_d, store) = fresh();
        let refused: Result<(), StoreError> = store.write(|w| {
            w.create_workspace("w", &Home::Managed)?;
            assert!(w.registry().exists("default"));
            Err(StoreError::Constraint("refused after a write".into()))
        });
        assert!(refused.is_err());
        assert!(!store.snapshot().unwrap().exists("w"));
        store
            .write(|w| {
                assert!(!w.registry().exists("w"));
                w.create_workspace("w", &Home::Managed)?;
                w.add_root("w", Path::new("/p"))
            })
            .unwrap();
        let reg = store.snapshot().unwrap();
        assert!(reg.exists("w"));
        assert_eq!(reg.roots_of("w").count(), 1);
    }

    #[test]
    fn once_writes_are_closed_nothing_commits_and_the_error_says_stopping() {
        let (_t, s) = fresh();
        s.close_writes();
        let err = s.set_setting("k", "v").unwrap_err();
        assert!(
            matches!(&err, StoreError::Sqlite(e) if is_refused_commit(e)),
            "{err}"
        );
        let err = crate::error::BerthError::from(err);
        assert_eq!(err.code, berth_vocab::codes::Code::ShuttingDown, "{err}");
        // Not mistaken for a duplicate by the constraint mapping.
        let err = s.create_workspace("zz", &Home::Managed).unwrap_err();
        assert!(!matches!(err, StoreError::Constraint(_)), "{err}");
        assert!(s.delete_workspace("default").is_err());
        assert_eq!(s.get_setting("k").unwrap(), None);
        let reg = s.snapshot().unwrap();
        assert!(reg.exists("default") && !reg.exists("zz"));
        assert!(s.is_idle());
    }

    #[test]
    fn garbage_is_reported_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("berth.db");
        let garbage = vec![0xAB; 8192];
        std::fs::write(&path, &garbage).unwrap();
        let err = Store::open(&path).err().expect("refused");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_newer_schema_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("berth.db");
        drop(Store::open(&path).unwrap());
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", 99)
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().expect("refused");
        assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_truncated_database_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("berth.db");
        {
            let store = Store::open(&path).unwrap();
            for i in 0..200 {
                store
                    .add_root("default", Path::new(&format!("/p/{i}/{}", "x".repeat(200))))
                    .unwrap();
            }
            store
                .with(|c| Ok(c.pragma_update(None, "wal_checkpoint", "TRUNCATE")?))
                .ok();
        }
        let _ = std::fs::remove_file(path.with_extension("db-wal"));
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 8192, "{}", bytes.len());
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let err = Store::open(&path).err().expect("refused");
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    }

    #[test]
    fn a_full_disk_names_the_database_and_commits_nothing() {
        let (dir, store) = fresh();
        // SQLite answers SQLITE_FULL when the file may not grow, as on a full disk.
        store
            .with(|c| {
                let pages: i64 = c.query_row("PRAGMA page_count", [], |r| r.get(0))?;
                c.pragma_update(None, "max_page_count", pages)?;
                Ok(())
            })
            .unwrap();
        let mut made = 0;
        let full = loop {
            let name = format!("w{made}");
            let wrote = store.write(|w| {
                w.create_workspace(&name, &Home::Managed)?;
                w.add_root(&name, &dir.path().join(&name))
            });
            match wrote {
                Ok(_) => made += 1,
                Err(e) => break e,
            }
            assert!(made < 10_000, "the database never filled");
        };
        let db = dir.path().join("berth.db");
        assert!(
            matches!(&full, StoreError::DiskFull { path } if *path == db),
            "{full:?}"
        );
        let e = BerthError::from(full);
        assert_eq!(e.code, berth_vocab::codes::Code::DiskFull);
        assert_eq!(
            e.message,
            format!(
                "the registry {} could not be written: the disk is full (no space left on device); nothing was changed",
                db.display()
            )
        );
        assert_eq!(
            e.hints,
            [format!(
                "free some space on the disk that holds {}, then try again",
                dir.path().display()
            )]
        );
        // The failed transaction left no row behind.
        let reg = store.snapshot().unwrap();
        assert!(!reg.exists(&format!("w{made}")));
        // Writes outside `Store::write` say the same.
        let e = store.set_setting("scratch.keep_hours", &"9".repeat(100_000));
        assert!(matches!(e, Err(StoreError::DiskFull { .. })), "{e:?}");
    }
}

#[cfg(test)]
mod relaxed_sync_tests {
    use super::*;

    fn synchronous(store: &Store) -> i64 {
        store
            .with(|c| Ok(c.pragma_query_value(None, "synchronous", |r| r.get(0))?))
            .unwrap()
    }

    fn session(id: &str) -> NewSession<'_> {
        NewSession {
            id,
            cwd: Path::new("/tmp/x"),
            client_name: "test",
            client_version: "1",
            client_session_id: "",
            workspace: "default",
            reason: "active",
            project: None,
            pid: None,
        }
    }

    const FULL: i64 = 2;

    #[test]
    fn a_session_registration_is_committed_and_leaves_writes_durable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("berth.db");
        let store = Store::open(&path).unwrap();
        store.upsert_session(&session("00112233aabbccdd")).unwrap();
        assert_eq!(
            synchronous(&store),
            FULL,
            "later writes must wait for the disk again"
        );
        drop(store);
        let store = Store::open(&path).unwrap();
        let ids: Vec<String> = store
            .sessions()
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, ["00112233aabbccdd"]);
    }

    #[test]
    fn a_refused_registration_also_leaves_writes_durable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("berth.db")).unwrap();
        store.close_writes();
        assert!(store.upsert_session(&session("00112233aabbccdd")).is_err());
        assert_eq!(synchronous(&store), FULL);
    }
}
