//! `berth doctor [--json]`: one line per check, each problem with its fix,
//! exit 1 when any check fails (docs/reference.md, "berth doctor").

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;

use berth_tests::{Run, TestEnv, VERSION, bin};
use serde_json::Value;

/// Every client berth registers with.
const CLIENTS: [&str; 7] = [
    "claude-code",
    "codex",
    "vscode",
    "cursor",
    "claude-desktop",
    "cline",
    "copilot-cli",
];

/// A fresh env as berthd would make it: the harness creates the data folder
/// with mkdir's default mode, berthd with 0700 (on Windows both inherit the
/// parent's access list).
fn fresh() -> TestEnv {
    let env = TestEnv::new();
    #[cfg(unix)]
    chmod(&env.data_dir(), 0o700);
    env
}

#[cfg(unix)]
fn chmod(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `berth --json doctor` and its document.
fn doctor(env: &TestEnv) -> (Run, Value) {
    let run = env.run_berth(["--json", "doctor"]);
    let doc = run.json();
    (run, doc)
}

/// The check named `name`.
fn check<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["checks"]
        .as_array()
        .expect("checks is a list")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name:?} in {doc:#}"))
}

/// The names of the checks that found a problem.
fn problems(doc: &Value) -> Vec<String> {
    doc["checks"]
        .as_array()
        .expect("checks is a list")
        .iter()
        .filter(|c| c["status"] == "problem")
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_fresh_env_is_all_ok_in_text_and_json() {
    let env = fresh();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}\n{}", run.stderr());
    assert_eq!(doc["ok"], true);
    for c in doc["checks"].as_array().unwrap() {
        let mut keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        // The clients' check adds every client's registration.
        keys.retain(|k| !(c["name"] == "clients" && *k == "registrations"));
        assert_eq!(keys, ["detail", "fix", "name", "ok", "status"], "{c}");
        assert_ne!(c["status"], "problem", "{c}");
        assert!(c["detail"].as_str().is_some_and(|d| !d.is_empty()), "{c}");
    }
    for name in [
        "daemon",
        "version",
        "data folder",
        "database",
        "database integrity",
        "inotify watches",
        "log",
        "clients",
    ] {
        let _ = check(&doc, name);
    }
    assert_eq!(
        check(&doc, "database integrity")["detail"],
        "quick_check: ok"
    );
    // Every client in the user's scope, and in the home folder the project files that are not
    // also the user's (`.mcp.json`, `.vscode/mcp.json`): none registered.
    let registrations = check(&doc, "clients")["registrations"].as_array().unwrap();
    let seen: Vec<String> = registrations
        .iter()
        .map(|r| {
            assert_eq!(r["state"], "not registered", "{r}");
            format!(
                "{} {}",
                r["client"].as_str().unwrap(),
                r["scope"].as_str().unwrap()
            )
        })
        .collect();
    for client in CLIENTS {
        assert!(seen.contains(&format!("{client} user")), "{seen:?}");
    }
    assert!(
        seen.contains(&"claude-code project".to_string()),
        "{seen:?}"
    );
    assert!(!seen.contains(&"cursor project".to_string()), "{seen:?}");
    let log = check(&doc, "log")["detail"].as_str().unwrap().to_string();
    assert!(log.contains(&env.log_file().display().to_string()), "{log}");
    assert!(
        check(&doc, "version")["detail"]
            .as_str()
            .unwrap()
            .contains(VERSION)
    );

    let text = env.run_berth(["doctor"]).success().stdout();
    assert!(
        text.lines()
            .all(|l| l.starts_with("ok ") || l.starts_with("unknown ")),
        "{text}"
    );
    assert!(text.contains("ok       daemon: berthd (pid "), "{text}");
}

#[test]
fn a_daemon_of_another_version_is_a_problem_with_its_fix_and_is_not_replaced() {
    let env = fresh();
    let mut cmd = env.command(bin("berthd"));
    cmd.args(["--advertise-version", "0.0.1"]);
    let _ = env.run(cmd).success();
    let old = env.daemon_pid();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    assert_eq!(doc["ok"], false);
    assert_eq!(problems(&doc), ["version"]);
    let version = check(&doc, "version");
    let detail = version["detail"].as_str().unwrap();
    assert!(
        detail.contains("0.0.1") && detail.contains(VERSION),
        "{detail}"
    );
    assert_eq!(version["fix"], "berth daemon stop && berth daemon start");
    assert_eq!(check(&doc, "database integrity")["status"], "unknown");
    assert!(run.stderr().contains("1 of "), "{}", run.stderr());
    // Diagnosing changed nothing: the same daemon still runs.
    assert_eq!(env.daemon_pids(), vec![old]);

    // The fix works.
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(std::time::Duration::from_secs(5));
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
}

// Unix modes.
#[cfg(unix)]
#[test]
fn wrong_modes_on_the_data_folder_and_the_database_are_problems_with_their_fixes() {
    let env = fresh();
    let (run, _) = doctor(&env);
    assert_eq!(run.code(), Some(0));
    chmod(&env.data_dir(), 0o755);
    chmod(&env.db(), 0o666);
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    assert_eq!(problems(&doc), ["data folder", "database"]);
    assert_eq!(
        check(&doc, "data folder")["fix"],
        format!("chmod 700 {}", env.data_dir().display())
    );
    // A database others can write is refused by every berth program, in the same words.
    assert_eq!(
        check(&doc, "database")["fix"],
        format!("Run `chmod go-w {}`", env.db().display())
    );
    assert_eq!(check(&doc, "daemon")["status"], "unknown");
    let text = env.run_berth(["doctor"]).failure(1).stdout();
    assert!(
        text.contains(&format!(
            "problem  data folder: {} has mode 0755",
            env.data_dir().display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "         fix: Run `chmod go-w {}`\n",
            env.db().display()
        )),
        "{text}"
    );
    chmod(&env.data_dir(), 0o700);
    chmod(&env.db(), 0o600);
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
}

#[test]
fn a_client_config_edited_by_hand_is_a_problem_until_install_runs_again() {
    let env = fresh();
    let _ = env.run_berth(["install", "claude-code"]).success();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
    assert_eq!(check(&doc, "client claude-code")["status"], "ok");
    assert_eq!(check(&doc, "environment claude-code")["status"], "ok");

    let file = env.home().join(".claude.json");
    let text = std::fs::read_to_string(&file).unwrap();
    // As the file spells it: a JSON string (on Windows its `\` escaped).
    let mine = serde_json::to_string(&bin("berth-mcp").display().to_string()).unwrap();
    std::fs::write(&file, text.replace(&mine, "\"/elsewhere/berth-mcp\"")).unwrap();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    assert_eq!(problems(&doc), ["client claude-code"]);
    let c = check(&doc, "client claude-code");
    assert_eq!(c["fix"], "berth install claude-code");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains(&file.display().to_string()),
        "{c}"
    );
    let _ = env.run_berth(["install", "claude-code"]).success();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");

    // A file that no longer parses names itself.
    std::fs::write(&file, "{ not json").unwrap();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    let c = check(&doc, "client claude-code");
    assert!(
        c["detail"].as_str().unwrap().contains("not valid JSON"),
        "{c}"
    );
}

/// Codex's stripped environment: without BERTH_DATA_DIR in `env_vars` its
/// server would open another registry. And its hooks wait for approval
/// until Codex records one.
#[test]
fn codex_env_vars_and_hook_approval_are_checked() {
    let env = fresh();
    let _ = env.run_berth(["install", "codex"]).success();
    let config = env.home().join(".codex").join("config.toml");
    let hooks = env.home().join(".codex").join("hooks.json");
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    assert_eq!(problems(&doc), ["codex hooks"]);
    let c = check(&doc, "codex hooks");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains("SessionStart, Stop and PreToolUse hooks are waiting for approval"),
        "{c}"
    );
    assert_eq!(
        c["fix"],
        "start Codex, open /hooks and approve berth's hooks"
    );
    assert_eq!(check(&doc, "environment codex")["status"], "ok");

    // Codex's record of an approval, as `/hooks` writes it.
    let mut text = std::fs::read_to_string(&config).unwrap();
    for event in ["session_start", "stop", "pre_tool_use"] {
        text.push_str(&format!(
            "\n[hooks.state.\"{}:{event}:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
            // A TOML basic string: on Windows the path's `\` escaped.
            hooks.display().to_string().replace('\\', "\\\\")
        ));
    }
    std::fs::write(&config, &text).unwrap();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
    assert_eq!(check(&doc, "codex hooks")["status"], "ok");

    // The user dropped BERTH_DATA_DIR from env_vars: Codex's server would
    // derive another data folder.
    std::fs::write(&config, text.replace("\"BERTH_DATA_DIR\", ", "")).unwrap();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    assert_eq!(problems(&doc), ["client codex", "environment codex"]);
    let e = check(&doc, "environment codex");
    assert!(
        e["detail"].as_str().unwrap().contains(
            &env.root()
                .join("xdg-data")
                .join("berth")
                .display()
                .to_string()
        ),
        "{e}"
    );
    assert_eq!(e["fix"], "berth install codex");
    let _ = env.run_berth(["install", "codex"]).success();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
}

/// A desktop app does not see what a shell profile exports: with
/// BERTH_DATA_DIR set only in the shell, VS Code's server opens another
/// registry, until the entry's `env` names it.
#[test]
fn a_desktop_client_without_the_shells_data_folder_is_told_to_set_it() {
    let env = fresh();
    let _ = env.run_berth(["install", "vscode"]).success();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(1), "{doc:#}");
    assert_eq!(problems(&doc), ["environment vscode"]);
    let fix = check(&doc, "environment vscode")["fix"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        fix.contains(&format!(
            "\"BERTH_DATA_DIR\": \"{}\"",
            env.data_dir().display()
        )),
        "{fix}"
    );
    let file = env
        .root()
        .join("config")
        .join("Code")
        .join("User")
        .join("mcp.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["servers"]["berth"]["env"] =
        serde_json::json!({"BERTH_DATA_DIR": env.data_dir().display().to_string()});
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
}

/// The clients with hooks, and the scopes each has.
const WITH_HOOKS: [(&str, &[&str]); 5] = [
    ("claude-code", &["user", "project"]),
    ("codex", &["user", "project"]),
    ("vscode", &["user", "project"]),
    ("cursor", &["user", "project"]),
    ("copilot-cli", &["user"]),
];

/// Removes berth's server entry from an MCP server file by hand, as a user would: the `berth`
/// table of Codex's TOML, the `berth` key of the JSON's servers.
fn remove_server_entry(file: &std::path::Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let edited = if file.extension().is_some_and(|e| e == "toml") {
        let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
        doc["mcp_servers"]
            .as_table_like_mut()
            .unwrap()
            .remove("berth")
            .unwrap();
        doc.to_string()
    } else {
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        let servers = if doc.get("servers").is_some() {
            "servers"
        } else {
            "mcpServers"
        };
        doc[servers]
            .as_object_mut()
            .unwrap()
            .remove("berth")
            .unwrap();
        serde_json::to_string_pretty(&doc).unwrap()
    };
    std::fs::write(file, edited).unwrap();
}

/// The case a user met: after `berth install claude-code`, `mcpServers.berth` removed from
/// `~/.claude.json` by hand, the hooks left in `~/.claude/settings.json`. Doctor said "no
/// client is registered" and exited 0.
#[test]
fn claude_code_without_its_mcp_entry_is_partly_registered() {
    let env = fresh();
    let _ = env.run_berth(["install", "claude-code"]).success();
    let file = env.home().join(".claude.json");
    remove_server_entry(&file);
    let run = env.run_berth(["doctor"]).failure(1);
    let text = run.stdout();
    let settings = env.home().join(".claude").join("settings.json");
    assert!(
        text.contains(&format!(
            "problem  client claude-code: partly registered: berth's MCP server entry is missing from {}; berth's hooks are still in {}",
            file.display(),
            settings.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "         fix: berth install claude-code to complete it, or berth uninstall claude-code to remove the rest\n"
        ),
        "{text}"
    );
    assert!(!text.contains("no client is registered"), "{text}");
}

/// Each client with hooks, in each scope, with either part of its registration removed by
/// hand: a problem naming the client partly registered and the file that lacks berth's part,
/// whose fix works.
#[test]
fn a_client_missing_either_part_of_its_registration_is_partly_registered() {
    for (client, scopes) in WITH_HOOKS {
        for scope in scopes {
            for part in ["server", "hooks"] {
                let case = format!("{client} --scope {scope}, without its {part}");
                let env = fresh();
                let dir = if *scope == "user" {
                    env.home()
                } else {
                    env.git_root(env.dir("shop"))
                };
                let out = env.json_in(&dir, ["install", client, "--scope", scope]);
                let files: Vec<std::path::PathBuf> = out["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f["file"].as_str().unwrap().into())
                    .collect();
                let missing = if part == "server" {
                    remove_server_entry(&files[0]);
                    &files[0]
                } else {
                    std::fs::remove_file(&files[1]).unwrap();
                    &files[1]
                };
                let run = env.run(env.berth_in(&dir, ["--json", "doctor"]));
                let doc = run.json();
                assert_eq!(run.code(), Some(1), "{case}: {doc:#}");
                let name = if *scope == "user" {
                    format!("client {client}")
                } else {
                    format!("client {client} (project)")
                };
                let c = check(&doc, &name);
                assert_eq!(c["status"], "problem", "{case}: {c}");
                let detail = c["detail"].as_str().unwrap();
                assert!(detail.starts_with("partly registered: "), "{case}: {c}");
                assert!(
                    detail.contains(&format!("missing from {}", missing.display())),
                    "{case}: {c}"
                );
                let flag = if *scope == "user" {
                    String::new()
                } else {
                    " --scope project".to_string()
                };
                assert_eq!(
                    c["fix"],
                    format!(
                        "berth install {client}{flag} to complete it, or berth uninstall {client}{flag} to remove the rest"
                    ),
                    "{case}"
                );
                assert_eq!(c["registration"]["state"], "partly registered", "{case}");
                assert_eq!(
                    c["registration"]["missing"],
                    serde_json::json!([missing.display().to_string()]),
                    "{case}"
                );
                // The fix: uninstall removes the rest, and nothing of berth's is left.
                let _ = env
                    .run_in(&dir, ["uninstall", client, "--scope", scope])
                    .success();
                let run = env.run(env.berth_in(&dir, ["--json", "doctor"]));
                assert_eq!(run.code(), Some(0), "{case}: {:#}", run.json());
            }
        }
    }
}

/// VS Code runs the hooks Claude Code registers in `~/.claude/settings.json`: while VS Code's
/// server entry is there they are VS Code's, and Claude Code is not registered, not partly.
#[test]
fn hooks_vscode_shares_are_not_a_partial_claude_code_registration() {
    let env = fresh();
    let _ = env.run_berth(["install", "vscode"]).success();
    let (_, doc) = doctor(&env);
    let names: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"client claude-code"), "{doc:#}");
    assert_eq!(check(&doc, "client vscode")["status"], "ok", "{doc:#}");
    let states: Vec<(String, String)> = check(&doc, "clients")["registrations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["scope"] == "user")
        .map(|r| {
            (
                r["client"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        states.contains(&("claude-code".into(), "not registered".into())),
        "{states:?}"
    );
    assert!(
        states.contains(&("vscode".into(), "registered".into())),
        "{states:?}"
    );
    assert!(
        check(&doc, "clients")["detail"]
            .as_str()
            .unwrap()
            .starts_with("registered: vscode; not registered: claude-code, codex"),
        "{doc:#}"
    );
}

/// A hooks file that cannot be parsed, of a client whose server entry is not there: whether
/// berth's hooks are in it cannot be told, which is said, and is not a failure.
#[test]
fn an_unreadable_hooks_file_without_berths_server_entry_is_unknown() {
    let env = fresh();
    let hooks = env.home().join(".cursor").join("hooks.json");
    std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
    std::fs::write(&hooks, "{ not json").unwrap();
    let (run, doc) = doctor(&env);
    assert_eq!(run.code(), Some(0), "{doc:#}");
    let c = check(&doc, "client cursor");
    assert_eq!(c["status"], "unknown", "{c}");
    let detail = c["detail"].as_str().unwrap();
    assert!(
        detail.contains(&hooks.display().to_string()) && detail.contains("cannot be told"),
        "{c}"
    );
}
