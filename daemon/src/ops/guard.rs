//! The native-tool guard's gathering step (docs/reference.md, "The native-tool guard"): the
//! session's workspace is resolved as for session-start, from the folder its session-start
//! hook ran in when the daemon saw it (else the call's own folder); its places, the other workspaces'
//! roots and homes and each target are made absolute and link-resolved here; the rule is
//! `berth_core::guard`; the setting `guard.cross_workspace` decides what an objection becomes.

use std::path::{Component, Path, PathBuf};

use berth_core::guard::{Claim, ClaimKind, Session, first_objection, reason};
use berth_core::pathutil::{is_within, normalize};
use berth_core::qualify::{Own, own_folder};
use berth_core::resolve::Mode;
use berth_proto::settings::Setting;

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

/// The most links followed for one target, as the system's own limit (`ELOOP`) does.
const MAX_LINKS: usize = 40;

impl Device {
    /// Judges one pre-tool call (see the module docs).
    pub fn guard(&self, caller: &Caller, call: &GuardCall<'_>) -> Result<GuardOutcome, BerthError> {
        // The session works where it started; the call's own folder only places its targets.
        let session_caller = match self
            .started_in()
            .folder(call.client, call.client_session_id)
        {
            Some(cwd) => Caller {
                cwd,
                ..caller.clone()
            },
            None => caller.clone(),
        };
        let answer = self.resolve(&session_caller, "", None, Mode::Agent)?;
        let workspace = answer.workspace.clone();
        let setting = self
            .store()
            .get_setting(Setting::GuardCrossWorkspace.key())?;
        let decision = match Setting::GuardCrossWorkspace.choice(setting.as_deref()) {
            "off" => {
                tracing::debug!(tool = call.tool, "guard.cross_workspace is off");
                return Ok(GuardOutcome {
                    workspace,
                    ..GuardOutcome::default()
                });
            }
            "deny" => Decision::Deny,
            "warn" => Decision::Warn,
            _ => Decision::Ask,
        };
        let targets: Vec<PathBuf> = call
            .targets
            .iter()
            .filter(|t| !t.is_empty())
            .filter_map(|t| target_path(&caller.cwd, t))
            .collect();
        let reg = self.registry();
        let ctx = self.guard_ctx();
        // Roots are stored canonical, and so are local homes; a managed home is canonical
        // once the data folder is.
        let data_dir = crate::ops::caller::canonical_gone(self.data_dir())
            .unwrap_or_else(|| self.data_dir().to_path_buf());
        let mut session = Session {
            workspace: workspace.clone(),
            places: Vec::new(),
        };
        let mut others = Vec::new();
        // Only the roots holding a target can decide: found through the registry's index,
        // so the cost follows the targets' depth, not the number of roots.
        for target in &targets {
            for root in reg.roots_containing(target) {
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
            let Ok(home) = home_of(entry, &data_dir, &ctx) else {
                continue;
            };
            if entry.name == workspace {
                session.places.push(home);
            } else if targets.iter().any(|t| is_within(t, &home)) {
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
        let Some((target, claim)) = first_objection(&session, &others, &targets) else {
            tracing::debug!(
                tool = call.tool,
                client = call.client,
                workspace,
                targets = ?targets,
                "no objection"
            );
            return Ok(GuardOutcome {
                workspace,
                ..GuardOutcome::default()
            });
        };
        let home = self.own_homes().first().map(PathBuf::as_path);
        let reason = reason(&workspace, target, &claim, home);
        tracing::info!(
            tool = call.tool,
            client = call.client,
            workspace,
            target = %target.display(),
            other = claim.workspace,
            decision = decision.as_str(),
            "a write into another workspace's folder"
        );
        Ok(GuardOutcome {
            workspace,
            decision: Some(decision),
            reason,
            target: Some(target.to_path_buf()),
            other_workspace: claim.workspace,
            other_folder: Some(claim.folder),
        })
    }
}

/// Where a tool's write to `raw` lands: made absolute against `cwd`, and followed through
/// links as the tool follows them. The deepest part of the path that exists is resolved by the
/// system (every link in it, the last one too: a write to a link writes where it leads); a
/// link at the end that leads nowhere yet is followed by hand; the part that does not exist
/// yet is appended as written, its `.` and `..` taken lexically (no link can be in it). `None`
/// for a path nothing can be said about (a NUL byte, too many links).
pub fn target_path(cwd: &Path, raw: &str) -> Option<PathBuf> {
    if raw.contains('\0') {
        return None;
    }
    let path = Path::new(raw);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    follow(absolute, 0)
}

fn follow(path: PathBuf, links: usize) -> Option<PathBuf> {
    if links > MAX_LINKS {
        return None;
    }
    for existing in path.ancestors() {
        let Ok(meta) = std::fs::symlink_metadata(existing) else {
            continue;
        };
        let rest = path.strip_prefix(existing).ok()?;
        if meta.file_type().is_symlink() && !existing.exists() {
            // A dangling link: the write creates the file it names.
            let to = std::fs::read_link(existing).ok()?;
            let to = match existing.parent() {
                Some(parent) if to.is_relative() => parent.join(to),
                _ => to,
            };
            let to = if rest.as_os_str().is_empty() {
                to
            } else {
                to.join(rest)
            };
            return follow(to, links + 1);
        }
        let base = crate::canonical::canonicalize(existing).ok()?;
        return Some(appended(base, rest));
    }
    // Not even the root exists (a drive that is gone): judged as written.
    Some(normalize(&path))
}

/// `base` with `rest` appended, `.` dropped and `..` going up one name.
fn appended(mut base: PathBuf, rest: &Path) -> PathBuf {
    for c in rest.components() {
        match c {
            Component::Normal(n) => base.push(n),
            Component::ParentDir => {
                base.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(t: &tempfile::TempDir) -> PathBuf {
        crate::canonical::canonicalize(t.path()).unwrap()
    }

    #[test]
    fn a_relative_target_is_against_the_cwd_and_a_missing_one_keeps_its_place() {
        let t = tempfile::tempdir().unwrap();
        let base = real(&t);
        std::fs::create_dir(base.join("a")).unwrap();
        assert_eq!(
            target_path(&base.join("a"), "new/deeper/f.rs"),
            Some(base.join("a/new/deeper/f.rs"))
        );
        assert_eq!(
            target_path(&base.join("a"), "../b/./f"),
            Some(base.join("b/f"))
        );
        assert_eq!(target_path(&base, "x\0y"), None);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_as_a_write_follows_them() {
        let t = tempfile::tempdir().unwrap();
        let base = real(&t);
        let (here, there) = (base.join("here"), base.join("there"));
        std::fs::create_dir_all(&here).unwrap();
        std::fs::create_dir_all(&there).unwrap();
        // A folder link in the middle.
        std::os::unix::fs::symlink(&there, here.join("dir")).unwrap();
        assert_eq!(target_path(&here, "dir/new.rs"), Some(there.join("new.rs")));
        // A file link that exists, and one that leads nowhere yet (relative).
        std::fs::write(there.join("f"), "").unwrap();
        std::os::unix::fs::symlink(there.join("f"), here.join("f")).unwrap();
        assert_eq!(target_path(&here, "f"), Some(there.join("f")));
        std::os::unix::fs::symlink("../there/g", here.join("g")).unwrap();
        assert_eq!(target_path(&here, "g"), Some(there.join("g")));
        // A loop gives up.
        std::os::unix::fs::symlink(here.join("l2"), here.join("l1")).unwrap();
        std::os::unix::fs::symlink(here.join("l1"), here.join("l2")).unwrap();
        assert_eq!(target_path(&here, "l1"), None);
    }
}
