//! `berth claim --cwd DIR... [--workspace W]` (docs/reference.md, "Conversations").

use berth_tests::TestEnv;
use serde_json::json;

/// `a` owns `proj/a`; `b` owns `proj/b`; `a` and `b` share `proj/shared`;
/// `proj/a/sub` is a repository whose approved file names `c`; `proj/none`
/// is nobody's.
fn world() -> TestEnv {
    let env = TestEnv::new();
    for w in ["a", "b", "c"] {
        env.json(["workspace", "create", w]);
    }
    let add = |w: &str, rel: &str| {
        let d = env.dir(rel);
        env.json(["root", "add", w, d.to_str().unwrap(), "--allow-overlap"]);
    };
    add("a", "proj/a");
    add("b", "proj/b");
    add("a", "proj/shared");
    add("b", "proj/shared");
    let sub = env.git_root(env.dir("proj/a/sub"));
    env.json_in(&sub, ["workspace", "use", "c", "--allow-overlap"]);
    env.dir("proj/none");
    env
}

fn claim(env: &TestEnv, rels: &[&str], extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["claim".to_string()];
    for r in rels {
        args.push("--cwd".into());
        args.push(env.dir(r).to_str().unwrap().into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    env.json(args)
}

#[test]
fn a_root_claims_its_folders() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/a/x"], &[]),
        json!({"workspaces": ["a"]})
    );
}

#[test]
fn an_approved_file_beats_the_roots_around_it() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/a/sub/src"], &[]),
        json!({"workspaces": ["c"]})
    );
}

#[test]
fn shared_roots_claim_for_each_workspace() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/shared"], &[]),
        json!({"workspaces": ["a", "b"]})
    );
}

#[test]
fn an_unclaimed_cwd_may_be_learned_by_every_workspace() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/none"], &[]),
        json!({"workspaces": ["a", "b", "c", "default"]})
    );
}

#[test]
fn mixed_owners_leave_no_workspace() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/a", "proj/b"], &[]),
        json!({"workspaces": []})
    );
}

#[test]
fn an_unclaimed_cwd_does_not_narrow_a_claimed_one() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/a", "proj/none"], &[]),
        json!({"workspaces": ["a"]})
    );
    assert_eq!(
        claim(&env, &["proj/shared", "proj/b/x"], &[]),
        json!({"workspaces": ["b"]})
    );
}

#[test]
fn workspace_answers_yes_or_no_for_one() {
    let env = world();
    assert_eq!(
        claim(&env, &["proj/a", "proj/none"], &["--workspace", "a"]),
        json!({"workspace": "a", "allowed": true})
    );
    assert_eq!(
        claim(&env, &["proj/a"], &["--workspace", "b"]),
        json!({"workspace": "b", "allowed": false})
    );
    let a = env.dir("proj/a");
    let text = env
        .run_berth(["claim", "--cwd", a.to_str().unwrap(), "--workspace", "a"])
        .success();
    assert_eq!(text.stdout(), "yes\n");
    let text = env
        .run_berth(["claim", "--cwd", a.to_str().unwrap(), "--workspace", "b"])
        .success();
    assert_eq!(text.stdout(), "no\n");
}

#[test]
fn claim_for_an_unknown_workspace_fails() {
    let env = world();
    let a = env.dir("proj/a");
    let _ = env
        .run_berth(["claim", "--cwd", a.to_str().unwrap(), "--workspace", "zzz"])
        .failure(1)
        .stderr_has(&["no workspace zzz — workspaces: "]);
}

/// A conversation's cwd may be gone by the time it is judged: it is walked from where it was,
/// so a deleted folder inside `a`'s root is still claimed by `a`. A `..` in the missing part
/// cannot be judged and is refused.
#[test]
fn a_deleted_cwd_is_judged_by_where_it_was() {
    let env = world();
    let gone = env.dir("proj/a/gone/deeper");
    std::fs::remove_dir_all(env.dir("proj/a/gone")).unwrap();
    let v = env.json(["claim", "--cwd", gone.to_str().unwrap()]);
    assert_eq!(v, json!({"workspaces": ["a"]}));
    let b = env.dir("proj/b");
    let v = env.json([
        "claim",
        "--cwd",
        gone.to_str().unwrap(),
        "--cwd",
        b.to_str().unwrap(),
    ]);
    assert_eq!(v, json!({"workspaces": []}));
    let dotdot = format!("{}/../x", gone.display());
    let _ = env
        .run_berth(["claim", "--cwd", &dotdot])
        .failure(1)
        .stderr_has(&["no such file or directory"]);
}
