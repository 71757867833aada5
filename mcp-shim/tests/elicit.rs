//! The session's question in the client's own form (MCP elicitation), end to end: rmcp's own
//! MCP client, with an elicitation handler that answers from a script, spawns the real
//! `berth-mcp` in a hermetic [`TestEnv`] (docs/decisions/0049-the-question-in-the-clients-own-form.md).
//!
//! Needs the workspace binaries (`berth`, `berthd`): `cargo build --workspace --bins` first.

// Tests write files freely (clippy.toml's bans are for product code).
#![allow(clippy::disallowed_methods)]
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use berth_tests::TestEnv;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, Implementation,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt,
};
use serde_json::{Value, json};

/// A client that shows forms: each is answered by the next scripted answer (a cancel when
/// the script has run out), and every form's message is recorded.
#[derive(Clone, Default)]
struct Person {
    answers: Arc<Mutex<VecDeque<ElicitResult>>>,
    asked: Arc<Mutex<Vec<String>>>,
    forms: bool,
}

impl Person {
    fn answering(answers: Vec<ElicitResult>) -> Person {
        Person {
            answers: Arc::new(Mutex::new(answers.into())),
            asked: Arc::default(),
            forms: true,
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.forms {
            caps.elicitation = Some(ElicitationCapability::default());
        }
        ClientConfig::new(caps, Implementation::new("berth-e2e", "7.7.7"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            panic!("berth asks in form mode only");
        };
        self.asked.lock().unwrap().push(message);
        Ok(self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| ElicitResult::new(ElicitationAction::Cancel)))
    }
}

fn accept(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

struct Shim {
    client: RunningService<RoleClient, Person>,
    log: PathBuf,
}

async fn start(env: &TestEnv, dir: &Path, person: Person, new_era: bool) -> Shim {
    start_as(env, dir, person, new_era, None).await
}

/// `berth-mcp` as Claude Code starts it, with its session id when given.
async fn start_as(
    env: &TestEnv,
    dir: &Path,
    person: Person,
    new_era: bool,
    claude_session: Option<&str>,
) -> Shim {
    let log = env.root().join(format!(
        "berth-mcp-{}.log",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_berth-mcp"));
    cmd.env_clear()
        .envs(env.base_env())
        .env("BERTH_LOG", "berth_mcp=debug,rmcp=warn")
        .current_dir(dir);
    if let Some(id) = claude_session {
        cmd.env("CLAUDE_CODE_SESSION_ID", id);
    }
    let stderr = std::fs::File::create(&log).expect("shim log");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("spawn berth-mcp");
    let client = if new_era {
        person
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
    } else {
        person.serve(transport).await
    }
    .expect("the client starts berth-mcp");
    Shim { client, log }
}

impl Shim {
    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else { panic!() };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
        self.client.call_tool(params).await.unwrap_or_else(|e| {
            panic!(
                "{tool} failed: {e}\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            )
        })
    }

    /// device_context's structured content.
    async fn context(&self) -> Value {
        self.call("device_context", json!({}))
            .await
            .structured_content
            .expect("structured content")
    }
}

fn project(env: &TestEnv, rel: &str) -> PathBuf {
    let dir = env.dir(rel);
    env.git_root(&dir)
}

fn berth(env: &TestEnv, args: &[&str]) {
    let _ = env.run_berth(args).success();
}

fn notes(ctx: &Value) -> String {
    ctx["notes"].to_string()
}

#[tokio::test]
async fn an_accepted_form_uses_the_chosen_workspace_for_the_first_result() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = project(&env, "proj");
    let person = Person::answering(vec![accept(json!({"workspace": "work"}))]);
    let shim = start(&env, &dir, person.clone(), false).await;
    let first = shim.context().await;
    assert_eq!(first["workspace"], "work", "{first}");
    assert!(first["notice"].is_null(), "{first}");
    assert!(notes(&first).contains("committing it"), "{first}");
    assert!(dir.join(".berth/workspace.json").is_file());
    assert_eq!(
        person.asked(),
        [format!("Which workspace should {} use?", dir.display())]
    );
    // No second question, and the session stays where the answer put it.
    let second = shim.context().await;
    assert_eq!(second["workspace"], "work");
    assert_eq!(person.asked().len(), 1);
}

#[tokio::test]
async fn a_new_workspace_named_in_the_form_is_created() {
    let env = TestEnv::new();
    let dir = project(&env, "proj");
    let person = Person::answering(vec![accept(
        json!({"workspace": "a new workspace", "name": "fresh"}),
    )]);
    let shim = start(&env, &dir, person, false).await;
    let first = shim.context().await;
    assert_eq!(first["workspace"], "fresh", "{first}");
    assert!(first["workspaces"].to_string().contains("fresh"));
}

#[tokio::test]
async fn a_declined_cancelled_or_hostile_form_gives_the_notice_and_changes_nothing() {
    for answer in [
        ElicitResult::new(ElicitationAction::Decline),
        ElicitResult::new(ElicitationAction::Cancel),
        accept(json!({"workspace": "Other: typed by the user"})),
        accept(json!({"workspace": "default", "extra": true})),
        accept(json!({"workspace": "a new workspace", "name": "Not Valid!"})),
        accept(json!({"workspace": "a new workspace", "name": "x".repeat(50_000)})),
    ] {
        let env = TestEnv::new();
        let dir = project(&env, "proj");
        let person = Person::answering(vec![answer.clone()]);
        let shim = start(&env, &dir, person.clone(), false).await;
        let first = shim.context().await;
        assert!(
            first["notice"]
                .as_str()
                .is_some_and(|n| n.contains("Ask the user once")),
            "{answer:?}: {first}"
        );
        assert_eq!(first["workspace"], "default");
        assert!(!dir.join(".berth").exists(), "{answer:?}");
        assert_eq!(person.asked().len(), 1);
        let second = shim.context().await;
        assert!(second["notice"].is_null(), "notice twice: {second}");
        let listed = env.json(["workspace", "list"]);
        assert_eq!(
            listed["workspaces"].as_array().unwrap().len(),
            1,
            "{listed}"
        );
    }
}

#[tokio::test]
async fn a_client_without_forms_or_ask_elicit_off_gets_the_notice_unasked() {
    let env = TestEnv::new();
    let dir = project(&env, "proj");
    let plain = Person::default();
    let shim = start(&env, &dir, plain, false).await;
    assert!(shim.context().await["notice"].is_string());

    berth(&env, &["setting", "set", "ask.elicit", "off"]);
    let dir = project(&env, "other");
    let person = Person::answering(vec![accept(json!({"workspace": "default"}))]);
    let shim = start(&env, &dir, person.clone(), false).await;
    assert!(shim.context().await["notice"].is_string());
    assert!(person.asked().is_empty());
}

#[tokio::test]
async fn a_session_without_a_project_is_never_asked() {
    let env = TestEnv::new();
    let dir = env.dir("loose");
    let person = Person::answering(vec![accept(json!({"workspace": "default"}))]);
    let shim = start(&env, &dir, person.clone(), false).await;
    let ctx = shim.context().await;
    assert!(ctx["notice"].is_null(), "{ctx}");
    assert!(person.asked().is_empty());
}

#[tokio::test]
async fn an_overlap_is_asked_about_and_nothing_changes_without_its_confirmation() {
    for (share, changes) in [("do not share", false), ("share the folder", true)] {
        let env = TestEnv::new();
        berth(&env, &["workspace", "create", "work"]);
        berth(&env, &["workspace", "create", "big"]);
        // A root of another workspace inside the project: the project itself is unassigned.
        let dir = project(&env, "proj");
        let inner = env.dir("proj/sub");
        berth(&env, &["root", "add", "big", inner.to_str().unwrap()]);
        let person = Person::answering(vec![
            accept(json!({"workspace": "work"})),
            accept(json!({"share": share})),
        ]);
        let shim = start(&env, &dir, person.clone(), false).await;
        let first = shim.context().await;
        let asked = person.asked();
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert!(asked[1].contains("overlaps roots"), "{asked:?}");
        assert_eq!(
            dir.join(".berth/workspace.json").is_file(),
            changes,
            "{first}"
        );
        if changes {
            assert_eq!(first["workspace"], "work", "{first}");
        } else {
            assert_ne!(first["workspace"], "work", "{first}");
            assert!(first["notice"].is_string(), "{first}");
        }
    }
}

#[tokio::test]
async fn the_2026_07_28_era_asks_through_an_input_required_result() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = project(&env, "proj");
    let person = Person::answering(vec![accept(json!({"workspace": "work"}))]);
    let shim = start(&env, &dir, person.clone(), true).await;
    // rmcp's client answers the input request through its handler and retries the call.
    let first = shim.context().await;
    assert_eq!(first["workspace"], "work", "{first}");
    assert_eq!(person.asked().len(), 1);
    assert!(dir.join(".berth/workspace.json").is_file());
}

#[tokio::test]
async fn a_tampered_or_replayed_request_state_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = project(&env, "proj");
    let shim = start(&env, &dir, Person::answering(vec![]), true).await;
    let params = CallToolRequestParams::new("device_context").with_arguments(Default::default());
    let CallToolResponse::InputRequired(asked) =
        shim.client.call_tool_once(params.clone()).await.unwrap()
    else {
        panic!("the first call should ask")
    };
    let state = asked.request_state.clone().expect("a request state");
    let responses: rmcp::model::InputResponses = [(
        "berth-workspace".to_string(),
        json!({"action": "accept", "content": {"workspace": "work"}}),
    )]
    .into_iter()
    .collect();
    let retry = |state: String| {
        params
            .clone()
            .with_input_responses(responses.clone())
            .with_request_state(state)
    };
    let mut tampered = state.clone().into_bytes();
    let i = tampered.len() - 3;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let e = shim
        .client
        .call_tool_once(retry(String::from_utf8(tampered).unwrap()))
        .await
        .expect_err("a tampered state is refused");
    assert!(e.to_string().contains("not one this server issued"), "{e}");
    // Another call's arguments with the good state: refused too.
    let other = CallToolRequestParams::new("list_workspaces")
        .with_arguments(Default::default())
        .with_input_responses(responses.clone())
        .with_request_state(state.clone());
    assert!(shim.client.call_tool_once(other).await.is_err());
    assert!(!dir.join(".berth").exists(), "nothing changed");
    // The good state once: the answer is used.
    let CallToolResponse::Complete(done) = shim
        .client
        .call_tool_once(retry(state.clone()))
        .await
        .unwrap()
    else {
        panic!("the retry should complete")
    };
    assert_eq!(done.structured_content.unwrap()["workspace"], "work");
    // The same state again: a replay.
    let e = shim
        .client
        .call_tool_once(retry(state))
        .await
        .expect_err("a replayed state is refused");
    assert!(e.to_string().contains("already used"), "{e}");
}

/// Claude Code shows both the SessionStart hook's text and the form: the hook, which runs
/// first, asks, so the form is not shown and the first result does not ask again.
#[tokio::test]
async fn a_question_the_session_start_hook_put_is_not_asked_again_in_a_form() {
    let env = TestEnv::new();
    let dir = project(&env, "proj");
    let payload = json!({
        "session_id": "claude-elicit-1",
        "transcript_path": dir.join("t.jsonl"),
        "cwd": dir,
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    let mut hook = env.command(berth_tests::bin("berth-hook"));
    hook.args(["session-start", "--client", "claude-code"]);
    let out = env
        .run_with_stdin(hook, payload.to_string().as_bytes())
        .success()
        .stdout();
    assert!(out.contains("Ask the user once"), "the hook asks: {out}");
    let person = Person::answering(vec![accept(json!({"workspace": "default"}))]);
    let shim = start_as(&env, &dir, person.clone(), false, Some("claude-elicit-1")).await;
    let first = shim.context().await;
    assert!(first["notice"].is_null(), "{first}");
    assert!(
        person.asked().is_empty(),
        "asked twice: {:?}",
        person.asked()
    );
}
