//! Per client: which files berth writes, and what it puts there. The facts
//! behind each choice are in docs/decisions/0008-registering-clients.md.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::json::{CopilotShell, Hook, JsonEdit, Reader, SERVER_NAME};
use super::toml::TomlServer;
use super::{Client, Locations, Os, Programs, Scope, powershell_call, shell_word};

/// The variables that decide berth's paths and pins, which Codex strips from
/// an MCP server's environment unless its entry names them in `env_vars`.
/// Names, not values: Codex forwards each from its own environment when
/// set, so nothing written today goes stale.
/// The locations are `paths::LOCATION_VARIABLES`, so one read there is forwarded here too.
pub fn codex_forwarded_env() -> Vec<&'static str> {
    // In the order earlier versions wrote, so a registration made then is unchanged.
    let [socket, data_dir, xdg @ ..] = berth_client::paths::LOCATION_VARIABLES;
    [
        "BERTH_WORKSPACE",
        "BERTH_EXTRA_HOME",
        "BERTH_CWD",
        socket,
        data_dir,
    ]
    .into_iter()
    .chain(["BERTH_DAEMON", "BERTH_LOG"])
    .chain(xdg)
    .chain([berth_client::paths::XDG_CONFIG_HOME])
    .collect()
}

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
    /// The project folder, for a project's file: it is reached beneath it,
    /// through no link (`None`: a user's file, reached by its path).
    pub within: Option<PathBuf>,
    /// How the client reads the file: plain JSON, or with comments and
    /// trailing commas (TOML has comments anyway).
    pub reader: Reader,
}

/// Claude Code's files: plain JSON. Measured with 2.1.197: a comment makes it
/// set `~/.claude.json` aside as corrupted, refuse `.mcp.json` and skip
/// `settings.json`, hooks and all.
const CLAUDE_CODE: Reader = Reader::plain("Claude Code");

/// The tools Claude Code's pre-tool hook runs for: its own file-writing tools.
const CLAUDE_CODE_WRITE_TOOLS: &str = "Write|Edit|MultiEdit|NotebookEdit";

/// The tools Codex's pre-tool hook runs for: every file edit of Codex is an `apply_patch`,
/// which its models run from a shell call (`Bash` to the hook) as often as directly; from
/// code mode's `exec`, Codex hands the hook each nested call as a direct one.
const CODEX_WRITE_TOOLS: &str = "apply_patch|Bash";

/// Why a client cannot be registered as asked.
#[derive(Debug)]
pub struct Unsupported(pub String);

/// The files of `client`'s registration in `scope`: its MCP server file
/// with berth's entry first, then its hook files.
pub fn files(
    client: Client,
    scope: Scope,
    loc: &Locations,
    programs: &Programs,
) -> Result<Vec<FileSpec>, Unsupported> {
    let hook = shell_word(&programs.hook);
    let project = &loc.cwd;
    let user = scope == Scope::User;
    let args = if passes_cwd(client) {
        vec!["--cwd".to_string(), WORKSPACE_FOLDER.to_string()]
    } else {
        vec![]
    };
    let mcp = mcp_spec(
        client,
        scope,
        loc,
        SERVER_NAME,
        programs.mcp.to_string_lossy().into_owned(),
        args,
    )?;
    let spec = |path: PathBuf, edit: Edit, reader: Reader| FileSpec {
        path,
        edit,
        shared_with: None,
        within: None,
        reader,
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
                matcher: None,
            },
            Hook {
                event: "Stop",
                command: format!("{hook} stop"),
                matcher: None,
            },
            Hook {
                event: "PreToolUse",
                command: format!("{hook} pre-tool"),
                matcher: Some(CLAUDE_CODE_WRITE_TOOLS),
            },
        ])),
        shared_with: Some(shared_with),
        within: None,
        reader: CLAUDE_CODE,
    };
    let specs = match client {
        Client::ClaudeCode => vec![mcp, claude_hooks(Client::Vscode)],
        Client::Codex => {
            let dir = codex_dir(scope, loc);
            vec![
                mcp,
                spec(
                    dir.join("hooks.json"),
                    Edit::Json(JsonEdit::NestedHooks(vec![
                        Hook {
                            event: "SessionStart",
                            command: format!("{hook} session-start --client codex"),
                            matcher: None,
                        },
                        Hook {
                            event: "Stop",
                            command: format!("{hook} stop --client codex"),
                            matcher: None,
                        },
                        Hook {
                            event: "PreToolUse",
                            command: format!("{hook} pre-tool --client codex"),
                            matcher: Some(CODEX_WRITE_TOOLS),
                        },
                    ])),
                    // Measured with 0.171: a comment makes Codex skip the file.
                    Reader::plain("Codex"),
                ),
            ]
        }
        Client::Vscode => vec![mcp, claude_hooks(Client::ClaudeCode)],
        Client::Cursor => {
            let dir = if user {
                loc.home.join(".cursor")
            } else {
                project.join(".cursor")
            };
            vec![
                mcp,
                spec(
                    dir.join("hooks.json"),
                    Edit::Json(JsonEdit::FlatHooks(vec![
                        Hook {
                            event: "sessionStart",
                            command: format!("{hook} session-start --client cursor"),
                            matcher: None,
                        },
                        Hook {
                            event: "stop",
                            command: format!("{hook} stop --client cursor"),
                            matcher: None,
                        },
                    ])),
                    Reader::plain("Cursor"),
                ),
            ]
        }
        Client::ClaudeDesktop | Client::Cline => vec![mcp],
        Client::CopilotCli => {
            let dir = loc.home.join(".copilot");
            // On Windows Copilot runs a hook's "powershell" command, not its "bash" one.
            let (shell, hook) = match loc.os {
                Os::Windows => (CopilotShell::Powershell, powershell_call(&programs.hook)),
                Os::Linux | Os::Mac => (CopilotShell::Bash, hook.clone()),
            };
            vec![
                mcp,
                spec(
                    dir.join("hooks").join("berth.json"),
                    Edit::Json(JsonEdit::CopilotHooks(
                        vec![
                            Hook {
                                event: "sessionStart",
                                command: format!("{hook} session-start --client copilot-cli"),
                                matcher: None,
                            },
                            Hook {
                                event: "agentStop",
                                command: format!("{hook} stop --client copilot-cli"),
                                matcher: None,
                            },
                            // It runs for every tool; the hook judges only create and edit.
                            Hook {
                                event: "preToolUse",
                                command: format!("{hook} pre-tool --client copilot-cli"),
                                matcher: None,
                            },
                        ],
                        shell,
                    )),
                    // Measured with 1.0.102: a comment makes Copilot skip the file.
                    Reader::plain("the Copilot CLI"),
                ),
            ]
        }
    };
    Ok(confined(specs, scope, loc))
}

/// `specs` as `scope` reaches them: a project's files beneath the project
/// folder.
fn confined(mut specs: Vec<FileSpec>, scope: Scope, loc: &Locations) -> Vec<FileSpec> {
    if scope == Scope::Project {
        for spec in &mut specs {
            spec.within = Some(loc.cwd.clone());
        }
    }
    specs
}

/// A server that `berth exec` wraps, as its registration spells it.
#[derive(Debug)]
pub struct Wrapped {
    /// The entry's name.
    pub name: String,
    /// CMD and its arguments (empty when uninstalling).
    pub command: Vec<String>,
    /// The word `--roots` takes: where the server's MCP roots come from.
    pub roots: &'static str,
}

/// The one file of a wrapped server's registration: `berth exec --roots
/// FROM [--cwd ${workspaceFolder}] -- CMD ...` under its name in the
/// client's MCP file and shape (docs/decisions/0026-berth-exec.md,
/// docs/decisions/0051-a-roots-relay-for-wrapped-servers.md). `exec` stays
/// the first argument: it is how berth knows the entry as its own.
pub fn exec_files(
    client: Client,
    scope: Scope,
    loc: &Locations,
    berth: &std::path::Path,
    wrapped: &Wrapped,
) -> Result<Vec<FileSpec>, Unsupported> {
    let (name, command) = (&wrapped.name, &wrapped.command);
    let mut args = vec![
        "exec".to_string(),
        "--roots".to_string(),
        wrapped.roots.to_string(),
    ];
    if passes_cwd(client) {
        args.extend(["--cwd".to_string(), WORKSPACE_FOLDER.to_string()]);
    }
    args.push("--".into());
    args.extend(command.iter().cloned());
    let berth = berth.to_string_lossy().into_owned();
    let specs = vec![mcp_spec(client, scope, loc, name, berth, args)?];
    Ok(confined(specs, scope, loc))
}

/// VS Code's and Cursor's variable for the folder a session works in.
const WORKSPACE_FOLDER: &str = "${workspaceFolder}";

/// Whether the client resolves `${workspaceFolder}` in a server's arguments,
/// so `--cwd` can name the session's folder (VS Code, Cursor). Claude Code
/// passes `CLAUDE_PROJECT_DIR` and Codex starts servers in the session's
/// folder, so neither needs it.
fn passes_cwd(client: Client) -> bool {
    matches!(client, Client::Vscode | Client::Cursor)
}

/// Codex's folder in `scope`: `$CODEX_HOME` (else `~/.codex`), or the
/// project's `.codex`.
fn codex_dir(scope: Scope, loc: &Locations) -> PathBuf {
    if scope == Scope::User {
        loc.codex_home
            .clone()
            .unwrap_or_else(|| loc.home.join(".codex"))
    } else {
        loc.cwd.join(".codex")
    }
}

/// An MCP server entry named `name` running `command args`, in `client`'s
/// file and shape for `scope`.
fn mcp_spec(
    client: Client,
    scope: Scope,
    loc: &Locations,
    name: &str,
    command: String,
    args: Vec<String>,
) -> Result<FileSpec, Unsupported> {
    let project = &loc.cwd;
    let user = scope == Scope::User;
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
    let json = |path: PathBuf, container: &'static str, entry: Value, reader: Reader| FileSpec {
        path,
        edit: Edit::Json(JsonEdit::Mcp {
            container,
            name: name.to_string(),
            entry: match entry {
                Value::Object(m) => m,
                _ => Map::new(),
            },
        }),
        shared_with: None,
        within: None,
        reader,
    };
    Ok(match client {
        Client::ClaudeCode => json(
            if user {
                claude_json(loc)
            } else {
                project.join(".mcp.json")
            },
            "mcpServers",
            json!({"type": "stdio", "command": command, "args": args}),
            CLAUDE_CODE,
        ),
        // Codex's `cwd` key takes no variables, so it stays unset.
        Client::Codex => FileSpec {
            path: codex_dir(scope, loc).join("config.toml"),
            edit: Edit::Toml(TomlServer {
                name: name.to_string(),
                command,
                args,
                env_vars: codex_forwarded_env()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }),
            shared_with: None,
            within: None,
            reader: Reader::with_comments("Codex"),
        },
        Client::Vscode => json(
            if user {
                loc.vscode_user_dir().join("mcp.json")
            } else {
                project.join(".vscode").join("mcp.json")
            },
            "servers",
            json!({"type": "stdio", "command": command, "args": args}),
            // VS Code's documented format: JSON with comments and trailing commas.
            Reader::with_comments("VS Code"),
        ),
        Client::Cursor => json(
            if user {
                loc.home.join(".cursor")
            } else {
                project.join(".cursor")
            }
            .join("mcp.json"),
            "mcpServers",
            json!({"command": command, "args": args}),
            Reader::plain("Cursor"),
        ),
        Client::ClaudeDesktop => {
            only_user("(Claude Desktop has one config file)")?;
            // %APPDATA%\Claude, ~/Library/Application Support/Claude, and on
            // Linux (community builds) $XDG_CONFIG_HOME/Claude.
            json(
                loc.app_config_dir()
                    .join("Claude")
                    .join("claude_desktop_config.json"),
                "mcpServers",
                json!({"command": command, "args": args}),
                Reader::plain("Claude Desktop"),
            )
        }
        Client::Cline => {
            only_user("(Cline keeps its servers in the extension's storage)")?;
            json(
                loc.vscode_user_dir()
                    .join("globalStorage")
                    .join("saoudrizwan.claude-dev")
                    .join("settings")
                    .join("cline_mcp_settings.json"),
                "mcpServers",
                json!({"command": command, "args": args, "disabled": false}),
                Reader::plain("Cline"),
            )
        }
        Client::CopilotCli => {
            only_user("that berth writes")?;
            json(
                loc.home.join(".copilot").join("mcp-config.json"),
                "mcpServers",
                json!({"type": "local", "command": command, "args": args, "tools": ["*"]}),
                // Measured with 1.0.102: it lists the servers of a file with comments and
                // trailing commas.
                Reader::with_comments("the Copilot CLI"),
            )
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
            "restart Codex, then approve berth's three hooks once in `/hooks` (Codex runs no hook the user has not trusted)"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn windows() -> Locations {
        let home = PathBuf::from(r"C:\Users\u");
        Locations {
            appdata: Some(home.join("AppData").join("Roaming")),
            home,
            xdg_config_home: None,
            codex_home: None,
            claude_config_dir: None,
            cwd: PathBuf::from(r"C:\src\shop"),
            os: Os::Windows,
        }
    }

    fn programs() -> Programs {
        Programs {
            mcp: PathBuf::from(r"C:\Program Files\berth\berth-mcp.exe"),
            hook: PathBuf::from(r"C:\Program Files\berth\berth-hook.exe"),
        }
    }

    fn paths(client: Client) -> Vec<PathBuf> {
        files(client, Scope::User, &windows(), &programs())
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect()
    }

    /// Where each client keeps its files on Windows: the roaming application data for the
    /// desktop apps and VS Code, the profile for the command-line clients.
    #[test]
    fn on_windows_each_client_is_registered_where_it_reads_its_config() {
        let loc = windows();
        let roaming = loc.appdata.clone().unwrap();
        assert_eq!(
            paths(Client::ClaudeDesktop),
            [roaming.join("Claude").join("claude_desktop_config.json")]
        );
        // VS Code also runs Claude Code's hooks, in the profile.
        assert_eq!(
            paths(Client::Vscode),
            [
                roaming.join("Code").join("User").join("mcp.json"),
                loc.home.join(".claude").join("settings.json")
            ]
        );
        assert_eq!(
            paths(Client::Cursor)[0],
            loc.home.join(".cursor").join("mcp.json")
        );
        assert_eq!(
            paths(Client::CopilotCli),
            [
                loc.home.join(".copilot").join("mcp-config.json"),
                loc.home.join(".copilot").join("hooks").join("berth.json")
            ]
        );
    }

    #[test]
    fn on_windows_copilots_hooks_are_powershell_calls() {
        let specs = files(Client::CopilotCli, Scope::User, &windows(), &programs()).unwrap();
        let Edit::Json(JsonEdit::CopilotHooks(hooks, shell)) = &specs[1].edit else {
            panic!("{:?}", specs[1].edit)
        };
        assert_eq!(*shell, CopilotShell::Powershell);
        assert_eq!(
            hooks[0].command,
            r"& 'C:\Program Files\berth\berth-hook.exe' session-start --client copilot-cli"
        );
        let mut unix = windows();
        unix.os = Os::Linux;
        let specs = files(Client::CopilotCli, Scope::User, &unix, &programs()).unwrap();
        assert!(matches!(
            &specs[1].edit,
            Edit::Json(JsonEdit::CopilotHooks(_, CopilotShell::Bash))
        ));
    }
}
