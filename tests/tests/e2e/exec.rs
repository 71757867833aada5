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

#[test]
fn a_placeholder_in_a_word_a_shell_runs_as_code_runs_nothing() {
    let env = TestEnv::new();
    let marker = env.root().join("ran");
    let m = marker.to_str().unwrap();
    let touch_then = |code: &str| format!("touch '{m}'; {code}");
    // Each form is refused before anything runs, whether or not the shell
    // is installed here.
    let forms: Vec<Vec<String>> = [
        &["sh", "-c", "@echo {project}"][..],
        &["bash", "-lc", "@echo {home}"],
        &["/bin/sh", "-ec", "@echo {workspace}"],
        &["env", "FOO=1", "dash", "-c", "@echo {project}"],
        &["bash", "-o", "pipefail", "-c", "@cd {home}"],
        &["zsh", "-c", "@echo {project}"],
        &["ksh", "-c", "@echo {project}"],
        &["fish", "--command", "@echo {project}"],
        &["timeout", "5", "sh", "-c", "@echo {project}"],
        &["env", "-S", "@sh -c 'echo {project}'"],
        &["cmd", "/c", "@echo", "{project}"],
        &["powershell", "-Command", "@echo {project}"],
        &["pwsh", "-c", "@echo {project}"],
        &["python3", "-c", "@print('{project}')"],
        &["ssh", "localhost", "@echo {project}"],
    ]
    .iter()
    .map(|form| {
        form.iter()
            .map(|w| match w.strip_prefix('@') {
                Some(code) => touch_then(code),
                None => w.to_string(),
            })
            .collect()
    })
    .collect();
    for form in forms {
        let mut args = vec![
            "exec".to_string(),
            "-w".into(),
            "default".into(),
            "--".into(),
        ];
        args.extend(form.iter().cloned());
        let run = ran_nothing(env.run_berth(&args), 2, &marker);
        let text = run.stderr();
        assert!(
            text.contains("is code that") && text.contains("Placeholders fill data only"),
            "{form:?}: {text}"
        );
        // ssh's remote shell does not see the variables; every other hint names one.
        if form[0] != "ssh" {
            assert!(text.contains("BERTH_"), "{form:?}: {text}");
        }
    }
    assert!(
        env.daemon_pids().is_empty(),
        "a template is refused before the daemon is asked"
    );
}

// Runs sh, and the folder's name holds `;`, `$` and `#`.
#[cfg(unix)]
#[test]
fn a_folder_named_like_a_command_is_never_run_and_berth_project_carries_it_literally() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "shop"]);
    let code = env.dir("code");
    env.json(["root", "add", "shop", code.to_str().unwrap()]);
    // A name a repository can choose for a folder of its own.
    let project = env.git_root(env.dir("code/x;touch $HOME/INJECTED;#"));
    let injected = env.home().join("INJECTED");
    let run = env.run_in(
        &project,
        ["exec", "--", "sh", "-c", "echo starting in {project}"],
    );
    let run = ran_nothing(run, 2, &injected).stderr_has(&[
        "echo starting in {project}",
        "sh -c",
        "\"$BERTH_PROJECT\"",
    ]);
    assert!(!injected.exists(), "{}", run.stderr());
    // The safe forms: the variable, or the value as an argument of its own.
    for args in [
        &["sh", "-c", "echo starting in \"$BERTH_PROJECT\""][..],
        &["sh", "-c", "echo starting in \"$1\"", "sh", "{project}"],
    ] {
        let mut all = vec!["exec", "--"];
        all.extend_from_slice(args);
        let run = env.run_in(&project, all).success();
        assert_eq!(
            run.stdout(),
            format!("starting in {}\n", project.display()),
            "{args:?}: {}",
            run.stderr()
        );
        assert!(!injected.exists(), "{args:?}");
    }
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

// Runs sh.
#[cfg(unix)]
#[test]
fn the_managed_home_exists_before_the_command_starts() {
    let env = TestEnv::new();
    // `workspace use` makes the workspace; its home is made on first use.
    let project = env.git_root(env.dir("shop-repo"));
    env.json_in(&project, ["workspace", "use", "shop"]);
    let home = env.managed_home("shop");
    assert!(!home.exists(), "no file tool has run yet");
    let run = env
        .run_in(
            &project,
            [
                "exec",
                "--",
                "sh",
                "-c",
                r#"test -d "$BERTH_HOME" && test -d "$1" && printf '%s' "$1""#,
                "x",
                "{home}",
            ],
        )
        .success();
    assert_eq!(run.stdout(), home.display().to_string(), "{}", run.stderr());
    assert!(
        !home.symlink_metadata().unwrap().file_type().is_symlink(),
        "a real folder"
    );
}

// Unix modes.
#[cfg(unix)]
#[test]
fn berth_exec_makes_the_home_as_the_file_tools_make_it() {
    use berth_tests::bin;
    use berth_tests::mcp::McpSession;
    use std::os::unix::fs::PermissionsExt;

    let env = TestEnv::new();
    let notes = env.git_root(env.dir("notes-repo"));
    env.json_in(&notes, ["workspace", "use", "notes"]);
    let shop = env.git_root(env.dir("shop-repo"));
    env.json_in(&shop, ["workspace", "use", "shop"]);
    // The file tools make one home on their first write...
    let mut cmd = env.command(bin("berth-mcp"));
    cmd.current_dir(&notes);
    let (mut shim, _) = McpSession::start(cmd);
    let wrote = shim.call(r#"{"name":"write","arguments":{"path":"./a.md","content":"a"}}"#);
    assert!(env.managed_home("notes").join("a.md").is_file(), "{wrote}");
    shim.exit();
    // ...and berth exec the other, before its command starts.
    assert!(!env.managed_home("shop").exists());
    let _ = env.run_in(&shop, ["exec", "--", "true"]).success();
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode();
    let (made, tools) = (env.managed_home("shop"), env.managed_home("notes"));
    assert!(made.is_dir(), "berth exec made no home");
    assert_eq!(format!("{:o}", mode(&made)), format!("{:o}", mode(&tools)));
}

#[test]
fn a_missing_local_home_stays_an_error_with_the_fix() {
    let env = TestEnv::new();
    let home = env.dir("notes/shop");
    env.json([
        "workspace",
        "create",
        "shop",
        "--home",
        home.to_str().unwrap(),
    ]);
    let project = env.git_root(env.dir("shop-repo"));
    env.json_in(&project, ["workspace", "use", "shop"]);
    std::fs::remove_dir(&home).unwrap();
    let marker = env.root().join("ran");
    let mut cmd = env.berth_in(&project, ["exec", "--"]);
    cmd.args(touch(&marker));
    let _ = ran_nothing(env.run(cmd), 1, &marker).stderr_has(&[
        home.to_str().unwrap(),
        "does not exist",
        "put the folder back",
        "berth workspace delete shop",
        "create it again with --home",
    ]);
    // A local home is the user's folder: berth never makes one.
    assert!(!home.exists(), "berth made a local home");
}

/// Nothing at all is inside `dir`.
#[cfg(unix)]
fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

// Unix symlinks.
#[cfg(unix)]
#[test]
fn a_link_or_a_file_in_a_managed_homes_place_is_refused_and_nothing_is_made_elsewhere() {
    use std::os::unix::fs::symlink;

    let env = TestEnv::new();
    for name in ["dangling", "away", "file", "linked"] {
        env.json(["workspace", "create", name]);
    }
    let elsewhere = env.dir("elsewhere");
    let homes = env.data_dir().join("workspaces");
    let marker = env.root().join("ran");
    let refused = |name: &str, needles: &[&str]| {
        let mut args = vec!["exec".to_string(), "-w".into(), name.into(), "--".into()];
        args.extend(touch(&marker));
        let _ = ran_nothing(env.run_berth(&args), 1, &marker).stderr_has(needles);
        assert!(
            empty(&elsewhere),
            "{name}: berth made something outside its folders"
        );
    };
    // `workspace create` made their homes; they are gone again.
    std::fs::remove_dir_all(&homes).unwrap();
    // The folder that holds the managed homes is itself a link elsewhere.
    symlink(&elsewhere, &homes).unwrap();
    refused("linked", &["symlink", homes.to_str().unwrap()]);
    // The file tools refuse it the same way, and make nothing there either.
    let (mut shim, _) =
        berth_tests::mcp::McpSession::start(env.command(berth_tests::bin("berth-mcp")));
    let wrote = shim.call(r#"{"name":"write","arguments":{"path":"linked/a.md","content":"a"}}"#);
    assert!(wrote.contains("symlink"), "{wrote}");
    assert!(
        empty(&elsewhere),
        "the write made something outside: {wrote}"
    );
    shim.exit();
    std::fs::remove_file(&homes).unwrap();
    std::fs::create_dir(&homes).unwrap();

    // A home's own name is a link: to a folder that does not exist, or to one that does.
    symlink(elsewhere.join("target"), homes.join("dangling")).unwrap();
    refused("dangling", &["symlink", "dangling"]);
    symlink(&elsewhere, homes.join("away")).unwrap();
    refused("away", &["symlink", "away"]);
    // A file in a home's place.
    std::fs::write(homes.join("file"), "mine").unwrap();
    refused("file", &["not a folder", "file"]);
    // What was there stays as it was.
    assert_eq!(std::fs::read_to_string(homes.join("file")).unwrap(), "mine");
    for link in ["dangling", "away"] {
        assert!(
            homes
                .join(link)
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
