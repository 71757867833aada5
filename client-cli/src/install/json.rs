//! Editing a client's JSON config: berth's MCP server entry and its hook
//! handlers, in each client's shape. Pure: a parsed document in, the same
//! document changed out. Key order is kept (`serde_json` with
//! `preserve_order`), so unrelated keys come back where they were.

use serde_json::{Map, Value, json};

use super::is_berth_hook_command;

/// One hook berth registers: the client's event name and the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// The event, spelled as the client spells it (`SessionStart`, `stop`, ...).
    pub event: &'static str,
    /// The shell command.
    pub command: String,
}

/// What berth puts into one JSON file.
#[derive(Debug, Clone)]
pub enum JsonEdit {
    /// An MCP server entry under `container` (`mcpServers` or `servers`):
    /// berth's own, named `berth`, or a server wrapped by `berth exec`
    /// under the user's name for it. Keys of an existing entry that berth
    /// does not set (say, a user's `env`) are kept.
    Mcp {
        /// The object holding the servers.
        container: &'static str,
        /// The entry's name.
        name: String,
        /// The entry.
        entry: Map<String, Value>,
    },
    /// Claude Code's shape, also read by Codex and VS Code:
    /// `hooks.<Event>[] = {"hooks": [{"type": "command", "command"}]}`.
    NestedHooks(Vec<Hook>),
    /// Cursor's: `version: 1`, `hooks.<event>[] = {"command"}`.
    FlatHooks(Vec<Hook>),
    /// The Copilot CLI's: `version: 1`, `hooks.<event>[] = {"type": "command", "bash", "timeoutSec"}`
    /// (`"powershell"` instead of `"bash"` on Windows, where Copilot runs that one).
    CopilotHooks(Vec<Hook>, CopilotShell),
}

/// Which of its two command keys the Copilot CLI runs on the platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopilotShell {
    /// `"bash"`: Linux and macOS.
    Bash,
    /// `"powershell"`: Windows.
    Powershell,
}

impl CopilotShell {
    fn key(self) -> &'static str {
        match self {
            CopilotShell::Bash => "bash",
            CopilotShell::Powershell => "powershell",
        }
    }
}

/// The name of berth's MCP server entry in every client.
pub const SERVER_NAME: &str = "berth";

/// Parses a config file's text. Empty text (a file a client created and
/// never filled) is an empty object; anything but an object is refused.
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("its top level is not a JSON object".into()),
        Err(e) => Err(format!(
            "it is not valid JSON ({e}); comments and trailing commas are not supported"
        )),
    }
}

/// How an existing file is laid out, so a rewrite looks like the original.
#[derive(Debug, Clone)]
pub struct Layout {
    indent: String,
    trailing_newline: bool,
}

impl Layout {
    /// The layout of `text`: the indentation of its first indented line
    /// (two spaces when there is none) and whether it ends with a newline.
    pub fn of(text: &str) -> Layout {
        let indent = text
            .lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|ws| !ws.is_empty())
            .unwrap_or("  ")
            .to_string();
        Layout {
            indent,
            trailing_newline: text.is_empty() || text.ends_with('\n'),
        }
    }
}

/// Serialises `root` in `layout`.
pub fn render(root: &Map<String, Value>, layout: &Layout) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(layout.indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    root.serialize(&mut ser).expect("JSON values serialise");
    let mut s = String::from_utf8(out).expect("serde_json writes UTF-8");
    if layout.trailing_newline {
        s.push('\n');
    }
    s
}

/// Adds or updates berth's part of the document.
pub fn install(root: &mut Map<String, Value>, edit: &JsonEdit) -> Result<(), String> {
    match edit {
        JsonEdit::Mcp {
            container,
            name,
            entry,
        } => {
            let servers = object_at(root, container)?;
            if name != SERVER_NAME && servers.get(name).is_some_and(|e| !is_exec_entry(e)) {
                return Err(format!(
                    "it already has a server named \"{name}\" that berth did not register"
                ));
            }
            match servers.get_mut(name) {
                Some(Value::Object(existing)) => {
                    for (k, v) in entry {
                        existing.insert(k.clone(), v.clone());
                    }
                }
                _ => {
                    servers.insert(name.clone(), Value::Object(entry.clone()));
                }
            }
        }
        JsonEdit::NestedHooks(hooks) => {
            for h in hooks {
                let list = array_at(object_at(root, "hooks")?, h.event)?;
                set_hook(list, h, Shape::Nested)?;
            }
        }
        JsonEdit::FlatHooks(hooks) | JsonEdit::CopilotHooks(hooks, _) => {
            let shape = match edit {
                JsonEdit::CopilotHooks(_, shell) => Shape::Copilot(*shell),
                _ => Shape::Flat,
            };
            if !root.contains_key("version") {
                root.insert("version".into(), json!(1));
            }
            for h in hooks {
                let list = array_at(object_at(root, "hooks")?, h.event)?;
                set_hook(list, h, shape)?;
            }
        }
    }
    Ok(())
}

/// Removes berth's part of the document, and what install added around it.
///
/// `origin` is the file as it was before berth's install (its backup), when
/// known. An object or list emptied by the removal is dropped unless the
/// origin had it (a user's `"servers": {}` stays), and the `version` key the
/// hook files need is dropped when the origin lacked it and no hooks remain.
/// Without an origin every emptied container goes: the file was berth's.
pub fn uninstall(
    root: &mut Map<String, Value>,
    edit: &JsonEdit,
    origin: Option<&Map<String, Value>>,
) -> Result<(), String> {
    let had = |path: &[&str]| {
        let Some(mut v) = origin.map(|o| o as &Map<String, Value>) else {
            return false;
        };
        for (i, key) in path.iter().enumerate() {
            match v.get(*key) {
                Some(Value::Object(m)) => v = m,
                Some(_) => return i + 1 == path.len(),
                None => return false,
            }
        }
        true
    };
    match edit {
        JsonEdit::Mcp {
            container, name, ..
        } => {
            let Some(servers) = root.get_mut(*container) else {
                return Ok(());
            };
            let servers = servers
                .as_object_mut()
                .ok_or_else(|| format!("\"{container}\" is not an object"))?;
            let ours = name == SERVER_NAME || servers.get(name).is_some_and(is_exec_entry);
            if ours
                && servers.shift_remove(name).is_some()
                && servers.is_empty()
                && !had(&[container])
            {
                root.shift_remove(*container);
            }
        }
        JsonEdit::NestedHooks(hooks)
        | JsonEdit::FlatHooks(hooks)
        | JsonEdit::CopilotHooks(hooks, _) => {
            let shape = match edit {
                JsonEdit::NestedHooks(_) => Shape::Nested,
                JsonEdit::FlatHooks(_) => Shape::Flat,
                JsonEdit::CopilotHooks(_, shell) => Shape::Copilot(*shell),
                _ => Shape::Flat,
            };
            let Some(all) = root.get_mut("hooks") else {
                return Ok(());
            };
            let all = all.as_object_mut().ok_or("\"hooks\" is not an object")?;
            let mut removed_any = false;
            for h in hooks {
                let Some(list) = all.get_mut(h.event) else {
                    continue;
                };
                let list = list
                    .as_array_mut()
                    .ok_or_else(|| format!("\"hooks.{}\" is not a list", h.event))?;
                if remove_hooks(list, shape) {
                    removed_any = true;
                    if list.is_empty() && !had(&["hooks", h.event]) {
                        all.shift_remove(h.event);
                    }
                }
            }
            if removed_any && all.is_empty() && !had(&["hooks"]) {
                root.shift_remove("hooks");
            }
            // Install adds `version` to a hook file that lacked it.
            if removed_any
                && shape != Shape::Nested
                && origin.is_some()
                && !had(&["version"])
                && root.get("hooks").is_none_or(|h| {
                    h.as_object().is_some_and(|m| {
                        m.values().all(|l| l.as_array().is_some_and(Vec::is_empty))
                    })
                })
            {
                root.shift_remove("version");
            }
        }
    }
    Ok(())
}

/// Whether a server entry runs `berth exec`: its command is a program named
/// `berth` and its first argument `exec`. Such entries are berth's to
/// update and remove; any other entry under the same name is the user's.
pub fn is_exec_entry(entry: &Value) -> bool {
    let program = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let name = program.rsplit(['/', '\\']).next().unwrap_or("");
    let first = entry
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str);
    matches!(name, "berth" | "berth.exe") && first == Some("exec")
}

/// Whether `container` holds any of berth's servers: its own or one that
/// `berth exec` wraps. A backup stays while any is left.
pub fn holds_servers(root: &Map<String, Value>, container: &str) -> bool {
    root.get(container)
        .and_then(Value::as_object)
        .is_some_and(|m| m.iter().any(|(k, v)| k == SERVER_NAME || is_exec_entry(v)))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Nested,
    Flat,
    Copilot(CopilotShell),
}

impl Shape {
    /// The key holding a handler's command.
    fn command_key(self) -> &'static str {
        match self {
            Shape::Copilot(shell) => shell.key(),
            _ => "command",
        }
    }

    fn handler(self, command: &str) -> Value {
        match self {
            Shape::Nested => json!({"type": "command", "command": command}),
            Shape::Flat => json!({"command": command}),
            Shape::Copilot(shell) => {
                json!({"type": "command", shell.key(): command, "timeoutSec": 30})
            }
        }
    }
}

fn object_at<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    parent
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| format!("\"{key}\" is not an object"))
}

fn array_at<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Vec<Value>, String> {
    parent
        .entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| format!("\"hooks.{key}\" is not a list"))
}

/// Whether a handler object is one of berth's.
fn is_ours(handler: &Value, shape: Shape) -> bool {
    handler
        .get(shape.command_key())
        .and_then(Value::as_str)
        .is_some_and(is_berth_hook_command)
}

/// Puts berth's handler for `hook` into an event's list: the first of
/// berth's handlers there is updated in place, any further ones removed,
/// and one is appended when there was none.
fn set_hook(list: &mut Vec<Value>, hook: &Hook, shape: Shape) -> Result<(), String> {
    let mut found = false;
    let key = shape.command_key();
    let mut keep = |h: &mut Value| -> bool {
        if !is_ours(h, shape) {
            return true;
        }
        if found {
            return false;
        }
        found = true;
        h[key] = Value::String(hook.command.clone());
        true
    };
    match shape {
        Shape::Nested => {
            for group in list.iter_mut() {
                if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                    let before = inner.len();
                    inner.retain_mut(&mut keep);
                    if inner.is_empty() && before > 0 {
                        // Emptied of a duplicate of ours: drop the group below.
                        *group = Value::Null;
                    }
                }
            }
            list.retain(|g| !g.is_null());
        }
        Shape::Flat | Shape::Copilot(_) => list.retain_mut(&mut keep),
    }
    if !found {
        let handler = shape.handler(&hook.command);
        list.push(match shape {
            Shape::Nested => json!({"hooks": [handler]}),
            _ => handler,
        });
    }
    Ok(())
}

/// Removes berth's handlers from an event's list (and groups they leave
/// empty); whether anything was removed.
fn remove_hooks(list: &mut Vec<Value>, shape: Shape) -> bool {
    let before = serde_json::to_string(list).unwrap_or_default();
    match shape {
        Shape::Nested => {
            list.retain_mut(|group| {
                let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let n = inner.len();
                inner.retain(|h| !is_ours(h, shape));
                !(inner.is_empty() && n > 0)
            });
        }
        Shape::Flat | Shape::Copilot(_) => list.retain(|h| !is_ours(h, shape)),
    }
    serde_json::to_string(list).unwrap_or_default() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested() -> JsonEdit {
        JsonEdit::NestedHooks(vec![
            Hook {
                event: "SessionStart",
                command: "/b/berth-hook session-start".into(),
            },
            Hook {
                event: "Stop",
                command: "/b/berth-hook stop".into(),
            },
        ])
    }

    fn check_round_trip(original: &str, edit: &JsonEdit) {
        let mut doc = parse(original).unwrap();
        install(&mut doc, edit).unwrap();
        let once = doc.clone();
        install(&mut doc, edit).unwrap();
        assert_eq!(
            render(&doc, &Layout::of(original)),
            render(&once, &Layout::of(original))
        );
        uninstall(&mut doc, edit, None).unwrap();
        assert_eq!(render(&doc, &Layout::of(original)), original);
    }

    #[test]
    fn hooks_go_in_and_out_beside_other_hooks() {
        let original = "{\n    \"model\": \"x\",\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"say done\"\n                    }\n                ]\n            }\n        ]\n    }\n}\n";
        check_round_trip(original, &nested());
    }

    #[test]
    fn a_moved_hook_program_is_updated_not_duplicated() {
        let mut doc = parse("{}").unwrap();
        install(&mut doc, &nested()).unwrap();
        let moved = JsonEdit::NestedHooks(vec![Hook {
            event: "Stop",
            command: "/new/berth-hook stop".into(),
        }]);
        install(&mut doc, &moved).unwrap();
        assert_eq!(doc["hooks"]["Stop"].as_array().unwrap().len(), 1);
        assert_eq!(
            doc["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/new/berth-hook stop"
        );
    }

    #[test]
    fn mcp_entries_keep_the_users_extra_keys() {
        let mut doc =
            parse(r#"{"mcpServers": {"berth": {"command": "old", "env": {"A": "1"}}}}"#).unwrap();
        let edit = JsonEdit::Mcp {
            container: "mcpServers",
            name: SERVER_NAME.into(),
            entry: json!({"command": "new", "args": []})
                .as_object()
                .unwrap()
                .clone(),
        };
        install(&mut doc, &edit).unwrap();
        assert_eq!(doc["mcpServers"]["berth"]["env"]["A"], "1");
        assert_eq!(doc["mcpServers"]["berth"]["command"], "new");
    }

    #[test]
    fn wrong_shapes_are_refused() {
        assert!(parse("[1]").is_err());
        assert!(parse("{ // comment\n}").is_err());
        let mut doc = parse(r#"{"hooks": []}"#).unwrap();
        assert!(install(&mut doc, &nested()).is_err());
    }

    #[test]
    fn layout_follows_the_original() {
        assert_eq!(Layout::of("{\n\t\"a\": 1\n}").indent, "\t");
        assert!(!Layout::of("{}").trailing_newline);
    }
}
