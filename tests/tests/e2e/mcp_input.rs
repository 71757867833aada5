//! Malformed MCP input, as raw bytes on the real `berth-mcp`'s stdin: each
//! line JSON-RPC answers gets exactly one error, with the right code and id,
//! before the next line is served; a notification or response gets none; a
//! line past the length bound is discarded as it streams, answered with its
//! id, and the shim reads on from the next newline
//! (docs/decisions/0040-malformed-mcp-input-gets-a-json-rpc-error.md).
//!
//! Every wait is bounded: a missing answer fails the test, it never hangs.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use berth_tests::{TestEnv, bin};
use serde_json::{Value, json};

/// How long any one answer may take: far more than an ordinary one.
const ANSWER_WAIT: Duration = Duration::from_secs(30);

/// The shim's line bound (berth_proto::MAX_MESSAGE_BYTES, which
/// docs/reference.md states as 32 MiB).
const LINE_BOUND: usize = 32 * 1024 * 1024;

/// A `berth-mcp` spoken to in raw bytes.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    log: PathBuf,
    next_ping: u64,
}

impl Raw {
    /// Starts the shim in `dir` and completes the `initialize` handshake.
    fn start(env: &TestEnv, dir: &Path) -> Raw {
        let log = env.root().join("berth-mcp.log");
        let mut child = env
            .command(bin("berth-mcp"))
            .current_dir(dir)
            .env("BERTH_LOG", "berth_mcp=debug,rmcp=warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("shim log"))
            .spawn()
            .expect("spawn berth-mcp");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let lines = berth_tests::mcp::stdout_lines(stdout);
        let mut raw = Raw {
            child,
            stdin,
            lines,
            log,
            next_ping: 1000,
        };
        raw.send(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        );
        let said = raw.until_id(&json!(1));
        assert!(
            said.last().unwrap()["result"]["serverInfo"].is_object(),
            "{said:?}"
        );
        raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    /// Writes `line` and its newline.
    fn send(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("write to berth-mcp");
        stdin.write_all(b"\n").expect("write to berth-mcp");
        stdin.flush().expect("flush to berth-mcp");
    }

    /// The next line the shim writes, as JSON; fails after [`ANSWER_WAIT`].
    fn next(&mut self) -> Value {
        match self.lines.recv_timeout(ANSWER_WAIT) {
            Ok(line) => serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("berth-mcp wrote a line that is not JSON ({e}): {line}")
            }),
            Err(_) => {
                let _ = self.child.kill();
                panic!(
                    "no answer from berth-mcp within {ANSWER_WAIT:?}\n--- its log ---\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                )
            }
        }
    }

    /// Every line up to and including the answer with this id.
    fn until_id(&mut self, id: &Value) -> Vec<Value> {
        let mut said = Vec::new();
        loop {
            let line = self.next();
            let done = line.get("id") == Some(id);
            said.push(line);
            if done {
                return said;
            }
        }
    }

    /// Sends a `ping` and returns what the shim wrote before its answer,
    /// checking that the answer came.
    fn ping(&mut self) -> Vec<Value> {
        self.next_ping += 1;
        let id = json!(self.next_ping);
        self.send(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
        let mut said = self.until_id(&id);
        let pong = said.pop().unwrap();
        assert_eq!(pong["result"], json!({}), "{pong}");
        said
    }

    /// What the shim answers to `line`: everything it writes before the
    /// answer to a `ping` sent right after it, which must come.
    fn answers_to(&mut self, line: &[u8]) -> Vec<Value> {
        self.send(line);
        self.ping()
    }

    /// The shim's peak resident memory, from /proc.
    #[cfg(target_os = "linux")]
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read the shim's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc status")
    }

    /// Closes stdin and checks that the shim exits cleanly.
    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self
            .child
            .wait()
            .expect("berth-mcp exits when stdin closes");
        assert!(
            status.success(),
            "{status}\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }
}

/// Checks that `said` is exactly one JSON-RPC error with `code` and `id`.
fn one_error(line: &str, said: &[Value], code: i64, id: &Value) {
    assert_eq!(said.len(), 1, "{line}: answered {said:?}");
    let e = &said[0];
    assert_eq!(e["jsonrpc"], "2.0", "{line}: {e}");
    assert_eq!(e["error"]["code"], code, "{line}: {e}");
    // JSON-RPC 2.0: an id that could not be read is null, not left out.
    assert_eq!(e.get("id"), Some(id), "{line}: {e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{line}: {e}"
    );
}

/// Each malformed line gets one error: a parse error (id null) for bytes
/// that are not JSON, an invalid request with the message's id for JSON that
/// is no valid request; and the shim goes on answering.
#[test]
fn each_malformed_line_gets_one_json_rpc_error_and_the_shim_keeps_serving() {
    let env = TestEnv::new();
    let mut raw = Raw::start(&env, &env.home());
    let nested = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"ls","arguments":{{"path":{}}}}}}}"#,
        "[".repeat(100_000) + &"]".repeat(100_000)
    );
    let null = Value::Null;
    let cases: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}".to_vec(),
            -32700,
            null.clone(),
        ),
        (
            "an escaped lone surrogate",
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ls","arguments":{"path":"\ud800"}}}"#.to_vec(),
            -32700,
            null.clone(),
        ),
        (
            "a raw surrogate (ED A0 80)",
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"ls\",\"arguments\":{\"path\":\"\xed\xa0\x80\"}}}".to_vec(),
            -32700,
            null.clone(),
        ),
        ("a line that is not JSON", b"this is not JSON".to_vec(), -32700, null.clone()),
        ("100,000 levels of nesting", nested.into_bytes(), -32700, null.clone()),
        (
            "a method that is no string",
            br#"{"jsonrpc":"2.0","id":41,"method":7}"#.to_vec(),
            -32600,
            json!(41),
        ),
        (
            "no \"jsonrpc\"",
            br#"{"id":"q-42","method":"ping"}"#.to_vec(),
            -32600,
            json!("q-42"),
        ),
        (
            "params that are no object",
            br#"{"jsonrpc":"2.0","id":43,"method":"tools/call","params":"ls"}"#.to_vec(),
            -32600,
            json!(43),
        ),
        (
            "an id JSON-RPC does not allow",
            br#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#.to_vec(),
            -32600,
            null.clone(),
        ),
        ("a bare number", b"42".to_vec(), -32600, null.clone()),
        ("an empty batch", b"[]".to_vec(), -32600, null.clone()),
    ];
    for (what, line, code, id) in &cases {
        let said = raw.answers_to(line);
        one_error(what, &said, *code, id);
    }
    // A batch: one error per request, in one array (MCP took batches out).
    let said = raw.answers_to(
        br#"[{"jsonrpc":"2.0","id":51,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]"#,
    );
    assert_eq!(said.len(), 1, "{said:?}");
    let errors = said[0]
        .as_array()
        .expect("a batch is answered with an array");
    let ids: Vec<&Value> = errors.iter().map(|e| &e["id"]).collect();
    assert_eq!(ids, [&json!(51), &json!("b")], "{errors:?}");
    assert!(
        errors.iter().all(|e| e["error"]["code"] == -32600),
        "{errors:?}"
    );
    // The session still works.
    raw.send(br#"{"jsonrpc":"2.0","id":60,"method":"tools/list"}"#);
    let said = raw.until_id(&json!(60));
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0]["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() == 10),
        "{said:?}"
    );
    raw.finish();
}

/// JSON-RPC never answers a notification or a response, even a malformed one.
#[test]
fn a_malformed_notification_or_response_gets_no_answer() {
    let env = TestEnv::new();
    let mut raw = Raw::start(&env, &env.home());
    for line in [
        &br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#[..],
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":"half"}"#,
        br#"{"jsonrpc":"2.0","id":9,"result":{},"error":{"code":1,"message":"both"}}"#,
        b"",
    ] {
        let said = raw.answers_to(line);
        assert!(
            said.is_empty(),
            "{}: answered {said:?}",
            String::from_utf8_lossy(line)
        );
    }
    raw.finish();
}

/// A line far past the bound is read past without being kept: its error
/// carries the id found at its end (where the Python and TypeScript SDKs put
/// it), the line after it is served, and the shim's peak memory does not
/// grow with the line.
#[test]
fn a_line_past_the_bound_is_discarded_as_it_streams_and_answered_with_its_id() {
    let env = TestEnv::new();
    let mut raw = Raw::start(&env, &env.home());
    let write = |raw: &mut Raw, id: u64, content_bytes: usize| {
        let stdin = raw.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(br#"{"method":"tools/call","params":{"name":"write","arguments":{"path":"default/big.txt","content":""#)
            .expect("write to berth-mcp");
        let chunk = vec![b'a'; 1024 * 1024];
        for _ in 0..content_bytes / chunk.len() {
            stdin.write_all(&chunk).expect("write to berth-mcp");
        }
        raw.send(format!(r#""}}}},"jsonrpc":"2.0","id":{id}}}"#).as_bytes());
    };
    // 40 MiB.
    write(&mut raw, 77, 40 * 1024 * 1024);
    let said = raw.ping();
    one_error("a 40 MiB line", &said, -32600, &json!(77));
    let message = said[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("32 MiB"), "{message}");
    #[cfg(target_os = "linux")]
    let after_40 = raw.peak_rss_kib();
    // Four times the bound: the peak stays where the first line left it.
    write(&mut raw, 78, 4 * LINE_BOUND);
    one_error("a 128 MiB line", &raw.ping(), -32600, &json!(78));
    #[cfg(target_os = "linux")]
    {
        let after_128 = raw.peak_rss_kib();
        assert!(
            after_40 < (LINE_BOUND as u64 / 1024) + 48 * 1024,
            "peak {after_40} KiB after a 40 MiB line"
        );
        assert!(
            after_128 < after_40 + 8 * 1024,
            "peak {after_40} KiB after 40 MiB, {after_128} KiB after 128 MiB: it grows with the line"
        );
    }
    assert!(!env.managed_home("default").join("big.txt").exists());
    raw.finish();
}

/// The bound is above the longest request the tools accept: a `write` of a
/// file just under their 4 MiB limit, every byte a control character the
/// client escapes as `\u00XX` (a 24 MiB line), is written.
#[test]
fn the_largest_write_in_its_longest_spelling_fits_the_bound() {
    let env = TestEnv::new();
    let plain = env.dir("plain");
    let mut raw = Raw::start(&env, &plain);
    let bytes = 4 * 1024 * 1024 - 16;
    let mut line = br#"{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"write","arguments":{"path":"default/ctl.bin","content":""#.to_vec();
    for _ in 0..bytes {
        line.extend_from_slice(br"\u0001");
    }
    line.extend_from_slice(br#""}}}"#);
    assert!(line.len() > 24 * 1024 * 1024 && line.len() < LINE_BOUND);
    raw.send(&line);
    let said = raw.until_id(&json!(90));
    assert_eq!(said.len(), 1, "{said:?}");
    let result = &said[0]["result"];
    assert_ne!(result["isError"], true, "{result}");
    let written = std::fs::read(env.managed_home("default").join("ctl.bin")).expect("written");
    assert_eq!(written.len(), bytes);
    assert!(written.iter().all(|&b| b == 1));
    raw.finish();
}
