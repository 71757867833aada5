//! The native-tool guard's gathering step (docs/reference.md, "The native-tool guard"): the
//! session's workspace is resolved as for session-start, from the folder its session-start
//! hook ran in when the daemon saw it (else the call's own folder); its places, the other
//! workspaces' roots and homes, and each target made absolute and link-resolved, with the walk
//! from its deepest existing folder (a linked worktree it lies in), are gathered here; the rule
//! is `berth_core::guard`; the setting `guard.cross_workspace` decides what an objection
//! becomes.
//!
//! Two ways to gather the targets (docs/decisions/0052-the-guard-answers-from-memory.md):
//! [`Device::guard_in_memory`] takes the hook's own following of each target when the lookup
//! cache vouches for every folder and walk, and touches no disk; [`Device::guard`], on the
//! pool, follows each target on the disk itself.

use std::path::{Component, Path, PathBuf};

use berth_client::landing::landing;
use berth_core::fsview::{WalkStep, look_along};
use berth_core::guard::{Claim, ClaimKind, Session, Target, first_objection, reason, target};
use berth_core::pathutil::is_within;
use berth_core::qualify::{Own, own_folder};
use berth_core::registry::Registry;
use berth_core::resolve::{Answer, Mode};
use berth_core::walk::walk_plan;

use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::device::Device;
use crate::ops::homes::home_of;

/// What a pre-tool hook forwarded.
#[derive(Debug, Clone, Copy)]
pub struct GuardCall<'a> {
    /// Which client.
    pub client: &'a str,
    /// The client's session id.
    pub client_session_id: &'a str,
    /// The tool, for the log.
    pub tool: &'a str,
    /// The files the tool would touch, as the payload spells them.
    pub targets: &'a [String],
    /// Each of `targets` as the hook followed it; empty from a hook that does not.
    pub followed: &'a [Followed],
}

/// One target as the hook followed it ([`berth_client::landing`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Followed {
    /// Where the write lands; empty when the hook could say nothing about it.
    pub path: PathBuf,
    /// The deepest folder of `path` that existed.
    pub folder: PathBuf,
}

/// What `guard.cross_workspace` makes of an objection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Put it to the person where the client can ask; refused where it cannot.
    Ask,
    /// Refused.
    Deny,
    /// Allowed, and the model is told.
    Warn,
}

impl Decision {
    /// What the setting's value in effect makes of an objection; `None` for `off`.
    fn of(setting: &str) -> Option<Self> {
        match setting {
            "off" => None,
            "deny" => Some(Decision::Deny),
            "warn" => Some(Decision::Warn),
            _ => Some(Decision::Ask),
        }
    }

    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Ask => "ask",
            Decision::Deny => "deny",
            Decision::Warn => "warn",
        }
    }
}

/// The guard's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardOutcome {
    /// The session's workspace.
    pub workspace: String,
    /// `None`: no objection (or the setting is `off`).
    pub decision: Option<Decision>,
    /// With a decision: the sentence for the person and the model.
    pub reason: String,
    /// With a decision: the target objected to, its workspace and that workspace's folder.
    pub target: Option<PathBuf>,
    pub other_workspace: String,
    pub other_folder: Option<PathBuf>,
}

impl Device {
    /// Judges one pre-tool call (see the module docs), following each target on the disk.
    pub fn guard(&self, caller: &Caller, call: &GuardCall<'_>) -> Result<GuardOutcome, BerthError> {
        let answer = self.resolve(&self.session_caller(caller, call), "", None, Mode::Agent)?;
        let (reg, setting) = self.registry_and_guard();
        let Some(decision) = Decision::of(setting) else {
            return Ok(off(answer, call));
        };
        let homes = self.homes(caller.extra_home.as_deref());
        let targets: Vec<Target> = call
            .targets
            .iter()
            .filter(|t| !t.is_empty())
            .filter_map(|t| landing(&caller.cwd, t))
            .map(|l| {
                let walk = look_along(self.fs().as_ref(), walk_plan(&l.folder, &homes).dirs);
                target(&reg, l.path, &walk)
            })
            .collect();
        Ok(self.judge(answer, &reg, decision, &targets, call))
    }

    /// [`Device::guard`] from memory alone, with the hook's own following of each target, or
    /// `None` when the disk must be read: the session's resolution must be in memory (ADR 0025),
    /// and each target's folder a folder the lookup cache knows as canonical, with every folder
    /// of its walk a watched entry. Never touches the disk, so it runs on the async worker.
    pub fn guard_in_memory(
        &self,
        caller: &Caller,
        call: &GuardCall<'_>,
    ) -> Option<Result<GuardOutcome, BerthError>> {
        if caller.extra_home.is_some() || call.followed.len() != call.targets.len() {
            return None;
        }
        let session_caller = self.session_caller(caller, call);
        let answer = match self.resolve_in_memory(&session_caller, "", None, Mode::Agent)? {
            Ok(answer) => answer,
            Err(e) => return Some(Err(e)),
        };
        let (reg, setting) = self.registry_and_guard();
        let Some(decision) = Decision::of(setting) else {
            return Some(Ok(off(answer, call)));
        };
        let mut targets = Vec::with_capacity(call.targets.len());
        for (raw, followed) in call.targets.iter().zip(call.followed) {
            if raw.is_empty() || followed.path.as_os_str().is_empty() {
                continue;
            }
            let walk = self.vouched_walk(followed)?;
            targets.push(target(&reg, followed.path.clone(), &walk));
        }
        Some(Ok(self.judge(answer, &reg, decision, &targets, call)))
    }

    /// The walk from a followed target's folder, when memory vouches for it: the path is the
    /// folder and plain names below it, and the cache holds the folder as canonical (a link
    /// swapped in on its way since is an event that dropped it) with a watched entry for each
    /// folder of the walk.
    fn vouched_walk(&self, followed: &Followed) -> Option<Vec<WalkStep>> {
        let folder = &followed.folder;
        let below = followed.path.strip_prefix(folder).ok()?;
        let plain = crate::ops::gather::plain_absolute(folder.clone())
            .is_some_and(|p| p == *folder)
            && followed.path.as_os_str().len() <= 4096
            && below
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
        if !plain || !self.fs().knows_canonical_dir(folder) {
            return None;
        }
        self.fs()
            .look_along_in_memory(walk_plan(folder, self.own_homes()).dirs)
    }

    /// The session works where it started; the call's own folder only places its targets.
    fn session_caller(&self, caller: &Caller, call: &GuardCall<'_>) -> Caller {
        match self
            .started_in()
            .folder(call.client, call.client_session_id)
        {
            Some(cwd) => Caller {
                cwd,
                ..caller.clone()
            },
            None => caller.clone(),
        }
    }

    /// The rule applied to gathered targets. From memory: the registry, the homes spelled with
    /// the folders read at start, the live sessions.
    fn judge(
        &self,
        answer: Answer,
        reg: &Registry,
        decision: Decision,
        targets: &[Target],
        call: &GuardCall<'_>,
    ) -> GuardOutcome {
        let workspace = answer.workspace.clone();
        let ctx = self.start_guard_ctx();
        // Roots are stored canonical, and so are local homes; a managed home is canonical
        // once the data folder is.
        let data_dir = &ctx.data_dir;
        let mut session = Session {
            workspace: workspace.clone(),
            places: Vec::new(),
        };
        let mut others = Vec::new();
        // Where each target stands: itself, and its counterpart in a worktree's repository.
        let stands: Vec<&Path> = targets
            .iter()
            .flat_map(|t| {
                std::iter::once(t.path.as_path())
                    .chain(t.through.as_ref().map(|w| w.counterpart.as_path()))
            })
            .collect();
        // Only the roots holding a target can decide: found through the registry's index,
        // so the cost follows the targets' depth, not the number of roots.
        for at in &stands {
            for root in reg.roots_containing(at) {
                if root.workspace == workspace {
                    session.places.push(root.path.clone());
                } else {
                    others.push(Claim {
                        workspace: root.workspace.clone(),
                        folder: root.path.clone(),
                        kind: ClaimKind::Root,
                    });
                }
            }
        }
        for entry in reg.workspaces.values() {
            // A home the guard refuses is no folder berth hands out; nothing to protect there.
            let Ok(home) = home_of(entry, data_dir, ctx) else {
                continue;
            };
            if entry.name == workspace {
                session.places.push(home);
            } else if stands.iter().any(|at| is_within(at, &home)) {
                others.push(Claim {
                    workspace: entry.name.clone(),
                    folder: home,
                    kind: ClaimKind::Home,
                });
            }
        }
        if let Some(project) = &answer.project {
            session.places.push(project.clone());
        }
        if own_folder(&answer, reg.workspaces.len()) == Own::Scratch
            && let Some(id) = self.live_session_of_client(call.client_session_id)
        {
            session.places.push(data_dir.join("scratch").join(id));
        }
        let Some(objection) = first_objection(&session, &others, targets) else {
            tracing::debug!(
                tool = call.tool,
                client = call.client,
                workspace,
                targets = ?targets,
                "no objection"
            );
            return GuardOutcome {
                workspace,
                ..GuardOutcome::default()
            };
        };
        let home = self.own_homes().first().map(PathBuf::as_path);
        let reason = reason(&workspace, &objection, home);
        let target = objection.target;
        tracing::info!(
            tool = call.tool,
            client = call.client,
            workspace,
            target = %target.path.display(),
            worktree = ?target.through.as_ref().map(|t| &t.worktree),
            other = objection.claim.workspace,
            decision = decision.as_str(),
            "a write into another workspace's folder"
        );
        GuardOutcome {
            workspace,
            decision: Some(decision),
            reason,
            target: Some(target.path.clone()),
            other_workspace: objection.claim.workspace,
            other_folder: Some(objection.claim.folder),
        }
    }
}

/// The answer when `guard.cross_workspace` is `off`: nothing is judged.
fn off(answer: Answer, call: &GuardCall<'_>) -> GuardOutcome {
    tracing::debug!(tool = call.tool, "guard.cross_workspace is off");
    GuardOutcome {
        workspace: answer.workspace,
        ..GuardOutcome::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use berth_core::registry::Home;

    /// `shop` and `alpha`, each with a root, and `tmp/alpha-feat`, a linked worktree of alpha's
    /// repository as git lays it out, outside every root.
    struct World {
        _t: tempfile::TempDir,
        d: Device,
        shop: PathBuf,
        alpha: PathBuf,
        feat: PathBuf,
    }

    fn world() -> World {
        let t = tempfile::tempdir().unwrap();
        let base = crate::canonical::canonicalize(t.path()).unwrap();
        let (data, shop, alpha) = (
            base.join("data"),
            base.join("src/shop"),
            base.join("src/alpha"),
        );
        let (feat, admin) = (
            base.join("tmp/alpha-feat"),
            alpha.join(".git/worktrees/feat"),
        );
        for d in [&data, &shop, &admin, &feat] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(feat.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", feat.join(".git").display()),
        )
        .unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        let store = Store::open(&data.join("berth.db")).unwrap();
        for (name, root) in [("shop", &shop), ("alpha", &alpha)] {
            store.create_workspace(name, &Home::Managed).unwrap();
            store.add_root(name, root).unwrap();
        }
        let d = Device::for_test(store, &data, Some(base));
        World {
            _t: t,
            d,
            shop,
            alpha,
            feat,
        }
    }

    fn in_shop(w: &World) -> Caller {
        Caller::new(w.shop.to_str().unwrap(), "", "").unwrap()
    }

    /// What the hook sends for `targets` from `cwd`.
    fn followed(cwd: &Path, targets: &[String]) -> Vec<Followed> {
        targets
            .iter()
            .map(|t| {
                landing(cwd, t).map_or_else(Followed::default, |l| Followed {
                    path: l.path,
                    folder: l.folder,
                })
            })
            .collect()
    }

    fn call<'a>(targets: &'a [String], followed: &'a [Followed]) -> GuardCall<'a> {
        GuardCall {
            client: "claude-code",
            client_session_id: "",
            tool: "Write",
            targets,
            followed,
        }
    }

    #[test]
    fn another_workspaces_worktree_is_objected_to_from_memory_as_on_the_pool() {
        let w = world();
        let caller = in_shop(&w);
        // The second, not made yet, is judged by its deepest existing folder, the worktree's.
        for (i, file) in [w.feat.join("x.txt"), w.feat.join("new/deeper/y.rs")]
            .into_iter()
            .enumerate()
        {
            let targets = [file.display().to_string()];
            let hook = followed(&w.shop, &targets);
            let c = call(&targets, &hook);
            assert_eq!(
                w.d.guard_in_memory(&caller, &c).is_none(),
                i == 0,
                "folders not seen yet need the disk; seen, they do not"
            );
            let pooled = w.d.guard(&caller, &c).unwrap();
            assert_eq!(pooled.decision, Some(Decision::Ask));
            assert_eq!(pooled.other_workspace, "alpha");
            assert_eq!(pooled.other_folder.as_deref(), Some(w.alpha.as_path()));
            assert!(
                pooled.reason.contains(
                    "(root ~/src/alpha): ~/tmp/alpha-feat is a git worktree of the repository ~/src/alpha."
                ),
                "{}",
                pooled.reason
            );
            let remembered = w.d.guard_in_memory(&caller, &c).unwrap().unwrap();
            assert_eq!(remembered, pooled);
        }
    }

    #[test]
    fn the_setting_is_known_from_memory_and_kept_right_when_it_changes() {
        let w = world();
        let caller = in_shop(&w);
        let targets = [w.alpha.join("lib.rs").display().to_string()];
        let hook = followed(&w.shop, &targets);
        let c = call(&targets, &hook);
        w.d.guard(&caller, &c).unwrap();
        let decided = || {
            w.d.guard_in_memory(&caller, &c)
                .expect("answered from memory")
                .unwrap()
                .decision
        };
        assert_eq!(decided(), Some(Decision::Ask));
        for (value, want) in [
            ("deny", Some(Decision::Deny)),
            ("warn", Some(Decision::Warn)),
            ("off", None),
            ("ask", Some(Decision::Ask)),
        ] {
            w.d.set_setting("guard.cross_workspace", value).unwrap();
            assert_eq!(decided(), want, "{value}");
            assert_eq!(w.d.guard(&caller, &c).unwrap().decision, want, "{value}");
        }
        w.d.set_setting("guard.cross_workspace", "off").unwrap();
        w.d.unset_setting("guard.cross_workspace").unwrap();
        assert_eq!(decided(), Some(Decision::Ask), "unset is the default");
    }

    #[test]
    fn a_following_memory_cannot_vouch_for_goes_to_the_pool() {
        let w = world();
        let caller = in_shop(&w);
        let file = w.alpha.join("lib.rs");
        let targets = [file.display().to_string()];
        let hook = followed(&w.shop, &targets);
        w.d.guard(&caller, &call(&targets, &hook)).unwrap();
        assert!(
            w.d.guard_in_memory(&caller, &call(&targets, &hook))
                .is_some()
        );
        let folder = w.alpha.clone();
        for (bad, why) in [
            (vec![], "an older hook's, with no following"),
            (
                vec![Followed {
                    path: folder.join("a/../lib.rs"),
                    folder: folder.clone(),
                }],
                "a `..` below the folder",
            ),
            (
                vec![Followed {
                    path: w.shop.join("lib.rs"),
                    folder: folder.clone(),
                }],
                "a path outside its folder",
            ),
            (
                vec![Followed {
                    path: folder.join("sub/lib.rs"),
                    folder: folder.join("sub"),
                }],
                "a folder the cache has not seen",
            ),
            (
                vec![Followed {
                    path: PathBuf::from("lib.rs"),
                    folder: PathBuf::new(),
                }],
                "a relative path",
            ),
        ] {
            assert!(
                w.d.guard_in_memory(&caller, &call(&targets, &bad))
                    .is_none(),
                "{why}"
            );
        }
        // A target the hook could say nothing about is skipped, as the pool skips it.
        let unsaid = [Followed::default()];
        let done =
            w.d.guard_in_memory(&caller, &call(&targets, &unsaid))
                .unwrap();
        assert_eq!(done.unwrap().decision, None);
    }

    /// A link swapped in on a folder's path after the hook followed it: the folder's entry
    /// goes with the event, so the call goes to the pool, which follows the link.
    #[cfg(unix)]
    #[test]
    fn a_folder_replaced_by_a_link_is_followed_again_on_the_pool() {
        let w = world();
        let caller = in_shop(&w);
        let loose = w.feat.parent().unwrap().join("loose");
        std::fs::create_dir(&loose).unwrap();
        let targets = [loose.join("x.rs").display().to_string()];
        let hook = followed(&w.shop, &targets);
        let c = call(&targets, &hook);
        assert_eq!(w.d.guard(&caller, &c).unwrap().decision, None);
        assert!(w.d.guard_in_memory(&caller, &c).is_some());

        std::fs::rename(&loose, loose.with_file_name("moved")).unwrap();
        std::os::unix::fs::symlink(&w.alpha, &loose).unwrap();
        // Event by event, until the one that drops the folder's entry has landed.
        loop {
            let seen = w.d.fs().applied();
            if w.d.guard_in_memory(&caller, &c).is_none() {
                break;
            }
            assert!(
                w.d.fs().applies_past(seen),
                "the folder's entry outlived the link swapped in"
            );
        }
        let pooled = w.d.guard(&caller, &c).unwrap();
        assert_eq!(pooled.decision, Some(Decision::Ask));
        assert_eq!(pooled.other_workspace, "alpha");
    }
}
