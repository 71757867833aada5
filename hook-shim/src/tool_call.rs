//! A pre-tool payload's tool call: which files a client's own write tool would create,
//! change, move or delete. Pure: the payload's JSON object in, the files out, or why the call
//! is not judged (docs/reference.md, "The native-tool guard").
//!
//! The tool's name is `tool_name` (Claude Code, Codex, Gemini CLI, and the Copilot CLI
//! registered as `PreToolUse`) or `toolName` (the Copilot CLI's `preToolUse`); its arguments
//! are `tool_input` or `toolArgs`, an object or a JSON text holding one. Judged:
//! - `Write`, `Edit`, `MultiEdit` (Claude Code): `file_path`;
//! - `NotebookEdit` (Claude Code): `notebook_path`;
//! - `create`, `edit` (the Copilot CLI): `path`;
//! - `write_file`, `replace` (Gemini CLI): `file_path`;
//! - `apply_patch` (Codex): every file of the patch in `command` (see [`crate::patch`]);
//! - a shell call (`Bash`, as Codex names its `exec_command`) that runs `apply_patch`: every
//!   file of each patch in it, relative ones against a leading `cd <dir> &&` (see
//!   [`crate::shell_patch`]).
//!
//! Every other tool (reads, searches, other shell commands) is not judged: reading across
//! projects is normal, and a shell command cannot be read reliably.

use serde_json::{Map, Value};

use crate::patch;
use crate::payload::kind;
use crate::shell_patch::shell_patch;

/// The names clients give a shell tool call.
const SHELL_TOOLS: [&str; 5] = [
    "Bash",
    "exec_command",
    "shell",
    "local_shell",
    "run_shell_command",
];

/// What a pre-tool call is, for the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCall {
    /// A write tool and the files it would touch, as the payload spells them.
    Writes {
        /// The tool's name.
        tool: String,
        /// Its files, relative ones against the payload's cwd.
        targets: Vec<String>,
    },
    /// A tool the guard does not judge (a read, a shell command, another client's tool).
    NotJudged(String),
    /// A write tool whose arguments could not be read: the guard allows it, and logs why.
    Unreadable {
        /// The tool's name.
        tool: String,
        /// Why.
        why: String,
    },
}

/// The tool call in a payload object.
pub fn tool_call(obj: &Map<String, Value>) -> ToolCall {
    let tool = ["tool_name", "toolName"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .unwrap_or("")
        .to_string();
    let keys: &[&str] = match tool.as_str() {
        "Write" | "Edit" | "MultiEdit" | "write_file" | "replace" => &["file_path", "path"],
        "NotebookEdit" => &["notebook_path", "file_path"],
        "create" | "edit" => &["path", "file_path"],
        "apply_patch" => &[],
        t if SHELL_TOOLS.contains(&t) => return shell_call(obj, tool),
        _ => return ToolCall::NotJudged(tool),
    };
    let args = match arguments(obj) {
        Ok(a) => a,
        Err(why) => return ToolCall::Unreadable { tool, why },
    };
    if tool == "apply_patch" {
        let text = match &args {
            Value::String(s) => Some(s.as_str()),
            Value::Object(m) => ["command", "input", "patch"]
                .iter()
                .find_map(|k| command_text(m.get(*k)?)),
            _ => None,
        };
        let Some(text) = text else {
            return ToolCall::Unreadable {
                tool,
                why: "no patch text in its arguments".into(),
            };
        };
        return match patch::parse(text) {
            Ok(ops) => ToolCall::Writes {
                tool,
                targets: patch::targets(&ops),
            },
            Err(e) => ToolCall::Unreadable {
                tool,
                why: e.to_string(),
            },
        };
    }
    let path = keys
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .filter(|p| !p.is_empty());
    match path {
        Some(p) => ToolCall::Writes {
            tool,
            targets: vec![p.to_string()],
        },
        None => ToolCall::Unreadable {
            tool,
            why: format!("no {} in its arguments", keys[0]),
        },
    }
}

/// A shell call: judged only when it runs `apply_patch`.
fn shell_call(obj: &Map<String, Value>, tool: String) -> ToolCall {
    let Ok(Value::Object(args)) = arguments(obj) else {
        return ToolCall::NotJudged(tool);
    };
    let Some(command) = ["command", "cmd"]
        .iter()
        .find_map(|k| command_text(args.get(*k)?))
    else {
        return ToolCall::NotJudged(tool);
    };
    let Some(found) = shell_patch(command) else {
        return ToolCall::NotJudged(tool);
    };
    let mut targets = Vec::new();
    let mut why = None;
    for text in &found.patches {
        match patch::parse(text) {
            Ok(ops) => targets.extend(patch::targets(&ops)),
            Err(e) => why = Some(e.to_string()),
        }
    }
    if targets.is_empty() {
        return ToolCall::Unreadable {
            tool,
            why: why.unwrap_or_else(|| "its patch names no file".into()),
        };
    }
    if let Some(dir) = &found.dir {
        for t in &mut targets {
            *t = std::path::Path::new(dir)
                .join(&*t)
                .to_string_lossy()
                .into_owned();
        }
    }
    ToolCall::Writes { tool, targets }
}

/// The tool's arguments: `tool_input` or `toolArgs`, parsed when it is JSON text.
fn arguments(obj: &Map<String, Value>) -> Result<Value, String> {
    let Some(args) = ["tool_input", "toolArgs"].iter().find_map(|k| obj.get(*k)) else {
        return Err("no tool_input or toolArgs".into());
    };
    match args {
        Value::Object(_) => Ok(args.clone()),
        // The Copilot CLI has sent its arguments as JSON text; a bare string is a patch.
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Ok(args.clone()),
        },
        other => Err(format!("its arguments are a JSON {}", kind(other))),
    }
}

/// A patch's text: a string, or the last string of an argument list (`["apply_patch", "…"]`).
fn command_text(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Array(a) => a.iter().rev().find_map(Value::as_str),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value) -> ToolCall {
        tool_call(v.as_object().unwrap())
    }

    fn writes(tool: &str, targets: &[&str]) -> ToolCall {
        ToolCall::Writes {
            tool: tool.into(),
            targets: targets.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn claude_codes_write_tools_name_their_file() {
        let w =
            json!({"tool_name": "Write", "tool_input": {"file_path": "/p/a.rs", "content": "x"}});
        assert_eq!(call(w), writes("Write", &["/p/a.rs"]));
        let e = json!({"tool_name": "Edit", "tool_input": {"file_path": "b.rs", "old_string": "a", "new_string": "b", "replace_all": false}});
        assert_eq!(call(e), writes("Edit", &["b.rs"]));
        let m = json!({"tool_name": "MultiEdit", "tool_input": {"file_path": "/p/c", "edits": []}});
        assert_eq!(call(m), writes("MultiEdit", &["/p/c"]));
        let n = json!({"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "/p/n.ipynb", "new_source": ""}});
        assert_eq!(call(n), writes("NotebookEdit", &["/p/n.ipynb"]));
    }

    #[test]
    fn copilots_tools_name_their_path_in_either_registration() {
        let camel = json!({"sessionId": "s", "toolName": "create", "toolArgs": {"path": "/p/new", "file_text": "x"}});
        assert_eq!(call(camel), writes("create", &["/p/new"]));
        let text = json!({"toolName": "edit", "toolArgs": "{\"path\":\"/p/e\",\"old_str\":\"a\",\"new_str\":\"b\"}"});
        assert_eq!(call(text), writes("edit", &["/p/e"]));
        let pascal = json!({"session_id": "s", "tool_name": "edit", "tool_input": {"path": "/p/e", "old_str": "a", "new_str": "b"}});
        assert_eq!(call(pascal), writes("edit", &["/p/e"]));
    }

    #[test]
    fn geminis_tools_name_their_file() {
        let w = json!({"hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": {"file_path": "/p/g", "content": ""}});
        assert_eq!(call(w), writes("write_file", &["/p/g"]));
        let r = json!({"tool_name": "replace", "tool_input": {"file_path": "/p/r", "old_string": "", "new_string": ""}});
        assert_eq!(call(r), writes("replace", &["/p/r"]));
    }

    #[test]
    fn codexs_apply_patch_names_every_file_of_its_patch() {
        let patch = "*** Begin Patch\n*** Add File: own.rs\n+x\n*** Update File: /a/lib.rs\n*** Move to: /b/lib.rs\n*** End Patch\n";
        let c = json!({"tool_name": "apply_patch", "tool_input": {"command": patch}});
        assert_eq!(
            call(c),
            writes("apply_patch", &["own.rs", "/a/lib.rs", "/b/lib.rs"])
        );
        let argv =
            json!({"tool_name": "apply_patch", "tool_input": {"command": ["apply_patch", patch]}});
        assert_eq!(
            call(argv),
            writes("apply_patch", &["own.rs", "/a/lib.rs", "/b/lib.rs"])
        );
        let broken =
            json!({"tool_name": "apply_patch", "tool_input": {"command": "*** Add File: x"}});
        assert!(matches!(call(broken), ToolCall::Unreadable { .. }));
    }

    #[test]
    fn codexs_shell_call_that_runs_apply_patch_names_every_file_of_its_patches() {
        let heredoc = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: own.txt\n+x\n*** Update File: /a/lib.rs\n*** Move to: /b/lib.rs\n@@\n apply_patch in a hunk\n*** End Patch\nPATCH\n";
        let c = json!({"tool_name": "Bash", "tool_input": {"command": heredoc}});
        assert_eq!(
            call(c),
            writes("Bash", &["own.txt", "/a/lib.rs", "/b/lib.rs"])
        );
        let cd = format!("cd /w/alpha && {heredoc}");
        let c = json!({"tool_name": "Bash", "tool_input": {"command": cd}});
        let own = std::path::Path::new("/w/alpha").join("own.txt");
        assert_eq!(
            call(c),
            writes("Bash", &[own.to_str().unwrap(), "/a/lib.rs", "/b/lib.rs"])
        );
        let argv =
            json!({"tool_name": "exec_command", "tool_input": {"cmd": ["bash", "-lc", heredoc]}});
        assert!(matches!(call(argv), ToolCall::Writes { .. }));
        let broken = json!({"tool_name": "Bash", "tool_input": {"command": "apply_patch <<E\n*** Begin Patch\n*** Add File:\nE"}});
        assert!(matches!(call(broken), ToolCall::Unreadable { .. }));
    }

    #[test]
    fn codexs_code_mode_hands_its_nested_calls_over_as_direct_ones() {
        // Codex 0.171, gpt-6.2-sol: its `exec` tool ran `await tools.apply_patch(patch)` and
        // `await tools.exec_command({cmd})` (the throwaway home shortened to /home/u).
        let nested = json!({"session_id":"01a24dcc-1786-7ff3-8211-30bf2c59037a","turn_id":"01a24dcc-1837-7e81-a8cf-a271ab1088d6","transcript_path":"/home/u/.codex/sessions/2026/12/06/rollout-2026-12-06T23-59-10-01a24dcc-1786-7ff3-8211-30bf2c59037a.jsonl","cwd":"/home/u/shop","hook_event_name":"PreToolUse","model":"gpt-6.2-sol","permission_mode":"bypassPermissions","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: /home/u/alpha/cm.txt\n+x\n*** End Patch\n"},"tool_use_id":"exec-f268ef76-a21c-4e64-9e09-aea2f62eced3"});
        assert_eq!(
            call(nested),
            writes("apply_patch", &["/home/u/alpha/cm.txt"])
        );
        let shell = json!({"session_id":"01a24dcc-3e62-7003-b48e-53653381a17e","turn_id":"01a24dcc-3e91-7590-86ba-812cd15c1f27","cwd":"/home/u/shop","hook_event_name":"PreToolUse","model":"gpt-6.2-sol","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: /home/u/alpha/sh.txt\n+x\n*** End Patch\nPATCH\n"},"tool_use_id":"exec-d310d00d-9485-45fc-b0f7-9230acd0cf16"});
        assert_eq!(call(shell), writes("Bash", &["/home/u/alpha/sh.txt"]));
        // The `exec` call itself reaches no hook; were it handed over, its script is not read.
        let exec = json!({"tool_name": "exec", "tool_input": {"input": "await tools.apply_patch(\"*** Begin Patch\\n\")"}});
        assert_eq!(call(exec), ToolCall::NotJudged("exec".into()));
    }

    #[test]
    fn reads_shell_commands_and_unknown_tools_are_not_judged() {
        for tool in [
            "Read",
            "Bash",
            "Grep",
            "view",
            "shell",
            "run_shell_command",
            "read_file",
        ] {
            let c = json!({"tool_name": tool, "tool_input": {"file_path": "/p", "command": "rm -rf /p"}});
            assert_eq!(call(c), ToolCall::NotJudged(tool.into()));
        }
        assert_eq!(call(json!({})), ToolCall::NotJudged(String::new()));
    }

    #[test]
    fn a_write_tool_without_readable_arguments_says_why() {
        for v in [
            json!({"tool_name": "Write"}),
            json!({"tool_name": "Write", "tool_input": 7}),
            json!({"tool_name": "Write", "tool_input": {"content": "x"}}),
            json!({"tool_name": "Write", "tool_input": {"file_path": ""}}),
            json!({"tool_name": "apply_patch", "tool_input": {}}),
        ] {
            match call(v.clone()) {
                ToolCall::Unreadable { why, .. } => assert!(!why.is_empty(), "{v}"),
                other => panic!("{v}: {other:?}"),
            }
        }
    }
}
