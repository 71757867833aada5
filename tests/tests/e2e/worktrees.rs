//! Linked git worktrees made by real git: a worktree of an approved repository is that
//! repository's project, wherever it lies; a `.git` file git's records do not confirm is judged as
//! an ordinary folder (docs/reference.md, "Roots, the walk and project files";
//! docs/decisions/0047-a-git-worktree-is-its-repositorys-project.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_tests::{TestEnv, bin, wait_until};
use serde_json::{Value, json};

/// A repository `src/shop` approved for `shop` through `workspace use`, its project file
/// committed, as a new user would set it up.
fn approved_shop(env: &TestEnv) -> PathBuf {
    let shop = env.dir("src/shop");
    env.git(&shop, ["init", "-q"]);
    env.json_in(&shop, ["workspace", "use", "shop"]);
    commit_all(env, &shop);
    shop
}

fn commit_all(env: &TestEnv, repo: &Path) {
    env.git(repo, ["add", "-A"]);
    env.git(repo, ["commit", "-q", "--allow-empty", "-m", "init"]);
}

/// `git worktree add <place>` from `repo`; returns the worktree's canonical folder.
fn add_worktree(env: &TestEnv, repo: &Path, place: &str) -> PathBuf {
    let at = env.root().join(place);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    env.git(repo, ["worktree", "add", "-q", at.to_str().unwrap()]);
    berth_tests::canonical(&at).unwrap()
}

/// The admin folder git made for the worktree at `worktree`.
fn admin_of(worktree: &Path) -> PathBuf {
    let text = std::fs::read_to_string(worktree.join(".git")).unwrap();
    PathBuf::from(text.trim_end().strip_prefix("gitdir: ").unwrap())
}

fn resolve(env: &TestEnv, dir: &Path) -> Value {
    env.json_in(dir, ["resolve"])
}

fn through_note(repo: &Path) -> String {
    format!(
        "approved through the repository {} (this folder is one of its git worktrees)",
        repo.display()
    )
}

fn notes(answer: &Value) -> Vec<String> {
    answer["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect()
}

fn prompt(env: &TestEnv, dir: &Path) -> String {
    env.run_in(dir, ["prompt"]).success().stdout()
}

#[test]
fn a_worktree_beside_the_repository_and_one_far_away_are_its_project() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    for place in ["src/shop-feat", "elsewhere/agents/task-7"] {
        let wt = add_worktree(&env, &shop, place);
        let deep = wt.join("deep");
        std::fs::create_dir_all(&deep).unwrap();
        for dir in [&wt, &deep] {
            let a = resolve(&env, dir);
            assert_eq!(a["workspace"], "shop", "{place}: {a:#}");
            assert_eq!(a["reason"], "project-file", "{place}: {a:#}");
            assert_eq!(a["proposal"], Value::Null, "{place}: {a:#}");
            assert_eq!(a["project"], json!(wt), "{place}: {a:#}");
            assert_eq!(notes(&a), [through_note(&shop)], "{place}: {a:#}");
        }
        assert_eq!(prompt(&env, &wt), "shop\n", "{place}: no question mark");
        let e = env.json_in(&wt, ["explain"]);
        let findings = e["steps"][0]["findings"].to_string();
        assert!(
            findings
                .contains("whose back-link names this folder: a linked worktree of the repository"),
            "{e:#}"
        );
        assert!(
            e["decided"]
                .as_str()
                .unwrap()
                .contains("approved it through the repository"),
            "{e:#}"
        );
    }
}

#[test]
fn a_repository_approved_by_a_root_alone_approves_its_worktrees() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "lab"]);
    let lab = env.dir("lab");
    env.json(["root", "add", "lab", lab.to_str().unwrap()]);
    let repo = env.dir("lab/tool");
    env.git(&repo, ["init", "-q"]);
    commit_all(&env, &repo);
    let wt = add_worktree(&env, &repo, "agents/tool-fix");
    let a = resolve(&env, &wt);
    assert_eq!(
        (&a["workspace"], &a["reason"]),
        (&json!("lab"), &json!("root")),
        "{a:#}"
    );
    assert_eq!(notes(&a), [through_note(&repo)]);
    assert_eq!(prompt(&env, &wt), "lab\n");
    let e = env.json_in(&wt, ["explain"]);
    assert!(
        e["decided"].as_str().unwrap().starts_with(&format!(
            "rule 4: {} is in a linked worktree of the repository {}",
            wt.display(),
            repo.display()
        )),
        "{e:#}"
    );
}

#[test]
fn a_bare_repository_under_a_root_approves_two_worktrees_elsewhere() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let seed = env.dir("seed");
    env.git(&seed, ["init", "-q"]);
    env.project_file(&seed, r#"{"workspace": "shop"}"#);
    commit_all(&env, &seed);
    let repos = env.dir("repos");
    env.json(["root", "add", "shop", repos.to_str().unwrap()]);
    env.git(
        &repos,
        ["clone", "-q", "--bare", seed.to_str().unwrap(), "shop.git"],
    );
    let bare = repos.join("shop.git");
    let one = add_worktree(&env, &bare, "a/one");
    env.git(&bare, ["branch", "two"]);
    let two = env.root().join("b/two");
    std::fs::create_dir_all(two.parent().unwrap()).unwrap();
    env.git(
        &bare,
        ["worktree", "add", "-q", two.to_str().unwrap(), "two"],
    );
    for wt in [one, two] {
        let a = resolve(&env, &wt);
        assert_eq!(
            (&a["workspace"], &a["reason"]),
            (&json!("shop"), &json!("project-file")),
            "{a:#}"
        );
        assert_eq!(notes(&a), [through_note(&bare)]);
    }
}

/// `dir`'s answer once it is an ordinary folder's (reason `active`), or the last one after 10 s:
/// a warm cache sees a change of the disk when the change's event arrives, milliseconds later,
/// more under load (docs/decisions/0025-resolving-from-memory.md).
fn once_ordinary(env: &TestEnv, dir: &Path) -> Value {
    wait_until(Duration::from_secs(10), || {
        let a = resolve(env, dir);
        if a["reason"] == "active" {
            Ok(a)
        } else {
            Err(a)
        }
    })
    .unwrap_or_else(|last| last)
}

/// Resolves `dir` and expects the answer of an ordinary folder holding the worktree's proposal,
/// with `why` in explain's account of its `.git`.
fn judged_as_today(env: &TestEnv, dir: &Path, why: &str) {
    let a = once_ordinary(env, dir);
    assert_eq!(
        (&a["workspace"], &a["reason"], &a["proposal"]),
        (&json!("default"), &json!("active"), &json!("shop")),
        "{a:#}"
    );
    assert!(
        prompt(env, dir).contains('?'),
        "a forged worktree is asked about"
    );
    let e = env.json_in(dir, ["explain"]);
    let findings = e["steps"][0]["findings"].to_string();
    assert!(
        findings.contains("not a linked worktree") && findings.contains(why),
        "{why}: {e:#}"
    );
}

#[test]
fn a_clone_whose_git_file_points_into_the_repositorys_worktrees_is_not_one() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "src/shop-feat");
    let forged = env.dir("elsewhere/forged");
    std::fs::copy(wt.join(".git"), forged.join(".git")).unwrap();
    env.project_file(&forged, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &forged, "back-link names");
    // The real worktree is still one.
    assert_eq!(resolve(&env, &wt)["reason"], "project-file");
}

#[test]
fn a_back_link_naming_another_folder_is_refused() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "src/shop-feat");
    assert_eq!(resolve(&env, &wt)["reason"], "project-file");
    let other = env.dir("other");
    std::fs::write(
        admin_of(&wt).join("gitdir"),
        format!("{}\n", other.join(".git").display()),
    )
    .unwrap();
    judged_as_today(&env, &wt, "back-link names");
}

#[test]
fn a_removed_admin_folder_or_a_pruned_worktree_is_refused() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "src/shop-feat");
    assert_eq!(resolve(&env, &wt)["reason"], "project-file");
    std::fs::remove_dir_all(admin_of(&wt)).unwrap();
    judged_as_today(&env, &wt, "is missing");

    // Deleted, pruned, and put back by hand with its old `.git` file.
    let gone = add_worktree(&env, &shop, "src/shop-gone");
    let dot_git = std::fs::read(gone.join(".git")).unwrap();
    assert_eq!(resolve(&env, &gone)["reason"], "project-file");
    std::fs::remove_dir_all(&gone).unwrap();
    env.git(&shop, ["worktree", "prune"]);
    std::fs::create_dir_all(&gone).unwrap();
    std::fs::write(gone.join(".git"), dot_git).unwrap();
    env.project_file(&gone, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &gone, "is missing");
}

#[cfg(unix)] // FIFOs and links
#[test]
fn a_git_file_that_is_a_fifo_a_link_or_huge_is_refused_without_blocking() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "src/shop-feat");

    let fifo = env.dir("f");
    let status = std::process::Command::new("mkfifo")
        .arg(fifo.join(".git"))
        .status()
        .unwrap();
    assert!(status.success());
    env.project_file(&fifo, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &fifo, "named pipe");

    let link = env.dir("l");
    std::os::unix::fs::symlink(wt.join(".git"), link.join(".git")).unwrap();
    env.project_file(&link, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &link, "is a link");

    let huge = env.dir("h");
    let mut text = std::fs::read_to_string(wt.join(".git")).unwrap();
    text.push_str(&" ".repeat(64 * 1024));
    std::fs::write(huge.join(".git"), text).unwrap();
    env.project_file(&huge, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &huge, "larger than");
}

#[test]
fn a_worktree_moved_or_removed_is_resolved_anew() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "src/shop-feat");
    // Warm: the answer comes from memory afterwards.
    for _ in 0..3 {
        assert_eq!(resolve(&env, &wt)["reason"], "project-file");
    }
    let moved = env.root().join("elsewhere/moved");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    env.git(
        &shop,
        [
            "worktree",
            "move",
            wt.to_str().unwrap(),
            moved.to_str().unwrap(),
        ],
    );
    let moved = berth_tests::canonical(&moved).unwrap();
    assert_eq!(resolve(&env, &moved)["reason"], "project-file");
    // A copy left at the old place with the old `.git` file is no worktree any more.
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::copy(moved.join(".git"), wt.join(".git")).unwrap();
    env.project_file(&wt, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &wt, "back-link names");
    env.git(
        &shop,
        ["worktree", "remove", "--force", moved.to_str().unwrap()],
    );
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::copy(wt.join(".git"), moved.join(".git")).unwrap();
    env.project_file(&moved, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &moved, "is missing");
}

#[test]
fn claims_of_cwds_in_worktrees_are_the_repositorys() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    env.json(["workspace", "create", "lab"]);
    let lab = env.dir("lab");
    env.json(["root", "add", "lab", lab.to_str().unwrap()]);
    let tool = env.dir("lab/tool");
    env.git(&tool, ["init", "-q"]);
    commit_all(&env, &tool);
    let shop_wt = add_worktree(&env, &shop, "agents/shop");
    let tool_wt = add_worktree(&env, &tool, "agents/tool");
    let claim = |dirs: &[&Path]| {
        let mut args = vec!["claim".to_string()];
        for d in dirs {
            args.extend(["--cwd".into(), d.to_str().unwrap().to_owned()]);
        }
        env.json(args)
    };
    assert_eq!(claim(&[&shop_wt]), json!({"workspaces": ["shop"]}));
    assert_eq!(
        claim(&[&tool_wt.join("src")]),
        json!({"workspaces": ["lab"]})
    );
    assert_eq!(claim(&[&shop_wt, &shop]), json!({"workspaces": ["shop"]}));
    assert_eq!(claim(&[&shop_wt, &tool_wt]), json!({"workspaces": []}));
}

#[test]
fn workspace_use_in_a_worktree_of_an_approved_repository_changes_nothing() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "elsewhere/shop-feat");
    let roots = env.json(["root", "list"]);
    let file = std::fs::read(wt.join(".berth/workspace.json")).unwrap();
    let run = env.run_in(&wt, ["workspace", "use", "shop"]).success();
    assert!(
        run.stderr().contains(&format!(
            "already approved for shop through the repository {}",
            shop.display()
        )),
        "{}",
        run.stderr()
    );
    let out = env.json_in(&wt, ["workspace", "use", "shop"]);
    assert_eq!(
        (&out["created"], &out["root_added"]),
        (&json!(false), &json!(false))
    );
    assert_eq!(out["project_file"], Value::Null);
    assert_eq!(env.json(["root", "list"]), roots);
    assert_eq!(
        std::fs::read(wt.join(".berth/workspace.json")).unwrap(),
        file
    );
}

#[cfg(unix)] // runs sh
#[test]
fn berth_exec_and_the_session_start_hook_see_the_repositorys_workspace() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let wt = add_worktree(&env, &shop, "elsewhere/shop-feat");
    let show = r#"printf '%s|%s|%s' "$BERTH_WORKSPACE" "$BERTH_PROJECT" "$BERTH_REASON""#;
    let run = env.run_in(&wt, ["exec", "--", "sh", "-c", show]).success();
    assert_eq!(run.stdout(), format!("shop|{}|project-file", wt.display()));

    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("session-start");
    let payload = json!({
        "session_id": "s-worktree",
        "cwd": wt,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let out = env
        .run_with_stdin(cmd, payload.to_string().as_bytes())
        .success()
        .stdout();
    let doc: Value = serde_json::from_str(&out).expect("one JSON document");
    let context = doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no additionalContext in {doc}"));
    assert!(context.contains("shop"), "{context}");
    assert!(
        !context.contains("use_workspace"),
        "an approved repository's worktree is not asked about: {context}"
    );
}

/// The native-tool guard in a worktree of an approved repository: the session works in the
/// repository's workspace, so the worktree and the repository's folder are its own places,
/// and another workspace's root is still put to the person.
#[test]
fn the_guard_in_a_worktree_keeps_the_session_to_its_repositorys_workspace() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let feat = add_worktree(&env, &shop, "elsewhere/shop-feat");
    let alpha = env.dir("src/alpha");
    env.git(&alpha, ["init", "-q"]);
    env.json_in(&alpha, ["workspace", "use", "alpha"]);
    let write = |file: &Path| {
        let payload = json!({
            "session_id": "0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5",
            "cwd": feat,
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Write",
            "tool_input": {"file_path": file, "content": "x"},
        })
        .to_string();
        let mut cmd = env.command(bin("berth-hook"));
        cmd.arg("pre-tool");
        env.run_with_stdin(cmd, payload.as_bytes())
            .success()
            .stdout()
    };
    assert_eq!(write(&feat.join("src/new.rs")), "", "its own worktree");
    assert_eq!(
        write(&shop.join("README.md")),
        "",
        "its repository's folder"
    );
    let asked = write(&alpha.join("lib.rs"));
    assert!(
        asked.contains("\"ask\"") && asked.contains("works in workspace shop"),
        "{asked}"
    );
}

/// `git init --separate-git-dir gits/shop.git src/shop`: the checkout's `.git` is a file naming
/// the git folder, and git records nothing back. Returns (checkout, git folder), canonical.
fn separate_shop(env: &TestEnv) -> (PathBuf, PathBuf) {
    let gits = env.dir("gits");
    let shop = env.dir("src/shop");
    let git_folder = gits.join("shop.git");
    env.git(
        env.root(),
        [
            "init",
            "-q",
            "--separate-git-dir",
            git_folder.to_str().unwrap(),
            shop.to_str().unwrap(),
        ],
    );
    let git_folder = berth_tests::canonical(&git_folder).unwrap();
    (berth_tests::canonical(&shop).unwrap(), git_folder)
}

fn findings(env: &TestEnv, dir: &Path) -> String {
    env.json_in(dir, ["explain"])["steps"][0]["findings"].to_string()
}

#[test]
fn a_worktree_of_a_separate_git_folder_is_its_approved_checkouts_project() {
    let env = TestEnv::new();
    let (shop, git_folder) = separate_shop(&env);
    env.json_in(&shop, ["workspace", "use", "shop"]);
    assert_eq!(
        env.json(["root", "list"])["roots"],
        json!([{"workspace": "shop", "path": shop}]),
        "workspace use approves the checkout"
    );
    commit_all(&env, &shop);
    let wt = add_worktree(&env, &shop, "elsewhere/shop-feat");
    assert_eq!(
        admin_of(&wt).parent().unwrap().parent().unwrap(),
        git_folder,
        "git put the admin folder in the separate git folder"
    );
    // Twice: the second answer comes from memory.
    for _ in 0..2 {
        let a = resolve(&env, &wt);
        assert_eq!(
            (&a["workspace"], &a["reason"], &a["proposal"]),
            (&json!("shop"), &json!("project-file"), &Value::Null),
            "{a:#}"
        );
        assert_eq!(notes(&a), [through_note(&shop)], "{a:#}");
    }
    assert_eq!(prompt(&env, &wt), "shop\n");
    let found = findings(&env, &wt);
    assert!(
        found.contains(&format!(
            "a linked worktree of the repository {} (its git folder {} is a separate one; this root's own .git file names it)",
            shop.display(),
            git_folder.display()
        )),
        "{found}"
    );

    // Without a project file, by the checkout's root.
    let plain = env.root().join("elsewhere/plain");
    env.git(
        &shop,
        ["worktree", "add", "-q", "--orphan", plain.to_str().unwrap()],
    );
    let plain = berth_tests::canonical(&plain).unwrap();
    let a = resolve(&env, &plain);
    assert_eq!(
        (&a["workspace"], &a["reason"]),
        (&json!("shop"), &json!("root")),
        "{a:#}"
    );
    assert_eq!(notes(&a), [through_note(&shop)], "{a:#}");
}

#[test]
fn a_git_file_elsewhere_naming_the_separate_git_folder_does_not_become_the_repository() {
    let env = TestEnv::new();
    let (shop, git_folder) = separate_shop(&env);
    env.json_in(&shop, ["workspace", "use", "shop"]);
    commit_all(&env, &shop);
    let wt = add_worktree(&env, &shop, "elsewhere/shop-feat");
    assert_eq!(resolve(&env, &wt)["reason"], "project-file");

    // A copy of the checkout's `.git`, with a file naming shop: no checkout, no worktree.
    let forged = env.dir("downloads/forged");
    std::fs::copy(shop.join(".git"), forged.join(".git")).unwrap();
    env.project_file(&forged, r#"{"workspace": "shop"}"#);
    judged_as_today(&env, &forged, "is not in a repository's worktrees folder");
    assert_eq!(resolve(&env, &wt)["reason"], "project-file");

    // The same copy at the top of another workspace's root: two roots name the git folder, and
    // neither is taken.
    env.json(["workspace", "create", "oss"]);
    env.json(["root", "add", "oss", forged.to_str().unwrap()]);
    judged_as_today_in_a_worktree(&env, &wt);
    let found = findings(&env, &wt);
    assert!(
        found.contains(&format!(
            "a linked worktree of the repository {} (a separate git folder, which the .git files of several roots name",
            git_folder.display()
        )),
        "{found}"
    );
    // Its root removed, the checkout is the repository again.
    env.json(["root", "remove", "oss", forged.to_str().unwrap()]);
    assert_eq!(resolve(&env, &wt)["reason"], "project-file");
}

#[test]
fn a_separate_git_folders_checkout_that_is_no_root_leaves_its_worktrees_asked() {
    let env = TestEnv::new();
    let (shop, git_folder) = separate_shop(&env);
    env.json(["workspace", "create", "shop"]);
    env.project_file(&shop, r#"{"workspace": "shop"}"#);
    // The checkout is approved through a root around it, which is not the checkout.
    let src = env.root().join("src");
    env.json(["root", "add", "shop", src.to_str().unwrap()]);
    assert_eq!(resolve(&env, &shop)["reason"], "project-file");
    commit_all(&env, &shop);
    let wt = add_worktree(&env, &shop, "elsewhere/shop-feat");
    judged_as_today_in_a_worktree(&env, &wt);
    let found = findings(&env, &wt);
    assert!(
        found.contains(&format!(
            "a linked worktree of the repository {} (a separate git folder, which no root's own .git file names",
            git_folder.display()
        )),
        "{found}"
    );
}

/// A verified worktree whose repository no root approves: asked about, as an ordinary folder is.
fn judged_as_today_in_a_worktree(env: &TestEnv, wt: &Path) {
    let a = once_ordinary(env, wt);
    assert_eq!(
        (&a["workspace"], &a["reason"], &a["proposal"]),
        (&json!("default"), &json!("active"), &json!("shop")),
        "{a:#}"
    );
    assert!(prompt(env, wt).contains('?'), "asked about");
}

/// `berth-hook pre-tool` with Claude Code's `Write` payload, from a session in `cwd`.
fn claude_write(env: &TestEnv, cwd: &Path, file: &Path) -> String {
    let payload = json!({
        "session_id": "0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x"},
    })
    .to_string();
    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("pre-tool");
    env.run_with_stdin(cmd, payload.as_bytes())
        .success()
        .stdout()
}

/// `berth-hook pre-tool` with Codex's `apply_patch` payload adding `file`, from `cwd`.
fn codex_add(env: &TestEnv, cwd: &Path, file: &Path) -> String {
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch\n",
        file.display()
    );
    let payload = json!({
        "session_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e37",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "turn_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e38",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
    })
    .to_string();
    let mut cmd = env.command(bin("berth-hook"));
    cmd.args(["pre-tool", "--client", "codex"]);
    env.run_with_stdin(cmd, payload.as_bytes())
        .success()
        .stdout()
}

/// The decision and the reason of a Claude Code or Codex hook's output.
fn decision(out: &str) -> (String, String) {
    let d: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let h = &d["hookSpecificOutput"];
    (
        h["permissionDecision"].as_str().unwrap_or("").to_owned(),
        h["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    )
}

/// Another workspace's repository's worktree lies outside every root, yet belongs to that
/// workspace as the repository does: the guard objects as for the repository's root, naming
/// the worktree and its repository, for a file there and for one not made yet. A worktree of
/// the session's own repository is its own, even inside another workspace's root; a forged
/// worktree is an ordinary folder.
#[test]
fn a_write_into_another_workspaces_worktree_is_judged_as_its_repository() {
    let env = TestEnv::new();
    let shop = approved_shop(&env);
    let alpha = env.dir("src/alpha");
    env.git(&alpha, ["init", "-q"]);
    env.json_in(&alpha, ["workspace", "use", "alpha"]);
    commit_all(&env, &alpha);
    let feat = add_worktree(&env, &alpha, "elsewhere/alpha-feat");
    std::fs::write(feat.join("x.txt"), "x").unwrap();

    // As a reason spells a path: below the home as `~/...`.
    let shown = |p: &Path| {
        p.strip_prefix(env.home()).map_or_else(
            |_| p.display().to_string(),
            |r| format!("~/{}", r.display()),
        )
    };
    let objected = |out: String, want: &str| {
        let (got, reason) = decision(&out);
        assert_eq!(got, want, "{out}");
        for part in [
            "this session works in workspace shop",
            &format!("belongs to workspace alpha (root {})", shown(&alpha)),
            &format!(
                "{} is a git worktree of the repository {}",
                shown(&feat),
                shown(&alpha)
            ),
            &format!("berth root add shop {} --allow-overlap", shown(&alpha)),
        ] {
            assert!(reason.contains(part), "{part:?} missing from {reason:?}");
        }
    };
    // Twice each: the second is answered from memory, and must say the same.
    for _ in 0..2 {
        objected(claude_write(&env, &shop, &feat.join("x.txt")), "ask");
        objected(
            claude_write(&env, &shop, &feat.join("new/deeper/y.rs")),
            "ask",
        );
        objected(codex_add(&env, &shop, &feat.join("z.rs")), "deny");
    }

    // A copy of the worktree's `.git` elsewhere: git's back-link names alpha-feat, not it.
    let forged = env.dir("elsewhere/forged");
    std::fs::copy(feat.join(".git"), forged.join(".git")).unwrap();
    for _ in 0..2 {
        assert_eq!(claude_write(&env, &shop, &forged.join("x.txt")), "");
        assert_eq!(codex_add(&env, &shop, &forged.join("new/z.rs")), "");
    }

    // Another workspace's root holds both worktrees: shop's own is still its own, and alpha's
    // is still alpha's, not the wider root's.
    let own = add_worktree(&env, &shop, "elsewhere/shop-feat");
    env.json(["workspace", "create", "beta"]);
    env.json([
        "root",
        "add",
        "beta",
        env.root().join("elsewhere").to_str().unwrap(),
    ]);
    for _ in 0..2 {
        assert_eq!(claude_write(&env, &shop, &own.join("src/a.rs")), "");
        assert_eq!(codex_add(&env, &shop, &own.join("new/b.rs")), "");
        objected(claude_write(&env, &shop, &feat.join("x.txt")), "ask");
    }
    let (_, reason) = decision(&claude_write(&env, &shop, &forged.join("x.txt")));
    assert!(
        reason.contains("belongs to workspace beta") && !reason.contains("worktree"),
        "the forged worktree is an ordinary folder of beta's root: {reason}"
    );
}
