//! Editing Codex's `config.toml`: the `[mcp_servers.berth]` table. Pure, and
//! through `toml_edit`, so comments, order and formatting of everything else
//! survive.
//!
//! Codex starts MCP servers with a stripped environment, so the table also
//! lists, in `env_vars`, the names of the variables that decide berth's
//! paths and pins: Codex forwards those from its own environment when they
//! are set (docs/decisions/0008-registering-clients.md).

use toml_edit::{Array, DocumentMut, Item, Table, Value, value};

use super::json::SERVER_NAME;

/// A server table berth writes (its own, or one `berth exec` wraps): its
/// name, command, arguments and forwarded variables.
#[derive(Debug, Clone)]
pub struct TomlServer {
    /// The table's name under `mcp_servers`.
    pub name: String,
    /// `command`.
    pub command: String,
    /// `args`.
    pub args: Vec<String>,
    /// `env_vars`: names Codex forwards from its environment.
    pub env_vars: Vec<String>,
}

/// Parses the file's text (empty text is an empty document).
pub fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|e| format!("it is not valid TOML: {}", e.to_string().trim()))
}

/// Adds or updates `[mcp_servers.<name>]`; other keys of an existing berth
/// table (say, `env`) are kept, and so are names the user added to its
/// `env_vars` (berth's missing ones are appended).
pub fn install(doc: &mut DocumentMut, server: &TomlServer) -> Result<(), String> {
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or("\"mcp_servers\" is not a table")?;
    let name = server.name.as_str();
    if name != SERVER_NAME && servers.get(name).is_some_and(|t| !is_exec_table(t)) {
        return Err(format!(
            "it already has a server named \"{name}\" that berth did not register"
        ));
    }
    let mut args = Array::new();
    for a in &server.args {
        args.push(a.as_str());
    }
    match servers.get_mut(name).and_then(Item::as_table_like_mut) {
        Some(t) => {
            let same = |item: Option<&Item>, want: &str| {
                item.and_then(Item::as_value)
                    .is_some_and(|v| canonical_value(v) == want)
            };
            let want_cmd = canonical_value(&Value::from(server.command.as_str()));
            if !same(t.get("command"), &want_cmd) {
                t.insert("command", value(server.command.as_str()));
            }
            let want_args = canonical_value(&Value::Array(args.clone()));
            if !same(t.get("args"), &want_args) {
                t.insert("args", value(args));
            }
            match t.get_mut("env_vars") {
                None => {
                    t.insert("env_vars", value(names(&server.env_vars)));
                }
                Some(item) => {
                    let have = item.as_array_mut().ok_or_else(|| {
                        format!("\"mcp_servers.{name}.env_vars\" is not an array")
                    })?;
                    for name in &server.env_vars {
                        if !have.iter().any(|v| v.as_str() == Some(name)) {
                            have.push(name.as_str());
                        }
                    }
                }
            }
        }
        None => {
            let mut t = Table::new();
            t.insert("command", value(server.command.as_str()));
            t.insert("args", value(args));
            t.insert("env_vars", value(names(&server.env_vars)));
            servers.insert(name, Item::Table(t));
        }
    }
    Ok(())
}

fn names(list: &[String]) -> Array {
    let mut a = Array::new();
    for n in list {
        a.push(n.as_str());
    }
    a
}

/// Removes `[mcp_servers.<name>]` (its `env_vars` with it) when it is
/// berth's, and `mcp_servers` when that empties it and `origin`, the file
/// before berth's install, did not have it.
pub fn uninstall(
    doc: &mut DocumentMut,
    name: &str,
    origin: Option<&DocumentMut>,
) -> Result<(), String> {
    let Some(servers) = doc.get_mut("mcp_servers") else {
        return Ok(());
    };
    let servers = servers
        .as_table_like_mut()
        .ok_or("\"mcp_servers\" is not a table")?;
    let had = origin.is_some_and(|o| o.contains_key("mcp_servers"));
    let ours = name == SERVER_NAME || servers.get(name).is_some_and(is_exec_table);
    if ours && servers.remove(name).is_some() && servers.is_empty() && !had {
        doc.remove("mcp_servers");
    }
    Ok(())
}

/// Whether a server table runs `berth exec` (see `json::is_exec_entry`).
pub fn is_exec_table(item: &Item) -> bool {
    let Some(t) = item.as_table_like() else {
        return false;
    };
    let program = t.get("command").and_then(Item::as_str).unwrap_or("");
    let name = program.rsplit(['/', '\\']).next().unwrap_or("");
    let first = t
        .get("args")
        .and_then(Item::as_array)
        .and_then(|a| a.get(0))
        .and_then(Value::as_str);
    matches!(name, "berth" | "berth.exe") && first == Some("exec")
}

/// Whether `mcp_servers` holds any of berth's servers: its own or one that
/// `berth exec` wraps.
pub fn holds_servers(doc: &DocumentMut) -> bool {
    doc.get("mcp_servers")
        .and_then(Item::as_table_like)
        .is_some_and(|t| t.iter().any(|(k, v)| k == SERVER_NAME || is_exec_table(v)))
}

/// Every leaf of the document as `path = value`, without formatting: two
/// documents that mean the same have the same list.
pub fn canonical(doc: &DocumentMut) -> Vec<String> {
    let mut out = Vec::new();
    flatten("", doc.as_item(), &mut out);
    out.sort();
    out
}

fn flatten(path: &str, item: &Item, out: &mut Vec<String>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match item {
        Item::None => {}
        Item::Value(Value::Array(a)) => {
            out.push(format!("{path} = []#{}", a.len()));
            for (i, v) in a.iter().enumerate() {
                flatten(&join(&i.to_string()), &Item::Value(v.clone()), out);
            }
        }
        Item::Value(Value::InlineTable(t)) => {
            for (k, v) in t.iter() {
                flatten(&join(k), &Item::Value(v.clone()), out);
            }
        }
        Item::Value(v) => out.push(format!("{path} = {}", canonical_value(v))),
        Item::Table(t) => {
            for (k, v) in t.iter() {
                flatten(&join(k), v, out);
            }
        }
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                for (k, v) in t.iter() {
                    flatten(&join(&format!("{i}.{k}")), v, out);
                }
            }
        }
    }
}

fn canonical_value(v: &Value) -> String {
    let mut v = v.clone();
    v.decor_mut().clear();
    if let Value::Array(a) = &mut v {
        a.fmt();
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> TomlServer {
        TomlServer {
            name: SERVER_NAME.into(),
            command: "/b/berth-mcp".into(),
            args: vec![],
            env_vars: vec!["BERTH_SOCKET".into(), "XDG_RUNTIME_DIR".into()],
        }
    }

    #[test]
    fn the_server_table_goes_in_and_out_and_comments_survive() {
        let original =
            "# my settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let mut doc = parse(original).unwrap();
        install(&mut doc, &server()).unwrap();
        let text = doc.to_string();
        assert!(text.starts_with(original), "{text}");
        assert!(
            text.contains(
                "[mcp_servers.berth]\ncommand = \"/b/berth-mcp\"\nargs = []\nenv_vars = [\"BERTH_SOCKET\", \"XDG_RUNTIME_DIR\"]\n"
            ),
            "{text}"
        );
        install(&mut doc, &server()).unwrap();
        assert_eq!(doc.to_string(), text);
        uninstall(&mut doc, SERVER_NAME, None).unwrap();
        assert_eq!(doc.to_string(), original);
    }

    #[test]
    fn an_empty_file_gets_only_the_table() {
        let mut doc = parse("").unwrap();
        install(&mut doc, &server()).unwrap();
        assert_eq!(
            doc.to_string(),
            "[mcp_servers.berth]\ncommand = \"/b/berth-mcp\"\nargs = []\nenv_vars = [\"BERTH_SOCKET\", \"XDG_RUNTIME_DIR\"]\n"
        );
        uninstall(&mut doc, SERVER_NAME, None).unwrap();
        assert!(canonical(&doc).is_empty());
    }

    #[test]
    fn names_the_user_forwards_are_kept_and_berths_missing_ones_added() {
        let mut doc = parse(
            "[mcp_servers.berth]\ncommand = \"/b/berth-mcp\"\nargs = []\nenv_vars = [\"MINE\", \"BERTH_SOCKET\"]\n",
        )
        .unwrap();
        install(&mut doc, &server()).unwrap();
        let text = doc.to_string();
        assert!(
            text.contains("env_vars = [\"MINE\", \"BERTH_SOCKET\", \"XDG_RUNTIME_DIR\"]"),
            "{text}"
        );
        install(&mut doc, &server()).unwrap();
        assert_eq!(doc.to_string(), text);
    }

    #[test]
    fn env_vars_of_the_wrong_type_is_refused() {
        let mut doc =
            parse("[mcp_servers.berth]\ncommand = \"x\"\nenv_vars = \"BERTH_SOCKET\"\n").unwrap();
        let e = install(&mut doc, &server()).unwrap_err();
        assert!(e.contains("env_vars"), "{e}");
    }

    #[test]
    fn a_non_table_is_refused() {
        let mut doc = parse("mcp_servers = 3\n").unwrap();
        assert!(install(&mut doc, &server()).is_err());
    }
}
