//! The folders `berth install` creates on the way to a client's file, and their removal by
//! `berth uninstall` once nothing else is in them (docs/decisions/0008-registering-clients.md).
//!
//! Install writes a record, [`RECORD`], into each folder it creates, right after creating it.
//! The record lives in the folder it speaks for: it goes when the folder goes, the files of two
//! clients beneath one folder share it, and a folder without it (one that existed before, empty
//! or not, or one someone else made) is never removed. Uninstall removes a folder only when it is
//! a real folder (not a link) holding berth's record, word for word, and nothing else, then looks
//! at its parent the same way. Each folder is reached by a handle on its parent, with no link
//! followed.

use std::ffi::OsStr;
use std::io::{self, Read, Write};

use berth_client::careful_open::{self, is_link_refusal};
use cap_std::fs::Dir;

/// The record's name in a folder berth created.
pub const RECORD: &str = ".berth-created";

/// The record's exact text: anything else at its name is not berth's record.
const TEXT: &str =
    "berth install created this folder; berth uninstall removes it once nothing else is in it.\n";

/// Creates the folder `name` in `parent` and records it as berth's. `Ok(false)` when something
/// is already at that name (made meanwhile by someone else: not berth's, not recorded).
pub fn create(parent: &Dir, name: &OsStr) -> io::Result<bool> {
    match parent.create_dir(name) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(e),
    }
    let dir = careful_open::open_dir_in(parent, name)?;
    write_record(&dir)?;
    Ok(true)
}

// The record is created new (`create_new`), so it never replaces a file.
#[allow(clippy::disallowed_methods)]
fn write_record(dir: &Dir) -> io::Result<()> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    dir.open_with(RECORD, &options)?.write_all(TEXT.as_bytes())
}

/// Removes the folder `name` in `parent` when berth created it and nothing but its record is
/// left in it. `Ok(false)` when it stays: missing, a link, not a folder, holding anything else,
/// or without berth's record.
pub fn remove_if_left_empty(parent: &Dir, name: &OsStr) -> io::Result<bool> {
    let dir = match careful_open::open_dir_in(parent, name) {
        Ok(d) => d,
        Err(e) if is_link_refusal(&e) => return Ok(false),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for entry in dir.entries()? {
        names.push(entry?.file_name());
        if names.len() > 1 {
            return Ok(false);
        }
    }
    if names != [RECORD] || !is_record(&dir)? {
        return Ok(false);
    }
    match dir.remove_file(RECORD) {
        Ok(()) => {}
        // Another uninstall got there first, and removes the folder.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    // No handle on the folder stays open while it is removed (Windows).
    drop(dir);
    match parent.remove_dir(name) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => {
            // Something arrived meanwhile: the folder stays, and stays recorded.
            if let Ok(dir) = careful_open::open_dir_in(parent, name) {
                let _ = write_record(&dir);
            }
            if e.kind() == io::ErrorKind::DirectoryNotEmpty {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Whether `dir` holds berth's record: a regular file with its exact text.
fn is_record(dir: &Dir) -> io::Result<bool> {
    let file = match careful_open::open_read_in(dir, OsStr::new(RECORD)) {
        Ok(f) => f,
        Err(e) if is_link_refusal(&e) || e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(false);
    }
    let mut text = Vec::new();
    file.take(TEXT.len() as u64 + 1).read_to_end(&mut text)?;
    Ok(text == TEXT.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, Dir) {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open_ambient_dir(t.path(), cap_std::ambient_authority()).unwrap();
        (t, d)
    }

    #[test]
    fn a_folder_berth_created_goes_once_only_its_record_is_left() {
        let (t, root) = root();
        assert!(create(&root, OsStr::new("a")).unwrap());
        std::fs::write(t.path().join("a").join("f"), "x").unwrap();
        assert!(!remove_if_left_empty(&root, OsStr::new("a")).unwrap());
        assert!(t.path().join("a").join(RECORD).is_file());
        std::fs::remove_file(t.path().join("a").join("f")).unwrap();
        assert!(remove_if_left_empty(&root, OsStr::new("a")).unwrap());
        assert!(!t.path().join("a").exists());
    }

    #[test]
    fn a_folder_without_berths_record_stays() {
        let (t, root) = root();
        // Existed before: no record.
        std::fs::create_dir(t.path().join("mine")).unwrap();
        assert!(!create(&root, OsStr::new("mine")).unwrap());
        assert!(!remove_if_left_empty(&root, OsStr::new("mine")).unwrap());
        // A record in other words, or a folder at its name, is not berth's.
        std::fs::write(t.path().join("mine").join(RECORD), "mine\n").unwrap();
        assert!(!remove_if_left_empty(&root, OsStr::new("mine")).unwrap());
        std::fs::remove_file(t.path().join("mine").join(RECORD)).unwrap();
        std::fs::create_dir(t.path().join("mine").join(RECORD)).unwrap();
        assert!(!remove_if_left_empty(&root, OsStr::new("mine")).unwrap());
        assert!(t.path().join("mine").join(RECORD).is_dir());
        assert!(!remove_if_left_empty(&root, OsStr::new("missing")).unwrap());
    }
}
