//! Gathering the facts a resolution needs, and handing them to the pure
//! core: canonicalise the directory, plan the walk, look at each directory
//! through the filesystem view, and take the registry snapshot.
//!
//! **Architecture Invariant:** this is the only place resolution meets I/O;
//! `resolve`, `walk`, `claim` and `explain` never touch the disk.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;

use berth_vocab::codes::Code;

use crate::error::BerthError;
use crate::ops::caller::{Caller, canonical, canonical_gone};
use crate::ops::device::Device;
use berth_core::explain::Explanation;
use berth_core::fsview::WalkStep;
use berth_core::fsview::look_along;
use berth_core::pathutil::{has_dotdot, normalized};
use berth_core::registry::Registry;
use berth_core::resolve::{Answer, Facts, Mode, resolve};
use berth_core::walk::{Stop, walk_plan};
use berth_core::worktree;

/// The filesystem half of a resolution's facts.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The canonical directory resolved (a file's folder).
    pub directory: PathBuf,
    /// What the walk found, nearest first.
    pub walk: Vec<WalkStep>,
    /// Where the walk stopped.
    pub stop: Stop,
}

impl Gathered {
    /// Completes the facts with the registry and the caller's pins.
    pub fn facts<'a>(
        self,
        registry: &'a Registry,
        caller: &Caller,
        argument: Option<&str>,
        mode: Mode,
    ) -> Facts<'a> {
        Facts {
            directory: self.directory,
            argument: argument.map(str::to_string),
            env_pin: caller.env_workspace.clone(),
            walk: self.walk,
            stop: self.stop,
            registry,
            mode,
        }
    }
}

impl Device {
    /// Walks from `path` (relative to the caller's cwd; a file means its
    /// folder) and looks at each directory on the way.
    pub fn gather(&self, caller: &Caller, path: &str) -> Result<Gathered, BerthError> {
        let target = canonical(&caller.absolute(path))?;
        let directory = if target.is_dir() {
            target
        } else {
            target.parent().map(PathBuf::from).unwrap_or(target)
        };
        let plan = walk_plan(&directory, &self.homes(caller.extra_home.as_deref()));
        Ok(Gathered {
            walk: self.look_along(plan.dirs),
            stop: plan.stop,
            directory,
        })
    }

    /// Looks at every folder of a walk through the lookup cache, and settles a worktree of a
    /// separate git folder against the roots (ADR 0047).
    fn look_along(&self, dirs: Vec<PathBuf>) -> Vec<WalkStep> {
        let mut walk = look_along(self.fs().as_ref(), dirs);
        worktree::settle(self.fs().as_ref(), &self.registry(), &mut walk);
        walk
    }

    /// [`Device::gather`] from memory alone, or `None` when the disk must be read: `directory`
    /// (plain and absolute) must be a folder the lookup cache knows as canonical, and every
    /// folder of its walk must have a watched entry (docs/decisions/0025-resolving-from-memory.md).
    /// Never touches the disk, so it runs on the async worker that received the request, without
    /// the pool's hop.
    fn gather_in_memory(&self, directory: PathBuf, registry: &Registry) -> Option<Gathered> {
        if !self.fs().knows_canonical_dir(&directory) {
            return None;
        }
        let plan = walk_plan(&directory, self.own_homes());
        let mut walk = self.fs().look_along_in_memory(plan.dirs)?;
        if worktree::unsettled(&walk).is_some() {
            let roots = match worktree::checkout_candidates(registry) {
                Some(dirs) => Some(self.fs().look_along_in_memory(dirs)?),
                None => None,
            };
            worktree::settle_with(&mut walk, roots.as_deref());
        }
        Some(Gathered {
            walk,
            stop: plan.stop,
            directory,
        })
    }

    /// [`Device::gather`] for a conversation's cwd, which may be gone by now: a missing folder
    /// is walked from where it was (a claim is judged by what claimed it, not by what is there now:
    /// docs/reference.md, "Conversations").
    fn gather_cwd(&self, caller: &Caller, cwd: &str) -> Result<Gathered, BerthError> {
        match self.gather(caller, cwd) {
            Err(e) if e.code == Code::NotFound => {
                let directory = canonical_gone(&caller.absolute(cwd)).ok_or(e)?;
                let plan = walk_plan(&directory, &self.homes(caller.extra_home.as_deref()));
                Ok(Gathered {
                    walk: self.look_along(plan.dirs),
                    stop: plan.stop,
                    directory,
                })
            }
            other => other,
        }
    }

    /// Which workspace `path` belongs to, and why (docs/reference.md, "Resolution").
    pub fn resolve(
        &self,
        caller: &Caller,
        path: &str,
        argument: Option<&str>,
        mode: Mode,
    ) -> Result<Answer, BerthError> {
        let gathered = self.gather(caller, path)?;
        let registry = self.registry();
        resolve(&gathered.facts(&registry, caller, argument, mode)).map_err(pin_error)
    }

    /// [`Device::resolve`] answered from memory, when [`Device::gather_in_memory`] can gather
    /// (a caller with an extra home never can: its canonical spelling needs the disk).
    pub fn resolve_in_memory(
        &self,
        caller: &Caller,
        path: &str,
        argument: Option<&str>,
        mode: Mode,
    ) -> Option<Result<Answer, BerthError>> {
        if caller.extra_home.is_some() {
            return None;
        }
        // Read before anything else: a change to the cache after this moves the generation, so
        // an answer kept below is never given for entries that changed while it was computed.
        let generation = self.fs().generation();
        let registry = self.registry();
        let directory = plain_absolute(caller.absolute(path))?;
        // Without a pin, the folder and the mode alone decide the answer.
        let unpinned = argument.is_none() && caller.env_workspace.is_none();
        if unpinned
            && let Some(answer) = self.answers().get(&directory, mode, generation, &registry)
        {
            return Some(Ok(answer));
        }
        let gathered = self.gather_in_memory(directory, &registry)?;
        let answer = resolve(&gathered.facts(&registry, caller, argument, mode));
        if unpinned && let Ok(a) = &answer {
            self.answers().put(mode, a, generation, registry.clone());
        }
        Some(answer.map_err(pin_error))
    }

    /// The resolution together with the walk drawn for a person.
    pub fn explain(
        &self,
        caller: &Caller,
        path: &str,
        argument: Option<&str>,
        mode: Mode,
    ) -> Result<(Answer, Explanation), BerthError> {
        let gathered = self.gather(caller, path)?;
        let registry = self.registry();
        let facts = gathered.facts(&registry, caller, argument, mode);
        let answer = resolve(&facts).map_err(pin_error)?;
        let explanation = berth_core::explain::explain(&facts, &answer);
        Ok((answer, explanation))
    }

    /// The workspaces that may learn a conversation with these cwds (docs/reference.md,
    /// "Conversations").
    pub fn claim(&self, caller: &Caller, cwds: &[String]) -> Result<Vec<String>, BerthError> {
        if cwds.is_empty() {
            return Err(BerthError::invalid("give at least one --cwd"));
        }
        let registry = self.registry();
        let mut per_cwd: Vec<BTreeSet<String>> = Vec::with_capacity(cwds.len());
        for cwd in cwds {
            let g = self.gather_cwd(caller, cwd)?;
            per_cwd.push(berth_core::claim::claimers_from_walk(
                &g.directory,
                &g.walk,
                &registry,
            ));
        }
        let all: Vec<String> = registry.workspaces.keys().cloned().collect();
        Ok(berth_core::claim::conversation_workspaces(&per_cwd, &all))
    }
}

/// `path` as a plain absolute path (only the root and names: no `..`), with `.`, repeated and
/// trailing slashes dropped, and no longer than a path may be; `None` otherwise.
pub(crate) fn plain_absolute(path: PathBuf) -> Option<PathBuf> {
    if !path.is_absolute() || path.as_os_str().len() > 4096 {
        return None;
    }
    let normal = normalized(&path);
    match normal {
        _ if has_dotdot(&normal) => None,
        Cow::Borrowed(_) => Some(path),
        Cow::Owned(plain) => Some(plain),
    }
}

/// A pin that names no workspace: `invalid` when it cannot be a name at all, else `not-found`.
fn pin_error(e: berth_core::resolve::ResolveError) -> BerthError {
    if e.is_invalid_name() {
        BerthError::invalid(e.to_string())
    } else {
        BerthError::not_found(e.to_string())
    }
}
