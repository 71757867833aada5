//! Where one config file is read and written, and how it is reached
//! (docs/decisions/0037-project-configs-stay-inside-the-project.md).
//!
//! A user's file is reached by its path, and a link there is followed: a dotfile manager's
//! links are the user's own. A project's file is reached beneath a handle on the project
//! folder, one name at a time, following no link on any component and never leaving the
//! folder: a repository may have planted links to the user's own files. Either way a file is
//! opened without waiting (a FIFO cannot hold the command) and used only when the opened
//! handle is a regular file.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use berth_client::careful_open::{self, is_link_refusal};
use berth_vocab::codes::Code;
use cap_std::fs::Dir;

use super::folders;

/// The most berth reads of one config file: the syntax tree that keeps a
/// JSON file's layout takes tens of times the text in memory
/// (docs/decisions/0043-json-with-comments-edited-in-place.md).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Why a file cannot be read.
#[derive(Debug)]
pub enum Unusable {
    /// Never used: a link in a project's config path, or not a regular file. The message names
    /// it and says why.
    Refused(String),
    /// Reading failed (permissions, I/O); the message names the file.
    Failed(String),
}

impl Unusable {
    /// The message.
    pub fn message(self) -> String {
        match self {
            Unusable::Refused(m) | Unusable::Failed(m) => m,
        }
    }
}

/// One config file's place.
#[derive(Debug)]
pub struct Place {
    /// The file, as shown and as reached by path.
    path: PathBuf,
    how: How,
}

#[derive(Debug)]
enum How {
    /// By its path, links followed.
    Path,
    /// Beneath the project folder.
    Beneath(Beneath),
}

/// The project folder's path, a handle on it, and the names from it down to the file (at
/// least one).
#[derive(Debug)]
struct Beneath {
    project: PathBuf,
    root: Arc<Dir>,
    names: Vec<OsString>,
}

impl Place {
    /// A user's file at `path`. A link there is edited at its target, as the user made it.
    pub fn user(path: &Path) -> Place {
        let path = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
            }
            _ => path.to_path_buf(),
        };
        Place {
            path,
            how: How::Path,
        }
    }

    /// The file at `path` inside the folder `project`, reached beneath it.
    pub fn beneath(project: &Path, path: &Path) -> Result<Place, String> {
        let names: Vec<OsString> = path
            .strip_prefix(project)
            .ok()
            .and_then(|rel| {
                rel.components()
                    .map(|c| match c {
                        Component::Normal(n) => Some(n.to_os_string()),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                format!(
                    "{} is not a file inside the project {}",
                    path.display(),
                    project.display()
                )
            })?;
        let root = Dir::open_ambient_dir(project, cap_std::ambient_authority())
            .map_err(|e| format!("opening the project folder {}: {e}", project.display()))?;
        Ok(Place {
            path: path.to_path_buf(),
            how: How::Beneath(Beneath {
                project: project.to_path_buf(),
                root: Arc::new(root),
                names,
            }),
        })
    }

    /// The file itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file named as this one with `suffix` added, in the same folder, reached the same way.
    pub fn with_suffix(&self, suffix: &str) -> Place {
        let mut path = self.path.as_os_str().to_os_string();
        path.push(suffix);
        let how = match &self.how {
            How::Path => How::Path,
            How::Beneath(b) => {
                let mut names = b.names.clone();
                if let Some(last) = names.last_mut() {
                    last.push(suffix);
                }
                How::Beneath(Beneath {
                    project: b.project.clone(),
                    root: Arc::clone(&b.root),
                    names,
                })
            }
        };
        Place {
            path: PathBuf::from(path),
            how,
        }
    }

    /// The file's bytes; `None` when it does not exist.
    pub fn read(&self) -> Result<Option<Vec<u8>>, Unusable> {
        let failed =
            |e: std::io::Error| Unusable::Failed(format!("reading {}: {e}", self.path.display()));
        let opened = match &self.how {
            How::Path => careful_open::open_read_following(&self.path),
            How::Beneath(b) => {
                let Some((dir, name)) = b.folder(None)? else {
                    return Ok(None);
                };
                match careful_open::open_read_in(&dir, name) {
                    Err(e) if is_link_refusal(&e) => return Err(b.link(&dir, name, &self.path)),
                    // Windows opens the link itself: its handle says what it is.
                    Ok(f) if f.metadata().is_ok_and(|m| m.file_type().is_symlink()) => {
                        return Err(b.link(&dir, name, &self.path));
                    }
                    r => r,
                }
            }
        };
        let file = match opened {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(failed(e)),
        };
        let meta = file.metadata().map_err(failed)?;
        if !meta.is_file() {
            return Err(Unusable::Refused(format!(
                "{} is {}, not a regular file ({}): berth reads a client's configuration only from a regular file",
                self.path.display(),
                kind(&meta),
                Code::NotRegularFile.as_str()
            )));
        }
        let mut bytes = Vec::new();
        (&file)
            .take(MAX_CONFIG_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(Unusable::Refused(format!(
                "{} is larger than the {} MiB berth reads of a client's configuration; add berth's entry by hand, or make the file smaller",
                self.path.display(),
                MAX_CONFIG_BYTES >> 20
            )));
        }
        Ok(Some(bytes))
    }

    /// Whether something (a file, a link, anything) is at the file's name.
    pub fn exists(&self) -> bool {
        match &self.how {
            How::Path => std::fs::symlink_metadata(&self.path).is_ok(),
            How::Beneath(b) => matches!(
                b.folder(None),
                Ok(Some((dir, name))) if dir.symlink_metadata(name).is_ok()
            ),
        }
    }

    /// Replaces the file with `text` atomically (`berth_client::atomic`), creating missing
    /// folders (beneath the project: one at a time, none through a link), each recorded as
    /// berth's ([`folders`]). Returns the folders it created, outermost first.
    pub fn write(&self, text: &str) -> Result<Vec<PathBuf>, String> {
        let failed = |e: std::io::Error| format!("writing {}: {e}", self.path.display());
        match &self.how {
            How::Path => {
                let made = match self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    Some(dir) => make_folders(dir).map_err(failed)?,
                    None => Vec::new(),
                };
                berth_client::atomic::write_atomic(&self.path, text.as_bytes()).map_err(failed)?;
                Ok(made)
            }
            How::Beneath(b) => {
                let mut made = Vec::new();
                match b.folder(Some(&mut made)).map_err(Unusable::message)? {
                    Some((dir, name)) => berth_client::atomic::replace(&dir, name, text.as_bytes())
                        .map_err(failed)?,
                    None => return Err(failed(std::io::ErrorKind::NotFound.into())),
                }
                Ok(made)
            }
        }
    }

    /// Removes the folders on the way to the file that berth's install created and that now
    /// hold nothing else, innermost first, up to the first that stays ([`folders`]); never the
    /// project folder. Returns those removed.
    pub fn remove_left_folders(&self) -> Result<Vec<PathBuf>, String> {
        let failed =
            |p: &Path, e: std::io::Error| format!("removing the folder {}: {e}", p.display());
        let mut removed = Vec::new();
        match &self.how {
            How::Path => {
                for folder in self.path.ancestors().skip(1) {
                    let (Some(parent), Some(name)) = (folder.parent(), folder.file_name()) else {
                        break;
                    };
                    let parent = match Dir::open_ambient_dir(parent, cap_std::ambient_authority()) {
                        Ok(d) => d,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                        Err(e) => return Err(failed(folder, e)),
                    };
                    if !folders::remove_if_left_empty(&parent, name)
                        .map_err(|e| failed(folder, e))?
                    {
                        break;
                    }
                    removed.push(folder.to_path_buf());
                }
            }
            How::Beneath(b) => {
                let Some((_, parents)) = b.names.split_last() else {
                    return Ok(removed);
                };
                // Handles from the project folder down, as far as the folders are there.
                let root = b.root.try_clone().map_err(|e| failed(&b.project, e))?;
                let mut dirs = vec![root];
                for part in parents {
                    match careful_open::open_dir_in(&dirs[dirs.len() - 1], part) {
                        Ok(d) => dirs.push(d),
                        Err(_) => break,
                    }
                }
                while dirs.len() > 1 {
                    // The folder's own handle is closed before it is removed (Windows).
                    drop(dirs.pop());
                    let i = dirs.len() - 1;
                    let shown = parents[..=i]
                        .iter()
                        .fold(b.project.clone(), |p, n| p.join(n));
                    if !folders::remove_if_left_empty(&dirs[i], &parents[i])
                        .map_err(|e| failed(&shown, e))?
                    {
                        break;
                    }
                    removed.push(shown);
                }
            }
        }
        Ok(removed)
    }

    /// Creates the file with `text`, never replacing anything already at its name (a file, or
    /// a link, which is not followed). `Ok(false)` when something was there.
    // Created new (`create_new`): it never replaces a file, so it needs no `atomic`.
    #[allow(clippy::disallowed_methods)]
    pub fn create_new(&self, text: &str) -> std::io::Result<bool> {
        use std::io::Write;
        let created = match &self.how {
            How::Path => std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&self.path),
            How::Beneath(b) => {
                let (dir, name) = b
                    .folder(None)
                    .map_err(|e| std::io::Error::other(e.message()))?
                    .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
                let mut options = cap_std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                dir.open_with(name, &options)
                    .map(cap_std::fs::File::into_std)
            }
        };
        match created {
            Ok(mut f) => f.write_all(text.as_bytes()).map(|()| true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Removes the file (a link there: the link). Missing is not an error.
    pub fn remove(&self) -> Result<(), String> {
        let r = match &self.how {
            How::Path => std::fs::remove_file(&self.path),
            How::Beneath(b) => match b.folder(None).map_err(Unusable::message)? {
                Some((dir, name)) => dir.remove_file(name),
                None => Ok(()),
            },
        };
        match r {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("removing {}: {e}", self.path.display()))
            }
            _ => Ok(()),
        }
    }
}

impl Beneath {
    /// The folder holding the file, opened from the project's handle one name at a time with
    /// no link followed, and the file's name. `None` when a folder is missing and `made` is
    /// `None`; with `made`, missing folders are created, recorded as berth's, and listed there.
    fn folder(
        &self,
        mut made: Option<&mut Vec<PathBuf>>,
    ) -> Result<Option<(Dir, &OsStr)>, Unusable> {
        let Some((name, parents)) = self.names.split_last() else {
            return Err(Unusable::Failed(format!(
                "no file named inside {}",
                self.project.display()
            )));
        };
        let mut at = self.root.try_clone().map_err(|e| {
            Unusable::Failed(format!(
                "opening the project folder {}: {e}",
                self.project.display()
            ))
        })?;
        let mut shown = self.project.clone();
        for part in parents {
            shown.push(part);
            let failed = |e: std::io::Error| {
                Unusable::Failed(format!("opening the folder {}: {e}", shown.display()))
            };
            let opened = match (careful_open::open_dir_in(&at, part), made.as_mut()) {
                (Err(e), Some(made)) if e.kind() == std::io::ErrorKind::NotFound => {
                    if folders::create(&at, part).map_err(failed)? {
                        made.push(shown.clone());
                    }
                    careful_open::open_dir_in(&at, part)
                }
                (r, _) => r,
            };
            at = match opened {
                Ok(d) => d,
                Err(e) if is_link_refusal(&e) => return Err(self.link(&at, part, &shown)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(failed(e)),
            };
        }
        Ok(Some((at, name.as_os_str())))
    }

    /// The refusal of a link at `name` in `dir` (shown as `shown`), naming where it points.
    fn link(&self, dir: &Dir, name: &OsStr, shown: &Path) -> Unusable {
        let target = dir
            .read_link_contents(name)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "somewhere".into());
        Unusable::Refused(format!(
            "{} is a link to {target}; inside the project {} berth follows no link, and reads and writes a project's configuration only in a file of its own there",
            shown.display(),
            self.project.display()
        ))
    }
}

/// Creates the missing folders of `dir`, outermost first, each recorded as berth's
/// ([`folders`]); a folder already there, even a link to one, is left as it is. Returns those
/// created.
fn make_folders(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut at = dir;
    while let Err(e) = std::fs::symlink_metadata(at) {
        if e.kind() != std::io::ErrorKind::NotFound {
            return Err(e);
        }
        missing.push(at);
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => break,
        }
    }
    let mut made = Vec::new();
    for folder in missing.into_iter().rev() {
        let (Some(parent), Some(name)) = (folder.parent(), folder.file_name()) else {
            continue;
        };
        let parent = Dir::open_ambient_dir(parent, cap_std::ambient_authority())?;
        if folders::create(&parent, name)? {
            made.push(folder.to_path_buf());
        }
    }
    Ok(made)
}

/// What a file that is not a regular file is, in words.
fn kind(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    if t.is_symlink() {
        return "a link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    "a special file"
}
