//! Where berth keeps its socket, data and logs.
//!
//! One function owns each decision, and the daemon and every client call the
//! same one, so the two can never disagree about where to meet. The
//! environment is read once into an [`EnvCtx`], so tests pass fixed values.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// Longest socket path the platform accepts (`sun_path` less its NUL).
#[cfg(target_os = "linux")]
pub const MAX_SOCKET_PATH: usize = 107;
/// Longest socket path the platform accepts (`sun_path` less its NUL).
#[cfg(not(target_os = "linux"))]
pub const MAX_SOCKET_PATH: usize = 103;

/// The environment variables that decide berth's paths, read once.
#[derive(Debug, Clone, Default)]
pub struct EnvCtx {
    /// `BERTH_SOCKET`
    pub berth_socket: Option<OsString>,
    /// `BERTH_DATA_DIR`
    pub berth_data_dir: Option<OsString>,
    /// `XDG_RUNTIME_DIR`
    pub xdg_runtime_dir: Option<OsString>,
    /// `XDG_DATA_HOME`
    pub xdg_data_home: Option<OsString>,
    /// `XDG_STATE_HOME`
    pub xdg_state_home: Option<OsString>,
    /// `HOME`
    pub home: Option<OsString>,
    /// The runtime folder the login manager makes for this user without
    /// always saying so (`/run/user/<uid>`); probed when `XDG_RUNTIME_DIR`
    /// is unset. `None` skips it (tests inject a folder of their own).
    pub login_runtime_dir: Option<PathBuf>,
    /// The real user id of this process.
    pub uid: u32,
}

fn non_empty(v: Option<OsString>) -> Option<OsString> {
    v.filter(|s| !s.is_empty())
}

impl EnvCtx {
    /// Reads the process environment.
    pub fn from_process() -> EnvCtx {
        EnvCtx::from_vars(|k| std::env::var_os(k))
    }

    /// Reads an environment given as a lookup: what another process (a
    /// client's MCP server, started with an environment of its own) would see.
    pub fn from_vars(get: impl Fn(&str) -> Option<OsString>) -> EnvCtx {
        let var = |k: &str| non_empty(get(k));
        let uid = current_uid();
        EnvCtx {
            berth_socket: var("BERTH_SOCKET"),
            berth_data_dir: var("BERTH_DATA_DIR"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            xdg_data_home: var("XDG_DATA_HOME"),
            xdg_state_home: var("XDG_STATE_HOME"),
            // Some clients start MCP servers with little more than PATH: the
            // password database still knows the home, so the registry is found.
            home: var("HOME").or_else(|| non_empty(passwd_home(uid))),
            login_runtime_dir: Some(PathBuf::from(format!("/run/user/{uid}"))),
            uid,
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.as_ref().map(PathBuf::from)
    }
}

/// The home folder the password database gives `uid`, for a process started
/// without `HOME`.
pub fn passwd_home(uid: u32) -> Option<OsString> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `pwd`, `buf` and `found` are valid for the call; the strings
        // `pwd` points to live in `buf`, read before it is dropped.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut pwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut found,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if rc != 0 || found.is_null() || pwd.pw_dir.is_null() {
            return None;
        }
        // SAFETY: a non-null pw_dir is a NUL-terminated string inside `buf`.
        let dir = unsafe { std::ffi::CStr::from_ptr(pwd.pw_dir) };
        return Some(std::ffi::OsStr::from_bytes(dir.to_bytes()).to_os_string());
    }
}

/// This process's real user id.
pub fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Why no socket path could be derived.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The chosen socket path does not fit in a socket address.
    #[error(
        "socket path {path:?} is {len} bytes, longer than the {max} this system allows; set BERTH_SOCKET to a shorter path"
    )]
    SocketTooLong {
        /// The path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// No data directory can be found (no `HOME`, no `BERTH_DATA_DIR`).
    #[error("cannot find a data directory: set BERTH_DATA_DIR or HOME")]
    NoDataDir,
}

/// The daemon's socket. Candidates, first usable wins:
/// 1. `$BERTH_SOCKET`, as given;
/// 2. `$XDG_RUNTIME_DIR/berth/berthd.sock`, when that runtime dir is an
///    absolute directory owned by us that group and others cannot write, and
///    the path fits (the `berth` folder inside is created 0700);
/// 3. only when `XDG_RUNTIME_DIR` is unset: `/run/user/<uid>/berth/berthd.sock`,
///    when that folder exists, is ours and is 0700 (what the login manager
///    makes). Clients started with a stripped environment (Codex, the MCP
///    SDKs) then still meet the daemon a login shell started;
/// 4. `/tmp/berth-<uid>/berthd.sock`, a per-user folder the daemon creates
///    0700 (never `$TMPDIR`, which differs between a shell and a GUI app).
pub fn socket_path(env: &EnvCtx) -> Result<PathBuf, PathError> {
    if let Some(explicit) = &env.berth_socket {
        let path = PathBuf::from(explicit);
        return check_len(path);
    }
    let in_runtime = |runtime: &Path| {
        let path = runtime.join("berth").join("berthd.sock");
        (path.as_os_str().len() <= MAX_SOCKET_PATH).then_some(path)
    };
    match (&env.xdg_runtime_dir, &env.login_runtime_dir) {
        (Some(runtime), _) => {
            let runtime = Path::new(runtime);
            if runtime.is_absolute()
                && is_safe_dir_of(runtime, env.uid)
                && let Some(path) = in_runtime(runtime)
            {
                return Ok(path);
            }
        }
        (None, Some(login)) => {
            if is_login_runtime_dir(login, env.uid)
                && let Some(path) = in_runtime(login)
            {
                return Ok(path);
            }
        }
        (None, None) => {}
    }
    check_len(PathBuf::from(format!("/tmp/berth-{}/berthd.sock", env.uid)))
}

/// The login manager's runtime folder: a real directory (no symlink), ours,
/// mode exactly 0700. Anything else may have been made by someone else.
fn is_login_runtime_dir(dir: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(dir) {
        Ok(m) => m.is_dir() && m.uid() == uid && m.mode() & 0o7777 == 0o700,
        Err(_) => false,
    }
}

fn check_len(path: PathBuf) -> Result<PathBuf, PathError> {
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(PathError::SocketTooLong {
            path,
            len,
            max: MAX_SOCKET_PATH,
        });
    }
    Ok(path)
}

/// A folder nobody else can plant a file in: ours, and not writable by group or others. A
/// runtime dir made by hand with mkdir's 0755 qualifies; the XDG rule's 0700 is checked on
/// the `berth` folder inside it, which the daemon creates.
fn is_safe_dir_of(dir: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(dir) {
        Ok(m) => m.is_dir() && m.uid() == uid && m.mode() & 0o022 == 0,
        Err(_) => false,
    }
}

/// berth's data directory: `$BERTH_DATA_DIR`, else `$XDG_DATA_HOME/berth`,
/// else the platform's (`~/.local/share/berth` on Linux).
pub fn data_dir(env: &EnvCtx) -> Result<PathBuf, PathError> {
    if let Some(d) = &env.berth_data_dir {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = &env.xdg_data_home {
        return Ok(Path::new(d).join("berth"));
    }
    if cfg!(target_os = "macos")
        && let Some(home) = env.home_dir()
    {
        return Ok(home.join("Library/Application Support/berth"));
    }
    env.home_dir()
        .map(|h| h.join(".local/share/berth"))
        .ok_or(PathError::NoDataDir)
}

/// Where the daemon writes its log: `$XDG_STATE_HOME/berth`; else, when
/// `BERTH_DATA_DIR` is set, `<data>/log` (so a relocated berth stays in one
/// place); else `~/.local/state/berth`.
pub fn state_dir(env: &EnvCtx) -> Result<PathBuf, PathError> {
    if let Some(d) = &env.xdg_state_home {
        return Ok(Path::new(d).join("berth"));
    }
    if env.berth_data_dir.is_some() || cfg!(target_os = "macos") {
        return Ok(data_dir(env)?.join("log"));
    }
    env.home_dir()
        .map(|h| h.join(".local/state/berth"))
        .ok_or(PathError::NoDataDir)
}

/// The lock file that decides the one daemon for a socket. It sits beside the
/// socket because the socket is what clients contend for.
pub fn lock_path(socket: &Path) -> PathBuf {
    let mut name = socket.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    socket.with_file_name(name)
}

/// The lock that makes one daemon per data folder: the data folder is the
/// registry's identity, whatever socket a daemon was told to use.
pub fn data_lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("berthd.lock")
}

/// Where the data folder's daemon records where it listens
/// (see [`crate::record`]).
pub fn record_path(data_dir: &Path) -> PathBuf {
    data_dir.join("berthd.json")
}

/// Why a private directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    /// Creating it failed.
    #[error("creating {path:?}: {source}")]
    Create {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// It is a symlink, not a directory, owned by someone else, or writable
    /// by group or others.
    #[error(
        "{path:?} must be a directory owned by uid {uid} that group and others cannot write, mode 0700 or 0755 (found {found}); remove it or fix its permissions"
    )]
    Unsafe {
        /// The directory.
        path: PathBuf,
        /// Our uid.
        uid: u32,
        /// What was found instead.
        found: String,
    },
}

/// Creates `dir` (and its parents) if missing, then checks what is there:
/// not a symlink, a directory, owned by `uid`, not writable by group or
/// others. A folder we create gets mode 0700; one the user made (an explicit
/// `BERTH_SOCKET`) may stay readable, since only a writer could plant or swap
/// the socket, and the socket itself is 0600 with every peer's uid checked.
pub fn ensure_private_dir(dir: &Path, uid: u32) -> Result<(), PrivateDirError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|source| PrivateDirError::Create {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(PrivateDirError::Create {
                path: dir.to_path_buf(),
                source,
            });
        }
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|source| PrivateDirError::Create {
        path: dir.to_path_buf(),
        source,
    })?;
    let unsafe_because = |found: String| PrivateDirError::Unsafe {
        path: dir.to_path_buf(),
        uid,
        found,
    };
    if meta.file_type().is_symlink() {
        return Err(unsafe_because("a symlink".into()));
    }
    if !meta.is_dir() {
        return Err(unsafe_because("not a directory".into()));
    }
    if meta.uid() != uid {
        return Err(unsafe_because(format!("owner uid {}", meta.uid())));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(unsafe_because(format!("mode {:o}", meta.mode() & 0o7777)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> EnvCtx {
        EnvCtx {
            home: Some("/home/u".into()),
            uid: 1000,
            ..EnvCtx::default()
        }
    }

    #[test]
    fn berth_socket_wins_over_every_other_candidate() {
        let e = EnvCtx {
            berth_socket: Some("/x/s.sock".into()),
            xdg_runtime_dir: Some("/run/user/1000".into()),
            ..env()
        };
        assert_eq!(socket_path(&e).unwrap(), PathBuf::from("/x/s.sock"));
    }

    #[test]
    fn a_runtime_dir_that_is_not_ours_falls_back_to_the_per_user_tmp_folder() {
        let e = EnvCtx {
            xdg_runtime_dir: Some("/nonexistent/run".into()),
            ..env()
        };
        assert_eq!(
            socket_path(&e).unwrap(),
            PathBuf::from("/tmp/berth-1000/berthd.sock")
        );
    }

    #[test]
    fn a_runtime_dir_of_ours_holds_the_socket_unless_others_can_write_it() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let e = EnvCtx {
            xdg_runtime_dir: Some(tmp.path().into()),
            uid: current_uid(),
            ..env()
        };
        let fallback = PathBuf::from(format!("/tmp/berth-{}/berthd.sock", current_uid()));
        for (mode, ours) in [
            (0o700, true),
            (0o755, true),
            (0o775, false),
            (0o1777, false),
        ] {
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode)).unwrap();
            let expected = if ours {
                tmp.path().join("berth/berthd.sock")
            } else {
                fallback.clone()
            };
            assert_eq!(socket_path(&e).unwrap(), expected, "mode {mode:o}");
        }
        let relative = EnvCtx {
            xdg_runtime_dir: Some("run".into()),
            ..e
        };
        assert_eq!(socket_path(&relative).unwrap(), fallback);
    }

    #[test]
    fn without_xdg_runtime_dir_the_login_runtime_dir_is_used_when_ours_and_0700() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let login = tmp.path().join("1000");
        std::fs::create_dir(&login).unwrap();
        let e = EnvCtx {
            login_runtime_dir: Some(login.clone()),
            uid: current_uid(),
            ..env()
        };
        let fallback = PathBuf::from(format!("/tmp/berth-{}/berthd.sock", current_uid()));
        for (mode, used) in [
            (0o700, true),
            (0o755, false),
            (0o770, false),
            (0o1700, false),
        ] {
            std::fs::set_permissions(&login, std::fs::Permissions::from_mode(mode)).unwrap();
            let expected = if used {
                login.join("berth/berthd.sock")
            } else {
                fallback.clone()
            };
            assert_eq!(socket_path(&e).unwrap(), expected, "mode {mode:o}");
        }
        std::fs::set_permissions(&login, std::fs::Permissions::from_mode(0o700)).unwrap();
        // Another user's folder, a missing one or a symlink is skipped.
        let other = EnvCtx {
            uid: current_uid() + 1,
            ..e.clone()
        };
        assert_eq!(
            socket_path(&other).unwrap(),
            PathBuf::from(format!("/tmp/berth-{}/berthd.sock", current_uid() + 1))
        );
        let missing = EnvCtx {
            login_runtime_dir: Some(tmp.path().join("missing")),
            ..e.clone()
        };
        assert_eq!(socket_path(&missing).unwrap(), fallback);
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&login, &link).unwrap();
        let linked = EnvCtx {
            login_runtime_dir: Some(link),
            ..e.clone()
        };
        assert_eq!(socket_path(&linked).unwrap(), fallback);
    }

    #[test]
    fn a_set_xdg_runtime_dir_decides_and_the_login_runtime_dir_is_not_probed() {
        let tmp = tempfile::tempdir().unwrap();
        let login = tmp.path().join("login");
        std::fs::create_dir(&login).unwrap();
        let e = EnvCtx {
            xdg_runtime_dir: Some("/nonexistent/run".into()),
            login_runtime_dir: Some(login),
            uid: current_uid(),
            ..env()
        };
        assert_eq!(
            socket_path(&e).unwrap(),
            PathBuf::from(format!("/tmp/berth-{}/berthd.sock", current_uid()))
        );
    }

    #[test]
    fn an_explicit_socket_past_the_address_limit_is_refused_with_its_length() {
        let long = format!("/tmp/{}", "s".repeat(200));
        let e = EnvCtx {
            berth_socket: Some(long.into()),
            ..env()
        };
        let err = socket_path(&e).unwrap_err().to_string();
        assert!(err.contains("205 bytes"), "{err}");
    }

    #[test]
    fn the_password_database_knows_our_home() {
        let ours = passwd_home(current_uid()).expect("our own passwd entry");
        assert!(Path::new(&ours).is_absolute(), "{ours:?}");
        assert_eq!(
            passwd_home(0x7fff_fff0),
            None,
            "an unknown uid has no entry"
        );
    }

    #[test]
    fn data_dir_prefers_berth_data_dir_then_xdg_then_home() {
        let mut e = env();
        assert_eq!(
            data_dir(&e).unwrap(),
            PathBuf::from("/home/u/.local/share/berth")
        );
        e.xdg_data_home = Some("/xdg".into());
        assert_eq!(data_dir(&e).unwrap(), PathBuf::from("/xdg/berth"));
        e.berth_data_dir = Some("/d".into());
        assert_eq!(data_dir(&e).unwrap(), PathBuf::from("/d"));
    }

    #[test]
    fn the_lock_sits_beside_the_socket() {
        assert_eq!(
            lock_path(Path::new("/r/berth/berthd.sock")),
            PathBuf::from("/r/berth/berthd.sock.lock")
        );
    }

    #[test]
    fn a_private_dir_others_can_write_is_refused_and_a_readable_one_kept() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sock");
        ensure_private_dir(&dir, current_uid()).unwrap();
        let mode = |d: &Path| std::fs::metadata(d).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&dir), 0o700);
        for open in [0o770, 0o707, 0o1777, 0o720] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(open)).unwrap();
            let err = ensure_private_dir(&dir, current_uid()).unwrap_err();
            assert!(err.to_string().contains(&format!("mode {open:o}")), "{err}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&dir, current_uid()).unwrap();
        assert_eq!(mode(&dir), 0o755, "a folder the user made is not changed");
    }

    #[test]
    fn a_symlink_in_place_of_the_private_dir_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = ensure_private_dir(&link, current_uid()).unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
    }
}
