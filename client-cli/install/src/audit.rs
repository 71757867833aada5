//! Checking a registration without changing it, for `berth doctor`: which
//! clients are registered, whether their files still say what `berth
//! install` would write (its own planning, as a dry run), what environment
//! each client gives berth's MCP server, and whether Codex's user approved
//! berth's hooks (docs/decisions/0028-berth-doctor.md).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clients::{self, Edit, FileSpec};
use super::files::{self, Action, Planned};
use super::json::{self, JsonEdit, SERVER_NAME};
use super::{Client, Locations, Programs, Scope, toml};

/// Every client `berth install` knows.
pub const CLIENTS: [Client; 7] = [
    Client::ClaudeCode,
    Client::Codex,
    Client::Vscode,
    Client::Cursor,
    Client::ClaudeDesktop,
    Client::Cline,
    Client::CopilotCli,
];

/// One client's registration in one scope.
#[derive(Debug)]
pub struct Registration {
    /// The client.
    pub client: Client,
    /// Where.
    pub scope: Scope,
    /// Its files, the MCP server's first: those that are this registration's to judge (a
    /// project's file that is also a user's file, in the home folder, is the user's).
    pub specs: Vec<FileSpec>,
    /// How much of it the files hold.
    pub standing: Standing,
}

/// How much of a registration its files hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Every file holds berth's part.
    Registered,
    /// None does.
    NotRegistered,
    /// Some do and some do not: what is missing.
    Partly(Vec<Part>),
    /// A file cannot be read or parsed (the message names it). `server` says whether the MCP
    /// server file holds berth's entry; `None` when that file is the unreadable one.
    Unreadable {
        /// Why, naming the file.
        why: String,
        /// Whether berth's server entry is there.
        server: Option<bool>,
    },
}

/// One file's part of a registration, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The file.
    pub file: PathBuf,
    /// Whether it is the MCP server's file (else a hooks file).
    pub server: bool,
    /// Whether it holds berth's part.
    pub present: bool,
    /// Another client shares this file's entries (VS Code runs Claude Code's hooks).
    pub shared_with: Option<Client>,
}

impl Standing {
    /// Whether berth's MCP server entry is there (so its environment can be checked).
    pub fn has_server(&self) -> bool {
        match self {
            Standing::Registered => true,
            Standing::NotRegistered => false,
            Standing::Partly(parts) => parts.iter().any(|p| p.server && p.present),
            Standing::Unreadable { server, .. } => server.unwrap_or(false),
        }
    }
}

/// Every client's registration in each scope it has: the user's files, and the current
/// directory's project files.
pub fn survey(loc: &Locations, programs: &Programs) -> Vec<Registration> {
    let user: Vec<PathBuf> = CLIENTS
        .iter()
        .filter_map(|c| clients::files(*c, Scope::User, loc, programs).ok())
        .flatten()
        .map(|s| s.path)
        .collect();
    let mut out = Vec::new();
    for scope in [Scope::User, Scope::Project] {
        for client in CLIENTS {
            let Ok(mut specs) = clients::files(client, scope, loc, programs) else {
                continue;
            };
            if scope == Scope::Project {
                // In the home folder, a project's files are the user's own.
                specs.retain(|s| !user.iter().any(|u| same_file(u, &s.path)));
                if specs.first().is_none_or(|s| !is_server_file(s)) {
                    continue;
                }
            }
            let standing = standing(scope, &specs, loc, programs);
            out.push(Registration {
                client,
                scope,
                specs,
                standing,
            });
        }
    }
    out
}

/// How much of `client`'s registration in `scope` its files (`specs`, the server's first) hold.
fn standing(scope: Scope, specs: &[FileSpec], loc: &Locations, programs: &Programs) -> Standing {
    let mut parts = Vec::new();
    let mut server = None;
    for spec in specs {
        let is_server = is_server_file(spec);
        // Without this client's server entry, a file it shares with a registered client is
        // that client's.
        let others = spec
            .shared_with
            .is_some_and(|other| other_holds_server(other, scope, loc, programs));
        if !is_server && server == Some(false) && others {
            continue;
        }
        let present = match holds_part(spec) {
            Ok(p) => p,
            Err(why) => return Standing::Unreadable { why, server },
        };
        if is_server {
            server = Some(present);
        }
        parts.push(Part {
            file: spec.path.clone(),
            server: is_server,
            present,
            shared_with: spec.shared_with,
        });
    }
    if parts.iter().all(|p| p.present) {
        Standing::Registered
    } else if parts.iter().all(|p| !p.present) {
        Standing::NotRegistered
    } else {
        Standing::Partly(parts)
    }
}

/// Whether `other`'s MCP server file in `scope` holds berth's entry (one that cannot be read
/// counts as holding it, as uninstall counts it).
fn other_holds_server(other: Client, scope: Scope, loc: &Locations, programs: &Programs) -> bool {
    clients::files(other, scope, loc, programs)
        .ok()
        .and_then(|f| f.into_iter().next())
        .is_some_and(|mcp| files::has_server(&mcp))
}

/// Whether `spec` is an MCP server file (else a hooks file).
fn is_server_file(spec: &FileSpec) -> bool {
    matches!(spec.edit, Edit::Toml(_) | Edit::Json(JsonEdit::Mcp { .. }))
}

/// Whether `spec`'s file holds berth's part: its server entry named `berth`, or a hook
/// handler that runs `berth-hook`. An error names a file that cannot be read or parsed.
fn holds_part(spec: &FileSpec) -> Result<bool, String> {
    let text = files::read(spec)?.unwrap_or_default();
    let refuse = |why: String| format!("{}: {why}", spec.path.display());
    Ok(match &spec.edit {
        Edit::Json(JsonEdit::Mcp { container, .. }) => json::parse(&text, spec.reader)
            .map_err(refuse)?
            .get(*container)
            .and_then(|s| s.get(SERVER_NAME))
            .is_some(),
        Edit::Toml(_) => toml::parse(&text)
            .map_err(refuse)?
            .get("mcp_servers")
            .and_then(|s| s.get(SERVER_NAME))
            .is_some(),
        Edit::Json(_) => json::parse(&text, spec.reader)
            .map_err(refuse)?
            .get("hooks")
            .is_some_and(runs_berth_hook),
    })
}

/// Whether any string in `v` is a command that runs `berth-hook` (whatever the hook shape).
fn runs_berth_hook(v: &Value) -> bool {
    match v {
        Value::String(s) => super::is_berth_hook_command(s),
        Value::Array(a) => a.iter().any(runs_berth_hook),
        Value::Object(m) => m.values().any(runs_berth_hook),
        _ => false,
    }
}

/// Whether two paths name one file (the same path, or both leading to one place).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || (a.canonicalize().ok().is_some() && a.canonicalize().ok() == b.canonicalize().ok())
}

/// The files of a registration whose content differs from what `berth
/// install` would write now, each with its planned change. An error names a
/// file that cannot be read or parsed.
pub fn drift(reg: &Registration) -> Result<Vec<Planned>, String> {
    let mut changed = Vec::new();
    for spec in &reg.specs {
        let plan = files::plan(spec, Action::Install, false)?;
        if plan.changed() {
            changed.push(plan);
        }
    }
    Ok(changed)
}

/// How a client starts its MCP servers' environment (docs/decisions/0008-registering-clients.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inherits {
    /// Codex: HOME, PATH, LANG, SHELL and TERM, plus the names its entry lists in `env_vars`.
    Stripped,
    /// Started from a terminal: the whole environment.
    Terminal,
    /// A desktop app: without what shell profiles export (berth's own variables).
    Desktop,
}

impl Inherits {
    /// How `client` starts servers.
    pub fn of(client: Client) -> Inherits {
        match client {
            Client::Codex => Inherits::Stripped,
            Client::ClaudeCode | Client::CopilotCli => Inherits::Terminal,
            Client::Vscode | Client::Cursor | Client::ClaudeDesktop | Client::Cline => {
                Inherits::Desktop
            }
        }
    }

    /// In words, for a check's line.
    pub fn words(self) -> &'static str {
        match self {
            Inherits::Stripped => "its stripped environment and the entry's env_vars and env",
            Inherits::Terminal => "the terminal's environment and the entry's env",
            Inherits::Desktop => {
                "a desktop-started app's environment (without the BERTH_* variables a shell profile exports) and the entry's env"
            }
        }
    }
}

/// What berth's server entry in `spec` adds to its environment: fixed
/// values (`env`) and, for Codex, names forwarded from the client's own
/// environment (`env_vars`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EntryEnv {
    /// `env`: fixed values.
    pub fixed: HashMap<String, String>,
    /// `env_vars`: forwarded names.
    pub forwarded: Vec<String>,
}

/// Reads berth's server entry's environment from `spec`'s file.
pub fn entry_env(spec: &FileSpec) -> Result<EntryEnv, String> {
    let text = files::read(spec)?.unwrap_or_default();
    let refuse = |why: String| format!("{}: {why}", spec.path.display());
    let mut out = EntryEnv::default();
    match &spec.edit {
        Edit::Json(JsonEdit::Mcp { container, .. }) => {
            let doc = json::parse(&text, spec.reader).map_err(refuse)?;
            let env = doc
                .get(*container)
                .and_then(|s| s.get(SERVER_NAME))
                .and_then(|e| e.get("env"))
                .and_then(Value::as_object);
            for (k, v) in env.into_iter().flatten() {
                if let Some(v) = v.as_str() {
                    out.fixed.insert(k.clone(), v.to_string());
                }
            }
        }
        Edit::Toml(_) => {
            let doc = toml::parse(&text).map_err(refuse)?;
            let entry = doc
                .get("mcp_servers")
                .and_then(|s| s.get(SERVER_NAME))
                .and_then(|e| e.as_table_like());
            if let Some(entry) = entry {
                if let Some(env) = entry.get("env").and_then(|e| e.as_table_like()) {
                    for (k, v) in env.iter() {
                        if let Some(v) = v.as_str() {
                            out.fixed.insert(k.to_string(), v.to_string());
                        }
                    }
                }
                if let Some(names) = entry.get("env_vars").and_then(|e| e.as_array()) {
                    out.forwarded = names
                        .iter()
                        .filter_map(|n| n.as_str().map(str::to_string))
                        .collect();
                }
            }
        }
        Edit::Json(_) => {}
    }
    Ok(out)
}

/// The variables Codex passes every stdio server whatever its entry says.
const CODEX_KEEPS: [&str; 5] = ["HOME", "PATH", "LANG", "SHELL", "TERM"];

/// The value of `key` in the environment a client started the way `inherits`
/// says gives berth's server, when the client itself runs with `ours`.
pub fn server_var(
    key: &str,
    inherits: Inherits,
    entry: &EntryEnv,
    ours: &dyn Fn(&str) -> Option<OsString>,
) -> Option<OsString> {
    if let Some(v) = entry.fixed.get(key) {
        return Some(v.into());
    }
    match inherits {
        Inherits::Terminal => ours(key),
        Inherits::Stripped => (CODEX_KEEPS.contains(&key)
            || entry.forwarded.iter().any(|n| n == key))
        .then(|| ours(key))
        .flatten(),
        Inherits::Desktop => (!key.starts_with("BERTH_")).then(|| ours(key)).flatten(),
    }
}

/// Whether Codex's user approved berth's hooks, as Codex records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookTrust {
    /// No berth hook is registered with Codex.
    NotRegistered,
    /// Codex holds an approval for each (a hash of the hook's definition,
    /// which only Codex computes, so whether it still matches is its call).
    Recorded,
    /// These events' hooks have no approval, or were disabled in `/hooks`.
    Waiting(Vec<String>),
}

/// Reads Codex's record of hook approvals (`[hooks.state."<file>:<event>:<group>:<handler>"]`
/// in its `config.toml`, with a `trusted_hash`) for berth's hooks in its user
/// `hooks.json`.
pub fn codex_hook_trust(loc: &Locations, programs: &Programs) -> Result<HookTrust, String> {
    let specs =
        clients::files(Client::Codex, Scope::User, loc, programs).map_err(|e| e.0.to_string())?;
    let (Some(config), Some(hooks)) = (specs.first(), specs.get(1)) else {
        return Ok(HookTrust::NotRegistered);
    };
    let hooks_doc = json::parse(&files::read(hooks)?.unwrap_or_default(), hooks.reader)
        .map_err(|why| format!("{}: {why}", hooks.path.display()))?;
    let ours = berth_hook_positions(&hooks_doc);
    if ours.is_empty() {
        return Ok(HookTrust::NotRegistered);
    }
    let config_doc = toml::parse(&files::read(config)?.unwrap_or_default())
        .map_err(|why| format!("{}: {why}", config.path.display()))?;
    let mut approved: Vec<(PathBuf, String, usize, usize)> = Vec::new();
    let state = config_doc
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like());
    for (key, item) in state.into_iter().flat_map(|s| s.iter()) {
        let trusted = item.get("trusted_hash").and_then(|h| h.as_str()).is_some();
        let disabled = item.get("enabled").and_then(|e| e.as_bool()) == Some(false);
        if let (true, false, Some(k)) = (trusted, disabled, parse_state_key(key)) {
            approved.push(k);
        }
    }
    let same_file = |p: &Path| {
        p == hooks.path
            || (p.canonicalize().ok().is_some()
                && p.canonicalize().ok() == hooks.path.canonicalize().ok())
    };
    let waiting: Vec<String> = ours
        .into_iter()
        .filter(|(event, g, h)| {
            !approved.iter().any(|(p, e, ag, ah)| {
                e == &codex_event_key(event) && ag == g && ah == h && same_file(p)
            })
        })
        .map(|(event, _, _)| event)
        .collect();
    Ok(if waiting.is_empty() {
        HookTrust::Recorded
    } else {
        HookTrust::Waiting(waiting)
    })
}

/// Where berth's handlers sit in a Claude-Code-shaped hooks document: event, group index,
/// handler index.
fn berth_hook_positions(doc: &serde_json::Map<String, Value>) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let Some(events) = doc.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                let command = handler.get("command").and_then(Value::as_str);
                if command.is_some_and(super::is_berth_hook_command) {
                    out.push((event.clone(), g, h));
                }
            }
        }
    }
    out
}

/// Codex's spelling of an event in its state keys: `SessionStart` → `session_start`.
fn codex_event_key(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `<file>:<event>:<group>:<handler>` (the file may itself hold colons).
fn parse_state_key(key: &str) -> Option<(PathBuf, String, usize, usize)> {
    let mut parts = key.rsplitn(4, ':');
    let h = parts.next()?.parse().ok()?;
    let g = parts.next()?.parse().ok()?;
    let event = parts.next()?.to_string();
    let file = PathBuf::from(parts.next()?);
    Some((file, event, g, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_state_keys_are_read_and_events_spelled_as_codex_does() {
        assert_eq!(
            parse_state_key("/h/.codex/hooks.json:session_start:1:0"),
            Some((
                PathBuf::from("/h/.codex/hooks.json"),
                "session_start".into(),
                1,
                0
            ))
        );
        assert_eq!(parse_state_key("nonsense"), None);
        assert_eq!(codex_event_key("SessionStart"), "session_start");
        assert_eq!(codex_event_key("Stop"), "stop");
    }

    #[test]
    fn codex_passes_only_what_it_keeps_and_forwards_and_fixed_values_win() {
        let ours = |k: &str| match k {
            "HOME" => Some(OsString::from("/h")),
            "BERTH_DATA_DIR" => Some(OsString::from("/d")),
            "XDG_DATA_HOME" => Some(OsString::from("/x")),
            _ => None,
        };
        let mut entry = EntryEnv {
            forwarded: vec!["XDG_DATA_HOME".into()],
            ..Default::default()
        };
        let codex = |k: &str, e: &EntryEnv| server_var(k, Inherits::Stripped, e, &ours);
        assert_eq!(codex("HOME", &entry), Some("/h".into()));
        assert_eq!(codex("XDG_DATA_HOME", &entry), Some("/x".into()));
        assert_eq!(codex("BERTH_DATA_DIR", &entry), None);
        entry.fixed.insert("BERTH_DATA_DIR".into(), "/fixed".into());
        assert_eq!(codex("BERTH_DATA_DIR", &entry), Some("/fixed".into()));
        let desktop = server_var(
            "BERTH_DATA_DIR",
            Inherits::Desktop,
            &EntryEnv::default(),
            &ours,
        );
        assert_eq!(desktop, None);
        let terminal = server_var(
            "BERTH_DATA_DIR",
            Inherits::Terminal,
            &EntryEnv::default(),
            &ours,
        );
        assert_eq!(terminal, Some("/d".into()));
    }

    #[test]
    fn berths_handlers_are_found_where_they_sit() {
        let doc = json::parse(
            r#"{"hooks": {"Stop": [{"hooks": [{"command": "say hi"}]}, {"hooks": [{"type": "command", "command": "/b/berth-hook stop --client codex"}]}]}}"#,
            json::Reader::plain("Codex"),
        )
        .unwrap();
        assert_eq!(berth_hook_positions(&doc), [("Stop".to_string(), 1, 0)]);
    }
}
