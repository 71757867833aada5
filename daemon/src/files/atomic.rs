//! The start-up sweep of temporary files that a killed writer left in the
//! homes. Files are replaced through `berth_client::atomic`, whose temporary
//! files are named `.<name>.berth-tmp-<pid>-<n>`; one whose writer no longer
//! runs is removed here
//! (docs/decisions/0016-homes-never-nest-and-are-opened-without-links.md).

use std::io;

use berth_client::atomic::temp_writer;
use cap_std::fs::Dir;

/// Whether the berth process `pid` still runs (so its temporary files may still be written).
/// Where `/proc` tells, the process must be a `berthd`: a pid reused by another program does
/// not keep a stale file forever.
pub fn writer_running(pid: u32) -> bool {
    pid == std::process::id() || crate::pids::runs(pid, "berthd")
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
            if let Ok(sub) = open_subdir(dir, &name) {
                removed += sweep_stale(&sub, budget, depth + 1);
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

/// Opens the folder `name` in `dir`, refusing a link put there since it was listed.
#[cfg(unix)]
fn open_subdir(dir: &Dir, name: &std::ffi::OsStr) -> io::Result<Dir> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(Dir::from(rustix::fs::openat(
        dir,
        name,
        flags,
        Mode::empty(),
    )?))
}

/// Opens the folder `name` in `dir`, refusing a link put there since it was listed.
#[cfg(windows)]
fn open_subdir(dir: &Dir, name: &std::ffi::OsStr) -> io::Result<Dir> {
    let here: crate::files::linkfree::Handle = dir.try_clone()?.into_std_file().into();
    crate::files::linkfree::open_dir_beneath(Some(&here), std::path::Path::new(name)).map(Dir::from)
}

// Their links and the folder moved mid-write are Unix ones.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn open(p: &std::path::Path) -> Dir {
        Dir::open_ambient_dir(p, cap_std::ambient_authority()).unwrap()
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
