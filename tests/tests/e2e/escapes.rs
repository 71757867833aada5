//! A folder whose name holds terminal escapes, a bell, a carriage return, a
//! line break or a bidirectional override: every human output shows it
//! escaped, and `--json` keeps it exact (docs/reliability.md, "Hostile
//! folders and races").

#[cfg(unix)]
use std::path::{Path, PathBuf};

use berth_tests::TestEnv;
#[cfg(unix)]
use berth_tests::bin;
#[cfg(unix)]
use serde_json::{Value, json};

/// Recolours, retitles the terminal, rings, returns the cursor, starts a line
/// and reverses the rest of it.
const EVIL: &str = "evil\u{1b}[31mRED\u{1b}]0;TITLE\u{7}\rCR\nLF\u{9b}1m\u{202e}rtl";

/// What the escaped name looks like.
const SHOWN: &str = "evil\\u{1b}[31mRED\\u{1b}]0;TITLE\\u{7}\\rCR\\nLF\\u{9b}1m\\u{202e}rtl";

/// Characters a terminal would obey rather than show (aside from the line
/// breaks and the tab columns berth's own output is made of).
fn raw_controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

fn assert_escaped(what: &str, out: &str, shown: &str) {
    assert!(
        raw_controls(out).is_empty(),
        "{what}: raw control characters {:?} in {out:?}",
        raw_controls(out)
    );
    assert!(out.contains(shown), "{what}: {shown:?} is not in {out:?}");
    assert!(
        !out.lines().any(|l| l.starts_with("LF")),
        "{what}: the name's line break started a line: {out:?}"
    );
}

#[cfg(unix)]
fn escaped_path(p: &Path) -> String {
    p.display().to_string().replace(EVIL, SHOWN)
}

/// A git project named [`EVIL`], holding a project file berth ignores (so a
/// note quotes its path).
// Windows file names cannot hold control characters.
#[cfg(unix)]
fn evil_project(env: &TestEnv) -> PathBuf {
    let dir = env.git_root(env.dir(&format!("proj/{EVIL}")));
    env.project_file(&dir, r#"{"workspace": 7}"#);
    dir
}

#[cfg(unix)]
#[test]
fn resolve_and_explain_escape_the_directory_the_notes_and_the_steps() {
    let env = TestEnv::new();
    let dir = evil_project(&env);
    let shown = escaped_path(&dir);

    let resolve = env.run_in(&dir, ["resolve"]).success().stdout();
    assert_escaped("resolve", &resolve, &format!("directory: {shown}\n"));
    assert!(
        resolve.contains(&format!("note: ignored {shown}/.berth/workspace.json")),
        "{resolve}"
    );

    let explain = env.run_in(&dir, ["explain"]).success().stdout();
    assert_escaped("explain", &explain, &format!("{shown}\n"));
    assert!(explain.contains(&format!("  {shown}\n")), "{explain}");

    // JSON keeps the exact name.
    let json = env.json_in(&dir, ["resolve"]);
    assert_eq!(json["directory"], json!(dir), "{json}");
    assert_eq!(json["project"], json!(dir), "{json}");
    let note = json["notes"][0].as_str().unwrap();
    assert!(note.contains(&dir.display().to_string()), "{note:?}");
    let explained = env.json_in(&dir, ["explain"]);
    assert_eq!(
        explained["steps"][0]["directory"],
        json!(dir),
        "{explained}"
    );
}

#[cfg(unix)]
#[test]
fn roots_workspaces_paths_and_errors_escape_it_too() {
    let env = TestEnv::new();
    let dir = evil_project(&env);
    let shown = escaped_path(&dir);
    env.json(["workspace", "create", "w"]);

    let added = env
        .run_berth(["root", "add", "w", dir.to_str().unwrap()])
        .success()
        .stdout();
    assert_escaped("root add", &added, &shown);
    let listed = env.run_berth(["root", "list"]).success().stdout();
    assert_escaped("root list", &listed, &shown);
    let show = env.run_berth(["workspace", "show", "w"]).success().stdout();
    assert_escaped("workspace show", &show, &format!("root: {shown}"));
    let all = env.run_berth(["workspace", "list"]).success().stdout();
    assert_escaped("workspace list", &all, &format!("root: {shown}"));
    let path = env.run_in(&dir, ["path", "x"]).success().stdout();
    assert!(raw_controls(&path).is_empty(), "path: {path:?}");
    assert_eq!(
        env.json(["root", "list"])["roots"][0]["path"],
        json!(dir),
        "JSON keeps the exact path"
    );

    // An error quoting the path.
    let missing = dir.join(format!("gone{EVIL}"));
    let run = env.run_berth(["root", "add", "w", missing.to_str().unwrap()]);
    let stderr = run.failure(1).stderr();
    assert_escaped("an error", &stderr, &format!("gone{SHOWN}"));
}

#[cfg(unix)]
#[test]
fn the_session_start_hook_escapes_the_project_in_its_context() {
    let env = TestEnv::new();
    let dir = evil_project(&env);
    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("session-start");
    let payload = json!({
        "session_id": "s-escape",
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let run = env.run_with_stdin(cmd, payload.to_string().as_bytes());
    let out = run.success().stdout();
    assert!(raw_controls(&out).is_empty(), "stdout: {out:?}");
    let doc: Value = serde_json::from_str(&out).expect("one JSON document");
    let context = doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no additionalContext in {doc}"));
    let shown = escaped_path(&dir);
    assert_escaped("hook context", context, &format!("The project {shown} "));
    assert!(
        context.contains(&format!(
            "berth note: ignored {shown}/.berth/workspace.json"
        )),
        "{context}"
    );
}

#[test]
fn daemon_status_escapes_the_data_dir() {
    let env = TestEnv::new();
    let data = env.root().join(format!("data-{EVIL}"));
    let mut cmd = env.berth(["daemon", "status"]);
    cmd.env("BERTH_DATA_DIR", &data);
    let out = env.run(cmd).success().stdout();
    assert_escaped("daemon status", &out, &format!("data-{SHOWN}"));
}
