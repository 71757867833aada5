//! `berth explain`: each directory of the walk, what was found there, and the deciding rule.

use berth_tests::TestEnv;
use serde_json::json;

#[test]
fn explain_json_lists_every_directory_of_the_walk_and_the_rule() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    let p = env.dir("proj");
    let root = env.dir("proj/r");
    env.json(["root", "add", "w", root.to_str().unwrap()]);
    let d = env.dir("proj/r/a/b");
    let e = env.json_in(&d, ["explain"]);
    assert_eq!(e["workspace"], "w");
    assert_eq!(e["reason"], "root");
    let dirs: Vec<&str> = e["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["directory"].as_str().unwrap())
        .collect();
    let r = root.to_str().unwrap();
    assert_eq!(
        dirs,
        [
            d.to_str().unwrap(),
            env.dir("proj/r/a").to_str().unwrap(),
            r,
            p.to_str().unwrap(),
        ]
    );
    assert!(
        e["stopped"]
            .as_str()
            .unwrap()
            .contains(env.home().to_str().unwrap()),
        "the walk stops before the temp root, which holds the home: {e:#}"
    );
    assert!(
        e["decided"].as_str().unwrap().starts_with("rule 4"),
        "{e:#}"
    );
    let at_root = &e["steps"][2]["findings"];
    assert!(at_root.to_string().contains("a root of w"), "{e:#}");
}

#[test]
fn explain_text_draws_each_directory_and_the_decision() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    env.json_in(&repo, ["workspace", "use", "app"]);
    let sub = env.dir("proj/repo/src");
    let out = env.run_in(&sub, ["explain"]).success().stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], sub.to_str().unwrap(), "{out}");
    assert!(
        out.contains(&format!("  {}\n      nothing here\n", sub.display())),
        "{out}"
    );
    assert!(out.contains(&format!("  {}\n", repo.display())), "{out}");
    assert!(out.contains("approved for app"), "{out}");
    assert!(out.contains(".git present"), "{out}");
    assert!(out.contains("stopped before"), "{out}");
    assert!(out.contains("=> app (project-file): rule 3"), "{out}");
}

#[test]
fn explain_with_a_pin_says_rule_1_or_2() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    let d = env.dir("proj/x");
    let e = env.json_in(&d, ["explain", "--workspace", "w"]);
    assert_eq!(
        (e["workspace"].clone(), e["reason"].clone()),
        (json!("w"), json!("argument"))
    );
    assert!(
        e["decided"].as_str().unwrap().starts_with("rule 1"),
        "{e:#}"
    );
    let mut cmd = env.berth_in(&d, ["--json", "explain"]);
    cmd.env("BERTH_WORKSPACE", "w");
    let e = env.run(cmd).success().json();
    assert!(
        e["decided"].as_str().unwrap().starts_with("rule 2"),
        "{e:#}"
    );
}

#[test]
fn explain_of_an_unassigned_folder_says_the_active_rule() {
    let env = TestEnv::new();
    let d = env.dir("proj/nothing");
    let e = env.json_in(&d, ["explain"]);
    assert_eq!(e["reason"], "active");
    assert!(
        e["decided"].as_str().unwrap().starts_with("rule 5"),
        "{e:#}"
    );
}
