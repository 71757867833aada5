//! Who is asking: the caller's working directory and the environment pins
//! its shim forwarded. The daemon never uses its own cwd or environment for
//! these.

use std::path::{Path, PathBuf};

use crate::error::BerthError;

/// A request's caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// `BERTH_WORKSPACE`, when set.
    pub env_workspace: Option<String>,
    /// `BERTH_EXTRA_HOME`, when set.
    pub extra_home: Option<PathBuf>,
}

impl Caller {
    /// Checks a caller as it arrived over the wire.
    pub fn new(cwd: &str, env_workspace: &str, extra_home: &str) -> Result<Caller, BerthError> {
        let cwd = PathBuf::from(cwd);
        if !cwd.is_absolute() {
            return Err(BerthError::invalid(format!(
                "the caller's working directory {cwd:?} is not absolute"
            )));
        }
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Ok(Caller {
            cwd,
            env_workspace: non_empty(env_workspace),
            extra_home: non_empty(extra_home).map(PathBuf::from),
        })
    }

    /// `path` made absolute against the caller's cwd (empty means the cwd).
    pub fn absolute(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.cwd.clone()
        } else {
            self.cwd.join(path)
        }
    }
}

/// Canonicalises `path`, which must exist, naming it in the error.
pub fn canonical(path: &Path) -> Result<PathBuf, BerthError> {
    if path.as_os_str().len() > 4096 {
        return Err(BerthError::invalid(format!(
            "path is {} bytes long, more than the 4096 a path may have",
            path.as_os_str().len()
        )));
    }
    crate::canonical::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            BerthError::not_found(format!("{}: no such file or directory", path.display()))
        }
        _ => BerthError::refused(format!("{}: {e}", path.display())),
    })
}

/// A folder that may be gone (a cwd a conversation recorded earlier): its deepest existing
/// ancestor canonicalised, with the rest of the path appended as written. `None` when even
/// that cannot be said safely: a relative path, or a `..` in the missing part (no link left
/// to resolve it through).
pub fn canonical_gone(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let existing = path.ancestors().find(|a| a.exists())?;
    let rest = path.strip_prefix(existing).ok()?;
    if rest.components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    }) {
        return None;
    }
    let mut out = crate::canonical::canonicalize(existing).ok()?;
    out.extend(
        rest.components()
            .filter(|c| matches!(c, std::path::Component::Normal(_))),
    );
    Some(out)
}

/// Canonicalises `path` and requires a directory.
pub fn canonical_dir(path: &Path) -> Result<PathBuf, BerthError> {
    let canon = canonical(path)?;
    if !canon.is_dir() {
        return Err(BerthError::refused(format!(
            "{}: not a directory",
            path.display()
        )));
    }
    Ok(canon)
}

// Its one test moves a Unix link.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_gone_folder_keeps_its_place_below_its_deepest_existing_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&real, real.join("link")).unwrap();
        let gone = tmp.path().join("link/gone/./deeper");
        assert_eq!(canonical_gone(&gone).unwrap(), real.join("gone/deeper"));
        assert_eq!(canonical_gone(&real).unwrap(), real);
        assert_eq!(canonical_gone(&real.join("gone/../x")), None);
        assert_eq!(canonical_gone(Path::new("relative/gone")), None);
    }
}
