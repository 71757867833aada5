//! End to end: the parts of the CLI contract (docs/reference.md, "The CLI") that the command line
//! itself decides: `--json` gives one JSON document for commands that need
//! no daemon too, and values that start with `-` reach the daemon as values.
//!
//! Run with `cargo test --workspace` (the harness needs every binary built).

use berth_tests::TestEnv;
use serde_json::json;

// ---- --json: one document, for every command --------------------------------

#[test]
fn completions_with_json_are_one_document_holding_the_script() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let doc = env.json(["completions", shell]);
        assert_eq!(doc["shell"], shell, "{doc}");
        let script = doc["script"].as_str().unwrap_or_default();
        // The very script the plain command prints.
        let plain = env.run_berth(["completions", shell]).success().stdout();
        assert_eq!(script, plain, "{shell}: --json holds another script");
        assert!(script.contains("workspace"), "{shell}: {script}");
    }
}

#[test]
fn man_with_json_is_one_document_naming_each_page() {
    let env = TestEnv::new();
    let doc = env.json(["man"]);
    let pages = doc["pages"].as_array().expect("pages");
    assert_eq!(pages.len(), 1, "{doc}");
    assert_eq!(pages[0]["name"], "berth.1", "{doc}");
    let plain = env.run_berth(["man"]).success().stdout();
    assert_eq!(
        pages[0]["roff"],
        plain.as_str(),
        "--json holds another page"
    );

    let dir = env.root().join("man");
    let doc = env.json(["man", "--dir", dir.to_str().unwrap()]);
    let pages = doc["pages"].as_array().expect("pages");
    assert!(pages.len() > 10, "a page per command: {doc}");
    for page in pages {
        let name = page["name"].as_str().expect("name");
        assert_eq!(page["path"], dir.join(name).to_str().unwrap(), "{doc}");
        assert!(dir.join(name).is_file(), "{name} was not written");
        assert!(page.get("roff").is_none(), "written pages are not repeated");
    }
    assert!(
        pages.iter().any(|p| p["name"] == "berth-setting-set.1"),
        "{doc}"
    );
}

// ---- values that start with '-' ---------------------------------------------

#[test]
fn a_setting_value_starting_with_a_dash_is_the_daemons_to_judge() {
    let env = TestEnv::new();
    // Not a usage error (2): the daemon refuses it, saying what it takes.
    let _ = env
        .run_berth(["setting", "set", "scratch.keep_hours", "-1"])
        .failure(1)
        .stderr_has(&["scratch.keep_hours", "0 or more"]);
    assert_eq!(
        env.json(["setting", "get", "scratch.keep_hours"])["value"],
        json!(null)
    );
    // A command may start with '-' and is stored as it is, flags after it
    // still read as flags.
    let doc = env.json(["setting", "set", "hooks.stop_command", "-x"]);
    assert_eq!(doc, json!({"key": "hooks.stop_command", "value": "-x"}));
    let doc = env.json(["setting", "set", "hooks.stop_command", "--log-to=/tmp/x"]);
    assert_eq!(doc["value"], "--log-to=/tmp/x");
    let run = env
        .run_berth(["setting", "set", "hooks.stop_command", "-x", "--json"])
        .success();
    assert_eq!(run.json()["value"], "-x");
}

#[test]
fn help_and_missing_values_are_still_usage() {
    let env = TestEnv::new();
    // berth's own flags stay flags in the value's place.
    let _ = env
        .run_berth(["setting", "set", "hooks.stop_command", "--json"])
        .failure(2)
        .stderr_has(&["<VALUE>"]);
    let run = env
        .run_berth(["setting", "set", "hooks.stop_command", "--help"])
        .success();
    assert!(run.stdout().contains("Usage: berth setting set"));
}

#[test]
fn a_tool_path_starting_with_a_dash_is_resolved() {
    let env = TestEnv::new();
    let project = env.git_root(env.dir("code/p"));
    let _ = env.run_in(&project, ["workspace", "use", "w"]).success();
    let doc = env.json(["path", "-notes.md", "--cwd", project.to_str().unwrap()]);
    assert_eq!(doc["qualified"], "w/-notes.md", "{doc}");
    assert_eq!(doc["workspace"], "w", "{doc}");
}

// ---- lists of values ---------------------------------------------------------

/// docs/reference.md ("The CLI") writes `berth claim --cwd DIR... [--workspace W]`: one `--cwd`
/// may take several folders, as may repeated ones, and the flags after the
/// list still read as flags.
#[test]
fn claim_takes_several_folders_after_one_cwd() {
    let env = TestEnv::new();
    let a = env.dir("proj/a");
    let b = env.dir("proj/b");
    let none = env.dir("proj/none");
    for (w, dir) in [("wa", &a), ("wb", &b)] {
        env.json(["workspace", "create", w]);
        env.json(["root", "add", w, dir.to_str().unwrap()]);
    }
    let (a, b, none) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        none.to_str().unwrap(),
    );
    // Both spellings mean the same conversation.
    let listed = env.json(["claim", "--cwd", a, none]);
    assert_eq!(listed, json!({"workspaces": ["wa"]}));
    assert_eq!(env.json(["claim", "--cwd", a, "--cwd", none]), listed);
    assert_eq!(
        env.json(["claim", "--cwd", a, b]),
        json!({"workspaces": []})
    );
    assert_eq!(
        env.json(["claim", "--cwd", a, "--cwd", b, none]),
        json!({"workspaces": []})
    );
    // --workspace and --json after the list, or --json before it.
    let doc = env
        .run_berth(["claim", "--cwd", a, none, "--workspace", "wa", "--json"])
        .success()
        .json();
    assert_eq!(doc, json!({"workspace": "wa", "allowed": true}));
    let doc = env
        .run_berth(["--json", "claim", "--cwd", a, b, "-w", "wa"])
        .success()
        .json();
    assert_eq!(doc, json!({"workspace": "wa", "allowed": false}));
    let doc = env
        .run_berth(["claim", "--json", "--cwd", a, none])
        .success()
        .json();
    assert_eq!(doc, json!({"workspaces": ["wa"]}));
    let run = env
        .run_berth(["claim", "--cwd", a, none, "--workspace", "wb"])
        .success();
    assert_eq!(run.stdout(), "no\n");
    // A --cwd with no folder is still a usage error.
    let _ = env
        .run_berth(["claim", "--cwd", "--workspace", "wa"])
        .failure(2);
}
