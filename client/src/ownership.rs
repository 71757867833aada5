//! Is a folder or file of berth's only this user's to change? The registry names a command
//! berth runs (`hooks.stop_command`), so whoever can change the data folder, the database or
//! the path that leads to them can run commands as the user. They are checked as the socket's
//! folder is (`verify`), before anything is read from them or a daemon is started on them
//! (docs/decisions/0036-berths-folders-are-the-users-alone.md).
//!
//! The rule, on Unix: the path is walked one component at a time, following links the way the
//! system would, and
//! - every link on the way belongs to the user or to root (whoever owns a link can re-point it);
//! - every folder on the way belongs to the user or to root, and others cannot write it unless
//!   it is sticky (`/tmp`): otherwise they could swap what is inside;
//! - what is at the end belongs to the user, is a folder (or a regular file) and group and
//!   others cannot write it. A folder the user made with mkdir's 0755 passes.
//!
//! A path that does not exist yet passes: berth creates it private. Windows has no uids and no
//! modes: there only the kind is checked (a folder, a regular file), and the access list a
//! folder under the user's profile inherits decides who may change it.

use std::io;
use std::path::{Path, PathBuf};

use crate::paths::{self, Uid};

/// What a checked path is to berth; names it in messages and says which variable moves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The data folder (`paths::data_dir`).
    DataFolder,
    /// The state folder, where the logs are (`paths::state_dir`).
    StateFolder,
    /// `berth.db` or its `-wal` or `-shm` file.
    Database,
    /// The daemon's record, `berthd.json`.
    Record,
    /// The data folder's lock, `berthd.lock`.
    Lock,
}

impl Role {
    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Role::DataFolder => "data folder",
            Role::StateFolder => "state folder",
            Role::Database => "database file",
            Role::Record => "daemon record",
            Role::Lock => "daemon lock",
        }
    }

    fn is_folder(self) -> bool {
        matches!(self, Role::DataFolder | Role::StateFolder)
    }

    /// The variable that points berth elsewhere.
    fn variable(self) -> &'static str {
        match self {
            Role::StateFolder => paths::XDG_STATE_HOME,
            _ => paths::BERTH_DATA_DIR,
        }
    }

    /// What moving the file aside costs.
    #[cfg(unix)]
    fn aside(self) -> &'static str {
        match self {
            Role::Database => "berth then starts an empty registry",
            _ => "berth then makes a new one",
        }
    }
}

/// Why berth refuses a folder or a file: names it, what is wrong (owner and mode) and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing the {} {path:?}: {problem}. Another user could change it, so berth neither read nor wrote anything there. {fix}",
    role.name()
)]
pub struct NotOurs {
    /// What the path is to berth.
    pub role: Role,
    /// The path, as berth was given it.
    pub path: PathBuf,
    /// What is wrong, naming the owner and the mode.
    pub problem: String,
    /// What to do about it, keeping the user's data.
    pub fix: String,
}

/// A link followed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Where the link is (every link before it resolved).
    pub at: PathBuf,
    /// What it says.
    pub to: PathBuf,
}

/// What a checked path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The path with every link resolved; when nothing is there yet, where it would be made.
    pub real: PathBuf,
    /// Whether something is there.
    pub exists: bool,
    /// Its permission bits (0 when absent; on Windows always 0).
    pub mode: u32,
    /// The links followed on the way, in order.
    pub links: Vec<Link>,
}

/// `berth.db`, its WAL files, the record and the lock: the files berth reads in a data folder.
pub fn data_files(data_dir: &Path) -> [(PathBuf, Role); 5] {
    let db = paths::database_path(data_dir);
    let with = |suffix: &str| {
        let mut p = db.clone().into_os_string();
        p.push(suffix);
        PathBuf::from(p)
    };
    [
        (db.clone(), Role::Database),
        (with("-wal"), Role::Database),
        (with("-shm"), Role::Database),
        (paths::record_path(data_dir), Role::Record),
        (paths::data_lock_path(data_dir), Role::Lock),
    ]
}

/// Checks the data folder and the files berth reads in it ([`data_files`]). The daemon calls
/// it before it takes the lock or opens SQLite, and every client before it reads the record or
/// starts a daemon.
pub fn check_data_folder(dir: &Path, uid: Uid) -> Result<Found, NotOurs> {
    let found = check(dir, Role::DataFolder, uid)?;
    if found.exists {
        check_files_in(&found.real, dir, uid)?;
    }
    Ok(found)
}

/// Checks the [`data_files`] of `dir`, which just passed the check and whose path with every
/// link resolved is `real`: each walk starts there, not at `/` again.
#[cfg(unix)]
fn check_files_in(real: &Path, dir: &Path, uid: Uid) -> Result<(), NotOurs> {
    let meta = std::fs::symlink_metadata(real).map_err(|e| NotOurs {
        role: Role::DataFolder,
        path: dir.to_path_buf(),
        problem: format!("{real:?} cannot be inspected ({e})"),
        fix: format!(
            "Check it, or set {} to a folder of your own",
            paths::BERTH_DATA_DIR
        ),
    })?;
    for (file, role) in data_files(dir) {
        let name = Path::new(file.file_name().unwrap_or_default());
        walk(&file, (real, meta.clone()), name, role, uid)?;
    }
    Ok(())
}

#[cfg(windows)]
fn check_files_in(_real: &Path, dir: &Path, uid: Uid) -> Result<(), NotOurs> {
    for (file, role) in data_files(dir) {
        check(&file, role, uid)?;
    }
    Ok(())
}

/// Checks the state folder, before a log is opened in it.
pub fn check_state_folder(dir: &Path, uid: Uid) -> Result<Found, NotOurs> {
    check(dir, Role::StateFolder, uid)
}

/// Checks one folder or file (see the module's rule).
#[cfg(unix)]
pub fn check(path: &Path, role: Role, uid: Uid) -> Result<Found, NotOurs> {
    let root = Path::new("/");
    let meta = std::fs::symlink_metadata(root).map_err(|e| NotOurs {
        role,
        path: path.to_path_buf(),
        problem: format!("\"/\" cannot be inspected ({e})"),
        fix: format!("Set {} to a folder of your own", role.variable()),
    })?;
    walk(path, (root, meta), path, role, uid)
}

/// The walk of [`check`]: `rest` from the folder `from` (an absolute path with no link in it,
/// and what it is), or from the current folder when `rest` is relative and `from` is `/`.
/// Messages name `path`.
#[cfg(unix)]
fn walk(
    path: &Path,
    from: (&Path, std::fs::Metadata),
    rest: &Path,
    role: Role,
    uid: Uid,
) -> Result<Found, NotOurs> {
    use std::ffi::OsString;
    use std::os::unix::fs::MetadataExt;
    use std::path::Component;

    /// More than this many links on one path is a loop, as the system says (`ELOOP`).
    const MAX_LINKS: usize = 40;
    let refuse = |problem: String, fix: String| NotOurs {
        role,
        path: path.to_path_buf(),
        problem,
        fix,
    };
    let var = role.variable();
    let elsewhere = format!("or set {var} to a folder of your own");
    let start = if rest.is_absolute() || from.0 != Path::new("/") {
        rest.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| {
                refuse(
                    format!("the current folder cannot be read ({e})"),
                    elsewhere.clone(),
                )
            })?
            .join(rest)
    };
    // Names still to walk, the next one last.
    let mut pending: Vec<OsString> = Vec::new();
    let push = |pending: &mut Vec<OsString>, p: &Path| {
        for c in p.components().rev() {
            match c {
                Component::Normal(n) => pending.push(n.to_os_string()),
                Component::ParentDir => pending.push("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    };
    push(&mut pending, &start);
    let mut here = from.0.to_path_buf();
    let mut meta = from.1;
    let inspect = |p: &Path| std::fs::symlink_metadata(p);
    let mut links = Vec::new();
    while let Some(name) = pending.pop() {
        if name == ".." {
            here.pop();
            meta = inspect(&here).map_err(|e| {
                refuse(
                    format!("{here:?} on its way cannot be inspected ({e})"),
                    elsewhere.clone(),
                )
            })?;
            continue;
        }
        // `here` holds the next name: whoever owns it, or may write it, decides what that is.
        if !meta.is_dir() {
            return Err(refuse(
                format!("{here:?} on its way is not a folder"),
                format!("Fix that path, {elsewhere}"),
            ));
        }
        let (owner, mode) = (meta.uid(), meta.mode() & 0o7777);
        if owner != uid && owner != 0 {
            return Err(refuse(
                format!(
                    "the folder {here:?} on its way belongs to uid {owner}, not to you (uid {uid}) or root (mode {mode:04o}), and its owner can replace what is inside"
                ),
                format!(
                    "Keep it in a folder of your own: copy it there (`cp -a {} <new folder>`) and set {var} to the copy",
                    path.display()
                ),
            ));
        }
        if mode & 0o002 != 0 && mode & 0o1000 == 0 {
            return Err(refuse(
                format!(
                    "the folder {here:?} on its way can be written by others (mode {mode:04o}), who can replace what is inside"
                ),
                format!("Run `chmod o-w {}`, {elsewhere}", here.display()),
            ));
        }
        let next = here.join(&name);
        let m = match inspect(&next) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Nothing there yet: berth makes it, private, where the walk leads.
                let mut real = next;
                while let Some(rest) = pending.pop() {
                    real.push(rest);
                }
                return Ok(Found {
                    real,
                    exists: false,
                    mode: 0,
                    links,
                });
            }
            Err(e) => {
                return Err(refuse(
                    format!("{next:?} cannot be inspected ({e})"),
                    format!("Check it with `ls -ld {}`, {elsewhere}", next.display()),
                ));
            }
        };
        if m.file_type().is_symlink() {
            let to = std::fs::read_link(&next).map_err(|e| {
                refuse(
                    format!("the symlink {next:?} cannot be read ({e})"),
                    elsewhere.clone(),
                )
            })?;
            let owner = m.uid();
            if owner != uid && owner != 0 {
                let relink = format!(
                    "replace the link with one of your own (`rm {l} && ln -s {t} {l}`)",
                    l = next.display(),
                    t = to.display()
                );
                let fix = if pending.is_empty() && !role.is_folder() {
                    format!(
                        "If you did not make it, remove it (`rm {}`): {}; if what it points to is yours, {relink}",
                        next.display(),
                        role.aside()
                    )
                } else {
                    // The same place reached without the link: the folder itself, or the
                    // folder holding the file.
                    let mut through = here.join(&to);
                    through.extend(pending.iter().rev());
                    if !role.is_folder() {
                        through.pop();
                    }
                    format!(
                        "If {through:?} is yours, use it directly (set {var}={}) or {relink}",
                        through.display()
                    )
                };
                return Err(refuse(
                    format!(
                        "it is reached through the symlink {next:?} (to {to:?}), which belongs to uid {owner}, not to you (uid {uid}), and its owner can point it anywhere"
                    ),
                    fix,
                ));
            }
            links.push(Link {
                at: next,
                to: to.clone(),
            });
            if links.len() > MAX_LINKS {
                return Err(refuse(
                    format!("more than {MAX_LINKS} symlinks lead to it (a loop?)"),
                    format!("Fix the links, {elsewhere}"),
                ));
            }
            if to.is_absolute() {
                here = PathBuf::from("/");
                meta = inspect(&here).map_err(|e| {
                    refuse(
                        format!("\"/\" cannot be inspected ({e})"),
                        elsewhere.clone(),
                    )
                })?;
            }
            push(&mut pending, &to);
            continue;
        }
        here = next;
        meta = m;
    }
    // `here` is what the path names, every link resolved; commands name it, since `chown -R`
    // and `mv` given a link act on the link.
    let shown = here.display();
    let it = if links.is_empty() {
        "it".to_string()
    } else {
        format!("it leads to {here:?}, which")
    };
    let (owner, mode) = (meta.uid(), meta.mode() & 0o7777);
    let kind_ok = if role.is_folder() {
        meta.is_dir()
    } else {
        meta.is_file()
    };
    if !kind_ok {
        let kind = if role.is_folder() {
            "a folder"
        } else {
            "a regular file"
        };
        return Err(refuse(
            format!("{here:?} is not {kind}"),
            format!(
                "It is nothing berth made: move it aside (`mv {shown} {shown}.aside`), {elsewhere}"
            ),
        ));
    }
    if owner != uid {
        let fix = if role.is_folder() {
            format!(
                "If it holds your data, have it given back to you (as root: `chown -R {uid} {shown} && chmod go-w {shown}`); otherwise set {var} to a folder of your own"
            )
        } else {
            format!(
                "If it is yours, have it given back to you (as root: `chown {uid} {shown}`); if you did not make it, move it aside (`mv {shown} {shown}.foreign`): {}",
                role.aside()
            )
        };
        return Err(refuse(
            format!("{it} belongs to uid {owner}, not to you (uid {uid}), and has mode {mode:04o}"),
            fix,
        ));
    }
    if mode & 0o022 != 0 {
        return Err(refuse(
            format!("{it} is yours, but group or others can write it (mode {mode:04o})"),
            format!("Run `chmod go-w {shown}`"),
        ));
    }
    Ok(Found {
        real: here,
        exists: true,
        mode,
        links,
    })
}

/// Checks one folder or file: on Windows its kind only (see the module's documentation).
#[cfg(windows)]
pub fn check(path: &Path, role: Role, _uid: Uid) -> Result<Found, NotOurs> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Found {
                real: path.to_path_buf(),
                exists: false,
                mode: 0,
                links: Vec::new(),
            });
        }
        Err(e) => {
            return Err(NotOurs {
                role,
                path: path.to_path_buf(),
                problem: format!("it cannot be inspected ({e})"),
                fix: format!(
                    "Check it, or set {} to a folder of your own",
                    role.variable()
                ),
            });
        }
    };
    let kind_ok = if role.is_folder() {
        meta.is_dir()
    } else {
        meta.is_file()
    };
    if !kind_ok {
        return Err(NotOurs {
            role,
            path: path.to_path_buf(),
            problem: format!(
                "it is not {}",
                if role.is_folder() {
                    "a folder"
                } else {
                    "a regular file"
                }
            ),
            fix: format!(
                "It is nothing berth made: move it aside, or set {} to a folder of your own",
                role.variable()
            ),
        });
    }
    let links = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::read_link(path)
            .map(|to| {
                vec![Link {
                    at: path.to_path_buf(),
                    to,
                }]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(Found {
        real: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        exists: true,
        mode: 0,
        links,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::paths::current_uid;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_missing_folder_passes_and_says_where_it_would_be_made() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        let found = check_data_folder(&tmp.path().join("a/b"), current_uid()).unwrap();
        assert!(!found.exists);
        assert_eq!(found.real, real.join("a/b"));
        // A link of ours to a folder not made yet leads to where it would be.
        symlink(real.join("later"), real.join("link")).unwrap();
        let found = check_data_folder(&real.join("link"), current_uid()).unwrap();
        assert_eq!((found.real, found.exists), (real.join("later"), false));
    }

    #[test]
    fn a_folder_made_with_mkdir_passes_and_one_others_can_write_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o755);
        let found = check_data_folder(&dir, current_uid()).unwrap();
        assert!(found.exists && found.links.is_empty());
        assert_eq!(found.mode, 0o755);
        for open in [0o775, 0o757, 0o777] {
            chmod(&dir, open);
            let err = check_data_folder(&dir, current_uid()).unwrap_err();
            assert!(err.problem.contains(&format!("mode {open:04o}")), "{err}");
            assert!(err.fix.contains("chmod go-w"), "{err}");
        }
    }

    #[test]
    fn a_folder_of_another_uid_names_its_owner_its_mode_and_a_fix_that_keeps_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o700);
        let other = current_uid() + 1;
        let err = check_data_folder(&dir, other).unwrap_err();
        assert_eq!(err.role, Role::DataFolder);
        let text = err.to_string();
        // Run as another user than root, the temporary folder above is refused first, in the
        // same words.
        for part in [
            "refusing the data folder",
            &format!("belongs to uid {}, not to you (uid {other})", current_uid()),
            "mode 0700",
            "BERTH_DATA_DIR",
        ] {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
        if current_uid() == 0 {
            assert!(text.contains("chown -R"), "{text}");
        }
    }

    #[test]
    fn a_database_file_others_can_write_or_that_is_not_a_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        let db = paths::database_path(&dir);
        std::fs::write(&db, b"").unwrap();
        chmod(&db, 0o600);
        check_data_folder(&dir, current_uid()).unwrap();
        chmod(&db, 0o666);
        let err = check_data_folder(&dir, current_uid()).unwrap_err();
        assert_eq!((err.role, err.path.clone()), (Role::Database, db.clone()));
        std::fs::remove_file(&db).unwrap();
        std::fs::create_dir(dir.join("berth.db-wal")).unwrap();
        let err = check_data_folder(&dir, current_uid()).unwrap_err();
        assert!(err.problem.contains("not a regular file"), "{err}");
    }

    #[test]
    fn links_of_ours_are_followed_and_named() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        let target = real.join("target");
        std::fs::create_dir(&target).unwrap();
        symlink("target", real.join("rel")).unwrap();
        symlink(real.join("rel"), real.join("abs")).unwrap();
        let found = check_data_folder(&real.join("abs"), current_uid()).unwrap();
        assert_eq!(found.real, target);
        assert_eq!(
            found.links,
            [
                Link {
                    at: real.join("abs"),
                    to: real.join("rel")
                },
                Link {
                    at: real.join("rel"),
                    to: "target".into()
                },
            ]
        );
        // `..` after a link is the link target's parent, as the system resolves it.
        std::fs::create_dir(target.join("sub")).unwrap();
        symlink(target.join("sub"), real.join("deep")).unwrap();
        let found = check(&real.join("deep/../sub"), Role::DataFolder, current_uid()).unwrap();
        assert_eq!(found.real, target.join("sub"));
    }

    #[test]
    fn a_loop_of_links_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        symlink("b", tmp.path().join("a")).unwrap();
        symlink("a", tmp.path().join("b")).unwrap();
        let err = check_data_folder(&tmp.path().join("a"), current_uid()).unwrap_err();
        assert!(err.problem.contains("a loop?"), "{err}");
    }

    #[test]
    fn a_folder_others_can_write_on_the_way_is_refused_unless_sticky() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir_all(open.join("data")).unwrap();
        chmod(&open, 0o777);
        let err = check_data_folder(&open.join("data"), current_uid()).unwrap_err();
        assert!(
            err.problem
                .contains("on its way can be written by others (mode 0777)"),
            "{err}"
        );
        chmod(&open, 0o1777);
        check_data_folder(&open.join("data"), current_uid()).unwrap();
    }
}
