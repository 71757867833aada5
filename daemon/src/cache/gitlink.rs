//! Judging a folder's `.git` file against git's own records: the I/O half of the core's
//! `worktree` (docs/reference.md, "Roots, the walk and project files";
//! docs/decisions/0047-a-git-worktree-is-its-repositorys-project.md).
//!
//! The folder is a linked worktree of repository R only when both directions agree: its `.git`
//! says `gitdir: X`, X lies in `<common>/worktrees/`, `X/gitdir` names this very `.git`, and
//! `X/commondir` (when present) names `<common>`. Every file is read as a project file is: by a
//! non-blocking open that follows no link, a regular file only, a few KiB at most. git is never
//! run.

use std::ffi::OsStr;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use berth_client::careful_open;
use cap_std::fs::Dir;

use berth_core::worktree::{
    BACK_LINK, COMMON_DIR, CONFIG, DOT_GIT, GitLink, LinkRefusal, MAX_GIT_CONFIG_BYTES,
    MAX_GIT_FILE_BYTES, Separate, config_says_checkout, join_written, parse_dot_git, parse_record,
    repository_of,
};

use crate::cache::filekind::describe;
use crate::canonical::canonicalize;
use crate::files::linkfree;

/// Whether `dir` is a git root (`.git` a folder, as in a plain clone, or a regular file, as in
/// a worktree or submodule; never through a link, which git does not make there), and what a
/// `.git` that is not a folder amounts to. One `lstat` for a folder without a `.git` file.
pub fn look(dir: &Path) -> (bool, Option<GitLink>) {
    let dot_git = dir.join(DOT_GIT);
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return (false, None);
    };
    if meta.is_dir() {
        return (true, None);
    }
    if meta.file_type().is_symlink() {
        return (false, Some(GitLink::refused(LinkRefusal::Link)));
    }
    if !meta.is_file() {
        let found = describe(&meta);
        return (
            false,
            Some(GitLink::refused(LinkRefusal::NotRegularFile { found })),
        );
    }
    if meta.len() > MAX_GIT_FILE_BYTES as u64 {
        return (
            true,
            Some(GitLink::refused(LinkRefusal::TooLarge { file: DOT_GIT })),
        );
    }
    (true, Some(judge_file(dir, &dot_git, meta.len())))
}

/// What `dir`'s `.git` amounts to: `None` when there is none or it is a folder (a repository's
/// own working tree); otherwise the verdict. Its tests make real worktrees with Unix tools.
#[cfg(all(test, unix))]
fn judge(dir: &Path) -> Option<GitLink> {
    look(dir).1
}

/// The verdict on the regular file `dot_git` of `len` bytes, as the walk's `lstat` found it.
fn judge_file(dir: &Path, dot_git: &Path, len: u64) -> GitLink {
    // The walk's stat said a regular file: the open refuses a link put there since, never
    // waits, and the read of one byte more than `len` shows a file that grew (anything else
    // put there since reads as nothing, or fails, and the folder's watch reports the change).
    let bytes = match read_opened(careful_open::open_read(dot_git), DOT_GIT, Known::Len(len)) {
        Ok(Some(bytes)) => bytes,
        // Gone since the stat: a change the folder's watch reports.
        Ok(None) => return GitLink::refused(LinkRefusal::Malformed { file: DOT_GIT }),
        Err(why) => return GitLink::refused(why),
    };
    let written = match parse_dot_git(&bytes) {
        Ok(written) => written,
        Err(why) => return GitLink::refused(why),
    };
    let admin = join_written(dir, written);
    match verify(dot_git, &admin) {
        Ok(verified) => GitLink::Worktree {
            admin,
            repository: verified.repository,
            separate: verified.separate,
            through_link: verified.through_link,
        },
        Err(why) => GitLink::Refused {
            admin: Some(admin),
            why,
        },
    }
}

/// What git's records in an admin folder confirm.
struct Verified {
    repository: PathBuf,
    /// The common folder is a separate git folder whose checkout is still to be found.
    separate: Option<Separate>,
    /// A record names its path only through a symbolic link.
    through_link: bool,
}

/// The repository whose worktree `admin` records `dot_git` to be, checked both ways.
fn verify(dot_git: &Path, admin: &Path) -> Result<Verified, LinkRefusal> {
    let (common, repository) =
        repository_of(admin).ok_or_else(|| LinkRefusal::NotInWorktrees(admin.into()))?;
    // One open refusing a link on every component (openat2 on Linux); the records are then read
    // beneath that handle, so the folder checked is the folder read.
    let handle = match linkfree::open_dir_to_open_in(admin) {
        Ok(handle) => Dir::from_std_file(std::fs::File::from(handle)),
        Err(e) if linkfree::is_link_refusal(&e) => {
            return Err(LinkRefusal::AdminThroughLink(admin.into()));
        }
        Err(_) => return Err(LinkRefusal::AdminMissing(admin.into())),
    };
    let back =
        read_small(&handle, BACK_LINK)?.ok_or_else(|| LinkRefusal::NoBackLink(admin.into()))?;
    let named = join_written(admin, parse_record(&back, BACK_LINK)?);
    let Some(mut through_link) = naming(&named, dot_git) else {
        return Err(LinkRefusal::BackLinkElsewhere(named));
    };
    if let Some(bytes) = read_small(&handle, COMMON_DIR)? {
        let named = join_written(admin, parse_record(&bytes, COMMON_DIR)?);
        let Some(linked) = naming(&named, &common) else {
            return Err(LinkRefusal::CommonDirElsewhere(named));
        };
        through_link |= linked;
    }
    let separate = (common.file_name() != Some(OsStr::new(DOT_GIT)) && has_checkout(&common))
        .then_some(Separate::Unsettled);
    Ok(Verified {
        repository,
        separate,
        through_link,
    })
}

/// Whether the common folder `common` (not a `.git`) says it has a working tree: a separate git
/// folder rather than a bare repository. Anything unreadable says bare, as before.
fn has_checkout(common: &Path) -> bool {
    let Ok(handle) = linkfree::open_dir_to_open_in(common) else {
        return false;
    };
    let handle = Dir::from_std_file(std::fs::File::from(handle));
    let opened = careful_open::open_read_in(&handle, OsStr::new(CONFIG));
    matches!(
        read_opened(opened, CONFIG, Known::Nothing(MAX_GIT_CONFIG_BYTES)),
        Ok(Some(bytes)) if config_says_checkout(&bytes)
    )
}

/// Whether `written`, a path git wrote, names `real`, a canonical path: by its spelling
/// (`Some(false)`), or (when git wrote a path through a link of the user's own) by where it
/// leads (`Some(true)`).
fn naming(written: &Path, real: &Path) -> Option<bool> {
    if same(written, real) {
        Some(false)
    } else {
        canonicalize(written)
            .is_ok_and(|c| same(&c, real))
            .then_some(true)
    }
}

/// Equal paths; on Windows the case of a name does not tell two files apart.
fn same(a: &Path, b: &Path) -> bool {
    if cfg!(windows) {
        a.to_string_lossy().to_lowercase().replace('\\', "/")
            == b.to_string_lossy().to_lowercase().replace('\\', "/")
    } else {
        a == b
    }
}

/// One of the admin folder's records, `file` in `dir`: see [`read_opened`].
fn read_small(dir: &Dir, file: &'static str) -> Result<Option<Vec<u8>>, LinkRefusal> {
    read_opened(
        careful_open::open_read_in(dir, OsStr::new(file)),
        file,
        Known::Nothing(MAX_GIT_FILE_BYTES),
    )
}

/// What is known of a file before it is opened.
enum Known {
    /// Nothing: its own stat decides, and it may hold this many bytes at most.
    Nothing(usize),
    /// A stat just before found a regular file of this length, within the limit.
    Len(u64),
}

/// One of git's small files: `Ok(None)` when it is not there. Opened without following a link
/// or waiting on a FIFO, refused unless a regular file (by its own stat, or the one `known`
/// holds), read to the size the stat gave (one byte more, to see it grew).
fn read_opened(
    opened: io::Result<std::fs::File>,
    file: &'static str,
    known: Known,
) -> Result<Option<Vec<u8>>, LinkRefusal> {
    let unreadable = |e: &io::Error| LinkRefusal::Unreadable {
        file,
        why: e.to_string(),
    };
    let handle = match opened {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if careful_open::is_link_refusal(&e) && file == DOT_GIT => {
            return Err(LinkRefusal::Link);
        }
        Err(e) => return Err(unreadable(&e)),
    };
    let len = match known {
        Known::Len(len) => len,
        Known::Nothing(limit) => {
            let meta = handle.metadata().map_err(|e| unreadable(&e))?;
            if !meta.is_file() {
                return Err(LinkRefusal::Unreadable {
                    file,
                    why: format!("it is {}, not a regular file", describe(&meta)),
                });
            }
            if meta.len() > limit as u64 {
                return Err(LinkRefusal::TooLarge { file });
            }
            meta.len()
        }
    };
    // One read of one byte more than the stat gave: a regular file answers it whole, and a
    // file that grew meanwhile shows it by filling the buffer.
    let mut bytes = vec![0; len as usize + 1];
    let mut handle = handle;
    let n = handle.read(&mut bytes).map_err(|e| unreadable(&e))?;
    if n == bytes.len() {
        return Err(LinkRefusal::Unreadable {
            file,
            why: "it changed while it was read".into(),
        });
    }
    bytes.truncate(n);
    Ok(Some(bytes))
}

// FIFOs and links are Unix ones; git runs here as the tests' own tool.
#[cfg(all(test, unix))]
mod tests {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// A repository `r` with a linked worktree `w`, laid out as git lays them out, in a canonical
    /// temp folder.
    /// Makes `wt` a linked worktree of the admin folder `admin` as git writes one: `wt/.git`
    /// naming `admin`, its `gitdir` back-link and `commondir`, absolute paths.
    fn link_worktree(wt: &Path, admin: &Path) {
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        let back = wt.join(".git");
        std::fs::write(admin.join("gitdir"), format!("{}\n", back.display())).unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    }

    struct Repo {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    impl Repo {
        fn new(relative: bool) -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let root = canonicalize(tmp.path()).unwrap();
            let admin = root.join("r/.git/worktrees/w");
            std::fs::create_dir_all(&admin).unwrap();
            std::fs::create_dir(root.join("w")).unwrap();
            if relative {
                std::fs::write(root.join("w/.git"), "gitdir: ../r/.git/worktrees/w\n").unwrap();
                std::fs::write(admin.join("gitdir"), "../../../../w/.git\n").unwrap();
                std::fs::write(admin.join("commondir"), "../..\n").unwrap();
            } else {
                link_worktree(&root.join("w"), &admin);
            }
            Self { _tmp: tmp, root }
        }

        fn path(&self, rel: &str) -> PathBuf {
            self.root.join(rel)
        }

        fn judge(&self, rel: &str) -> Option<GitLink> {
            let dir = self.path(rel);
            within_seconds(move || judge(&dir))
        }

        fn refusal(&self, rel: &str) -> LinkRefusal {
            match self.judge(rel) {
                Some(GitLink::Refused { why, .. }) => why,
                other => panic!("not refused: {other:?}"),
            }
        }
    }

    fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(f()).unwrap());
        rx.recv_timeout(Duration::from_secs(5))
            .expect("judging the .git file blocked")
    }

    #[test]
    fn a_worktree_git_made_is_one_both_ways() {
        for relative in [false, true] {
            let repo = Repo::new(relative);
            assert_eq!(
                repo.judge("w"),
                Some(GitLink::worktree(
                    repo.path("r/.git/worktrees/w"),
                    repo.path("r")
                )),
                "relative: {relative}"
            );
        }
    }

    #[test]
    fn a_repositorys_own_git_folder_is_no_link() {
        let repo = Repo::new(false);
        assert_eq!(repo.judge("r"), None);
        assert_eq!(repo.judge("nowhere"), None);
    }

    #[test]
    fn a_bare_repositorys_worktree_belongs_to_the_bare_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path()).unwrap();
        let admin = root.join("r.git/worktrees/w");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir(root.join("w")).unwrap();
        // Line ends and trailing blanks as some tools leave them.
        std::fs::write(
            root.join("w/.git"),
            format!("gitdir: {}\r\n", admin.display()),
        )
        .unwrap();
        std::fs::write(
            admin.join("gitdir"),
            format!("{}  \n", root.join("w/.git").display()),
        )
        .unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        assert_eq!(
            judge(&root.join("w")),
            Some(GitLink::worktree(admin, root.join("r.git")))
        );
    }

    #[test]
    fn a_separate_git_folder_is_told_from_a_bare_one_by_its_config() {
        let tmp = tempfile::tempdir().unwrap();
        let root = canonicalize(tmp.path()).unwrap();
        let common = root.join("gits/r.git");
        let admin = common.join("worktrees/w");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir(root.join("w")).unwrap();
        link_worktree(&root.join("w"), &admin);
        let separate = || match judge(&root.join("w")) {
            Some(GitLink::Worktree {
                repository,
                separate,
                ..
            }) => {
                assert_eq!(repository, common);
                separate
            }
            other => panic!("not a worktree: {other:?}"),
        };
        assert_eq!(separate(), None, "no config: bare");
        std::fs::write(common.join("config"), "[core]\n\tbare = false\n").unwrap();
        assert_eq!(separate(), Some(Separate::Unsettled));
        std::fs::write(common.join("config"), "[core]\n\tbare = true\n").unwrap();
        assert_eq!(separate(), None);

        // A config that is a FIFO is not waited on: bare, as unreadable.
        std::fs::remove_file(common.join("config")).unwrap();
        let c = CString::new(common.join("config").as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let w = root.join("w");
        assert!(matches!(
            within_seconds(move || judge(&w)),
            Some(GitLink::Worktree { separate: None, .. })
        ));
    }

    #[test]
    fn a_copy_of_the_git_file_elsewhere_is_refused_by_the_back_link() {
        let repo = Repo::new(false);
        std::fs::create_dir(repo.path("clone")).unwrap();
        std::fs::copy(repo.path("w/.git"), repo.path("clone/.git")).unwrap();
        assert_eq!(
            repo.refusal("clone"),
            LinkRefusal::BackLinkElsewhere(repo.path("w/.git"))
        );
    }

    #[test]
    fn a_back_link_naming_another_folder_is_refused() {
        let repo = Repo::new(false);
        std::fs::write(repo.path("r/.git/worktrees/w/gitdir"), "/elsewhere/.git\n").unwrap();
        assert_eq!(
            repo.refusal("w"),
            LinkRefusal::BackLinkElsewhere("/elsewhere/.git".into())
        );
    }

    #[test]
    fn a_missing_admin_folder_or_back_link_is_refused() {
        let repo = Repo::new(false);
        std::fs::remove_file(repo.path("r/.git/worktrees/w/gitdir")).unwrap();
        assert_eq!(
            repo.refusal("w"),
            LinkRefusal::NoBackLink(repo.path("r/.git/worktrees/w"))
        );
        std::fs::remove_dir_all(repo.path("r/.git/worktrees/w")).unwrap();
        assert_eq!(
            repo.refusal("w"),
            LinkRefusal::AdminMissing(repo.path("r/.git/worktrees/w"))
        );
    }

    #[test]
    fn a_commondir_naming_another_repository_is_refused() {
        let repo = Repo::new(false);
        std::fs::write(repo.path("r/.git/worktrees/w/commondir"), "/other/.git\n").unwrap();
        assert_eq!(
            repo.refusal("w"),
            LinkRefusal::CommonDirElsewhere("/other/.git".into())
        );
    }

    #[test]
    fn a_submodules_git_file_is_not_a_worktree() {
        let repo = Repo::new(false);
        std::fs::create_dir_all(repo.path("r/.git/modules/m")).unwrap();
        std::fs::create_dir(repo.path("m")).unwrap();
        std::fs::write(repo.path("m/.git"), "gitdir: ../r/.git/modules/m\n").unwrap();
        assert_eq!(
            repo.refusal("m"),
            LinkRefusal::NotInWorktrees(repo.path("r/.git/modules/m"))
        );
    }

    #[test]
    fn a_back_link_through_a_link_of_the_users_own_is_one_and_says_so() {
        let repo = Repo::new(false);
        assert!(!repo.judge("w").unwrap().through_link());
        symlink(repo.path("w"), repo.path("alias")).unwrap();
        std::fs::write(
            repo.path("r/.git/worktrees/w/gitdir"),
            format!("{}\n", repo.path("alias/.git").display()),
        )
        .unwrap();
        let link = repo.judge("w").unwrap();
        assert!(
            matches!(link, GitLink::Worktree { .. }) && link.through_link(),
            "{link:?}"
        );
    }

    #[test]
    fn an_admin_folder_reached_through_a_link_is_refused() {
        let repo = Repo::new(false);
        symlink(repo.path("r"), repo.path("alias")).unwrap();
        std::fs::write(repo.path("w/.git"), "gitdir: ../alias/.git/worktrees/w\n").unwrap();
        assert_eq!(
            repo.refusal("w"),
            LinkRefusal::AdminThroughLink(repo.path("alias/.git/worktrees/w"))
        );
    }

    #[test]
    fn a_git_file_that_is_a_link_a_fifo_or_huge_is_refused_without_blocking() {
        let repo = Repo::new(false);
        std::fs::create_dir(repo.path("l")).unwrap();
        symlink(repo.path("w/.git"), repo.path("l/.git")).unwrap();
        assert_eq!(repo.refusal("l"), LinkRefusal::Link);

        std::fs::create_dir(repo.path("f")).unwrap();
        let c = CString::new(repo.path("f/.git").as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            repo.refusal("f"),
            LinkRefusal::NotRegularFile {
                found: "a named pipe (FIFO)"
            }
        );

        std::fs::create_dir(repo.path("h")).unwrap();
        let mut huge = format!("gitdir: {}\n", repo.path("r/.git/worktrees/w").display());
        huge.push_str(&" ".repeat(MAX_GIT_FILE_BYTES));
        std::fs::write(repo.path("h/.git"), huge).unwrap();
        assert_eq!(repo.refusal("h"), LinkRefusal::TooLarge { file: DOT_GIT });
    }

    #[test]
    fn a_git_file_changed_after_the_walks_stat_is_refused() {
        let repo = Repo::new(false);
        let dot_git = repo.path("w/.git");
        let len = std::fs::metadata(&dot_git).unwrap().len();
        // It grew since the stat.
        assert!(matches!(
            judge_file(&repo.path("w"), &dot_git, len - 1),
            GitLink::Refused {
                why: LinkRefusal::Unreadable { file: DOT_GIT, .. },
                ..
            }
        ));
        // A folder or a link put in its place.
        std::fs::remove_file(&dot_git).unwrap();
        std::fs::create_dir(&dot_git).unwrap();
        assert!(matches!(
            judge_file(&repo.path("w"), &dot_git, len),
            GitLink::Refused {
                why: LinkRefusal::Unreadable { file: DOT_GIT, .. },
                ..
            }
        ));
        std::fs::remove_dir(&dot_git).unwrap();
        symlink(repo.path("r/.git/worktrees/w/gitdir"), &dot_git).unwrap();
        assert_eq!(
            judge_file(&repo.path("w"), &dot_git, len),
            GitLink::refused(LinkRefusal::Link)
        );
    }

    #[test]
    fn a_back_link_that_is_a_fifo_does_not_block() {
        let repo = Repo::new(false);
        let back = repo.path("r/.git/worktrees/w/gitdir");
        std::fs::remove_file(&back).unwrap();
        let c = CString::new(back.as_os_str().as_bytes()).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            repo.refusal("w"),
            LinkRefusal::Unreadable { file: "gitdir", .. }
        ));
    }

    #[test]
    fn malformed_git_files_are_refused() {
        let repo = Repo::new(false);
        for text in ["", "gitdir:\n", "gitdir: /a\ngitdir: /b\n", "ref: HEAD\n"] {
            std::fs::write(repo.path("w/.git"), text).unwrap();
            assert_eq!(
                repo.refusal("w"),
                LinkRefusal::Malformed { file: DOT_GIT },
                "{text:?}"
            );
        }
    }
}
