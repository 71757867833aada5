//! The invariants the fuzz targets (`fuzz/fuzz_targets/`) assert, shared
//! with the stable corpus replay (`fuzz/checks/tests/corpus.rs`) so that CI
//! checks every checked-in corpus file against exactly what the fuzzer
//! checks. Each `check_*` takes arbitrary bytes and panics when an
//! invariant breaks; returning means the input was handled correctly.
//!
//! A crate of its own so that these oracles are never compiled into berthd,
//! and the fuzz build needs only the pure core.

#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use berth_core::homeguard::{GuardCtx, SYSTEM_FOLDERS, check_home_lexical};
use berth_core::names::check_workspace_name;
use berth_core::pathutil::is_within;
use berth_core::project_file::{MAX_PROJECT_FILE_BYTES, parse_project_file};
use berth_core::qualify::{Own, Place, QualifyCtx, Target, qualify};

/// The project-file parser (docs/reference.md, "Roots, the walk and project files") never panics;
/// what it accepts is a valid workspace name from a file no larger than the limit; every refusal
/// has a message.
pub fn check_project_file(bytes: &[u8]) {
    match parse_project_file(bytes) {
        Ok(name) => {
            assert!(
                bytes.len() <= MAX_PROJECT_FILE_BYTES,
                "accepted a file of {} bytes",
                bytes.len()
            );
            assert!(
                check_workspace_name(&name).is_ok(),
                "accepted an invalid workspace name {name:?}"
            );
        }
        Err(e) => assert!(!e.to_string().is_empty(), "a refusal without a message"),
    }
}

/// The fixed world the qualifier is fuzzed in: three workspaces, one of
/// them with a local home nested inside another's, and a scratch folder.
fn qualify_world() -> (Vec<String>, Vec<(String, PathBuf)>, PathBuf) {
    let names = vec!["default".to_string(), "notes".into(), "work".into()];
    let homes = vec![
        (
            "default".to_string(),
            PathBuf::from("/d/workspaces/default"),
        ),
        ("notes".into(), PathBuf::from("/d/workspaces/notes")),
        // A local home inside another workspace's home: the most specific wins.
        ("work".into(), PathBuf::from("/d/workspaces/notes/work")),
    ];
    (names, homes, PathBuf::from("/d/scratch/0123456789abcdef"))
}

/// `path` with `.` dropped and `..` applied, lexically; `None` when `..`
/// would climb past the root.
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// The path qualifier (docs/reference.md, "Qualified paths and file tools"), for each kind of
/// session folder:
/// - a `Target::In` has a relative path of plain segments only: no `..`,
///   no root, no `.`;
/// - a named home is a workspace that exists;
/// - an absolute input is accepted only inside a home or the scratch
///   folder, and the answer names the same file (folder + rel = the input,
///   normalised);
/// - the qualified spelling, quoted back, names the same target.
pub fn check_qualify(bytes: &[u8]) {
    let Ok(path) = std::str::from_utf8(bytes) else {
        // Tool arguments arrive as JSON strings: always UTF-8.
        return;
    };
    let (names, homes, scratch) = qualify_world();
    for own in [Own::Home("notes".into()), Own::Scratch, Own::Ambiguous] {
        // Only a session without a project has a scratch folder.
        let scratch = (own == Own::Scratch).then_some(scratch.as_path());
        let ctx = QualifyCtx {
            names: &names,
            homes: &homes,
            own: own.clone(),
            scratch,
        };
        let Ok(target) = qualify(path, &ctx) else {
            continue;
        };
        let Target::In { place, rel } = &target else {
            continue;
        };
        assert!(
            rel.is_relative(),
            "{path:?} ({own:?}): rel {rel:?} is absolute"
        );
        for c in rel.components() {
            assert!(
                matches!(c, Component::Normal(_)),
                "{path:?} ({own:?}): rel {rel:?} has a {c:?} component"
            );
        }
        let folder = match place {
            Place::Home(ws) => {
                assert!(
                    names.contains(ws),
                    "{path:?} ({own:?}): no workspace {ws:?}"
                );
                homes
                    .iter()
                    .find(|(n, _)| n == ws)
                    .map(|(_, h)| h.clone())
                    .expect("every workspace has a home")
            }
            Place::Scratch => scratch
                .unwrap_or_else(|| panic!("{path:?} ({own:?}): a scratch place without scratch"))
                .to_path_buf(),
        };
        if Path::new(path).is_absolute() {
            let norm = lexical(Path::new(path))
                .unwrap_or_else(|| panic!("{path:?} ({own:?}): accepted a path above the root"));
            let inside_some = homes.iter().map(|(_, h)| h.as_path()).chain(scratch);
            assert!(
                inside_some.into_iter().any(|f| is_within(&norm, f)),
                "{path:?} ({own:?}): accepted an absolute path outside every home and the scratch folder"
            );
            assert_eq!(
                folder.join(rel),
                norm,
                "{path:?} ({own:?}): the answer names another file"
            );
        }
        let again = qualify(&target.qualified(), &ctx).unwrap_or_else(|e| {
            panic!(
                "{path:?} ({own:?}): its qualified form {:?} is refused: {e}",
                target.qualified()
            )
        });
        assert_eq!(
            again,
            target,
            "{path:?} ({own:?}): its qualified form {:?} names something else",
            target.qualified()
        );
    }
}

/// The fixed environment the home guard is fuzzed in.
fn guard_world() -> GuardCtx {
    GuardCtx {
        homes: vec![PathBuf::from("/home/u"), PathBuf::from("/var/home/v")],
        temp_dir: PathBuf::from("/tmp"),
        data_dir: PathBuf::from("/home/u/.local/share/berth"),
    }
}

/// The lexical home guard (docs/reference.md, "Workspaces and homes"): an accepted path is
/// absolute, has no `..`, is not `/`, is neither a home nor an ancestor of one, does not
/// overlap the data dir, and lies in a system folder only inside a home or
/// the temporary folder. Bytes are taken as a Unix path as they are, so
/// non-UTF-8 paths are covered too.
pub fn check_home(bytes: &[u8]) {
    #[cfg(unix)]
    let path = Path::new(std::ffi::OsStr::from_bytes(bytes));
    // A Windows path is Unicode text: other bytes name no folder there.
    #[cfg(not(unix))]
    let Ok(path) = std::str::from_utf8(bytes).map(Path::new) else {
        return;
    };
    let ctx = guard_world();
    match check_home_lexical(path, &ctx) {
        Err(e) => assert!(!e.to_string().is_empty(), "a refusal without a message"),
        Ok(()) => {
            assert!(path.is_absolute(), "accepted relative {path:?}");
            assert!(
                !path.components().any(|c| c == Component::ParentDir),
                "accepted {path:?} with a `..`"
            );
            let norm = lexical(path).expect("no `..`, so never above the root");
            assert_ne!(norm, Path::new("/"), "accepted the root as {path:?}");
            for home in &ctx.homes {
                assert!(
                    !is_within(home, &norm),
                    "accepted {path:?}, which is or contains the home {home:?}"
                );
            }
            assert!(
                !is_within(&norm, &ctx.data_dir) && !is_within(&ctx.data_dir, &norm),
                "accepted {path:?}, which overlaps the data dir"
            );
            let in_system = SYSTEM_FOLDERS
                .iter()
                .any(|s| is_within(&norm, Path::new(s)));
            let exempt = ctx
                .homes
                .iter()
                .chain(std::iter::once(&ctx.temp_dir))
                .any(|p| is_within(&norm, p));
            assert!(
                !in_system || exempt,
                "accepted {path:?} inside a system folder"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::a_valid_file(br#"{"workspace": "notes"}"#)]
    #[case::garbage(b"\xff\xfe{")]
    #[case::an_array(b"[1,2]")]
    fn project_files_hold(#[case] bytes: &[u8]) {
        check_project_file(bytes);
    }

    #[rstest]
    #[case::unqualified("a/b.md")]
    #[case::qualified("work/x")]
    #[case::dotdot_inside("notes/a/../b")]
    #[case::dotdot_past_the_top("notes/../../etc/passwd")]
    #[case::absolute_in_a_nested_home("/d/workspaces/notes/work/x")]
    #[case::absolute_outside("/etc/passwd")]
    #[case::absolute_climbing_out("/d/workspaces/notes/../../../etc")]
    #[case::scratch("./x/./y")]
    #[case::the_list("///")]
    fn qualify_holds(#[case] path: &str) {
        check_qualify(path.as_bytes());
    }

    #[rstest]
    #[case::a_folder_in_the_home(b"/home/u/notes")]
    #[case::the_root(b"/")]
    #[case::dotdot(b"/home/u/../../etc")]
    #[case::system(b"/usr/share/x")]
    #[case::a_home_under_var(b"/var/home/v/n")]
    #[case::non_utf8(b"/home/u/\xff")]
    #[case::relative(b"rel")]
    fn home_guard_holds(#[case] bytes: &[u8]) {
        check_home(bytes);
    }
}
