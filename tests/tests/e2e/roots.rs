//! `berth root add/remove/list` (docs/reference.md, "Roots, the walk and project files" and "The
//! CLI").

use berth_tests::TestEnv;
use serde_json::json;

fn env_with(ws: &[&str]) -> TestEnv {
    let env = TestEnv::new();
    for w in ws {
        env.json(["workspace", "create", w]);
    }
    env
}

#[test]
fn add_canonicalises_and_list_shows_every_root() {
    let env = env_with(&["a", "b"]);
    let pa = env.dir("proj/a");
    let pb = env.dir("proj/b");
    // A relative path with `..`, from the cwd.
    let added = env.json_in(&pb, ["root", "add", "a", "../a/."]);
    assert_eq!(added["workspace"], "a", "{added}");
    assert_eq!(added["path"], json!(pa), "{added}");
    env.json(["root", "add", "b", pb.to_str().unwrap()]);
    assert_eq!(
        env.json(["root", "list"]),
        json!({"roots": [
            {"workspace": "a", "path": pa},
            {"workspace": "b", "path": pb},
        ]})
    );
    assert_eq!(
        env.json(["root", "list", "b"]),
        json!({"roots": [{"workspace": "b", "path": pb}]})
    );
    assert_eq!(env.json(["workspace", "show", "a"])["roots"], json!([pa]));
}

#[test]
fn adding_the_same_root_twice_keeps_one() {
    let env = env_with(&["a"]);
    let p = env.dir("proj/a");
    env.json(["root", "add", "a", p.to_str().unwrap()]);
    let _ = env
        .run_berth(["root", "add", "a", p.to_str().unwrap()])
        .success();
    assert_eq!(
        env.json(["root", "list", "a"])["roots"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn remove_forgets_a_root_and_removing_a_non_root_fails() {
    let env = env_with(&["a"]);
    let p = env.dir("proj/a");
    env.json(["root", "add", "a", p.to_str().unwrap()]);
    let removed = env.json(["root", "remove", "a", p.to_str().unwrap()]);
    assert_eq!(removed, json!({"workspace": "a", "path": p}));
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
    let _ = env
        .run_berth(["root", "remove", "a", p.to_str().unwrap()])
        .failure(1)
        .stderr_has(&["not a root"]);
}

#[test]
fn a_root_whose_folder_was_deleted_can_still_be_removed() {
    let env = env_with(&["a"]);
    let p = env.dir("proj/gone");
    env.json(["root", "add", "a", p.to_str().unwrap()]);
    std::fs::remove_dir(&p).unwrap();
    env.json(["root", "remove", "a", p.to_str().unwrap()]);
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
}

#[test]
fn roots_of_an_unknown_workspace_are_refused_listing_the_workspaces() {
    let env = env_with(&["a"]);
    let p = env.dir("proj/x");
    for args in [
        vec!["root", "add", "nope", p.to_str().unwrap()],
        vec!["root", "remove", "nope", p.to_str().unwrap()],
        vec!["root", "list", "nope"],
    ] {
        let _ = env
            .run_berth(&args)
            .failure(1)
            .stderr_has(&["no workspace nope — workspaces: a, default"]);
    }
}

#[test]
fn a_missing_folder_or_a_file_is_not_a_root() {
    let env = env_with(&["a"]);
    let missing = env.root().join("proj").join("missing");
    let _ = env
        .run_berth(["root", "add", "a", missing.to_str().unwrap()])
        .failure(1)
        .stderr_has(&[missing.to_str().unwrap()]);
    let file = env.dir("proj").join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let _ = env
        .run_berth(["root", "add", "a", file.to_str().unwrap()])
        .failure(1)
        .stderr_has(&["not a directory"]);
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
}

#[test]
fn the_home_an_ancestor_of_it_and_the_filesystem_root_are_never_roots() {
    let env = env_with(&["a"]);
    let home = env.home();
    let mut cases = vec![
        (home.to_str().unwrap().to_string(), "home directory"),
        (
            env.root().to_str().unwrap().to_string(),
            "contains the home directory",
        ),
    ];
    // Unix paths: on Windows the test's home is not below /tmp.
    if cfg!(unix) {
        cases.extend([
            ("/tmp".to_string(), "contains the home directory"),
            ("/".to_string(), "filesystem root"),
        ]);
    }
    for (dir, why) in &cases {
        let _ = env
            .run_berth(["root", "add", "a", dir])
            .failure(1)
            .stderr_has(&[why]);
        let _ = env
            .run_berth(["root", "add", "a", dir, "--allow-overlap"])
            .failure(1)
            .stderr_has(&[why]);
    }
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
}

/// docs/reference.md, "Scratch folders": scratch folders are never roots; nor is anything else of
/// berth's own data folder (a managed home is where a workspace's files live, not a project to
/// claim).
#[test]
fn berths_data_folder_its_homes_and_scratch_folders_are_never_roots() {
    let env = env_with(&["a", "b"]);
    let data = env.data_dir();
    let scratch = data.join("scratch").join("0123456789abcdef");
    std::fs::create_dir_all(&scratch).unwrap();
    let home_b = data.join("workspaces").join("b");
    std::fs::create_dir_all(&home_b).unwrap();
    for dir in [&data, &scratch, &home_b] {
        for extra in [None, Some("--allow-overlap")] {
            let mut args = vec!["root", "add", "a", dir.to_str().unwrap()];
            args.extend(extra);
            let _ = env
                .run_berth(&args)
                .failure(1)
                .stderr_has(&["inside berth's data folder", "never a root"]);
        }
    }
    // `workspace use` in a scratch folder neither approves it nor writes a project file there.
    let mut cmd = env.berth(["workspace", "use", "a"]);
    cmd.current_dir(&scratch);
    let _ = env
        .run(cmd)
        .failure(1)
        .stderr_has(&["inside berth's data folder"]);
    assert!(!scratch.join(".berth").exists());
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
}

#[test]
fn berth_extra_home_is_never_a_root_either() {
    let env = env_with(&["a"]);
    let extra = env.dir("winhome");
    let mut cmd = env.berth(["root", "add", "a", extra.to_str().unwrap()]);
    cmd.env("BERTH_EXTRA_HOME", &extra);
    let _ = env.run(cmd).failure(1).stderr_has(&["home directory"]);
}

#[test]
fn a_folder_inside_the_home_is_a_fine_root() {
    let env = env_with(&["a"]);
    let code = env.dir("home/code/app");
    env.json(["root", "add", "a", code.to_str().unwrap()]);
    let r = env.json_in(&code, ["resolve"]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("a"), Some("root"))
    );
}

#[test]
fn overlapping_another_workspaces_root_is_refused_naming_it_in_every_direction() {
    let env = env_with(&["a", "b"]);
    let mid = env.dir("proj/x/mid");
    env.json(["root", "add", "a", mid.to_str().unwrap()]);
    for rel in ["proj/x/mid", "proj/x", "proj/x/mid/deep"] {
        let d = env.dir(rel);
        let _ = env
            .run_berth(["root", "add", "b", d.to_str().unwrap()])
            .failure(1)
            .stderr_has(&[
                "workspace \"a\"",
                mid.to_str().unwrap(),
                "must be confirmed\nHint: repeat with --allow-overlap\n",
            ]);
    }
    assert_eq!(env.json(["root", "list", "b"]), json!({"roots": []}));
    // Siblings do not overlap.
    let sib = env.dir("proj/x/sibling");
    env.json(["root", "add", "b", sib.to_str().unwrap()]);
}

#[test]
fn allow_overlap_accepts_a_shared_folder() {
    let env = env_with(&["a", "b"]);
    let p = env.dir("proj/shared");
    env.json(["root", "add", "a", p.to_str().unwrap()]);
    env.json(["root", "add", "b", p.to_str().unwrap(), "--allow-overlap"]);
    assert_eq!(
        env.json(["root", "list"]),
        json!({"roots": [
            {"workspace": "a", "path": p},
            {"workspace": "b", "path": p},
        ]})
    );
}

#[test]
fn nested_roots_of_the_same_workspace_are_allowed() {
    let env = env_with(&["a"]);
    let outer = env.dir("proj/outer");
    let inner = env.dir("proj/outer/inner");
    env.json(["root", "add", "a", outer.to_str().unwrap()]);
    env.json(["root", "add", "a", inner.to_str().unwrap()]);
    assert_eq!(
        env.json(["root", "list", "a"])["roots"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

// Creating a symbolic link takes a privilege on Windows.
#[cfg(unix)]
#[test]
fn a_symlink_to_the_home_is_judged_by_its_target() {
    let env = env_with(&["a"]);
    let link = env.dir("proj").join("to-home");
    std::os::unix::fs::symlink(env.home(), &link).unwrap();
    let _ = env
        .run_berth(["root", "add", "a", link.to_str().unwrap()])
        .failure(1)
        .stderr_has(&["home directory"]);
}
