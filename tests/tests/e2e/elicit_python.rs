//! The session's question in the client's own form, asked of a client on the official Python
//! MCP SDK (`elicit_client.py`), in both protocol eras: the legacy `elicitation/create`
//! request and the 2026-07-28 input-required result with its retried request
//! (docs/decisions/0049-the-question-in-the-clients-own-form.md, and 0050 for the sealed
//! request state). Counted as ignored where no Python with the SDK was found when the tests
//! were built (tests/build.rs; `.ci/run` installs one).

use std::path::{Path, PathBuf};

use berth_tests::{TestEnv, bin};
use serde_json::{Value, json};

/// The modern era, as the SDK names its version pin.
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "legacy";
/// A phrase of the notice a session gets when it was not asked, or said no.
const NOTICE: &str = "Ask the user once";

/// The Python with the SDK that tests/build.rs found.
#[cfg(berth_has_python_mcp)]
const PYTHON: &str = env!("BERTH_TEST_PYTHON_BIN");
/// None was found, so the tests are ignored; run anyway, they fail on the missing SDK.
#[cfg(not(berth_has_python_mcp))]
const PYTHON: &str = "python3";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/elicit_client.py")
}

/// What the client saw: every form it was shown and each call's result.
struct Seen {
    asked: Vec<Value>,
    results: Vec<Value>,
    tamper: Value,
    /// The protocol version the session speaks.
    protocol: String,
}

impl Seen {
    /// The structured content of call `i`.
    fn result(&self, i: usize) -> &Value {
        let r = &self.results[i];
        assert_eq!(r["is_error"], false, "call {i} failed: {r}");
        &r["structured"]
    }

    fn messages(&self) -> Vec<String> {
        self.asked
            .iter()
            .map(|a| a["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// Runs the Python client against `berth-mcp` started in `dir`, with `plan`'s era, forms,
/// answers and calls.
fn drive(env: &TestEnv, dir: &Path, mut plan: Value) -> Seen {
    plan["command"] = json!(bin("berth-mcp"));
    plan["cwd"] = json!(dir);
    let mut cmd = env.command(PYTHON);
    cmd.arg(script())
        .arg(plan.to_string())
        .env("BERTH_LOG", "berth_mcp=debug,rmcp=warn")
        .current_dir(dir);
    let out = env.run(cmd).success().stdout();
    let seen: Value = serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("the client printed no JSON ({e}): {out}"));
    Seen {
        asked: seen["asked"].as_array().cloned().unwrap_or_default(),
        results: seen["results"].as_array().cloned().unwrap_or_default(),
        tamper: seen["tamper"].clone(),
        protocol: seen["protocol"].as_str().unwrap_or_default().to_string(),
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// A project nothing assigns: a git repository of its own, under no root.
fn project(env: &TestEnv, rel: &str) -> PathBuf {
    env.git_root(env.dir(rel))
}

fn berth(env: &TestEnv, args: &[&str]) {
    let _ = env.run_berth(args).success();
}

fn workspace_count(env: &TestEnv) -> usize {
    env.json(["workspace", "list"])["workspaces"]
        .as_array()
        .map_or(0, Vec::len)
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn an_accepted_form_puts_the_first_result_in_the_chosen_workspace_in_both_eras() {
    for mode in [LEGACY, MODERN] {
        let env = TestEnv::new();
        berth(&env, &["workspace", "create", "work"]);
        let dir = project(&env, "proj");
        let seen = drive(
            &env,
            &dir,
            json!({
                "mode": mode,
                "answers": [accept(json!({"workspace": "work"}))],
                "calls": ["device_context", "device_context"],
            }),
        );
        // The era asked for is the era spoken: the modern one asks through an
        // input-required result, the legacy one through an elicitation request.
        assert_eq!(
            seen.protocol == MODERN,
            mode == MODERN,
            "{mode}: {}",
            seen.protocol
        );
        let first = seen.result(0);
        assert_eq!(first["workspace"], "work", "{mode}: {first}");
        assert!(first["notice"].is_null(), "{mode}: {first}");
        assert!(
            first["notes"].to_string().contains("committing it"),
            "{mode}: the result says what was written: {first}"
        );
        let file = dir.join(".berth/workspace.json");
        let written = std::fs::read_to_string(&file).expect("the project file is written");
        assert!(written.contains("\"work\""), "{mode}: {written}");
        // One question, offering the device's workspaces and a new one, and not a second.
        assert_eq!(
            seen.messages(),
            [format!("Which workspace should {} use?", dir.display())],
            "{mode}"
        );
        let offered = seen.asked[0]["schema"].to_string();
        for choice in ["work", "default", "a new workspace", "not now"] {
            assert!(offered.contains(choice), "{mode}: {choice} in {offered}");
        }
        assert_eq!(seen.result(1)["workspace"], "work", "{mode}");
        // The approval is the device's: a later command resolves there too.
        let resolved = env.json_in(&dir, ["resolve"]);
        assert_eq!(resolved["workspace"], "work", "{mode}: {resolved}");
    }
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn a_new_workspace_named_in_the_form_is_created_and_used() {
    for mode in [LEGACY, MODERN] {
        let env = TestEnv::new();
        let dir = project(&env, "proj");
        let seen = drive(
            &env,
            &dir,
            json!({
                "mode": mode,
                "answers": [accept(json!({"workspace": "a new workspace", "name": "fresh"}))],
                "calls": ["device_context"],
            }),
        );
        assert_eq!(seen.result(0)["workspace"], "fresh", "{mode}");
        assert_eq!(workspace_count(&env), 2, "{mode}");
    }
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn a_declined_cancelled_or_outside_answer_gives_the_notice_once_and_changes_nothing() {
    for (mode, answer) in [
        (LEGACY, json!({"action": "decline"})),
        (MODERN, json!({"action": "decline"})),
        (LEGACY, json!({"action": "cancel"})),
        // Copilot's "Other (type your answer)" sends what the form never offered.
        (
            LEGACY,
            accept(json!({"workspace": "Other: typed by the user"})),
        ),
        (
            MODERN,
            accept(json!({"workspace": "a new workspace", "name": "Not Valid!"})),
        ),
    ] {
        let env = TestEnv::new();
        let dir = project(&env, "proj");
        let seen = drive(
            &env,
            &dir,
            json!({"mode": mode, "answers": [answer], "calls": ["device_context", "device_context"]}),
        );
        assert_eq!(seen.asked.len(), 1, "{mode} {answer}");
        let first = seen.result(0);
        assert!(
            first["notice"].as_str().is_some_and(|n| n.contains(NOTICE)),
            "{mode} {answer}: {first}"
        );
        assert_eq!(first["workspace"], "default", "{mode} {answer}");
        assert!(seen.result(1)["notice"].is_null(), "{mode}: notice twice");
        assert!(
            !dir.join(".berth").exists(),
            "{mode} {answer}: nothing written"
        );
        assert_eq!(workspace_count(&env), 1, "{mode} {answer}");
    }
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn a_client_without_forms_gets_the_notice_unasked() {
    for mode in [LEGACY, MODERN] {
        let env = TestEnv::new();
        let dir = project(&env, "proj");
        let seen = drive(
            &env,
            &dir,
            json!({"mode": mode, "forms": false, "calls": ["device_context"]}),
        );
        assert!(seen.asked.is_empty(), "{mode}");
        let first = seen.result(0);
        assert!(
            first["notice"].as_str().is_some_and(|n| n.contains(NOTICE)),
            "{mode}: {first}"
        );
    }
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn ask_elicit_off_keeps_the_notice_only() {
    let env = TestEnv::new();
    berth(&env, &["setting", "set", "ask.elicit", "off"]);
    let dir = project(&env, "proj");
    let seen = drive(
        &env,
        &dir,
        json!({"answers": [accept(json!({"workspace": "default"}))], "calls": ["device_context"]}),
    );
    assert!(seen.asked.is_empty());
    assert!(seen.result(0)["notice"].is_string());
    assert!(!dir.join(".berth").exists());
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn a_session_without_a_project_is_never_asked() {
    for mode in [LEGACY, MODERN] {
        let env = TestEnv::new();
        let dir = env.dir("loose");
        let seen = drive(
            &env,
            &dir,
            json!({
                "mode": mode,
                "answers": [accept(json!({"workspace": "default"}))],
                "calls": ["device_context", "list_workspaces"],
            }),
        );
        assert!(seen.asked.is_empty(), "{mode}");
        assert!(seen.result(0)["notice"].is_null(), "{mode}");
    }
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn an_overlap_is_asked_about_and_nothing_changes_when_it_is_declined() {
    for mode in [LEGACY, MODERN] {
        for (second, changes) in [
            (accept(json!({"share": "do not share"})), false),
            (json!({"action": "decline"}), false),
            (accept(json!({"share": "share the folder"})), true),
        ] {
            let env = TestEnv::new();
            berth(&env, &["workspace", "create", "work"]);
            berth(&env, &["workspace", "create", "big"]);
            // A root of another workspace inside the project: the project itself is unassigned.
            let dir = project(&env, "proj");
            let inner = env.dir("proj/sub");
            berth(&env, &["root", "add", "big", inner.to_str().unwrap()]);
            let seen = drive(
                &env,
                &dir,
                json!({
                    "mode": mode,
                    "answers": [accept(json!({"workspace": "work"})), second],
                    "calls": ["device_context"],
                }),
            );
            let asked = seen.messages();
            assert_eq!(asked.len(), 2, "{mode} {second}: {asked:?}");
            assert!(asked[1].contains("overlaps roots"), "{mode}: {asked:?}");
            let first = seen.result(0);
            assert_eq!(
                dir.join(".berth/workspace.json").is_file(),
                changes,
                "{mode} {second}: {first}"
            );
            let roots = env.json(["root", "list"]).to_string();
            assert_eq!(
                roots.contains(&format!("{}\"", dir.display())),
                changes,
                "{mode} {second}: {roots}"
            );
            if changes {
                assert_eq!(first["workspace"], "work", "{mode}: {first}");
            } else {
                assert_ne!(first["workspace"], "work", "{mode}: {first}");
                assert!(first["notice"].is_string(), "{mode}: {first}");
            }
        }
    }
}

#[test]
#[cfg_attr(not(berth_has_python_mcp), ignore = "no Python with the MCP SDK 2.3")]
fn a_tampered_moved_or_replayed_request_state_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = project(&env, "proj");
    let seen = drive(
        &env,
        &dir,
        json!({"mode": MODERN, "tamper": true, "calls": []}),
    );
    assert_eq!(seen.protocol, MODERN);
    let said = &seen.tamper;
    assert_eq!(said["key"], "berth-workspace", "{said}");
    assert!(
        said["changed"]["refused"]
            .as_str()
            .is_some_and(|e| e.contains("not one this server issued")),
        "{said}"
    );
    assert!(said["other_call"]["refused"].is_string(), "{said}");
    assert_eq!(said["written_before_good"], false, "{said}");
    assert_eq!(said["good"]["structured"]["workspace"], "work", "{said}");
    assert!(
        said["replayed"]["refused"]
            .as_str()
            .is_some_and(|e| e.contains("already used")),
        "{said}"
    );
    assert!(seen.asked.is_empty(), "the script answered by hand");
}
