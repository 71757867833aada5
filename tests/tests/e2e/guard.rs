//! The native-tool guard: `berth-hook pre-tool` with each client's exact payload against a
//! real daemon. A write into another workspace's root or home is put to the person where the
//! client can ask and refused where it cannot; writes into the session's own places and into
//! folders no workspace claims pass with nothing printed; every failure allows the call,
//! prints nothing and leaves a line in the hook's log (docs/reference.md, "The native-tool
//! guard").

use std::path::{Path, PathBuf};

use berth_tests::{Run, TestEnv, bin};
use serde_json::{Value, json};

/// Two approved projects: `shop` (where the session works) and `alpha`.
struct World {
    env: TestEnv,
    shop: PathBuf,
    alpha: PathBuf,
}

fn world() -> World {
    let env = TestEnv::new();
    let shop = env.git_root(env.dir("src/shop"));
    let alpha = env.git_root(env.dir("src/alpha"));
    env.json_in(&shop, ["workspace", "use", "shop"]);
    env.json_in(&alpha, ["workspace", "use", "alpha"]);
    World { env, shop, alpha }
}

/// `berth-hook pre-tool [ARGS]` with `payload` on stdin; it always exits 0.
fn pre_tool(env: &TestEnv, args: &[&str], payload: &[u8]) -> Run {
    let mut cmd = env.command(bin("berth-hook"));
    cmd.arg("pre-tool").args(args);
    env.run_with_stdin(cmd, payload).success()
}

fn hook_log(env: &TestEnv) -> String {
    std::fs::read_to_string(
        env.root()
            .join("state")
            .join("berth")
            .join("berth-hook.log"),
    )
    .unwrap_or_default()
}

/// The one JSON document a run printed.
fn doc(run: &Run) -> Value {
    serde_json::from_str(&run.stdout())
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {:?}", run.stdout()))
}

fn silent(run: &Run, why: &str) {
    assert_eq!(run.stdout(), "", "{why}: expected no objection");
}

/// Claude Code 2.1.197's `PreToolUse` payload for `Write`.
fn claude_write(cwd: &Path, file: &str) -> Vec<u8> {
    json!({
        "session_id": "0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5",
        "transcript_path": "/home/ada/.claude/projects/-shop/0b1c4e2a.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "fn main() {}\n"},
    })
    .to_string()
    .into_bytes()
}

/// Claude Code 2.1.197's `PreToolUse` payload for `Edit`.
fn claude_edit(cwd: &Path, file: &str) -> Vec<u8> {
    json!({
        "session_id": "0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5",
        "transcript_path": "/home/ada/.claude/projects/-shop/0b1c4e2a.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": file, "old_string": "a", "new_string": "b", "replace_all": false},
    })
    .to_string()
    .into_bytes()
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

/// The reason names the session's workspace, the other one and its root, and the way out.
fn names_alpha(reason: &str, w: &World) {
    let root = w
        .alpha
        .strip_prefix(w.env.home())
        .map_or_else(|_| text(&w.alpha), |rest| format!("~/{}", rest.display()));
    for part in [
        "this session works in workspace shop",
        "belongs to workspace alpha",
        &format!("(root {root})"),
        &format!("berth root add shop {root} --allow-overlap"),
        "berth setting set guard.cross_workspace",
    ] {
        assert!(reason.contains(part), "{part:?} missing from {reason:?}");
    }
}

fn claude_decision(run: &Run) -> (String, String) {
    let d = doc(run);
    let out = &d["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse", "{d}");
    let reason = out["permissionDecisionReason"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_eq!(
        d["systemMessage"].as_str(),
        Some(reason.as_str()),
        "the person sees the reason: {d}"
    );
    let decision = out["permissionDecision"].as_str().unwrap_or("").to_string();
    // Claude Code's question shows no hook's reason: the terminal shows it as a notification.
    let notification = d["terminalSequence"].as_str().unwrap_or("");
    if decision == "ask" {
        assert!(
            notification.starts_with('\u{1b}') && notification.contains(reason.as_str()),
            "the terminal is told the reason: {d}"
        );
    } else {
        assert_eq!(notification, "", "{d}");
    }
    (decision, reason)
}

#[test]
fn claude_codes_write_and_edit_into_another_workspaces_root_are_asked_naming_it() {
    let w = world();
    let target = text(&w.alpha.join("lib.rs"));
    for payload in [
        claude_write(&w.shop, &target),
        claude_edit(&w.shop, &target),
    ] {
        let run = pre_tool(&w.env, &[], &payload);
        let (decision, reason) = claude_decision(&run);
        assert_eq!(decision, "ask");
        names_alpha(&reason, &w);
        assert!(reason.contains("lib.rs"), "{reason}");
    }
    assert!(
        hook_log(&w.env).contains("a write into another workspace's folder"),
        "{}",
        hook_log(&w.env)
    );
}

#[test]
fn claude_codes_writes_into_its_own_project_its_home_and_tmp_pass() {
    let w = world();
    let home = w.env.managed_home("shop");
    let elsewhere = w.env.dir("tmp/loose");
    for (file, why) in [
        (w.shop.join("src/new.rs"), "its own project"),
        (home.join("notes.md"), "its own home"),
        (elsewhere.join("x.txt"), "a folder no workspace claims"),
        (PathBuf::from("/tmp/berth-guard-e2e-x"), "/tmp"),
    ] {
        silent(
            &pre_tool(&w.env, &[], &claude_write(&w.shop, &text(&file))),
            why,
        );
        silent(
            &pre_tool(&w.env, &[], &claude_edit(&w.shop, &text(&file))),
            why,
        );
    }
}

#[test]
fn another_workspaces_home_is_guarded_too() {
    let w = world();
    let target = w.env.managed_home("alpha").join("notes.md");
    let run = pre_tool(&w.env, &[], &claude_write(&w.shop, &text(&target)));
    let (decision, reason) = claude_decision(&run);
    assert_eq!(decision, "ask");
    assert!(
        reason.contains("belongs to workspace alpha (home "),
        "{reason}"
    );
}

#[test]
fn the_setting_decides_deny_warn_and_off() {
    let w = world();
    let payload = claude_write(&w.shop, &text(&w.alpha.join("lib.rs")));

    w.env
        .json(["setting", "set", "guard.cross_workspace", "deny"]);
    let (decision, reason) = claude_decision(&pre_tool(&w.env, &[], &payload));
    assert_eq!(decision, "deny");
    names_alpha(&reason, &w);

    w.env
        .json(["setting", "set", "guard.cross_workspace", "warn"]);
    let d = doc(&pre_tool(&w.env, &[], &payload));
    let out = d["hookSpecificOutput"]
        .as_object()
        .expect("hookSpecificOutput");
    assert!(out.get("permissionDecision").is_none(), "warn allows: {d}");
    names_alpha(out["additionalContext"].as_str().unwrap(), &w);

    w.env
        .json(["setting", "set", "guard.cross_workspace", "off"]);
    silent(&pre_tool(&w.env, &[], &payload), "off");

    w.env.json(["setting", "unset", "guard.cross_workspace"]);
    assert_eq!(claude_decision(&pre_tool(&w.env, &[], &payload)).0, "ask");

    let bad = w
        .env
        .run_berth(["setting", "set", "guard.cross_workspace", "maybe"])
        .failure(1);
    assert!(bad.stderr().contains("ask"), "{}", bad.stderr());
}

#[test]
fn a_write_through_a_relative_path_or_a_link_into_another_workspaces_root_is_asked() {
    let w = world();
    let run = pre_tool(&w.env, &[], &claude_write(&w.shop, "../alpha/new/deep.rs"));
    assert_eq!(claude_decision(&run).0, "ask");
    #[cfg(unix)]
    {
        // A folder link inside the session's project that leads into alpha's root.
        std::os::unix::fs::symlink(&w.alpha, w.shop.join("vendored")).unwrap();
        let run = pre_tool(&w.env, &[], &claude_write(&w.shop, "vendored/lib.rs"));
        let (decision, reason) = claude_decision(&run);
        assert_eq!(decision, "ask");
        assert!(
            reason.contains("lib.rs belongs to workspace alpha"),
            "{reason}"
        );
        // A file link in the project to a file of alpha's.
        std::fs::write(w.alpha.join("real.rs"), "").unwrap();
        std::os::unix::fs::symlink(w.alpha.join("real.rs"), w.shop.join("linked.rs")).unwrap();
        let run = pre_tool(
            &w.env,
            &[],
            &claude_edit(&w.shop, &text(&w.shop.join("linked.rs"))),
        );
        assert_eq!(claude_decision(&run).0, "ask");
    }
}

#[test]
fn a_claude_code_session_that_cannot_ask_is_refused_instead() {
    let w = world();
    let mut v: Value =
        serde_json::from_slice(&claude_write(&w.shop, &text(&w.alpha.join("a.rs")))).unwrap();
    v["permission_mode"] = json!("bypassPermissions");
    let run = pre_tool(&w.env, &[], v.to_string().as_bytes());
    assert_eq!(claude_decision(&run).0, "deny");
}

#[test]
fn reads_and_shell_commands_are_not_judged() {
    let w = world();
    let target = text(&w.alpha.join("lib.rs"));
    for (tool, input) in [
        ("Read", json!({"file_path": target})),
        ("Bash", json!({"command": format!("echo x > {target}")})),
        ("Grep", json!({"pattern": "x", "path": target})),
    ] {
        let payload = json!({
            "session_id": "s", "cwd": w.shop, "hook_event_name": "PreToolUse",
            "permission_mode": "default", "tool_name": tool, "tool_input": input,
        });
        silent(&pre_tool(&w.env, &[], payload.to_string().as_bytes()), tool);
    }
}

/// Codex 0.171's `PreToolUse` payload for `apply_patch`.
fn codex_patch(cwd: &Path, patch: &str) -> Vec<u8> {
    json!({
        "session_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e37",
        "transcript_path": null,
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.5-codex",
        "turn_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e38",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
    })
    .to_string()
    .into_bytes()
}

fn codex_denial(run: &Run) -> String {
    let d = doc(run);
    assert_eq!(
        d,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": d["hookSpecificOutput"]["permissionDecisionReason"],
        }}),
        "Codex gets a denial, never ask"
    );
    d["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_codex_patch_touching_another_workspaces_root_is_denied_naming_that_file() {
    let w = world();
    let patch = format!(
        "*** Begin Patch\n*** Add File: src/own.rs\n+pub fn own() {{}}\n*** Update File: {}\n@@ fn a()\n-old\n+new\n*** End Patch\n",
        w.alpha.join("theirs.rs").display()
    );
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_patch(&w.shop, &patch),
    );
    let reason = codex_denial(&run);
    names_alpha(&reason, &w);
    assert!(reason.contains("theirs.rs belongs"), "{reason}");
    assert!(!reason.contains("own.rs"), "{reason}");

    // Detected as Codex's without the flag too (its turn_id), and answered the same way.
    let run = pre_tool(&w.env, &[], &codex_patch(&w.shop, &patch));
    codex_denial(&run);
}

#[test]
fn a_codex_move_from_its_own_project_into_another_workspaces_root_is_denied() {
    let w = world();
    let patch = format!(
        "*** Begin Patch\n*** Update File: src/lib.rs\n*** Move to: {}\n@@\n-a\n+b\n*** End Patch\n",
        w.alpha.join("moved.rs").display()
    );
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_patch(&w.shop, &patch),
    );
    assert!(codex_denial(&run).contains("moved.rs belongs to workspace alpha"));
    // Within its own project: no objection.
    let own = "*** Begin Patch\n*** Update File: src/lib.rs\n*** Move to: src/lib2.rs\n*** Delete File: old.rs\n*** End Patch\n";
    silent(
        &pre_tool(&w.env, &["--client", "codex"], &codex_patch(&w.shop, own)),
        "a move inside its own project",
    );
}

#[test]
fn a_codex_patch_that_does_not_parse_is_allowed_and_logged() {
    let w = world();
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_patch(&w.shop, "*** Update File: /anywhere\n"),
    );
    silent(&run, "an unparsable patch");
    assert!(
        hook_log(&w.env).contains("no \\\"*** Begin Patch\\\" line")
            || hook_log(&w.env).contains("*** Begin Patch"),
        "{}",
        hook_log(&w.env)
    );
}

/// Copilot CLI 1.0.102's `preToolUse` payload (camelCase).
fn copilot_camel(cwd: &Path, tool: &str, path: &str) -> Vec<u8> {
    let args = if tool == "create" {
        json!({"path": path, "file_text": "x"})
    } else {
        json!({"path": path, "old_str": "a", "new_str": "b"})
    };
    json!({
        "sessionId": "714bfd7c-a8ef-4bde-8bea-ec39ceec45e8",
        "timestamp": 1_764_756_000_000u64,
        "cwd": cwd,
        "toolName": tool,
        "toolArgs": args,
    })
    .to_string()
    .into_bytes()
}

/// The Copilot CLI registered under `PreToolUse`: a Claude-like payload with its own argument
/// names.
fn copilot_pascal(cwd: &Path, path: &str) -> Vec<u8> {
    json!({
        "session_id": "714bfd7c-a8ef-4bde-8bea-ec39ceec45e8",
        "timestamp": 1_764_756_000_000u64,
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": "edit",
        "tool_input": {"path": path, "old_str": "a", "new_str": "b"},
    })
    .to_string()
    .into_bytes()
}

/// Copilot's decision is the flat form, never wrapped in `hookSpecificOutput` (which it
/// ignores, writing the file).
fn copilot_denial(run: &Run, w: &World) {
    let d = doc(run);
    let reason = d["permissionDecisionReason"].as_str().unwrap_or("");
    assert_eq!(
        d,
        json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
    );
    names_alpha(reason, w);
}

#[test]
fn copilot_cli_payloads_in_both_registrations_are_denied_in_the_flat_form() {
    let w = world();
    let other = text(&w.alpha.join("c.rs"));
    let own = text(&w.shop.join("c.rs"));
    for args in [&["--client", "copilot-cli"][..], &[]] {
        for tool in ["create", "edit"] {
            copilot_denial(
                &pre_tool(&w.env, args, &copilot_camel(&w.shop, tool, &other)),
                &w,
            );
            silent(
                &pre_tool(&w.env, args, &copilot_camel(&w.shop, tool, &own)),
                "copilot in its own project",
            );
        }
        copilot_denial(
            &pre_tool(&w.env, args, &copilot_pascal(&w.shop, &other)),
            &w,
        );
        silent(
            &pre_tool(&w.env, args, &copilot_pascal(&w.shop, &own)),
            "copilot (PreToolUse) in its own project",
        );
    }
}

/// Gemini CLI's `BeforeTool` payload.
fn gemini(cwd: &Path, tool: &str, file: &str) -> Vec<u8> {
    json!({
        "session_id": "c0ffee00-1234-4abc-8def-000000000001",
        "transcript_path": "/home/ada/.gemini/tmp/chats/session.json",
        "cwd": cwd,
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-12-03T10:00:00.000Z",
        "tool_name": tool,
        "tool_input": {"file_path": file, "content": "x"},
    })
    .to_string()
    .into_bytes()
}

#[test]
fn gemini_clis_write_tools_are_denied_into_another_workspace_and_pass_at_home() {
    let w = world();
    for tool in ["write_file", "replace"] {
        let run = pre_tool(
            &w.env,
            &[],
            &gemini(&w.shop, tool, &text(&w.alpha.join("g.rs"))),
        );
        let d = doc(&run);
        assert_eq!(d["decision"], "deny", "{d}");
        names_alpha(d["reason"].as_str().unwrap(), &w);
        silent(
            &pre_tool(
                &w.env,
                &[],
                &gemini(&w.shop, tool, &text(&w.shop.join("g.rs"))),
            ),
            "gemini in its own project",
        );
    }
}

// ---- failing open -----------------------------------------------------------

#[test]
fn with_the_daemon_stopped_the_call_is_allowed_and_logged() {
    let w = world();
    let _ = w.env.run_berth(["daemon", "stop"]).success();
    let run = pre_tool(
        &w.env,
        &[],
        &claude_write(&w.shop, &text(&w.alpha.join("x.rs"))),
    );
    silent(&run, "no daemon");
    assert!(
        hook_log(&w.env).contains("no berthd is running; the tool call is allowed unjudged"),
        "{}",
        hook_log(&w.env)
    );
    assert!(
        w.env.daemon_pids().is_empty(),
        "the pre-tool hook started a daemon"
    );
}

#[test]
fn a_payload_of_10_mib_is_allowed_and_logged() {
    let w = world();
    let big = "x".repeat(10 << 20);
    let payload = json!({
        "session_id": "s", "cwd": w.shop, "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": w.alpha.join("big.rs"), "content": big},
    });
    silent(
        &pre_tool(&w.env, &[], payload.to_string().as_bytes()),
        "10 MiB",
    );
    assert!(
        hook_log(&w.env).contains("the tool call is allowed unjudged"),
        "{}",
        hook_log(&w.env)
    );
}

#[test]
fn a_payload_that_is_not_json_or_an_unknown_shape_is_allowed_and_logged() {
    let w = world();
    silent(&pre_tool(&w.env, &[], b"Write ~/src/alpha/x"), "not JSON");
    assert!(
        hook_log(&w.env).contains("the payload is not JSON"),
        "{}",
        hook_log(&w.env)
    );
    let unknown = json!({"session_id": "s", "cwd": w.shop, "tool_name": "Write", "tool_input": {"contents": "x"}});
    silent(
        &pre_tool(&w.env, &[], unknown.to_string().as_bytes()),
        "no file_path",
    );
    assert!(
        hook_log(&w.env).contains("no file_path in its arguments"),
        "{}",
        hook_log(&w.env)
    );
}

/// A path the system refuses (a NUL byte, a loop of links) is a write that cannot land: it
/// is not judged, and the log says so.
#[test]
fn a_target_that_cannot_be_followed_is_allowed_and_logged() {
    let w = world();
    let nul = format!("{}/a\0b.rs", text(&w.alpha));
    silent(&pre_tool(&w.env, &[], &claude_write(&w.shop, &nul)), "NUL");
    assert!(
        hook_log(&w.env).contains("the target cannot be followed"),
        "{}",
        hook_log(&w.env)
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("loop-b", w.alpha.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", w.alpha.join("loop-b")).unwrap();
        let looped = text(&w.alpha.join("loop-a").join("x.rs"));
        silent(
            &pre_tool(&w.env, &[], &claude_write(&w.shop, &looped)),
            "loop",
        );
        assert!(
            std::fs::write(w.alpha.join("loop-a").join("x.rs"), "").is_err(),
            "the system writes through a loop of links"
        );
        let lines = hook_log(&w.env);
        assert_eq!(
            lines.matches("the target cannot be followed").count(),
            2,
            "{lines}"
        );
        assert!(lines.contains("loop-a"), "{lines}");
    }
}

// Another user's process, run through setpriv.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(berth_as_root),
    ignore = "needs root to run the fake daemon as another user"
)]
fn a_fake_daemon_of_another_user_is_never_asked_and_the_call_is_allowed() {
    let w = world();
    // Our own daemon gone: only the impostor listens, where BERTH_SOCKET points.
    let _ = w.env.run_berth(["daemon", "stop"]).success();
    let dir = crate::impostor::nobodys_folder(&w.env, "evil");
    let fake = crate::impostor::Impostor::start(&w.env, &dir.join("berthd.sock"));
    let mut cmd = w.env.command(bin("berth-hook"));
    cmd.arg("pre-tool").env("BERTH_SOCKET", &fake.socket);
    let run = w
        .env
        .run_with_stdin(cmd, &claude_write(&w.shop, &text(&w.alpha.join("x.rs"))))
        .success();
    silent(&run, "a fake daemon");
    assert_eq!(fake.received(), 0, "the impostor received bytes");
    assert!(
        hook_log(&w.env).contains("the tool call is allowed unjudged"),
        "{}",
        hook_log(&w.env)
    );
}

// ---- registration -------------------------------------------------------------

/// `berth install CLIENT` puts the pre-tool hook in `file` under `event`; `berth doctor` finds
/// the registration whole, and missing that hook is drift until install runs again;
/// `berth uninstall` gives back the file's exact bytes.
fn check_registration(client: &str, file: &Path, event: &str, original: &str) {
    let env = TestEnv::new();
    let file = env.home().join(file);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, original).unwrap();
    let _ = env.run_berth(["install", client]).success();
    let installed = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    let commands: Vec<String> = v["hooks"][event]
        .as_array()
        .unwrap_or_else(|| panic!("{client}: no hooks.{event} in {installed}"))
        .iter()
        .flat_map(|h| {
            let handlers = h.get("hooks").and_then(Value::as_array).cloned();
            handlers.unwrap_or_else(|| vec![h.clone()])
        })
        .filter_map(|h| {
            ["command", "bash", "powershell"]
                .iter()
                .find_map(|k| h.get(*k).and_then(Value::as_str).map(str::to_string))
        })
        .filter(|c| c.contains("berth-hook"))
        .collect();
    assert_eq!(commands.len(), 1, "{client}: {installed}");
    assert!(
        commands[0].contains(" pre-tool"),
        "{client}: {}",
        commands[0]
    );
    let doctor = env.run_berth(["--json", "doctor"]).json();
    let status = |doc: &Value| {
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == format!("client {client}"))
            .map(|c| c["status"].as_str().unwrap().to_string())
    };
    assert_eq!(
        status(&doctor).as_deref(),
        Some("ok"),
        "{client}: {doctor:#}"
    );

    // The hook removed by hand: doctor says install would change the file.
    let mut edited = v.clone();
    edited["hooks"].as_object_mut().unwrap().remove(event);
    std::fs::write(&file, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    let doctor = env.run_berth(["--json", "doctor"]).json();
    assert_eq!(
        status(&doctor).as_deref(),
        Some("problem"),
        "{client}: {doctor:#}"
    );
    let _ = env.run_berth(["install", client]).success();
    let doctor = env.run_berth(["--json", "doctor"]).json();
    assert_eq!(
        status(&doctor).as_deref(),
        Some("ok"),
        "{client}: {doctor:#}"
    );

    std::fs::write(&file, &installed).unwrap();
    let _ = env.run_berth(["uninstall", client]).success();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "{client}: uninstall gives back every byte"
    );
}

#[test]
fn claude_code_registers_its_pre_tool_hook_for_its_write_tools() {
    let original = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"lint-shell\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    check_registration(
        "claude-code",
        Path::new(".claude/settings.json"),
        "PreToolUse",
        original,
    );
    let env = TestEnv::new();
    let _ = env.run_berth(["install", "claude-code"]).success();
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["matcher"],
        "Write|Edit|MultiEdit|NotebookEdit"
    );
}

#[test]
fn codex_registers_its_pre_tool_hook_for_apply_patch() {
    check_registration(
        "codex",
        Path::new(".codex/hooks.json"),
        "PreToolUse",
        "{\n  \"hooks\": {}\n}\n",
    );
    let env = TestEnv::new();
    let _ = env.run_berth(["install", "codex"]).success();
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home().join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    let group = &v["hooks"]["PreToolUse"][0];
    assert_eq!(group["matcher"], "apply_patch|Bash");
    assert!(
        group["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" pre-tool --client codex")
    );
}

#[test]
fn copilot_cli_registers_its_pre_tool_hook() {
    check_registration(
        "copilot-cli",
        Path::new(".copilot/hooks/berth.json"),
        "preToolUse",
        "{\n  \"version\": 1,\n  \"hooks\": {}\n}\n",
    );
}

#[test]
fn vscode_shares_claude_codes_pre_tool_hook() {
    let env = TestEnv::new();
    let _ = env.run_berth(["install", "vscode"]).success();
    let file = env.home().join(".claude/settings.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" pre-tool")
    );
    // Claude Code registered too: uninstalling VS Code keeps the shared hooks.
    let _ = env.run_berth(["install", "claude-code"]).success();
    let _ = env.run_berth(["uninstall", "vscode"]).success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(v["hooks"]["PreToolUse"].is_array(), "{v}");
}

/// Codex 0.171's `PreToolUse` payload for a shell call: its models run `apply_patch` from
/// `exec_command`, and the hook sees `Bash` with the command; `cwd` is the call's `workdir`.
fn codex_shell(cwd: &Path, command: &str) -> Vec<u8> {
    json!({
        "session_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e37",
        "transcript_path": null,
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.5-codex",
        "permission_mode": "bypassPermissions",
        "turn_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e38",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
    })
    .to_string()
    .into_bytes()
}

/// Codex's session-start payload for the same session.
fn codex_session_start(env: &TestEnv, cwd: &Path) {
    let payload = json!({
        "session_id": "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e37",
        "transcript_path": null,
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "model": "gpt-5.5-codex",
        "source": "startup",
    })
    .to_string();
    let mut cmd = env.command(bin("berth-hook"));
    cmd.args(["session-start", "--client", "codex"]);
    let _ = env.run_with_stdin(cmd, payload.as_bytes()).success();
}

#[test]
fn a_codex_shell_call_that_runs_apply_patch_into_another_workspace_is_denied() {
    let w = world();
    let heredoc = |path: &str| {
        format!(
            "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\nPATCH\n"
        )
    };
    let theirs = w.alpha.join("stolen.txt");
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_shell(&w.shop, &heredoc(&theirs.display().to_string())),
    );
    names_alpha(&codex_denial(&run), &w);
    // After `cd <alpha> &&`, a relative path is alpha's.
    let cd = format!("cd {} && {}", w.alpha.display(), heredoc("stolen.txt"));
    let run = pre_tool(&w.env, &["--client", "codex"], &codex_shell(&w.shop, &cd));
    names_alpha(&codex_denial(&run), &w);
    // Its own project, and a shell command that runs no patch: nothing said.
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_shell(&w.shop, &heredoc("src/own.rs")),
    );
    silent(&run, "a patch of its own project");
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_shell(&w.shop, &format!("rm -rf {}", w.alpha.display())),
    );
    silent(&run, "a shell command is not judged");
}

/// Codex 0.171's `PreToolUse` payload for a tool its code-mode `exec` calls (gpt-6.2-sol, its
/// default model, runs `await tools.apply_patch(patch)` in codex-code-mode-host): the nested
/// call as a direct one would be, its `tool_use_id` naming `exec`. `exec` itself fires no hook.
fn codex_code_mode(cwd: &Path, tool: &str, command: &str) -> Vec<u8> {
    json!({
        "session_id": "01a24dcc-1786-7ff3-8211-30bf2c59037a",
        "turn_id": "01a24dcc-1837-7e81-a8cf-a271ab1088d6",
        "transcript_path": "/home/ada/.codex/sessions/2026/12/06/rollout-2026-12-06T23-59-10-01a24dcc-1786-7ff3-8211-30bf2c59037a.jsonl",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "model": "gpt-6.2-sol",
        "permission_mode": "bypassPermissions",
        "tool_name": tool,
        "tool_input": {"command": command},
        "tool_use_id": "exec-f268ef76-a21c-4e64-9e09-aea2f62eced3",
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_codex_code_mode_patch_into_another_workspace_is_denied() {
    let w = world();
    let patch = |path: &str| format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n");
    let theirs = w.alpha.join("cm.txt").display().to_string();
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_code_mode(&w.shop, "apply_patch", &patch(&theirs)),
    );
    names_alpha(&codex_denial(&run), &w);
    // `await tools.exec_command({cmd})` running the patch: `Bash`, as from the shell tool.
    let heredoc = format!("apply_patch <<'PATCH'\n{}PATCH\n", patch(&theirs));
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_code_mode(&w.shop, "Bash", &heredoc),
    );
    names_alpha(&codex_denial(&run), &w);
    // Its own project: nothing said.
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_code_mode(&w.shop, "apply_patch", &patch("cm.txt")),
    );
    silent(&run, "a code-mode patch of its own project");
}

#[test]
fn a_call_whose_folder_is_another_workspaces_is_judged_by_where_the_session_started() {
    let w = world();
    codex_session_start(&w.env, &w.shop);
    // Codex hands the hook the shell call's `workdir` as its `cwd`: the session still works
    // in shop, so a relative patch there writes into alpha.
    let patch = "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: stolen.txt\n+x\n*** End Patch\nPATCH\n";
    let run = pre_tool(
        &w.env,
        &["--client", "codex"],
        &codex_shell(&w.alpha, patch),
    );
    let reason = codex_denial(&run);
    names_alpha(&reason, &w);
    assert!(reason.contains("works in workspace shop"), "{reason}");
}
