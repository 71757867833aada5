//! Workspaces: create, list, show, switch, delete, names, exit codes (docs/reference.md,
//! "Workspaces and homes" and "The CLI").

use berth_tests::{TestEnv, names};
use rstest::rstest;
use serde_json::json;

#[test]
fn a_fresh_registry_holds_default_active_with_a_managed_home() {
    let env = TestEnv::new();
    assert_eq!(
        env.json(["workspace", "list"]),
        json!({
            "active": "default",
            "workspaces": [{
                "name": "default",
                "active": true,
                "home": env.managed_home("default"),
                "home_mode": "managed",
                "roots": [],
            }],
        })
    );
}

#[test]
fn create_list_show_and_switch_have_the_spec_json_shapes() {
    let env = TestEnv::new();
    let created = env.json(["workspace", "create", "notes"]);
    let notes = json!({
        "name": "notes",
        "active": false,
        "home": env.managed_home("notes"),
        "home_mode": "managed",
        "roots": [],
    });
    assert_eq!(created, notes);
    assert_eq!(env.json(["workspace", "show", "notes"]), notes);

    let local = env.dir("proj/local-home");
    let l = env.json([
        "workspace",
        "create",
        "loc",
        "--home",
        local.to_str().unwrap(),
    ]);
    assert_eq!(l["home"], json!(local));
    assert_eq!(l["home_mode"], "local");

    let proj = env.dir("proj/n");
    env.json(["root", "add", "notes", proj.to_str().unwrap()]);
    let switched = env.json(["workspace", "switch", "notes"]);
    assert_eq!(switched["name"], "notes");
    assert_eq!(switched["active"], true);
    assert_eq!(switched["roots"], json!([proj]));

    let list = env.json(["workspace", "list"]);
    assert_eq!(list["active"], "notes");
    assert_eq!(names(&list), ["default", "loc", "notes"]);
    let active: Vec<bool> = list["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["active"].as_bool().unwrap())
        .collect();
    assert_eq!(active, [false, false, true]);
}

/// A workspace name wins over a folder of the same name, so a new workspace
/// named like a top-level folder of some home changes where `<name>/...`
/// goes: `create` says so, on stderr and in `warnings`.
#[test]
fn creating_a_workspace_that_shadows_a_top_level_folder_warns() {
    let env = TestEnv::new();
    let _ = env.run_berth(["workspace", "create", "mine"]).success();
    std::fs::create_dir_all(env.managed_home("mine").join("notes")).unwrap();
    let run = env
        .run_berth(["workspace", "create", "notes", "--json"])
        .success();
    let warnings = run.json()["warnings"].clone();
    let warnings = warnings.as_array().expect("a warnings field");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.contains("workspace mine's home has a top-level \"notes\""),
        "{w}"
    );
    assert!(w.contains("./notes/..."), "{w}");
    assert!(
        run.stderr().contains("warning: workspace mine's home"),
        "{}",
        run.stderr()
    );
    let plain = env.json(["workspace", "create", "other"]);
    assert_eq!(plain.get("warnings"), None, "{plain}");
    let quiet = env.run_berth(["workspace", "create", "third"]).success();
    assert!(!quiet.stderr().contains("warning"), "{}", quiet.stderr());
}

#[test]
fn creating_an_existing_workspace_is_refused() {
    let env = TestEnv::new();
    let _ = env
        .run_berth(["workspace", "create", "default"])
        .failure(1)
        .stderr_has(&["already exists"]);
}

#[test]
fn show_and_switch_of_an_unknown_workspace_fail_listing_the_workspaces() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "alpha"]);
    for args in [
        ["workspace", "show", "nope"],
        ["workspace", "switch", "nope"],
    ] {
        let _ = env
            .run_berth(args)
            .failure(1)
            .stderr_has(&["nope", "workspaces: alpha, default"]);
    }
    assert_eq!(env.json(["workspace", "list"])["active"], "default");
}

#[rstest]
#[case::forty_characters_are_accepted(&"a".repeat(40))]
#[case::one_character_is_accepted("x")]
#[case::digits_and_dashes_are_accepted("0-notes-2")]
fn valid_names_are_created(#[case] name: &str) {
    let env = TestEnv::new();
    assert_eq!(env.json(["workspace", "create", name])["name"], name);
    assert_eq!(names(&env.json(["workspace", "list"])).len(), 2);
}

#[rstest]
#[case::forty_one_characters(&"a".repeat(41), "41 characters")]
#[case::uppercase("Notes", "'N'")]
#[case::a_space("my notes", "\\u{20}")]
#[case::an_underscore("my_notes", "'_'")]
#[case::a_leading_dash("-notes", "starts with '-'")]
#[case::a_cyrillic_look_alike("n\u{043e}tes", "\\u{43e}")]
#[case::a_fullwidth_dash_look_alike("a\u{ff0d}b", "\\u{ff0d}")]
fn invalid_names_are_refused_with_the_rule(#[case] name: &str, #[case] why: &str) {
    let env = TestEnv::new();
    // `--` so clap passes a leading dash through as the name.
    let _ = env
        .run_berth(["workspace", "create", "--", name])
        .failure(1)
        .stderr_has(&[why, "1 to 40 characters"]);
    assert_eq!(names(&env.json(["workspace", "list"])), ["default"]);
}

#[test]
fn a_leading_dash_without_double_dash_is_a_usage_error() {
    let env = TestEnv::new();
    let _ = env.run_berth(["workspace", "create", "-notes"]).failure(2);
}

#[test]
fn deleting_the_active_workspace_is_refused() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    env.json(["workspace", "switch", "w"]);
    let _ = env
        .run_berth(["workspace", "delete", "w"])
        .failure(1)
        .stderr_has(&["active", "switch"]);
    assert_eq!(names(&env.json(["workspace", "list"])), ["default", "w"]);
}

#[test]
fn deleting_keeps_a_managed_homes_files_unless_purge() {
    let env = TestEnv::new();
    for w in ["kept", "purged"] {
        env.json(["workspace", "create", w]);
        let home = env.managed_home(w);
        std::fs::create_dir_all(home.join("sub")).unwrap();
        std::fs::write(home.join("sub").join("memory.md"), "remember").unwrap();
    }
    let kept = env.json(["workspace", "delete", "kept"]);
    assert_eq!(kept["deleted"], "kept");
    assert_eq!(kept["purged"], false);
    assert_eq!(
        std::fs::read_to_string(env.managed_home("kept").join("sub").join("memory.md")).unwrap(),
        "remember"
    );
    assert!(
        kept["notes"].to_string().contains("--purge"),
        "the note must say how to delete the files: {kept}"
    );

    let purged = env.json(["workspace", "delete", "purged", "--purge"]);
    assert_eq!(purged["purged"], true);
    assert!(!env.managed_home("purged").exists(), "{}", env.listing());
    assert_eq!(names(&env.json(["workspace", "list"])), ["default"]);
}

#[test]
fn deleting_a_workspace_with_a_local_home_never_touches_the_folder_even_with_purge() {
    let env = TestEnv::new();
    let local = env.dir("proj/mine");
    std::fs::write(local.join("keep.txt"), "mine").unwrap();
    env.json([
        "workspace",
        "create",
        "loc",
        "--home",
        local.to_str().unwrap(),
    ]);
    let deleted = env.json(["workspace", "delete", "loc", "--purge"]);
    assert_eq!(deleted["purged"], false, "nothing was purged: {deleted}");
    assert_eq!(
        std::fs::read_to_string(local.join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn deleting_removes_the_workspaces_roots() {
    let env = TestEnv::new();
    let proj = env.dir("proj/p");
    env.json(["workspace", "create", "w"]);
    env.json(["root", "add", "w", proj.to_str().unwrap()]);
    assert_eq!(env.json_in(&proj, ["resolve"])["reason"], "root");
    env.json(["workspace", "delete", "w"]);
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
    let r = env.json_in(&proj, ["resolve"]);
    assert_eq!(
        (r["workspace"].clone(), r["reason"].clone()),
        (json!("default"), json!("active"))
    );
    // A new workspace of the same name starts without the old roots.
    env.json(["workspace", "create", "w"]);
    assert_eq!(env.json(["workspace", "show", "w"])["roots"], json!([]));
}

#[test]
fn deleting_the_workspace_named_by_workspace_unassigned_resets_it() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    env.json(["workspace", "create", "other"]);
    env.json(["setting", "set", "workspace.unassigned", "w"]);
    env.json(["workspace", "delete", "other"]);
    assert_eq!(
        env.json(["setting", "get", "workspace.unassigned"])["value"],
        "w",
        "deleting another workspace must not reset it"
    );
    let out = env.json(["workspace", "delete", "w"]);
    assert!(
        out["notes"].to_string().contains("workspace.unassigned"),
        "{out}"
    );
    // More fields (default, allowed values) may follow; these two are the contract.
    let got = env.json(["setting", "get", "workspace.unassigned"]);
    assert_eq!(
        (&got["key"], &got["value"]),
        (&json!("workspace.unassigned"), &json!(null))
    );
}

#[test]
fn deleting_an_unknown_workspace_fails() {
    let env = TestEnv::new();
    let _ = env
        .run_berth(["workspace", "delete", "ghost"])
        .failure(1)
        .stderr_has(&["ghost", "workspaces: default"]);
}

#[rstest]
#[case::an_unknown_subcommand(&["workspace", "bogus"])]
#[case::an_unknown_flag(&["resolve", "--nope"])]
#[case::a_missing_argument(&["workspace", "create"])]
#[case::claim_without_cwd(&["claim"])]
#[case::no_command_at_all(&[])]
fn clap_usage_errors_exit_2(#[case] args: &[&str]) {
    let env = TestEnv::new();
    let run = env.run_berth(args).failure(2);
    assert!(run.stdout().is_empty(), "usage errors go to stderr");
    assert!(
        env.daemon_pids().is_empty(),
        "a usage error starts no daemon"
    );
}

#[test]
fn json_errors_go_to_stderr_as_text_with_exit_1() {
    let env = TestEnv::new();
    let run = env
        .run_berth(["--json", "workspace", "show", "nope"])
        .failure(1);
    assert!(run.stdout().is_empty(), "stdout: {}", run.stdout());
    assert!(run.stderr().starts_with("Error: "), "{}", run.stderr());
}

/// `script` gives the command a terminal, where colour would be on.
// A terminal through script(1), Unix's.
#[cfg(unix)]
fn list_on_a_terminal(env: &TestEnv, no_color: bool) -> String {
    let mut cmd = env.command("script");
    cmd.args(["-qec", "berth workspace list", "/dev/null"]);
    if !no_color {
        cmd.env_remove("NO_COLOR");
    }
    env.run(cmd).success().stdout()
}

#[cfg(unix)]
#[test]
fn no_color_is_honoured_on_a_terminal() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    let coloured = list_on_a_terminal(&env, false);
    assert!(
        coloured.contains('\x1b'),
        "control: a terminal without NO_COLOR gets colour: {coloured:?}"
    );
    let plain = list_on_a_terminal(&env, true);
    assert!(!plain.contains('\x1b'), "NO_COLOR ignored: {plain:?}");
    assert!(plain.contains("default (active)"), "{plain:?}");
}

/// A home row written straight into the database (here `/etc`) is refused on use, naming its
/// workspace and the way out; deleting the entry still works and touches no file there.
#[test]
fn a_home_row_written_into_the_database_is_refused_naming_the_workspace() {
    let env = TestEnv::new();
    let home = env.dir("lh");
    env.json([
        "workspace",
        "create",
        "bent",
        "--home",
        home.to_str().unwrap(),
    ]);
    let _ = env.run_berth(["daemon", "stop"]).success();
    {
        let conn = rusqlite::Connection::open(env.db()).unwrap();
        conn.execute(
            "UPDATE workspaces SET home_path = '/etc' WHERE name = 'bent'",
            [],
        )
        .unwrap();
    }
    let _ = env
        .run_berth(["workspace", "show", "bent"])
        .failure(1)
        .stderr_has(&[
            "workspace \"bent\" has a home berth refuses to use",
            "/etc",
            "berth workspace delete bent",
        ]);
    let _ = env.run_berth(["workspace", "delete", "bent"]).success();
    assert_eq!(names(&env.json(["workspace", "list"])), ["default"]);
    #[cfg(unix)]
    assert!(std::path::Path::new("/etc/passwd").exists());
}
