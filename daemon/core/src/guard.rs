//! The native-tool guard's rule (docs/reference.md, "The native-tool guard"): whether a file
//! that a client's own write tool would create, change, move or delete lies in another
//! workspace's folders. Pure: the daemon gathers the session's places, the other workspaces'
//! claims and each target already made absolute and link-resolved; this decides.
//!
//! For each target, first rule that matches:
//! 1. inside a place of the session's workspace W (its roots, its home, the session's project
//!    folder, its scratch folder): no objection;
//! 2. inside an approved root or the home of another workspace V: cross-workspace, naming V and
//!    the most specific such folder (the deepest; a tie goes to the first workspace by name);
//! 3. anywhere else (`/tmp`, a folder no workspace claims): no objection. berth is not a sandbox.
//!
//! Reads and shell commands never reach here: only the targets of write tools are judged.

use std::path::{Path, PathBuf};

use crate::pathutil::{depth, is_within};
use crate::text::{escaped, shown};

/// What kind of folder a workspace claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimKind {
    /// One of its approved roots.
    Root,
    /// Its home.
    Home,
}

impl ClaimKind {
    /// The word a reason uses.
    pub fn word(self) -> &'static str {
        match self {
            ClaimKind::Root => "root",
            ClaimKind::Home => "home",
        }
    }
}

/// A folder that belongs to a workspace other than the session's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The workspace.
    pub workspace: String,
    /// The folder (absolute, link-resolved).
    pub folder: PathBuf,
    /// A root or the home.
    pub kind: ClaimKind,
}

/// The session's side: its workspace and every folder it works in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Session {
    /// The session's workspace W.
    pub workspace: String,
    /// W's roots, its home, the session's project folder and its scratch folder (absolute,
    /// link-resolved; any may be missing).
    pub places: Vec<PathBuf>,
}

/// The rule's answer for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Inside a place of the session's workspace.
    Own,
    /// In no workspace's folders.
    Unclaimed,
    /// In a folder of another workspace and in no place of the session's.
    Cross(Claim),
}

/// The rule for one target (see the module docs).
pub fn judge(session: &Session, others: &[Claim], target: &Path) -> Verdict {
    if session.places.iter().any(|p| is_within(target, p)) {
        return Verdict::Own;
    }
    others
        .iter()
        .filter(|c| c.workspace != session.workspace && is_within(target, &c.folder))
        .max_by(|a, b| {
            depth(&a.folder)
                .cmp(&depth(&b.folder))
                // The first by name wins a tie: max_by keeps the last of equals, so reverse.
                .then_with(|| b.workspace.cmp(&a.workspace))
                .then_with(|| b.folder.cmp(&a.folder))
        })
        .map_or(Verdict::Unclaimed, |c| Verdict::Cross(c.clone()))
}

/// The first target the rule objects to, with its claim; `None` when it objects to none.
pub fn first_objection<'t>(
    session: &Session,
    others: &[Claim],
    targets: &'t [PathBuf],
) -> Option<(&'t Path, Claim)> {
    targets
        .iter()
        .find_map(|t| match judge(session, others, t) {
            Verdict::Cross(c) => Some((t.as_path(), c)),
            Verdict::Own | Verdict::Unclaimed => None,
        })
}

/// `path` as a person reads it: below `home` as `~/…`, escaped.
pub fn tilde(path: &Path, home: Option<&Path>) -> String {
    let text = match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", crate::pathutil::slashed(rest)),
        None => path.display().to_string(),
    };
    escaped(&text).into_owned()
}

/// The reason a person and a model read at a glance: which workspace the session works in,
/// which workspace the path belongs to and through which folder, and how to allow it.
pub fn reason(
    session_workspace: &str,
    target: &Path,
    claim: &Claim,
    home: Option<&Path>,
) -> String {
    let folder = tilde(&claim.folder, home);
    let allow = match claim.kind {
        // A root can be shared on purpose; a home is that workspace's alone.
        ClaimKind::Root => format!(
            "To allow writes there from this workspace, run `berth root add {} {folder} --allow-overlap`; or change the guard with `berth setting set guard.cross_workspace warn` (or `off`).",
            shell_word(session_workspace)
        ),
        ClaimKind::Home => "To allow it, change the guard with `berth setting set guard.cross_workspace warn` (or `off`), or write it through berth's own tools as <workspace>/<path>.".to_string(),
    };
    format!(
        "berth: this session works in workspace {}; {} belongs to workspace {} ({} {folder}). {allow}",
        shown(session_workspace),
        tilde(target, home),
        shown(&claim.workspace),
        claim.kind.word(),
    )
}

/// A workspace name as a shell word: as it is when it is plain, else single-quoted.
fn shell_word(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        name.to_string()
    } else {
        format!("'{}'", escaped(&name.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    fn claim(ws: &str, folder: &str, kind: ClaimKind) -> Claim {
        Claim {
            workspace: ws.into(),
            folder: p(folder),
            kind,
        }
    }

    fn shop() -> Session {
        Session {
            workspace: "shop".into(),
            places: vec![
                p("/h/src/shop"),
                p("/h/.local/share/berth/workspaces/shop"),
                p("/h/src/shop/web"),
            ],
        }
    }

    fn others() -> Vec<Claim> {
        vec![
            claim("alpha", "/h/src/alpha", ClaimKind::Root),
            claim(
                "alpha",
                "/h/.local/share/berth/workspaces/alpha",
                ClaimKind::Home,
            ),
            claim("beta", "/h/src", ClaimKind::Root),
            claim("gamma", "/h/src/alpha/vendor", ClaimKind::Root),
        ]
    }

    #[test]
    fn a_place_of_the_sessions_workspace_is_its_own() {
        for t in [
            "/h/src/shop/a.rs",
            "/h/src/shop",
            "/h/.local/share/berth/workspaces/shop/notes.md",
        ] {
            assert_eq!(judge(&shop(), &others(), &p(t)), Verdict::Own, "{t}");
        }
    }

    #[test]
    fn another_workspaces_root_or_home_is_cross_naming_the_deepest() {
        assert_eq!(
            judge(&shop(), &others(), &p("/h/src/alpha/lib.rs")),
            Verdict::Cross(claim("alpha", "/h/src/alpha", ClaimKind::Root))
        );
        assert_eq!(
            judge(&shop(), &others(), &p("/h/src/alpha/vendor/x/y")),
            Verdict::Cross(claim("gamma", "/h/src/alpha/vendor", ClaimKind::Root))
        );
        assert_eq!(
            judge(
                &shop(),
                &others(),
                &p("/h/.local/share/berth/workspaces/alpha/n.md")
            ),
            Verdict::Cross(claim(
                "alpha",
                "/h/.local/share/berth/workspaces/alpha",
                ClaimKind::Home
            ))
        );
        // A wider root of another workspace still claims what the session's places do not hold.
        assert_eq!(
            judge(&shop(), &others(), &p("/h/src/other/x")),
            Verdict::Cross(claim("beta", "/h/src", ClaimKind::Root))
        );
    }

    #[test]
    fn a_place_of_its_own_wins_over_an_overlapping_claim() {
        // /h/src/shop lies inside beta's root /h/src: the session's own place decides.
        assert_eq!(judge(&shop(), &others(), &p("/h/src/shop/x")), Verdict::Own);
    }

    #[test]
    fn folders_no_workspace_claims_are_not_objected_to() {
        for t in ["/tmp/x", "/h/notes.txt", "/h/src-old/x", "/h/src/alphabet"] {
            let v = judge(&shop(), &others()[..2], &p(t));
            assert_eq!(v, Verdict::Unclaimed, "{t}");
        }
    }

    #[test]
    fn the_sessions_own_workspace_never_objects_to_itself() {
        let own_root = [claim("shop", "/h/work", ClaimKind::Root)];
        assert_eq!(
            judge(&shop(), &own_root, &p("/h/work/x")),
            Verdict::Unclaimed
        );
    }

    #[test]
    fn a_tie_goes_to_the_first_workspace_by_name() {
        let tie = [
            claim("zeta", "/h/w", ClaimKind::Root),
            claim("alpha", "/h/w", ClaimKind::Root),
        ];
        assert_eq!(
            judge(&shop(), &tie, &p("/h/w/f")),
            Verdict::Cross(claim("alpha", "/h/w", ClaimKind::Root))
        );
    }

    #[test]
    fn the_first_objection_among_several_targets_is_named() {
        let targets = [p("/h/src/shop/new.rs"), p("/tmp/a"), p("/h/src/alpha/b.rs")];
        let (t, c) = first_objection(&shop(), &others(), &targets).unwrap();
        assert_eq!(t, Path::new("/h/src/alpha/b.rs"));
        assert_eq!(c.workspace, "alpha");
        assert_eq!(first_objection(&shop(), &others(), &targets[..2]), None);
    }

    #[test]
    fn the_reason_names_both_workspaces_the_folder_and_the_way_out() {
        let c = claim("alpha", "/h/src/alpha", ClaimKind::Root);
        let r = reason("shop", &p("/h/src/alpha/lib.rs"), &c, Some(Path::new("/h")));
        assert_eq!(
            r,
            "berth: this session works in workspace shop; ~/src/alpha/lib.rs belongs to workspace alpha (root ~/src/alpha). \
To allow writes there from this workspace, run `berth root add shop ~/src/alpha --allow-overlap`; \
or change the guard with `berth setting set guard.cross_workspace warn` (or `off`)."
        );
        let h = claim("alpha", "/d/workspaces/alpha", ClaimKind::Home);
        let r = reason(
            "my shop",
            &p("/d/workspaces/alpha/n"),
            &h,
            Some(Path::new("/h")),
        );
        assert!(
            r.starts_with("berth: this session works in workspace \"my shop\"; /d/workspaces/alpha/n belongs to workspace alpha (home /d/workspaces/alpha)."),
            "{r}"
        );
        assert!(r.contains("guard.cross_workspace"), "{r}");
    }

    #[test]
    fn a_path_with_control_characters_is_escaped_in_the_reason() {
        let c = claim("alpha", "/h/a", ClaimKind::Root);
        let r = reason("s'q", &p("/h/a/x\u{1b}[31m"), &c, None);
        assert!(r.contains("/h/a/x\\u{1b}[31m"), "{r}");
        assert!(r.contains(r"'s'\''q'"), "{r}");
    }

    fn segment() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "ab", "c"]).prop_map(str::to_string)
    }

    fn abs_path() -> impl Strategy<Value = PathBuf> {
        prop::collection::vec(segment(), 1..5).prop_map(|s| p(&format!("/{}", s.join("/"))))
    }

    proptest! {
        /// The verdict agrees with a plain reading of the rule: own when any place holds it,
        /// else cross exactly when some other workspace's folder holds it, and then the named
        /// folder holds the target and none holding it is deeper.
        #[test]
        fn the_verdict_follows_the_rule(
            places in prop::collection::vec(abs_path(), 0..3),
            claims in prop::collection::vec((prop::sample::select(vec!["w", "v", "u"]), abs_path()), 0..5),
            target in abs_path(),
        ) {
            let session = Session { workspace: "w".into(), places: places.clone() };
            let others: Vec<Claim> = claims
                .iter()
                .map(|(ws, f)| Claim { workspace: ws.to_string(), folder: f.clone(), kind: ClaimKind::Root })
                .collect();
            let own = places.iter().any(|pl| target.starts_with(pl));
            let holding: Vec<&Claim> = others
                .iter()
                .filter(|c| c.workspace != "w" && target.starts_with(&c.folder))
                .collect();
            match judge(&session, &others, &target) {
                Verdict::Own => prop_assert!(own),
                Verdict::Unclaimed => prop_assert!(!own && holding.is_empty()),
                Verdict::Cross(c) => {
                    prop_assert!(!own);
                    prop_assert!(target.starts_with(&c.folder));
                    prop_assert!(c.workspace != "w");
                    prop_assert!(holding.iter().all(|h| depth(&h.folder) <= depth(&c.folder)));
                }
            }
        }
    }
}
