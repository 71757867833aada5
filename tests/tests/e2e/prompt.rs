//! `berth prompt` and `berth init`: the segment a shell prompt shows, and
//! the lines that put it there, run in the real shells
//! (docs/decisions/0027-the-prompt-segment.md).

use std::path::Path;
use std::time::Duration;

use berth_tests::{TestEnv, wait_until};

/// `berth prompt ARGS` in `dir`, which must succeed; its stdout.
fn prompt(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let mut cmd = env.berth_in(dir, ["prompt"]);
    cmd.args(args);
    let run = env.run(cmd).success();
    assert!(run.output.stderr.is_empty(), "{}", run.stderr());
    run.stdout()
}

/// A device with an approved project `shop-repo`, a clone proposing `shop`,
/// a git repository nothing assigns and a plain folder.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let shop = env.git_root(env.dir("shop-repo"));
    env.json_in(&shop, ["workspace", "use", "shop"]);
    let clone = env.git_root(env.dir("clone"));
    env.project_file(&clone, r#"{"workspace": "shop"}"#);
    env.git_root(env.dir("unassigned"));
    env.dir("plain");
    env
}

#[test]
fn a_folder_without_a_project_prints_nothing() {
    let env = world();
    let plain = env.dir("plain");
    assert_eq!(prompt(&env, &plain, &[]), "");
    assert_eq!(prompt(&env, &plain, &["--format", "[{workspace}] "]), "");
    // Nor with workspace.unassigned set: it is the same everywhere.
    env.json(["setting", "set", "workspace.unassigned", "shop"]);
    assert_eq!(prompt(&env, &plain, &[]), "");
    // A pin or a root assigns the folder, and so is shown.
    let mut cmd = env.berth_in(&plain, ["prompt"]);
    cmd.env("BERTH_WORKSPACE", "shop");
    assert_eq!(env.run(cmd).success().stdout(), "shop\n");
    env.json(["root", "add", "shop", plain.to_str().unwrap()]);
    assert_eq!(prompt(&env, &plain, &[]), "shop\n");
}

#[test]
fn an_approved_project_shows_its_workspace() {
    let env = world();
    let deep = env.dir("shop-repo/src/x");
    assert_eq!(prompt(&env, &deep, &[]), "shop\n");
    assert_eq!(
        prompt(
            &env,
            &deep,
            &["--format", "<{workspace}|{reason}|{marker}>"]
        ),
        "<shop|project-file|>\n"
    );
}

#[test]
fn a_proposal_is_shown_with_a_marker_and_assigns_nothing() {
    let env = world();
    let clone = env.dir("clone");
    assert_eq!(prompt(&env, &clone, &[]), "shop?\n");
    assert_eq!(
        prompt(
            &env,
            &clone,
            &["--format", "{workspace}{marker} {{{proposal}}}"]
        ),
        "default? {shop}\n"
    );
    let run = env
        .run(env.berth_in(&clone, ["--json", "prompt"]))
        .success();
    let j = run.json();
    assert_eq!(j["segment"], "shop?");
    assert_eq!(j["workspace"], "default");
    assert_eq!(j["proposal"], "shop");
    assert_eq!(j["marker"], "?");
    // A project nothing assigns is marked too: an agent there would ask.
    assert_eq!(prompt(&env, &env.dir("unassigned"), &[]), "default?\n");
    // Approving it clears the marker.
    env.json_in(&clone, ["workspace", "use", "shop"]);
    assert_eq!(prompt(&env, &clone, &[]), "shop\n");
}

#[test]
fn a_bad_format_is_a_usage_error_with_nothing_on_stdout() {
    let env = world();
    for bad in ["{workspaec}", "{name", "{}"] {
        let run = env
            .run_in(env.dir("clone"), ["prompt", "--format", bad])
            .failure(2)
            .stderr_has(&["placeholder", "{{"]);
        assert!(run.output.stdout.is_empty());
    }
}

#[test]
fn with_no_daemon_running_it_starts_one() {
    let env = world();
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(Duration::from_secs(10));
    assert_eq!(prompt(&env, &env.dir("shop-repo"), &[]), "shop\n");
    wait_until(Duration::from_secs(10), || {
        (!env.daemon_pids().is_empty())
            .then_some(())
            .ok_or("no daemon")
    })
    .unwrap();
}

/// Runs `script` in `shell` (`-c`) from `dir` with the test's environment.
/// Tests of a shell this machine lacks are ignored, and counted so (tests/build.rs).
// Unix shells.
#[cfg(unix)]
fn in_shell(env: &TestEnv, shell: &str, args: &[&str], dir: &Path) -> String {
    let mut cmd = env.command(shell);
    cmd.args(args).current_dir(dir);
    env.run(cmd).success().stdout()
}

#[cfg(unix)]
#[test]
fn bash_shows_the_segment_before_its_prompt_once_and_keeps_the_status() {
    let env = world();
    let berth = berth_tests::bin("berth");
    let script = format!(
        r#"PS1='> '; eval "$('{b}' init bash)"; eval "$('{b}' init bash)"; false; printf '%s\n' "${{PS1@P}}""#,
        b = berth.display()
    );
    let clone = env.dir("clone");
    let out = in_shell(&env, "bash", &["--norc", "-c", &script], &clone);
    assert_eq!(out, "(shop?) > \n");
    let out = in_shell(&env, "bash", &["--norc", "-c", &script], &env.dir("plain"));
    assert_eq!(out, "> \n");
    // The function hands the last command's status on to the rest of the prompt.
    let status = format!(
        r#"eval "$('{b}' init bash)"; false; __berth_prompt >/dev/null; echo $?"#,
        b = berth.display()
    );
    let out = in_shell(&env, "bash", &["--norc", "-c", &status], &clone);
    assert_eq!(out, "1\n");
}

#[cfg(unix)]
#[test]
#[cfg_attr(not(berth_has_zsh), ignore = "zsh is not installed")]
fn zsh_shows_the_segment_before_its_prompt_once() {
    let env = world();
    let berth = berth_tests::bin("berth");
    let script = format!(
        r#"PROMPT='%~> '; eval "$('{b}' init zsh)"; eval "$('{b}' init zsh)"; __berth_prompt_precmd; print -rP -- "$PROMPT"; print -r -- $precmd_functions"#,
        b = berth.display()
    );
    let clone = env.dir("clone");
    let out = in_shell(&env, "zsh", &["-f", "-c", &script], &clone);
    let shown = clone.display(); // outside the home: no `~`
    assert_eq!(out, format!("(shop?) {shown}> \n__berth_prompt_precmd\n"));
}

#[cfg(unix)]
#[test]
#[cfg_attr(not(berth_has_fish), ignore = "fish is not installed")]
fn fish_shows_the_segment_before_its_prompt_and_keeps_the_status() {
    let env = world();
    let berth = berth_tests::bin("berth");
    let script = format!(
        r#"function fish_prompt; echo "[$status]> "; end; '{b}' init fish | source; '{b}' init fish | source; false; fish_prompt"#,
        b = berth.display()
    );
    let out = in_shell(
        &env,
        "fish",
        &["--no-config", "-c", &script],
        &env.dir("clone"),
    );
    assert_eq!(out, "(shop?) [1]> \n");
}
