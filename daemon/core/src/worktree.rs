//! Linked git worktrees (docs/reference.md, "Roots, the walk and project files"): a folder whose
//! `.git` is a file `gitdir: X` is a linked worktree of repository R only when git's own records
//! agree both ways. The daemon reads those records (`cache::gitlink`) and hands the walk the
//! verdict, a [`GitLink`]; this module holds the verdict's types and the pure parts: how git's
//! one-line files are parsed, how a written path is joined, and where a folder of the worktree
//! stands in R.
//!
//! A worktree stands where R's folder stands for approval and for roots: the device approved the
//! repository, and a worktree is that repository checked out elsewhere (ADR 0047).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

use crate::fsview::{FsView, WalkStep, look_along};
use crate::registry::Registry;

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
/// The common git folder's configuration, read for `core.bare` when the folder is not a `.git`.
pub const CONFIG: &str = "config";
/// A larger configuration is not read, and the git folder is taken as bare.
pub const MAX_GIT_CONFIG_BYTES: usize = 64 * 1024;
/// A separate git folder's checkout is looked for among at most this many roots; with more, the
/// git folder is taken as bare (a look at each root is a fill of the lookup cache).
pub const MAX_CHECKOUT_ROOTS: usize = 256;

/// What a `.git` file amounts to, as the daemon judged it against git's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitLink {
    /// git's records agree both ways: this folder is a linked worktree of `repository`.
    Worktree {
        /// The worktree's admin folder, `<common dir>/worktrees/<id>`.
        admin: PathBuf,
        /// R's folder: the common git folder's parent, or the common folder itself when bare,
        /// or, for a separate git folder, the checkout [`settle`] found.
        repository: PathBuf,
        /// `Some` when the common folder is a separate git folder (`--separate-git-dir`): not a
        /// `.git`, and its `core.bare` is false.
        separate: Option<Separate>,
        /// git's records name this `.git` or the common folder only through a symbolic link:
        /// where the link leads is not watched, so the verdict is never cached.
        through_link: bool,
    },
    /// Not a linked worktree: the folder is judged as an ordinary one.
    Refused {
        /// The admin folder the `.git` file names, when it names one.
        admin: Option<PathBuf>,
        why: LinkRefusal,
    },
}

impl GitLink {
    /// A linked worktree of a `.git` or bare repository.
    pub fn worktree(admin: impl Into<PathBuf>, repository: impl Into<PathBuf>) -> Self {
        Self::Worktree {
            admin: admin.into(),
            repository: repository.into(),
            separate: None,
            through_link: false,
        }
    }

    /// Whether the verdict rests on where a symbolic link leads (see `through_link`).
    pub fn through_link(&self) -> bool {
        matches!(
            self,
            Self::Worktree {
                through_link: true,
                ..
            }
        )
    }

    /// Whether a link made or turned outside the folder and its admin folder can change the
    /// verdict: a worktree confirmed through a link, and a record naming another path, which
    /// leads here as soon as a link on that path does.
    pub fn rests_on_links(&self) -> bool {
        self.through_link()
            || matches!(
                self,
                Self::Refused {
                    why: LinkRefusal::BackLinkElsewhere(_) | LinkRefusal::CommonDirElsewhere(_),
                    ..
                }
            )
    }

    /// The git folder a checkout's `.git` file names itself, as `git init --separate-git-dir`
    /// writes it (and a submodule's does): the main checkout's side of a separate git folder.
    pub fn names_git_folder(&self) -> Option<&Path> {
        match self {
            Self::Refused {
                admin: Some(folder),
                why: LinkRefusal::NotInWorktrees(_),
            } => Some(folder),
            _ => None,
        }
    }

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

/// How R was found for a worktree of a separate git folder. git records the way from the
/// main checkout to the git folder (its `.git` file) and nothing back, so R is the root whose
/// own `.git` file names the git folder, when exactly one root's does (ADR 0047).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Separate {
    /// Not looked for yet: R is the git folder itself, as for a bare repository.
    Unsettled,
    /// R is the one root whose `.git` file names `common`.
    Checkout { common: PathBuf },
    /// No root's `.git` file names the git folder (`roots` empty), or several do: R stays the
    /// git folder itself.
    Unfound { roots: Vec<PathBuf> },
    /// Too many roots to look among: R stays the git folder itself.
    TooManyRoots,
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
    #[error("{} is not in a repository's worktrees folder (a submodule's .git, or a checkout's of a separate git folder, looks like this)", .0.display())]
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
    // As git writes it: absolute, with nothing to take. One copy, no walk over the components
    // (the verification joins three such paths on every uncached look at a worktree). Not on
    // Windows, where the walk also turns git's `/` into `\`.
    if cfg!(not(windows))
        && path.is_absolute()
        && !crate::pathutil::has_dotdot(path)
        && matches!(
            crate::pathutil::normalized(path),
            std::borrow::Cow::Borrowed(_)
        )
    {
        return path.to_path_buf();
    }
    // `commondir` as git writes it, `../..`: an ancestor of `base`, found without a walk.
    let up = written.trim_end_matches('/');
    if !up.is_empty() && up.split('/').all(|segment| segment == "..") {
        let levels = up.split('/').count();
        return base
            .ancestors()
            .nth(levels)
            .or_else(|| base.ancestors().last())
            .unwrap_or(base)
            .to_path_buf();
    }
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

/// Whether a common git folder's configuration says it has a working tree: `core.bare` set to
/// false, as `git init --separate-git-dir` writes it. Read as git writes the file; anything it
/// cannot be sure of (no `core.bare`, a value it does not know, an include that might set it
/// again) says bare, which keeps the git folder as R.
pub fn config_says_checkout(bytes: &[u8]) -> bool {
    if bytes.len() > MAX_GIT_CONFIG_BYTES {
        return false;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let mut in_core = false;
    let mut bare = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let Some((name, _)) = header.split_once(']') else {
                return false;
            };
            let name = name.trim();
            if name.to_ascii_lowercase().starts_with("include") {
                return false;
            }
            in_core = name.eq_ignore_ascii_case("core");
            continue;
        }
        if !in_core {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (line, None),
        };
        if key.eq_ignore_ascii_case("bare") {
            bare = match value.map(|v| v.split([' ', '\t', '#', ';']).next().unwrap_or("")) {
                None => Some(true),
                Some(v)
                    if ["false", "no", "off", "0"]
                        .iter()
                        .any(|f| v.eq_ignore_ascii_case(f)) =>
                {
                    Some(false)
                }
                Some(v)
                    if ["true", "yes", "on", "1"]
                        .iter()
                        .any(|t| v.eq_ignore_ascii_case(t)) =>
                {
                    Some(true)
                }
                Some(_) => return false,
            };
        }
    }
    bare == Some(false)
}

/// The separate git folder whose checkout the walk's linked worktree still needs: the nearest
/// `.git` on the walk, when it is a worktree of a separate git folder not yet settled.
pub fn unsettled(walk: &[WalkStep]) -> Option<&Path> {
    let step = walk.iter().find(|s| s.look.git)?;
    match step.look.link.as_deref() {
        Some(GitLink::Worktree {
            repository,
            separate: Some(Separate::Unsettled),
            ..
        }) => Some(repository),
        _ => None,
    }
}

/// The folders [`settle`] looks at: every root once, or `None` when there are too many.
pub fn checkout_candidates(registry: &Registry) -> Option<Vec<PathBuf>> {
    let roots: BTreeSet<&Path> = registry.roots.iter().map(|r| r.path.as_path()).collect();
    (roots.len() <= MAX_CHECKOUT_ROOTS).then(|| roots.into_iter().map(Path::to_path_buf).collect())
}

/// Settles the walk's worktree of a separate git folder: R is the one root whose own `.git`
/// file names that git folder. `roots` holds the looks of [`checkout_candidates`] (`None`: too
/// many). Neither direction alone is trusted: git's records tie the worktree to the git folder,
/// the root's `.git` file ties the root to it, and the root is the user's approval; two roots
/// naming it are a conflict no one wins (ADR 0047).
pub fn settle_with(walk: &mut [WalkStep], roots: Option<&[WalkStep]>) {
    let Some(common) = unsettled(walk).map(Path::to_path_buf) else {
        return;
    };
    let Some(step) = walk.iter_mut().find(|s| s.look.git) else {
        return;
    };
    let Some(GitLink::Worktree {
        admin,
        through_link,
        ..
    }) = step.look.link.as_deref()
    else {
        return;
    };
    let (admin, through_link) = (admin.clone(), *through_link);
    let (repository, separate) = match roots {
        None => (common, Separate::TooManyRoots),
        Some(roots) => {
            let naming: Vec<PathBuf> = roots
                .iter()
                .filter(|r| {
                    r.look
                        .link
                        .as_deref()
                        .and_then(GitLink::names_git_folder)
                        .is_some_and(|named| same_folder(named, &common))
                })
                .map(|r| r.dir.clone())
                .collect();
            match <[PathBuf; 1]>::try_from(naming) {
                Ok([checkout]) => (checkout, Separate::Checkout { common }),
                Err(roots) => (common, Separate::Unfound { roots }),
            }
        }
    };
    step.look.link = Some(Arc::new(GitLink::Worktree {
        admin,
        repository,
        separate: Some(separate),
        through_link,
    }));
}

/// [`settle_with`], looking at the roots through `fs`.
pub fn settle<F: FsView + ?Sized>(fs: &F, registry: &Registry, walk: &mut [WalkStep]) {
    if unsettled(walk).is_none() {
        return;
    }
    let roots = checkout_candidates(registry).map(|dirs| look_along(fs, dirs));
    settle_with(walk, roots.as_deref());
}

/// Two spellings of one folder as git writes them: on Windows, names without regard to case and
/// either slash.
fn same_folder(a: &Path, b: &Path) -> bool {
    if cfg!(windows) {
        a.to_string_lossy().to_lowercase().replace('\\', "/")
            == b.to_string_lossy().to_lowercase().replace('\\', "/")
    } else {
        a == b
    }
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
    fn a_record_naming_another_path_rests_on_links_as_a_worktree_through_one_does() {
        let admin = || Some(PathBuf::from("/r/.git/worktrees/w"));
        let refused = |why| GitLink::Refused {
            admin: admin(),
            why,
        };
        assert!(refused(LinkRefusal::BackLinkElsewhere("/x/.git".into())).rests_on_links());
        assert!(refused(LinkRefusal::CommonDirElsewhere("/x/.git".into())).rests_on_links());
        assert!(!refused(LinkRefusal::NoBackLink("/r/.git/worktrees/w".into())).rests_on_links());
        let mut worktree = GitLink::worktree("/r/.git/worktrees/w", "/r");
        assert!(!worktree.rests_on_links());
        if let GitLink::Worktree { through_link, .. } = &mut worktree {
            *through_link = true;
        }
        assert!(worktree.rests_on_links());
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
    #[case::already_plain("/w", "/r/.git/worktrees/a", "/r/.git/worktrees/a")]
    #[case::up_twice("/r/.git/worktrees/a", "../..", "/r/.git")]
    #[case::up_with_a_slash("/r/.git/worktrees/a", "../../", "/r/.git")]
    #[case::up_past_the_root("/r", "../../..", "/")]
    #[case::doubled_slashes("/w", "/r//.git/worktrees/a/", "/r/.git/worktrees/a")]
    #[case::a_dot_dot_at_the_end("/w", "/r/.git/worktrees/a/..", "/r/.git/worktrees")]
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

    #[rstest]
    #[case::as_git_init_writes_it(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
        true
    )]
    #[case::spelled_otherwise("[Core]\n  BARE=no ; git's comment\n", true)]
    #[case::the_last_one_counts("[core]\n\tbare = true\n[core]\n\tbare = off\n", true)]
    #[case::bare("[core]\n\tbare = true\n", false)]
    #[case::a_key_alone_is_true("[core]\n\tbare\n", false)]
    #[case::unset("[core]\n\tfilemode = true\n", false)]
    #[case::in_another_section("[remote \"core\"]\n\tbare = false\n", false)]
    #[case::an_unknown_value("[core]\n\tbare = maybe\n", false)]
    #[case::an_include_may_set_it_again("[core]\n\tbare = false\n[include]\n\tpath = x\n", false)]
    #[case::a_conditional_include(
        "[includeIf \"gitdir:/x\"]\n\tpath = y\n[core]\n\tbare = false\n",
        false
    )]
    #[case::a_broken_header("[core\n\tbare = false\n", false)]
    #[case::empty("", false)]
    fn a_common_folders_config_says_whether_it_has_a_checkout(
        #[case] text: &str,
        #[case] checkout: bool,
    ) {
        assert_eq!(config_says_checkout(text.as_bytes()), checkout, "{text:?}");
    }

    #[test]
    fn a_config_that_is_not_text_or_too_large_says_bare() {
        assert!(!config_says_checkout(b"[core]\n\tbare = false\n\xff\n"));
        let mut big = b"[core]\n\tbare = false\n".to_vec();
        big.resize(MAX_GIT_CONFIG_BYTES + 1, b'\n');
        assert!(!config_says_checkout(&big));
    }

    /// A checkout made with `git init --separate-git-dir /home/u/.gits/shop.git /home/u/src/shop`
    /// and its worktree `/srv/feat`, as the daemon's look gives them.
    #[cfg(unix)] // written with Unix paths
    mod separate {
        use super::*;
        use crate::fsview::DirLook;
        use crate::memfs::MemFs;
        use crate::registry::fixtures::registry;
        use crate::resolve::testing::facts;
        use crate::resolve::{Mode, Reason, resolve};

        const GITS: &str = "/home/u/.gits/shop.git";
        const CHECKOUT: &str = "/home/u/src/shop";
        const FEAT: &str = "/srv/feat";

        fn worktree() -> GitLink {
            GitLink::Worktree {
                admin: format!("{GITS}/worktrees/feat").into(),
                repository: GITS.into(),
                separate: Some(Separate::Unsettled),
                through_link: false,
            }
        }

        /// A `.git` file naming `folder` directly, as a main checkout's does.
        fn naming(folder: &str) -> DirLook {
            DirLook::git().with_link(GitLink::Refused {
                admin: Some(folder.into()),
                why: LinkRefusal::NotInWorktrees(folder.into()),
            })
        }

        fn world(roots: &[(&str, &str)]) -> Registry {
            registry(&["default", "shop", "oss"], "default", roots)
        }

        /// The world's files: the worktree (with a project file naming `file` if given), the
        /// checkout, and `more`.
        fn files(file: Option<&str>, more: &[(&str, DirLook)]) -> MemFs {
            let top = match file {
                Some(w) => DirLook::file(w).with_link(worktree()),
                None => DirLook::git().with_link(worktree()),
            };
            let mut fs = MemFs::new([(FEAT, top), (CHECKOUT, naming(GITS))]);
            for (dir, look) in more {
                fs.insert(*dir, look.clone());
            }
            fs
        }

        /// The link of `dir`'s walk once settled against the roots.
        fn settled(dir: &str, fs: &MemFs, reg: &Registry) -> (GitLink, crate::resolve::Answer) {
            let mut f = facts(dir, fs, reg, Mode::Agent);
            settle(fs, reg, &mut f.walk);
            let link = f
                .walk
                .iter()
                .find(|s| s.look.git)
                .unwrap()
                .look
                .link
                .clone();
            ((*link.unwrap()).clone(), resolve(&f).unwrap())
        }

        fn note(repository: &str) -> String {
            format!(
                "approved through the repository {repository} (this folder is one of its git worktrees)"
            )
        }

        #[test]
        fn the_root_whose_git_file_names_the_git_folder_is_the_repository() {
            let reg = world(&[("shop", CHECKOUT), ("oss", "/home/u/oss")]);
            let (link, a) = settled(&format!("{FEAT}/src"), &files(None, &[]), &reg);
            assert_eq!(
                link,
                GitLink::Worktree {
                    admin: format!("{GITS}/worktrees/feat").into(),
                    repository: CHECKOUT.into(),
                    separate: Some(Separate::Checkout {
                        common: GITS.into()
                    }),
                    through_link: false,
                }
            );
            assert_eq!((a.workspace.as_str(), a.reason), ("shop", Reason::Root));
            assert_eq!(a.notes, vec![note(CHECKOUT)]);

            let (_, a) = settled(FEAT, &files(Some("shop"), &[]), &reg);
            assert_eq!(
                (a.workspace.as_str(), a.reason),
                ("shop", Reason::ProjectFile)
            );
            assert_eq!(a.notes, vec![note(CHECKOUT)]);
        }

        #[test]
        fn settling_twice_changes_nothing_and_an_ordinary_worktree_is_left_alone() {
            let reg = world(&[("shop", CHECKOUT)]);
            let fs = files(None, &[]);
            let mut f = facts(FEAT, &fs, &reg, Mode::Agent);
            settle(&fs, &reg, &mut f.walk);
            let once = f.walk.clone();
            settle(&MemFs::default(), &reg, &mut f.walk);
            assert_eq!(f.walk, once);

            let plain = GitLink::worktree("/home/u/src/shop/.git/worktrees/feat", CHECKOUT);
            let fs = MemFs::new([(FEAT, DirLook::git().with_link(plain.clone()))]);
            let mut f = facts(FEAT, &fs, &reg, Mode::Agent);
            settle(&fs, &reg, &mut f.walk);
            assert_eq!(f.walk[0].look.link.as_deref(), Some(&plain));
        }

        #[test]
        fn a_checkout_no_root_names_leaves_the_git_folder_as_the_repository() {
            // The checkout is inside a root, but is no root itself: it is not looked for.
            let reg = world(&[("shop", "/home/u/src")]);
            let (link, a) = settled(FEAT, &files(Some("shop"), &[]), &reg);
            assert!(matches!(
                link,
                GitLink::Worktree { ref repository, separate: Some(Separate::Unfound { ref roots }), .. }
                    if repository == Path::new(GITS) && roots.is_empty()
            ));
            assert_eq!(
                (a.workspace.as_str(), a.reason),
                ("default", Reason::Active)
            );
            assert_eq!(a.proposal.as_deref(), Some("shop"));
        }

        #[test]
        fn a_git_file_elsewhere_naming_the_git_folder_does_not_become_the_repository() {
            // Not a root: never looked at.
            let forged = [("/home/u/dl/evil", naming(GITS))];
            let reg = world(&[("shop", CHECKOUT), ("oss", "/home/u/oss")]);
            let (_, a) = settled(FEAT, &files(None, &forged), &reg);
            assert_eq!((a.workspace.as_str(), a.reason), ("shop", Reason::Root));

            // A root of another workspace naming it too: neither is taken.
            let forged = [("/home/u/oss", naming(GITS))];
            let (link, a) = settled(FEAT, &files(Some("oss"), &forged), &reg);
            assert!(matches!(
                link,
                GitLink::Worktree { ref repository, separate: Some(Separate::Unfound { ref roots }), .. }
                    if repository == Path::new(GITS) && roots.len() == 2
            ));
            assert_eq!(
                (a.workspace.as_str(), a.reason),
                ("default", Reason::Active)
            );
            assert_eq!(a.proposal.as_deref(), Some("oss"));

            // The only root naming it is the forger's: the real checkout is no root.
            let reg = world(&[("shop", "/home/u/src"), ("oss", "/home/u/oss")]);
            let (link, _) = settled(FEAT, &files(None, &forged), &reg);
            assert!(
                matches!(link, GitLink::Worktree { ref repository, .. } if repository == Path::new("/home/u/oss"))
            );
        }

        #[test]
        fn a_root_naming_another_git_folder_or_a_worktree_is_no_checkout() {
            let others = [
                ("/home/u/a", naming("/home/u/.gits/other.git")),
                (
                    "/home/u/b",
                    DirLook::git()
                        .with_link(GitLink::worktree(format!("{GITS}/worktrees/b"), GITS)),
                ),
                ("/home/u/c", DirLook::git()),
            ];
            let reg = world(&[
                ("shop", "/home/u/a"),
                ("shop", "/home/u/b"),
                ("shop", "/home/u/c"),
            ]);
            let (link, _) = settled(FEAT, &files(None, &others), &reg);
            assert!(matches!(
                link,
                GitLink::Worktree { separate: Some(Separate::Unfound { ref roots }), .. } if roots.is_empty()
            ));
        }

        #[test]
        fn too_many_roots_are_not_looked_among() {
            let many: Vec<(String, String)> = (0..=MAX_CHECKOUT_ROOTS)
                .map(|i| ("oss".to_owned(), format!("/home/u/r{i}")))
                .collect();
            let mut roots: Vec<(&str, &str)> =
                many.iter().map(|(w, p)| (w.as_str(), p.as_str())).collect();
            roots.push(("shop", CHECKOUT));
            let (link, a) = settled(FEAT, &files(None, &[]), &world(&roots));
            assert!(matches!(
                link,
                GitLink::Worktree {
                    separate: Some(Separate::TooManyRoots),
                    ..
                }
            ));
            assert_eq!(a.reason, Reason::Active);
        }
    }
}
