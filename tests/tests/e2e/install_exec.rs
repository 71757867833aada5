//! `berth install <client> --exec NAME -- CMD ...` and `uninstall --exec
//! NAME`: a wrapped server registered in every client's MCP file, removed
//! byte for byte, never over a server the user registered
//! (docs/decisions/0026-berth-exec.md, docs/decisions/0008-registering-clients.md).

use std::path::{Path, PathBuf};

use berth_tests::TestEnv;

/// Each client's MCP file (under the test root) and a realistic existing
/// content holding a server of the user's.
const CLIENTS: [(&str, &str, &str); 7] = [
    (
        "claude-code",
        "home/.claude.json",
        "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"other-mcp\"\n    }\n  }\n}\n",
    ),
    (
        "codex",
        "home/.codex/config.toml",
        "# mine\nmodel = \"o3\"  # fast\n\n[mcp_servers.other]\ncommand = \"other-mcp\"\n",
    ),
    (
        "vscode",
        "config/Code/User/mcp.json",
        "{\n\t\"servers\": {\n\t\t\"other\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"other-mcp\"\n\t\t}\n\t},\n\t\"inputs\": []\n}",
    ),
    (
        "cursor",
        "home/.cursor/mcp.json",
        "{\n    \"mcpServers\": {\n        \"other\": {\n            \"command\": \"x\"\n        }\n    }\n}\n",
    ),
    (
        "claude-desktop",
        "config/Claude/claude_desktop_config.json",
        "{\n  \"mcpServers\": {},\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n",
    ),
    (
        "cline",
        "config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\",\n      \"disabled\": true\n    }\n  }\n}",
    ),
    (
        "copilot-cli",
        "home/.copilot/mcp-config.json",
        "{\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"local\",\n      \"command\": \"x\",\n      \"tools\": [\n        \"*\"\n      ]\n    }\n  }\n}\n",
    ),
];

const WRAPPED: [&str; 4] = ["basic-memory", "mcp", "--project", "{workspace}"];

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn backup_of(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.berth-backup", p.display()))
}

/// `berth --json install CLIENT --exec NAME -- CMD...`, which must succeed.
fn install_exec(env: &TestEnv, client: &str, name: &str, cmd: &[&str]) -> serde_json::Value {
    let mut args = vec!["install", client, "--exec", name, "--"];
    args.extend_from_slice(cmd);
    env.json(args)
}

/// The server entry `name` in a client's file, as JSON (TOML converted).
fn entry(text: &str, client: &str, name: &str) -> serde_json::Value {
    if client == "codex" {
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        let t = &doc["mcp_servers"][name];
        let strings = |k: &str| -> Vec<String> {
            t[k].as_array()
                .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        return serde_json::json!({
            "command": t["command"].as_str(),
            "args": strings("args"),
            "env_vars": strings("env_vars"),
        });
    }
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    let container = if client == "vscode" {
        "servers"
    } else {
        "mcpServers"
    };
    doc[container][name].clone()
}

#[test]
fn install_exec_registers_berth_exec_and_uninstall_gives_back_the_bytes() {
    for (client, rel, original) in CLIENTS {
        for existing in [Some(original), None] {
            let env = TestEnv::new();
            let file = env.root().join(rel);
            if let Some(o) = existing {
                write(&file, o);
            }
            let out = install_exec(&env, client, "mem", &WRAPPED);
            assert_eq!(out["changed"], true, "{client}: {out}");
            assert_eq!(out["server"], "mem", "{client}: {out}");
            let text = read(&file).unwrap();
            let e = entry(&text, client, "mem");
            let mut want = vec!["exec", "--roots", "home"];
            if matches!(client, "vscode" | "cursor") {
                want.extend(["--cwd", "${workspaceFolder}"]);
            }
            want.push("--");
            want.extend(WRAPPED);
            assert_eq!(e["args"], serde_json::json!(want), "{client}: {text}");
            assert_eq!(
                e["command"],
                berth_tests::bin("berth").display().to_string(),
                "{client}"
            );
            if client == "codex" {
                let vars = e["env_vars"].as_array().unwrap();
                assert!(vars.iter().any(|v| v == "BERTH_SOCKET"), "{text}");
                assert!(vars.iter().any(|v| v == "BERTH_DATA_DIR"), "{text}");
            }
            // A second install changes nothing.
            let again = install_exec(&env, client, "mem", &WRAPPED);
            assert_eq!(again["changed"], false, "{client}: {again}");
            let out = env.json(["uninstall", client, "--exec", "mem"]);
            assert_eq!(out["changed"], true, "{client}: {out}");
            assert_eq!(
                read(&file).as_deref(),
                existing,
                "{client}: uninstall --exec did not give back {rel}"
            );
            assert!(!backup_of(&file).exists(), "{client}: a backup outlived it");
        }
    }
}

#[test]
fn berths_own_server_and_wrapped_ones_come_and_go_in_any_order() {
    for (client, rel, original) in [CLIENTS[0], CLIENTS[1]] {
        let env = TestEnv::new();
        let file = env.root().join(rel);
        write(&file, original);
        // berth, then a wrapper; the wrapper goes first.
        env.json(["install", client]);
        let installed = read(&file).unwrap();
        install_exec(&env, client, "mem", &WRAPPED);
        let out = env.json(["uninstall", client, "--exec", "mem"]);
        assert_eq!(out["files"][0]["restored"], false, "{client}: {out}");
        assert_eq!(read(&file).unwrap(), installed, "{client}");
        assert!(backup_of(&file).exists(), "{client}: berth still needs it");
        env.json(["uninstall", client]);
        assert_eq!(read(&file).unwrap(), original, "{client}");
        assert!(!backup_of(&file).exists(), "{client}");
        // A wrapper, then berth; berth goes first, and the wrapper keeps
        // the backup until it goes too.
        install_exec(&env, client, "mem", &WRAPPED);
        env.json(["install", client]);
        let out = env.json(["uninstall", client]);
        assert_eq!(out["backup"], serde_json::Value::Null, "{client}: {out}");
        assert!(
            backup_of(&file).exists(),
            "{client}: the wrapper still needs it"
        );
        assert!(read(&file).unwrap().contains("\"exec\""), "{client}");
        env.json(["uninstall", client, "--exec", "mem"]);
        assert_eq!(read(&file).unwrap(), original, "{client}");
        assert!(!backup_of(&file).exists(), "{client}");
    }
}

#[test]
fn a_server_the_user_registered_under_that_name_is_never_touched() {
    for (client, rel, _) in CLIENTS {
        let env = TestEnv::new();
        let file = env.root().join(rel);
        let mine = if client == "codex" {
            "[mcp_servers.mem]\ncommand = \"my-memory\"\n".to_string()
        } else {
            let container = if client == "vscode" {
                "servers"
            } else {
                "mcpServers"
            };
            format!(
                "{{\"{container}\": {{\"mem\": {{\"command\": \"my-memory\", \"args\": [\"exec\"]}}}}}}\n"
            )
        };
        write(&file, &mine);
        let mut args = vec!["install", client, "--exec", "mem", "--"];
        args.extend(WRAPPED);
        let run = env
            .run_berth(&args)
            .failure(1)
            .stderr_has(&["already has a server named mem", "another name"]);
        assert!(run.output.stdout.is_empty(), "{client}");
        assert_eq!(read(&file).unwrap(), mine, "{client}");
        let _ = env
            .run_berth(["uninstall", client, "--exec", "mem"])
            .failure(1)
            .stderr_has(&["did not register"]);
        assert_eq!(read(&file).unwrap(), mine, "{client}");
        assert!(!backup_of(&file).exists(), "{client}");
    }
}

#[test]
fn bad_names_and_templates_are_usage_errors() {
    let env = TestEnv::new();
    for args in [
        &["install", "cursor", "--exec", "mem"][..],
        &["install", "cursor", "--", "x"],
        &["install", "cursor", "--exec", "berth", "--", "x"],
        &["install", "cursor", "--exec", "a b", "--", "x"],
        &[
            "install",
            "cursor",
            "--exec",
            "mem",
            "--",
            "x",
            "--p={worksapce}",
        ],
        &["uninstall", "cursor", "--exec", "a.b"],
    ] {
        let run = env.run_berth(args).failure(2);
        assert!(run.output.stdout.is_empty(), "{args:?}");
    }
    assert!(!env.home().join(".cursor").exists());
}

#[test]
fn a_placeholder_in_shell_code_is_refused_at_install_and_nothing_is_written() {
    let env = TestEnv::new();
    for (client, rel, _) in CLIENTS {
        let file = env.root().join(rel);
        let run = env
            .run_berth([
                "install",
                client,
                "--exec",
                "show",
                "--",
                "sh",
                "-c",
                "echo starting in {project}",
            ])
            .failure(2)
            .stderr_has(&["sh -c", "{project}", "\"$BERTH_PROJECT\""]);
        assert!(run.output.stdout.is_empty(), "{client}");
        assert!(!file.exists(), "{client}: {}", file.display());
    }
    // The safe form registers.
    let doc = install_exec(
        &env,
        "cursor",
        "show",
        &["sh", "-c", "echo starting in \"$BERTH_PROJECT\""],
    );
    assert_eq!(doc["changed"], true, "{doc}");
}

// Runs sh.
#[cfg(unix)]
#[test]
fn the_registered_command_runs_the_server_in_the_sessions_workspace() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let project = env.git_root(env.dir("shop-repo"));
    env.json_in(&project, ["workspace", "use", "shop"]);
    install_exec(
        &env,
        "claude-code",
        "show",
        &[
            "sh",
            "-c",
            "printf '%s %s' \"$BERTH_WORKSPACE\" \"$0\"",
            "{workspace}",
        ],
    );
    let text = read(&env.home().join(".claude.json")).unwrap();
    let e = entry(&text, "claude-code", "show");
    // As Claude Code starts it: in its launch folder, the project.
    let mut cmd = env.command(e["command"].as_str().unwrap());
    cmd.current_dir(&project);
    for a in e["args"].as_array().unwrap() {
        cmd.arg(a.as_str().unwrap());
    }
    assert_eq!(env.run(cmd).success().stdout(), "shop shop");
}

#[test]
fn install_writes_the_roots_flag_and_an_entry_from_before_the_flag_is_still_berths() {
    let (client, rel, _) = CLIENTS[0];
    let env = TestEnv::new();
    let file = env.root().join(rel);
    let berth = berth_tests::bin("berth").display().to_string();
    // An entry as install wrote it before `--roots` (ADR 0051).
    let old = serde_json::json!({"mcpServers": {"mem": {
        "type": "stdio", "command": berth, "args": ["exec", "--", "basic-memory", "mcp"]}}});
    write(&file, &format!("{old:#}\n"));
    let mut args = vec![
        "install", client, "--exec", "mem", "--roots", "project", "--",
    ];
    args.extend(WRAPPED);
    let out = env.json(args);
    assert_eq!(out["changed"], true, "{out}");
    let e = entry(&read(&file).unwrap(), client, "mem");
    let args = e["args"].as_array().unwrap();
    assert_eq!(
        args[..3],
        serde_json::json!(["exec", "--roots", "project"])
            .as_array()
            .unwrap()[..],
        "{e}"
    );
    let out = env.json(["uninstall", client, "--exec", "mem"]);
    assert_eq!(out["changed"], true, "{out}");
    write(&file, &format!("{old:#}\n"));
    let out = env.json(["uninstall", client, "--exec", "mem"]);
    assert_eq!(out["changed"], true, "an old entry is removed too: {out}");
    let _ = env
        .run_berth(["install", client, "--roots", "home"])
        .failure(2);
}
