//! End to end: `berth install` / `uninstall` for every client against the
//! real binary, in a hermetic HOME and XDG_CONFIG_HOME; shell completions
//! and man pages; and berthd serving on a socket systemd would pass it.
//!
//! Run with `cargo test --workspace` (the harness needs every binary built).

// Tests write files freely (clippy.toml's bans are for product code).
#![allow(clippy::disallowed_methods)]
use std::path::{Path, PathBuf};

use berth_tests::TestEnv;
use serde_json::Value;

/// One client's files: where they live under the test root, and a realistic
/// existing content with other servers and keys (`None`: no such file).
struct Case {
    client: &'static str,
    files: Vec<(&'static str, Option<&'static str>)>,
}

const CLAUDE_SETTINGS: &str = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(ls)"
    ]
  }
}
"#;

fn cases() -> Vec<Case> {
    vec![
        Case {
            client: "claude-code",
            files: vec![
                (
                    "home/.claude.json",
                    Some(
                        "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"other-mcp\",\n      \"args\": [\n        \"--x\"\n      ]\n    }\n  },\n  \"projects\": {\n    \"/p\": {\n      \"allowedTools\": []\n    }\n  }\n}\n",
                    ),
                ),
                ("home/.claude/settings.json", Some(CLAUDE_SETTINGS)),
            ],
        },
        Case {
            client: "codex",
            files: vec![
                (
                    "home/.codex/config.toml",
                    Some(
                        "# my codex settings\nmodel = \"o3\"  # the fast one\n\n[mcp_servers.other]\ncommand = \"other-mcp\"\nargs = [\"--x\"]   # keep\n",
                    ),
                ),
                (
                    "home/.codex/hooks.json",
                    Some(
                        "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"matcher\": \"startup\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"echo hi\"\n          }\n        ]\n      }\n    ]\n  }\n}\n",
                    ),
                ),
            ],
        },
        Case {
            client: "vscode",
            files: vec![
                (
                    "config/Code/User/mcp.json",
                    Some(
                        "{\n\t\"servers\": {\n\t\t\"other\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"other-mcp\"\n\t\t}\n\t},\n\t\"inputs\": []\n}",
                    ),
                ),
                ("home/.claude/settings.json", Some(CLAUDE_SETTINGS)),
            ],
        },
        Case {
            client: "cursor",
            files: vec![
                (
                    "home/.cursor/mcp.json",
                    Some(
                        "{\n    \"mcpServers\": {\n        \"other\": {\n            \"command\": \"x\"\n        }\n    }\n}\n",
                    ),
                ),
                (
                    "home/.cursor/hooks.json",
                    Some(
                        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [\n      {\n        \"command\": \"./fmt.sh\"\n      }\n    ]\n  }\n}\n",
                    ),
                ),
            ],
        },
        Case {
            client: "claude-desktop",
            files: vec![(
                "config/Claude/claude_desktop_config.json",
                Some(
                    "{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"server-filesystem\"\n      ]\n    }\n  },\n  \"globalShortcut\": \"Ctrl+Space\"\n}\n",
                ),
            )],
        },
        Case {
            client: "cline",
            files: vec![(
                "config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
                Some(
                    "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\",\n      \"args\": [],\n      \"disabled\": true,\n      \"autoApprove\": []\n    }\n  }\n}",
                ),
            )],
        },
        Case {
            client: "copilot-cli",
            files: vec![
                (
                    "home/.copilot/mcp-config.json",
                    Some(
                        "{\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"local\",\n      \"command\": \"x\",\n      \"args\": [],\n      \"tools\": [\n        \"*\"\n      ]\n    }\n  }\n}\n",
                    ),
                ),
                ("home/.copilot/hooks/berth.json", None),
            ],
        },
    ]
}

/// `<root>/<rel>`, `rel` written with `/`, spelled as berth spells it (on
/// Windows with `\`).
fn path(env: &TestEnv, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(env.root().to_path_buf(), |p, c| p.join(c))
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn install(env: &TestEnv, client: &str) -> Value {
    env.json(["install", client])
}

/// How often berth's programs occur in a file: each registration names
/// `berth-mcp` once per server and `berth-hook` once per hook.
fn berth_mentions(text: &str) -> (usize, usize) {
    (
        text.matches("berth-mcp").count(),
        text.matches("berth-hook").count(),
    )
}

/// Whether `big` holds everything of `small`: the same keys in the same
/// order with the same values, where lists may have grown at their end.
fn contains(big: &Value, small: &Value) -> bool {
    match (big, small) {
        (Value::Object(b), Value::Object(s)) => {
            let order: Vec<_> = b.keys().filter(|k| s.contains_key(*k)).collect();
            order == s.keys().collect::<Vec<_>>()
                && s.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|bv| contains(bv, v)))
        }
        (Value::Array(b), Value::Array(s)) => {
            b.len() >= s.len() && s.iter().zip(b).all(|(sv, bv)| contains(bv, sv))
        }
        _ => big == small,
    }
}

#[test]
fn install_into_no_config_creates_the_files_and_uninstall_removes_them() {
    for case in cases() {
        let env = TestEnv::new();
        let out = install(&env, case.client);
        assert_eq!(out["client"], case.client);
        assert_eq!(out["changed"], true, "{out}");
        assert_eq!(out["dry_run"], false);
        assert_eq!(out["backup"], Value::Null, "nothing to back up: {out}");
        let listed: Vec<_> = out["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file"].clone())
            .collect();
        assert_eq!(listed.len(), case.files.len(), "{out}");
        for (rel, _) in &case.files {
            let p = path(&env, rel);
            let text = read(&p).unwrap_or_else(|| panic!("{}: {rel} was not created", case.client));
            assert!(
                listed.contains(&Value::String(p.display().to_string())),
                "{out}"
            );
            let (mcp, hook) = berth_mentions(&text);
            assert!(
                mcp + hook > 0,
                "{}: {rel} names no berth program:\n{text}",
                case.client
            );
            if rel.ends_with(".json") {
                serde_json::from_str::<Value>(&text).expect("valid JSON");
            }
        }
        let _ = env.run_berth(["uninstall", case.client]).success();
        for (rel, _) in &case.files {
            assert!(
                !path(&env, rel).exists(),
                "{}: {rel} is left after uninstall",
                case.client
            );
        }
    }
}

#[test]
fn install_keeps_other_servers_and_keys_and_uninstall_restores_the_bytes() {
    for case in cases() {
        let env = TestEnv::new();
        for (rel, original) in &case.files {
            if let Some(o) = original {
                write(&path(&env, rel), o);
            }
        }
        let out = install(&env, case.client);
        assert_eq!(out["changed"], true, "{out}");
        assert!(
            out["backup"].is_string(),
            "an existing file is backed up: {out}"
        );
        for (rel, original) in &case.files {
            let Some(original) = original else { continue };
            let p = path(&env, rel);
            let text = read(&p).unwrap();
            let backup = read(&PathBuf::from(format!("{}.berth-backup", p.display())));
            assert_eq!(
                backup.as_deref(),
                Some(*original),
                "{}: backup of {rel}",
                case.client
            );
            if rel.ends_with(".toml") {
                // toml_edit keeps every byte of the rest, comments included.
                assert!(
                    text.starts_with(original),
                    "{}: {rel} lost its content:\n{text}",
                    case.client
                );
                assert!(text.contains("[mcp_servers.berth]"), "{text}");
            } else {
                let before: Value = serde_json::from_str(original).unwrap();
                let after: Value = serde_json::from_str(&text).unwrap();
                assert!(
                    contains(&after, &before),
                    "{}: {rel} lost something:\n{text}",
                    case.client
                );
                // The file keeps its indentation.
                let indent = |t: &str| t.lines().nth(1).map(|l| l.len() - l.trim_start().len());
                let tabs = |t: &str| t.lines().nth(1).is_some_and(|l| l.starts_with('\t'));
                assert_eq!(
                    (indent(&text), tabs(&text)),
                    (indent(original), tabs(original)),
                    "{text}"
                );
            }
        }
        let _ = env.run_berth(["uninstall", case.client]).success();
        for (rel, original) in &case.files {
            assert_eq!(
                read(&path(&env, rel)).as_deref(),
                *original,
                "{}: uninstall did not restore {rel}",
                case.client
            );
        }
    }
}

#[test]
fn installing_twice_adds_nothing_the_second_time() {
    for case in cases() {
        let env = TestEnv::new();
        for (rel, original) in &case.files {
            if let Some(o) = original {
                write(&path(&env, rel), o);
            }
        }
        install(&env, case.client);
        let first: Vec<_> = case
            .files
            .iter()
            .map(|(rel, _)| read(&path(&env, rel)))
            .collect();
        let again = install(&env, case.client);
        assert_eq!(again["changed"], false, "{}: {again}", case.client);
        let second: Vec<_> = case
            .files
            .iter()
            .map(|(rel, _)| read(&path(&env, rel)))
            .collect();
        assert_eq!(first, second, "{}", case.client);
        for text in second.iter().flatten() {
            let (mcp, hook) = berth_mentions(text);
            assert!(
                mcp <= 1,
                "{}: berth-mcp registered {mcp} times:\n{text}",
                case.client
            );
            // session-start, stop and pre-tool.
            assert!(
                hook <= 3,
                "{}: berth-hook registered {hook} times:\n{text}",
                case.client
            );
        }
    }
}

#[test]
fn a_malformed_config_is_refused_and_left_untouched() {
    for case in cases() {
        let env = TestEnv::new();
        let (rel, _) = case.files[0];
        let bad = if rel.ends_with(".toml") {
            "[mcp_servers\ncommand = \n"
        } else {
            "{\n  \"mcpServers\": {\n"
        };
        let p = path(&env, rel);
        write(&p, bad);
        let _ = env
            .run_berth(["install", case.client])
            .failure(1)
            .stderr_has(&[&p.display().to_string(), "Nothing was changed"]);
        assert_eq!(read(&p).as_deref(), Some(bad), "{}", case.client);
        for (other, _) in &case.files[1..] {
            assert!(
                !path(&env, other).exists(),
                "{}: {other} was written",
                case.client
            );
        }
        assert!(!PathBuf::from(format!("{}.berth-backup", p.display())).exists());
        let _ = env.run_berth(["uninstall", case.client]).failure(1);
        assert_eq!(read(&p).as_deref(), Some(bad), "{}", case.client);
    }
}

/// Links planted at the temporary names `berth install` could write
/// through (the one its process id makes, in every spelling berth used) point
/// at a victim file: the victim is untouched, and the configs are written as
/// files. `exec` keeps the shell's pid, so the names are known in advance.
// sh and ln -s; creating a symbolic link takes a privilege on Windows.
#[cfg(unix)]
#[test]
fn install_never_writes_through_a_link_planted_at_its_temporary_name() {
    let env = TestEnv::new();
    let victim = env.root().join("victim");
    write(&victim, "precious");
    let mut plant = String::new();
    for (rel, text) in &cases()[0].files {
        let p = path(&env, rel);
        write(&p, text.unwrap());
        let (dir, name) = (
            p.parent().unwrap(),
            p.file_name().unwrap().to_str().unwrap(),
        );
        let mut names = vec![format!(".{name}.berth-$$.tmp")];
        names.extend((0..8).map(|n| format!(".{name}.berth-tmp-$$-{n}")));
        for tmp in names {
            plant += &format!(
                "ln -s \"{}\" \"{}/{tmp}\" && ",
                victim.display(),
                dir.display()
            );
        }
    }
    let mut cmd = env.command("sh");
    cmd.arg("-c")
        .arg(format!("{plant}exec \"$0\" install claude-code"))
        .arg(berth_tests::bin("berth"));
    let _ = env.run(cmd).success();
    assert_eq!(read(&victim).as_deref(), Some("precious"));
    for (rel, _) in &cases()[0].files {
        let p = path(&env, rel);
        assert!(std::fs::symlink_metadata(&p).unwrap().is_file(), "{rel}");
        assert!(read(&p).unwrap().contains("berth-"), "{rel}");
    }
}

#[test]
fn a_config_of_the_wrong_shape_is_refused() {
    let env = TestEnv::new();
    let p = path(&env, "home/.cursor/mcp.json");
    write(&p, "{\"mcpServers\": [1, 2]}\n");
    let _ = env
        .run_berth(["install", "cursor"])
        .failure(1)
        .stderr_has(&["\"mcpServers\" is not an object"]);
    assert_eq!(read(&p).as_deref(), Some("{\"mcpServers\": [1, 2]}\n"));
}

#[test]
fn a_dry_run_prints_a_diff_and_writes_nothing() {
    for case in cases() {
        let env = TestEnv::new();
        let run = env
            .run_berth(["install", case.client, "--dry-run"])
            .success();
        let out = run.stdout();
        assert!(
            out.contains("+++ ") && out.contains("@@"),
            "{}: no diff:\n{out}",
            case.client
        );
        assert!(out.contains("berth-mcp"), "{out}");
        for (rel, _) in &case.files {
            assert!(
                !path(&env, rel).exists(),
                "{}: {rel} was written",
                case.client
            );
        }
        let json = env.json(["install", case.client, "--dry-run"]);
        assert_eq!(json["dry_run"], true);
        assert_eq!(json["changed"], true);
        assert!(
            json["files"][0]["diff"]
                .as_str()
                .unwrap()
                .contains("berth-mcp")
        );
        for (rel, _) in &case.files {
            assert!(
                !path(&env, rel).exists(),
                "{}: {rel} was written",
                case.client
            );
        }
    }
}

#[test]
fn the_registration_names_the_programs_beside_berth_and_the_workspace_folder() {
    let env = TestEnv::new();
    install(&env, "vscode");
    install(&env, "cursor");
    let mcp = berth_tests::bin("berth-mcp").display().to_string();
    let vscode: Value =
        serde_json::from_str(&read(&path(&env, "config/Code/User/mcp.json")).unwrap()).unwrap();
    assert_eq!(vscode["servers"]["berth"]["command"], mcp.as_str());
    assert_eq!(
        vscode["servers"]["berth"]["args"],
        serde_json::json!(["--cwd", "${workspaceFolder}"])
    );
    let cursor: Value =
        serde_json::from_str(&read(&path(&env, "home/.cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(
        cursor["mcpServers"]["berth"]["args"][1],
        "${workspaceFolder}"
    );
    let hooks: Value =
        serde_json::from_str(&read(&path(&env, "home/.cursor/hooks.json")).unwrap()).unwrap();
    assert_eq!(hooks["version"], 1);
    let start = hooks["hooks"]["sessionStart"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(
        start,
        format!(
            "{} session-start --client cursor",
            berth_tests::bin("berth-hook").display()
        )
    );
}

#[test]
fn claude_code_and_vscode_share_their_hooks_until_both_are_gone() {
    let env = TestEnv::new();
    let settings = path(&env, "home/.claude/settings.json");
    install(&env, "claude-code");
    let after_one = read(&settings).unwrap();
    let again = install(&env, "vscode");
    assert_eq!(again["files"][1]["changed"], false, "{again}");
    assert_eq!(read(&settings).unwrap(), after_one);
    let _ = env.run_berth(["uninstall", "vscode"]).success();
    assert_eq!(
        read(&settings).as_deref(),
        Some(after_one.as_str()),
        "Claude Code still uses the hooks"
    );
    let _ = env.run_berth(["uninstall", "claude-code"]).success();
    assert!(!settings.exists());
}

#[test]
fn project_scope_writes_into_the_current_directory() {
    let env = TestEnv::new();
    let project = env.dir("src/app");
    let run = env.run(env.berth_in(
        &project,
        ["--json", "install", "cursor", "--scope", "project"],
    ));
    let out = run.success().json();
    assert_eq!(
        out["file"],
        project
            .join(".cursor")
            .join("mcp.json")
            .display()
            .to_string()
    );
    assert!(project.join(".cursor/hooks.json").is_file());
    assert!(!path(&env, "home/.cursor").exists());
    let _ = env
        .run(env.berth_in(&project, ["uninstall", "cursor", "--scope", "project"]))
        .success();
    assert!(!project.join(".cursor/mcp.json").exists());
}

#[test]
fn clients_without_project_files_refuse_project_scope() {
    let env = TestEnv::new();
    let _ = env
        .run_berth(["install", "claude-desktop", "--scope", "project"])
        .failure(2)
        .stderr_has(&["--scope user"]);
    let _ = env.run_berth(["install", "no-such-client"]).failure(2);
}

#[test]
fn completions_are_generated_for_every_shell() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = env.run_berth(["completions", shell]).success();
        let script = run.stdout();
        assert!(script.len() > 100, "{shell}: {script}");
        assert!(
            script.contains("workspace"),
            "{shell} completion lacks the workspace command"
        );
        assert!(
            script.contains("install"),
            "{shell} completion lacks the install command"
        );
        assert!(
            script.contains("List every setting") || script.contains("setting,list)"),
            "{shell} completion lacks `setting list`"
        );
    }
    let _ = env.run_berth(["completions", "tcsh"]).failure(2);
}

#[test]
fn man_pages_are_roff() {
    let env = TestEnv::new();
    let page = env.run_berth(["man"]).success().stdout();
    assert!(
        page.starts_with(".ie") || page.contains("\n.TH berth"),
        "{page}"
    );
    assert!(
        page.contains(".SH NAME") && page.contains("workspace"),
        "{page}"
    );
    let dir = env.root().join("man");
    // A link already at a page's name is replaced, never written through.
    // (Creating a link takes a privilege on Windows.)
    let victim = env.root().join("victim");
    write(&victim, "precious");
    std::fs::create_dir_all(&dir).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&victim, dir.join("berth-install.1")).unwrap();
    let _ = env
        .run_berth(["man", "--dir", dir.to_str().unwrap()])
        .success();
    assert_eq!(read(&victim).as_deref(), Some("precious"));
    assert!(!dir.join("berth-install.1").is_symlink());
    let sub =
        std::fs::read_to_string(dir.join("berth-workspace-list.1")).expect("a page per subcommand");
    assert!(sub.contains(".TH berth-workspace-list"), "{sub}");
    assert!(dir.join("berth-install.1").is_file());
    assert!(dir.join("berth-setting-list.1").is_file());
}

/// berthd started the way systemd starts it: a listening socket as
/// descriptor 3, `LISTEN_FDS=1` and `LISTEN_PID` = its own pid.
// Socket activation by systemd is Unix's.
#[cfg(unix)]
#[test]
fn berthd_serves_on_a_socket_systemd_passed_it() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;

    let env = TestEnv::new();
    let socket = env.socket();
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).unwrap();
    let fd = listener.as_raw_fd();
    // LISTEN_PID must be the daemon's own pid, known only in the child.
    // Setting a variable after fork is not async-signal-safe, so a shell
    // does it: `$$` is the shell's pid, and `exec` keeps that pid for
    // berthd. pre_exec only moves the socket to descriptor 3.
    let mut cmd = env.command("/bin/sh");
    cmd.args([
        "-c",
        "LISTEN_PID=$$ LISTEN_FDS=1 exec \"$0\" --foreground",
        berth_tests::bin("berthd").to_str().unwrap(),
    ]);
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: dup2 and fcntl are async-signal-safe and touch only descriptors.
    unsafe {
        cmd.pre_exec(move || {
            if fd == 3 {
                if libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn berthd");
    // The socket already listens, so the request waits in its backlog
    // until berthd accepts it: no readiness wait is needed.
    let status = env.json(["daemon", "status"]);
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(
        status["pid"],
        child.id(),
        "the systemd-started berthd answered: {status}"
    );
    berth_tests::signal(child.id(), libc::SIGTERM);
    let exit = child.wait().unwrap();
    assert!(exit.success(), "berthd exited with {exit}");
    assert!(
        socket.exists(),
        "systemd's socket file must outlive the daemon"
    );
    drop(listener);
}

/// Codex starts MCP servers with a stripped environment: berth's entry names
/// the variables that decide berth's paths and pins in `env_vars`, which
/// Codex forwards from its own environment.
#[test]
fn codex_forwards_the_variables_that_decide_berths_paths() {
    const NAMES: [&str; 11] = [
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
    let env = TestEnv::new();
    let config = path(&env, "home/.codex/config.toml");
    // What an older berth registered: no `env_vars`.
    let older = "model = \"o3\"\n\n[mcp_servers.berth]\ncommand = \"/old/berth-mcp\"\nargs = []\n";
    write(&config, older);
    install(&env, "codex");
    let text = read(&config).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("env_vars = "))
        .unwrap_or_else(|| panic!("no env_vars in:\n{text}"));
    let quoted: Vec<String> = NAMES.iter().map(|n| format!("\"{n}\"")).collect();
    assert_eq!(line, format!("env_vars = [{}]", quoted.join(", ")));
    assert_eq!(text.matches("[mcp_servers.berth]").count(), 1, "{text}");

    let again = install(&env, "codex");
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(
        read(&config).unwrap(),
        text,
        "a second install changed the file"
    );

    let _ = env.run_berth(["uninstall", "codex"]).success();
    let left = read(&config).unwrap_or_default();
    assert!(!left.contains("env_vars"), "{left}");
    assert!(!left.contains("mcp_servers"), "{left}");
    assert!(left.contains("model = \"o3\""), "{left}");
}

/// Config files as the editors themselves write them before any server is
/// added: empty objects and lists, `inputs`, a bare `[mcp_servers]` with
/// comments, files without a trailing newline, an empty file.
fn editor_shapes() -> Vec<Case> {
    vec![
        Case {
            client: "claude-code",
            files: vec![
                (
                    "home/.claude.json",
                    Some("{\n  \"numStartups\": 1,\n  \"mcpServers\": {},\n  \"projects\": {}\n}"),
                ),
                (
                    "home/.claude/settings.json",
                    Some(
                        "{\n  \"$schema\": \"https://json.schemastore.org/claude-code-settings.json\",\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n",
                    ),
                ),
            ],
        },
        Case {
            client: "codex",
            files: vec![
                (
                    "home/.codex/config.toml",
                    Some(
                        "# Codex settings\nmodel = \"gpt-5\" # default\n\n[mcp_servers]\n# none yet\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
                    ),
                ),
                ("home/.codex/hooks.json", Some("{\n  \"hooks\": {}\n}\n")),
            ],
        },
        Case {
            client: "vscode",
            files: vec![
                (
                    "config/Code/User/mcp.json",
                    Some("{\n\t\"servers\": {},\n\t\"inputs\": []\n}"),
                ),
                ("home/.claude/settings.json", Some("{}\n")),
            ],
        },
        Case {
            client: "cursor",
            files: vec![
                ("home/.cursor/mcp.json", Some("{\"mcpServers\": {}}")),
                ("home/.cursor/hooks.json", Some("{\n  \"hooks\": {}\n}\n")),
            ],
        },
        Case {
            client: "claude-desktop",
            files: vec![(
                "config/Claude/claude_desktop_config.json",
                Some("{\n  \"mcpServers\": {}\n}\n"),
            )],
        },
        Case {
            client: "cline",
            files: vec![(
                "config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
                Some(""),
            )],
        },
        Case {
            client: "copilot-cli",
            files: vec![
                (
                    "home/.copilot/mcp-config.json",
                    Some("{\n  \"mcpServers\": {}\n}"),
                ),
                ("home/.copilot/hooks/berth.json", None),
            ],
        },
        Case {
            client: "codex",
            files: vec![
                ("home/.codex/config.toml", Some("")),
                ("home/.codex/hooks.json", None),
            ],
        },
        Case {
            client: "cursor",
            files: vec![
                ("home/.cursor/mcp.json", Some("{}\n")),
                (
                    "home/.cursor/hooks.json",
                    Some("{\"version\": 1, \"hooks\": {\"stop\": []}}"),
                ),
            ],
        },
    ]
}

fn backup_of(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.berth-backup", p.display()))
}

/// Installs into `case`'s files, uninstalls, and checks every file is back
/// byte for byte (or absent, as before) and no backup is left behind.
fn assert_round_trip(case: &Case) {
    let env = TestEnv::new();
    for (rel, original) in &case.files {
        if let Some(o) = original {
            write(&path(&env, rel), o);
        }
    }
    let out = install(&env, case.client);
    assert_eq!(out["changed"], true, "{}: {out}", case.client);
    let out = env.json(["uninstall", case.client]);
    assert_eq!(out["changed"], true, "{}: {out}", case.client);
    for (rel, original) in &case.files {
        let p = path(&env, rel);
        assert_eq!(
            read(&p).as_deref(),
            *original,
            "{}: uninstall did not give back {rel}: {out}",
            case.client
        );
        assert!(
            !backup_of(&p).exists(),
            "{}: the backup of {rel} outlived the restore",
            case.client
        );
    }
}

#[test]
fn uninstall_gives_back_the_files_editors_write_byte_for_byte() {
    for case in editor_shapes().iter().chain(cases().iter()) {
        assert_round_trip(case);
    }
}

#[test]
fn the_first_backup_is_never_overwritten_and_goes_once_restored() {
    let env = TestEnv::new();
    let mcp = path(&env, "home/.cursor/mcp.json");
    let original = "{\"mcpServers\": {\"other\": {\"command\": \"x\"}}}";
    write(&mcp, original);
    install(&env, "cursor");
    assert_eq!(read(&backup_of(&mcp)).as_deref(), Some(original));
    // The user changes berth's entry; a second install puts it right again
    // and must not replace the pre-install backup with the installed file.
    let installed = read(&mcp).unwrap();
    write(&mcp, &installed.replace("--cwd", "--nope"));
    let again = install(&env, "cursor");
    assert_eq!(again["files"][0]["changed"], true, "{again}");
    assert_eq!(again["files"][0]["backup"], Value::Null, "{again}");
    assert_eq!(read(&backup_of(&mcp)).as_deref(), Some(original));
    let out = env.json(["uninstall", "cursor"]);
    assert_eq!(out["files"][0]["action"], "restored", "{out}");
    assert_eq!(out["files"][0]["restored"], true, "{out}");
    assert_eq!(read(&mcp).as_deref(), Some(original));
    assert!(!backup_of(&mcp).exists(), "backup left after the restore");
}

#[test]
fn uninstall_after_the_user_changed_the_file_keeps_the_change_and_the_backup() {
    let env = TestEnv::new();
    let mcp = path(&env, "home/.cursor/mcp.json");
    let original = "{\n  \"mcpServers\": {}\n}\n";
    write(&mcp, original);
    install(&env, "cursor");
    let mut doc: Value = serde_json::from_str(&read(&mcp).unwrap()).unwrap();
    doc["mcpServers"]["mine"] = serde_json::json!({"command": "mine"});
    write(&mcp, &serde_json::to_string_pretty(&doc).unwrap());
    let out = env.json(["uninstall", "cursor"]);
    let left: Value = serde_json::from_str(&read(&mcp).expect("the file stays")).unwrap();
    assert_eq!(
        left,
        serde_json::json!({"mcpServers": {"mine": {"command": "mine"}}})
    );
    assert_eq!(read(&backup_of(&mcp)).as_deref(), Some(original), "{out}");
    assert_eq!(
        out["files"][0]["backup"],
        backup_of(&mcp).display().to_string(),
        "{out}"
    );
    // The text says where the original is.
    let env2 = TestEnv::new();
    let mcp2 = path(&env2, "home/.cursor/mcp.json");
    write(&mcp2, original);
    install(&env2, "cursor");
    write(&mcp2, &serde_json::to_string_pretty(&doc).unwrap());
    let text = env2.run_berth(["uninstall", "cursor"]).success().stdout();
    assert!(text.contains("the original stays in"), "{text}");
}

#[test]
fn a_file_with_a_backup_is_never_deleted_even_when_the_backup_is_unreadable() {
    let env = TestEnv::new();
    let mcp = path(&env, "home/.cursor/mcp.json");
    write(&mcp, "{}\n");
    install(&env, "cursor");
    std::fs::write(backup_of(&mcp), b"\xff\xfe not text").unwrap();
    let _ = env.run_berth(["uninstall", "cursor"]).success();
    let left = read(&mcp).expect("the file existed before install, so it stays");
    assert_eq!(
        serde_json::from_str::<Value>(&left).unwrap(),
        serde_json::json!({})
    );
    assert!(
        backup_of(&mcp).exists(),
        "an unreadable backup is left alone"
    );
}
