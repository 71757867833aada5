//! `berth exec`: one resolution as an agent session would make it, then the
//! command in the same process with the answer in its environment and
//! arguments (docs/decisions/0026-berth-exec.md). On every failure nothing
//! runs and stdout stays empty: it may be an MCP client's pipe.

use std::path::Path;
#[cfg(unix)]
use std::time::Duration;

#[cfg(unix)]
use berth_tests::wait_until;
use berth_tests::{Run, TestEnv};

/// Asserts that a failed `berth exec` ran nothing and printed nothing on stdout.
fn ran_nothing(run: Run, code: i32, marker: &Path) -> Run {
    let run = run.failure(code);
    if !run.output.stdout.is_empty() {
        run.fail("stdout must stay empty when berth exec fails");
    }
    if marker.exists() {
        run.fail("the command ran although berth exec failed");
    }
    run
}

/// A command that leaves `marker` behind when it runs.
fn touch(marker: &Path) -> Vec<String> {
    vec!["touch".into(), marker.to_str().unwrap().into()]
}

#[test]
fn no_command_is_a_usage_error() {
    let env = TestEnv::new();
    for args in [&["exec"][..], &["exec", "--"], &["exec", "-w", "default"]] {
        let run = env.run_berth(args).failure(2);
        assert!(run.output.stdout.is_empty(), "{}", run.stdout());
    }
}

#[test]
fn json_is_a_usage_error_where_stdout_is_not_berths() {
    let env = TestEnv::new();
    let marker = env.root().join("ran");
    let mut args = vec![
        "--json".to_string(),
        "exec".into(),
        "-w".into(),
        "default".into(),
    ];
    args.push("--".into());
    args.extend(touch(&marker));
    let _ = ran_nothing(env.run_berth(&args), 2, &marker).stderr_has(&["--json"]);
    let run = env.run_berth(["--json", "init", "bash"]).failure(2);
    assert!(run.output.stdout.is_empty(), "{}", run.stdout());
}

#[test]
fn a_missing_command_exits_127_and_one_that_cannot_run_126() {
    let env = TestEnv::new();
    let run = env
        .run_berth(["exec", "-w", "default", "--", "no-such-program-xyz", "a"])
        .failure(127)
        .stderr_has(&["no-such-program-xyz", "no such command on PATH"]);
    assert!(run.output.stdout.is_empty());
    let gone = env.root().join("gone").join("prog");
    let _ = env
        .run_berth(["exec", "-w", "default", "--", gone.to_str().unwrap()])
        .failure(127)
        .stderr_has(&["no such file"]);
    // A folder and a file without the execute bit cannot run. (The execute
    // bit is Unix's.)
    #[cfg(unix)]
    {
        let plain = env.root().join("plain.sh");
        std::fs::write(&plain, "#!/bin/sh\necho hi\n").unwrap();
        for prog in [env.root().to_path_buf(), plain] {
            let run = env
                .run_berth(["exec", "-w", "default", "--", prog.to_str().unwrap()])
                .failure(126)
                .stderr_has(&["cannot run"]);
            assert!(run.output.stdout.is_empty());
        }
    }
}

#[test]
fn an_unknown_pin_runs_nothing() {
    let env = TestEnv::new();
    let marker = env.root().join("ran");
    let mut args = vec![
        "exec".to_string(),
        "-w".into(),
        "nosuch".into(),
        "--".into(),
    ];
    args.extend(touch(&marker));
    let _ = ran_nothing(env.run_berth(&args), 1, &marker).stderr_has(&["nosuch", "default"]);
    // The same pin through the environment.
    let mut cmd = env.berth(["exec", "--"]);
    cmd.args(touch(&marker)).env("BERTH_WORKSPACE", "nosuch");
    let _ = ran_nothing(env.run(cmd), 1, &marker).stderr_has(&["nosuch"]);
}

#[test]
fn an_unknown_or_unclosed_placeholder_runs_nothing() {
    let env = TestEnv::new();
    let marker = env.root().join("ran");
    for bad in ["{workspaces}", "{\"a\": 1}", "x{home", "{}"] {
        let mut args = vec!["exec", "-w", "default", "--", "sh", "-c", "touch \"$0\""];
        let m = marker.to_str().unwrap();
        args.extend([m, bad]);
        let _ = ran_nothing(env.run_berth(&args), 2, &marker).stderr_has(&["placeholder", "{{"]);
    }
    assert!(
        env.daemon_pids().is_empty(),
        "a bad template is refused before the daemon is asked"
    );
}

// Runs printf, a Unix program.
#[cfg(unix)]
#[test]
fn placeholders_with_odd_characters_are_filled_word_by_word() {
    let env = TestEnv::new();
    let home = env.dir("my notes/é 😀 $x");
    env.json([
        "workspace",
        "create",
        "a-1-b",
        "--home",
        home.to_str().unwrap(),
    ]);
    let project = env.git_root(env.dir("src/it's a ü repo"));
    env.json_in(&project, ["workspace", "use", "a-1-b"]);
    let run = env
        .run_in(
            &project,
            [
                "exec",
                "--",
                "printf",
                "[%s]\\n",
                "{workspace}",
                "{home}",
                "{project}",
                "--p={workspace}/{workspace}",
                "{{workspace}}",
                "{{{workspace}}}",
                "a}b",
                "{{",
                "}}",
                "two words",
                "ünï {workspace}",
                "",
            ],
        )
        .success();
    let want = [
        "a-1-b".to_string(),
        home.display().to_string(),
        project.display().to_string(),
        "--p=a-1-b/a-1-b".into(),
        "{workspace}".into(),
        "{a-1-b}".into(),
        "a}b".into(),
        "{".into(),
        "}".into(),
        "two words".into(),
        "ünï a-1-b".into(),
        "".into(),
    ];
    let got: Vec<String> = want.iter().map(|w| format!("[{w}]")).collect();
    assert_eq!(run.stdout(), got.join("\n") + "\n", "{}", run.stderr());
}

// Runs sh.
#[cfg(unix)]
#[test]
fn the_answer_reaches_the_commands_environment() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let project = env.git_root(env.dir("shop-repo"));
    env.json_in(&project, ["workspace", "use", "shop"]);
    let show = r#"printf '%s|%s|%s|%s|%s' "$BERTH_WORKSPACE" "$BERTH_HOME" "$BERTH_PROJECT" "$BERTH_REASON" "$PWD""#;
    let sub = env.dir("shop-repo/deep/er");
    let run = env.run_in(&sub, ["exec", "--", "sh", "-c", show]).success();
    let home = env.managed_home("shop");
    assert_eq!(
        run.stdout(),
        format!(
            "shop|{}|{}|project-file|{}",
            home.display(),
            project.display(),
            sub.display()
        )
    );
    // --cwd resolves another folder; the command still starts here.
    let elsewhere = env.dir("elsewhere");
    let run = env
        .run_in(
            &elsewhere,
            [
                "exec",
                "--cwd",
                sub.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                show,
            ],
        )
        .success();
    assert!(
        run.stdout()
            .starts_with(&format!("shop|{}|", home.display())),
        "{}",
        run.stdout()
    );
    assert!(run.stdout().ends_with(&format!("|{}", elsewhere.display())));
    // Claude Code's CLAUDE_PROJECT_DIR, as berth-mcp reads it.
    let mut cmd = env.berth_in(&elsewhere, ["exec", "--", "sh", "-c", show]);
    cmd.env("CLAUDE_PROJECT_DIR", &project);
    assert!(env.run(cmd).success().stdout().starts_with("shop|"));
    // The pin makes any berth client under the command agree.
    let run = env
        .run_in(&sub, ["exec", "--", "berth", "--json", "resolve"])
        .success();
    assert_eq!(run.json()["reason"], "env");
    assert_eq!(run.json()["workspace"], "shop");
}

// Runs sh.
#[cfg(unix)]
#[test]
fn the_unassigned_setting_answers_where_nothing_else_does() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "inbox"]);
    env.json(["setting", "set", "workspace.unassigned", "inbox"]);
    let plain = env.dir("plain");
    let run = env
        .run_in(
            &plain,
            [
                "exec",
                "--",
                "sh",
                "-c",
                r#"printf '%s %s [%s]' "$BERTH_WORKSPACE" "$BERTH_REASON" "$BERTH_PROJECT""#,
            ],
        )
        .success();
    assert_eq!(run.stdout(), "inbox unassigned-setting []");
}

#[test]
fn only_the_active_workspace_is_no_answer() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let marker = env.root().join("ran");
    // A folder without a project.
    let plain = env.dir("plain");
    let mut cmd = env.berth_in(&plain, ["exec", "--"]);
    cmd.args(touch(&marker));
    let _ = ran_nothing(env.run(cmd), 1, &marker).stderr_has(&[
        "nothing chose a workspace",
        "berth setting set workspace.unassigned",
        "--workspace NAME",
    ]);
    // A cloned repository whose file proposes a workspace: it redirects nothing.
    let clone = env.git_root(env.dir("clone"));
    env.project_file(&clone, r#"{"workspace": "shop"}"#);
    let mut cmd = env.berth_in(&clone, ["exec", "--"]);
    cmd.args(touch(&marker));
    let _ = ran_nothing(env.run(cmd), 1, &marker).stderr_has(&["berth workspace use shop"]);
}

// SIGPIPE, and parents read from /proc.
#[cfg(unix)]
#[test]
fn the_command_gets_default_signals_and_never_the_daemon_as_a_child() {
    let env = TestEnv::new();
    // berth ignores SIGPIPE for itself; the command starts with the default.
    let run = env
        .run_berth([
            "exec",
            "-w",
            "default",
            "--",
            "grep",
            "SigIgn",
            "/proc/self/status",
        ])
        .success();
    let mask = run.stdout().trim().rsplit('\t').next().unwrap().to_string();
    let ignored = u64::from_str_radix(mask.trim(), 16).unwrap();
    assert_eq!(ignored & (1 << (libc::SIGPIPE - 1)), 0, "SigIgn {mask}");

    // With no daemon running, berth exec starts one that is not the
    // command's child (a shell's `wait` would wait for it).
    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(Duration::from_secs(10));
    let mut child = env
        .berth(["exec", "-w", "default", "--", "sleep", "30"])
        .spawn()
        .unwrap();
    let daemon = wait_until(Duration::from_secs(20), || {
        env.daemon_pids().first().copied().ok_or("no daemon yet")
    })
    .unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{daemon}/stat")).unwrap();
    let ppid: u32 = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_ne!(ppid, child.id(), "berthd is the command's child");
}
