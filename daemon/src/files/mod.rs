//! The file tools (docs/reference.md, "Qualified paths and file tools"): ls, read, write, edit,
//! move, delete, search.
//!
//! All I/O goes through a handle to the folder, opened once per call
//! (`cap_std::fs::Dir`; `openat2(RESOLVE_BENEATH)` on Linux), never through
//! re-checked path strings: no `..` and no symlink ever leads outside, even a
//! link inside the folder that points out. Writes are atomic (a temporary
//! file, flushed, then renamed). Sizes are bounded with clear errors.

pub(crate) mod atomic;
pub(crate) mod identity;
pub(crate) mod linkfree;

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use serde_json::{Value, json};

use crate::error::{BerthError, is_disk_full};

/// Largest file `read` returns and `write` accepts.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// `search` looks at no more files than this.
pub const MAX_SEARCH_FILES: usize = 10_000;
/// `search` reads no more bytes than this in all.
pub const MAX_SEARCH_BYTES: u64 = 64 * 1024 * 1024;
/// `search` returns no more matches than this.
pub const MAX_MATCHES: usize = 200;

/// A folder berth hands to tools, opened as a handle.
pub struct Folder {
    dir: Dir,
    /// How paths inside it are spelled back: `notes/` or `./`.
    prefix: String,
}

/// A tool's answer: text for the model, structured content for programs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// For the model.
    pub text: String,
    /// For programs.
    pub structured: Value,
}

impl Folder {
    /// Opens `root`, creating it first when `create` (managed homes and
    /// scratch folders are created on first use).
    pub fn open(root: &Path, prefix: String, create: bool) -> Result<Folder, BerthError> {
        if create {
            std::fs::create_dir_all(root).map_err(|e| {
                if is_disk_full(&e) {
                    let shown = root.display();
                    BerthError::disk_full(format_args!("the folder {shown} ({prefix})"), &shown)
                } else {
                    BerthError::internal(format!("creating {}: {e}", root.display()))
                }
            })?;
        }
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| {
            BerthError::refused(format!(
                "{prefix}: the folder {} cannot be opened: {e}",
                root.display()
            ))
        })?;
        Ok(Folder { dir, prefix })
    }

    /// Wraps a folder already opened (a workspace's home, see `Device::open_home`).
    pub fn from_dir(dir: Dir, prefix: String) -> Folder {
        Folder { dir, prefix }
    }

    /// Whether the folder holds an entry `name` (a link counts; it is not followed).
    pub fn has_entry(&self, name: &str) -> bool {
        self.dir.symlink_metadata(name).is_ok()
    }

    /// The qualified spelling of `rel`.
    pub fn q(&self, rel: &Path) -> String {
        format!("{}{}", self.prefix, berth_core::pathutil::slashed(rel))
    }

    fn err(&self, rel: &Path, e: io::Error) -> BerthError {
        let q = self.q(rel);
        match e.kind() {
            io::ErrorKind::NotFound => {
                BerthError::not_found(format!("{q}: no such file or folder"))
            }
            io::ErrorKind::AlreadyExists => BerthError::refused(format!("{q}: already exists")),
            io::ErrorKind::IsADirectory => BerthError::refused(format!("{q}: is a folder")),
            io::ErrorKind::NotADirectory => {
                BerthError::refused(format!("{q}: a part of the path is not a folder"))
            }
            io::ErrorKind::DirectoryNotEmpty => BerthError::refused(format!(
                "{q}: the folder is not empty; delete what is inside first"
            )),
            _ if is_disk_full(&e) => BerthError::disk_full(&q, &q),
            _ if is_escape(&e) => BerthError::refused(format!(
                "{q} leads outside its folder (through a symlink or \"..\"); berth never follows a path out"
            )),
            io::ErrorKind::PermissionDenied => {
                BerthError::refused(format!("{q}: permission denied"))
            }
            _ => BerthError::refused(format!("{q}: {e}")),
        }
    }

    /// Creates the folders above a file. A symlink where a folder should be makes cap-std
    /// answer "already exists"; berth says what it is: a way out it will not take.
    fn make_parents(&self, parent: &Path) -> Result<(), BerthError> {
        self.dir.create_dir_all(parent).map_err(|e| {
            let through_link = parent.ancestors().any(|p| {
                !p.as_os_str().is_empty()
                    && self
                        .dir
                        .symlink_metadata(p)
                        .is_ok_and(|m| m.file_type().is_symlink())
            });
            if e.kind() == io::ErrorKind::AlreadyExists && through_link {
                BerthError::refused(format!(
                    "{} leads outside its folder (through a symlink); berth never follows a path out",
                    self.q(parent)
                ))
            } else {
                self.err(parent, e)
            }
        })
    }

    /// Lists a folder (or describes a file).
    pub fn ls(&self, rel: &Path) -> Result<ToolOutput, BerthError> {
        let meta = self.dir.metadata(dot(rel)).map_err(|e| self.err(rel, e))?;
        if !meta.is_dir() {
            let q = self.q(rel);
            let kind = kind_of(&meta.file_type());
            let size = if meta.is_file() { meta.len() } else { 0 };
            let text = match kind {
                "file" => format!("{q} ({size} bytes)\n"),
                _ => format!("{q}: {}\n", special_kind(&meta.file_type())),
            };
            return Ok(ToolOutput {
                text,
                structured: json!({"entries": [{"path": q, "kind": kind, "size": size}]}),
            });
        }
        let mut entries = Vec::new();
        for entry in self.dir.read_dir(dot(rel)).map_err(|e| self.err(rel, e))? {
            let entry = entry.map_err(|e| self.err(rel, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let ft = entry.file_type().map_err(|e| self.err(rel, e))?;
            let kind = kind_of(&ft);
            let size = if ft.is_file() {
                entry.metadata().map(|m| m.len()).unwrap_or(0)
            } else {
                0
            };
            let mut path = self.q(&rel.join(name));
            if kind == "dir" {
                path.push('/');
            }
            entries.push((path, kind, size));
        }
        entries.sort();
        let text = if entries.is_empty() {
            format!("{} is empty\n", self.q(rel))
        } else {
            // One line per entry, even for a name holding a line break.
            entries
                .iter()
                .map(|(p, _, _)| format!("{}\n", berth_vocab::text::escaped(p)))
                .collect()
        };
        let structured = json!({
            "entries": entries.iter().map(|(p, k, s)| json!({"path": p, "kind": k, "size": s})).collect::<Vec<_>>()
        });
        Ok(ToolOutput { text, structured })
    }

    /// Reads a UTF-8 text file.
    pub fn read(&self, rel: &Path) -> Result<ToolOutput, BerthError> {
        let content = self.read_text(rel)?;
        let q = self.q(rel);
        Ok(ToolOutput {
            structured: json!({"path": q, "content": content}),
            text: content,
        })
    }

    fn read_text(&self, rel: &Path) -> Result<String, BerthError> {
        if rel.as_os_str().is_empty() {
            return Err(BerthError::refused(format!(
                "{}: is a folder; use ls",
                self.q(rel)
            )));
        }
        let mut file = self.open_regular(rel)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.err(rel, e))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(BerthError::refused(format!(
                "{}: larger than {} MiB; berth reads text files up to that size",
                self.q(rel),
                MAX_FILE_BYTES / (1024 * 1024)
            )));
        }
        String::from_utf8(bytes).map_err(|_| {
            BerthError::refused(format!("{}: not UTF-8 text (a binary file?)", self.q(rel)))
        })
    }

    /// Opens a regular file for reading, never waiting on what it finds.
    ///
    /// A look first, without opening and without following a link: a FIFO,
    /// device or socket is refused before it is touched (opening a FIFO
    /// waits for a writer for ever; opening some devices has effects). The
    /// open is the authority, as the entry can be swapped after the look:
    /// `O_NONBLOCK` so a FIFO put there meanwhile cannot hold the call,
    /// `O_NOFOLLOW` so a link put there is not followed, `O_NOCTTY` so a
    /// terminal never becomes the daemon's. The type is checked again on the
    /// opened handle, then blocking reads are restored for the regular file.
    fn open_regular(&self, rel: &Path) -> Result<cap_std::fs::File, BerthError> {
        let look = self
            .dir
            .symlink_metadata(rel)
            .map_err(|e| self.err(rel, e))?;
        self.check_regular(rel, &look)?;
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(NO_FOLLOW_NO_WAIT);
        let file = self
            .dir
            .open_with(rel, &options)
            .map_err(|e| self.err(rel, e))?;
        let meta = file.metadata().map_err(|e| self.err(rel, e))?;
        self.check_regular(rel, &meta)?;
        clear_nonblocking(&file).map_err(|e| self.err(rel, e))?;
        Ok(file)
    }

    /// Refuses anything but a regular file, saying what it is instead.
    fn check_regular(&self, rel: &Path, meta: &cap_std::fs::Metadata) -> Result<(), BerthError> {
        let q = self.q(rel);
        let ft = meta.file_type();
        if ft.is_file() {
            Ok(())
        } else if ft.is_dir() {
            Err(BerthError::refused(format!("{q}: is a folder; use ls")))
        } else if ft.is_symlink() {
            Err(BerthError::refused(format!(
                "{q}: is a symlink; the file tools do not follow links (one could lead outside its folder); use the path of the file it points to"
            )))
        } else {
            Err(BerthError::not_regular(format!(
                "{q}: not a regular file (it is {}); the file tools read and edit regular files only",
                special_kind(&ft)
            )))
        }
    }

    /// Writes a file atomically, creating its folders.
    pub fn write(&self, rel: &Path, content: &str) -> Result<ToolOutput, BerthError> {
        self.write_atomic(rel, content.as_bytes())?;
        let q = self.q(rel);
        Ok(ToolOutput {
            text: format!("wrote {q} ({} bytes)\n", content.len()),
            structured: json!({"path": q, "bytes": content.len()}),
        })
    }

    fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> Result<(), BerthError> {
        let Some(name) = rel.file_name() else {
            return Err(BerthError::refused(format!(
                "{}: give a file name",
                self.q(rel)
            )));
        };
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(BerthError::refused(format!(
                "{}: {} bytes is more than the {} MiB a file may have",
                self.q(rel),
                bytes.len(),
                MAX_FILE_BYTES / (1024 * 1024)
            )));
        }
        let parent = rel.parent().unwrap_or(Path::new(""));
        if !parent.as_os_str().is_empty() {
            self.make_parents(parent)?;
        }
        if self.dir.symlink_metadata(rel).is_ok_and(|m| m.is_dir()) {
            return Err(BerthError::refused(format!("{}: is a folder", self.q(rel))));
        }
        // The folder is opened once: the temporary file is written, renamed and, on failure,
        // removed through that one handle (see `crate::files::atomic`).
        let folder = if parent.as_os_str().is_empty() {
            self.dir.try_clone()
        } else {
            self.dir.open_dir(parent)
        }
        .map_err(|e| self.err(parent, e))?;
        berth_client::atomic::replace(&folder, name, bytes).map_err(|e| self.err(rel, e))
    }

    /// Replaces the one occurrence of `old` with `new`.
    pub fn edit(&self, rel: &Path, old: &str, new: &str) -> Result<ToolOutput, BerthError> {
        if old.is_empty() {
            return Err(BerthError::invalid(
                "old is empty; give the exact text to replace",
            ));
        }
        let content = self.read_text(rel)?;
        let q = self.q(rel);
        match content.matches(old).count() {
            0 => {
                return Err(BerthError::refused(format!(
                    "{q}: the old text was not found; read the file and copy the text exactly"
                )));
            }
            1 => {}
            n => {
                return Err(BerthError::refused(format!(
                    "{q}: the old text occurs {n} times; include more surrounding text so it occurs once"
                )));
            }
        }
        self.write_atomic(rel, content.replacen(old, new, 1).as_bytes())?;
        Ok(ToolOutput {
            text: format!("edited {q}\n"),
            structured: json!({"path": q}),
        })
    }

    /// Deletes a file or an empty folder.
    pub fn delete(&self, rel: &Path) -> Result<ToolOutput, BerthError> {
        if rel.as_os_str().is_empty() {
            return Err(BerthError::refused(format!(
                "{}: a workspace's or session's own folder cannot be deleted",
                self.q(rel)
            )));
        }
        let meta = self
            .dir
            .symlink_metadata(rel)
            .map_err(|e| self.err(rel, e))?;
        if meta.is_dir() {
            self.dir.remove_dir(rel).map_err(|e| self.err(rel, e))?;
        } else {
            self.dir.remove_file(rel).map_err(|e| self.err(rel, e))?;
        }
        let q = self.q(rel);
        Ok(ToolOutput {
            text: format!("deleted {q}\n"),
            structured: json!({"path": q}),
        })
    }

    /// Searches text files under `rel` for lines containing `query`.
    pub fn search(&self, rel: &Path, query: &str) -> Result<ToolOutput, BerthError> {
        if query.is_empty() {
            return Err(BerthError::invalid(
                "query is empty; give the text to search for",
            ));
        }
        let mut state = Search {
            query,
            matches: Vec::new(),
            files: 0,
            bytes: 0,
            truncated: false,
        };
        let meta = self.dir.metadata(dot(rel)).map_err(|e| self.err(rel, e))?;
        if meta.is_dir() {
            self.search_dir(rel, &mut state)?;
        } else {
            self.search_file(rel, &mut state);
        }
        let text = if state.matches.is_empty() {
            format!("no matches for {query:?} under {}\n", self.q(rel))
        } else {
            let mut t: String = state
                .matches
                .iter()
                .map(|(p, l, s)| format!("{}:{l}: {s}\n", berth_vocab::text::escaped(p)))
                .collect();
            if state.truncated {
                t.push_str("(stopped early: search limits reached; narrow the path)\n");
            }
            t
        };
        Ok(ToolOutput {
            text,
            structured: json!({
                "matches": state.matches.iter().map(|(p, l, s)| json!({"path": p, "line": l, "text": s})).collect::<Vec<_>>(),
                "truncated": state.truncated,
            }),
        })
    }

    fn search_dir(&self, rel: &Path, st: &mut Search<'_>) -> Result<(), BerthError> {
        let mut entries: Vec<(String, bool)> = Vec::new();
        for entry in self.dir.read_dir(dot(rel)).map_err(|e| self.err(rel, e))? {
            let Ok(entry) = entry else { continue };
            let Ok(ft) = entry.file_type() else { continue };
            // Links are not followed: a link out of the folder must not be read.
            if ft.is_symlink() {
                continue;
            }
            // FIFOs, devices and sockets hold no text to search, and opening one can wait.
            if !ft.is_dir() && !ft.is_file() {
                continue;
            }
            if let Some(name) = entry.file_name().to_str() {
                entries.push((name.to_string(), ft.is_dir()));
            }
        }
        entries.sort();
        for (name, is_dir) in entries {
            if st.done() {
                st.truncated = true;
                return Ok(());
            }
            let child = rel.join(&name);
            if is_dir {
                self.search_dir(&child, st)?;
            } else {
                self.search_file(&child, st);
            }
        }
        Ok(())
    }

    fn search_file(&self, rel: &Path, st: &mut Search<'_>) {
        st.files += 1;
        // FIFOs, devices, sockets and links are skipped, never opened.
        let Ok(file) = self.open_regular(rel) else {
            return;
        };
        let Ok(meta) = file.metadata() else { return };
        if meta.len() > MAX_FILE_BYTES {
            return;
        }
        let mut bytes = Vec::new();
        if file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).is_err() {
            return;
        }
        st.bytes += bytes.len() as u64;
        if bytes[..bytes.len().min(8192)].contains(&0) {
            return;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if line.contains(st.query) {
                if st.matches.len() >= MAX_MATCHES {
                    st.truncated = true;
                    return;
                }
                let shown: String = line.chars().take(300).collect();
                st.matches.push((self.q(rel), i + 1, shown));
            }
        }
    }
}

struct Search<'q> {
    query: &'q str,
    matches: Vec<(String, usize, String)>,
    files: usize,
    bytes: u64,
    truncated: bool,
}

impl Search<'_> {
    fn done(&self) -> bool {
        self.files >= MAX_SEARCH_FILES
            || self.bytes >= MAX_SEARCH_BYTES
            || self.matches.len() >= MAX_MATCHES
    }
}

/// Moves (renames) a file or folder, possibly between folders.
pub fn move_path(
    from: &Folder,
    from_rel: &Path,
    to: &Folder,
    to_rel: &Path,
) -> Result<ToolOutput, BerthError> {
    if from_rel.as_os_str().is_empty() {
        return Err(BerthError::refused(format!(
            "{}: a workspace's or session's own folder cannot be moved",
            from.q(from_rel)
        )));
    }
    if to_rel.as_os_str().is_empty() {
        let name = from_rel.file_name().map(Path::new).unwrap_or(from_rel);
        return Err(BerthError::refused(format!(
            "{}: a workspace's or session's own folder, which is already there; to move into it, name the file too, e.g. {}",
            to.q(to_rel),
            to.q(name)
        )));
    }
    let moved = from
        .dir
        .symlink_metadata(from_rel)
        .map_err(|e| from.err(from_rel, e))?;
    let (f, t) = (from.q(from_rel), to.q(to_rel));
    let into_itself = || {
        BerthError::invalid(format!(
            "{f} cannot be moved to {t}, which is inside it: a folder cannot be moved into itself; nothing was moved"
        ))
        .hint(format!("choose a target outside {f}"))
    };
    // The same folder spelled the same way is caught here; the rename's own
    // refusal below catches the rest (one home reached by two spellings).
    if moved.is_dir() && t != f && Path::new(&t).starts_with(&f) {
        return Err(into_itself());
    }
    if to.dir.symlink_metadata(to_rel).is_ok() {
        return Err(BerthError::refused(format!(
            "{}: already exists; delete it first or choose another name",
            to.q(to_rel)
        )));
    }
    if let Some(parent) = to_rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        to.make_parents(parent)?;
    }
    match from.dir.rename(from_rel, &to.dir, to_rel) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(CROSS_DEVICE) => {
            // Different filesystems: copy the file, then remove the original.
            let content = from.read_text(from_rel)?;
            to.write_atomic(to_rel, content.as_bytes())?;
            from.dir
                .remove_file(from_rel)
                .map_err(|e| from.err(from_rel, e))?;
        }
        Err(e) if moved.is_dir() && e.kind() == io::ErrorKind::InvalidInput => {
            return Err(into_itself());
        }
        Err(e) => return Err(from.err(from_rel, e)),
    }
    Ok(ToolOutput {
        text: format!("moved {f} to {t}\n"),
        structured: json!({"from": f, "to": t}),
    })
}

/// How a file is opened to be read: never through a link, never waiting.
#[cfg(unix)]
const NO_FOLLOW_NO_WAIT: i32 = libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY;
/// `FILE_FLAG_OPEN_REPARSE_POINT`: a link is opened as itself (and then refused as not a
/// regular file). Windows has no FIFOs in its file systems, so nothing there can hold a read.
#[cfg(windows)]
const NO_FOLLOW_NO_WAIT: u32 = 0x0020_0000;

/// The error a rename across file systems answers.
#[cfg(unix)]
const CROSS_DEVICE: i32 = libc::EXDEV;
/// `ERROR_NOT_SAME_DEVICE`.
#[cfg(windows)]
const CROSS_DEVICE: i32 = 17;

fn dot(rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        rel.to_path_buf()
    }
}

/// Reads on Windows never were non-blocking.
#[cfg(windows)]
fn clear_nonblocking(_: &cap_std::fs::File) -> io::Result<()> {
    Ok(())
}

/// Restores blocking reads on a file opened with `O_NONBLOCK`.
#[cfg(unix)]
fn clear_nonblocking(file: &cap_std::fs::File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function borrows for the call.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; only O_NONBLOCK changes.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// An entry's `kind` in `ls`: `file`, `dir`, `symlink`, `fifo`, `socket`, `device`, or
/// `other` for anything else. Only a `file` can be read, written or edited.
fn kind_of(ft: &cap_std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "dir"
    } else if ft.is_symlink() {
        "symlink"
    } else if ft.is_file() {
        "file"
    } else {
        special_type(ft)
    }
}

/// The kind of an entry that is not a file, folder or link.
#[cfg(windows)]
fn special_type(_: &cap_std::fs::FileType) -> &'static str {
    "other"
}

/// The kind of an entry that is not a file, folder or link.
#[cfg(unix)]
fn special_type(ft: &cap_std::fs::FileType) -> &'static str {
    use cap_std::fs::FileTypeExt;
    if ft.is_fifo() {
        "fifo"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_char_device() || ft.is_block_device() {
        "device"
    } else {
        "other"
    }
}

/// What a special file is, in words.
#[cfg(windows)]
fn special_kind(_: &cap_std::fs::FileType) -> &'static str {
    "not a file"
}

/// What a special file is, in words.
#[cfg(unix)]
fn special_kind(ft: &cap_std::fs::FileType) -> &'static str {
    use cap_std::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

fn is_escape(e: &io::Error) -> bool {
    let text = e.to_string();
    text.contains("outside")
        || e.raw_os_error() == Some(CROSS_DEVICE)
        || linkfree::is_link_refusal(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, Folder) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("home");
        let f = Folder::open(&root, "w/".into(), true).unwrap();
        (tmp, f)
    }

    #[test]
    fn write_then_read_round_trips_and_returns_qualified_paths() {
        let (_t, f) = folder();
        let out = f.write(Path::new("a/b.md"), "hello").unwrap();
        assert_eq!(out.structured["path"], "w/a/b.md");
        assert_eq!(f.read(Path::new("a/b.md")).unwrap().text, "hello");
        let ls = f.ls(Path::new("")).unwrap();
        assert_eq!(ls.structured["entries"][0]["path"], "w/a/");
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_symlink_inside_pointing_out_is_refused_for_read_and_write() {
        let (t, f) = folder();
        let outside = t.path().join("secret.txt");
        std::fs::write(&outside, "secret").unwrap();
        std::os::unix::fs::symlink(&outside, t.path().join("home/link")).unwrap();
        std::os::unix::fs::symlink(t.path(), t.path().join("home/up")).unwrap();
        let err = f.read(Path::new("link")).unwrap_err();
        assert!(err.message.contains("outside"), "{err}");
        assert!(f.write(Path::new("up/secret.txt"), "pwned").is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
        // A link where a folder should be: a new file below it says why, not "already exists".
        for path in ["up/new.txt", "up/deeper/new.txt"] {
            let err = f.write(Path::new(path), "x").unwrap_err();
            assert!(err.message.contains("leads outside"), "{path}: {err}");
        }
        assert!(!t.path().join("new.txt").exists());
        assert!(!t.path().join("deeper").exists());
    }

    #[test]
    #[cfg(windows)]
    fn on_windows_a_dotdot_or_a_link_never_leads_out() {
        let (t, f) = folder();
        let outside = t.path().join("secret.txt");
        std::fs::write(&outside, "secret").unwrap();
        for escape in ["../secret.txt", r"..\secret.txt"] {
            assert!(f.read(Path::new(escape)).is_err(), "{escape}");
            assert!(f.write(Path::new(escape), "pwned").is_err(), "{escape}");
        }
        // A link out, where this user may make one (Windows asks for developer mode; Wine 8
        // answers success and makes nothing, so it is checked that the link is there): cap-std's
        // handle does not follow it out.
        let up = t.path().join("home").join("up");
        let made = std::os::windows::fs::symlink_dir(t.path(), &up).is_ok()
            && std::fs::symlink_metadata(&up).is_ok_and(|m| m.file_type().is_symlink());
        if made {
            assert!(f.read(Path::new("up/secret.txt")).is_err());
            assert!(f.write(Path::new("up/secret.txt"), "pwned").is_err());
        }
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    }

    #[test]
    fn edit_requires_exactly_one_occurrence() {
        let (_t, f) = folder();
        f.write(Path::new("x"), "a a b").unwrap();
        assert!(
            f.edit(Path::new("x"), "a", "c")
                .unwrap_err()
                .message
                .contains("2 times")
        );
        assert!(
            f.edit(Path::new("x"), "z", "c")
                .unwrap_err()
                .message
                .contains("not found")
        );
        f.edit(Path::new("x"), "b", "c").unwrap();
        assert_eq!(f.read(Path::new("x")).unwrap().text, "a a c");
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn search_skips_binary_files_and_links() {
        let (t, f) = folder();
        f.write(Path::new("t.md"), "one needle\ntwo\n").unwrap();
        std::fs::write(t.path().join("home/bin"), b"needle\0\0").unwrap();
        let out = f.search(Path::new(""), "needle").unwrap();
        assert_eq!(out.structured["matches"].as_array().unwrap().len(), 1);
        assert_eq!(out.structured["matches"][0]["path"], "w/t.md");
        assert_eq!(out.structured["matches"][0]["line"], 1);
    }

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }

    /// Runs `f` on a thread and fails the test if it takes more than 5 s, so
    /// a blocking open shows up as a failure rather than a hung test run.
    #[cfg(unix)]
    fn quickly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()));
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the call blocked")
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_fifo_or_socket_is_not_a_regular_file_for_read_and_edit_and_search_skips_it() {
        let (t, f) = folder();
        let home = t.path().join("home");
        mkfifo(&home.join("pipe"));
        let _sock = std::os::unix::net::UnixListener::bind(home.join("sock")).unwrap();
        f.write(Path::new("notes.md"), "a needle\n").unwrap();
        let f = std::sync::Arc::new(f);
        for name in ["pipe", "sock"] {
            let g = f.clone();
            let err = quickly(move || g.read(Path::new(name))).unwrap_err();
            assert_eq!(err.code, berth_vocab::codes::Code::NotRegularFile, "{err}");
            assert!(err.message.contains("not a regular file"), "{err}");
            let g = f.clone();
            let err = quickly(move || g.edit(Path::new(name), "a", "b")).unwrap_err();
            assert_eq!(err.code, berth_vocab::codes::Code::NotRegularFile, "{err}");
        }
        assert!(
            f.read(Path::new("pipe"))
                .unwrap_err()
                .message
                .contains("FIFO")
        );
        let g = f.clone();
        let out = quickly(move || g.search(Path::new(""), "needle")).unwrap();
        assert_eq!(out.structured["matches"][0]["path"], "w/notes.md");
        assert_eq!(out.structured["matches"].as_array().unwrap().len(), 1);
        // Named directly, the FIFO is skipped too.
        let g = f.clone();
        let out = quickly(move || g.search(Path::new("pipe"), "needle")).unwrap();
        assert!(out.structured["matches"].as_array().unwrap().is_empty());
    }

    #[test]
    #[cfg(unix)] // Unix links, modes or FIFOs
    fn a_link_is_not_followed_even_inside_the_folder() {
        let (t, f) = folder();
        f.write(Path::new("real.md"), "text").unwrap();
        std::os::unix::fs::symlink("real.md", t.path().join("home/alias.md")).unwrap();
        let err = f.read(Path::new("alias.md")).unwrap_err();
        assert!(err.message.contains("is a symlink"), "{err}");
        assert_eq!(f.read(Path::new("real.md")).unwrap().text, "text");
    }

    #[test]
    fn delete_refuses_a_non_empty_folder_and_the_folder_itself() {
        let (_t, f) = folder();
        f.write(Path::new("d/x"), "1").unwrap();
        assert!(
            f.delete(Path::new("d"))
                .unwrap_err()
                .message
                .contains("not empty")
        );
        assert!(f.delete(Path::new("")).is_err());
        f.delete(Path::new("d/x")).unwrap();
        f.delete(Path::new("d")).unwrap();
    }

    #[test]
    fn move_between_folders_keeps_content() {
        let (t, a) = folder();
        let b = Folder::open(&t.path().join("other"), "o/".into(), true).unwrap();
        a.write(Path::new("x.md"), "hi").unwrap();
        let out = move_path(&a, Path::new("x.md"), &b, Path::new("y/x.md")).unwrap();
        assert_eq!(out.structured["to"], "o/y/x.md");
        assert_eq!(b.read(Path::new("y/x.md")).unwrap().text, "hi");
        assert!(a.read(Path::new("x.md")).is_err());
    }

    #[test]
    fn moving_onto_a_folder_itself_says_to_name_the_file() {
        let (t, a) = folder();
        let b = Folder::open(&t.path().join("other"), "o/".into(), true).unwrap();
        a.write(Path::new("d/x.md"), "hi").unwrap();
        let err = move_path(&a, Path::new("d/x.md"), &b, Path::new("")).unwrap_err();
        assert!(err.message.starts_with("o/: "), "{err}");
        assert!(err.message.contains("e.g. o/x.md"), "{err}");
        let err = move_path(&a, Path::new(""), &b, Path::new("y")).unwrap_err();
        assert!(err.message.contains("cannot be moved"), "{err}");
        assert_eq!(a.read(Path::new("d/x.md")).unwrap().text, "hi");
    }

    #[test]
    fn moving_a_folder_into_itself_says_so_and_moves_nothing() {
        let (t, f) = folder();
        f.write(Path::new("a/keep.md"), "x").unwrap();
        for to in ["a/b", "a/b/c"] {
            let err = move_path(&f, Path::new("a"), &f, Path::new(to)).unwrap_err();
            assert_eq!(err.code, berth_vocab::codes::Code::Invalid, "{err}");
            assert_eq!(
                err.message,
                format!(
                    "w/a cannot be moved to w/{to}, which is inside it: a folder cannot be moved into itself; nothing was moved"
                )
            );
            assert_eq!(err.hints, ["choose a target outside w/a"]);
        }
        // The same home opened twice, spelled two ways: the rename refuses (EINVAL, Unix's
        // answer; Windows answers with another error, which is reported as it comes).
        #[cfg(unix)]
        {
            let other = Folder::open(&t.path().join("home"), "./".into(), false).unwrap();
            let err = move_path(&f, Path::new("a"), &other, Path::new("a/b")).unwrap_err();
            assert_eq!(err.code, berth_vocab::codes::Code::Invalid, "{err}");
            assert!(err.message.contains("cannot be moved into itself"), "{err}");
            assert!(!err.message.contains("os error"), "{err}");
        }
        #[cfg(not(unix))]
        let _ = &t;
        assert_eq!(f.read(Path::new("a/keep.md")).unwrap().text, "x");
        // A file whose name merely starts like the folder's is no nesting.
        move_path(&f, Path::new("a"), &f, Path::new("ab")).unwrap();
    }

    #[test]
    #[cfg(unix)] // FIFOs, sockets and devices
    fn ls_gives_fifos_sockets_and_devices_kinds_of_their_own() {
        let (t, f) = folder();
        let home = t.path().join("home");
        mkfifo(&home.join("pipe"));
        let _sock = std::os::unix::net::UnixListener::bind(home.join("sock")).unwrap();
        std::os::unix::fs::symlink("/dev/null", home.join("null")).unwrap();
        f.write(Path::new("notes.md"), "abc").unwrap();
        let out = f.ls(Path::new("")).unwrap();
        let kinds: Vec<(String, String, u64)> = out.structured["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["path"].as_str().unwrap().to_string(),
                    e["kind"].as_str().unwrap().to_string(),
                    e["size"].as_u64().unwrap(),
                )
            })
            .collect();
        let want = [
            ("w/notes.md", "file", 3),
            ("w/null", "symlink", 0),
            ("w/pipe", "fifo", 0),
            ("w/sock", "socket", 0),
        ];
        let want: Vec<(String, String, u64)> = want
            .iter()
            .map(|(p, k, s)| (p.to_string(), k.to_string(), *s))
            .collect();
        assert_eq!(kinds, want);
        // Named directly, too.
        let one = quickly({
            let f = std::sync::Arc::new(f);
            move || f.ls(Path::new("pipe")).unwrap()
        });
        assert_eq!(one.structured["entries"][0]["kind"], "fifo");
        assert_eq!(one.text, "w/pipe: a FIFO (named pipe)\n");
    }

    #[test]
    fn oversized_writes_are_refused() {
        let (_t, f) = folder();
        let big = "x".repeat(MAX_FILE_BYTES as usize + 1);
        assert!(
            f.write(Path::new("big"), &big)
                .unwrap_err()
                .message
                .contains("MiB")
        );
    }
}
