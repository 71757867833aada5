//! The walk (docs/reference.md, "Roots, the walk and project files"): where it stops, and what a
//! PATH argument means.

use berth_tests::TestEnv;
use serde_json::json;

fn env_with_w() -> TestEnv {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    env
}

#[test]
fn a_project_file_in_the_home_is_never_used() {
    let env = env_with_w();
    let home = env.home();
    let file = env.project_file(&home, r#"{"workspace": "w"}"#);
    let below = env.dir("home/code/thing");
    for dir in [&home, &below] {
        let r = env.json(["resolve", dir.to_str().unwrap()]);
        assert_eq!(r["project_file"], json!(null), "{dir:?}: {r:#}");
        assert_eq!(r["proposal"], json!(null), "{dir:?}: {r:#}");
        assert_eq!(r["project"], json!(null), "{dir:?}: {r:#}");
        assert_eq!(r["reason"], "active");
        let named = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(file.to_str().unwrap()));
        assert!(!named, "{r:#}");
    }
}

#[test]
fn a_git_repository_at_the_home_is_not_a_project() {
    // A dotfiles repository in $HOME must not make every folder one project.
    let env = env_with_w();
    env.git_root(env.home());
    let r = env.json(["resolve", env.dir("home/code").to_str().unwrap()]);
    assert_eq!(r["project"], json!(null), "{r:#}");
}

#[test]
fn a_project_file_in_an_ancestor_of_the_home_is_never_used() {
    let env = env_with_w();
    // The temp root holds the home, so it is an ancestor of it.
    env.project_file(env.root(), r#"{"workspace": "w"}"#);
    let r = env.json(["resolve", env.dir("elsewhere/x").to_str().unwrap()]);
    assert_eq!(r["project_file"], json!(null), "{r:#}");
    assert_eq!(r["proposal"], json!(null), "{r:#}");
}

#[test]
fn the_walk_stops_before_berth_extra_home() {
    let env = env_with_w();
    let extra = env.dir("winhome");
    env.project_file(&extra, r#"{"workspace": "w"}"#);
    let inside = env.dir("winhome/code");
    // Control: without BERTH_EXTRA_HOME the file is found (and proposes).
    let r = env.json_in(&inside, ["resolve"]);
    assert_eq!(r["proposal"], "w", "control: {r:#}");
    let mut cmd = env.berth_in(&inside, ["--json", "resolve"]);
    cmd.env("BERTH_EXTRA_HOME", &extra);
    let r = env.run(cmd).success().json();
    assert_eq!(r["project_file"], json!(null), "{r:#}");
    assert_eq!(r["proposal"], json!(null), "{r:#}");
    assert_eq!(r["project"], json!(null), "{r:#}");
}

#[test]
fn a_file_path_means_its_folder() {
    let env = env_with_w();
    let dir = env.git_root(env.dir("proj/repo"));
    let file = dir.join("main.rs");
    std::fs::write(&file, "fn main() {}").unwrap();
    let r = env.json(["resolve", file.to_str().unwrap()]);
    assert_eq!(r["directory"], json!(dir));
    assert_eq!(r["project"], json!(dir));
}

#[test]
fn a_relative_path_is_taken_from_the_cwd() {
    let env = env_with_w();
    let proj = env.dir("proj");
    let sub = env.dir("proj/a/b");
    let r = env.json_in(&proj, ["resolve", "a/b"]);
    assert_eq!(r["directory"], json!(sub));
    let r = env.json_in(&sub, ["resolve", ".."]);
    assert_eq!(r["directory"], json!(env.dir("proj/a")));
}

// Creating a symbolic link takes a privilege on Windows.
#[cfg(unix)]
#[test]
fn a_symlinked_path_resolves_to_its_target() {
    let env = env_with_w();
    let real = env.dir("proj/real");
    env.json(["root", "add", "w", real.to_str().unwrap()]);
    let link = env.root().join("proj").join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let r = env.json(["resolve", link.to_str().unwrap()]);
    assert_eq!(r["directory"], json!(real));
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("w"), Some("root"))
    );
}

#[test]
fn a_missing_path_is_a_clear_error() {
    let env = env_with_w();
    let missing = env.root().join("proj").join("not-there");
    let _ = env
        .run_berth(["resolve", missing.to_str().unwrap()])
        .failure(1)
        .stderr_has(&[missing.to_str().unwrap()]);
}

#[test]
fn the_nearest_project_file_wins_over_farther_ones() {
    let env = env_with_w();
    env.json(["workspace", "create", "v"]);
    let outer = env.dir("proj/outer");
    let inner = env.git_root(env.dir("proj/outer/inner"));
    env.json_in(&outer, ["workspace", "use", "v"]);
    env.json_in(&inner, ["workspace", "use", "w", "--allow-overlap"]);
    let r = env.json(["resolve", env.dir("proj/outer/inner/x").to_str().unwrap()]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("w"), Some("project-file"))
    );
    assert_eq!(r["project"], json!(inner));
    let r = env.json(["resolve", env.dir("proj/outer/y").to_str().unwrap()]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("v"), Some("project-file"))
    );
}

#[test]
fn the_git_root_is_the_project_even_when_a_farther_file_decides() {
    let env = env_with_w();
    let mono = env.dir("proj/mono");
    env.json_in(&mono, ["workspace", "use", "w"]);
    let sub = env.git_root(env.dir("proj/mono/vendored"));
    let r = env.json(["resolve", sub.to_str().unwrap()]);
    assert_eq!(r["project"], json!(sub), "{r:#}");
    assert_eq!(r["workspace"], "w");
    assert_eq!(r["reason"], "project-file");
    assert_eq!(
        r["project_file"],
        json!(mono.join(".berth").join("workspace.json"))
    );
}

#[test]
fn a_git_file_marks_a_repository_root_too() {
    // Worktrees and submodules have a `.git` file, not a folder.
    let env = env_with_w();
    let wt = env.dir("proj/worktree");
    std::fs::write(wt.join(".git"), "gitdir: /somewhere/else\n").unwrap();
    let r = env.json(["resolve", env.dir("proj/worktree/src").to_str().unwrap()]);
    assert_eq!(r["project"], json!(wt), "{r:#}");
}
