//! Client config files as their clients allow them: VS Code's `mcp.json` (and the Copilot
//! CLI's `mcp-config.json`) with comments and trailing commas, edited in place and given back
//! byte for byte; a comment where the client reads plain JSON refused, naming that client's
//! rule; hostile JSON refused with a clear error and left as it was (docs/reference.md, "The
//! CLI"; docs/decisions/0043-json-with-comments-edited-in-place.md).

use std::path::{Path, PathBuf};

use berth_tests::TestEnv;

/// VS Code's user `mcp.json` in the shape of VS Code's documentation: a comment first,
/// comments above servers and after values, trailing commas, a non-ASCII comment.
const VSCODE_MCP: &str = r#"// VS Code's MCP servers: https://code.visualstudio.com/docs/copilot/chat/mcp-servers
{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {
      "type": "promptString",
      "id": "perplexity-key",
      "description": "Perplexity API Key",
      "password": true,
    },
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {
        "PERPLEXITY_API_KEY": "${input:perplexity-key}", /* asked once */
      },
    },
  },
}
"#;

/// Claude Code's `settings.json`, which VS Code also reads its hooks from: plain JSON with a
/// hook of the user's, indented by four.
const CLAUDE_SETTINGS: &str = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"notify-send done\"\n                    }\n                ]\n            }\n        ]\n    }\n}\n";

fn write(p: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(p: &Path) -> Option<Vec<u8>> {
    std::fs::read(p).ok()
}

fn text(p: &Path) -> String {
    String::from_utf8(read(p).expect("the file exists")).unwrap()
}

fn backup_of(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.berth-backup", p.display()))
}

/// Every file and folder under the home and the config folder, with each file's bytes.
fn snapshot(env: &TestEnv) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![env.home(), env.root().join("config")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
                out.push((p, None));
            } else {
                out.push((p.clone(), read(&p)));
            }
        }
    }
    out.sort();
    out
}

fn vscode_mcp(env: &TestEnv) -> PathBuf {
    env.root().join("config/Code/User/mcp.json")
}

/// The lines of `installed` that are not `original`'s, checking that `original`'s lines are all
/// there, in order and unchanged but for a comma that a new sibling after them needs.
fn added_lines(original: &str, installed: &str) -> Vec<String> {
    let mut want = original.lines().peekable();
    let mut added = Vec::new();
    for line in installed.lines() {
        match want.peek() {
            Some(w) if *w == line || format!("{w},") == line => {
                want.next();
            }
            _ => added.push(line.to_string()),
        }
    }
    let missing: Vec<_> = want.collect();
    assert!(
        missing.is_empty(),
        "lines of the original changed or went: {missing:?}\nin:\n{installed}"
    );
    added
}

/// A fresh environment whose data folder is as berthd makes it, so `doctor` finds nothing
/// wrong there.
fn fresh() -> TestEnv {
    let env = TestEnv::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(env.data_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    env
}

/// `berth install vscode` into VS Code's commented `mcp.json` with trailing commas: berth's
/// entry is the only change (in the file's style, trailing commas included) and Claude Code's
/// plain `settings.json` gains only berth's hooks; a second install changes nothing; doctor
/// finds the registration as install writes it; uninstall gives back both files byte for byte.
#[test]
fn vscodes_commented_mcp_json_keeps_every_byte_and_comes_back_exactly() {
    let env = fresh();
    let mcp = vscode_mcp(&env);
    let settings = env.home().join(".claude/settings.json");
    write(&mcp, VSCODE_MCP);
    write(&settings, CLAUDE_SETTINGS);

    let out = env.json(["install", "vscode"]);
    assert_eq!(out["changed"], true, "{out}");
    let installed = text(&mcp);
    let added = added_lines(VSCODE_MCP, &installed);
    assert_eq!(
        added.first().map(String::as_str),
        Some("    \"berth\": {"),
        "{installed}"
    );
    assert_eq!(
        added.last().map(String::as_str),
        Some("    },"),
        "{installed}"
    );
    assert!(
        added.iter().any(|l| l.contains("berth-mcp")) && added.len() <= 6,
        "only berth's entry was added: {added:?}"
    );
    assert!(installed.contains("\"${workspaceFolder}\"]"), "{installed}");
    let added = added_lines(CLAUDE_SETTINGS, &text(&settings));
    // session-start, stop and pre-tool.
    assert!(
        added.iter().filter(|l| l.contains("berth-hook")).count() == 3,
        "{added:?}"
    );
    assert_eq!(
        read(&backup_of(&mcp)).as_deref(),
        Some(VSCODE_MCP.as_bytes())
    );

    let again = env.json(["install", "vscode"]);
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(text(&mcp), installed, "a second install changed the file");

    let run = env.run_berth(["--json", "doctor"]);
    let doc = run.json();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "client vscode")
        .unwrap_or_else(|| run.fail("no check of vscode's files"));
    assert_eq!(check["status"], "ok", "{check}");

    let out = env.json(["uninstall", "vscode"]);
    assert_eq!(out["files"][0]["action"], "restored", "{out}");
    assert_eq!(read(&mcp).as_deref(), Some(VSCODE_MCP.as_bytes()));
    assert_eq!(read(&settings).as_deref(), Some(CLAUDE_SETTINGS.as_bytes()));
    assert!(!backup_of(&mcp).exists() && !backup_of(&settings).exists());
}

/// The same with `--scope project`, into `.vscode/mcp.json`, with Windows' line ends and a
/// byte order mark: both stay (berth's lines end in CRLF too), and uninstall gives the bytes
/// back.
#[test]
fn a_projects_commented_mcp_json_with_crlf_and_a_bom_keeps_both() {
    let env = TestEnv::new();
    let project = env.git_root(env.dir("src/shop"));
    let mcp = project.join(".vscode/mcp.json");
    let original = format!("\u{feff}{}", VSCODE_MCP.replace('\n', "\r\n"));
    write(&mcp, &original);
    let _ = env
        .run(env.berth_in(&project, ["install", "vscode", "--scope", "project"]))
        .success();
    let installed = text(&mcp);
    assert!(installed.starts_with('\u{feff}'), "the BOM went");
    assert!(
        !installed.replace("\r\n", "").contains('\n'),
        "a bare newline: {installed:?}"
    );
    let added = added_lines(
        &original.replace("\r\n", "\n"),
        &installed.replace("\r\n", "\n"),
    );
    assert!(added.iter().any(|l| l.contains("berth-mcp")), "{added:?}");
    let _ = env
        .run(env.berth_in(&project, ["uninstall", "vscode", "--scope", "project"]))
        .success();
    assert_eq!(read(&mcp).as_deref(), Some(original.as_bytes()));
}

/// A user's comment added while berth is installed is theirs: uninstall removes only berth's
/// entry, keeps the comment, and keeps the backup beside the file.
#[test]
fn a_comment_written_while_installed_survives_uninstall() {
    let env = TestEnv::new();
    let mcp = vscode_mcp(&env);
    write(&mcp, VSCODE_MCP);
    let _ = env.run_berth(["install", "vscode"]).success();
    let mine = text(&mcp).replace("  \"servers\": {", "  // mine now\n  \"servers\": {");
    write(&mcp, &mine);
    let out = env.json(["uninstall", "vscode"]);
    assert_eq!(out["files"][0]["restored"], false, "{out}");
    let left = text(&mcp);
    assert_eq!(
        left,
        VSCODE_MCP.replace("  \"servers\": {", "  // mine now\n  \"servers\": {")
    );
    assert!(backup_of(&mcp).exists());
}

/// Doctor on a commented VS Code `mcp.json` and a commented Copilot CLI `mcp-config.json`
/// that hold no berth entry: nothing is registered and nothing is wrong.
#[test]
fn doctor_finds_nothing_wrong_in_commented_files_berth_was_never_in() {
    let env = fresh();
    write(&vscode_mcp(&env), VSCODE_MCP);
    write(
        &env.home().join(".copilot/mcp-config.json"),
        "{\n  // mine\n  \"mcpServers\": {},\n}\n",
    );
    let run = env.run_berth(["--json", "doctor"]);
    let doc = run.json();
    assert_eq!(run.code(), Some(0), "{doc:#}");
    let names: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"clients"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("vscode") || n.contains("copilot")),
        "{names:?}"
    );
}

/// The Copilot CLI lists the servers of an `mcp-config.json` with comments and trailing
/// commas: berth installs into one and gives it back.
#[test]
fn the_copilot_clis_commented_mcp_config_is_edited_in_place() {
    let env = TestEnv::new();
    let file = env.home().join(".copilot/mcp-config.json");
    let original = "{\n  // my servers\n  \"mcpServers\": {\n    \"other\": {\"type\": \"local\", \"command\": \"x\", \"args\": [], \"tools\": [\"*\"]},\n  },\n}\n";
    write(&file, original);
    let _ = env.run_berth(["install", "copilot-cli"]).success();
    let added = added_lines(original, &text(&file));
    assert!(added.iter().any(|l| l.contains("berth-mcp")), "{added:?}");
    let _ = env.run_berth(["uninstall", "copilot-cli"]).success();
    assert_eq!(read(&file).as_deref(), Some(original.as_bytes()));
}

/// A comment or a trailing comma in a file whose client reads plain JSON: install refuses
/// (exit 1) naming the file, the place and that client's rule, and writes nothing, neither
/// that file nor the registration's others.
#[test]
fn a_comment_where_the_client_reads_plain_json_is_refused_naming_its_rule() {
    let commented = "{\n  // mine\n  \"a\": 1\n}\n";
    let trailing = "{\n  \"a\": 1,\n}\n";
    let cases: [(&str, &str, &str); 8] = [
        ("claude-code", "home/.claude.json", "Claude Code"),
        ("claude-code", "home/.claude/settings.json", "Claude Code"),
        // VS Code runs Claude Code's hooks, from Claude Code's file, by Claude Code's rule.
        ("vscode", "home/.claude/settings.json", "Claude Code"),
        ("cursor", "home/.cursor/mcp.json", "Cursor"),
        ("cursor", "home/.cursor/hooks.json", "Cursor"),
        ("codex", "home/.codex/hooks.json", "Codex"),
        (
            "claude-desktop",
            "config/Claude/claude_desktop_config.json",
            "Claude Desktop",
        ),
        (
            "copilot-cli",
            "home/.copilot/hooks/berth.json",
            "the Copilot CLI",
        ),
    ];
    for (client, rel, reader) in cases {
        for (bad, what) in [
            (commented, "a comment at line 2 column 3"),
            (trailing, "a trailing comma"),
        ] {
            let env = TestEnv::new();
            let file = rel
                .split('/')
                .fold(env.root().to_path_buf(), |p, c| p.join(c));
            write(&file, bad);
            let before = snapshot(&env);
            let _ = env.run_berth(["install", client]).failure(1).stderr_has(&[
                &file.display().to_string(),
                what,
                &format!("{reader} reads this file as plain JSON"),
                "Nothing was changed",
            ]);
            assert_eq!(
                read(&file).as_deref(),
                Some(bad.as_bytes()),
                "{client} {rel}"
            );
            assert!(
                snapshot(&env) == before,
                "{client} {rel}: something was written"
            );
        }
    }
    // Cline's file too, and a project's `.mcp.json`, which Claude Code reads the same way.
    let env = TestEnv::new();
    let cline = env.root().join(
        "config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    );
    write(&cline, commented);
    let _ = env
        .run_berth(["install", "cline"])
        .failure(1)
        .stderr_has(&["Cline reads this file as plain JSON"]);
    let project = env.git_root(env.dir("src/app"));
    write(&project.join(".mcp.json"), commented);
    let _ = env
        .run(env.berth_in(&project, ["install", "claude-code", "--scope", "project"]))
        .failure(1)
        .stderr_has(&["Claude Code reads this file as plain JSON"]);
    assert!(!project.join(".claude").exists());
}

/// Hostile JSON in VS Code's `mcp.json`, which allows comments: an unterminated comment, lists
/// nested 100,000 deep, a key twice (the servers' object, and inside an entry), a file past
/// the size berth reads, and text that is no JSON. Each is refused with an error naming the
/// file and what is wrong, and the file, its backup's name and the other files stay as they
/// were; `uninstall` refuses the same way.
#[test]
fn hostile_json_is_refused_clearly_and_left_untouched() {
    let deep = format!("{{\"servers\": {}", "[".repeat(100_000));
    let mut huge = String::from("{\"servers\": {}, \"pad\": \"");
    huge.push_str(&"x".repeat(16 << 20));
    huge.push_str("\"}\n");
    let cases: Vec<(String, &str)> = vec![
        (
            "{\n  \"servers\": {}\n  /* never closed\n".into(),
            "not valid JSON",
        ),
        (deep, "nest more than 512 deep"),
        (
            "{\"servers\": {\"a\": {}}, \"servers\": {}}".into(),
            "the key \"servers\" appears twice in the top-level object",
        ),
        (
            "{\"servers\": {\"berth\": {\"command\": \"a\", \"command\": \"b\"}}}".into(),
            "the key \"command\" appears twice in \"servers.berth\"",
        ),
        (huge, "larger than the 16 MiB"),
        ("{\"servers\": {}} trailing words".into(), "not valid JSON"),
        ("\"servers\"".into(), "its top level is not a JSON object"),
    ];
    for (bad, why) in cases {
        let env = TestEnv::new();
        let mcp = vscode_mcp(&env);
        write(&mcp, &bad);
        let before = snapshot(&env);
        for action in ["install", "uninstall"] {
            let run = env.run_berth([action, "vscode"]).failure(1);
            let stderr = run.stderr();
            assert!(
                stderr.contains(&mcp.display().to_string()) && stderr.contains(why),
                "{action} with {why:?}: {}",
                &stderr[..stderr.len().min(600)]
            );
            assert!(stderr.len() < 2000, "a short error: {} bytes", stderr.len());
        }
        assert!(
            read(&mcp).as_deref() == Some(bad.as_bytes()),
            "{why}: the file changed"
        );
        assert!(!backup_of(&mcp).exists(), "{why}");
        assert!(snapshot(&env) == before, "{why}: something was written");
    }
}

/// Install's `--json` shape with a commented file: one document, `changed` per file.
#[test]
fn install_reports_the_commented_file_as_updated() {
    let env = TestEnv::new();
    let mcp = vscode_mcp(&env);
    write(&mcp, VSCODE_MCP);
    let out = env.json(["install", "vscode", "--dry-run"]);
    assert_eq!(out["files"][0]["action"], "updated", "{out}");
    let diff = out["files"][0]["diff"].as_str().unwrap();
    let plus: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    let minus: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    assert!(minus.is_empty(), "a dry run's diff removes nothing: {diff}");
    assert!(plus.iter().all(|l| !l.contains("//")), "{diff}");
    assert_eq!(read(&mcp).as_deref(), Some(VSCODE_MCP.as_bytes()));
}

/// Doctor judges a registration in a commented `mcp.json` by VS Code's rule: installed there,
/// VS Code is registered, and doctor finds nothing wrong with the file. (The test's data
/// folder is not the one a desktop-started VS Code would find, which doctor rightly reports
/// as `environment vscode`; that check is not this test's.)
#[test]
fn doctor_judges_berth_installed_in_a_commented_mcp_json_registered() {
    let env = fresh();
    write(&vscode_mcp(&env), VSCODE_MCP);
    let _ = env.run_berth(["install", "vscode"]).success();
    let doc = env.run_berth(["--json", "doctor"]).json();
    let checks = doc["checks"].as_array().unwrap();
    let vscode = checks
        .iter()
        .find(|c| c["name"] == "client vscode")
        .unwrap_or_else(|| panic!("no client vscode check: {doc:#}"));
    assert_eq!(vscode["status"], "ok", "{doc:#}");
    let registered = checks
        .iter()
        .find(|c| c["name"] == "clients")
        .and_then(|c| c["registrations"].as_array())
        .is_some_and(|rs| {
            rs.iter().any(|r| {
                r["client"] == "vscode" && r["scope"] == "user" && r["state"] == "registered"
            })
        });
    assert!(registered, "{doc:#}");
}
