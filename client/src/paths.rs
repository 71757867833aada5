//! Where berth keeps its socket, data and logs.
//!
//! One function owns each decision, and the daemon and every client call the
//! same one, so the two can never disagree about where to meet. The
//! environment is read once into an [`EnvCtx`], so tests pass fixed values.
//!
//! On Windows the "socket" is a named pipe, `\\.\pipe\berth-<user SID>`;
//! the data lives under the user's local application data
//! (`%LOCALAPPDATA%\berth`), found through the known-folder API so that a
//! client started with a stripped environment finds the same one.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// Longest socket path the platform accepts (`sun_path` less its NUL).
#[cfg(target_os = "linux")]
pub const MAX_SOCKET_PATH: usize = 107;
/// Longest socket path the platform accepts (`sun_path` less its NUL).
#[cfg(all(unix, not(target_os = "linux")))]
pub const MAX_SOCKET_PATH: usize = 103;
/// Longest pipe name Windows accepts (`\\.\pipe\` included).
#[cfg(windows)]
pub const MAX_SOCKET_PATH: usize = 256;

/// Who this process runs as: the real uid.
#[cfg(unix)]
pub type Uid = u32;

/// Who this process runs as. Windows has no uid: the user is the SID in the
/// process's token, which [`crate::verify`] compares with the pipe server's
/// token itself, so this marker carries nothing.
#[cfg(windows)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uid;

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
    /// `HOME` (on Windows `USERPROFILE`, else `HOME`, else the profile folder)
    pub home: Option<OsString>,
    /// The runtime folder the login manager makes for this user without
    /// always saying so (`/run/user/<uid>`); probed when `XDG_RUNTIME_DIR`
    /// is unset. `None` skips it (tests inject a folder of their own).
    pub login_runtime_dir: Option<PathBuf>,
    /// Windows: the user's local application data folder (the known folder,
    /// whatever the environment says). Unused elsewhere.
    pub local_app_data: Option<PathBuf>,
    /// The user of this process.
    pub uid: Uid,
}

/// The socket, as the user gives it. Each variable is spelled only here (a tidy test checks it):
/// messages that name one format it in.
pub const BERTH_SOCKET: &str = "BERTH_SOCKET";
/// The data folder, as the user gives it.
pub const BERTH_DATA_DIR: &str = "BERTH_DATA_DIR";
/// The runtime folder the socket's folder is made in.
pub const XDG_RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";
/// The folder the data folder is made in.
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// The folder the state folder (the logs) is made in.
pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
/// Where clients keep their configs under XDG: not one of berth's locations, but `berth
/// install` reads it to find them, and Codex is told to forward it.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";

/// The variables that decide where the socket and berth's folders are, besides the home: every
/// berth program reads them here, and a client that starts servers with a stripped environment
/// (Codex) is told to forward each of them.
pub const LOCATION_VARIABLES: [&str; 5] = [
    BERTH_SOCKET,
    BERTH_DATA_DIR,
    XDG_RUNTIME_DIR,
    XDG_DATA_HOME,
    XDG_STATE_HOME,
];

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
        let [socket, data_dir, runtime_dir, data_home, state_home] = LOCATION_VARIABLES;
        EnvCtx {
            berth_socket: var(socket),
            berth_data_dir: var(data_dir),
            xdg_runtime_dir: var(runtime_dir),
            xdg_data_home: var(data_home),
            xdg_state_home: var(state_home),
            home: platform_home(&var, uid),
            login_runtime_dir: login_runtime_dir(uid),
            local_app_data: local_app_data(),
            uid,
        }
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.as_ref().map(PathBuf::from)
    }
}

/// Some clients start MCP servers with little more than PATH: the password
/// database still knows the home, so the registry is found.
#[cfg(unix)]
fn platform_home(var: &impl Fn(&str) -> Option<OsString>, uid: Uid) -> Option<OsString> {
    var("HOME").or_else(|| non_empty(passwd_home(uid)))
}

/// `USERPROFILE` is the Windows home; `HOME` (set by Git's shells) next; then
/// the profile folder the system knows, for a stripped environment.
#[cfg(windows)]
fn platform_home(var: &impl Fn(&str) -> Option<OsString>, _: Uid) -> Option<OsString> {
    var("USERPROFILE")
        .or_else(|| var("HOME"))
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().as_os_str().to_os_string()))
}

#[cfg(unix)]
fn login_runtime_dir(uid: Uid) -> Option<PathBuf> {
    Some(PathBuf::from(format!("/run/user/{uid}")))
}

#[cfg(windows)]
fn login_runtime_dir(_: Uid) -> Option<PathBuf> {
    None
}

#[cfg(windows)]
fn local_app_data() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.data_local_dir().to_path_buf())
}

#[cfg(unix)]
fn local_app_data() -> Option<PathBuf> {
    None
}

/// The home folder the password database gives `uid`, for a process started
/// without `HOME`.
#[cfg(unix)]
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
#[cfg(unix)]
pub fn current_uid() -> Uid {
    rustix::process::getuid().as_raw()
}

/// This process's user (see [`Uid`]).
#[cfg(windows)]
pub fn current_uid() -> Uid {
    Uid
}

/// A path as the bytes that carry it in request metadata: its bytes on
/// Unix; on Windows its text (WTF-8, which is UTF-8 for every path that is
/// valid Unicode).
pub fn path_to_wire(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// The path that [`path_to_wire`] gave, from bytes another process sent:
/// any bytes on Unix; on Windows only UTF-8 (`None` otherwise), since
/// arbitrary bytes are not a Windows path.
pub fn path_from_wire(bytes: &[u8]) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes).ok().map(PathBuf::from)
    }
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
    /// On Windows, `BERTH_SOCKET` must name a named pipe.
    #[error(
        "BERTH_SOCKET is {0:?}, but on Windows berth listens on a named pipe: set it to a name like \\\\.\\pipe\\berth-mine"
    )]
    NotAPipe(PathBuf),
    /// On Windows, the user's SID (which names the pipe) cannot be read.
    #[error(
        "cannot read this process's user from its token ({0}); set BERTH_SOCKET to a pipe name"
    )]
    NoUser(String),
}

/// The prefix every Windows pipe name has.
#[cfg(windows)]
pub const PIPE_PREFIX: &str = r"\\.\pipe\";

/// The daemon's named pipe on Windows: `$BERTH_SOCKET` when set (a pipe
/// name), else `\\.\pipe\berth-<user SID>`. The pipe namespace is shared
/// by every user of the machine, so the name is only where to look: the
/// pipe's security descriptor and the client's check of the server's user
/// decide trust ([`crate::verify`]).
#[cfg(windows)]
pub fn socket_path(env: &EnvCtx) -> Result<PathBuf, PathError> {
    if let Some(explicit) = &env.berth_socket {
        let path = PathBuf::from(explicit);
        if !is_pipe_name(&path) {
            return Err(PathError::NotAPipe(path));
        }
        return check_len(path);
    }
    let sid = crate::user_sid::Sid::of_this_process()
        .and_then(|s| s.to_string_sid())
        .map_err(|e| PathError::NoUser(e.to_string()))?;
    check_len(PathBuf::from(format!("{PIPE_PREFIX}berth-{sid}")))
}

/// Whether `path` is a pipe name, `\\.\pipe\<something>` (case as Windows
/// compares it: not at all).
#[cfg(windows)]
pub fn is_pipe_name(path: &Path) -> bool {
    let s = path.as_os_str().to_string_lossy();
    s.len() > PIPE_PREFIX.len()
        && s.is_char_boundary(PIPE_PREFIX.len())
        && s[..PIPE_PREFIX.len()].eq_ignore_ascii_case(PIPE_PREFIX)
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
///
/// When the folder of 2 to 4 is another user's, a link or writable by
/// others, the daemon listens in a folder of its own instead, which is
/// recorded in the data folder, not derived (ADR 0042).
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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
    if cfg!(windows)
        && let Some(local) = &env.local_app_data
    {
        return Ok(local.join("berth"));
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
    if env.berth_data_dir.is_some() || cfg!(target_os = "macos") || cfg!(windows) {
        return Ok(data_dir(env)?.join("log"));
    }
    env.home_dir()
        .map(|h| h.join(".local/state/berth"))
        .ok_or(PathError::NoDataDir)
}

/// The lock file that decides the one daemon for a socket. It sits beside the
/// socket because the socket is what clients contend for.
#[cfg(unix)]
pub fn lock_path(socket: &Path) -> PathBuf {
    let mut name = socket.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    socket.with_file_name(name)
}

/// The lock file that decides the one daemon for a pipe. A pipe has no folder
/// to sit beside, so it is a file named after the pipe in the user's local
/// application data (the known folder, so a stripped environment finds the
/// same one): `%LOCALAPPDATA%\berth\pipes\<pipe name>.lock`.
#[cfg(windows)]
pub fn lock_path(socket: &Path) -> PathBuf {
    let name = socket.as_os_str().to_string_lossy();
    let name = name.get(PIPE_PREFIX.len()..).unwrap_or(&name);
    let file: String = name
        .chars()
        .map(|c| match c {
            '\\' | '/' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c => c,
        })
        .collect();
    let base = local_app_data().unwrap_or_else(std::env::temp_dir);
    base.join("berth")
        .join("pipes")
        .join(format!("{file}.lock"))
}

/// The lock that makes one daemon per data folder: the data folder is the
/// registry's identity, whatever socket a daemon was told to use.
pub fn data_lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("berthd.lock")
}

/// The registry database in a data folder.
pub fn database_path(data_dir: &Path) -> PathBuf {
    data_dir.join("berth.db")
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
#[cfg(unix)]
pub fn ensure_private_dir(dir: &Path, uid: Uid) -> Result<(), PrivateDirError> {
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

/// Creates `dir` (and its parents) if missing; refuses a link or a file in
/// its place. Windows folders under the user's profile inherit an access
/// list that admits only the user, the system and administrators.
#[cfg(windows)]
pub fn ensure_private_dir(dir: &Path, uid: Uid) -> Result<(), PrivateDirError> {
    let _ = uid;
    std::fs::create_dir_all(dir).map_err(|source| PrivateDirError::Create {
        path: dir.to_path_buf(),
        source,
    })?;
    let meta = std::fs::symlink_metadata(dir).map_err(|source| PrivateDirError::Create {
        path: dir.to_path_buf(),
        source,
    })?;
    let found = if meta.file_type().is_symlink() {
        "a link"
    } else if !meta.is_dir() {
        "not a directory"
    } else {
        return Ok(());
    };
    Err(PrivateDirError::Create {
        path: dir.to_path_buf(),
        source: io::Error::other(format!(
            "it is {found}; remove it so berth can create the folder"
        )),
    })
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    #[test]
    fn the_pipe_is_named_after_the_user_and_berth_socket_must_be_a_pipe() {
        let env = EnvCtx::from_vars(|_| None);
        let pipe = socket_path(&env).unwrap();
        let sid = crate::user_sid::Sid::of_this_process()
            .unwrap()
            .to_string_sid()
            .unwrap();
        assert_eq!(pipe, PathBuf::from(format!(r"\\.\pipe\berth-{sid}")));
        let mine = EnvCtx {
            berth_socket: Some(r"\\.\PIPE\berth-mine".into()),
            ..EnvCtx::default()
        };
        assert_eq!(
            socket_path(&mine).unwrap(),
            PathBuf::from(r"\\.\PIPE\berth-mine")
        );
        let file = EnvCtx {
            berth_socket: Some(r"C:\berth.sock".into()),
            ..EnvCtx::default()
        };
        let err = socket_path(&file).unwrap_err();
        assert!(matches!(err, PathError::NotAPipe(_)), "{err}");
    }

    #[test]
    fn data_lives_in_local_app_data_and_a_pipes_lock_is_a_file_there() {
        let env = EnvCtx::from_vars(|_| None);
        let local = env.local_app_data.clone().expect("the known folder");
        assert_eq!(data_dir(&env).unwrap(), local.join("berth"));
        assert_eq!(state_dir(&env).unwrap(), local.join("berth").join("log"));
        let lock = lock_path(Path::new(r"\\.\pipe\berth-x\y"));
        assert_eq!(
            lock,
            local.join("berth").join("pipes").join("berth-x_y.lock")
        );
    }
}

#[cfg(test)]
mod location_tests {
    use super::*;

    #[test]
    fn the_location_variables_are_every_variable_the_paths_are_read_from() {
        let asked = std::cell::RefCell::new(std::collections::BTreeSet::new());
        let _ = EnvCtx::from_vars(|k| {
            asked.borrow_mut().insert(k.to_owned());
            None
        });
        let mut asked = asked.into_inner();
        // The home is not berth's to name: clients forward it.
        for home in ["HOME", "USERPROFILE", "LOCALAPPDATA"] {
            asked.remove(home);
        }
        let listed: std::collections::BTreeSet<String> =
            LOCATION_VARIABLES.iter().map(|v| v.to_string()).collect();
        assert_eq!(asked, listed);
    }
}

#[cfg(all(test, unix))]
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
