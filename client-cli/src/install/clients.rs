//! Per client: which files berth writes, and what it puts there. The facts
//! behind each choice are in docs/decisions/0008-registering-clients.md.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::json::{Hook, JsonEdit};
use super::toml::TomlServer;
use super::{Client, Locations, Programs, Scope, shell_word};

/// The variables that decide berth's paths and pins, which Codex strips from
/// an MCP server's environment unless its entry names them in `env_vars`.
/// Names, not values: Codex forwards each from its own environment when
/// set, so nothing written today goes stale.
pub const CODEX_FORWARDED_ENV: [&str; 11] = [
    "BERTH_WORKSPACE",
    "BERTH_EXTRA_HOME",
    "BERTH_CWD",
    "BERTH_SOCKET",
    "BERTH_DATA_DIR",
    "BERTH_DAEMON",
    "BERTH_LOG",
    "XDG_RUNTIME_DIR",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_HOME",
];

/// What berth puts into one file.
#[derive(Debug, Clone)]
pub enum Edit {
    /// A JSON document.
    Json(JsonEdit),
    /// Codex's TOML.
    Toml(TomlServer),
}

/// One file of a client's registration.
#[derive(Debug, Clone)]
pub struct FileSpec {
    /// The file.
    pub path: PathBuf,
    /// What goes in.
    pub edit: Edit,
    /// Another client whose registration uses the same entries in this same
    /// file (VS Code runs Claude Code's hooks): uninstalling one keeps them
    /// while the other is still registered.
    pub shared_with: Option<Client>,
}

/// Why a client cannot be registered as asked.
#[derive(Debug)]
pub struct Unsupported(pub String);

/// The files of `client`'s registration in `scope`.
pub fn files(
    client: Client,
    scope: Scope,
    loc: &Locations,
    programs: &Programs,
) -> Result<Vec<FileSpec>, Unsupported> {
    let mcp = programs.mcp.to_string_lossy().into_owned();
    let hook = shell_word(&programs.hook);
    let project = &loc.cwd;
    let user = scope == Scope::User;
    let entry = |v: Value| match v {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let spec = |path: PathBuf, edit: Edit| FileSpec {
        path,
        edit,
        shared_with: None,
    };
    // Claude Code's hooks, which VS Code runs too: no `--client`, so the
    // payload's shape tells berth-hook which of the two is calling.
    let claude_hooks = |shared_with| FileSpec {
        path: if user {
            claude_dir(loc).join("settings.json")
        } else {
            project.join(".claude").join("settings.json")
        },
        edit: Edit::Json(JsonEdit::NestedHooks(vec![
            Hook {
                event: "SessionStart",
                command: format!("{hook} session-start"),
            },
            Hook {
                event: "Stop",
                command: format!("{hook} stop"),
            },
        ])),
        shared_with: Some(shared_with),
    };
    let only_user = |what: &str| {
        if user {
            Ok(())
        } else {
            Err(Unsupported(format!(
                "{} has no per-project configuration {what}; use --scope user",
                client.name()
            )))
        }
    };
    Ok(match client {
        Client::ClaudeCode => vec![
            // Claude Code starts servers in its launch directory and passes
            // CLAUDE_PROJECT_DIR, so no --cwd.
            spec(
                if user {
                    claude_json(loc)
                } else {
                    project.join(".mcp.json")
                },
                Edit::Json(JsonEdit::Mcp {
                    container: "mcpServers",
                    entry: entry(json!({"type": "stdio", "command": mcp, "args": []})),
                }),
            ),
            claude_hooks(Client::Vscode),
        ],
        Client::Codex => {
            let dir = if user {
                loc.codex_home
                    .clone()
                    .unwrap_or_else(|| loc.home.join(".codex"))
            } else {
                project.join(".codex")
            };
            vec![
                // Codex starts servers in the session's directory; its `cwd`
                // key takes no variables, so it stays unset.
                spec(
                    dir.join("config.toml"),
                    Edit::Toml(TomlServer {
                        command: mcp,
                        args: vec![],
                        env_vars: CODEX_FORWARDED_ENV.iter().map(|s| s.to_string()).collect(),
                    }),
                ),
                spec(
                    dir.join("hooks.json"),
                    Edit::Json(JsonEdit::NestedHooks(vec![
                        Hook {
                            event: "SessionStart",
                            command: format!("{hook} session-start --client codex"),
                        },
                        Hook {
                            event: "Stop",
                            command: format!("{hook} stop --client codex"),
                        },
                    ])),
                ),
            ]
        }
        Client::Vscode => vec![
            spec(
                if user {
                    loc.vscode_user_dir().join("mcp.json")
                } else {
                    project.join(".vscode").join("mcp.json")
                },
                Edit::Json(JsonEdit::Mcp {
                    container: "servers",
                    entry: entry(json!({
                        "type": "stdio",
                        "command": mcp,
                        "args": ["--cwd", "${workspaceFolder}"],
                    })),
                }),
            ),
            claude_hooks(Client::ClaudeCode),
        ],
        Client::Cursor => {
            let dir = if user {
                loc.home.join(".cursor")
            } else {
                project.join(".cursor")
            };
            vec![
                spec(
                    dir.join("mcp.json"),
                    Edit::Json(JsonEdit::Mcp {
                        container: "mcpServers",
                        entry: entry(json!({
                            "command": mcp,
                            "args": ["--cwd", "${workspaceFolder}"],
                        })),
                    }),
                ),
                spec(
                    dir.join("hooks.json"),
                    Edit::Json(JsonEdit::FlatHooks(vec![
                        Hook {
                            event: "sessionStart",
                            command: format!("{hook} session-start --client cursor"),
                        },
                        Hook {
                            event: "stop",
                            command: format!("{hook} stop --client cursor"),
                        },
                    ])),
                ),
            ]
        }
        Client::ClaudeDesktop => {
            only_user("(Claude Desktop has one config file)")?;
            // %APPDATA%\Claude, ~/Library/Application Support/Claude, and on
            // Linux (community builds) $XDG_CONFIG_HOME/Claude.
            let dir = loc.app_config_dir().join("Claude");
            vec![spec(
                dir.join("claude_desktop_config.json"),
                Edit::Json(JsonEdit::Mcp {
                    container: "mcpServers",
                    entry: entry(json!({"command": mcp, "args": []})),
                }),
            )]
        }
        Client::Cline => {
            only_user("(Cline keeps its servers in the extension's storage)")?;
            vec![spec(
                loc.vscode_user_dir()
                    .join("globalStorage")
                    .join("saoudrizwan.claude-dev")
                    .join("settings")
                    .join("cline_mcp_settings.json"),
                Edit::Json(JsonEdit::Mcp {
                    container: "mcpServers",
                    entry: entry(json!({"command": mcp, "args": [], "disabled": false})),
                }),
            )]
        }
        Client::CopilotCli => {
            only_user("that berth writes")?;
            let dir = loc.home.join(".copilot");
            vec![
                spec(
                    dir.join("mcp-config.json"),
                    Edit::Json(JsonEdit::Mcp {
                        container: "mcpServers",
                        entry: entry(json!({
                            "type": "local",
                            "command": mcp,
                            "args": [],
                            "tools": ["*"],
                        })),
                    }),
                ),
                spec(
                    dir.join("hooks").join("berth.json"),
                    Edit::Json(JsonEdit::CopilotHooks(vec![
                        Hook {
                            event: "sessionStart",
                            command: format!("{hook} session-start --client copilot-cli"),
                        },
                        Hook {
                            event: "agentStop",
                            command: format!("{hook} stop --client copilot-cli"),
                        },
                    ])),
                ),
            ]
        }
    })
}

/// Claude Code's folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_dir(loc: &Locations) -> PathBuf {
    loc.claude_config_dir
        .clone()
        .unwrap_or_else(|| loc.home.join(".claude"))
}

/// Claude Code's user state file holding user-scope servers:
/// `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
fn claude_json(loc: &Locations) -> PathBuf {
    match &loc.claude_config_dir {
        Some(d) => d.join(".claude.json"),
        None => loc.home.join(".claude.json"),
    }
}

/// What to tell the user after a registration that changed something.
pub fn after_install_hint(client: Client) -> &'static str {
    match client {
        Client::ClaudeCode => "restart Claude Code; `/mcp` lists the berth server",
        Client::Codex => {
            "restart Codex, then approve berth's two hooks once in `/hooks` (Codex runs no hook the user has not trusted)"
        }
        Client::Vscode => {
            "reload VS Code and start the berth server from the MCP view (or `MCP: List Servers`)"
        }
        Client::Cursor => "restart Cursor; Settings → MCP lists the berth server",
        Client::ClaudeDesktop => {
            "restart Claude Desktop; its sessions start in `/` and so have no project: pass a workspace to berth's tools"
        }
        Client::Cline => {
            "reload VS Code; Cline starts servers in `/`, so its sessions have no project: pass a workspace to berth's tools"
        }
        Client::CopilotCli => "restart the Copilot CLI; `/mcp show` lists the berth server",
    }
}
