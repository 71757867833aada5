//! Linked git worktrees (docs/reference.md, "Roots, the walk and project files"): a folder whose
//! `.git` is a file `gitdir: X` is a linked worktree of repository R only when git's own records
//! agree both ways. The daemon reads those records (`cache::gitlink`) and hands the walk the
//! verdict, a [`GitLink`]; this module holds the verdict's types and the pure parts: how git's
//! one-line files are parsed, how a written path is joined, and where a folder of the worktree
//! stands in R.
//!
//! A worktree stands where R's folder stands for approval and for roots: the device approved the
//! repository, and a worktree is that repository checked out elsewhere (ADR 0047).

use std::path::{Component, Path, PathBuf};

use thiserror::Error;

/// The name of git's marker in a working tree.
pub const DOT_GIT: &str = ".git";
/// The back-link in a worktree's admin folder: the path of the worktree's `.git` file.
pub const BACK_LINK: &str = "gitdir";
/// The admin folder's pointer to the repository's common git folder.
pub const COMMON_DIR: &str = "commondir";
/// The folder of a common git folder that holds every linked worktree's admin folder.
pub const WORKTREES_DIR: &str = "worktrees";
/// Anything larger is refused unread: each of git's files holds one path.
pub const MAX_GIT_FILE_BYTES: usize = 8 * 1024;

/// What a `.git` file amounts to, as the daemon judged it against git's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitLink {
    /// git's records agree both ways: this folder is a linked worktree of `repository`.
    Worktree {
        /// The worktree's admin folder, `<common dir>/worktrees/<id>`.
        admin: PathBuf,
        /// R's folder: the common git folder's parent, or the common folder itself when bare.
        repository: PathBuf,
    },
    /// Not a linked worktree: the folder is judged as an ordinary one.
    Refused {
        /// The admin folder the `.git` file names, when it names one.
        admin: Option<PathBuf>,
        why: LinkRefusal,
    },
}

impl GitLink {
    /// The admin folder whose records the verdict rests on: a change there changes the verdict.
    pub fn admin(&self) -> Option<&Path> {
        match self {
            Self::Worktree { admin, .. } => Some(admin),
            Self::Refused { admin, .. } => admin.as_deref(),
        }
    }

    pub fn refused(why: LinkRefusal) -> Self {
        Self::Refused { admin: None, why }
    }
}

/// Why a `.git` file does not make its folder a linked worktree. Each message completes "not a
/// linked worktree: ...".
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LinkRefusal {
    #[error(".git is a link, which is not followed")]
    Link,
    #[error(".git is {found}, not a regular file")]
    NotRegularFile { found: &'static str },
    #[error("{file} is larger than {} KiB", MAX_GIT_FILE_BYTES / 1024)]
    TooLarge { file: &'static str },
    #[error("{file} cannot be read: {why}")]
    Unreadable { file: &'static str, why: String },
    #[error("{file} does not hold one line {}", expected(file))]
    Malformed { file: &'static str },
    #[error("its admin folder {} is missing", .0.display())]
    AdminMissing(PathBuf),
    #[error("the path to its admin folder {} goes through a link", .0.display())]
    AdminThroughLink(PathBuf),
    #[error("{} is not in a repository's worktrees folder (a submodule's .git looks like this)", .0.display())]
    NotInWorktrees(PathBuf),
    #[error("git's admin folder {} has no back-link ({BACK_LINK})", .0.display())]
    NoBackLink(PathBuf),
    #[error("git's back-link names {}, not this folder's .git", .0.display())]
    BackLinkElsewhere(PathBuf),
    #[error("git's {COMMON_DIR} names {}, not the repository holding the admin folder", .0.display())]
    CommonDirElsewhere(PathBuf),
}

fn expected(file: &str) -> &'static str {
    if file == DOT_GIT {
        "`gitdir: <path>`"
    } else {
        "naming a path"
    }
}

/// The path a `.git` file names: its one line `gitdir: <path>`, as git writes it (trailing
/// whitespace and a CRLF ending allowed, as git allows them).
pub fn parse_dot_git(bytes: &[u8]) -> Result<&str, LinkRefusal> {
    let line = one_line(bytes, DOT_GIT)?;
    match line.strip_prefix("gitdir:") {
        Some(path) if !path.trim_start().is_empty() => Ok(path.trim_start()),
        _ => Err(LinkRefusal::Malformed { file: DOT_GIT }),
    }
}

/// The path one of the admin folder's files (`gitdir`, `commondir`) names.
pub fn parse_record<'a>(bytes: &'a [u8], file: &'static str) -> Result<&'a str, LinkRefusal> {
    one_line(bytes, file)
}

/// The one non-empty line of `bytes`, trailing whitespace dropped.
fn one_line<'a>(bytes: &'a [u8], file: &'static str) -> Result<&'a str, LinkRefusal> {
    if bytes.len() > MAX_GIT_FILE_BYTES {
        return Err(LinkRefusal::TooLarge { file });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| LinkRefusal::Malformed { file })?;
    let line = text.trim_end();
    if line.is_empty() || line.contains(['\n', '\r', '\0']) {
        return Err(LinkRefusal::Malformed { file });
    }
    Ok(line)
}

/// `written` (absolute, or relative to `base` as git writes it with `worktree.useRelativePaths`)
/// with `.` and `..` taken lexically. `base` is canonical, so taking `..` lexically is what the
/// system would do unless `written` itself passes a link, which the daemon checks after.
pub fn join_written(base: &Path, written: &str) -> PathBuf {
    let path = Path::new(written);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The repository an admin folder `<common>/worktrees/<id>` belongs to: the common folder's
/// parent when the common folder is a `.git`, else (a bare repository) the common folder itself.
/// `None` when `admin` does not lie in a `worktrees` folder.
pub fn repository_of(admin: &Path) -> Option<(PathBuf, PathBuf)> {
    let worktrees = admin.parent()?;
    if worktrees.file_name()? != WORKTREES_DIR || admin.file_name().is_none() {
        return None;
    }
    let common = worktrees.parent()?;
    let repository = match common.file_name() {
        Some(name) if name == DOT_GIT => common.parent()?,
        Some(_) => common,
        None => return None,
    };
    Some((common.to_path_buf(), repository.to_path_buf()))
}

/// A folder of a walk that passed a linked worktree, and the repository it belongs to. It
/// borrows from the walk: resolution asks for it on every answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkedWorktree<'w> {
    /// The worktree's top folder (where its `.git` file is).
    pub top: &'w Path,
    /// R's folder.
    pub repository: &'w Path,
}

impl LinkedWorktree<'_> {
    /// Where `dir`, inside the worktree, stands in R: the same relative path beneath R's folder.
    /// `None` for a folder outside the worktree.
    pub fn counterpart(&self, dir: &Path) -> Option<PathBuf> {
        let rel = crate::pathutil::strip_prefix_normal(dir, self.top)?;
        Some(if rel.as_os_str().is_empty() {
            self.repository.to_path_buf()
        } else {
            self.repository.join(rel)
        })
    }

    /// The note an answer carries when it was approved through the repository.
    pub fn note(&self) -> String {
        const BEFORE: &str = "approved through the repository ";
        const AFTER: &str = " (this folder is one of its git worktrees)";
        let repository = self.repository.to_string_lossy();
        let mut note = String::with_capacity(BEFORE.len() + repository.len() + AFTER.len());
        note.push_str(BEFORE);
        note.push_str(&repository);
        note.push_str(AFTER);
        note
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::as_git_writes_it(b"gitdir: /r/.git/worktrees/a\n".as_slice(), "/r/.git/worktrees/a")]
    #[case::without_a_newline(b"gitdir: /r/.git/worktrees/a".as_slice(), "/r/.git/worktrees/a")]
    #[case::with_crlf(b"gitdir: /r/.git/worktrees/a\r\n".as_slice(), "/r/.git/worktrees/a")]
    #[case::with_trailing_spaces(b"gitdir: /r/.git/worktrees/a  \t\n".as_slice(), "/r/.git/worktrees/a")]
    #[case::relative(b"gitdir: ../r/.git/worktrees/a\n".as_slice(), "../r/.git/worktrees/a")]
    #[case::windows(b"gitdir: C:/src/r/.git/worktrees/a\r\n".as_slice(), "C:/src/r/.git/worktrees/a")]
    fn a_gitdir_line_names_its_path(#[case] bytes: &[u8], #[case] path: &str) {
        assert_eq!(parse_dot_git(bytes), Ok(path));
    }

    #[rstest]
    #[case::empty(b"".as_slice())]
    #[case::no_prefix(b"/r/.git/worktrees/a\n".as_slice())]
    #[case::no_path(b"gitdir: \n".as_slice())]
    #[case::two_lines(b"gitdir: /a\ngitdir: /b\n".as_slice())]
    #[case::a_nul(b"gitdir: /a\0b\n".as_slice())]
    #[case::not_utf8(b"gitdir: /\xff\n".as_slice())]
    fn a_malformed_git_file_is_refused(#[case] bytes: &[u8]) {
        assert_eq!(
            parse_dot_git(bytes),
            Err(LinkRefusal::Malformed { file: DOT_GIT })
        );
    }

    #[test]
    fn a_huge_git_file_is_refused_unparsed() {
        let mut bytes = b"gitdir: /a".to_vec();
        bytes.resize(MAX_GIT_FILE_BYTES + 1, b' ');
        assert_eq!(
            parse_dot_git(&bytes),
            Err(LinkRefusal::TooLarge { file: DOT_GIT })
        );
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::absolute("/w", "/r/.git/worktrees/a", "/r/.git/worktrees/a")]
    #[case::relative("/src/w", "../r/.git/worktrees/a", "/src/r/.git/worktrees/a")]
    #[case::dots_inside("/w", "/r/./x/../.git/worktrees/a", "/r/.git/worktrees/a")]
    #[case::above_the_root("/w", "../../../r", "/r")]
    fn a_written_path_is_joined_lexically(
        #[case] base: &str,
        #[case] written: &str,
        #[case] want: &str,
    ) {
        assert_eq!(join_written(Path::new(base), written), PathBuf::from(want));
    }

    #[cfg(unix)] // written with Unix paths
    #[rstest]
    #[case::a_normal_repository("/src/r/.git/worktrees/a", Some(("/src/r/.git", "/src/r")))]
    #[case::a_bare_repository("/srv/r.git/worktrees/a", Some(("/srv/r.git", "/srv/r.git")))]
    #[case::a_submodule("/src/r/.git/modules/a", None)]
    #[case::too_short("/worktrees", None)]
    fn the_repository_is_found_from_the_admin_folder(
        #[case] admin: &str,
        #[case] want: Option<(&str, &str)>,
    ) {
        assert_eq!(
            repository_of(Path::new(admin)),
            want.map(|(c, r)| (PathBuf::from(c), PathBuf::from(r)))
        );
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_folder_of_the_worktree_stands_at_the_same_place_in_the_repository() {
        let wt = LinkedWorktree {
            top: Path::new("/tmp/w"),
            repository: Path::new("/src/r"),
        };
        assert_eq!(wt.counterpart(Path::new("/tmp/w")), Some("/src/r".into()));
        assert_eq!(
            wt.counterpart(Path::new("/tmp/w/a/b")),
            Some("/src/r/a/b".into())
        );
        assert_eq!(wt.counterpart(Path::new("/tmp")), None);
        assert_eq!(wt.counterpart(Path::new("/tmp/w2")), None);
    }
}
