//! Component-wise path helpers. Every containment question in berth goes through here, so none
//! is ever answered by string prefix (`/a/proj` is not inside `/a/pro`). No filesystem access.

use std::borrow::Cow;
use std::path::{Component, Path};

// The lexical forms are the vocabulary's, so that the clients spell a path as the core does.
use berth_vocab::pathform::is_separator;
pub use berth_vocab::pathform::{normalize, normalized, without_verbatim};

/// True when `path` is `ancestor` or lies beneath it, judged by whole components.
pub fn is_within(path: &Path, ancestor: &Path) -> bool {
    // Path::starts_with compares components, and components() already drops interior `.` and
    // trailing slashes; normalize() also drops a leading `.`.
    normalized(path).starts_with(normalized(ancestor))
}

/// True when `ancestor` contains `of` and is not the same folder.
pub fn is_strict_ancestor(ancestor: &Path, of: &Path) -> bool {
    is_within(of, ancestor) && depth(of) > depth(ancestor)
}

/// [`is_strict_ancestor`] for two paths already in normal form ([`normalized`]), by bytes: a
/// prefix that ends at a `/`. Every walk asks it of each folder and each home, and comparing
/// components parses both paths each time.
pub fn is_strict_ancestor_normal(ancestor: &Path, of: &Path) -> bool {
    let (a, o) = (
        ancestor.as_os_str().as_encoded_bytes(),
        of.as_os_str().as_encoded_bytes(),
    );
    if !(a.starts_with(b"/") && o.starts_with(b"/")) || has_dotdot(of) {
        // Neither relative paths nor `..` come from a walk (its paths are canonical); the
        // component-wise form says what they mean.
        return is_strict_ancestor(ancestor, of);
    }
    o.len() > a.len() && o.starts_with(a) && (a == b"/" || o[a.len()] == b'/')
}

/// `path` beneath `base` (both in normal form, as a walk's are), by bytes where both are Unix
/// absolute paths without `..`; otherwise by components, as [`Path::strip_prefix`] does. `None`
/// when `path` is not within `base`.
pub fn strip_prefix_normal<'p>(path: &'p Path, base: &Path) -> Option<&'p Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let (p, b) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
        if plain_absolute(p) && plain_absolute(b) {
            let b = b.strip_suffix(b"/").unwrap_or(b);
            let rest = p.strip_prefix(b)?;
            return match rest {
                [] => Some(Path::new("")),
                [b'/', rest @ ..] => Some(Path::new(std::ffi::OsStr::from_bytes(rest))),
                _ if b.is_empty() => Some(Path::new(std::ffi::OsStr::from_bytes(rest))),
                _ => None,
            };
        }
    }
    path.strip_prefix(base).ok()
}

/// An absolute Unix path whose bytes are its components: no empty, `.` or `..` segment.
#[cfg(unix)]
fn plain_absolute(bytes: &[u8]) -> bool {
    let Some(rest) = bytes.strip_prefix(b"/") else {
        return false;
    };
    let rest = rest.strip_suffix(b"/").unwrap_or(rest);
    rest.is_empty()
        || rest
            .split(|b| *b == b'/')
            .all(|segment| !matches!(segment, b"" | b"." | b".."))
}

/// The number of normal (named) components: `/` is 0, `/home/u` is 2.
pub fn depth(path: &Path) -> usize {
    path.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
}

/// True when any component is `..`.
pub fn has_dotdot(path: &Path) -> bool {
    // By bytes: a `..` component is a `..` between separators, and the hot path asks this.
    path.as_os_str()
        .as_encoded_bytes()
        .split(|b| is_separator(*b))
        .any(|segment| segment == b"..")
}

/// A relative path as a qualified path spells it: components joined by `/` on every platform
/// (Windows writes `\\` between them; a qualified path, quoted back, must read the same).
pub fn slashed(rel: &Path) -> Cow<'_, str> {
    let text = rel.to_string_lossy();
    if cfg!(windows) && text.contains('\\') {
        Cow::Owned(text.replace('\\', "/"))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    #[cfg(unix)] // Unix paths; elsewhere the component-wise form is the only one
    #[rstest::rstest]
    #[case("/tmp/w", "/tmp/w")]
    #[case("/tmp/w/a/b", "/tmp/w")]
    #[case("/tmp/w2", "/tmp/w")]
    #[case("/tmp", "/tmp/w")]
    #[case("/tmp/w/", "/tmp/w")]
    #[case("/tmp/w/a", "/tmp/w/")]
    #[case("/a", "/")]
    #[case("/", "/")]
    #[case("/tmp//w/a", "/tmp/w")]
    #[case("/tmp/./w/a", "/tmp/w")]
    #[case("/tmp/w/../w/a", "/tmp/w")]
    #[case("tmp/w/a", "tmp/w")]
    fn stripping_by_bytes_agrees_with_components(#[case] path: &str, #[case] base: &str) {
        let (path, base) = (Path::new(path), Path::new(base));
        assert_eq!(
            strip_prefix_normal(path, base),
            path.strip_prefix(base).ok()
        );
    }

    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::a_folder_is_within_itself("/a/proj", "/a/proj", true)]
    #[case::a_child_is_within_its_parent("/a/proj/src", "/a/proj", true)]
    #[case::everything_is_within_the_filesystem_root("/a", "/", true)]
    #[case::a_longer_sibling_name_is_not_within("/a/proj", "/a/pro", false)]
    #[case::a_shorter_sibling_name_is_not_within("/a/pro", "/a/proj", false)]
    #[case::a_parent_is_not_within_its_child("/a", "/a/proj", false)]
    #[case::a_trailing_slash_changes_nothing("/a/proj/", "/a/proj", true)]
    #[case::a_dot_component_changes_nothing("/a/./proj/x", "/a/proj", true)]
    fn containment_is_judged_by_components(
        #[case] path: &str,
        #[case] ancestor: &str,
        #[case] expected: bool,
    ) {
        assert_eq!(is_within(Path::new(path), Path::new(ancestor)), expected);
    }

    #[rstest]
    #[case::a_parent_is_a_strict_ancestor("/a", "/a/b", true)]
    #[case::the_root_is_a_strict_ancestor("/", "/a", true)]
    #[case::a_folder_is_not_its_own_strict_ancestor("/a/b", "/a/b/", false)]
    #[case::a_prefix_sibling_is_not_an_ancestor("/a/b", "/a/bc", false)]
    fn strict_ancestry_excludes_the_folder_itself(
        #[case] ancestor: &str,
        #[case] of: &str,
        #[case] expected: bool,
    ) {
        assert_eq!(
            is_strict_ancestor(Path::new(ancestor), Path::new(of)),
            expected
        );
    }

    #[rstest]
    #[case::the_root_has_depth_zero("/", 0)]
    #[case::a_home_has_depth_two("/home/u", 2)]
    #[case::dots_do_not_count("/home/./u/", 2)]
    fn depth_counts_named_components(#[case] path: &str, #[case] expected: usize) {
        assert_eq!(depth(Path::new(path)), expected);
    }

    #[rstest]
    #[case::a_middle_dotdot_is_found("/a/../b", true)]
    #[case::a_trailing_dotdot_is_found("/a/..", true)]
    #[case::dots_in_a_name_are_not_dotdot("/a/..b/c..", false)]
    #[case::a_single_dot_is_not_dotdot("/a/./b", false)]
    fn dotdot_is_a_whole_component(#[case] path: &str, #[case] expected: bool) {
        assert_eq!(has_dotdot(Path::new(path)), expected);
    }

    proptest::proptest! {
        // Unix paths: on Windows the alphabet reaches `//./`, a device path's prefix.
        #[cfg(unix)]
        /// Between normal forms, the byte-wise ancestry answers exactly as the component-wise.
        #[test]
        fn strict_ancestry_by_bytes_matches_components(
            a in "[/.ab]{0,8}",
            b in "[/.ab]{0,10}",
        ) {
            let (a, b) = (normalize(Path::new(&a)), normalize(Path::new(&b)));
            // Also a prefix of `b`, so that ancestors come up often.
            let cut = b.as_os_str().len() / 2;
            let prefix = normalize(Path::new(&b.to_string_lossy()[..cut]));
            for ancestor in [&a, &prefix] {
                proptest::prop_assert_eq!(
                    is_strict_ancestor_normal(ancestor, &b),
                    is_strict_ancestor(ancestor, &b),
                    "{:?} of {:?}", ancestor, b
                );
            }
        }
    }

    #[cfg(windows)]
    #[test]
    fn qualified_paths_use_slashes_on_windows() {
        assert_eq!(slashed(Path::new(r"notes\a.md")), "notes/a.md");
        assert_eq!(slashed(&Path::new("notes").join("a.md")), "notes/a.md");
    }

    #[cfg(windows)]
    #[test]
    fn a_backslash_separates_dotdot_on_windows() {
        assert!(has_dotdot(Path::new(r"C:\a\..\b")));
        assert!(!has_dotdot(Path::new(r"C:\a\..b\c")));
        assert_eq!(
            normalize(Path::new(r"C:\a\.\b")),
            std::path::PathBuf::from(r"C:\a\b")
        );
        assert_eq!(
            normalize(Path::new(r"C:\a/b")),
            std::path::PathBuf::from(r"C:\a\b")
        );
    }
}
