//! The lexical forms of a path, with no filesystem access: `.` components removed, and on
//! Windows the verbatim prefix dropped where the plain form names the same file. The core's
//! containment questions (`berth_core::pathutil`) and the clients that follow a path
//! (`berth_client::landing`, a data folder's canonical form) spell a path the same way.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// A canonical Windows path in the form people and programs write it: `\\?\C:\x` becomes
/// `C:\x` and `\\?\UNC\server\share\x` becomes `\\server\share\x`, when that form names the
/// same file (every component valid without the verbatim prefix, and short enough). Anything
/// else, and every path on other systems, is returned as it is.
pub fn without_verbatim(path: PathBuf) -> PathBuf {
    #[cfg(windows)]
    {
        simpler_windows_form(&path).unwrap_or(path)
    }
    #[cfg(not(windows))]
    {
        path
    }
}

#[cfg(windows)]
fn simpler_windows_form(path: &Path) -> Option<PathBuf> {
    use std::path::Prefix;
    // Past MAX_PATH a verbatim path is the only form that reaches the file.
    const MAX_PATH: usize = 260;
    let mut parts = path.components();
    let Some(Component::Prefix(prefix)) = parts.next() else {
        return None;
    };
    let mut out = match prefix.kind() {
        Prefix::VerbatimDisk(drive) => format!("{}:", drive as char),
        Prefix::VerbatimUNC(server, share) => {
            format!("\\\\{}\\{}", server.to_str()?, share.to_str()?)
        }
        _ => return None,
    };
    for part in parts {
        match part {
            Component::RootDir => {}
            Component::Normal(name) => {
                let name = name.to_str()?;
                if !is_plain_windows_name(name) {
                    return None;
                }
                out.push('\\');
                out.push_str(name);
            }
            _ => return None,
        }
    }
    if !out.ends_with('\\') && out.len() == 2 {
        out.push('\\');
    }
    (out.len() < MAX_PATH).then(|| PathBuf::from(out))
}

/// A name Windows reads the same with or without the verbatim prefix: no reserved device
/// name, no trailing dot or space, no character the normal form treats specially.
#[cfg(windows)]
fn is_plain_windows_name(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
        "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.ends_with(['.', ' '])
        && !name.contains(['<', '>', ':', '"', '/', '|', '?', '*'])
        && !name.chars().any(|c| (c as u32) < 32)
        && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem))
}

/// Removes `.` components, lexically. `..` is kept: resolving it without the filesystem would be
/// wrong whenever the component before it is a symlink.
pub fn normalize(path: &Path) -> PathBuf {
    normalized(path).into_owned()
}

/// [`normalize`] without a copy when `path` is already in normal form, as the canonical paths
/// on resolution's hot path are.
pub fn normalized(path: &Path) -> Cow<'_, Path> {
    if is_normal(path) {
        return Cow::Borrowed(path);
    }
    let out: PathBuf = path
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect();
    if out.as_os_str().is_empty() && !path.as_os_str().is_empty() {
        Cow::Owned(PathBuf::from("."))
    } else {
        Cow::Owned(out)
    }
}

/// True when [`normalize`] would return `path` unchanged: no empty segment (`//`, a trailing
/// `/`) and no `.` segment, other than `/` and `.` themselves.
fn is_normal(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes == b"/" || bytes == b"." || bytes.is_empty() {
        return true;
    }
    // Windows reads `/` as a separator too, but its normal form (and every canonical path)
    // spells them `\\`.
    if cfg!(windows) && bytes.contains(&b'/') {
        return false;
    }
    let relative = bytes.strip_prefix(b"/").unwrap_or(bytes);
    relative
        .split(|b| is_separator(*b))
        .all(|segment| !segment.is_empty() && segment != b".")
}

/// Whether `b` separates components: `/`, and on Windows `\\` too.
pub fn is_separator(b: u8) -> bool {
    b == b'/' || (cfg!(windows) && b == b'\\')
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::interior_dots_go("/a/./b/.", "/a/b")]
    #[case::a_leading_dot_goes("./a/b", "a/b")]
    #[case::dotdot_stays("/a/../b", "/a/../b")]
    #[case::a_lone_dot_stays_a_dot(".", ".")]
    #[case::a_dot_slash_is_a_dot("./", ".")]
    #[case::doubled_and_trailing_slashes_go("//a//b/", "/a/b")]
    #[case::the_root_stays("/", "/")]
    #[case::a_dot_below_the_root_goes("/.", "/")]
    #[case::empty_stays_empty("", "")]
    #[case::a_clean_path_stays("/srv/app/src", "/srv/app/src")]
    fn normalize_removes_only_dots(#[case] path: &str, #[case] expected: &str) {
        assert_eq!(normalize(Path::new(path)), PathBuf::from(expected));
    }

    /// The component-wise form, without the fast path.
    #[cfg(unix)]
    fn slow_normalize(path: &Path) -> PathBuf {
        let out: PathBuf = path
            .components()
            .filter(|c| *c != Component::CurDir)
            .collect();
        if out.as_os_str().is_empty() && !path.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            out
        }
    }

    proptest::proptest! {
        #[cfg(unix)] // written with Unix paths
        /// The borrowed fast path answers exactly as the component-wise form, byte for byte.
        #[test]
        fn the_fast_path_changes_no_answer(text in "[/.a]{0,12}") {
            let path = Path::new(&text);
            let fast = normalized(path);
            let slow = slow_normalize(path);
            proptest::prop_assert_eq!(
                fast.as_os_str().as_encoded_bytes(),
                slow.as_os_str().as_encoded_bytes()
            );
            if matches!(fast, Cow::Borrowed(_)) {
                proptest::prop_assert_eq!(fast.as_os_str(), path.as_os_str());
            }
        }
    }

    #[cfg(windows)]
    #[test]
    fn windows_paths_lose_the_verbatim_prefix_only_when_that_names_the_same_file() {
        let same = |from: &str, to: &str| {
            assert_eq!(
                without_verbatim(PathBuf::from(from)),
                PathBuf::from(to),
                "{from}"
            );
        };
        same(r"\\?\C:\Users\u\proj", r"C:\Users\u\proj");
        same(r"\\?\C:\", r"C:\");
        same(
            r"\\?\UNC\wsl.localhost\Ubuntu\home\u",
            r"\\wsl.localhost\Ubuntu\home\u",
        );
        // Names the plain form would read differently keep the prefix.
        same(r"\\?\C:\x\con", r"\\?\C:\x\con");
        same(r"\\?\C:\x\trailing.", r"\\?\C:\x\trailing.");
        same(r"C:\already\plain", r"C:\already\plain");
        let long = format!(r"\\?\C:\{}", "a".repeat(300));
        same(&long, &long);
    }
}
