//! The MCP tools' meaning (docs/reference.md, "Agent sessions" and "Qualified paths and file
//! tools"). `berth-mcp` only forwards a call's name and arguments; everything a tool decides is
//! decided here, for the session the call belongs to.

use std::path::PathBuf;

use berth_vocab::text::escaped;
use berth_vocab::tool_args;
use berth_vocab::tool_results::{
    DeviceContext, Done, Failure, FileText, Found, Listing, Ls, Moved, Reply, UsedWorkspace,
    WorkspaceList, WorkspaceView, Written, json_text,
};
use berth_vocab::tools::Tool;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::BerthError;
use crate::files::{Folder, ToolOutput, move_path};
use crate::ops::device::Device;
use crate::ops::live::{Peer, Session};
use berth_core::qualify::{
    Own, Place, QualifyCtx, Target, own_folder, qualify, unknown_first_segment,
};
use berth_core::registry::Home;
use berth_core::resolve::{Answer, Mode};

/// A tool's reply, with the session's pin afterwards.
#[derive(Debug)]
pub struct ToolReply {
    /// Text for the model: the notice, the notes and an error's message, as
    /// short prose; empty when there is none. The result's data is in
    /// `structured` only.
    pub text: String,
    /// The structured content, as JSON text: a `tool_results::Reply` of the
    /// tool's own type, or of `Failure`.
    pub structured_json: String,
    /// Whether it failed.
    pub is_error: bool,
    /// The session's pin after the call.
    pub pin: Answer,
}

fn parse<T: for<'de> Deserialize<'de>>(tool: &str, args: &Value) -> Result<T, BerthError> {
    T::deserialize(args)
        .map_err(|e| BerthError::bad_argument(format!("{tool}: bad arguments: {e}")))
}

/// A tool's own result, before the notice and the session's notes join it.
struct Out {
    /// The fields of one `tool_results` type, as JSON.
    fields: Value,
    /// Notes the tool itself reports.
    notes: Vec<String>,
}

impl Out {
    fn of<T: Serialize>(result: &T) -> Result<Out, BerthError> {
        Ok(Out {
            fields: to_value(result)?,
            notes: Vec::new(),
        })
    }
}

fn to_value<T: Serialize>(v: &T) -> Result<Value, BerthError> {
    serde_json::to_value(v).map_err(|e| BerthError::internal(format!("encoding a result: {e}")))
}

/// A file tool's structured output read back as its `tool_results` type, so
/// every result has the shape its tool's schema declares.
fn typed<T: for<'de> Deserialize<'de>>(out: ToolOutput) -> Result<T, BerthError> {
    serde_json::from_value(out.structured).map_err(|e| {
        BerthError::internal(format!(
            "a tool's result does not have its declared shape: {e}"
        ))
    })
}

impl Device {
    /// Runs `tool` for session `id`, which must belong to `peer`. A failing tool is a reply
    /// with `is_error`, never a protocol error, so the model reads why. The
    /// session's first result starts with the notice, when there is one.
    pub fn call_tool(
        &self,
        id: &str,
        peer: Peer,
        tool: &str,
        arguments: &str,
    ) -> Result<ToolReply, BerthError> {
        let session = self.own_session(id, peer)?;
        let args: Value = if arguments.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(arguments)
                .map_err(|e| BerthError::invalid(format!("{tool}: arguments are not JSON: {e}")))?
        };
        let result = self.run_tool(&session, tool, &args);
        let first = self.take_notice(id)?;
        let mut text = berth_core::notice::joined(
            first.notice.clone(),
            berth_core::notice::note_lines(&first.notes),
        )
        .map(|t| t + "\n")
        .unwrap_or_default();
        let (fields, mut notes, is_error) = match result {
            Ok(out) => (out.fields, out.notes, false),
            Err(e) => {
                // One line quoting paths as they came: escaped whole for the text.
                text.push_str(&format!("{}\n", escaped(&e.message)));
                for hint in &e.hints {
                    text.push_str(&format!("Hint: {}\n", escaped(hint)));
                }
                let failure = Failure {
                    error: e.message,
                    code: e.code.as_str().to_string(),
                    hints: e.hints,
                };
                (to_value(&failure)?, Vec::new(), true)
            }
        };
        for n in first.notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        let reply = Reply {
            result: fields,
            notice: first.notice,
            notes,
        };
        let pin = self.session(id).map(|s| s.pin).unwrap_or(session.pin);
        Ok(ToolReply {
            text,
            structured_json: json_text(&reply),
            is_error,
            pin,
        })
    }

    /// Whether this call can be answered from memory alone, with no I/O, so that it may run on
    /// an async worker without the pool's two thread hops
    /// (docs/decisions/0034-device-context-from-memory.md): `device_context` without a
    /// `workspace` argument, for a live session whose pin holds, whose first result takes no
    /// question from the store, and whose own folder is a managed home, its scratch folder or
    /// none. The session's part only moves one way (a pin error is cleared, a session becomes
    /// answered). The registry's can change before the call runs: a workspace deleted and made
    /// again with a home of its own between the two costs that one call a look at the data and
    /// temporary folders' names on the worker, never a wrong answer.
    pub fn answers_from_memory(&self, id: &str, tool: &str, arguments: &str) -> bool {
        // Large arguments are parsed on the pool: the worker's share of a call stays small.
        if Tool::from_name(tool) != Some(Tool::DeviceContext) || arguments.len() > 4096 {
            return false;
        }
        let no_workspace = arguments.trim().is_empty()
            || serde_json::from_str::<Value>(arguments).is_ok_and(|args| {
                match args.get("workspace") {
                    None | Some(Value::Null) => args.is_object(),
                    Some(Value::String(w)) => w.is_empty(),
                    Some(_) => false,
                }
            });
        if !no_workspace {
            return false;
        }
        let reg = self.registry();
        let own = match self.sessions().table().get(id) {
            Some(s) if s.pin_error.is_none() && (s.answered || s.client_session_id.is_empty()) => {
                own_folder(&s.pin, reg.workspaces.len())
            }
            _ => return false,
        };
        match own {
            Own::Home(ws) => reg
                .workspaces
                .get(&ws)
                .is_none_or(|e| matches!(e.home, Home::Managed)),
            Own::Scratch | Own::Ambiguous => true,
        }
    }

    fn run_tool(&self, s: &Session, name: &str, args: &Value) -> Result<Out, BerthError> {
        let tool = Tool::from_name(name).ok_or_else(|| BerthError::invalid(Tool::unknown(name)))?;
        tool.check_arguments(args)
            .map_err(BerthError::bad_argument)?;
        let common: tool_args::Only = parse(name, args)?;
        // Tools that do not depend on the session's workspace answer even when its pin fails.
        let answer = || self.call_answer(s, common.workspace.as_deref());
        match tool {
            Tool::DeviceContext => self.device_context(s, &answer()?),
            Tool::ListWorkspaces => Out::of(&self.workspace_list()?),
            Tool::UseWorkspace => self.use_workspace_tool(s, parse(name, args)?),
            Tool::Ls => {
                let a: tool_args::LsPath = parse(name, args)?;
                let ls = match self.target(s, &answer()?, &a.path)? {
                    Target::Workspaces => Ls::Workspaces(self.workspace_list()?),
                    Target::In { place, rel } => {
                        let f = self.folder(s, &place)?;
                        self.refuse_unknown_first(&a.path, &f, false)?;
                        Ls::Entries(typed::<Listing>(f.ls(&rel)?)?)
                    }
                };
                Out::of(&ls)
            }
            Tool::Read => {
                let a: tool_args::FilePath = parse(name, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                Out::of(&typed::<FileText>(f.read(&rel)?)?)
            }
            Tool::Write => {
                let a: tool_args::Write = parse(name, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                self.refuse_unknown_first(&a.path, &f, true)?;
                Out::of(&typed::<Written>(f.write(&rel, &a.content)?)?)
            }
            Tool::Edit => {
                let a: tool_args::Edit = parse(name, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                Out::of(&typed::<Done>(f.edit(&rel, &a.old, &a.new)?)?)
            }
            Tool::Delete => {
                let a: tool_args::FilePath = parse(name, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                Out::of(&typed::<Done>(f.delete(&rel)?)?)
            }
            Tool::Move => {
                let a: tool_args::Move = parse(name, args)?;
                let answer = answer()?;
                let (ff, fr) = self.file_target(s, &answer, &a.from)?;
                let (tf, tr) = self.file_target(s, &answer, &a.to)?;
                self.refuse_unknown_first(&a.to, &tf, true)?;
                Out::of(&typed::<Moved>(move_path(&ff, &fr, &tf, &tr)?)?)
            }
            Tool::Search => {
                let a: tool_args::Search = parse(name, args)?;
                let path = a.path.unwrap_or_else(|| "./".into());
                let (f, rel) = self.file_target(s, &answer()?, &path)?;
                Out::of(&typed::<Found>(f.search(&rel, &a.query)?)?)
            }
        }
    }

    /// The resolution a call runs under: the pin, or the tool's explicit
    /// `workspace` argument (reason `argument`).
    fn call_answer(&self, s: &Session, workspace: Option<&str>) -> Result<Answer, BerthError> {
        match workspace.filter(|w| !w.is_empty()) {
            None => self.pinned_answer(s),
            Some(w) => self.resolve(&s.caller, "", Some(w), Mode::Agent),
        }
    }

    fn device_context(&self, s: &Session, answer: &Answer) -> Result<Out, BerthError> {
        let reg = self.registry();
        let (folder, folder_meaning) = match own_folder(answer, reg.workspaces.len()) {
            Own::Home(ws) => (
                Some(self.place_root(s, &Place::Home(ws.clone()))?.0),
                format!(
                    "the home of workspace {ws}: unqualified paths and ./<path> go here, and {ws}/<path> reaches it too"
                ),
            ),
            Own::Scratch => (
                Some(self.scratch_dir(&s.id)),
                "this session's own scratch folder (the session has no project): unqualified paths and ./<path> go here. It is temporary: it is removed some time after the session ends (setting scratch.keep_hours), so keep what must last in a workspace, as <workspace>/<path>".to_string(),
            ),
            Own::Ambiguous => (
                None,
                "none: this session's workspace is only a default and several workspaces exist, so qualify every path as <workspace>/<path>".to_string(),
            ),
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        Ok(Out {
            notes: answer.notes.clone(),
            ..Out::of(&DeviceContext {
                workspace: answer.workspace.clone(),
                reason: answer.reason.as_str().to_string(),
                project: path(&answer.project),
                proposal: answer.proposal.clone(),
                folder: path(&folder),
                folder_meaning,
                workspaces: reg.names().iter().map(|n| n.to_string()).collect(),
            })?
        })
    }

    fn workspace_list(&self) -> Result<WorkspaceList, BerthError> {
        let (active, views) = self.list_workspaces()?;
        Ok(WorkspaceList {
            active,
            workspaces: views
                .into_iter()
                .map(|v| WorkspaceView {
                    name: v.name,
                    active: v.active,
                    home: v.home.display().to_string(),
                    home_mode: v.home_mode.to_string(),
                    roots: v.roots.iter().map(|r| r.display().to_string()).collect(),
                    error: v.error,
                    notes: v.notes,
                })
                .collect(),
        })
    }

    fn use_workspace_tool(
        &self,
        s: &Session,
        a: tool_args::UseWorkspace,
    ) -> Result<Out, BerthError> {
        let done = self.use_workspace(&s.caller, &a.name, a.allow_overlap, Mode::Agent)?;
        if done.folder.is_some() {
            self.repin(&s.id, done.answer.clone())?;
        }
        // A higher rule (BERTH_WORKSPACE) can still outrank the file just written.
        let switched = done.folder.is_some() && done.answer.workspace == a.name;
        let opt = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        Ok(Out {
            notes: done.notes.clone(),
            ..Out::of(&UsedWorkspace {
                workspace: a.name.clone(),
                folder: opt(&done.folder),
                created: done.created,
                root_added: done.root_added,
                project_file: opt(&done.project_file),
                switched,
                outcome: match &done.folder {
                    Some(f) if switched => format!(
                        "this session now uses workspace {} for {} (reason: {})",
                        a.name,
                        f.display(),
                        done.answer.reason
                    ),
                    Some(f) => format!(
                        "{} now belongs to workspace {}, but this session stays on workspace {} (reason: {}, which outranks the project file)",
                        f.display(),
                        a.name,
                        done.answer.workspace,
                        done.answer.reason
                    ),
                    None => format!(
                        "workspace {} {}; this session has no project, so nothing was switched: pass workspace \"{}\" on later calls",
                        a.name,
                        if done.created { "created" } else { "exists" },
                        a.name
                    ),
                },
            })?
        })
    }

    /// Qualifies a path for a session (or for a CLI caller with no session).
    pub(crate) fn target(
        &self,
        s: &Session,
        answer: &Answer,
        path: &str,
    ) -> Result<Target, BerthError> {
        let reg = self.registry();
        let ctx_guard = self.guard_ctx();
        let names: Vec<String> = reg.workspaces.keys().cloned().collect();
        let homes: Vec<(String, PathBuf)> = reg
            .workspaces
            .values()
            .filter_map(|e| {
                crate::ops::homes::home_of(e, self.data_dir(), &ctx_guard)
                    .ok()
                    .map(|h| (e.name.clone(), h))
            })
            .collect();
        let scratch = self.scratch_dir(&s.id);
        let ctx = QualifyCtx {
            names: &names,
            homes: &homes,
            own: own_folder(answer, names.len()),
            scratch: (!s.id.is_empty()).then_some(scratch.as_path()),
        };
        qualify(path, &ctx).map_err(|e| BerthError::refused(e.to_string()))
    }

    /// Refuses an unqualified path whose first segment is neither a workspace
    /// nor an entry of the session's own folder `f` (ADR 0019): most likely a
    /// mistyped workspace name, which must never become a new folder.
    /// `creates_only_folders`: `write` and `move` targets may still create a
    /// new top-level file; `ls` refuses any missing first segment.
    fn refuse_unknown_first(
        &self,
        path: &str,
        f: &Folder,
        creates_only_folders: bool,
    ) -> Result<(), BerthError> {
        let names: Vec<String> = self.registry().workspaces.keys().cloned().collect();
        match unknown_first_segment(path, &names, creates_only_folders, |first| {
            f.has_entry(first)
        }) {
            Some(e) => Err(BerthError::refused(e.to_string())),
            None => Ok(()),
        }
    }

    fn file_target(
        &self,
        s: &Session,
        answer: &Answer,
        path: &str,
    ) -> Result<(Folder, PathBuf), BerthError> {
        match self.target(s, answer, path)? {
            Target::Workspaces => Err(BerthError::refused(
                "/ is the list of workspaces, not a file; use <workspace>/<path>",
            )),
            Target::In { place, rel } => Ok((self.folder(s, &place)?, rel)),
        }
    }

    /// Warnings for a workspace just created as `name`: each home (of another
    /// workspace) holding a top-level entry of that name. A workspace name
    /// wins over a folder of the same name (ADR 0019), so from now on
    /// `name/...` reaches the new workspace in every session, no longer that
    /// folder. Only a look at names: nothing is opened or read.
    pub fn shadowed_folders(&self, name: &str) -> Vec<String> {
        let reg = self.registry();
        let guard = self.guard_ctx();
        reg.workspaces
            .values()
            .filter(|e| e.name != name)
            .filter_map(|e| {
                let home = crate::ops::homes::home_of(e, self.data_dir(), &guard).ok()?;
                let shadowed = home.join(name);
                std::fs::symlink_metadata(&shadowed).ok()?;
                Some(format!(
                    "workspace {ws}'s home has a top-level {name:?} ({path}): in sessions of {ws}, \"{name}/...\" now means the new workspace {name}; reach that folder as \"./{name}/...\" or \"{ws}/{name}/...\"",
                    ws = e.name,
                    path = shadowed.display(),
                ))
            })
            .collect()
    }

    /// The absolute folder of a place, and whether berth may create it.
    pub(crate) fn place_root(
        &self,
        s: &Session,
        place: &Place,
    ) -> Result<(PathBuf, bool), BerthError> {
        match place {
            Place::Scratch => Ok((self.scratch_dir(&s.id), true)),
            Place::Home(ws) => {
                let reg = self.registry();
                let entry = reg
                    .workspaces
                    .get(ws)
                    .ok_or_else(|| self.unknown_workspace(ws))?;
                // A managed home needs no guard, whose context reads the disk.
                if matches!(entry.home, Home::Managed) {
                    return Ok((
                        crate::ops::homes::managed_home(entry, self.data_dir()),
                        true,
                    ));
                }
                let home = crate::ops::homes::home_of(entry, self.data_dir(), &self.guard_ctx())
                    .map_err(|e| crate::ops::homes::refused_home(entry, &e))?;
                Ok((home, false))
            }
        }
    }

    fn folder(&self, s: &Session, place: &Place) -> Result<Folder, BerthError> {
        match place {
            Place::Home(ws) => {
                let reg = self.registry();
                let entry = reg
                    .workspaces
                    .get(ws)
                    .ok_or_else(|| self.unknown_workspace(ws))?;
                let home = self.open_home(entry)?;
                Ok(Folder::from_dir(home.dir, format!("{ws}/")))
            }
            Place::Scratch => Folder::open(&self.scratch_dir(&s.id), "./".to_string(), true),
        }
    }

    /// How `path` resolves for a CLI caller (`berth path`): as an agent
    /// session in `caller`'s directory would see it, without a scratch folder.
    pub fn qualify_for(
        &self,
        caller: &crate::ops::caller::Caller,
        path: &str,
    ) -> Result<(String, Option<PathBuf>, Option<String>), BerthError> {
        let answer = self.resolve(caller, "", None, Mode::Agent)?;
        let s = Session {
            id: String::new(),
            caller: caller.clone(),
            pin: answer.clone(),
            pin_error: None,
            client_session_id: String::new(),
            answered: true,
            // A stand-in that is never inserted: no process owns it.
            owner: Peer::default(),
            registration: 0,
            link: None,
            asked: true,
            question: Default::default(),
        };
        let target = self.target(&s, &answer, path)?;
        let (abs, ws) = match &target {
            Target::In {
                place: place @ Place::Home(ws),
                rel,
            } => {
                let root = self.place_root(&s, place)?.0;
                // Joining an empty path would add a trailing slash to the home itself.
                let abs = if rel.as_os_str().is_empty() {
                    root
                } else {
                    root.join(rel)
                };
                (Some(abs), Some(ws.clone()))
            }
            Target::Workspaces | Target::In { .. } => (None, None),
        };
        Ok((target.qualified(), abs, ws))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::caller::Caller;
    use crate::ops::sessions::Registration;
    use crate::store::Store;

    /// A device with workspace `managed` (its home in the data folder) rooted at `tree/m`, and
    /// `local` (a home of its own) rooted at `tree/l`.
    fn device(base: &std::path::Path) -> Device {
        let data = base.join("data");
        for d in ["data", "tree/m", "tree/l", "elsewhere"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        let store = Store::open(&data.join("berth.db")).unwrap();
        store.create_workspace("managed", &Home::Managed).unwrap();
        store
            .create_workspace("local", &Home::Local(base.join("elsewhere")))
            .unwrap();
        store.add_root("managed", &base.join("tree/m")).unwrap();
        store.add_root("local", &base.join("tree/l")).unwrap();
        Device::for_test(store, &data, None)
    }

    fn session(d: &Device, cwd: &std::path::Path, client_session_id: &str) -> String {
        let caller = Caller::new(cwd.to_str().unwrap(), "", "").unwrap();
        let reg = Registration {
            client_session_id: client_session_id.into(),
            ..Registration::default()
        };
        d.open_session(caller, reg).unwrap().id
    }

    #[test]
    fn only_a_device_context_that_needs_no_disk_is_answered_from_memory() {
        let t = tempfile::tempdir().unwrap();
        let base = crate::canonical::canonicalize(t.path()).unwrap();
        let d = device(&base);
        let managed = session(&d, &base.join("tree/m"), "");
        let from_memory = |id: &str, tool: &str, args: &str| d.answers_from_memory(id, tool, args);
        for args in [
            "",
            " ",
            "{}",
            r#"{"workspace":null}"#,
            r#"{"workspace":""}"#,
        ] {
            assert!(from_memory(&managed, "device_context", args), "{args:?}");
        }
        // Another workspace is resolved, which may walk the disk; bad arguments get their error
        // where every other call gets it.
        let padded = format!(r#"{{"pad":"{}"}}"#, "x".repeat(5000));
        for args in [
            r#"{"workspace":"local"}"#,
            r#"{"workspace":7}"#,
            "[]",
            "{",
            &padded,
        ] {
            assert!(!from_memory(&managed, "device_context", args), "{args:?}");
        }
        assert!(
            !from_memory(&managed, "ls", "{}"),
            "file tools touch the disk"
        );
        assert!(
            !from_memory("0123456789abcdef", "device_context", "{}"),
            "no such session"
        );
        // A home outside the data folder is checked by the home guard, which reads the disk.
        let local = session(&d, &base.join("tree/l"), "");
        assert!(!from_memory(&local, "device_context", "{}"));
        // The first result may take the session-start hook's question from the store; the
        // calls after it need nothing from there.
        let linked = session(&d, &base.join("tree/m"), "claude-1");
        assert!(!from_memory(&linked, "device_context", "{}"));
        d.call_tool(&linked, Peer::default(), "device_context", "{}")
            .unwrap();
        assert!(from_memory(&linked, "device_context", "{}"));
    }

    #[test]
    fn a_device_context_from_memory_answers_as_the_pool_would() {
        let t = tempfile::tempdir().unwrap();
        let base = crate::canonical::canonicalize(t.path()).unwrap();
        let d = device(&base);
        let id = session(&d, &base.join("tree/m"), "");
        assert!(d.answers_from_memory(&id, "device_context", "{}"));
        let reply = d
            .call_tool(&id, Peer::default(), "device_context", "{}")
            .unwrap();
        assert!(!reply.is_error, "{}", reply.text);
        let v: Value = serde_json::from_str(&reply.structured_json).unwrap();
        let home = base.join("data").join("workspaces").join("managed");
        assert_eq!(v["workspace"], "managed", "{v}");
        assert_eq!(v["folder"], home.to_str().unwrap(), "{v}");
        // The guarded path names the same folder for a managed home.
        let entry = d.registry().workspaces.get("managed").cloned().unwrap();
        assert_eq!(
            crate::ops::homes::home_of(&entry, d.data_dir(), &d.guard_ctx()).unwrap(),
            home
        );
    }
}
