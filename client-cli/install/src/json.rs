//! Editing a client's JSON config: berth's MCP server entry and its hook
//! handlers, in each client's shape. Pure: a parsed [`Doc`] in, the same
//! tree changed in place, so only berth's entries change and every other
//! byte (comments, commas, layout) stays
//! (docs/decisions/0043-json-with-comments-edited-in-place.md).

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstObjectProp};
use serde_json::{Map, Value, json};

use super::is_berth_hook_command;
pub use super::jsonc::{Doc, Reader};

/// One hook berth registers: the client's event name and the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// The event, spelled as the client spells it (`SessionStart`, `stop`, ...).
    pub event: &'static str,
    /// The shell command.
    pub command: String,
    /// Which tools it runs for (Claude Code's and Codex's `matcher`, in the handler's
    /// group); `None` for an event that has no tools.
    pub matcher: Option<&'static str>,
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

/// What a config file's text means, read as `reader` reads it (empty text
/// is an empty object). For reading an entry; edits go through a
/// [`Doc`].
pub fn parse(text: &str, reader: Reader) -> Result<Map<String, Value>, String> {
    Doc::parse(text, reader).map(|d| d.value())
}

/// Adds or updates berth's part of the document, changing no other node.
pub fn install(doc: &Doc, edit: &JsonEdit) -> Result<(), String> {
    let root = doc.object();
    match edit {
        JsonEdit::Mcp {
            container,
            name,
            entry,
        } => {
            let servers = object_at(&root, container, container)?;
            let existing = servers.get(name);
            if name != SERVER_NAME
                && existing
                    .as_ref()
                    .and_then(CstObjectProp::to_serde_value)
                    .is_some_and(|e| !is_exec_entry(&e))
            {
                return Err(format!(
                    "it already has a server named \"{name}\" that berth did not register"
                ));
            }
            match existing {
                Some(prop) => match prop.object_value() {
                    // Only the keys berth sets, and only where they differ.
                    Some(obj) => {
                        for (k, v) in entry {
                            match obj.get(k) {
                                Some(p) if p.to_serde_value().as_ref() == Some(v) => {}
                                Some(p) => p.set_value(input(v)),
                                None => {
                                    obj.append(k, input(v));
                                }
                            }
                        }
                    }
                    None => prop.set_value(input(&Value::Object(entry.clone()))),
                },
                None => {
                    servers.append(name, input(&Value::Object(entry.clone())));
                }
            }
        }
        JsonEdit::NestedHooks(hooks) => {
            for h in hooks {
                let list = array_at(&object_at(&root, "hooks", "hooks")?, h.event)?;
                set_hook(&list, h, Shape::Nested);
            }
        }
        JsonEdit::FlatHooks(hooks) | JsonEdit::CopilotHooks(hooks, _) => {
            let shape = match edit {
                JsonEdit::CopilotHooks(_, shell) => Shape::Copilot(*shell),
                _ => Shape::Flat,
            };
            if root.get("version").is_none() {
                root.append("version", CstInputValue::Number("1".into()));
            }
            for h in hooks {
                let list = array_at(&object_at(&root, "hooks", "hooks")?, h.event)?;
                set_hook(&list, h, shape);
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
    doc: &Doc,
    edit: &JsonEdit,
    origin: Option<&Map<String, Value>>,
) -> Result<(), String> {
    let had = |path: &[&str]| {
        let Some(mut v) = origin else {
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
    let Some(root) = doc.existing_object() else {
        return Ok(());
    };
    match edit {
        JsonEdit::Mcp {
            container, name, ..
        } => {
            let Some(prop) = root.get(container) else {
                return Ok(());
            };
            let servers = prop
                .object_value()
                .ok_or_else(|| format!("\"{container}\" is not an object"))?;
            let Some(entry) = servers.get(name) else {
                return Ok(());
            };
            let ours =
                name == SERVER_NAME || entry.to_serde_value().is_some_and(|e| is_exec_entry(&e));
            if ours {
                entry.remove();
                if servers.properties().is_empty() && !had(&[container]) {
                    prop.remove();
                }
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
            let Some(all_prop) = root.get("hooks") else {
                return Ok(());
            };
            let all = all_prop
                .object_value()
                .ok_or("\"hooks\" is not an object")?;
            let mut removed_any = false;
            for h in hooks {
                let Some(list_prop) = all.get(h.event) else {
                    continue;
                };
                let list = list_prop
                    .array_value()
                    .ok_or_else(|| format!("\"hooks.{}\" is not a list", h.event))?;
                if remove_hooks(&list, shape) {
                    removed_any = true;
                    if list.elements().is_empty() && !had(&["hooks", h.event]) {
                        list_prop.remove();
                    }
                }
            }
            if removed_any && all.properties().is_empty() && !had(&["hooks"]) {
                all_prop.remove();
            }
            // Install adds `version` to a hook file that lacked it.
            let no_hooks_left = || {
                root.get("hooks")
                    .and_then(|h| h.to_serde_value())
                    .is_none_or(|h| {
                        h.as_object().is_some_and(|m| {
                            m.values().all(|l| l.as_array().is_some_and(Vec::is_empty))
                        })
                    })
            };
            if removed_any
                && shape != Shape::Nested
                && origin.is_some()
                && !had(&["version"])
                && no_hooks_left()
                && let Some(version) = root.get("version")
            {
                version.remove();
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

/// The object under `key` in `parent`, appended empty when missing; `shown`
/// names it in the refusal of a value of another kind.
fn object_at(parent: &CstObject, key: &str, shown: &str) -> Result<CstObject, String> {
    let not_object = || format!("\"{shown}\" is not an object");
    match parent.get(key) {
        Some(prop) => prop.object_value().ok_or_else(not_object),
        None => parent
            .append(key, CstInputValue::Object(Vec::new()))
            .object_value()
            .ok_or_else(not_object),
    }
}

/// The list `hooks.<key>`, appended empty when missing.
fn array_at(hooks: &CstObject, key: &str) -> Result<CstArray, String> {
    let not_list = || format!("\"hooks.{key}\" is not a list");
    match hooks.get(key) {
        Some(prop) => prop.array_value().ok_or_else(not_list),
        None => hooks
            .append(key, CstInputValue::Array(Vec::new()))
            .array_value()
            .ok_or_else(not_list),
    }
}

/// A value as the tree's input.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(m) => {
            CstInputValue::Object(m.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// Whether a handler node is one of berth's.
fn is_ours(handler: &CstNode, shape: Shape) -> bool {
    handler
        .to_serde_value()
        .and_then(|h| h.get(shape.command_key()).cloned())
        .and_then(|c| c.as_str().map(is_berth_hook_command))
        .unwrap_or(false)
}

/// The handler lists of an event's list: the list itself (flat shapes), or
/// each group's `hooks` (Claude Code's), with the group.
fn handler_lists(list: &CstArray, shape: Shape) -> Vec<(CstArray, Option<CstNode>)> {
    match shape {
        Shape::Nested => list
            .elements()
            .into_iter()
            .filter_map(|group| {
                let inner = group.as_object()?.array_value("hooks")?;
                Some((inner, Some(group)))
            })
            .collect(),
        Shape::Flat | Shape::Copilot(_) => vec![(list.clone(), None)],
    }
}

/// Puts berth's handler for `hook` into an event's list: the first of
/// berth's handlers there is updated in place (its command only, when it
/// differs), any further ones removed, and one is appended when there was
/// none.
fn set_hook(list: &CstArray, hook: &Hook, shape: Shape) {
    let key = shape.command_key();
    let mut found = false;
    for (handlers, group) in handler_lists(list, shape) {
        let all = handlers.elements();
        let mut removed = 0;
        for h in &all {
            if !is_ours(h, shape) {
                continue;
            }
            if found {
                h.clone().remove();
                removed += 1;
                continue;
            }
            found = true;
            if let (Some(m), Some(g)) = (hook.matcher, group.as_ref().and_then(CstNode::as_object))
            {
                match g.get("matcher") {
                    Some(p) if p.to_serde_value().as_ref().and_then(Value::as_str) == Some(m) => {}
                    Some(p) => p.set_value(CstInputValue::String(m.into())),
                    None => {
                        g.insert(0, "matcher", CstInputValue::String(m.into()));
                    }
                }
            }
            if let Some(prop) = h.as_object().and_then(|o| o.get(key))
                && prop.to_serde_value().as_ref().and_then(Value::as_str)
                    != Some(hook.command.as_str())
            {
                prop.set_value(CstInputValue::String(hook.command.clone()));
            }
        }
        // Emptied of a duplicate of ours: the group goes too.
        if let Some(group) = group
            && removed > 0
            && removed == all.len()
        {
            group.remove();
        }
    }
    if !found {
        let handler = input(&shape.handler(&hook.command));
        list.append(match shape {
            Shape::Nested => {
                let mut group = Vec::new();
                if let Some(m) = hook.matcher {
                    group.push(("matcher".into(), CstInputValue::String(m.into())));
                }
                group.push(("hooks".into(), CstInputValue::Array(vec![handler])));
                CstInputValue::Object(group)
            }
            _ => handler,
        });
    }
}

/// Removes berth's handlers from an event's list (and groups they leave
/// empty); whether anything was removed.
fn remove_hooks(list: &CstArray, shape: Shape) -> bool {
    let mut removed_any = false;
    for (handlers, group) in handler_lists(list, shape) {
        let all = handlers.elements();
        let mut removed = 0;
        for h in &all {
            if is_ours(h, shape) {
                h.clone().remove();
                removed += 1;
            }
        }
        removed_any |= removed > 0;
        if let Some(group) = group
            && removed > 0
            && removed == all.len()
        {
            group.remove();
        }
    }
    removed_any
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Reader = Reader::plain("Claude Code");
    const JSONC: Reader = Reader::with_comments("VS Code");

    fn nested() -> JsonEdit {
        JsonEdit::NestedHooks(vec![
            Hook {
                event: "SessionStart",
                command: "/b/berth-hook session-start".into(),
                matcher: None,
            },
            Hook {
                event: "Stop",
                command: "/b/berth-hook stop".into(),
                matcher: None,
            },
        ])
    }

    fn server(container: &'static str) -> JsonEdit {
        JsonEdit::Mcp {
            container,
            name: SERVER_NAME.into(),
            entry: json!({"type": "stdio", "command": "/b/berth-mcp", "args": ["--cwd", "${workspaceFolder}"]})
                .as_object()
                .unwrap()
                .clone(),
        }
    }

    /// `edit` installed into `original`, then installed again, then uninstalled: the second
    /// install changes nothing and the uninstall gives back every byte. Returns the text while
    /// installed.
    fn check_round_trip(original: &str, edit: &JsonEdit, reader: Reader) -> String {
        let doc = Doc::parse(original, reader).unwrap();
        install(&doc, edit).unwrap();
        let once = doc.text();
        install(&doc, edit).unwrap();
        assert_eq!(doc.text(), once);
        uninstall(&doc, edit, None).unwrap();
        assert_eq!(doc.text(), original);
        once
    }

    #[test]
    fn hooks_go_in_and_out_beside_other_hooks() {
        let original = "{\n    \"model\": \"x\",\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"say done\"\n                    }\n                ]\n            }\n        ]\n    }\n}\n";
        check_round_trip(original, &nested(), PLAIN);
    }

    /// VS Code's documented `mcp.json` shape: a comment first, trailing commas. While berth is
    /// installed, the text is the original with berth's entry inserted and nothing else
    /// changed.
    #[test]
    fn a_commented_file_keeps_every_byte_outside_berths_entry() {
        let original = "// VS Code's MCP servers\n{\n  \"inputs\": [\n    /* none yet */\n  ],\n  \"servers\": {\n    // GitHub's\n    \"github\": {\n      \"type\": \"http\",\n      \"url\": \"https://api.githubcopilot.com/mcp/\", // remote\n    },\n  },\n}\n";
        let installed = check_round_trip(original, &server("servers"), JSONC);
        let entry = "    \"berth\": {\n      \"type\": \"stdio\",\n      \"command\": \"/b/berth-mcp\",\n      \"args\": [\"--cwd\", \"${workspaceFolder}\"],\n    },\n";
        assert_eq!(
            installed.replacen(entry, "", 1),
            original,
            "berth's entry, in the file's style, is the only change:\n{installed}"
        );
    }

    #[test]
    fn containers_berth_adds_follow_the_files_indentation_and_line_ends() {
        let installed = check_round_trip("{\r\n\t\"a\": 1\r\n}\r\n", &nested(), PLAIN);
        assert!(
            installed.contains("\r\n\t\"hooks\": {\r\n\t\t\"SessionStart\""),
            "{installed:?}"
        );
        assert!(
            !installed.replace("\r\n", "").contains('\n'),
            "{installed:?}"
        );
        let installed = check_round_trip("{\n    \"a\": 1\n}", &server("mcpServers"), PLAIN);
        assert!(
            installed.contains("\n    \"mcpServers\": {\n        \"berth\""),
            "{installed}"
        );
        assert!(
            installed.ends_with('}'),
            "no newline was added: {installed:?}"
        );
        // A file berth creates: two spaces, a final newline (its removal is the file's, see
        // `files`).
        let doc = Doc::parse("", JSONC).unwrap();
        install(&doc, &server("servers")).unwrap();
        let created = doc.text();
        assert!(
            created.starts_with("{\n  \"servers\": {\n    \"berth\": {\n"),
            "{created}"
        );
        assert!(created.ends_with("}\n"), "{created:?}");
    }

    #[test]
    fn a_pre_tool_hook_goes_in_with_its_matcher_and_out_byte_for_byte() {
        let pre = JsonEdit::NestedHooks(vec![Hook {
            event: "PreToolUse",
            command: "/b/berth-hook pre-tool".into(),
            matcher: Some("Write|Edit"),
        }]);
        let original = "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [{\"type\": \"command\", \"command\": \"lint\"}]\n      }\n    ]\n  }\n}\n";
        let installed = check_round_trip(original, &pre, PLAIN);
        let v = parse(&installed, PLAIN).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][1],
            json!({"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "/b/berth-hook pre-tool"}]})
        );
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        // A matcher changed by hand is set back; one removed is put back first.
        for text in [
            r#"{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "/b/berth-hook pre-tool"}]}]}}"#,
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "/b/berth-hook pre-tool"}]}]}}"#,
        ] {
            let doc = Doc::parse(text, PLAIN).unwrap();
            install(&doc, &pre).unwrap();
            assert_eq!(
                doc.value()["hooks"]["PreToolUse"][0]["matcher"],
                "Write|Edit",
                "{}",
                doc.text()
            );
        }
    }

    #[test]
    fn a_moved_hook_program_is_updated_not_duplicated() {
        let doc = Doc::parse("{}", PLAIN).unwrap();
        install(&doc, &nested()).unwrap();
        let moved = JsonEdit::NestedHooks(vec![Hook {
            event: "Stop",
            command: "/new/berth-hook stop".into(),
            matcher: None,
        }]);
        install(&doc, &moved).unwrap();
        let v = doc.value();
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 1);
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/new/berth-hook stop"
        );
    }

    #[test]
    fn a_second_handler_of_berths_is_removed_with_its_group() {
        let text = r#"{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "/a/berth-hook stop"}]},
  {"matcher": "x", "hooks": [{"type": "command", "command": "say hi"}]},
  {"hooks": [{"type": "command", "command": "/b/berth-hook stop"}]}
]}}"#;
        let doc = Doc::parse(text, PLAIN).unwrap();
        install(&doc, &nested()).unwrap();
        let v = doc.value();
        let stop = v["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2, "{}", doc.text());
        assert_eq!(stop[0]["hooks"][0]["command"], "/b/berth-hook stop");
        assert_eq!(stop[1]["matcher"], "x");
        uninstall(&doc, &nested(), None).unwrap();
        let v = doc.value();
        assert_eq!(
            v["hooks"]["Stop"].as_array().unwrap().len(),
            1,
            "{}",
            doc.text()
        );
    }

    #[test]
    fn mcp_entries_keep_the_users_extra_keys() {
        let text = r#"{"mcpServers": {"berth": {"command": "old", "env": {"A": "1"}}}}"#;
        let doc = Doc::parse(text, PLAIN).unwrap();
        let edit = JsonEdit::Mcp {
            container: "mcpServers",
            name: SERVER_NAME.into(),
            entry: json!({"command": "new", "args": []})
                .as_object()
                .unwrap()
                .clone(),
        };
        install(&doc, &edit).unwrap();
        let v = doc.value();
        assert_eq!(v["mcpServers"]["berth"]["env"]["A"], "1");
        assert_eq!(v["mcpServers"]["berth"]["command"], "new");
        assert!(
            doc.text().contains(r#""env": {"A": "1"}"#),
            "{}",
            doc.text()
        );
    }

    #[test]
    fn wrong_shapes_are_refused() {
        assert!(parse("[1]", PLAIN).is_err());
        assert!(parse("{ // comment\n}", PLAIN).is_err());
        assert!(parse("{ // comment\n}", JSONC).is_ok());
        let doc = Doc::parse(r#"{"hooks": []}"#, PLAIN).unwrap();
        assert_eq!(
            install(&doc, &nested()).unwrap_err(),
            "\"hooks\" is not an object"
        );
        let doc = Doc::parse(r#"{"servers": {"berth": 1}, "hooks": {"Stop": {}}}"#, PLAIN).unwrap();
        assert!(
            uninstall(&doc, &nested(), None)
                .unwrap_err()
                .contains("hooks.Stop")
        );
        install(&doc, &server("servers")).unwrap();
        assert_eq!(doc.value()["servers"]["berth"]["command"], "/b/berth-mcp");
    }
}
