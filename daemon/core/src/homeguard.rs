//! The lexical part of the local-home guard (docs/reference.md, "Workspaces and homes"): which
//! folders may never hold a workspace's files, judged from the path alone. The caller runs it on
//! the typed path and on the symlink-resolved one, and does the I/O checks (exists, is a folder,
//! `access(W_OK|X_OK)`) itself. The store runs it again on every home derivation, so a row written
//! straight into the database cannot yield a home at `/`.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::pathutil::{has_dotdot, is_strict_ancestor, is_within, normalize};

/// Folders that belong to the system, on Linux and macOS. Both lists apply everywhere: a path is
/// judged before knowing which machine's files it will meet, and neither list is a place for a
/// user's notes on the other system.
pub const SYSTEM_FOLDERS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib64",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var",
    "/System",
    "/Library",
    "/Applications",
    "/private/etc",
    "/private/var",
];

/// Folders that belong to Windows, on every drive (`C:\\Windows`, `D:\\Program Files`, ...),
/// compared without regard to case as NTFS does.
pub const WINDOWS_SYSTEM_FOLDERS: &[&str] = &[
    "Windows",
    "Program Files",
    "Program Files (x86)",
    "ProgramData",
    "$Recycle.Bin",
    "System Volume Information",
];

/// The environment the guard judges against, bound in by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardCtx {
    /// `$HOME` and `BERTH_EXTRA_HOME`.
    pub homes: Vec<PathBuf>,
    /// The platform's temporary folder (`std::env::temp_dir()`).
    pub temp_dir: PathBuf,
    /// berth's data dir.
    pub data_dir: PathBuf,
}

const INSTEAD: &str = "choose a folder inside your home, such as ~/notes";

/// Why a folder cannot be a local home. Each message names the path, why, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HomeRefusal {
    #[error(
        "cannot use \"{}\" as a home: it is not an absolute path; give the full path, such as /home/you/notes",
        path.display()
    )]
    NotAbsolute { path: PathBuf },
    #[error(
        "cannot use \"{}\" as a home: it contains a \"..\" segment; give the folder's full path without \"..\"",
        path.display()
    )]
    DotDot { path: PathBuf },
    #[error(
        "cannot use \"{}\" as a home: it is the filesystem root, and would hold every file on the device; {INSTEAD}",
        path.display()
    )]
    FilesystemRoot { path: PathBuf },
    #[error(
        "cannot use \"{}\" as a home: it is a home directory, shared by everything you keep there; {INSTEAD}",
        path.display()
    )]
    IsHome { path: PathBuf },
    #[error(
        "cannot use \"{}\" as a home: it contains the home directory {}; {INSTEAD}",
        path.display(), home.display()
    )]
    AncestorOfHome { path: PathBuf, home: PathBuf },
    #[error(
        "cannot use \"{}\" as a home: it is inside the system folder {}; {INSTEAD}",
        path.display(), system.display()
    )]
    SystemFolder { path: PathBuf, system: PathBuf },
    #[error(
        "cannot use \"{}\" as a home: it overlaps berth's data folder {}, where berth keeps its own files; {INSTEAD}",
        path.display(), data_dir.display()
    )]
    OverlapsDataDir { path: PathBuf, data_dir: PathBuf },
}

/// Refuses `path` as a local home on lexical grounds (docs/reference.md, "Workspaces and homes"),
/// first reason first.
pub fn check_home_lexical(path: &Path, ctx: &GuardCtx) -> Result<(), HomeRefusal> {
    let owned = || path.to_path_buf();
    if !path.is_absolute() {
        return Err(HomeRefusal::NotAbsolute { path: owned() });
    }
    if has_dotdot(path) {
        return Err(HomeRefusal::DotDot { path: owned() });
    }
    let norm = normalize(path);
    if norm.parent().is_none() {
        return Err(HomeRefusal::FilesystemRoot { path: owned() });
    }
    if ctx.homes.iter().any(|home| normalize(home) == norm) {
        return Err(HomeRefusal::IsHome { path: owned() });
    }
    if let Some(home) = ctx
        .homes
        .iter()
        .find(|home| is_strict_ancestor(&norm, home))
    {
        return Err(HomeRefusal::AncestorOfHome {
            path: owned(),
            home: home.clone(),
        });
    }
    // Before the exceptions below: the data dir usually lies inside the home.
    if is_within(&norm, &ctx.data_dir) || is_within(&ctx.data_dir, &norm) {
        return Err(HomeRefusal::OverlapsDataDir {
            path: owned(),
            data_dir: ctx.data_dir.clone(),
        });
    }
    let Some(system) = system_folder_of(&norm) else {
        return Ok(());
    };
    // Inside a home wins (`/var/home/u` on Fedora Atomic, `/root` for root), and so does the
    // temporary folder (`/var/folders/...` on macOS), unless those are broad system places
    // themselves: a home or TMPDIR of `/` or `/usr` must not open up the whole system.
    let exempt = ctx
        .homes
        .iter()
        .chain(std::iter::once(&ctx.temp_dir))
        .filter(|place| is_specific(place))
        .any(|place| is_within(&norm, place));
    if exempt {
        return Ok(());
    }
    Err(HomeRefusal::SystemFolder {
        path: owned(),
        system,
    })
}

/// The system folder `path` is in, if any.
fn system_folder_of(path: &Path) -> Option<PathBuf> {
    if cfg!(windows) {
        return windows_system_folder_of(path);
    }
    SYSTEM_FOLDERS
        .iter()
        .map(Path::new)
        .find(|system| within_system(path, system))
        .map(Path::to_path_buf)
}

/// The Windows system folder `path` is in: the first component below a drive's (or share's)
/// root, when it names one of [`WINDOWS_SYSTEM_FOLDERS`].
fn windows_system_folder_of(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut parts = path.components();
    let mut root = PathBuf::new();
    for part in parts.by_ref() {
        match part {
            Component::Prefix(_) | Component::RootDir => root.push(part),
            Component::Normal(name) => {
                let name = name.to_string_lossy();
                return WINDOWS_SYSTEM_FOLDERS
                    .iter()
                    .find(|system| system.eq_ignore_ascii_case(&name))
                    .map(|system| root.join(system));
            }
            _ => return None,
        }
    }
    None
}

/// macOS volumes are case-insensitive by default: `/system/x` is `/System/x` there.
fn within_system(path: &Path, system: &Path) -> bool {
    if cfg!(target_os = "macos") {
        let lower = |p: &Path| PathBuf::from(p.to_string_lossy().to_lowercase());
        is_within(&lower(path), &lower(system))
    } else {
        is_within(path, system)
    }
}

/// A place that may exempt folders beneath it: absolute, not the filesystem root, and neither a
/// system folder nor an ancestor of one. `/var/home/u` qualifies (it is only *inside* one).
fn is_specific(place: &Path) -> bool {
    let place = normalize(place);
    if !place.is_absolute() || place.parent().is_none() {
        return false;
    }
    // root's home is a system folder by name, yet a home like any other for root.
    if place == Path::new("/root") {
        return true;
    }
    if cfg!(windows) {
        return windows_system_folder_of(&place).is_none();
    }
    !SYSTEM_FOLDERS
        .iter()
        .map(Path::new)
        .any(|system| place == system || is_strict_ancestor(&place, system))
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;

    fn ctx() -> GuardCtx {
        GuardCtx {
            homes: vec![PathBuf::from(r"C:\Users\u")],
            temp_dir: PathBuf::from(r"C:\Users\u\AppData\Local\Temp"),
            data_dir: PathBuf::from(r"C:\Users\u\AppData\Local\berth"),
        }
    }

    #[test]
    fn windows_system_folders_roots_and_homes_are_refused_on_any_drive_in_any_case() {
        let refused = |p: &str| check_home_lexical(Path::new(p), &ctx()).unwrap_err();
        assert!(matches!(
            refused(r"C:\"),
            HomeRefusal::FilesystemRoot { .. }
        ));
        assert!(matches!(refused(r"C:\Users\u"), HomeRefusal::IsHome { .. }));
        assert!(matches!(
            refused(r"C:\Users"),
            HomeRefusal::AncestorOfHome { .. }
        ));
        for p in [
            r"C:\Windows\System32",
            r"d:\program files\x",
            r"C:\ProgramData\notes",
        ] {
            assert!(
                matches!(refused(p), HomeRefusal::SystemFolder { .. }),
                "{p}"
            );
        }
        assert!(matches!(
            refused(r"C:\Users\u\AppData\Local\berth\x"),
            HomeRefusal::OverlapsDataDir { .. }
        ));
        assert!(matches!(refused(r"C:\a\..\b"), HomeRefusal::DotDot { .. }));
        for ok in [r"C:\Users\u\notes", r"D:\notes", r"C:\Windowsy\notes"] {
            assert_eq!(check_home_lexical(Path::new(ok), &ctx()), Ok(()), "{ok}");
        }
    }
}

// Its paths are Unix ones; the Windows rules have their own tests above.
#[cfg(all(test, unix))]
mod tests {
    use rstest::rstest;

    use super::*;

    fn ctx() -> GuardCtx {
        GuardCtx {
            homes: vec!["/home/u".into(), "/mnt/c/Users/u".into()],
            temp_dir: "/tmp".into(),
            data_dir: "/home/u/.local/share/berth".into(),
        }
    }

    fn with(homes: &[&str], temp: &str) -> GuardCtx {
        GuardCtx {
            homes: homes.iter().map(PathBuf::from).collect(),
            temp_dir: temp.into(),
            data_dir: "/home/u/.local/share/berth".into(),
        }
    }

    fn check(path: &str, ctx: &GuardCtx) -> Result<(), HomeRefusal> {
        check_home_lexical(Path::new(path), ctx)
    }

    #[rstest]
    #[case::a_folder_in_home_is_fine("/home/u/notes")]
    #[case::a_folder_in_the_extra_home_is_fine("/mnt/c/Users/u/notes")]
    #[case::a_folder_on_another_disk_is_fine("/srv/berth/notes")]
    #[case::a_folder_in_the_temp_dir_is_fine("/tmp/notes")]
    #[case::a_sibling_named_like_the_data_dir_is_fine("/home/u/.local/share/berth2")]
    #[case::a_folder_named_like_a_system_folder_is_fine("/usrdata/notes")]
    #[case::dots_do_not_matter("/home/u/./notes")]
    fn ordinary_folders_pass(#[case] path: &str) {
        assert_eq!(check(path, &ctx()), Ok(()));
    }

    #[rstest]
    #[case::a_relative_path_is_refused("notes", "not an absolute path")]
    #[case::a_dotdot_segment_is_refused("/home/u/notes/../..", "contains a \"..\" segment")]
    #[case::the_filesystem_root_is_refused("/", "the filesystem root")]
    #[case::home_is_refused("/home/u", "is a home directory")]
    #[case::home_with_a_trailing_slash_is_refused("/home/u/", "is a home directory")]
    #[case::the_extra_home_is_refused("/mnt/c/Users/u", "is a home directory")]
    #[case::an_ancestor_of_home_is_refused("/home", "contains the home directory /home/u")]
    #[case::an_ancestor_of_the_extra_home_is_refused(
        "/mnt/c",
        "contains the home directory /mnt/c/Users/u"
    )]
    #[case::a_system_folder_is_refused("/etc", "inside the system folder /etc")]
    #[case::a_folder_below_a_system_folder_is_refused("/usr/local/notes", "system folder /usr")]
    #[case::root_users_home_is_refused_for_others("/root/notes", "system folder /root")]
    #[case::a_macos_system_folder_is_refused("/Library/notes", "system folder /Library")]
    #[case::a_private_var_folder_is_refused("/private/var/db", "system folder /private/var")]
    #[case::the_data_dir_is_refused("/home/u/.local/share/berth", "overlaps berth's data folder")]
    #[case::a_folder_inside_the_data_dir_is_refused(
        "/home/u/.local/share/berth/workspaces/x",
        "overlaps berth's data folder"
    )]
    #[case::a_folder_holding_the_data_dir_is_refused(
        "/home/u/.local",
        "overlaps berth's data folder"
    )]
    fn unsafe_folders_are_refused(#[case] path: &str, #[case] why: &str) {
        let msg = check(path, &ctx()).unwrap_err().to_string();
        assert!(msg.contains(why), "{msg}");
        assert!(msg.contains(&format!("\"{path}\"")), "{msg}");
    }

    #[rstest]
    #[case::a_home_under_var_wins_over_the_system_folder(&["/var/home/u"], "/tmp", "/var/home/u/notes")]
    #[case::the_macos_temp_dir_under_var_wins(
        &["/Users/u"], "/var/folders/ab/T", "/var/folders/ab/T/berth-test"
    )]
    #[case::the_private_temp_dir_wins(
        &["/Users/u"], "/private/var/folders/ab/T", "/private/var/folders/ab/T/x"
    )]
    #[case::roots_own_home_is_fine_for_root(&["/root"], "/tmp", "/root/notes")]
    fn inside_a_home_or_the_temp_dir_beats_a_system_folder(
        #[case] homes: &[&str],
        #[case] temp: &str,
        #[case] path: &str,
    ) {
        assert_eq!(check(path, &with(homes, temp)), Ok(()));
    }

    #[rstest]
    #[case::a_temp_dir_of_var_exempts_nothing(&["/home/u"], "/var", "/var/lib/x")]
    #[case::a_temp_dir_at_the_root_exempts_nothing(&["/home/u"], "/", "/etc/x")]
    #[case::a_home_at_the_root_exempts_nothing(&["/"], "/tmp", "/etc/x")]
    #[case::a_home_of_usr_exempts_nothing(&["/usr"], "/tmp", "/usr/bin/x")]
    fn broad_homes_and_temp_dirs_exempt_nothing(
        #[case] homes: &[&str],
        #[case] temp: &str,
        #[case] path: &str,
    ) {
        assert!(matches!(
            check(path, &with(homes, temp)),
            Err(HomeRefusal::SystemFolder { .. })
        ));
    }

    #[test]
    fn every_refusal_says_what_to_do_instead() {
        for path in ["/", "/home/u", "/home", "/etc/x", "/home/u/.local"] {
            let msg = check(path, &ctx()).unwrap_err().to_string();
            assert!(msg.contains("such as ~/notes"), "{msg}");
        }
    }
}
