//! The MCP tools' meaning (SPEC §5, §7). `berth-mcp` only forwards a call's
//! name and arguments; everything a tool decides is decided here, for the
//! session the call belongs to.

use std::path::{Path, PathBuf};

use berth_proto::text::{escaped, escaped_lines};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::device::Device;
use crate::error::BerthError;
use crate::files::{Folder, ToolOutput, move_path};
use crate::qualify::{Own, Place, QualifyCtx, Target, own_folder, qualify, unknown_first_segment};
use crate::registry::Home;
use crate::resolve::{Answer, Mode};
use crate::sessions::Session;

/// The tools, in the order `tools/list` shows them. The list never changes
/// at run time (some clients ignore `tools/list_changed`).
pub const TOOLS: &[&str] = &[
    "device_context",
    "use_workspace",
    "list_workspaces",
    "ls",
    "read",
    "write",
    "edit",
    "move",
    "delete",
    "search",
];

/// A tool's reply, with the session's pin afterwards.
#[derive(Debug)]
pub struct ToolReply {
    /// What the tool produced.
    pub output: ToolOutput,
    /// Whether it failed.
    pub is_error: bool,
    /// The session's pin after the call.
    pub pin: Answer,
}

#[derive(Deserialize, Default)]
struct Common {
    #[serde(default)]
    workspace: Option<String>,
}

#[derive(Deserialize)]
struct UseArgs {
    name: String,
    #[serde(default)]
    allow_overlap: bool,
}

#[derive(Deserialize)]
struct PathArg {
    path: String,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
struct EditArgs {
    path: String,
    old: String,
    new: String,
}

#[derive(Deserialize)]
struct MoveArgs {
    from: String,
    to: String,
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    path: Option<String>,
}

fn parse<T: for<'de> Deserialize<'de>>(tool: &str, args: &Value) -> Result<T, BerthError> {
    T::deserialize(args).map_err(|e| BerthError::invalid(format!("{tool}: bad arguments: {e}")))
}

impl Device {
    /// Runs `tool` for session `id`. A failing tool is a reply with
    /// `is_error`, never a protocol error, so the model reads why. The
    /// session's first result starts with the notice, when there is one.
    pub fn call_tool(
        &self,
        id: &str,
        tool: &str,
        arguments: &str,
    ) -> Result<ToolReply, BerthError> {
        let session = self.session(id)?;
        let args: Value = if arguments.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(arguments)
                .map_err(|e| BerthError::invalid(format!("{tool}: arguments are not JSON: {e}")))?
        };
        let result = self.run_tool(&session, tool, &args);
        let notice = self.take_notice(id)?;
        let (mut output, is_error) = match result {
            // File tools' texts quote names as they are on disk: escaped, lines
            // kept. Only `read` returns a file's content, which stays exact.
            Ok(mut out) => {
                if tool != "read" {
                    out.text = escaped_lines(&out.text).into_owned();
                }
                (out, false)
            }
            Err(e) => (
                ToolOutput {
                    // One line quoting paths as they came: escaped whole for the text.
                    text: format!("{}\n", escaped(&e.message)),
                    structured: json!({"error": e.message, "code": e.code.as_str()}),
                },
                true,
            ),
        };
        if let Some(n) = notice {
            output.text = format!("{n}\n\n{}", output.text);
        }
        let pin = self.session(id).map(|s| s.pin).unwrap_or(session.pin);
        Ok(ToolReply {
            output,
            is_error,
            pin,
        })
    }

    fn run_tool(&self, s: &Session, tool: &str, args: &Value) -> Result<ToolOutput, BerthError> {
        if !args.is_object() {
            return Err(BerthError::invalid(format!(
                "{tool}: arguments must be a JSON object"
            )));
        }
        let common: Common = parse(tool, args)?;
        // Tools that do not depend on the session's workspace answer even when its pin fails.
        let answer = || self.call_answer(s, common.workspace.as_deref());
        match tool {
            "device_context" => self.device_context(s, &answer()?),
            "list_workspaces" => self.list_workspaces_tool(),
            "use_workspace" => self.use_workspace_tool(s, parse(tool, args)?),
            "ls" => {
                let a: PathArg = parse(tool, args)?;
                match self.target(s, &answer()?, &a.path)? {
                    Target::Workspaces => self.list_workspaces_tool(),
                    Target::In { place, rel } => {
                        let f = self.folder(s, &place)?;
                        self.refuse_unknown_first(&a.path, &f, false)?;
                        f.ls(&rel)
                    }
                }
            }
            "read" => {
                let a: PathArg = parse(tool, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                f.read(&rel)
            }
            "write" => {
                let a: WriteArgs = parse(tool, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                self.refuse_unknown_first(&a.path, &f, true)?;
                f.write(&rel, &a.content)
            }
            "edit" => {
                let a: EditArgs = parse(tool, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                f.edit(&rel, &a.old, &a.new)
            }
            "delete" => {
                let a: PathArg = parse(tool, args)?;
                let (f, rel) = self.file_target(s, &answer()?, &a.path)?;
                f.delete(&rel)
            }
            "move" => {
                let a: MoveArgs = parse(tool, args)?;
                let answer = answer()?;
                let (ff, fr) = self.file_target(s, &answer, &a.from)?;
                let (tf, tr) = self.file_target(s, &answer, &a.to)?;
                self.refuse_unknown_first(&a.to, &tf, true)?;
                move_path(&ff, &fr, &tf, &tr)
            }
            "search" => {
                let a: SearchArgs = parse(tool, args)?;
                let path = a.path.unwrap_or_else(|| "./".into());
                let (f, rel) = self.file_target(s, &answer()?, &path)?;
                f.search(&rel, &a.query)
            }
            other => Err(BerthError::invalid(format!(
                "no tool {other:?}; tools: {}",
                TOOLS.join(", ")
            ))),
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

    fn device_context(&self, s: &Session, answer: &Answer) -> Result<ToolOutput, BerthError> {
        let reg = self.registry();
        let folder = match own_folder(answer, reg.workspaces.len()) {
            Own::Home(ws) => Some(format!("{ws}/")),
            Own::Scratch => Some("./".to_string()),
            Own::Ambiguous => None,
        };
        let folder_abs = match own_folder(answer, reg.workspaces.len()) {
            Own::Home(ws) => Some(self.place_root(s, &Place::Home(ws))?.0),
            Own::Scratch => Some(self.scratch_dir(&s.id)),
            Own::Ambiguous => None,
        };
        let names: Vec<&str> = reg.names();
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        // The text escapes every path, name and note; the structured content keeps them exact.
        let shown = |p: &Path| escaped(&p.display().to_string()).into_owned();
        let mut text = format!(
            "workspace: {} (reason: {})\n",
            escaped(&answer.workspace),
            answer.reason
        );
        if let Some(p) = &answer.project {
            text.push_str(&format!("project: {}\n", shown(p)));
        }
        if let Some(p) = &answer.proposal {
            text.push_str(&format!(
                "proposal: {} (not approved on this device)\n",
                escaped(p)
            ));
        }
        match (&folder, &folder_abs) {
            (Some(q), Some(abs)) => text.push_str(&format!(
                "folder: {} ({}); unqualified paths go here\n",
                escaped(q),
                shown(abs)
            )),
            _ => text.push_str(
                "folder: none; this session's workspace is only a default, so qualify paths as <workspace>/<path>\n",
            ),
        }
        text.push_str(&format!("workspaces: {}\n", escaped(&names.join(", "))));
        for n in &answer.notes {
            text.push_str(&format!("note: {}\n", escaped(n)));
        }
        Ok(ToolOutput {
            text,
            structured: json!({
                "workspace": answer.workspace,
                "reason": answer.reason.as_str(),
                "project": path(&answer.project),
                "proposal": answer.proposal,
                "folder": folder_abs.map(|p| p.display().to_string()),
                "workspaces": names,
                "notes": answer.notes,
            }),
        })
    }

    fn list_workspaces_tool(&self) -> Result<ToolOutput, BerthError> {
        let (active, views) = self.list_workspaces()?;
        let text = views
            .iter()
            .map(|v| {
                let mut line = format!(
                    "{}/{}  home: {}\n",
                    escaped(&v.name),
                    if v.active { " (active)" } else { "" },
                    escaped(&v.home.display().to_string())
                );
                if let Some(e) = &v.error {
                    line.push_str(&format!("  error: {}\n", escaped(e)));
                }
                for n in &v.notes {
                    line.push_str(&format!("  note: {}\n", escaped(n)));
                }
                line
            })
            .collect();
        Ok(ToolOutput {
            text,
            structured: json!({
                "active": active,
                "workspaces": views.iter().map(|v| {
                    let mut w = json!({
                        "name": v.name,
                        "active": v.active,
                        "home": v.home.display().to_string(),
                        "home_mode": v.home_mode,
                        "roots": v.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>(),
                    });
                    // Present only when there is something to say, as in `berth workspace list`.
                    if let Some(e) = &v.error {
                        w["error"] = e.clone().into();
                    }
                    if !v.notes.is_empty() {
                        w["notes"] = v.notes.clone().into();
                    }
                    w
                }).collect::<Vec<_>>(),
            }),
        })
    }

    fn use_workspace_tool(&self, s: &Session, a: UseArgs) -> Result<ToolOutput, BerthError> {
        let done = self.use_workspace(&s.caller, &a.name, a.allow_overlap, Mode::Agent)?;
        if done.folder.is_some() {
            self.repin(&s.id, done.answer.clone())?;
        }
        // A higher rule (BERTH_WORKSPACE) can still outrank the file just written.
        let switched = done.folder.is_some() && done.answer.workspace == a.name;
        let mut text = match &done.folder {
            Some(f) if switched => format!(
                "this session now uses workspace {} for {} (reason: {})\n",
                a.name,
                escaped(&f.display().to_string()),
                done.answer.reason
            ),
            Some(f) => format!(
                "{} now belongs to workspace {}, but this session stays on workspace {} (reason: {}, which outranks the project file)\n",
                escaped(&f.display().to_string()),
                a.name,
                done.answer.workspace,
                done.answer.reason
            ),
            None => format!(
                "workspace {} {}; this session has no project, so nothing was switched: pass workspace \"{}\" on later calls\n",
                a.name,
                if done.created { "created" } else { "exists" },
                a.name
            ),
        };
        for n in &done.notes {
            text.push_str(&format!("note: {}\n", escaped(n)));
        }
        let opt = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        Ok(ToolOutput {
            text,
            structured: json!({
                "workspace": a.name,
                "folder": opt(&done.folder),
                "created": done.created,
                "root_added": done.root_added,
                "project_file": opt(&done.project_file),
                "switched": switched,
                "notes": done.notes,
            }),
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
                crate::homes::home_of(e, &self.data_dir, &ctx_guard)
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
                let home = crate::homes::home_of(entry, &self.data_dir, &self.guard_ctx())
                    .map_err(|e| crate::homes::refused_home(entry, &e))?;
                Ok((home, matches!(entry.home, Home::Managed)))
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
        caller: &crate::caller::Caller,
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
