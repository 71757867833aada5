//! Atomic file replacement, the one way berth replaces a file: write a
//! temporary file beside the target, flush it to disk, rename it over the
//! target, then flush the folder. A reader sees the old file or the new one,
//! never half of either, and a crash after the call returns loses neither.
//!
//! No link is ever followed. The temporary file is created new (`O_EXCL`),
//! so a link planted at its name is never written through: that name is
//! skipped for the next one. A link at the target's name is replaced by the
//! file, never written through. The replacement keeps the old file's mode,
//! and its group where the user may set it; a new file gets the mode asked
//! for, less the umask. All of it happens through one handle to the target's
//! folder, so a temporary file is removed through that same handle when
//! anything fails, even if the folder was moved or replaced meanwhile.
//!
//! Temporary files are named `.<name>.berth-tmp-<pid>-<n>`; [`temp_writer`]
//! reads the writer's pid back, so the daemon can sweep what a killed writer
//! left (docs/decisions/0016-homes-never-nest-and-are-opened-without-links.md).
//!
//! On Windows the rename is `MoveFileExW` with replace semantics (what std
//! and cap-std give), a folder cannot be flushed (NTFS journals the rename),
//! and there is no mode or group to keep: the new file takes the folder's
//! inherited access list, as any new file there would.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What sets berth's temporary files apart: `.<name>.berth-tmp-<pid>-<n>`.
const MARK: &str = ".berth-tmp-";

/// How many taken temporary names a write skips before it gives up.
const ATTEMPTS: usize = 64;

/// The mode of a new file before the umask, as `std::fs::write` gives it.
const DEFAULT_MODE: u32 = 0o666;

/// The next temporary name for replacing `name` in this process.
fn temp_name(name: &OsStr) -> OsString {
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        "{MARK}{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    tmp
}

/// The pid of the writer that made `name`, when `name` is one of berth's temporary files
/// (`.<something>.berth-tmp-<pid>-<n>`, digits only after the mark); `None` for anything else.
pub fn temp_writer(name: &OsStr) -> Option<u32> {
    let name = name.as_encoded_bytes();
    let rest = name.strip_prefix(b".")?;
    let at = rest
        .windows(MARK.len())
        .rposition(|w| w == MARK.as_bytes())?;
    if at == 0 {
        return None;
    }
    let tail = std::str::from_utf8(&rest[at + MARK.len()..]).ok()?;
    let (pid, n) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Replaces `path` with `bytes` atomically. Its folder must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    replace(&dir, name, bytes)
}

/// [`write_atomic`] where a new file gets `mode` (less the umask) rather
/// than 0666: 0600 for a file only its user may read.
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    replace_with(&dir, name, bytes, mode, || {})
}

fn open_parent(path: &Path) -> io::Result<(Dir, &OsStr)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} names no file", path.display())))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok((
        Dir::open_ambient_dir(dir, cap_std::ambient_authority())?,
        name,
    ))
}

/// Replaces the file `name` in the folder `dir` with `bytes` atomically, keeping its mode and
/// (where allowed) its group.
pub fn replace(dir: &Dir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    replace_with(dir, name, bytes, DEFAULT_MODE, || {})
}

/// Creates a new temporary file beside `name`, skipping any name already
/// taken (by a crashed writer, or by a link someone planted there).
fn create_temp(dir: &Dir, name: &OsStr, mode: u32) -> io::Result<(OsString, cap_std::fs::File)> {
    create_temp_named(dir, name, mode, &mut temp_name)
}

/// [`create_temp`] with the names to try given (tests give names they planted links at).
// The one file berth writes to replace another: made new here, renamed over the target.
#[allow(clippy::disallowed_methods)]
fn create_temp_named(
    dir: &Dir,
    name: &OsStr,
    mode: u32,
    names: &mut dyn FnMut(&OsStr) -> OsString,
) -> io::Result<(OsString, cap_std::fs::File)> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let tmp = names(name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        cap_std::fs::OpenOptionsExt::mode(&mut options, mode);
        #[cfg(not(unix))]
        let _ = mode;
        match dir.open_with(&tmp, &options) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// [`replace`] with the mode of a new file, running `before_rename` between writing the
/// temporary file and renaming it (where tests make the rename fail).
fn replace_with(
    dir: &Dir,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
    before_rename: impl FnOnce(),
) -> io::Result<()> {
    // A link is replaced by a file, never followed: only a regular file's metadata is kept.
    let old = dir
        .symlink_metadata(name)
        .ok()
        .filter(|m| m.file_type().is_file());
    let (tmp, mut f) = create_temp(dir, name, mode)?;
    let result = (|| {
        f.write_all(bytes)?;
        if let Some(old) = &old {
            keep_metadata(&f, old)?;
        }
        f.sync_all()?;
        before_rename();
        dir.rename(&tmp, dir, name)
    })();
    drop(f);
    if let Err(e) = result {
        // Through the same handle: it names the same folder whatever happened to its path.
        if let Err(cleanup) = dir.remove_file(&tmp) {
            tracing::warn!(tmp = ?tmp, error = %cleanup, "could not remove a temporary file");
        }
        return Err(e);
    }
    sync_folder(dir)
}

/// Flushes the folder itself, so the rename survives a crash. (A `Dir` may hold an `O_PATH`
/// descriptor, which cannot be flushed: the folder is opened for reading to do it.)
#[cfg(unix)]
fn sync_folder(dir: &Dir) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(rustix::fs::fsync(fd)?)
}

/// Gives the new file the old one's group (first: changing the group may clear set-id bits),
/// then its mode. A group the user may not set is left as the umask gave it.
#[cfg(unix)]
fn keep_metadata(f: &cap_std::fs::File, old: &cap_std::fs::Metadata) -> io::Result<()> {
    use cap_std::fs::{MetadataExt, Permissions};
    use std::os::unix::fs::PermissionsExt;
    let now = f.metadata()?;
    if now.gid() != old.gid() {
        match std::os::unix::fs::fchown(f, None, Some(old.gid())) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
            Err(e) => return Err(e),
        }
    }
    f.set_permissions(Permissions::from_std(std::fs::Permissions::from_mode(
        old.mode() & 0o7777,
    )))
}

/// Windows folders cannot be flushed; NTFS journals the rename itself.
#[cfg(windows)]
fn sync_folder(_: &Dir) -> io::Result<()> {
    Ok(())
}

/// Windows has no mode or group to keep; see the module's notes.
#[cfg(windows)]
fn keep_metadata(_: &cap_std::fs::File, _: &cap_std::fs::Metadata) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    use super::*;

    #[cfg(unix)]
    fn open(p: &Path) -> Dir {
        Dir::open_ambient_dir(p, cap_std::ambient_authority()).unwrap()
    }

    #[test]
    fn replacing_leaves_only_the_new_content_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        std::fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    #[cfg(unix)]
    fn replacing_keeps_the_mode_and_the_group() {
        let dir = tempfile::tempdir().unwrap();
        for (name, mode, gid) in [("secret.env", 0o600, None), ("run.sh", 0o750, Some(65534))] {
            let p = dir.path().join(name);
            std::fs::write(&p, "old").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            if let Some(gid) = gid {
                // Only where we may (we run as root in CI; elsewhere the group stays).
                let _ = std::os::unix::fs::chown(&p, None, Some(gid));
            }
            let want_gid = std::fs::metadata(&p).unwrap().gid();
            write_atomic(&p, b"new").unwrap();
            let meta = std::fs::metadata(&p).unwrap();
            assert_eq!(meta.mode() & 0o7777, mode, "{name}");
            assert_eq!(meta.gid(), want_gid, "{name}");
        }
    }

    #[test]
    #[cfg(unix)]
    fn a_new_file_gets_the_mode_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("private.json");
        write_atomic_mode(&p, b"{}", 0o600).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
    }

    /// A link planted at the target itself is replaced, never written through.
    #[test]
    #[cfg(unix)]
    fn a_link_at_the_target_is_replaced_not_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = t.path().join("f.json");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(&target).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    /// Links planted at the first temporary names a write tries: each is skipped, none is
    /// written through, and the first free name is used. The names are the test's own, so no
    /// other test can move them.
    #[test]
    #[cfg(unix)]
    fn a_link_planted_at_a_temporary_name_is_skipped_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let d = t.path().join("d");
        std::fs::create_dir(&d).unwrap();
        let tried = std::cell::Cell::new(0);
        let mut names = |name: &OsStr| {
            tried.set(tried.get() + 1);
            let mut n = OsString::from(".");
            n.push(name);
            n.push(format!("{MARK}1-{}", tried.get()));
            n
        };
        for n in 1..=8 {
            let planted = d.join(format!(".f.json{MARK}1-{n}"));
            std::os::unix::fs::symlink(&victim, planted).unwrap();
        }
        let (tmp, mut f) = create_temp_named(&open(&d), OsStr::new("f.json"), 0o600, &mut names)
            .expect("a free name after the planted ones");
        f.write_all(b"new").unwrap();
        assert_eq!(
            tried.get(),
            9,
            "the eight planted names were each met and skipped"
        );
        assert_eq!(tmp, OsString::from(format!(".f.json{MARK}1-9")));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(d.join(&tmp)).unwrap(), "new");
    }

    /// The rename fails after the folder was moved and a link put in its place: the temporary
    /// file is still removed, through the handle, from where it really is.
    #[test]
    #[cfg(unix)]
    fn a_failed_rename_leaves_no_temporary_file_even_when_the_folder_moved() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        std::fs::create_dir_all(d.join("target/inside")).unwrap();
        let dir = open(&d);
        let moved = t.path().join("moved");
        let err = replace_with(&dir, OsStr::new("target"), b"x", DEFAULT_MODE, || {
            std::fs::rename(&d, &moved).unwrap();
            std::os::unix::fs::symlink("/nonexistent", &d).unwrap();
        })
        .unwrap_err();
        assert!(!err.to_string().is_empty());
        let left: Vec<_> = std::fs::read_dir(&moved)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            [OsString::from("target")],
            "a temporary file was left"
        );
    }

    #[test]
    fn only_berths_own_pattern_is_a_temporary_file() {
        let yes = [(".x.berth-tmp-12-0", 12), (".a.b.berth-tmp-7-33", 7)];
        for (name, pid) in yes {
            assert_eq!(temp_writer(OsStr::new(name)), Some(pid), "{name}");
        }
        for name in [
            "x.berth-tmp-12-0",
            ".x.berth-tmp-12",
            ".x.berth-tmp-12-0.bak",
            ".x.berth-tmp-a-0",
            ".berth-tmp-12-0",
            ".x.berth-tmp--0",
            "notes.md",
        ] {
            assert_eq!(temp_writer(OsStr::new(name)), None, "{name}");
        }
    }
}
