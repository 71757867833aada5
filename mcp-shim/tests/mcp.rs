//! `berth-mcp` end to end: rmcp's own MCP client spawns the real binary
//! over stdio in a hermetic [`TestEnv`] (its own HOME, data dir, socket and
//! daemon), and every case goes through `tools/list` / `tools/call` as an
//! editor would. No hand-written JSON-RPC.
//!
//! Needs the workspace binaries (`berth`, `berthd`): run with
//! `cargo test --workspace`, or `cargo build && cargo test -p berth-mcp`.

// Tests write files freely (clippy.toml's bans are for product code).
#![allow(clippy::disallowed_methods)]
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use berth_tests::TestEnv;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};

const TOOLS: [&str; 10] = [
    "device_context",
    "use_workspace",
    "list_workspaces",
    "ls",
    "read",
    "write",
    "edit",
    "move",
    "delete",
    "search",
];

/// Which MCP era the client speaks.
#[derive(Clone, Copy)]
enum Era {
    /// `initialize` handshake.
    Initialize,
    /// 2026-07-28: `server/discover`, no handshake.
    Discover,
}

/// How to start one `berth-mcp`.
struct Spawn<'a> {
    env: &'a TestEnv,
    dir: PathBuf,
    args: Vec<String>,
    vars: Vec<(String, String)>,
    era: Era,
}

impl<'a> Spawn<'a> {
    /// `berth-mcp` started in `dir` (its working directory).
    fn new(env: &'a TestEnv, dir: impl AsRef<Path>) -> Spawn<'a> {
        Spawn {
            env,
            dir: dir.as_ref().to_path_buf(),
            args: Vec::new(),
            vars: Vec::new(),
            era: Era::Initialize,
        }
    }

    fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    fn var(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Self {
        self.vars
            .push((k.to_string(), v.as_ref().to_string_lossy().into_owned()));
        self
    }

    fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    async fn start(self) -> Shim {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let log = self.env.root().join(format!("berth-mcp-{n}.log"));
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_berth-mcp"));
        cmd.env_clear()
            .envs(self.env.base_env())
            .env("BERTH_LOG", "berth_mcp=debug,rmcp=warn")
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .args(&self.args)
            .current_dir(&self.dir);
        let stderr = std::fs::File::create(&log).expect("shim log");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("spawn berth-mcp");
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("berth-e2e", "7.7.7"),
        );
        let client = match self.era {
            Era::Initialize => info.serve(transport).await,
            Era::Discover => {
                info.serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
            }
        };
        let client = client.unwrap_or_else(|e| {
            panic!(
                "MCP client could not start berth-mcp: {e}\n--- shim log ---\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        });
        Shim { client, log }
    }
}

/// A running `berth-mcp` and the MCP client talking to it.
struct Shim {
    client: RunningService<RoleClient, ClientConfig>,
    log: PathBuf,
}

impl Shim {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
        match self.client.call_tool(params).await {
            Ok(r) => r,
            Err(e) => panic!(
                "tools/call {tool} failed at the protocol level: {e}\n--- shim log ---\n{}",
                self.log()
            ),
        }
    }

    /// A successful call: its text and structured content.
    async fn ok(&self, tool: &str, args: Value) -> (String, Value) {
        let r = self.call(tool, args.clone()).await;
        let t = text(&r);
        assert_ne!(
            r.is_error,
            Some(true),
            "{tool} {args} failed: {t}\n--- shim log ---\n{}",
            self.log()
        );
        (t, r.structured_content.clone().unwrap_or(Value::Null))
    }

    /// A call the daemon refused: its text (a result with `is_error`, not a
    /// protocol error).
    async fn err(&self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args.clone()).await;
        let t = text(&r);
        assert_eq!(
            r.is_error,
            Some(true),
            "{tool} {args} should have failed, gave: {t}"
        );
        t
    }

    async fn context(&self) -> Value {
        self.ok("device_context", json!({})).await.1
    }

    async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// The last text block: the result's structured content as JSON, on one line.
fn json_block(text: &str) -> &str {
    text.lines().last().unwrap_or_default()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

/// `berth ARGS`, which must succeed.
fn berth(env: &TestEnv, args: &[&str]) {
    let _ = env.run_berth(args).success();
}

/// An unassigned project: a git root (a `.git` folder).
fn git_project(env: &TestEnv, rel: &str) -> PathBuf {
    let dir = env.dir(rel);
    env.git_root(&dir)
}

/// A project approved for `ws` through the CLI, as a person would.
fn approved_project(env: &TestEnv, rel: &str, ws: &str) -> PathBuf {
    let dir = git_project(env, rel);
    let _ = env.run_in(&dir, ["workspace", "use", ws]).success();
    dir
}

fn is_notice(t: &str) -> bool {
    t.starts_with("berth: ")
}

async fn ws(s: &Shim) -> Value {
    s.context().await["workspace"].clone()
}

fn scratch_id(env: &TestEnv, folder: &Value) -> String {
    let folder = PathBuf::from(folder.as_str().expect("folder is a path"));
    let scratch = env.data_dir().join("scratch");
    assert_eq!(
        folder.parent(),
        Some(scratch.as_path()),
        "a projectless session's folder is <data>/scratch/<id>"
    );
    folder.file_name().unwrap().to_string_lossy().into_owned()
}

// ---------------------------------------------------------------------------
// The tool list and the handshake

#[tokio::test]
async fn tools_are_listed_with_their_schemas() {
    let env = TestEnv::new();
    let shim = Spawn::new(&env, env.home()).start().await;
    let tools = shim.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names.iter().copied().collect::<BTreeSet<_>>(), TOOLS.into());
    let required = |t: &str| -> BTreeSet<String> {
        let tool = tools.iter().find(|x| x.name == t).unwrap();
        tool.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(required("device_context"), set(&[]));
    assert_eq!(required("list_workspaces"), set(&[]));
    assert_eq!(required("use_workspace"), set(&["name"]));
    assert_eq!(required("ls"), set(&["path"]));
    assert_eq!(required("read"), set(&["path"]));
    assert_eq!(required("write"), set(&["path", "content"]));
    assert_eq!(required("edit"), set(&["path", "old", "new"]));
    assert_eq!(required("move"), set(&["from", "to"]));
    assert_eq!(required("delete"), set(&["path"]));
    assert_eq!(required("search"), set(&["query"]));
    for tool in &tools {
        let props = tool.input_schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{} has no properties", tool.name));
        let ws = props
            .get("workspace")
            .unwrap_or_else(|| panic!("{} takes no workspace", tool.name));
        assert!(
            ws["description"]
                .as_str()
                .is_some_and(|d| d.contains("argument")),
            "{}: workspace has no description: {ws}",
            tool.name
        );
        for (name, p) in props {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{}.{name} has no description",
                tool.name
            );
        }
        let desc = tool.description.as_deref().unwrap_or("");
        assert!(!desc.is_empty(), "{} has no description", tool.name);
        if !["device_context", "use_workspace"].contains(&tool.name.as_ref()) {
            assert!(
                desc.contains("<workspace>/<path>"),
                "{}: the description does not state the path rule: {desc}",
                tool.name
            );
        }
    }
    // Each path argument says what it takes for its own tool: only `ls`
    // lists the workspaces with `/`; the tools that create name the rule
    // for new top-level folders.
    let path_doc = |t: &str, arg: &str| -> String {
        let tool = tools.iter().find(|x| x.name == t).unwrap();
        tool.input_schema["properties"][arg]["description"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    for t in ["read", "write", "edit", "delete", "search"] {
        let doc = path_doc(t, "path");
        assert!(
            !doc.contains("`ls`") && !doc.contains("lists the workspaces"),
            "{t}: {doc}"
        );
    }
    let ls = path_doc("ls", "path");
    assert!(ls.contains("`/` lists the workspaces"), "{ls}");
    assert!(path_doc("write", "path").contains("./<folder>/..."));
    assert!(path_doc("move", "to").contains("./<folder>/..."));
    for t in ["ls", "write", "move"] {
        let tool = tools.iter().find(|x| x.name == t).unwrap();
        let desc = tool.description.as_deref().unwrap_or("");
        assert!(
            desc.contains("refused"),
            "{t}: the refusal is not stated: {desc}"
        );
    }
    for tool in &tools {
        assert!(
            tool.output_schema.is_none(),
            "{} declares an outputSchema",
            tool.name
        );
    }
    let use_ws = tools.iter().find(|t| t.name == "use_workspace").unwrap();
    assert_eq!(
        use_ws.input_schema["properties"]["allow_overlap"]["type"],
        "boolean"
    );
    shim.stop().await;
}

#[tokio::test]
async fn the_initialize_era_negotiates_and_gets_the_daemons_instructions() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "notes"]);
    let shim = Spawn::new(&env, env.home()).start().await;
    let info = shim.client.peer_info().expect("server info");
    assert!(
        info.protocol_version.as_str() < ProtocolVersion::V_2026_07_28.as_str(),
        "an initialize client negotiates an initialize-era version, got {}",
        info.protocol_version
    );
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("berth-mcp")
    );
    let instructions = info.instructions.as_deref().unwrap_or("");
    assert!(
        instructions.contains("Workspaces on this device: default, notes"),
        "{instructions}"
    );
    assert!(
        instructions.contains("<workspace>/<path>"),
        "{instructions}"
    );
    assert!(
        instructions.contains("Use berth workspace <name>"),
        "{instructions}"
    );
    assert_eq!(shim.context().await["workspace"], "default");
    shim.stop().await;
}

/// The handshake does not wait for the session's registration: with the
/// registry's write lock held elsewhere, so that the daemon cannot record
/// the session, `initialize` still gets the daemon's instructions (were it
/// waiting, it would get the failure, seconds later). Once the lock is let
/// go, the first tool call finds the session registered.
#[tokio::test]
async fn the_handshake_gets_the_instructions_while_the_registration_waits() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "notes"]);
    let db = rusqlite::Connection::open(env.db()).expect("open the registry");
    db.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    let shim = Spawn::new(&env, env.home()).start().await;
    let info = shim.client.peer_info().expect("server info");
    let instructions = info.instructions.as_deref().unwrap_or("");
    assert!(
        instructions.contains("Workspaces on this device: default, notes"),
        "{instructions}"
    );
    db.execute_batch("ROLLBACK").expect("let the lock go");
    let context = shim.context().await;
    assert_eq!(context["workspace"], "default", "{context}");
    shim.stop().await;
}

/// The shim lists the tools of the shared table, and the daemon dispatches
/// every one of them: a tool only one side knew would be listed and then
/// refused as "no tool", or never listed. Each call here has no arguments,
/// so it either runs or is refused for a missing argument, by the tool itself.
/// `tools/list` shows the table's tools in the table's order, and a name
/// the table lacks is refused with the names it has.
#[tokio::test]
async fn tools_are_listed_in_the_tables_order_and_an_unknown_one_is_named() {
    let env = TestEnv::new();
    let shim = Spawn::new(&env, env.home()).start().await;
    let tools = shim.client.list_all_tools().await.expect("tools/list");
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let table: Vec<&str> = berth_vocab::tools::Tool::ALL
        .iter()
        .map(|t| t.name())
        .collect();
    assert_eq!(listed, table);
    let e = shim
        .client
        .call_tool(CallToolRequestParams::new("rm".to_string()))
        .await
        .expect_err("rm is no tool")
        .to_string();
    assert!(
        e.contains(r#"no tool "rm"; tools: device_context, use_workspace, "#),
        "{e}"
    );
    shim.stop().await;
}

#[tokio::test]
async fn every_listed_tool_is_one_the_daemon_dispatches() {
    let env = TestEnv::new();
    let shim = Spawn::new(&env, env.home()).start().await;
    let tools = shim.client.list_all_tools().await.expect("tools/list");
    let listed: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let table: BTreeSet<&str> = berth_vocab::tools::Tool::ALL
        .iter()
        .map(|t| t.name())
        .collect();
    assert_eq!(listed, table);
    for tool in listed {
        let r = shim.call(tool, json!({})).await;
        let s = r.structured_content.clone().expect("structured content");
        if r.is_error == Some(true) {
            assert_eq!(s["code"], "bad-argument", "{tool}: {s}");
            let error = s["error"].as_str().unwrap();
            assert!(
                error.starts_with(&format!("{tool}: missing argument")),
                "{error}"
            );
        }
    }
    shim.stop().await;
}

#[tokio::test]
async fn the_2026_07_28_era_negotiates_without_initialize() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "notes"]);
    let dir = approved_project(&env, "proj", "notes");
    let shim = Spawn::new(&env, &dir).era(Era::Discover).start().await;
    let info = shim.client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let instructions = info.instructions.as_deref().unwrap_or("");
    assert!(
        instructions.contains("Workspaces on this device: default, notes"),
        "{instructions}"
    );
    let tools = shim.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), TOOLS.len());
    let ctx = shim.context().await;
    assert_eq!(ctx["workspace"], "notes");
    assert_eq!(ctx["reason"], "project-file");
    let (_, w) = shim
        .ok("write", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(w["path"], "notes/a.txt");
    shim.stop().await;
}

/// `berth-mcp` in `dir` on plain pipes, for what an MCP client cannot do:
/// close stdin before the handshake, or wait between the start and
/// `initialize`. Its stderr goes to the returned log file.
fn raw_shim(env: &TestEnv, dir: &Path, args: &[&str]) -> (std::process::Command, PathBuf) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let log = env
        .root()
        .join(format!("raw-mcp-{}.log", N.fetch_add(1, Ordering::Relaxed)));
    let mut cmd = env.command(env!("CARGO_BIN_EXE_berth-mcp"));
    cmd.env("BERTH_LOG", "berth_mcp=debug,rmcp=warn")
        .args(args)
        .current_dir(dir)
        .stderr(std::fs::File::create(&log).expect("shim log"));
    (cmd, log)
}

/// A client that goes away before it initializes is no failure: exit 0.
/// A client that breaks the handshake still is: exit 1, and why.
#[tokio::test]
async fn a_client_that_leaves_before_the_handshake_is_no_error() {
    let env = TestEnv::new();
    let (mut cmd, _) = raw_shim(&env, &env.home(), &[]);
    cmd.stderr(Stdio::piped());
    let run = env.run_with_stdin(cmd, b"").success();
    assert!(!run.stderr().contains("ERROR"), "{}", run.stderr());
    assert!(
        run.stderr()
            .contains("closed stdin before the MCP handshake"),
        "{}",
        run.stderr()
    );

    let (mut cmd, _) = raw_shim(&env, &env.home(), &[]);
    cmd.stderr(Stdio::piped());
    let not_initialize = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    let _ = env
        .run_with_stdin(cmd, not_initialize)
        .failure(1)
        .stderr_has(&["MCP handshake failed"]);
}

/// JSON-RPC lines written to a raw shim's stdin, one at a time; each
/// request's reply is read before the next line goes. The replies, in order.
fn raw_exchange(child: &mut std::process::Child, log: &Path, lines: &[Value]) -> Vec<Value> {
    use std::io::{BufRead, Write};
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        let mut line = String::new();
        while stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
            let v = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            if tx.send(v).is_err() {
                break;
            }
            line.clear();
        }
    });
    let mut replies = Vec::new();
    for line in lines {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to berth-mcp");
        if line.get("id").is_none() {
            continue;
        }
        let reply = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!(
                    "no reply to {line}\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            });
        replies.push(reply);
    }
    drop(stdin);
    replies
}

fn initialize_line() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

/// When the daemon answers with an error, the server instructions quote it;
/// they blame reachability only when the daemon could not be reached. Here
/// the daemon on the socket serves another data folder than the shim's, and
/// refuses it.
#[tokio::test]
async fn a_refused_registration_is_quoted_in_the_instructions_not_called_unreachable() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "notes"]);
    let other = env.dir("other-data");
    let (mut cmd, log) = raw_shim(&env, &env.home(), &[]);
    let mut child = cmd
        .env("BERTH_DATA_DIR", &other)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn berth-mcp");
    let replies = raw_exchange(&mut child, &log, &[initialize_line()]);
    let status = child.wait().expect("berth-mcp exits when stdin closes");
    let instructions = replies[0]["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(
        instructions.contains("could not register this session")
            && instructions.contains("serves the data folder")
            && instructions.contains(&format!("{}", other.display())),
        "{instructions}"
    );
    assert!(
        !instructions.contains("could not be reached"),
        "{instructions}"
    );
    assert!(status.success(), "{status}");
}

/// A session folder removed after the shim chose it: the handshake does not
/// wait for the registration (which the daemon refuses), so the first tool
/// call says why, with the daemon's words, and never blames reachability.
#[tokio::test]
async fn a_session_folder_removed_after_the_start_is_reported_by_the_first_call() {
    let env = TestEnv::new();
    let doomed = env.dir("doomed");
    let (mut cmd, log) = raw_shim(&env, &env.home(), &["--cwd", doomed.to_str().unwrap()]);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn berth-mcp");
    // The choice is logged before the shim connects, and it registers no
    // sooner than the client's `initialize` (or a 200 ms grace).
    let chosen = berth_tests::wait_until(Duration::from_secs(10), || {
        let l = std::fs::read_to_string(&log).unwrap_or_default();
        if l.contains("session directory") {
            Ok(())
        } else {
            Err(l)
        }
    });
    assert!(chosen.is_ok(), "{chosen:?}");
    std::fs::remove_dir(&doomed).unwrap();
    let replies = raw_exchange(
        &mut child,
        &log,
        &[
            initialize_line(),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "device_context", "arguments": {}}}),
        ],
    );
    let status = child.wait().expect("berth-mcp exits when stdin closes");
    let instructions = replies[0]["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(
        !instructions.contains("could not be reached"),
        "{instructions}"
    );
    let result = &replies[1]["result"];
    assert_eq!(result["isError"], true, "{result}");
    let failure = &result["structuredContent"];
    assert_eq!(failure["code"], "not-found", "{failure}");
    assert!(
        failure["error"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("{}: no such file or directory", doomed.display())),
        "{failure}"
    );
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn the_client_identity_and_claude_session_id_reach_the_daemon() {
    let env = TestEnv::new();
    let shim = Spawn::new(&env, env.home())
        .var("CLAUDE_CODE_SESSION_ID", "cc-1234")
        .start()
        .await;
    let id = scratch_id(&env, &shim.context().await["folder"]);
    let db =
        rusqlite::Connection::open_with_flags(env.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the registry");
    let row: (String, String, String) = db
        .query_row(
            "SELECT client_name, client_version, client_session_id FROM sessions WHERE id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the session's row");
    assert_eq!(row, ("berth-e2e".into(), "7.7.7".into(), "cc-1234".into()));
    shim.stop().await;
}

// ---------------------------------------------------------------------------
// The notice

#[tokio::test]
async fn an_unassigned_project_gets_the_notice_on_its_first_result_only() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = git_project(&env, "proj");
    let shim = Spawn::new(&env, &dir).start().await;
    // The first result, whatever the tool.
    let (first, _) = shim.ok("list_workspaces", json!({})).await;
    assert!(is_notice(&first), "no notice first: {first}");
    assert!(first.contains("is not assigned"), "{first}");
    assert!(first.contains("uses workspace \"default\""), "{first}");
    assert!(first.contains("default, work"), "{first}");
    assert!(first.contains("use_workspace"), "{first}");
    let (second, _) = shim.ok("list_workspaces", json!({})).await;
    assert!(!second.contains("berth:"), "notice repeated: {second}");
    let (third, ctx) = shim.ok("device_context", json!({})).await;
    assert!(!is_notice(&third), "notice repeated: {third}");
    assert_eq!(ctx["reason"], "active");
    shim.stop().await;
}

#[tokio::test]
async fn an_unapproved_proposal_gets_the_notice_on_its_first_result_only() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "team"]);
    let dir = git_project(&env, "cloned");
    env.project_file(&dir, r#"{"workspace": "team"}"#);
    let shim = Spawn::new(&env, &dir).start().await;
    let (first, ctx) = shim.ok("device_context", json!({})).await;
    assert!(is_notice(&first), "no notice first: {first}");
    assert!(first.contains("proposing workspace \"team\""), "{first}");
    assert_eq!(ctx["proposal"], "team");
    let (second, _) = shim.ok("device_context", json!({})).await;
    assert!(!is_notice(&second), "notice repeated: {second}");
    shim.stop().await;
}

#[tokio::test]
async fn even_a_failing_first_call_carries_the_notice() {
    let env = TestEnv::new();
    let dir = git_project(&env, "proj");
    let shim = Spawn::new(&env, &dir).start().await;
    let first = shim
        .err("read", json!({"path": "default/missing.txt"}))
        .await;
    assert!(is_notice(&first), "{first}");
    assert!(first.contains("no such file"), "{first}");
    let second = shim
        .err("read", json!({"path": "default/missing.txt"}))
        .await;
    assert!(!is_notice(&second), "{second}");
    shim.stop().await;
}

#[tokio::test]
async fn an_approved_project_gets_no_notice() {
    let env = TestEnv::new();
    let dir = approved_project(&env, "proj", "mine");
    let shim = Spawn::new(&env, &dir).start().await;
    let (first, ctx) = shim.ok("device_context", json!({})).await;
    assert!(!first.contains("berth:"), "{first}");
    assert_eq!(ctx["workspace"], "mine");
    assert_eq!(ctx["reason"], "project-file");
    shim.stop().await;
}

/// docs/reference.md, "Roots, the walk and project files": a linked worktree of an approved
/// repository is its project, so a session there is not asked; one far from the repository too.
#[tokio::test]
async fn a_worktree_of_an_approved_repository_gets_no_notice() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "shop"]);
    let repo = env.dir("src/shop");
    env.git(&repo, ["init", "-q"]);
    let _ = env.run_in(&repo, ["workspace", "use", "shop"]).success();
    env.git(&repo, ["add", "-A"]);
    env.git(&repo, ["commit", "-q", "-m", "init"]);
    let far = env.root().join("agents/task-1");
    std::fs::create_dir_all(far.parent().unwrap()).unwrap();
    env.git(&repo, ["worktree", "add", "-q", far.to_str().unwrap()]);
    let far = berth_tests::canonical(&far).unwrap();
    let shim = Spawn::new(&env, &far).start().await;
    let (first, ctx) = shim.ok("device_context", json!({})).await;
    assert!(!is_notice(&first), "{first}");
    assert_eq!(ctx["workspace"], "shop");
    assert_eq!(ctx["reason"], "project-file");
    assert_eq!(ctx["proposal"], Value::Null);
    assert!(
        ctx["notes"]
            .to_string()
            .contains("approved through the repository"),
        "{ctx}"
    );
    // Its own folder is the workspace's home, never the worktree.
    assert_eq!(ctx["folder"], json!(env.managed_home("shop")));
    shim.stop().await;
}

/// docs/reference.md, "Roots, the walk and project files": a note about an ignored project file
/// reaches the user through the session notice too, on the first result only, even when nothing
/// needs asking.
#[tokio::test]
async fn an_ignored_project_file_is_noted_on_the_first_result_only() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = git_project(&env, "proj");
    berth(&env, &["root", "add", "work", dir.to_str().unwrap()]);
    std::fs::create_dir_all(dir.join(".berth")).unwrap();
    std::fs::write(
        dir.join(".berth").join("workspace.json"),
        r#"{"workspace": 7}"#,
    )
    .unwrap();
    let shim = Spawn::new(&env, &dir).start().await;
    let (first, _) = shim.ok("list_workspaces", json!({})).await;
    let file = dir.join(".berth").join("workspace.json");
    assert!(
        first.starts_with(&format!("berth note: ignored {}", file.display())),
        "{first}"
    );
    assert!(
        !is_notice(&first),
        "nothing to ask in an approved root: {first}"
    );
    let (second, ctx) = shim.ok("device_context", json!({})).await;
    assert!(!second.starts_with("berth note:"), "{second}");
    assert_eq!(ctx["workspace"], "work");
    assert_eq!(ctx["reason"], "root");
    shim.stop().await;
}

#[tokio::test]
async fn a_session_without_a_project_gets_no_notice() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let (first, ctx) = shim.ok("list_workspaces", json!({})).await;
    assert!(!first.contains("berth:"), "{first}");
    assert_eq!(shim.context().await["project"], Value::Null);
    assert_eq!(ctx["active"], "default");
    shim.stop().await;
}

/// Two MCP servers of one client session (a reconnect), linked through the
/// client's session id in `var`: the second is not asked again.
async fn one_client_session_is_asked_once(var: &str) {
    let env = TestEnv::new();
    let dir = git_project(&env, "proj");
    let a = Spawn::new(&env, &dir).var(var, "same").start().await;
    let (first, _) = a.ok("device_context", json!({})).await;
    assert!(is_notice(&first), "{first}");
    let b = Spawn::new(&env, &dir).var(var, "same").start().await;
    let (again, _) = b.ok("device_context", json!({})).await;
    assert!(!is_notice(&again), "asked twice through {var}: {again}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_hook_that_already_asked_means_no_second_notice_for_the_same_claude_session() {
    one_client_session_is_asked_once("CLAUDE_CODE_SESSION_ID").await;
}

/// The Copilot CLI names its session in `COPILOT_AGENT_SESSION_ID`, the
/// same id its hooks' payloads carry as `sessionId`.
#[tokio::test]
async fn a_copilot_session_id_links_its_servers_like_claude_codes() {
    one_client_session_is_asked_once("COPILOT_AGENT_SESSION_ID").await;
}

// ---------------------------------------------------------------------------
// device_context and use_workspace

#[tokio::test]
async fn device_context_has_its_structured_fields() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "team"]);
    let dir = git_project(&env, "cloned");
    env.project_file(&dir, r#"{"workspace": "team"}"#);
    let shim = Spawn::new(&env, &dir).start().await;
    let ctx = shim.context().await;
    let keys: BTreeSet<&str> = ctx
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        BTreeSet::from([
            "workspace",
            "reason",
            "project",
            "proposal",
            "folder",
            "folder_meaning",
            "workspaces",
            "notes",
            "notice"
        ])
    );
    assert_eq!(ctx["workspace"], "default");
    assert_eq!(ctx["reason"], "active");
    assert_eq!(ctx["project"], dir.display().to_string());
    assert_eq!(ctx["proposal"], "team");
    // Only a default, with two workspaces: no folder for unqualified paths.
    assert_eq!(ctx["folder"], Value::Null);
    assert_eq!(ctx["workspaces"], json!(["default", "team"]));
    assert!(ctx["notes"].is_array());

    let plain = env.dir("plain");
    let other = Spawn::new(&env, &plain).start().await;
    let ctx = other.context().await;
    assert_eq!(ctx["project"], Value::Null);
    assert_eq!(ctx["proposal"], Value::Null);
    scratch_id(&env, &ctx["folder"]);
    shim.stop().await;
    other.stop().await;
}

#[tokio::test]
async fn use_workspace_repins_the_session_and_writes_the_project_file() {
    let env = TestEnv::new();
    let dir = git_project(&env, "proj");
    let shim = Spawn::new(&env, &dir).start().await;
    let (_, ctx) = shim.ok("device_context", json!({})).await;
    assert_eq!(ctx["reason"], "active");
    let (t, r) = shim.ok("use_workspace", json!({"name": "mine"})).await;
    assert_eq!(r["switched"], true, "{t}");
    assert_eq!(r["created"], true);
    assert!(t.contains("committing it"), "{t}");
    let file = dir.join(".berth").join("workspace.json");
    assert_eq!(r["project_file"], file.display().to_string());
    let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(written, json!({"workspace": "mine"}));
    let ctx = shim.context().await;
    assert_eq!(ctx["workspace"], "mine");
    assert_eq!(ctx["reason"], "project-file");
    assert_eq!(
        ctx["folder"],
        env.managed_home("mine").display().to_string()
    );
    // The device agrees, for every other client.
    let resolved = env.json_in(&dir, ["resolve"]);
    assert_eq!(resolved["workspace"], "mine");
    shim.stop().await;
}

#[tokio::test]
async fn an_overlap_changes_nothing_until_allow_overlap() {
    let env = TestEnv::new();
    let parent = env.dir("parent");
    berth(&env, &["workspace", "create", "other"]);
    berth(&env, &["root", "add", "other", parent.to_str().unwrap()]);
    let dir = git_project(&env, "parent/proj");
    let shim = Spawn::new(&env, &dir).start().await;
    assert_eq!(shim.context().await["workspace"], "other");
    let refused = shim.err("use_workspace", json!({"name": "mine"})).await;
    assert!(
        refused.contains("other"),
        "the refusal names the other workspace: {refused}"
    );
    assert!(
        refused.contains("allow_overlap: true") && !refused.contains("--allow-overlap"),
        "the refusal names the tool's argument, not the CLI flag: {refused}"
    );
    // The way to confirm is the daemon's hint: a line of the text, and in the structured content.
    let hint = "ask the user, then call use_workspace again with allow_overlap: true";
    assert!(refused.contains(&format!("\nHint: {hint}\n")), "{refused}");
    let r = shim.call("use_workspace", json!({"name": "mine"})).await;
    let s = r.structured_content.expect("structured content");
    assert_eq!(s["code"], "refused", "{s}");
    assert_eq!(s["hints"], json!([hint]), "{s}");
    assert!(!s["error"].as_str().unwrap().contains(hint), "{s}");
    assert!(
        !dir.join(".berth").exists(),
        "nothing may be written on a refusal"
    );
    let ctx = shim.context().await;
    assert_eq!(ctx["workspace"], "other");
    assert_eq!(ctx["reason"], "root");
    let (t, r) = shim
        .ok(
            "use_workspace",
            json!({"name": "mine", "allow_overlap": true}),
        )
        .await;
    assert_eq!(r["switched"], true, "{t}");
    assert!(dir.join(".berth").join("workspace.json").is_file());
    assert_eq!(shim.context().await["workspace"], "mine");
    shim.stop().await;
}

#[tokio::test]
async fn without_a_project_use_workspace_only_creates() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let (t, r) = shim.ok("use_workspace", json!({"name": "notes"})).await;
    assert_eq!(r["switched"], false, "{t}");
    assert_eq!(r["created"], true);
    assert_eq!(r["project_file"], Value::Null);
    assert!(
        r["outcome"]
            .as_str()
            .is_some_and(|o| o.contains("pass workspace \"notes\"")),
        "{t}"
    );
    assert!(!plain.join(".berth").exists());
    let ctx = shim.context().await;
    assert_eq!(ctx["workspace"], "default");
    assert_eq!(ctx["reason"], "active");
    assert!(berth_tests::names(&env.json(["workspace", "list"])).contains(&"notes".to_string()));
    shim.stop().await;
}

#[tokio::test]
async fn a_global_switch_does_not_move_a_running_session() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    assert_eq!(shim.context().await["workspace"], "default");
    berth(&env, &["workspace", "create", "other"]);
    berth(&env, &["workspace", "switch", "other"]);
    let ctx = shim.context().await;
    assert_eq!(ctx["workspace"], "default", "the running session moved");
    assert_eq!(ctx["reason"], "active");
    // A session started now takes the new active workspace.
    let fresh = Spawn::new(&env, &plain).start().await;
    assert_eq!(fresh.context().await["workspace"], "other");
    shim.stop().await;
    fresh.stop().await;
}

#[tokio::test]
async fn a_per_call_workspace_overrides_the_pin_for_that_call() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "other"]);
    let dir = approved_project(&env, "proj", "mine");
    let shim = Spawn::new(&env, &dir).start().await;
    let (_, ctx) = shim
        .ok("device_context", json!({"workspace": "other"}))
        .await;
    assert_eq!(ctx["workspace"], "other");
    assert_eq!(ctx["reason"], "argument");
    let (_, w) = shim
        .ok(
            "write",
            json!({"path": "n.txt", "content": "hi", "workspace": "other"}),
        )
        .await;
    assert_eq!(w["path"], "other/n.txt");
    assert!(env.managed_home("other").join("n.txt").is_file());
    assert!(!env.managed_home("mine").join("n.txt").exists());
    // Only that call: the pin stays.
    assert_eq!(shim.context().await["workspace"], "mine");
    let unknown = shim
        .err("device_context", json!({"workspace": "nope"}))
        .await;
    assert!(
        unknown.contains("default") && unknown.contains("mine"),
        "{unknown}"
    );
    shim.stop().await;
}

#[tokio::test]
async fn the_session_directory_comes_from_cwd_then_berth_cwd_then_claude_project_dir() {
    let env = TestEnv::new();
    let a = approved_project(&env, "a", "wa");
    let b = approved_project(&env, "b", "wb");
    let c = approved_project(&env, "c", "wc");
    let home = env.home();

    let s = Spawn::new(&env, &home)
        .arg("--cwd")
        .arg(a.to_str().unwrap())
        .var("BERTH_CWD", &b)
        .var("CLAUDE_PROJECT_DIR", &c)
        .start()
        .await;
    assert_eq!(ws(&s).await, "wa");
    s.stop().await;

    let s = Spawn::new(&env, &home)
        .var("BERTH_CWD", &b)
        .var("CLAUDE_PROJECT_DIR", &c)
        .start()
        .await;
    assert_eq!(ws(&s).await, "wb");
    s.stop().await;

    let s = Spawn::new(&env, &home)
        .var("CLAUDE_PROJECT_DIR", &c)
        .start()
        .await;
    assert_eq!(ws(&s).await, "wc");
    s.stop().await;

    let s = Spawn::new(&env, &a).start().await;
    assert_eq!(ws(&s).await, "wa");
    s.stop().await;

    // A relative --cwd is taken against the working directory; a template a
    // client left unexpanded is ignored.
    let s = Spawn::new(&env, env.root()).arg("--cwd=b").start().await;
    assert_eq!(ws(&s).await, "wb");
    s.stop().await;
    let s = Spawn::new(&env, &c)
        .arg("--cwd=${workspaceFolder}")
        .start()
        .await;
    assert_eq!(ws(&s).await, "wc");
    s.stop().await;
}

/// The session directory is the first one found (docs/reference.md, "Agent
/// sessions"): a `--cwd`, `BERTH_CWD` or `CLAUDE_PROJECT_DIR`
/// that is not an existing directory is skipped, named in a warning, for the
/// next one, down to the working directory; the session works and gets the
/// daemon's instructions.
#[tokio::test]
async fn a_session_directory_that_is_gone_or_a_file_is_skipped_for_the_next() {
    let env = TestEnv::new();
    let b = approved_project(&env, "b", "wb");
    let c = approved_project(&env, "c", "wc");
    let file = env.root().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let gone = env.root().join("does").join("not").join("exist");

    let s = Spawn::new(&env, env.home())
        .arg("--cwd")
        .arg(gone.to_str().unwrap())
        .var("BERTH_CWD", &b)
        .start()
        .await;
    assert_eq!(ws(&s).await, "wb");
    let log = s.log();
    assert!(
        log.contains(&format!("--cwd {} does not exist", gone.display())),
        "{log}"
    );
    s.stop().await;

    let s = Spawn::new(&env, env.home())
        .arg("--cwd")
        .arg(file.to_str().unwrap())
        .var("BERTH_CWD", &gone)
        .var("CLAUDE_PROJECT_DIR", &c)
        .start()
        .await;
    assert_eq!(ws(&s).await, "wc");
    let log = s.log();
    assert!(
        log.contains(&format!("--cwd {} is not a directory", file.display())),
        "{log}"
    );
    assert!(
        log.contains(&format!("BERTH_CWD {} does not exist", gone.display())),
        "{log}"
    );
    s.stop().await;

    // Nothing named exists: the working directory, and every call works.
    let s = Spawn::new(&env, &b)
        .arg("--cwd")
        .arg(gone.to_str().unwrap())
        .var("BERTH_CWD", &file)
        .var("CLAUDE_PROJECT_DIR", &gone)
        .start()
        .await;
    let instructions = s
        .client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(
        instructions.contains("Workspaces on this device:") && !instructions.contains("could not"),
        "{instructions}"
    );
    let (_, w) = s
        .ok("write", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(w["path"], "wb/a.txt");
    s.stop().await;
}

#[tokio::test]
async fn berth_workspace_and_extra_home_are_forwarded() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "pinned"]);
    let dir = approved_project(&env, "proj", "mine");
    let s = Spawn::new(&env, &dir)
        .var("BERTH_WORKSPACE", "pinned")
        .start()
        .await;
    let ctx = s.context().await;
    assert_eq!(ctx["workspace"], "pinned");
    assert_eq!(ctx["reason"], "env");
    s.stop().await;

    // BERTH_EXTRA_HOME: a project folder that is a home is no project.
    let extra = git_project(&env, "winhome");
    let s = Spawn::new(&env, &extra)
        .var("BERTH_EXTRA_HOME", &extra)
        .start()
        .await;
    assert_eq!(s.context().await["project"], Value::Null);
    s.stop().await;
}

/// docs/reference.md, "Resolution": a `BERTH_WORKSPACE` naming no workspace is an error, for the
/// calls it would answer; a tool's own `workspace` (rule 1) still answers, and `list_workspaces`
/// needs no workspace.
#[tokio::test]
async fn an_unknown_berth_workspace_fails_only_the_calls_it_would_answer() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = git_project(&env, "proj");
    let s = Spawn::new(&env, &dir)
        .var("BERTH_WORKSPACE", "nope")
        .start()
        .await;
    let refused = s.err("device_context", json!({})).await;
    assert!(
        refused.contains("no workspace nope — workspaces: default, work")
            && refused.contains("BERTH_WORKSPACE"),
        "{refused}"
    );
    let refused = s
        .err("write", json!({"path": "a.md", "content": "x"}))
        .await;
    assert!(refused.contains("no workspace nope"), "{refused}");
    let (_, ctx) = s.ok("device_context", json!({"workspace": "work"})).await;
    assert_eq!(ctx["workspace"], "work");
    assert_eq!(ctx["reason"], "argument");
    let _ = s
        .ok(
            "write",
            json!({"path": "a.md", "content": "x", "workspace": "work"}),
        )
        .await;
    assert!(
        env.data_dir()
            .join("workspaces")
            .join("work")
            .join("a.md")
            .is_file()
    );
    let (t, _) = s.ok("list_workspaces", json!({})).await;
    assert!(t.contains("work"), "{t}");
    // Once the workspace exists, the session answers with it.
    berth(&env, &["workspace", "create", "nope"]);
    let ctx = s.context().await;
    assert_eq!(ctx["workspace"], "nope");
    assert_eq!(ctx["reason"], "env");
    s.stop().await;
}

/// `use_workspace` under a `BERTH_WORKSPACE` pin writes the project file and approves the
/// folder, but the pin (rule 2) still outranks the file (rule 3): it must not claim a switch.
#[tokio::test]
async fn use_workspace_under_an_env_pin_says_the_session_stays() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "pinned"]);
    let dir = git_project(&env, "proj");
    let s = Spawn::new(&env, &dir)
        .var("BERTH_WORKSPACE", "pinned")
        .start()
        .await;
    let (t, r) = s.ok("use_workspace", json!({"name": "mine"})).await;
    assert_eq!(r["switched"], false, "{t}");
    assert!(t.contains("stays on workspace pinned"), "{t}");
    assert!(dir.join(".berth").join("workspace.json").is_file());
    let ctx = s.context().await;
    assert_eq!(ctx["workspace"], "pinned");
    assert_eq!(ctx["reason"], "env");
    s.stop().await;
}

// ---------------------------------------------------------------------------
// Daemon restarts

#[tokio::test]
async fn a_kill_9_of_the_daemon_mid_session_is_survived_with_the_same_id_and_pin() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let before = shim.context().await;
    let id = scratch_id(&env, &before["folder"]);
    shim.ok("write", json!({"path": "keep.txt", "content": "kept"}))
        .await;
    // The active workspace moves: a re-resolution would now say "other".
    berth(&env, &["workspace", "create", "other"]);
    berth(&env, &["workspace", "switch", "other"]);
    let old = env.daemon_pid();
    berth_tests::kill(old);
    env.wait_no_daemon(Duration::from_secs(10));

    // The shim starts the daemon again and re-registers, unseen.
    let after = shim.context().await;
    assert_eq!(scratch_id(&env, &after["folder"]), id, "a new session id");
    assert_eq!(after["workspace"], "default", "the pin was lost");
    assert_eq!(after["reason"], "active");
    let (_, read) = shim.ok("read", json!({"path": "keep.txt"})).await;
    assert_eq!(read["content"], "kept");
    let new = env.daemon_pid();
    assert_ne!(new, old);
    shim.stop().await;
}

#[tokio::test]
async fn a_daemon_restarted_by_someone_else_gets_the_session_back() {
    let env = TestEnv::new();
    let dir = git_project(&env, "proj");
    let shim = Spawn::new(&env, &dir).start().await;
    shim.ok("use_workspace", json!({"name": "mine"})).await;
    let old = env.daemon_pid();
    berth_tests::kill(old);
    env.wait_no_daemon(Duration::from_secs(10));
    // The CLI starts the new daemon; it has never heard of this session.
    berth(&env, &["workspace", "list"]);
    let ctx = shim.context().await;
    assert_eq!(ctx["workspace"], "mine");
    assert_eq!(ctx["reason"], "project-file");
    let (_, w) = shim
        .ok("write", json!({"path": "x.md", "content": "1"}))
        .await;
    assert_eq!(w["path"], "mine/x.md");
    shim.stop().await;
}

/// docs/reference.md, "Scratch folders": a scratch folder goes only once its session has ended. A
/// daemon restart is not an end: the restarted daemon's sweep keeps the folder of a shim that still
/// runs, even with no grace period at all, and the session reads its file back.
#[tokio::test]
async fn a_daemon_restart_keeps_a_running_sessions_scratch_folder() {
    let env = TestEnv::new();
    berth(&env, &["setting", "set", "scratch.keep_hours", "0"]);
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let _ = shim
        .ok("write", json!({"path": "keep.md", "content": "precious"}))
        .await;
    let id = scratch_id(&env, &shim.context().await["folder"]);
    let file = env.data_dir().join("scratch").join(&id).join("keep.md");
    berth(&env, &["daemon", "stop"]);
    env.wait_no_daemon(Duration::from_secs(10));
    // The new daemon sweeps at start, before this shim has said anything to it.
    berth(&env, &["daemon", "start"]);
    let swept_twice = || {
        (env.log().matches("scratch sweep done").count() >= 2)
            .then_some(())
            .ok_or(())
    };
    assert!(
        berth_tests::wait_until(Duration::from_secs(10), swept_twice).is_ok(),
        "{}",
        env.log()
    );
    assert!(
        file.is_file(),
        "the restart swept a running session's scratch folder"
    );
    let (t, _) = shim.ok("read", json!({"path": "keep.md"})).await;
    assert!(t.contains("precious"), "{t}");
    shim.stop().await;
}

#[tokio::test]
async fn the_daemon_learns_when_the_session_ends() {
    let env = TestEnv::new();
    let shim = Spawn::new(&env, env.home()).start().await;
    let id = scratch_id(&env, &shim.context().await["folder"]);
    shim.stop().await;
    let ended = berth_tests::wait_until(Duration::from_secs(10), || {
        let db = rusqlite::Connection::open_with_flags(
            env.db(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .map_err(|e| e.to_string())?;
        let ended: Option<i64> = db
            .query_row("SELECT ended_at FROM sessions WHERE id = ?1", [&id], |r| {
                r.get(0)
            })
            .map_err(|e| e.to_string())?;
        ended.ok_or_else(|| "not ended yet".to_string())
    });
    assert!(ended.is_ok(), "the session never ended: {ended:?}");
}

// ---------------------------------------------------------------------------
// File tools through MCP

#[tokio::test]
async fn qualified_writes_and_reads_round_trip_across_workspaces() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "a"]);
    berth(&env, &["workspace", "create", "b"]);
    let dir = approved_project(&env, "proj", "a");
    let shim = Spawn::new(&env, &dir).start().await;
    let (_, w) = shim
        .ok("write", json!({"path": "b/notes/x.md", "content": "in b"}))
        .await;
    assert_eq!(w["path"], "b/notes/x.md");
    assert_eq!(
        std::fs::read_to_string(env.managed_home("b").join("notes").join("x.md")).unwrap(),
        "in b"
    );
    let (t, r) = shim.ok("read", json!({"path": "b/notes/x.md"})).await;
    assert_eq!(r["content"], "in b", "{t}");
    assert_eq!(r["path"], "b/notes/x.md");
    shim.ok("write", json!({"path": "a/y.md", "content": "in a"}))
        .await;
    let (_, r) = shim.ok("read", json!({"path": "y.md"})).await;
    assert_eq!(
        r["content"], "in a",
        "an unqualified read is in the session's own home"
    );
    // `ls /` lists the workspaces; listings are qualified.
    let (t, root) = shim.ok("ls", json!({"path": "/"})).await;
    let names: Vec<&str> = root["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "default"], "{t}");
    let (_, l) = shim.ok("ls", json!({"path": "b/"})).await;
    assert_eq!(l["entries"][0]["path"], "b/notes/", "{l}");
    shim.stop().await;
}

#[tokio::test]
async fn an_unqualified_write_in_an_approved_project_lands_in_its_home() {
    let env = TestEnv::new();
    let dir = approved_project(&env, "proj", "mine");
    let shim = Spawn::new(&env, &dir).start().await;
    let (t, w) = shim
        .ok("write", json!({"path": "todo.md", "content": "- a"}))
        .await;
    assert_eq!(w["path"], "mine/todo.md", "{t}");
    assert_eq!(
        std::fs::read_to_string(env.managed_home("mine").join("todo.md")).unwrap(),
        "- a"
    );
    assert!(!dir.join("todo.md").exists(), "written into the project");
    shim.stop().await;
}

#[tokio::test]
async fn an_unqualified_write_without_a_project_lands_in_the_scratch_folder() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "other"]);
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let id = scratch_id(&env, &shim.context().await["folder"]);
    let (_, w) = shim
        .ok("write", json!({"path": "t.txt", "content": "scratch"}))
        .await;
    assert_eq!(w["path"], "./t.txt");
    let file = env.data_dir().join("scratch").join(&id).join("t.txt");
    assert_eq!(std::fs::read_to_string(file).unwrap(), "scratch");
    for ws in ["default", "other"] {
        assert!(
            !env.managed_home(ws).join("t.txt").exists(),
            "leaked into {ws}"
        );
    }
    assert!(!plain.join("t.txt").exists());
    shim.stop().await;
}

#[tokio::test]
async fn an_unqualified_path_is_refused_when_the_workspace_is_only_a_default() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = git_project(&env, "proj");
    let shim = Spawn::new(&env, &dir).start().await;
    shim.ok("device_context", json!({})).await; // the notice goes first
    let t = shim
        .err("write", json!({"path": "plans/x.md", "content": "?"}))
        .await;
    assert!(
        t.starts_with("no workspace plans — workspaces: default, work;"),
        "{t}"
    );
    for ws in ["default", "work"] {
        assert!(!env.managed_home(ws).join("plans").exists());
    }
    assert!(!dir.join("plans").exists());
    shim.stop().await;
}

// Creating a symbolic link takes a privilege on Windows.
#[cfg(unix)]
#[tokio::test]
async fn symlink_and_dotdot_escapes_are_refused_and_nothing_outside_is_touched() {
    let env = TestEnv::new();
    let dir = approved_project(&env, "proj", "mine");
    let outside = env.dir("outside");
    std::fs::write(outside.join("secret.txt"), "TOPSECRET").unwrap();
    let shim = Spawn::new(&env, &dir).start().await;
    shim.ok("write", json!({"path": "ok.txt", "content": "fine"}))
        .await;
    let home = env.managed_home("mine");
    std::os::unix::fs::symlink(&outside, home.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), home.join("s.txt")).unwrap();

    let mut said = String::new();
    for (tool, args) in [
        ("read", json!({"path": "out/secret.txt"})),
        ("read", json!({"path": "mine/out/secret.txt"})),
        ("read", json!({"path": "s.txt"})),
        ("read", json!({"path": "../../outside/secret.txt"})),
        ("read", json!({"path": "mine/../../../outside/secret.txt"})),
        (
            "read",
            json!({"path": outside.join("secret.txt").to_str().unwrap()}),
        ),
        ("ls", json!({"path": "out"})),
        ("search", json!({"query": "TOPSEC", "path": "out"})),
        ("write", json!({"path": "out/new.txt", "content": "x"})),
        ("write", json!({"path": "../escape.txt", "content": "x"})),
        ("edit", json!({"path": "s.txt", "old": "TOP", "new": "NOT"})),
        (
            "move",
            json!({"from": "out/secret.txt", "to": "stolen.txt"}),
        ),
        ("move", json!({"from": "ok.txt", "to": "out/planted.txt"})),
        ("delete", json!({"path": "out/secret.txt"})),
    ] {
        said.push_str(&shim.err(tool, args).await);
    }
    // Writing over the link replaces the link itself (an atomic rename in
    // the home), never the file it points to.
    let r = shim
        .call("write", json!({"path": "s.txt", "content": "overwritten"}))
        .await;
    said.push_str(&text(&r));
    if r.is_error != Some(true) {
        assert!(!home.join("s.txt").is_symlink());
        std::fs::remove_file(home.join("s.txt")).unwrap();
    }
    // A search of the home itself must not follow the link either.
    let (t, _) = shim.ok("search", json!({"query": "TOPSEC"})).await;
    said.push_str(&t);
    assert!(!said.contains("TOPSECRET"), "a secret leaked: {said}");
    let mut names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["secret.txt"], "something was written outside");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "TOPSECRET"
    );
    assert!(!env.root().join("escape.txt").exists());
    assert!(!env.data_dir().join("escape.txt").exists());
    assert!(
        !env.data_dir()
            .join("workspaces")
            .join("escape.txt")
            .exists()
    );
    shim.stop().await;
}

#[tokio::test]
async fn edit_move_delete_and_search_return_qualified_paths() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "other"]);
    let dir = approved_project(&env, "proj", "mine");
    let shim = Spawn::new(&env, &dir).start().await;
    shim.ok(
        "write",
        json!({"path": "a.txt", "content": "hello world\n"}),
    )
    .await;
    let (_, e) = shim
        .ok(
            "edit",
            json!({"path": "a.txt", "old": "world", "new": "berth"}),
        )
        .await;
    assert_eq!(e["path"], "mine/a.txt");
    let (_, r) = shim.ok("read", json!({"path": "mine/a.txt"})).await;
    assert_eq!(r["content"], "hello berth\n");
    let (t, s) = shim
        .ok("search", json!({"query": "berth", "path": "mine/"}))
        .await;
    assert_eq!(s["matches"][0]["path"], "mine/a.txt", "{t}");
    assert_eq!(s["matches"][0]["line"], 1, "{t}");
    assert_eq!(s["matches"][0]["text"], "hello berth", "{t}");
    let (_, s) = shim.ok("search", json!({"query": "berth"})).await;
    assert_eq!(s["matches"][0]["path"], "mine/a.txt");
    let (_, m) = shim
        .ok("move", json!({"from": "a.txt", "to": "other/b.txt"}))
        .await;
    assert_eq!(m["from"], "mine/a.txt");
    assert_eq!(m["to"], "other/b.txt");
    assert!(!env.managed_home("mine").join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(env.managed_home("other").join("b.txt")).unwrap(),
        "hello berth\n"
    );
    let (_, d) = shim.ok("delete", json!({"path": "other/b.txt"})).await;
    assert_eq!(d["path"], "other/b.txt");
    assert!(!env.managed_home("other").join("b.txt").exists());
    let gone = shim.err("read", json!({"path": "other/b.txt"})).await;
    assert!(gone.contains("other/b.txt"), "{gone}");
    shim.stop().await;
}

#[tokio::test]
async fn a_write_past_the_size_limit_gets_berths_own_refusal_and_a_large_one_works() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let big = "x".repeat(5 * 1024 * 1024);
    let r = shim
        .call("write", json!({"path": "default/big.txt", "content": big}))
        .await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(t.contains("MiB"), "{t}");
    assert!(!env.managed_home("default").join("big.txt").exists());
    // Just under the limit: written and read back whole.
    let near = "y".repeat(4 * 1024 * 1024 - 16);
    shim.ok(
        "write",
        json!({"path": "default/near.txt", "content": near}),
    )
    .await;
    let (_, read) = shim.ok("read", json!({"path": "default/near.txt"})).await;
    assert_eq!(read["content"].as_str().map(str::len), Some(near.len()));
    shim.stop().await;
}

// ---------------------------------------------------------------------------
// Bounded connections

/// The daemon closes connections it reads nothing from for its idle
/// timeout, and pings four times as often: a session's connection, idle
/// longer than the timeout, acks the pings and stays open. The timeout has
/// passed once a silent connection opened after the session's is closed.
// A raw connection to the daemon's Unix socket stands for the silent one.
#[cfg(unix)]
#[tokio::test]
async fn a_session_idle_past_the_daemons_idle_timeout_keeps_its_connection() {
    use std::io::Read;
    let env = TestEnv::new();
    let mut cmd = env.command(berth_tests::bin("berthd"));
    cmd.args(["--idle-timeout", "2"]);
    let _ = env.run(cmd).success();
    let shim = Spawn::new(&env, env.home()).start().await;
    let before = shim.context().await;
    let mut silent = std::os::unix::net::UnixStream::connect(env.socket()).expect("connect");
    // Only a bound on a broken run: the daemon closes it after one idle timeout.
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let closed = tokio::task::spawn_blocking(move || silent.read(&mut [0u8; 64]))
        .await
        .unwrap();
    assert!(
        matches!(closed, Ok(0)),
        "the silent connection was not closed by the idle timeout: {closed:?}"
    );
    assert_eq!(shim.context().await["workspace"], before["workspace"]);
    let daemon_log = env.log();
    let closed: usize = daemon_log
        .lines()
        .filter(|l| l.contains("closed idle connections"))
        .filter_map(|l| {
            l.split("closed=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum();
    assert_eq!(
        closed, 1,
        "the daemon closed another connection than the silent one:\n{daemon_log}"
    );
    assert!(
        !shim.log().contains("reconnecting"),
        "the session lost its connection:\n{}",
        shim.log()
    );
    shim.stop().await;
}

// ---------------------------------------------------------------------------
// Hostile names

/// A project folder and a file whose names hold terminal escapes, a bell, a
/// carriage return and a line break: the text blocks show them escaped, the
/// structured content keeps them exact.
// Windows file names cannot hold control characters.
#[cfg(unix)]
#[tokio::test]
async fn control_characters_in_paths_and_names_are_escaped_in_text_blocks() {
    const EVIL: &str = "evil\u{1b}[31mRED\u{1b}]0;TITLE\u{7}\rCR\nLF";
    const SHOWN: &str = "evil\\u{1b}[31mRED\\u{1b}]0;TITLE\\u{7}\\rCR\\nLF";
    let raw = |t: &str| t.chars().any(|c| c.is_control() && c != '\n');
    let env = TestEnv::new();
    let dir = git_project(&env, &format!("proj/{EVIL}"));
    env.project_file(&dir, r#"{"workspace": 7}"#);
    let home = env.managed_home("default");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(format!("file-{EVIL}")), "x").unwrap();
    let shim = Spawn::new(&env, &dir).start().await;

    // The first result carries the notice and the note, both quoting the project.
    let (first, ctx) = shim.ok("device_context", json!({})).await;
    assert!(!raw(&first), "{first:?}");
    let shown = dir.display().to_string().replace(EVIL, SHOWN);
    assert!(first.contains(&format!("The project {shown} ")), "{first}");
    assert!(
        json_block(&first).contains("\"project\":\"")
            && json_block(&first).contains("\\u001b[31mRED"),
        "{first}"
    );
    assert!(!first.lines().any(|l| l.starts_with("LF")), "{first}");
    assert_eq!(ctx["project"], json!(dir), "structured content is exact");

    let (listing, entries) = shim.ok("ls", json!({"path": "default/"})).await;
    assert!(!raw(&listing), "{listing:?}");
    assert_eq!(
        serde_json::from_str::<Value>(json_block(&listing)).unwrap(),
        entries,
        "the text is the structured content as JSON"
    );
    assert_eq!(
        entries["entries"][0]["path"],
        json!(format!("default/file-{EVIL}")),
        "structured content is exact, so the path can be quoted back"
    );
    let refused = shim
        .err("read", json!({"path": format!("default/gone-{EVIL}")}))
        .await;
    assert!(!raw(&refused), "{refused:?}");
    assert!(refused.contains(&format!("gone-{SHOWN}")), "{refused}");
    shim.stop().await;
}

// ---------------------------------------------------------------------------
// Unknown first segments

/// A mistyped workspace name never becomes a new folder: an unqualified path
/// whose first segment is neither a workspace nor an entry of the session's
/// folder is refused for `write`, `move` targets and `ls`.
#[tokio::test]
async fn an_unknown_first_segment_is_refused_not_created() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "alpha"]);
    let dir = approved_project(&env, "proj", "mine");
    let home = env.managed_home("mine");
    let shim = Spawn::new(&env, &dir).start().await;
    shim.ok("device_context", json!({})).await;

    let refused = shim
        .err("write", json!({"path": "alpah/notes/x.md", "content": "x"}))
        .await;
    assert!(
        refused.contains("no workspace alpah — workspaces: alpha, default, mine"),
        "{refused}"
    );
    assert!(refused.contains("./alpah/notes/x.md"), "{refused}");
    assert!(!home.join("alpah").exists(), "the typo became a folder");

    let listed = shim.err("ls", json!({"path": "nosuchws"})).await;
    assert!(
        listed.contains("no workspace nosuchws — workspaces:"),
        "{listed}"
    );

    shim.ok("write", json!({"path": "a.md", "content": "a"}))
        .await;
    let moved = shim
        .err("move", json!({"from": "a.md", "to": "alpah/a.md"}))
        .await;
    assert!(moved.contains("no workspace alpah"), "{moved}");
    assert!(home.join("a.md").exists(), "the source was moved anyway");

    // Under an existing folder, and on purpose with ./, paths work as before.
    std::fs::create_dir_all(home.join("plans")).unwrap();
    let (_, w) = shim
        .ok("write", json!({"path": "plans/b.md", "content": "b"}))
        .await;
    assert_eq!(w["path"], "mine/plans/b.md");
    let (_, l) = shim.ok("ls", json!({"path": "plans"})).await;
    assert_eq!(l["entries"][0]["path"], "mine/plans/b.md", "{l}");
    let (_, w) = shim
        .ok(
            "write",
            json!({"path": "./alpah/notes/x.md", "content": "x"}),
        )
        .await;
    assert_eq!(w["path"], "mine/alpah/notes/x.md");
    assert!(home.join("alpah").join("notes").join("x.md").exists());
    // Now that the folder exists, the unqualified path reaches it.
    shim.ok("ls", json!({"path": "alpah/notes"})).await;
    shim.ok("move", json!({"from": "a.md", "to": "alpah/a.md"}))
        .await;
    shim.stop().await;
}

// ---------------------------------------------------------------------------
// What the model sees: structured content, schemas, argument errors

/// The notice, the notes and what `folder` means reach a client that reads
/// only structured content (Claude Code passes the model nothing else).
#[tokio::test]
async fn the_notice_and_notes_are_in_the_structured_content_of_the_first_result() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "work"]);
    let dir = git_project(&env, "proj");
    std::fs::create_dir_all(dir.join("sub").join(".berth")).unwrap();
    let sub = dir.join("sub");
    std::fs::write(sub.join(".berth").join("workspace.json"), "not json").unwrap();
    let shim = Spawn::new(&env, &sub).start().await;
    let (_, first) = shim.ok("list_workspaces", json!({})).await;
    let notice = first["notice"].as_str().expect("a notice field");
    assert!(notice.contains("is not assigned"), "{first}");
    assert!(notice.contains("call use_workspace"), "{first}");
    let notes = first["notes"].as_array().expect("a notes field");
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains("workspace.json"))),
        "{first}"
    );
    let (_, second) = shim.ok("list_workspaces", json!({})).await;
    assert_eq!(second.get("notice"), None, "notice repeated: {second}");
    assert_eq!(second["notes"], json!([]), "{second}");
    let ctx = shim.context().await;
    assert_eq!(ctx["folder"], Value::Null);
    assert!(
        ctx["folder_meaning"]
            .as_str()
            .is_some_and(|m| m.starts_with("none:") && m.contains("<workspace>/<path>")),
        "{ctx}"
    );
    shim.stop().await;

    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let ctx = shim.context().await;
    assert!(
        ctx["folder_meaning"]
            .as_str()
            .is_some_and(|m| m.contains("scratch") && m.contains("temporary")),
        "{ctx}"
    );
    shim.stop().await;
}

/// A session whose first result never reached its client (the daemon died
/// before the first call) still owes the notice: the daemon that re-adopts
/// it must not count it as asked.
#[tokio::test]
async fn a_session_is_not_counted_as_asked_before_a_result_went_out() {
    let env = TestEnv::new();
    let dir = git_project(&env, "proj");
    let shim = Spawn::new(&env, &dir).start().await;
    // Registered at start-up (the shim holds the id); no tool call yet.
    wait_registered(&shim);
    let id = the_only_session(&env);
    berth_tests::kill(env.daemon_pid());
    env.wait_no_daemon(Duration::from_secs(10));
    let (_, first) = shim.ok("list_workspaces", json!({})).await;
    assert!(
        first["notice"]
            .as_str()
            .is_some_and(|n| n.contains("use_workspace")),
        "the notice was lost with the daemon: {first}"
    );
    assert_eq!(the_only_session(&env), id, "the session was re-adopted");
    let (_, second) = shim.ok("list_workspaces", json!({})).await;
    assert_eq!(second.get("notice"), None, "{second}");
    shim.stop().await;
}

/// No tool declares an `outputSchema`, yet every result, done or failed,
/// has structured content that validates against the whole schema of its
/// result types; the text's JSON block is the structured content.
#[tokio::test]
async fn every_result_has_structured_content_that_matches_its_types() {
    let env = TestEnv::new();
    berth(&env, &["workspace", "create", "alpha"]);
    let dir = approved_project(&env, "proj", "mine");
    std::fs::create_dir_all(dir.join("ignored").join(".berth")).unwrap();
    let shim = Spawn::new(&env, &dir).start().await;
    let tools = shim.client.list_all_tools().await.expect("tools/list");
    let mut validators = std::collections::BTreeMap::new();
    for tool in &tools {
        let table = berth_vocab::tools::Tool::from_name(&tool.name).unwrap();
        let whole = jsonschema::validator_for(&Value::Object(table.result_schema()))
            .unwrap_or_else(|e| panic!("{}: not a valid result schema: {e}", tool.name));
        validators.insert(tool.name.to_string(), whole);
    }
    let calls = [
        ("device_context", json!({})),
        ("device_context", json!({"workspace": "nosuch"})),
        ("list_workspaces", json!({})),
        ("use_workspace", json!({"name": "mine"})),
        ("use_workspace", json!({})),
        ("write", json!({"path": "a.md", "content": "hello"})),
        ("write", json!({"path": "alpah/x.md", "content": "x"})),
        ("ls", json!({"path": "/"})),
        ("ls", json!({"path": "./"})),
        ("ls", json!({"path": "nosuchws"})),
        ("read", json!({"path": "a.md"})),
        ("read", json!({"path": 7})),
        ("edit", json!({"path": "a.md", "old": "hello", "new": "hi"})),
        ("edit", json!({"path": "a.md", "old": "absent", "new": "x"})),
        ("search", json!({"query": "hi"})),
        ("move", json!({"from": "a.md", "to": "alpha/b.md"})),
        ("delete", json!({"path": "alpha/b.md"})),
        ("delete", json!({"path": "alpha/b.md"})),
    ];
    for (tool, args) in calls {
        let r = shim.call(tool, args.clone()).await;
        let structured = r
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{tool} {args}: no structured content"));
        let errors: Vec<String> = validators[tool]
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{tool} {args}: {structured} does not match its schema: {errors:?}"
        );
        let t = text(&r);
        assert_eq!(
            serde_json::from_str::<Value>(json_block(&t)).unwrap(),
            structured,
            "{tool} {args}: the last text block is not the structured content"
        );
        if r.is_error == Some(true) {
            assert!(structured["code"].is_string(), "{structured}");
            assert!(structured["error"].is_string(), "{structured}");
        }
    }
    shim.stop().await;
}

/// A missing or mistyped argument is a tool error (the model reads it) with a
/// stable code, naming the argument and showing a correct call, which itself
/// matches the tool's input schema.
#[tokio::test]
async fn argument_errors_are_tool_errors_with_a_code_and_a_correct_call() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let shim = Spawn::new(&env, &plain).start().await;
    let tools = shim.client.list_all_tools().await.expect("tools/list");
    let cases = [
        ("use_workspace", json!({}), "missing argument `name`"),
        ("ls", json!({}), "missing argument `path`"),
        ("read", json!({}), "missing argument `path`"),
        (
            "write",
            json!({"path": "a.md"}),
            "missing argument `content`",
        ),
        (
            "edit",
            json!({"path": "a.md", "old": "x"}),
            "missing argument `new`",
        ),
        ("move", json!({"from": "a.md"}), "missing argument `to`"),
        ("delete", json!({"path": null}), "missing argument `path`"),
        ("search", json!({"path": "./"}), "missing argument `query`"),
        (
            "write",
            json!({"path": 7, "content": "x"}),
            "argument `path` must be a string, not 7",
        ),
        (
            "use_workspace",
            json!({"name": "x", "allow_overlap": "yes"}),
            "argument `allow_overlap` must be true or false",
        ),
        (
            "device_context",
            json!({"workspace": 1}),
            "argument `workspace` must be a string",
        ),
    ];
    for (tool, args, says) in cases {
        let r = shim.call(tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args}");
        let s = r.structured_content.clone().expect("structured content");
        assert_eq!(s["code"], "bad-argument", "{tool} {args}: {s}");
        let error = s["error"].as_str().unwrap();
        assert!(error.starts_with(&format!("{tool}: {says}")), "{error}");
        assert!(!error.contains("deserialize"), "{error}");
        let (_, example) = error
            .split_once(&format!("A correct call: {tool} "))
            .unwrap_or_else(|| panic!("no correct call shown: {error}"));
        let example: Value = serde_json::from_str(example).expect("the call is JSON");
        let input = tools.iter().find(|t| t.name == tool).unwrap();
        let schema = Value::Object(input.input_schema.as_ref().clone());
        assert!(
            jsonschema::is_valid(&schema, &example),
            "{tool}: the correct call {example} does not match the input schema {schema}"
        );
    }
    // The shown call works as it is.
    shim.ok(
        "write",
        json!({"path": "./todo.md", "content": "- buy milk"}),
    )
    .await;
    shim.ok("read", json!({"path": "./todo.md"})).await;
    shim.stop().await;
}

/// Waits until the shim has registered its session at start-up.
fn wait_registered(shim: &Shim) {
    let registered = berth_tests::wait_until(Duration::from_secs(10), || {
        shim.log()
            .contains("session registered")
            .then_some(())
            .ok_or(())
    });
    assert!(
        registered.is_ok(),
        "the shim never registered its session:\n{}",
        shim.log()
    );
}

fn the_only_session(env: &TestEnv) -> String {
    let ids = sessions_in_store(env);
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.into_iter().next().unwrap()
}

/// The ids of the sessions the store holds.
fn sessions_in_store(env: &TestEnv) -> Vec<String> {
    let Ok(db) =
        rusqlite::Connection::open_with_flags(env.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return Vec::new();
    };
    let Ok(mut q) = db.prepare("SELECT id FROM sessions") else {
        return Vec::new();
    };
    q.query_map([], |r| r.get(0))
        .map(|rows| rows.filter_map(Result::ok).collect())
        .unwrap_or_default()
}
