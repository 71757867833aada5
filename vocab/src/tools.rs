//! The MCP tools, in one table: each tool's name, description, effect, a
//! correct call, and the types its arguments ([`crate::tool_args`]) and
//! results ([`crate::tool_results`]) take. `berth-mcp` lists the tools and
//! their schemas from here, and the daemon dispatches on [`Tool`] and checks
//! arguments against the same schemas, so neither side can have a tool, an
//! argument or a schema the other lacks. The list never changes at run time
//! (some clients ignore `tools/list_changed`).

use std::sync::LazyLock;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use crate::tool_args::{Edit, FilePath, LsPath, Move, Only, Search, UseWorkspace, Write};
use crate::tool_results::{
    DeviceContext, Done, FileText, Found, Ls, Moved, Outcome, UsedWorkspace, WorkspaceList, Written,
};

/// A JSON schema, as an object.
pub type JsonObject = Map<String, Value>;

/// One MCP tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `device_context`: the session's workspace, why, and its folder.
    DeviceContext,
    /// `use_workspace`: set the workspace of the session's project.
    UseWorkspace,
    /// `list_workspaces`: the workspaces on this device.
    ListWorkspaces,
    /// `ls`: list a folder, or `/` for the workspaces.
    Ls,
    /// `read`: read a text file.
    Read,
    /// `write`: write a whole text file.
    Write,
    /// `edit`: replace exact text in a file.
    Edit,
    /// `move`: move or rename a file or folder.
    Move,
    /// `delete`: delete a file or folder.
    Delete,
    /// `search`: lines containing a text under a folder.
    Search,
}

/// What a tool does to the files and the registry, which MCP clients show
/// as the tool's annotations (none of berth's tools reaches an open world).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing.
    ReadOnly,
    /// Only adds (a workspace, a root, a project file).
    Additive,
    /// May replace or remove what is there; `idempotent` when repeating the
    /// same call changes nothing more.
    Destructive {
        /// Whether the same call twice has the effect of one.
        idempotent: bool,
    },
}

impl Tool {
    /// Every tool, in the order `tools/list` shows them.
    pub const ALL: [Tool; 10] = [
        Tool::DeviceContext,
        Tool::UseWorkspace,
        Tool::ListWorkspaces,
        Tool::Ls,
        Tool::Read,
        Tool::Write,
        Tool::Edit,
        Tool::Move,
        Tool::Delete,
        Tool::Search,
    ];

    /// Its name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Tool::DeviceContext => "device_context",
            Tool::UseWorkspace => "use_workspace",
            Tool::ListWorkspaces => "list_workspaces",
            Tool::Ls => "ls",
            Tool::Read => "read",
            Tool::Write => "write",
            Tool::Edit => "edit",
            Tool::Move => "move",
            Tool::Delete => "delete",
            Tool::Search => "search",
        }
    }

    /// The tool called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// "no tool X; tools: ..." for a name no tool has.
    pub fn unknown(name: &str) -> String {
        let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        format!("no tool {name:?}; tools: {}", names.join(", "))
    }

    /// What the model reads about the tool.
    pub fn description(self) -> &'static str {
        match self {
            Tool::DeviceContext => {
                "Which workspace this session belongs to and why, its project and any unapproved proposal, its folder (where unqualified paths go), the workspaces on this device, and notes. Call it first. Paths in other tools may be qualified as <workspace>/<path>."
            }
            Tool::UseWorkspace => {
                "Set the workspace this session's project uses, after asking the user. In a project: creates the workspace if new, approves the project folder, writes .berth/workspace.json (committing it is the user's choice) and moves this session to it. If another workspace's root overlaps the folder nothing changes until you repeat the call with allow_overlap after the user agrees. Without a project: only creates the workspace; pass it as `workspace` on later calls."
            }
            Tool::ListWorkspaces => {
                "The workspaces on this device with their homes, roots and which is active. Qualify a path as <workspace>/<path> to reach one of them."
            }
            Tool::Ls => {
                "List a folder. Paths may be qualified as <workspace>/<path> (a workspace name wins over a folder of the same name); \"./<path>\" and an unqualified path are in this session's own folder, and an unqualified first segment that is neither a workspace nor there is refused as a likely typo; \"/\" lists the workspaces. Returned paths are qualified."
            }
            Tool::Read => {
                "Read a text file. The path may be qualified as <workspace>/<path>; an unqualified path is in this session's own folder."
            }
            Tool::Write => {
                "Write a whole text file atomically, creating parent folders. The path may be qualified as <workspace>/<path> (a workspace name wins over a folder of the same name); an unqualified path is in this session's own folder. A new top-level folder there is created only on purpose, as ./<folder>/...: an unqualified first segment that is neither a workspace nor already there is refused as a likely typo of a workspace name. Returns the qualified path."
            }
            Tool::Edit => {
                "Replace the exact text `old` with `new` in a file. The path may be qualified as <workspace>/<path>; an unqualified path is in this session's own folder. Returns the qualified path."
            }
            Tool::Move => {
                "Move or rename a file or folder, also between workspaces. Both paths may be qualified as <workspace>/<path>; unqualified paths are in this session's own folder. A target whose unqualified first segment is neither a workspace nor already there is refused (use ./<folder>/... to create a new folder on purpose). Returns the qualified paths."
            }
            Tool::Delete => {
                "Delete a file or folder. The path may be qualified as <workspace>/<path>; an unqualified path is in this session's own folder. Returns the qualified path."
            }
            Tool::Search => {
                "Search text files under a folder for lines containing `query` (bounded; binary files skipped). The path may be qualified as <workspace>/<path>; unqualified or omitted, it is this session's own folder. Matches carry qualified paths."
            }
        }
    }

    /// What the tool does to the files and the registry.
    pub fn effect(self) -> Effect {
        match self {
            Tool::DeviceContext | Tool::ListWorkspaces | Tool::Ls | Tool::Read | Tool::Search => {
                Effect::ReadOnly
            }
            Tool::UseWorkspace => Effect::Additive,
            Tool::Write => Effect::Destructive { idempotent: true },
            Tool::Edit | Tool::Move | Tool::Delete => Effect::Destructive { idempotent: false },
        }
    }

    /// A correct call's arguments, as JSON, which an argument error shows.
    pub fn example(self) -> &'static str {
        match self {
            Tool::DeviceContext | Tool::ListWorkspaces => "{}",
            Tool::UseWorkspace => r#"{"name": "notes"}"#,
            Tool::Ls => r#"{"path": "./"}"#,
            Tool::Read => r#"{"path": "./todo.md"}"#,
            Tool::Write => r#"{"path": "./todo.md", "content": "- buy milk"}"#,
            Tool::Edit => r#"{"path": "./todo.md", "old": "milk", "new": "bread"}"#,
            Tool::Move => r#"{"from": "./todo.md", "to": "./done.md"}"#,
            Tool::Delete => r#"{"path": "./done.md"}"#,
            Tool::Search => r#"{"query": "milk", "path": "./"}"#,
        }
    }

    /// The `inputSchema`: the schema of the tool's argument type.
    pub fn input_schema(self) -> JsonObject {
        match self {
            Tool::DeviceContext | Tool::ListWorkspaces => input::<Only>(),
            Tool::UseWorkspace => input::<UseWorkspace>(),
            Tool::Ls => input::<LsPath>(),
            Tool::Read | Tool::Delete => input::<FilePath>(),
            Tool::Write => input::<Write>(),
            Tool::Edit => input::<Edit>(),
            Tool::Move => input::<Move>(),
            Tool::Search => input::<Search>(),
        }
    }

    /// The whole schema of the tool's results, from their types: its own
    /// result or a failure, both with the notice and notes every result may
    /// carry. berth-mcp declares no `outputSchema`
    /// (docs/decisions/0033-tools-declare-no-output-schema.md); tests check
    /// real results against this one, and docs/reference.md describes it.
    pub fn result_schema(self) -> JsonObject {
        match self {
            Tool::DeviceContext => output::<DeviceContext>(),
            Tool::UseWorkspace => output::<UsedWorkspace>(),
            Tool::ListWorkspaces => output::<WorkspaceList>(),
            Tool::Ls => output::<Ls>(),
            Tool::Read => output::<FileText>(),
            Tool::Write => output::<Written>(),
            Tool::Edit | Tool::Delete => output::<Done>(),
            Tool::Move => output::<Moved>(),
            Tool::Search => output::<Found>(),
        }
    }

    /// Refuses a missing or mistyped argument, as its input schema declares
    /// them, with a message that names it and shows a correct call, so a
    /// model can fix its call at once rather than read a deserializer's words.
    pub fn check_arguments(self, args: &Value) -> Result<(), String> {
        let bad = |problem: String| {
            format!(
                "{tool}: {problem}. A correct call: {tool} {example}",
                tool = self.name(),
                example = self.example()
            )
        };
        let Some(object) = args.as_object() else {
            return Err(bad(format!(
                "the arguments must be a JSON object, not {args}"
            )));
        };
        for arg in &ARGUMENTS[self as usize] {
            match object.get(&arg.name) {
                None | Some(Value::Null) if arg.required => {
                    return Err(bad(format!(
                        "missing argument `{}` ({})",
                        arg.name,
                        arg.wanted()
                    )));
                }
                Some(v) if !v.is_null() && !arg.fits(v) => {
                    return Err(bad(format!(
                        "argument `{}` must be {}, not {v}",
                        arg.name,
                        arg.wanted()
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// One argument, as a tool's input schema declares it.
#[derive(Debug)]
struct Argument {
    name: String,
    required: bool,
    /// Its JSON types besides `null`: "string", "boolean", ...
    types: Vec<String>,
}

impl Argument {
    fn fits(&self, v: &Value) -> bool {
        let ty = match v {
            Value::Bool(_) => "boolean",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => "null",
        };
        self.types.iter().any(|t| t == ty)
    }

    /// The types in words: "a string", "true or false".
    fn wanted(&self) -> String {
        let words: Vec<String> = self
            .types
            .iter()
            .map(|t| match t.as_str() {
                "boolean" => "true or false".to_string(),
                "object" | "array" => format!("an {t}"),
                t => format!("a {t}"),
            })
            .collect();
        words.join(" or ")
    }
}

/// Each tool's arguments (by `Tool as usize`), read once from its schema.
static ARGUMENTS: LazyLock<Vec<Vec<Argument>>> = LazyLock::new(|| {
    Tool::ALL
        .iter()
        .map(|t| arguments(&t.input_schema()))
        .collect()
});

fn arguments(schema: &JsonObject) -> Vec<Argument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let types = match p.get("type") {
                Some(Value::String(t)) => vec![t.clone()],
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect(),
                _ => Vec::new(),
            };
            Argument {
                name: name.clone(),
                required: required.contains(&name.as_str()),
                types: types.into_iter().filter(|t| t != "null").collect(),
            }
        })
        .collect()
}

/// A type's root schema in the JSON Schema dialect MCP names (2020-12),
/// without the top-level title and description (the Rust type's name and
/// doc, which are noise to a model) and without `$schema`: 2020-12 is what
/// MCP assumes when it is absent, and every tool would repeat it.
fn root_schema<T: JsonSchema>(settings: SchemaSettings) -> JsonObject {
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut object = match Value::from(schema) {
        Value::Object(object) => object,
        // `true` or `false`: a type that takes anything, or nothing.
        other => Map::from_iter([("allOf".to_string(), Value::Array(vec![other]))]),
    };
    object.remove("title");
    object.remove("description");
    object.remove("$schema");
    object
}

/// What a type accepts, for arguments.
fn input<T: JsonSchema>() -> JsonObject {
    root_schema::<T>(SchemaSettings::draft2020_12())
}

/// What a type writes, for results. The root says `object` too, which
/// clients that keep only object schemas require.
fn output<T: JsonSchema>() -> JsonObject {
    let mut schema = root_schema::<Outcome<T>>(SchemaSettings::draft2020_12().for_serialize());
    schema.insert("type".into(), "object".into());
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    #[test]
    fn every_name_reads_back_as_its_tool_and_no_two_tools_share_one() {
        for tool in Tool::ALL {
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
        }
        let names: std::collections::BTreeSet<_> = Tool::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names.len(), Tool::ALL.len());
        assert_eq!(Tool::from_name("rm"), None);
        assert!(Tool::unknown("rm").starts_with("no tool \"rm\"; tools: device_context, "));
    }

    #[test]
    fn every_input_schema_is_an_object_and_its_example_passes_the_check() {
        for tool in Tool::ALL {
            let schema = tool.input_schema();
            assert_eq!(schema.get("type"), Some(&json!("object")), "{tool:?}");
            let example: Value = serde_json::from_str(tool.example()).unwrap();
            assert_eq!(tool.check_arguments(&example), Ok(()), "{tool:?}");
        }
    }

    /// The example deserialises into the argument type the schema came from.
    #[test]
    fn every_example_reads_into_its_argument_type() {
        fn reads<T: DeserializeOwned>(tool: Tool) {
            let example: Value = serde_json::from_str(tool.example()).unwrap();
            serde_json::from_value::<T>(example).unwrap_or_else(|e| panic!("{tool:?}: {e}"));
        }
        reads::<Only>(Tool::DeviceContext);
        reads::<UseWorkspace>(Tool::UseWorkspace);
        reads::<Only>(Tool::ListWorkspaces);
        reads::<LsPath>(Tool::Ls);
        reads::<FilePath>(Tool::Read);
        reads::<Write>(Tool::Write);
        reads::<Edit>(Tool::Edit);
        reads::<Move>(Tool::Move);
        reads::<FilePath>(Tool::Delete);
        reads::<Search>(Tool::Search);
    }

    #[test]
    fn the_check_names_a_missing_or_mistyped_argument_and_shows_a_correct_call() {
        let e = Tool::Write
            .check_arguments(&json!({"path": "a"}))
            .unwrap_err();
        assert_eq!(
            e,
            r#"write: missing argument `content` (a string). A correct call: write {"path": "./todo.md", "content": "- buy milk"}"#
        );
        let e = Tool::UseWorkspace
            .check_arguments(&json!({"name": "x", "allow_overlap": "yes"}))
            .unwrap_err();
        assert!(
            e.starts_with(
                r#"use_workspace: argument `allow_overlap` must be true or false, not "yes""#
            ),
            "{e}"
        );
        let e = Tool::Ls
            .check_arguments(&json!({"path": "./", "workspace": 1}))
            .unwrap_err();
        assert!(
            e.starts_with("ls: argument `workspace` must be a string, not 1"),
            "{e}"
        );
        let e = Tool::Read.check_arguments(&json!([1])).unwrap_err();
        assert!(
            e.starts_with("read: the arguments must be a JSON object, not [1]"),
            "{e}"
        );
        // An optional argument may be null or absent.
        assert_eq!(
            Tool::Search.check_arguments(&json!({"query": "q", "path": null})),
            Ok(())
        );
    }
}
