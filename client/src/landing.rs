//! Where a write tool's file lands (docs/reference.md, "The native-tool guard"): made absolute
//! and followed through links as the write follows them. The pre-tool hook follows its targets
//! with this and sends what it found; the daemon follows them with it too whenever it cannot
//! check the hook's answer from memory (docs/decisions/0052-the-guard-answers-from-memory.md).

use std::path::{Component, Path, PathBuf};

use berth_vocab::pathform::{normalize, without_verbatim};

/// The most links followed for one target, as the system's own limit (`ELOOP`) does.
const MAX_LINKS: usize = 40;

/// Where a write lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    /// The path written (absolute, links resolved).
    pub path: PathBuf,
    /// The deepest folder of `path` that exists (canonical): `path` is this folder and names
    /// that did not exist when it was followed.
    pub folder: PathBuf,
}

/// Where a tool's write to `raw` lands: made absolute against `cwd`, and followed through
/// links as the tool follows them. The deepest part of the path that exists is resolved by the
/// system (every link in it, the last one too: a write to a link writes where it leads); a
/// link at the end that leads nowhere yet is followed by hand; the part that does not exist
/// yet is appended as written, and a `..` in it is taken from the real folder, whose result is
/// followed again (it may name folders that exist). `None` for a path nothing can be said about
/// (a NUL byte, too many links).
pub fn landing(cwd: &Path, raw: &str) -> Option<Landing> {
    if raw.contains('\0') {
        return None;
    }
    let path = Path::new(raw);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    follow(absolute, 0)
}

fn follow(path: PathBuf, links: usize) -> Option<Landing> {
    if links > MAX_LINKS {
        return None;
    }
    for existing in path.ancestors() {
        let Ok(meta) = std::fs::symlink_metadata(existing) else {
            continue;
        };
        let rest = path.strip_prefix(existing).ok()?;
        if meta.file_type().is_symlink() && !existing.exists() {
            // A dangling link: the write creates the file it names.
            let to = std::fs::read_link(existing).ok()?;
            let to = match existing.parent() {
                Some(parent) if to.is_relative() => parent.join(to),
                _ => to,
            };
            let to = if rest.as_os_str().is_empty() {
                to
            } else {
                to.join(rest)
            };
            return follow(to, links + 1);
        }
        let base = std::fs::canonicalize(existing).map(without_verbatim).ok()?;
        if rest.components().any(|c| c == Component::ParentDir) {
            return follow(appended(base, rest), links + 1);
        }
        let folder = if !rest.as_os_str().is_empty() || base.is_dir() {
            base.clone()
        } else {
            base.parent()
                .map_or_else(|| base.clone(), Path::to_path_buf)
        };
        return Some(Landing {
            path: appended(base, rest),
            folder,
        });
    }
    // Not even the root exists (a drive that is gone): judged as written.
    let path = normalize(&path);
    let folder = path.ancestors().last().unwrap_or(&path).to_path_buf();
    Some(Landing { path, folder })
}

/// `base` with `rest` appended, `.` dropped and `..` going up one name.
fn appended(mut base: PathBuf, rest: &Path) -> PathBuf {
    for c in rest.components() {
        match c {
            Component::Normal(n) => base.push(n),
            Component::ParentDir => {
                base.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(t: &tempfile::TempDir) -> PathBuf {
        without_verbatim(std::fs::canonicalize(t.path()).unwrap())
    }

    fn path(cwd: &Path, raw: &str) -> Option<PathBuf> {
        landing(cwd, raw).map(|l| l.path)
    }

    #[test]
    fn a_relative_target_is_against_the_cwd_and_a_missing_one_keeps_its_place() {
        let t = tempfile::tempdir().unwrap();
        let base = real(&t);
        std::fs::create_dir(base.join("a")).unwrap();
        assert_eq!(
            landing(&base.join("a"), "new/deeper/f.rs"),
            Some(Landing {
                path: base.join("a/new/deeper/f.rs"),
                folder: base.join("a"),
            })
        );
        assert_eq!(path(&base.join("a"), "../b/./f"), Some(base.join("b/f")));
        assert_eq!(landing(&base, "x\0y"), None);
    }

    #[test]
    fn the_folder_is_the_deepest_that_exists() {
        let t = tempfile::tempdir().unwrap();
        let base = real(&t);
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        std::fs::write(base.join("a/f"), "").unwrap();
        let folder = |raw: &str| landing(&base, raw).unwrap().folder;
        assert_eq!(folder("a/f"), base.join("a"), "an existing file");
        assert_eq!(folder("a/b"), base.join("a/b"), "an existing folder");
        assert_eq!(folder("a/b/new/f"), base.join("a/b"), "a new file");
    }

    #[test]
    fn a_dotdot_below_what_exists_is_followed_again_from_where_it_leads() {
        let t = tempfile::tempdir().unwrap();
        let base = real(&t);
        std::fs::create_dir_all(base.join("shop")).unwrap();
        std::fs::create_dir_all(base.join("alpha/src")).unwrap();
        assert_eq!(
            landing(&base, "shop/gone/../../alpha/src/x.rs"),
            Some(Landing {
                path: base.join("alpha/src/x.rs"),
                folder: base.join("alpha/src"),
            })
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_as_a_write_follows_them() {
        let t = tempfile::tempdir().unwrap();
        let base = real(&t);
        let (here, there) = (base.join("here"), base.join("there"));
        std::fs::create_dir_all(&here).unwrap();
        std::fs::create_dir_all(&there).unwrap();
        // A folder link in the middle.
        std::os::unix::fs::symlink(&there, here.join("dir")).unwrap();
        assert_eq!(path(&here, "dir/new.rs"), Some(there.join("new.rs")));
        // A file link that exists, and one that leads nowhere yet (relative).
        std::fs::write(there.join("f"), "").unwrap();
        std::os::unix::fs::symlink(there.join("f"), here.join("f")).unwrap();
        assert_eq!(
            landing(&here, "f"),
            Some(Landing {
                path: there.join("f"),
                folder: there.clone(),
            })
        );
        std::os::unix::fs::symlink("../there/g", here.join("g")).unwrap();
        assert_eq!(path(&here, "g"), Some(there.join("g")));
        // A link to a folder, written to as itself, and a `..` below a missing name after a
        // link: taken from where the link leads.
        assert_eq!(landing(&here, "dir").unwrap().folder, there);
        std::fs::create_dir_all(base.join("x")).unwrap();
        assert_eq!(path(&here, "dir/gone/../../x/y"), Some(base.join("x/y")));
        // A loop gives up.
        std::os::unix::fs::symlink(here.join("l2"), here.join("l1")).unwrap();
        std::os::unix::fs::symlink(here.join("l1"), here.join("l2")).unwrap();
        assert_eq!(landing(&here, "l1"), None);
    }
}
