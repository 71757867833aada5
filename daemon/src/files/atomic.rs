//! Atomic file replacement: write a temporary file beside the target, flush
//! it to disk, rename it over the target, then flush the folder. A reader
//! sees the old file or the new one, never half of either.
//!
//! The replacement keeps the old file's mode, and its group where the user may
//! set it; a new file gets the umask's mode. All of it happens through one
//! handle to the target's folder, so a temporary file is removed through that
//! same handle when anything fails, even if the folder was moved or replaced
//! meanwhile. Temporary files are named `.<name>.berth-tmp-<pid>-<n>`; what a
//! killed writer left behind is swept at start-up by [`sweep_stale`]
//! (docs/decisions/0016-homes-never-nest-and-are-opened-without-links.md).

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, MetadataExt, OpenOptions, Permissions};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What sets berth's temporary files apart: `.<name>.berth-tmp-<pid>-<n>`.
const MARK: &str = ".berth-tmp-";

/// The temporary name for replacing `name` in this process.
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
    let name = name.as_bytes();
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

/// Replaces `path` with `bytes` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("no parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("no file name"))?;
    let dir = Dir::open_ambient_dir(dir, cap_std::ambient_authority())?;
    replace(&dir, name, bytes)
}

/// Replaces the file `name` in the folder `dir` with `bytes` atomically, keeping its mode and
/// (where allowed) its group.
pub fn replace(dir: &Dir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    replace_with(dir, name, bytes, || {})
}

/// [`replace`], running `before_rename` between writing the temporary file and renaming it
/// (where tests make the rename fail).
fn replace_with(
    dir: &Dir,
    name: &OsStr,
    bytes: &[u8],
    before_rename: impl FnOnce(),
) -> io::Result<()> {
    // A link is replaced by a file, never followed: only a regular file's metadata is kept.
    let old = dir
        .symlink_metadata(name)
        .ok()
        .filter(|m| m.file_type().is_file());
    let tmp = temp_name(name);
    let mut f = dir.open_with(&tmp, OpenOptions::new().write(true).create_new(true))?;
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
fn keep_metadata(f: &cap_std::fs::File, old: &cap_std::fs::Metadata) -> io::Result<()> {
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

/// Whether the berth process `pid` still runs (so its temporary files may still be written).
/// Where `/proc` tells, the process must be a `berthd`: a pid reused by another program does
/// not keep a stale file forever.
pub fn writer_running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid_t) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid_t <= 0 {
        return false;
    }
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return std::fs::read_to_string(proc.join(pid.to_string()).join("comm"))
            .is_ok_and(|comm| comm.trim_end().starts_with("berthd"));
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid_t, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// How much one start-up sweep may look at.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Entries read, across every folder swept.
    pub entries: usize,
    /// Folders deep below the start.
    pub depth: usize,
}

/// Removes berth's temporary files whose writer no longer runs, in `dir` and the folders below
/// it, following no link and reading no more than `budget` allows. Nothing else is touched.
/// Returns how many were removed; `budget.entries` is what is left.
pub fn sweep_stale(dir: &Dir, budget: &mut Budget, depth: usize) -> usize {
    let Ok(entries) = dir.entries() else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        if budget.entries == 0 {
            return removed;
        }
        budget.entries -= 1;
        let Ok(ft) = entry.file_type() else { continue };
        let name = entry.file_name();
        if ft.is_dir() && depth < budget.depth {
            let flags = rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC;
            if let Ok(fd) = rustix::fs::openat(dir, &name, flags, rustix::fs::Mode::empty()) {
                removed += sweep_stale(&Dir::from(fd), budget, depth + 1);
            }
        } else if ft.is_file()
            && temp_writer(&name).is_some_and(|pid| !writer_running(pid))
            && dir.remove_file(&name).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

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

    /// The rename fails after the folder was moved and a link put in its place: the temporary
    /// file is still removed, through the handle, from where it really is.
    #[test]
    fn a_failed_rename_leaves_no_temporary_file_even_when_the_folder_moved() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        std::fs::create_dir_all(d.join("target/inside")).unwrap();
        let dir = open(&d);
        let moved = t.path().join("moved");
        let err = replace_with(&dir, OsStr::new("target"), b"x", || {
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

    #[test]
    fn the_sweep_removes_dead_writers_files_only_and_follows_no_link() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir_all(home.join("a/b")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, home.join("link")).unwrap();
        // A pid that ran and ended.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = [
            format!("a/.x.berth-tmp-{dead}-0"),
            format!("a/b/.y.md.berth-tmp-{dead}-9"),
        ];
        let kept = [
            format!("a/.x.berth-tmp-{}-1", std::process::id()),
            "a/x.berth-tmp-1-1".to_string(),
            "a/.x.berth-tmp-notes".to_string(),
            "a/b/notes.md".to_string(),
        ];
        for f in stale.iter().chain(&kept) {
            std::fs::write(home.join(f), "x").unwrap();
        }
        let outside = elsewhere.join(format!(".z.berth-tmp-{dead}-0"));
        std::fs::write(&outside, "x").unwrap();
        let mut budget = Budget {
            entries: 1000,
            depth: 8,
        };
        assert_eq!(sweep_stale(&open(&home), &mut budget, 0), 2);
        for f in &stale {
            assert!(!home.join(f).exists(), "{f} stayed");
        }
        for f in &kept {
            assert!(home.join(f).exists(), "{f} was removed");
        }
        assert!(outside.exists(), "the sweep followed a link");
        let mut none = Budget {
            entries: 0,
            depth: 8,
        };
        std::fs::write(home.join(&stale[0]), "x").unwrap();
        assert_eq!(sweep_stale(&open(&home), &mut none, 0), 0);
    }
}
