//! The native-tool guard's rule (docs/reference.md, "The native-tool guard"): whether a file
//! that a client's own write tool would create, change, move or delete lies in another
//! workspace's folders. Pure: the daemon gathers the session's places, the other workspaces'
//! claims and each target already made absolute and link-resolved, with the linked worktree it
//! lies in when git's records confirm one; this decides.
//!
//! For each target, first rule that matches:
//! 1. inside a place of the session's workspace W (its roots, its home, the session's project
//!    folder, its scratch folder): no objection;
//! 2. inside an approved root or the home of another workspace V: cross-workspace, naming V and
//!    the most specific such folder (the deepest; a tie goes to the first workspace by name);
//! 3. anywhere else (`/tmp`, a folder no workspace claims): no objection. berth is not a sandbox.
//!
//! A target in a linked worktree whose repository's roots answer for it (ADR 0047) stands where
//! its counterpart in the repository stands too: inside a place of W there, it is W's; else the
//! folders holding the counterpart decide before those holding the target itself.
//!
//! Reads and shell commands never reach here: only the targets of write tools are judged.

use std::path::{Path, PathBuf};

use crate::fsview::WalkStep;
use crate::pathutil::{depth, is_within};
use crate::registry::Registry;
use crate::resolve::{linked_worktree, roots_decide_at};
use berth_vocab::text::{escaped, shown};

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

/// Where a write lands: the path, and the linked worktree it lies in when that worktree's
/// repository's roots answer for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Absolute, link-resolved.
    pub path: PathBuf,
    /// `None` outside a linked worktree, or where the worktree's own folders answer.
    pub through: Option<Through>,
}

impl From<PathBuf> for Target {
    fn from(path: PathBuf) -> Self {
        Self {
            path,
            through: None,
        }
    }
}

/// The target at `path`, given the walk from its deepest existing folder: in a linked worktree
/// it stands where resolution would stand it, at its counterpart in the repository, unless a
/// root inside the worktree itself holds it or no root holds the counterpart (ADR 0047).
pub fn target(registry: &Registry, path: PathBuf, walk: &[WalkStep]) -> Target {
    let through = linked_worktree(walk).and_then(|wt| {
        let (counterpart, through) = roots_decide_at(registry, &path, Some(&wt));
        through.then(|| Through {
            worktree: wt.top.to_path_buf(),
            repository: wt.repository.to_path_buf(),
            counterpart,
        })
    });
    Target { path, through }
}

/// A target's linked worktree and where the target stands in its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Through {
    /// The worktree's top folder.
    pub worktree: PathBuf,
    /// The repository's folder.
    pub repository: PathBuf,
    /// The target's counterpart: the same relative path beneath the repository's folder.
    pub counterpart: PathBuf,
}

/// The rule's answer for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Inside a place of the session's workspace.
    Own,
    /// In no workspace's folders.
    Unclaimed,
    /// In a folder of another workspace and in no place of the session's; `through_worktree`
    /// when the folder holds the target's counterpart in its worktree's repository.
    Cross {
        claim: Claim,
        through_worktree: bool,
    },
}

/// The rule for one target (see the module docs).
pub fn judge(session: &Session, others: &[Claim], target: &Target) -> Verdict {
    let counterpart = target.through.as_ref().map(|t| t.counterpart.as_path());
    let own = |path: &Path| session.places.iter().any(|p| is_within(path, p));
    if own(&target.path) || counterpart.is_some_and(own) {
        return Verdict::Own;
    }
    let deepest = |path: &Path| {
        others
            .iter()
            .filter(|c| c.workspace != session.workspace && is_within(path, &c.folder))
            .max_by(|a, b| {
                depth(&a.folder)
                    .cmp(&depth(&b.folder))
                    // The first by name wins a tie: max_by keeps the last of equals, so reverse.
                    .then_with(|| b.workspace.cmp(&a.workspace))
                    .then_with(|| b.folder.cmp(&a.folder))
            })
            .cloned()
    };
    if let Some(claim) = counterpart.and_then(deepest) {
        return Verdict::Cross {
            claim,
            through_worktree: true,
        };
    }
    deepest(&target.path).map_or(Verdict::Unclaimed, |claim| Verdict::Cross {
        claim,
        through_worktree: false,
    })
}

/// What the rule objects to: a target, the claim on it, and the worktree it was reached through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Objection<'t> {
    pub target: &'t Target,
    pub claim: Claim,
    /// The claim holds the target's counterpart in its worktree's repository.
    pub through_worktree: bool,
}

/// The first target the rule objects to; `None` when it objects to none.
pub fn first_objection<'t>(
    session: &Session,
    others: &[Claim],
    targets: &'t [Target],
) -> Option<Objection<'t>> {
    targets
        .iter()
        .find_map(|target| match judge(session, others, target) {
            Verdict::Cross {
                claim,
                through_worktree,
            } => Some(Objection {
                target,
                claim,
                through_worktree,
            }),
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
/// which workspace the path belongs to and through which folder (and which git worktree), and
/// how to allow it.
pub fn reason(session_workspace: &str, objection: &Objection<'_>, home: Option<&Path>) -> String {
    let claim = &objection.claim;
    let folder = tilde(&claim.folder, home);
    let worktree = match &objection.target.through {
        Some(t) if objection.through_worktree => format!(
            ": {} is a git worktree of the repository {}",
            tilde(&t.worktree, home),
            tilde(&t.repository, home)
        ),
        _ => String::new(),
    };
    let allow = match claim.kind {
        // A root can be shared on purpose; a home is that workspace's alone.
        ClaimKind::Root => format!(
            "To allow writes there from this workspace, run `berth root add {} {folder} --allow-overlap`; or change the guard with `berth setting set guard.cross_workspace warn` (or `off`).",
            shell_word(session_workspace)
        ),
        ClaimKind::Home => "To allow it, change the guard with `berth setting set guard.cross_workspace warn` (or `off`), or write it through berth's own tools as <workspace>/<path>.".to_string(),
    };
    format!(
        "berth: this session works in workspace {}; {} belongs to workspace {} ({} {folder}){worktree}. {allow}",
        shown(session_workspace),
        tilde(&objection.target.path, home),
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

    fn at(s: &str) -> Target {
        p(s).into()
    }

    fn cross(claim: Claim) -> Verdict {
        Verdict::Cross {
            claim,
            through_worktree: false,
        }
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
            assert_eq!(judge(&shop(), &others(), &at(t)), Verdict::Own, "{t}");
        }
    }

    #[test]
    fn another_workspaces_root_or_home_is_cross_naming_the_deepest() {
        assert_eq!(
            judge(&shop(), &others(), &at("/h/src/alpha/lib.rs")),
            cross(claim("alpha", "/h/src/alpha", ClaimKind::Root))
        );
        assert_eq!(
            judge(&shop(), &others(), &at("/h/src/alpha/vendor/x/y")),
            cross(claim("gamma", "/h/src/alpha/vendor", ClaimKind::Root))
        );
        assert_eq!(
            judge(
                &shop(),
                &others(),
                &at("/h/.local/share/berth/workspaces/alpha/n.md")
            ),
            cross(claim(
                "alpha",
                "/h/.local/share/berth/workspaces/alpha",
                ClaimKind::Home
            ))
        );
        // A wider root of another workspace still claims what the session's places do not hold.
        assert_eq!(
            judge(&shop(), &others(), &at("/h/src/other/x")),
            cross(claim("beta", "/h/src", ClaimKind::Root))
        );
    }

    #[test]
    fn a_place_of_its_own_wins_over_an_overlapping_claim() {
        // /h/src/shop lies inside beta's root /h/src: the session's own place decides.
        assert_eq!(
            judge(&shop(), &others(), &at("/h/src/shop/x")),
            Verdict::Own
        );
    }

    #[test]
    fn folders_no_workspace_claims_are_not_objected_to() {
        for t in ["/tmp/x", "/h/notes.txt", "/h/src-old/x", "/h/src/alphabet"] {
            let v = judge(&shop(), &others()[..2], &at(t));
            assert_eq!(v, Verdict::Unclaimed, "{t}");
        }
    }

    #[test]
    fn the_sessions_own_workspace_never_objects_to_itself() {
        let own_root = [claim("shop", "/h/work", ClaimKind::Root)];
        assert_eq!(
            judge(&shop(), &own_root, &at("/h/work/x")),
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
            judge(&shop(), &tie, &at("/h/w/f")),
            cross(claim("alpha", "/h/w", ClaimKind::Root))
        );
    }

    #[test]
    fn the_first_objection_among_several_targets_is_named() {
        let targets = [
            at("/h/src/shop/new.rs"),
            at("/tmp/a"),
            at("/h/src/alpha/b.rs"),
        ];
        let o = first_objection(&shop(), &others(), &targets).unwrap();
        assert_eq!(o.target.path, Path::new("/h/src/alpha/b.rs"));
        assert_eq!(o.claim.workspace, "alpha");
        assert!(!o.through_worktree);
        assert_eq!(first_objection(&shop(), &others(), &targets[..2]), None);
    }

    #[test]
    fn the_reason_names_both_workspaces_the_folder_and_the_way_out() {
        let target = at("/h/src/alpha/lib.rs");
        let r = reason(
            "shop",
            &objection(&target, claim("alpha", "/h/src/alpha", ClaimKind::Root)),
            Some(Path::new("/h")),
        );
        assert_eq!(
            r,
            "berth: this session works in workspace shop; ~/src/alpha/lib.rs belongs to workspace alpha (root ~/src/alpha). \
To allow writes there from this workspace, run `berth root add shop ~/src/alpha --allow-overlap`; \
or change the guard with `berth setting set guard.cross_workspace warn` (or `off`)."
        );
        let target = at("/d/workspaces/alpha/n");
        let h = claim("alpha", "/d/workspaces/alpha", ClaimKind::Home);
        let r = reason("my shop", &objection(&target, h), Some(Path::new("/h")));
        assert!(
            r.starts_with("berth: this session works in workspace \"my shop\"; /d/workspaces/alpha/n belongs to workspace alpha (home /d/workspaces/alpha)."),
            "{r}"
        );
        assert!(r.contains("guard.cross_workspace"), "{r}");
    }

    #[test]
    fn a_path_with_control_characters_is_escaped_in_the_reason() {
        let target = at("/h/a/x\u{1b}[31m");
        let r = reason(
            "s'q",
            &objection(&target, claim("alpha", "/h/a", ClaimKind::Root)),
            None,
        );
        assert!(r.contains("/h/a/x\\u{1b}[31m"), "{r}");
        assert!(r.contains(r"'s'\''q'"), "{r}");
    }

    fn objection(target: &Target, claim: Claim) -> Objection<'_> {
        Objection {
            target,
            claim,
            through_worktree: false,
        }
    }

    /// `/tmp/alpha-feat`, a linked worktree of alpha's repository `/h/src/alpha`.
    fn in_alpha_feat(rest: &str) -> Target {
        Target {
            path: p(&format!("/tmp/alpha-feat/{rest}")),
            through: Some(Through {
                worktree: p("/tmp/alpha-feat"),
                repository: p("/h/src/alpha"),
                counterpart: p(&format!("/h/src/alpha/{rest}")),
            }),
        }
    }

    #[test]
    fn a_target_in_another_workspaces_worktree_is_judged_where_its_repository_stands() {
        assert_eq!(
            judge(&shop(), &others(), &in_alpha_feat("x.txt")),
            Verdict::Cross {
                claim: claim("alpha", "/h/src/alpha", ClaimKind::Root),
                through_worktree: true,
            }
        );
        // The same path with no worktree behind it is claimed by nobody.
        assert_eq!(
            judge(&shop(), &others(), &at("/tmp/alpha-feat/x.txt")),
            Verdict::Unclaimed
        );
        // The repository's own deeper root decides there, as in the repository.
        assert_eq!(
            judge(&shop(), &others(), &in_alpha_feat("vendor/y")),
            Verdict::Cross {
                claim: claim("gamma", "/h/src/alpha/vendor", ClaimKind::Root),
                through_worktree: true,
            }
        );
    }

    #[test]
    fn a_worktree_whose_counterpart_is_the_sessions_own_is_its_own() {
        let mut session = shop();
        session.places.push(p("/h/src/alpha"));
        // Even where another workspace's root holds the worktree itself.
        let wider = [claim("beta", "/tmp", ClaimKind::Root)];
        assert_eq!(
            judge(&session, &wider, &in_alpha_feat("x.txt")),
            Verdict::Own
        );
        // And a place of the session's holding the worktree itself is its own too.
        let mut session = shop();
        session.places.push(p("/tmp"));
        assert_eq!(
            judge(&session, &others(), &in_alpha_feat("x.txt")),
            Verdict::Own
        );
    }

    #[cfg(unix)] // written with Unix paths
    #[test]
    fn a_target_stands_in_its_repository_only_where_resolution_would_stand_it() {
        use crate::fsview::DirLook;
        use crate::registry::fixtures::registry;
        use crate::worktree::{GitLink, LinkRefusal};

        let verified = GitLink::worktree(p("/h/src/alpha/.git/worktrees/feat"), p("/h/src/alpha"));
        let walk = |link: GitLink| {
            vec![
                WalkStep {
                    dir: p("/tmp/alpha-feat/sub"),
                    look: DirLook::default(),
                },
                WalkStep {
                    dir: p("/tmp/alpha-feat"),
                    look: DirLook::default().with_link(link),
                },
            ]
        };
        let reg = registry(&["alpha", "shop"], "shop", &[("alpha", "/h/src/alpha")]);
        let t = target(&reg, p("/tmp/alpha-feat/sub/x"), &walk(verified.clone()));
        assert_eq!(
            t.through,
            Some(Through {
                worktree: p("/tmp/alpha-feat"),
                repository: p("/h/src/alpha"),
                counterpart: p("/h/src/alpha/sub/x"),
            })
        );
        // A forged `.git`, a repository no root holds, a root on the worktree itself: none.
        let forged = GitLink::refused(LinkRefusal::BackLinkElsewhere(p("/x/.git")));
        assert_eq!(
            target(&reg, p("/tmp/alpha-feat/x"), &walk(forged)).through,
            None
        );
        let unrooted = registry(&["alpha", "shop"], "shop", &[]);
        let t = target(&unrooted, p("/tmp/alpha-feat/x"), &walk(verified.clone()));
        assert_eq!(t.through, None);
        let on_it = registry(
            &["alpha", "beta", "shop"],
            "shop",
            &[("alpha", "/h/src/alpha"), ("beta", "/tmp/alpha-feat")],
        );
        assert_eq!(
            target(&on_it, p("/tmp/alpha-feat/x"), &walk(verified)).through,
            None
        );
    }

    #[test]
    fn a_claim_on_the_worktree_itself_decides_when_none_holds_the_counterpart() {
        let wider = [claim("beta", "/tmp", ClaimKind::Root)];
        assert_eq!(
            judge(&shop(), &wider, &in_alpha_feat("x.txt")),
            cross(claim("beta", "/tmp", ClaimKind::Root))
        );
    }

    #[test]
    fn the_reason_names_the_worktree_and_its_repository() {
        let target = in_alpha_feat("x.txt");
        let o = first_objection(&shop(), &others(), std::slice::from_ref(&target)).unwrap();
        assert!(o.through_worktree);
        let r = reason("shop", &o, Some(Path::new("/h")));
        assert!(
            r.starts_with(
                "berth: this session works in workspace shop; /tmp/alpha-feat/x.txt belongs to workspace alpha (root ~/src/alpha): \
/tmp/alpha-feat is a git worktree of the repository ~/src/alpha. To allow writes there from this workspace, run \
`berth root add shop ~/src/alpha --allow-overlap`"
            ),
            "{r}"
        );
        // Reached directly, the same target's reason names no worktree.
        let direct = Objection {
            through_worktree: false,
            ..o
        };
        assert!(!reason("shop", &direct, None).contains("worktree"));
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
            match judge(&session, &others, &target.clone().into()) {
                Verdict::Own => prop_assert!(own),
                Verdict::Unclaimed => prop_assert!(!own && holding.is_empty()),
                Verdict::Cross { claim: c, through_worktree } => {
                    prop_assert!(!through_worktree);
                    prop_assert!(!own);
                    prop_assert!(target.starts_with(&c.folder));
                    prop_assert!(c.workspace != "w");
                    prop_assert!(holding.iter().all(|h| depth(&h.folder) <= depth(&c.folder)));
                }
            }
        }

        /// With a counterpart: own when a place holds the target or its counterpart; else the
        /// claims holding the counterpart decide first, then those holding the target.
        #[test]
        fn a_counterpart_is_judged_before_the_target_itself(
            places in prop::collection::vec(abs_path(), 0..3),
            claims in prop::collection::vec((prop::sample::select(vec!["w", "v", "u"]), abs_path()), 0..5),
            path in abs_path(),
            counterpart in abs_path(),
        ) {
            let session = Session { workspace: "w".into(), places: places.clone() };
            let others: Vec<Claim> = claims
                .iter()
                .map(|(ws, f)| Claim { workspace: ws.to_string(), folder: f.clone(), kind: ClaimKind::Root })
                .collect();
            let target = Target {
                path: path.clone(),
                through: Some(Through {
                    worktree: p("/wt"),
                    repository: p("/repo"),
                    counterpart: counterpart.clone(),
                }),
            };
            let holds = |at: &Path| places.iter().any(|pl| at.starts_with(pl));
            let claimed = |at: &Path| others.iter().any(|c| c.workspace != "w" && at.starts_with(&c.folder));
            match judge(&session, &others, &target) {
                Verdict::Own => prop_assert!(holds(&path) || holds(&counterpart)),
                Verdict::Unclaimed => {
                    prop_assert!(!holds(&path) && !holds(&counterpart));
                    prop_assert!(!claimed(&path) && !claimed(&counterpart));
                }
                Verdict::Cross { claim, through_worktree } => {
                    prop_assert!(!holds(&path) && !holds(&counterpart));
                    prop_assert_eq!(through_worktree, claimed(&counterpart));
                    let at = if through_worktree { &counterpart } else { &path };
                    prop_assert!(at.starts_with(&claim.folder));
                }
            }
        }
    }
}
