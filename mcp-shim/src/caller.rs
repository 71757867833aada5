//! Who the session is, as forwarded to the daemon: its directory and the
//! `BERTH_WORKSPACE` / `BERTH_EXTRA_HOME` pins (docs/reference.md, "Programs, files and
//! environment" and "Agent sessions").
//!
//! [`choose_dir`] owns the choice of the directory and does no I/O: the
//! environment and the filesystem come in as data and a probe, so its tests
//! pass fixed values.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use berth_proto::pb;

/// What a candidate directory turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// An existing directory.
    Dir,
    /// Nothing there.
    Missing,
    /// Something that is not a directory.
    NotDir,
    /// It could not be looked at; the error says why.
    Unreadable(String),
}

impl Probe {
    /// Looks at `path` on the filesystem (following links, as the daemon will).
    pub fn of(path: &Path) -> Probe {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Probe::Dir,
            Ok(_) => Probe::NotDir,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Probe::Missing,
            Err(e) => Probe::Unreadable(e.to_string()),
        }
    }
}

/// The directory chosen and the candidates passed over on the way, each a
/// sentence naming it and why (for a warning).
#[derive(Debug, PartialEq, Eq)]
pub struct Choice {
    /// The session's absolute directory, or why there is none.
    pub dir: Result<PathBuf, String>,
    /// The candidates skipped, in order.
    pub skipped: Vec<String>,
}

/// The session's directory: the first candidate that is an existing
/// directory, in the order given (`--cwd`, `BERTH_CWD`, `CLAUDE_PROJECT_DIR`),
/// else `here`, the process's working directory.
///
/// An empty candidate is no candidate. One that holds `${` is a registration
/// template its client left unexpanded (`${workspaceFolder}` taken
/// literally) and names no directory. A relative one is taken against
/// `here`. One that does not exist or is not a directory is passed over:
/// "first found" means found on this device, and a registration naming a
/// folder that is gone must not fail every tool call of the session.
pub fn choose_dir(
    candidates: &[(&str, OsString)],
    here: Result<PathBuf, String>,
    probe: impl Fn(&Path) -> Probe,
) -> Choice {
    let mut skipped = Vec::new();
    for (source, value) in candidates {
        if value.is_empty() {
            continue;
        }
        let shown = value.to_string_lossy();
        if unexpanded(value) {
            skipped.push(format!(
                "{source} is {shown:?}, an unexpanded template; ignoring it"
            ));
            continue;
        }
        let path = PathBuf::from(value);
        let path = if path.is_absolute() {
            path
        } else {
            match &here {
                Ok(here) => here.join(path),
                Err(e) => {
                    skipped.push(format!(
                        "{source} {shown:?} is relative and the working directory is unreadable ({e}); ignoring it"
                    ));
                    continue;
                }
            }
        };
        let why = match probe(&path) {
            Probe::Dir => {
                return Choice {
                    dir: Ok(path),
                    skipped,
                };
            }
            Probe::Missing => "does not exist".to_string(),
            Probe::NotDir => "is not a directory".to_string(),
            Probe::Unreadable(e) => format!("cannot be read ({e})"),
        };
        skipped.push(format!("{source} {} {why}; ignoring it", path.display()));
    }
    Choice {
        dir: here.map_err(|e| format!("cannot read the working directory: {e}")),
        skipped,
    }
}

/// A registration template left unexpanded by a client that does not know it.
fn unexpanded(p: &OsStr) -> bool {
    p.to_string_lossy().contains("${")
}

/// A non-empty environment variable.
pub fn env_os(key: &str) -> Option<OsString> {
    std::env::var_os(key).filter(|v| !v.is_empty())
}

/// The caller forwarded to the daemon: the directory [`choose_dir`] picks
/// from `--cwd`, `BERTH_CWD`, `CLAUDE_PROJECT_DIR` and the working
/// directory, and the `BERTH_WORKSPACE` / `BERTH_EXTRA_HOME` pins.
pub fn caller(cli_cwd: Option<PathBuf>) -> Result<pb::Caller, String> {
    let mut candidates: Vec<(&str, OsString)> = Vec::new();
    if let Some(c) = cli_cwd {
        candidates.push(("--cwd", c.into_os_string()));
    }
    for key in ["BERTH_CWD", "CLAUDE_PROJECT_DIR"] {
        if let Some(v) = env_os(key) {
            candidates.push((key, v));
        }
    }
    let here = std::env::current_dir().map_err(|e| e.to_string());
    let choice = choose_dir(&candidates, here, Probe::of);
    for skipped in &choice.skipped {
        tracing::warn!("{skipped}");
    }
    let dir = choice.dir?;
    tracing::debug!(dir = %dir.display(), "session directory");
    let utf8 = |v: OsString, what: &str| {
        v.into_string().map_err(|v| {
            format!(
                "{what} ({}) is not valid UTF-8; berth handles UTF-8 paths and names only",
                v.to_string_lossy()
            )
        })
    };
    Ok(pb::Caller {
        cwd: utf8(dir.into_os_string(), "the session's directory")?,
        env_workspace: env_os("BERTH_WORKSPACE")
            .map(|v| utf8(v, "BERTH_WORKSPACE"))
            .transpose()?
            .unwrap_or_default(),
        extra_home: env_os("BERTH_EXTRA_HOME")
            .map(|v| utf8(v, "BERTH_EXTRA_HOME"))
            .transpose()?
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A filesystem holding the directories `dirs` and the file `/srv/file`.
    fn fs(dirs: &'static [&'static str]) -> impl Fn(&Path) -> Probe {
        move |p| {
            if dirs.iter().any(|d| Path::new(d) == p) {
                Probe::Dir
            } else if p == Path::new("/srv/file") {
                Probe::NotDir
            } else if p.starts_with("/locked") {
                Probe::Unreadable("permission denied".into())
            } else {
                Probe::Missing
            }
        }
    }

    /// Chooses among `candidates` (in `--cwd`, `BERTH_CWD`,
    /// `CLAUDE_PROJECT_DIR` order) with the working directory `/here`, and
    /// checks the directory chosen and what each skip said.
    fn check(
        candidates: &[(&str, &str)],
        dirs: &'static [&'static str],
        expect: &str,
        skipped: &[&str],
    ) {
        let candidates: Vec<(&str, OsString)> = candidates
            .iter()
            .map(|(s, v)| (*s, OsString::from(v)))
            .collect();
        let got = choose_dir(&candidates, Ok(PathBuf::from("/here")), fs(dirs));
        assert_eq!(got.dir, Ok(PathBuf::from(expect)), "{candidates:?}");
        assert_eq!(got.skipped.len(), skipped.len(), "{:?}", got.skipped);
        for (said, needle) in got.skipped.iter().zip(skipped) {
            assert!(said.contains(needle), "{said:?} does not say {needle:?}");
        }
    }

    const A_B_C: &[(&str, &str)] = &[
        ("--cwd", "/a"),
        ("BERTH_CWD", "/b"),
        ("CLAUDE_PROJECT_DIR", "/c"),
    ];

    #[test]
    fn the_first_existing_candidate_wins_in_order() {
        check(A_B_C, &["/a", "/b", "/c"], "/a", &[]);
        check(&A_B_C[1..], &["/a", "/b", "/c"], "/b", &[]);
        check(&A_B_C[2..], &["/a", "/b", "/c"], "/c", &[]);
        check(&[], &["/a", "/b", "/c"], "/here", &[]);
    }

    #[test]
    fn a_candidate_that_does_not_exist_is_skipped_for_the_next() {
        check(A_B_C, &["/b", "/c"], "/b", &["--cwd /a does not exist"]);
        check(
            A_B_C,
            &["/c"],
            "/c",
            &["--cwd /a does not exist", "BERTH_CWD /b does not exist"],
        );
    }

    #[test]
    fn with_no_candidate_left_the_working_directory_is_the_session_directory() {
        check(
            A_B_C,
            &[],
            "/here",
            &[
                "--cwd /a does not exist",
                "BERTH_CWD /b does not exist",
                "CLAUDE_PROJECT_DIR /c does not exist",
            ],
        );
    }

    #[test]
    fn a_file_or_an_unreadable_path_is_skipped_and_named() {
        check(
            &[("--cwd", "/srv/file"), ("BERTH_CWD", "/locked/x")],
            &[],
            "/here",
            &[
                "--cwd /srv/file is not a directory",
                "BERTH_CWD /locked/x cannot be read (permission denied)",
            ],
        );
    }

    #[test]
    fn empty_values_are_no_candidates_and_templates_are_skipped() {
        check(
            &[
                ("--cwd", ""),
                ("BERTH_CWD", "${workspaceFolder}"),
                ("CLAUDE_PROJECT_DIR", "/c"),
            ],
            &["/c"],
            "/c",
            &["BERTH_CWD is \"${workspaceFolder}\", an unexpanded template"],
        );
    }

    // Unix paths: on Windows `/a` is relative and a join adds `\`.
    #[cfg(unix)]
    #[test]
    fn a_relative_candidate_is_taken_against_the_working_directory() {
        check(&[("--cwd", "b")], &["/here/b"], "/here/b", &[]);
        check(
            &[("--cwd", "gone")],
            &[],
            "/here",
            &["--cwd /here/gone does not exist"],
        );
    }

    // Unix paths: on Windows `/a` is relative and a join adds `\`.
    #[cfg(unix)]
    #[test]
    fn an_unreadable_working_directory_fails_only_when_nothing_else_is_found() {
        let c = [
            ("--cwd", OsString::from("/a")),
            ("BERTH_CWD", OsString::from("rel")),
        ];
        let got = choose_dir(&c, Err("gone".into()), fs(&["/a"]));
        assert_eq!(got.dir, Ok(PathBuf::from("/a")));
        let got = choose_dir(&c, Err("gone".into()), fs(&[]));
        assert_eq!(
            got.dir,
            Err("cannot read the working directory: gone".to_string())
        );
        assert!(got.skipped[1].contains("relative"), "{:?}", got.skipped);
    }
}
