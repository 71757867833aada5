//! Client config files someone else put there: links a cloned repository planted in its
//! project configs, and FIFOs where a config lives. `berth install|uninstall --scope project`
//! reads and writes only files of the project's own, through no link; nothing blocks on a FIFO
//! (docs/reference.md, "The CLI"; docs/decisions/0037-project-configs-stay-inside-the-project.md).
//!
//! Links and FIFOs are Unix's here (creating a link takes a privilege on Windows).
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_tests::{Run, TestEnv};

/// Longer than any of these commands takes, far shorter than the harness's minute: a command
/// that waits on a FIFO fails the test here.
const PROMPTLY: Duration = Duration::from_secs(20);

/// Claude Code's user state file, as a user has it.
const CLAUDE_JSON: &str = "{\n  \"numStartups\": 3,\n  \"oauthAccount\": {\n    \"emailAddress\": \"me@example.com\"\n  }\n}\n";

/// VS Code's user settings, as a user has them.
const VSCODE_SETTINGS: &str = "{\n\t\"editor.fontSize\": 13\n}\n";

/// A project's `.mcp.json` with another server in it (so an install would back it up).
const PROJECT_MCP: &str =
    "{\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}\n";

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

/// Every entry under `dir`: its kind and, for a file, its bytes; for a link, its target.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = std::fs::symlink_metadata(&p).unwrap().file_type();
            let what = if t.is_symlink() {
                format!("link to {}", std::fs::read_link(&p).unwrap().display())
            } else if t.is_dir() {
                stack.push(p.clone());
                "folder".into()
            } else if t.is_fifo() {
                "fifo".into()
            } else {
                format!("file {:?}", std::fs::read(&p).unwrap())
            };
            out.insert(p, what);
        }
    }
    out
}

/// A cloned repository in the test root.
fn repository(env: &TestEnv, name: &str) -> PathBuf {
    env.git_root(env.dir(name))
}

/// `berth ARGS` in `dir`, which must answer within [`PROMPTLY`].
fn berth_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    env.run_within(env.berth_in(dir, args), PROMPTLY)
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

/// A repository whose `.mcp.json` and `.cursor/mcp.json` link to `~/.claude.json` and whose
/// `.vscode/mcp.json` links to VS Code's user settings: install, a dry run and uninstall in the
/// project's scope are each refused, naming the link and its target, and neither user file, nor
/// anything beside them, nor the repository changes.
#[test]
fn project_scope_refuses_links_planted_to_the_users_own_files() {
    let env = TestEnv::new();
    let claude_json = env.home().join(".claude.json");
    write(&claude_json, CLAUDE_JSON);
    let settings = env.root().join("config/Code/User/settings.json");
    write(&settings, VSCODE_SETTINGS);
    let repo = repository(&env, "src/clone");
    let planted = [
        ("claude-code", repo.join(".mcp.json"), &claude_json),
        ("cursor", repo.join(".cursor/mcp.json"), &claude_json),
        ("vscode", repo.join(".vscode/mcp.json"), &settings),
    ];
    for (_, link, target) in &planted {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(target, link).unwrap();
    }
    let before = [env.home(), env.root().join("config"), repo.clone()].map(|d| snapshot(&d));
    for (client, link, target) in &planted {
        for args in [
            &["install", client, "--scope", "project"][..],
            &["install", client, "--scope", "project", "--dry-run"],
            &["uninstall", client, "--scope", "project"],
        ] {
            let _ = berth_in(&env, &repo, args).failure(1).stderr_has(&[
                &shown(link),
                &shown(target),
                "is a link to",
            ]);
        }
    }
    let after = [env.home(), env.root().join("config"), repo.clone()].map(|d| snapshot(&d));
    assert_eq!(after, before, "something changed");
    assert_eq!(std::fs::read_to_string(&claude_json).unwrap(), CLAUDE_JSON);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), VSCODE_SETTINGS);
    for user_file in [&claude_json, &settings] {
        let backup = PathBuf::from(format!("{}.berth-backup", user_file.display()));
        assert!(!backup.exists(), "a backup beside {}", user_file.display());
    }
}

/// A link on a folder of the path: `.cursor`, `.claude` and `.codex` lead outside the
/// repository. Each install is refused naming that folder and where it leads; nothing lands
/// outside, and the files that are the project's own stay as they were (every file is planned
/// before any is written).
#[test]
fn a_link_on_a_folder_inside_the_project_is_refused() {
    let env = TestEnv::new();
    let outside = env.dir("outside");
    let repo = repository(&env, "clone");
    write(&repo.join(".mcp.json"), PROJECT_MCP);
    for (client, folder) in [
        ("cursor", ".cursor"),
        ("claude-code", ".claude"),
        ("codex", ".codex"),
    ] {
        let link = repo.join(folder);
        symlink(&outside, &link).unwrap();
        let _ = berth_in(&env, &repo, &["install", client, "--scope", "project"])
            .failure(1)
            .stderr_has(&[&shown(&link), &shown(&outside), "Nothing was changed"]);
        std::fs::remove_file(&link).unwrap();
    }
    assert!(snapshot(&outside).is_empty(), "{:?}", snapshot(&outside));
    assert_eq!(
        std::fs::read_to_string(repo.join(".mcp.json")).unwrap(),
        PROJECT_MCP
    );
    assert!(!repo.join(".mcp.json.berth-backup").exists());
}

/// A link at the backup's name, `.mcp.json.berth-backup` → `~/.claude.json`: install (which
/// would back the file up) and uninstall (which would give the backup's bytes back into the
/// project) are refused naming it; the user's file and the project's stay as they were.
#[test]
fn a_link_at_the_backups_name_is_refused() {
    let env = TestEnv::new();
    let claude_json = env.home().join(".claude.json");
    write(&claude_json, CLAUDE_JSON);
    let repo = repository(&env, "clone");
    let mcp = repo.join(".mcp.json");
    write(&mcp, PROJECT_MCP);
    let backup = repo.join(".mcp.json.berth-backup");
    symlink(&claude_json, &backup).unwrap();
    for action in ["install", "uninstall"] {
        let _ = berth_in(&env, &repo, &[action, "claude-code", "--scope", "project"])
            .failure(1)
            .stderr_has(&[&shown(&backup), &shown(&claude_json), "is a link to"]);
    }
    assert_eq!(std::fs::read_to_string(&mcp).unwrap(), PROJECT_MCP);
    assert_eq!(std::fs::read_to_string(&claude_json).unwrap(), CLAUDE_JSON);
    assert!(std::fs::symlink_metadata(&backup).unwrap().is_symlink());
    assert!(!repo.join(".claude").exists());
}

/// `mkfifo .mcp.json` in a repository: `berth doctor` answers at once, with the file as a
/// problem naming it and the code, and a fix.
#[test]
fn doctor_reports_a_fifo_at_a_project_config_at_once() {
    let env = TestEnv::new();
    let repo = repository(&env, "clone");
    let fifo = repo.join(".mcp.json");
    mkfifo(&fifo);
    let run = berth_in(&env, &repo, &["--json", "doctor"]).failure(1);
    let doc = run.json();
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "client claude-code (project)")
        .unwrap_or_else(|| run.fail("no check of the project's claude-code files"));
    assert_eq!(check["status"], "problem", "{check}");
    let detail = check["detail"].as_str().unwrap();
    assert!(
        detail.contains(&shown(&fifo)) && detail.contains("not-regular-file"),
        "{check}"
    );
    assert!(
        check["fix"].as_str().is_some_and(|f| !f.is_empty()),
        "{check}"
    );
}

/// `install --scope project --dry-run` and `uninstall --scope project` with a FIFO at
/// `.mcp.json`: each refuses at once with `not-regular-file`, naming it; the FIFO stays.
#[test]
fn install_and_uninstall_refuse_a_fifo_at_a_project_config_at_once() {
    let env = TestEnv::new();
    let repo = repository(&env, "clone");
    let fifo = repo.join(".mcp.json");
    mkfifo(&fifo);
    for args in [
        &["install", "claude-code", "--scope", "project", "--dry-run"][..],
        &["uninstall", "claude-code", "--scope", "project"],
    ] {
        let _ = berth_in(&env, &repo, args).failure(1).stderr_has(&[
            &shown(&fifo),
            "a FIFO",
            "not-regular-file",
        ]);
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(!repo.join(".claude").exists());
}

/// A FIFO at a user's config, `~/.claude.json`, and one at a project config's backup's name:
/// refused at once with `not-regular-file`, naming each.
#[test]
fn a_fifo_at_a_users_config_or_at_a_backups_name_is_refused_at_once() {
    let env = TestEnv::new();
    let fifo = env.home().join(".claude.json");
    mkfifo(&fifo);
    for args in [
        &["install", "claude-code"][..],
        &["uninstall", "claude-code"],
    ] {
        let _ = berth_in(&env, &env.home(), args)
            .failure(1)
            .stderr_has(&[&shown(&fifo), "not-regular-file"]);
    }
    let repo = repository(&env, "clone");
    write(&repo.join(".mcp.json"), PROJECT_MCP);
    let backup = repo.join(".mcp.json.berth-backup");
    mkfifo(&backup);
    let _ = berth_in(
        &env,
        &repo,
        &["install", "claude-code", "--scope", "project"],
    )
    .failure(1)
    .stderr_has(&[&shown(&backup), "not-regular-file"]);
    assert_eq!(
        std::fs::read_to_string(repo.join(".mcp.json")).unwrap(),
        PROJECT_MCP
    );
}
