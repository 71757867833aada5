//! The real filesystem behind the core's `FsView`: [`RealFs`] reads the disk defensively, since a
//! project file comes from whatever repository was cloned.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use berth_core::fsview::{DirLook, FsView};

use crate::cache::filekind::describe;
use crate::cache::gitlink;
use berth_core::project_file::{
    MAX_PROJECT_FILE_BYTES, ProjectFileError, parse_project_file, project_file_path,
};

/// The real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl FsView for RealFs {
    fn look(&self, dir: &Path) -> DirLook {
        let (git, link) = gitlink::look(dir);
        DirLook {
            project_file: read_project_file(&project_file_path(dir)),
            git,
            link: link.map(std::sync::Arc::new),
        }
    }
}

/// Reads a project file. `None` when there is none (including when `.berth` is not a folder).
pub fn read_project_file(path: &Path) -> Option<Result<String, ProjectFileError>> {
    // A stat first, following links, so a FIFO or device is refused without ever being opened
    // (opening some devices has effects). It is also the cheap answer in the common "no file"
    // case. The fstat in open_and_read stays the authority, since the path can change between.
    match std::fs::metadata(path) {
        Err(e) => return open_error(&e),
        Ok(meta) if !meta.is_file() => {
            return Some(Err(ProjectFileError::NotRegularFile {
                found: describe(&meta),
            }));
        }
        Ok(_) => {}
    }
    open_and_read(path)
}

/// Opens without blocking and reads at most one byte past the limit.
fn open_and_read(path: &Path) -> Option<Result<String, ProjectFileError>> {
    // O_NONBLOCK: opening a FIFO must not wait for a writer. O_NOCTTY: the daemon has no
    // controlling terminal, and opening a tty must not give it one.
    // (Windows file systems hold no FIFOs or terminals.)
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => return open_error(&e),
    };
    Some(read_regular(file))
}

fn read_regular(file: File) -> Result<String, ProjectFileError> {
    let meta = file
        .metadata()
        .map_err(|e| ProjectFileError::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(ProjectFileError::NotRegularFile {
            found: describe(&meta),
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_PROJECT_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ProjectFileError::Unreadable(e.to_string()))?;
    // parse_project_file refuses anything over the limit, which the extra byte reveals.
    parse_project_file(&bytes)
}

fn open_error(e: &io::Error) -> Option<Result<String, ProjectFileError>> {
    match e.kind() {
        // ENOTDIR: `.berth` is a file, so there is no project file inside it.
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => None,
        io::ErrorKind::IsADirectory => Some(Err(ProjectFileError::NotRegularFile {
            found: "a directory",
        })),
        io::ErrorKind::PermissionDenied => Some(Err(ProjectFileError::Unreadable(
            "permission denied".into(),
        ))),
        _ => Some(Err(ProjectFileError::Unreadable(e.to_string()))),
    }
}

// FIFOs, modes and links are Unix ones.
#[cfg(all(test, unix))]
mod tests {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{PermissionsExt, symlink};
    use std::sync::mpsc;
    use std::time::Duration;

    use rstest::rstest;

    use super::*;

    /// A temp folder with `.berth/` created inside.
    fn project() -> (tempfile::TempDir, std::path::PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join(".berth")).unwrap();
        let file = project_file_path(tmp.path());
        (tmp, file)
    }

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(rc, 0, "mkfifo failed: {}", io::Error::last_os_error());
    }

    /// Runs `f` on another thread and fails the test if it takes more than a few seconds, so a
    /// blocking open shows up as a failure rather than a hung test run.
    fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(f()).unwrap());
        rx.recv_timeout(Duration::from_secs(5))
            .expect("reading the project file blocked")
    }

    #[test]
    fn a_valid_file_is_read() {
        let (tmp, file) = project();
        std::fs::write(&file, r#"{"workspace": "notes"}"#).unwrap();
        assert_eq!(RealFs.look(tmp.path()), DirLook::file("notes"));
    }

    #[test]
    fn a_folder_without_berth_has_no_file() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(RealFs.look(tmp.path()), DirLook::default());
    }

    #[test]
    fn a_berth_that_is_a_file_means_no_project_file() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".berth"), "x").unwrap();
        assert_eq!(RealFs.look(tmp.path()).project_file, None);
    }

    #[test]
    fn a_directory_in_the_files_place_is_not_a_regular_file() {
        let (tmp, file) = project();
        std::fs::create_dir(&file).unwrap();
        assert_eq!(
            RealFs.look(tmp.path()).project_file,
            Some(Err(ProjectFileError::NotRegularFile {
                found: "a directory"
            }))
        );
    }

    #[test]
    fn a_fifo_in_the_files_place_does_not_block() {
        let (tmp, file) = project();
        mkfifo(&file);
        let dir = tmp.path().to_path_buf();
        let look = within_seconds(move || RealFs.look(&dir));
        assert_eq!(
            look.project_file,
            Some(Err(ProjectFileError::NotRegularFile {
                found: "a named pipe (FIFO)"
            }))
        );
    }

    #[test]
    fn opening_a_fifo_directly_does_not_block_and_fstat_refuses_it() {
        // Past the stat, as if the file was swapped for a FIFO in between.
        let (_tmp, file) = project();
        mkfifo(&file);
        let result = within_seconds(move || open_and_read(&file));
        assert_eq!(
            result,
            Some(Err(ProjectFileError::NotRegularFile {
                found: "a named pipe (FIFO)"
            }))
        );
    }

    #[test]
    fn a_symlink_to_dev_zero_is_refused_as_a_device() {
        let (tmp, file) = project();
        symlink("/dev/zero", &file).unwrap();
        let expected = Some(Err(ProjectFileError::NotRegularFile {
            found: "a character device",
        }));
        assert_eq!(RealFs.look(tmp.path()).project_file, expected);
        // And by fstat alone, past the stat.
        assert_eq!(open_and_read(&file), expected);
    }

    #[test]
    fn a_symlink_to_a_valid_file_is_followed() {
        let (tmp, file) = project();
        let target = tmp.path().join("elsewhere.json");
        std::fs::write(&target, r#"{"workspace": "notes"}"#).unwrap();
        symlink(&target, &file).unwrap();
        assert_eq!(
            RealFs.look(tmp.path()).project_file,
            Some(Ok("notes".into()))
        );
    }

    #[test]
    fn a_dangling_symlink_means_no_file() {
        let (tmp, file) = project();
        symlink(tmp.path().join("missing"), &file).unwrap();
        assert_eq!(RealFs.look(tmp.path()).project_file, None);
    }

    #[rstest]
    #[case::exactly_the_limit_is_read(MAX_PROJECT_FILE_BYTES, true)]
    #[case::one_byte_over_the_limit_is_too_large(MAX_PROJECT_FILE_BYTES + 1, false)]
    #[case::far_over_the_limit_is_too_large(10 * MAX_PROJECT_FILE_BYTES, false)]
    fn the_size_limit_applies_on_disk(#[case] len: usize, #[case] ok: bool) {
        let (tmp, file) = project();
        let mut bytes = br#"{"workspace": "notes"}"#.to_vec();
        bytes.resize(len, b' ');
        std::fs::write(&file, bytes).unwrap();
        let expected = if ok {
            Ok("notes".to_owned())
        } else {
            Err(ProjectFileError::TooLarge)
        };
        assert_eq!(RealFs.look(tmp.path()).project_file, Some(expected));
    }

    #[test]
    fn an_unreadable_file_is_reported_unless_running_as_root() {
        let (tmp, file) = project();
        std::fs::write(&file, r#"{"workspace": "notes"}"#).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        let look = RealFs.look(tmp.path());
        if rustix::process::geteuid().is_root() {
            // root reads anything; the check cannot be exercised.
            assert_eq!(look.project_file, Some(Ok("notes".into())));
        } else {
            assert_eq!(
                look.project_file,
                Some(Err(ProjectFileError::Unreadable(
                    "permission denied".into()
                )))
            );
        }
    }

    #[rstest]
    #[case::a_git_folder_marks_a_git_root(true, false, true)]
    #[case::a_git_file_marks_a_git_root(false, true, true)]
    #[case::no_git_is_no_git_root(false, false, false)]
    fn git_is_a_folder_or_a_file(#[case] as_dir: bool, #[case] as_file: bool, #[case] git: bool) {
        let tmp = tempfile::tempdir().unwrap();
        if as_dir {
            std::fs::create_dir(tmp.path().join(".git")).unwrap();
        }
        if as_file {
            std::fs::write(tmp.path().join(".git"), "gitdir: ../.git/worktrees/x\n").unwrap();
        }
        assert_eq!(RealFs.look(tmp.path()).git, git);
    }
}
