//! The resolution order (docs/reference.md, "Resolution"), row by row, through `berth resolve
//! --json`.

use std::path::PathBuf;

use berth_tests::TestEnv;
use rstest::rstest;
use serde_json::json;

/// A device with every kind of answer:
///
/// | folder | what is there |
/// | --- | --- |
/// | `proj/app` | root of `work`, project file naming `work` (approved), `.git` |
/// | `proj/app/docs` | root of `notes` (deeper than `work`'s, but the file wins) |
/// | `proj/tree` | root of `work` |
/// | `proj/tree/deep` | root of `notes` |
/// | `proj/shared` | roots of `oss` and `side` (tied) |
/// | `proj/shared/inner` | root of `work` (deeper than the tie) |
/// | `proj/plain` | nothing |
///
/// `unas` exists for `workspace.unassigned`.
struct World {
    env: TestEnv,
}

impl World {
    fn new() -> World {
        let env = TestEnv::new();
        for w in ["work", "notes", "oss", "side", "unas"] {
            env.json(["workspace", "create", w]);
        }
        let app = env.git_root(env.dir("proj/app"));
        env.json_in(&app, ["workspace", "use", "work"]);
        let root = |w: &str, rel: &str, extra: &[&str]| {
            let d = env.dir(rel);
            let mut args = vec!["root", "add", w, d.to_str().unwrap()];
            args.extend_from_slice(extra);
            env.json(args);
        };
        root("notes", "proj/app/docs", &["--allow-overlap"]);
        root("work", "proj/tree", &[]);
        root("notes", "proj/tree/deep", &["--allow-overlap"]);
        root("oss", "proj/shared", &[]);
        root("side", "proj/shared", &["--allow-overlap"]);
        root("work", "proj/shared/inner", &["--allow-overlap"]);
        env.dir("proj/plain/x");
        World { env }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.env.dir(rel)
    }

    /// `berth --json resolve <dir> ARGS` with `vars` set, from the home.
    fn resolve(&self, rel: &str, args: &[&str], vars: &[(&str, &str)]) -> serde_json::Value {
        let dir = self.path(rel);
        let mut cmd = self.env.berth(["--json", "resolve", dir.to_str().unwrap()]);
        cmd.args(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        self.env.run(cmd).success().json()
    }
}

/// The one check every row goes through.
fn check(rel: &str, args: &[&str], vars: &[(&str, &str)], expect: (&str, &str)) {
    let world = World::new();
    let r = world.resolve(rel, args, vars);
    assert_eq!(
        (
            r["workspace"].as_str().unwrap(),
            r["reason"].as_str().unwrap()
        ),
        expect,
        "resolve {rel} {args:?} {vars:?}:\n{r:#}"
    );
    assert_eq!(r["directory"], json!(world.path(rel)));
}

#[rstest]
#[case::an_argument_beats_everything("proj/tree/deep/x", &["--workspace", "oss"], &[], ("oss", "argument"))]
#[case::an_argument_beats_an_approved_file("proj/app", &["--workspace", "oss"], &[], ("oss", "argument"))]
#[case::an_argument_beats_the_env("proj/plain", &["-w", "oss"], &[("BERTH_WORKSPACE", "side")], ("oss", "argument"))]
#[case::the_env_beats_an_approved_file("proj/app", &[], &[("BERTH_WORKSPACE", "side")], ("side", "env"))]
#[case::the_env_beats_roots("proj/tree/deep", &[], &[("BERTH_WORKSPACE", "side")], ("side", "env"))]
#[case::an_empty_env_pin_counts_as_unset("proj/plain", &[], &[("BERTH_WORKSPACE", "")], ("default", "active"))]
#[case::an_approved_project_file("proj/app", &[], &[], ("work", "project-file"))]
#[case::an_approved_file_covers_subfolders("proj/app/src/x", &[], &[], ("work", "project-file"))]
#[case::an_approved_file_beats_a_deeper_root("proj/app/docs", &[], &[], ("work", "project-file"))]
#[case::a_root("proj/tree", &[], &[], ("work", "root"))]
#[case::the_most_specific_root_wins("proj/tree/deep/x", &[], &[], ("notes", "root"))]
#[case::a_shallower_root_still_covers_its_other_folders("proj/tree/y", &[], &[], ("work", "root"))]
#[case::tied_roots_answer_nothing("proj/shared/x", &[], &[], ("default", "active"))]
#[case::a_deeper_root_breaks_a_tie("proj/shared/inner/z", &[], &[], ("work", "root"))]
#[case::nothing_means_the_active_workspace("proj/plain/x", &[], &[], ("default", "active"))]
#[case::an_agent_without_the_setting_gets_the_active_workspace("proj/plain/x", &["--agent"], &[], ("default", "active"))]
#[case::an_agent_still_honours_roots("proj/tree/y", &["--agent"], &[], ("work", "root"))]
fn resolution_table(
    #[case] rel: &str,
    #[case] args: &[&str],
    #[case] vars: &[(&str, &str)],
    #[case] expect: (&str, &str),
) {
    check(rel, args, vars, expect);
}

#[test]
fn an_approved_file_answer_carries_project_file_and_no_proposal() {
    let world = World::new();
    let app = world.path("proj/app");
    assert_eq!(
        world.resolve("proj/app/src", &[], &[]),
        json!({
            "workspace": "work",
            "reason": "project-file",
            "directory": world.path("proj/app/src"),
            "project": app,
            "project_file": app.join(".berth").join("workspace.json"),
            "proposal": null,
            "notes": [],
        })
    );
}

#[test]
fn a_root_answer_outside_any_project_has_null_project_fields() {
    let world = World::new();
    assert_eq!(
        world.resolve("proj/tree/deep", &[], &[]),
        json!({
            "workspace": "notes",
            "reason": "root",
            "directory": world.path("proj/tree/deep"),
            "project": null,
            "project_file": null,
            "proposal": null,
            "notes": [],
        })
    );
}

#[test]
fn tied_roots_leave_a_note_naming_the_workspaces_and_the_folder() {
    let world = World::new();
    let r = world.resolve("proj/shared/x", &[], &[]);
    let shared = world.path("proj/shared");
    let notes = r["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{r:#}");
    let note = notes[0].as_str().unwrap();
    assert!(
        note.starts_with(&format!("tied roots: oss, side at {}", shared.display())),
        "{note}"
    );
}

#[test]
fn the_active_workspace_follows_switch() {
    let world = World::new();
    world.env.json(["workspace", "switch", "oss"]);
    let r = world.resolve("proj/plain", &[], &[]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("oss"), Some("active"))
    );
}

#[test]
fn workspace_unassigned_is_used_by_agents_only() {
    let world = World::new();
    world
        .env
        .json(["setting", "set", "workspace.unassigned", "unas"]);
    let agent = world.resolve("proj/plain/x", &["--agent"], &[]);
    assert_eq!(
        (agent["workspace"].as_str(), agent["reason"].as_str()),
        (Some("unas"), Some("unassigned-setting"))
    );
    let cli = world.resolve("proj/plain/x", &[], &[]);
    assert_eq!(
        (cli["workspace"].as_str(), cli["reason"].as_str()),
        (Some("default"), Some("active"))
    );
    // Rules 1-4 still come first for agents.
    let rooted = world.resolve("proj/tree/deep", &["--agent"], &[]);
    assert_eq!(rooted["reason"], "root");
    let tied = world.resolve("proj/shared/x", &["--agent"], &[]);
    assert_eq!(
        (tied["workspace"].as_str(), tied["reason"].as_str()),
        (Some("unas"), Some("unassigned-setting"))
    );
}

#[rstest]
#[case::in_the_argument(&["--workspace", "nope"], &[], "the workspace argument named it")]
#[case::in_the_env(&[], &[("BERTH_WORKSPACE", "nope")], "BERTH_WORKSPACE named it")]
fn an_unknown_pinned_workspace_is_an_error_listing_the_workspaces(
    #[case] args: &[&str],
    #[case] vars: &[(&str, &str)],
    #[case] source: &str,
) {
    let world = World::new();
    let mut cmd = world
        .env
        .berth_in(world.path("proj/plain"), ["--json", "resolve"]);
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let _ = world.env.run(cmd).failure(1).stderr_has(&[
        "no workspace nope — workspaces: default, notes, oss, side, unas, work",
        source,
    ]);
}

#[test]
fn the_default_directory_is_the_cwd_and_berth_cwd_overrides_it() {
    let world = World::new();
    let r = world.env.json_in(world.path("proj/tree/deep"), ["resolve"]);
    assert_eq!(r["directory"], json!(world.path("proj/tree/deep")));
    assert_eq!(r["workspace"], "notes");
    let mut cmd = world
        .env
        .berth_in(world.path("proj/plain"), ["--json", "resolve"]);
    cmd.env("BERTH_CWD", world.path("proj/tree/y"));
    let r = world.env.run(cmd).success().json();
    assert_eq!(r["directory"], json!(world.path("proj/tree/y")));
    assert_eq!(r["workspace"], "work");
}
