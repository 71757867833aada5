//! `berth exec --roots`: a wrapped server's roots requests are answered with
//! the session's folder, and everything else passes byte for byte
//! (docs/decisions/0051-a-roots-relay-for-wrapped-servers.md). The server is
//! `relay_probe.py`, driven by a fake client that writes JSON-RPC lines.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use berth_tests::TestEnv;

const WAIT: Duration = Duration::from_secs(60);

fn probe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/relay_probe.py")
}

/// A wrapped probe under `berth exec`, and the lines it prints.
struct Wrapped {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Wrapped {
    fn start(env: &TestEnv, dir: &Path, exec_args: &[&str], probe_args: &[&str]) -> Wrapped {
        let probe = probe();
        let mut args = vec!["exec"];
        args.extend_from_slice(exec_args);
        args.extend(["--", "python3", probe.to_str().unwrap()]);
        args.extend_from_slice(probe_args);
        let mut child = env
            .berth_in(dir, &args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn berth exec");
        let stdin = child.stdin.take();
        let lines = berth_tests::mcp::stdout_lines(child.stdout.take().unwrap());
        Wrapped {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line that mentions `needle`, within the bound.
    fn line_with(&self, needle: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no line with {needle} in time"));
            if line.contains(needle) {
                return line;
            }
        }
    }

    /// The handshake as a client with roots does it; returns the
    /// capabilities the server saw.
    fn handshake(&mut self, caps: &str) -> serde_json::Value {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{caps},"clientInfo":{{"name":"fake","version":"1"}}}}}}"#
        ));
        let init: serde_json::Value = serde_json::from_str(&self.line_with("\"id\":0")).unwrap();
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        serde_json::from_str(init["result"]["instructions"].as_str().unwrap()).unwrap()
    }

    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        exit_code(&mut self.child)
    }
}

fn exit_code(child: &mut Child) -> i32 {
    let (tx, rx) = std::sync::mpsc::channel();
    let pid = child.id();
    let mut owned = std::mem::replace(child, dummy());
    std::thread::spawn(move || tx.send(owned.wait().unwrap()));
    rx.recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("berth exec (pid {pid}) did not exit in time"))
        .code()
        .expect("berth exits, it is not killed")
}

/// A finished child to leave in place of one moved to a waiting thread.
fn dummy() -> Child {
    std::process::Command::new("true").spawn().unwrap()
}

/// The relay's peak memory, in KiB (Linux).
#[cfg(target_os = "linux")]
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn file_uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The roots a probe got, from the relay or from the fake client.
fn roots_seen(w: &mut Wrapped, client_root: &str) -> String {
    // Under `--roots client` the probe's request reaches the fake client,
    // which answers with its own folder as Claude Code does.
    let first = loop {
        let line = w.line_with("\"");
        if line.contains("roots/list") || line.contains("probe/answer") {
            break line;
        }
    };
    if first.contains("\"method\":\"roots/list\"") {
        let v: serde_json::Value = serde_json::from_str(&first).unwrap();
        w.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"roots":[{{"uri":"{client_root}"}}]}}}}"#,
            v["id"]
        ));
        return w.line_with("probe/answer");
    }
    first
}

// Unix: the managed home's path is written as a Unix file URI.
#[cfg(unix)]
#[test]
fn a_wrapped_server_gets_the_home_the_project_or_the_clients_roots() {
    let env = TestEnv::new();
    let project = env.git_root(env.dir("proj"));
    let home = env.managed_home("default");
    let client_root = "file:///the/client/folder";
    for (flag, want) in [
        (&["--roots", "home"][..], file_uri(&home)),
        (&["--roots", "project"], file_uri(&project)),
        (&["--roots", "client"], client_root.to_string()),
    ] {
        let mut args = vec!["-w", "default"];
        args.extend_from_slice(flag);
        let mut w = Wrapped::start(&env, &project, &args, &["roots", "1"]);
        let caps = w.handshake(r#"{"roots":{"listChanged":true}}"#);
        assert_eq!(
            caps["roots"]["listChanged"], true,
            "{flag:?}: the client's own declaration stays"
        );
        let seen = roots_seen(&mut w, client_root);
        let v: serde_json::Value = serde_json::from_str(&seen).unwrap();
        let answer: serde_json::Value =
            serde_json::from_str(v["params"]["line"].as_str().unwrap()).unwrap();
        assert_eq!(answer["id"], 1, "{seen}");
        assert_eq!(
            answer["result"]["roots"][0]["uri"],
            want.as_str(),
            "{flag:?}: {seen}"
        );
        assert_eq!(w.close(), 0);
    }
}

// Unix: as above.
#[cfg(unix)]
#[test]
fn a_client_without_roots_still_lets_the_server_ask_and_the_clients_change_never_arrives() {
    let env = TestEnv::new();
    let dir = env.dir("anywhere");
    let raw = "123456789012345678901234567890";
    let mut w = Wrapped::start(
        &env,
        &dir,
        &["-w", "default", "--roots", "home"],
        &["roots", raw],
    );
    let caps = w.handshake(r#"{"elicitation":{}}"#);
    assert_eq!(
        caps["roots"],
        serde_json::json!({"listChanged": false}),
        "{caps}"
    );
    assert_eq!(caps["elicitation"], serde_json::json!({}));
    let seen = w.line_with("probe/answer");
    assert!(
        seen.contains(&format!("\\\"id\\\":{raw},")),
        "the id keeps its digits: {seen}"
    );
    assert!(
        seen.contains(&file_uri(&env.managed_home("default"))),
        "{seen}"
    );
    // The client's roots change is not the server's; a later notification is.
    w.send(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#);
    w.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#);
    let saw = w.line_with("probe/saw");
    assert!(saw.contains("notifications/cancelled"), "{saw}");
    for id in ["\"s\"", "null"] {
        let mut w = Wrapped::start(
            &env,
            &dir,
            &["-w", "default", "--roots", "home"],
            &["roots", id],
        );
        w.handshake("{}");
        let seen = w.line_with("probe/answer");
        assert!(
            seen.contains(&format!("\\\"id\\\":{}", id.replace('"', "\\\""))),
            "{seen}"
        );
        assert_eq!(w.close(), 0);
    }
    assert_eq!(w.close(), 0);
}

/// Runs the echo probe behind the relay, writes `input` on a thread, reads
/// everything back, and gives the output and the exit code. `before_close`
/// runs with the relay's pid once `want_len` bytes came back, before stdin
/// closes.
fn echo_through(
    env: &TestEnv,
    input: Vec<u8>,
    want_len: usize,
    code: &str,
    before_close: impl FnOnce(u32),
) -> (Vec<u8>, i32) {
    let dir = env.dir("anywhere");
    let mut child = env
        .berth_in(
            &dir,
            [
                "exec",
                "-w",
                "default",
                "--roots",
                "home",
                "--",
                "python3",
                probe().to_str().unwrap(),
                "echo",
                code,
            ],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (got_tx, got_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut told = false;
        loop {
            let n = stdout.read(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
            if !told && out.len() >= want_len {
                told = true;
                let _ = got_tx.send(());
            }
        }
        let _ = done_tx.send(out);
    });
    let (wrote_tx, wrote_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        // Stdin stays open until the test has looked.
        let _ = wrote_rx.recv();
    });
    got_rx
        .recv_timeout(WAIT)
        .expect("the echo came back in time");
    before_close(child.id());
    drop(wrote_tx);
    let out = done_rx.recv_timeout(WAIT).expect("stdout closed in time");
    (out, exit_code(&mut child))
}

#[test]
fn every_other_message_passes_byte_for_byte_both_ways_and_the_exit_code_with_it() {
    let env = TestEnv::new();
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"name\":\"w\",\"arguments\":{{\"text\":\"{}\"}}}}}}\n",
        "é".repeat(16 * 1024 * 1024)
    );
    let script: Vec<String> = vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.into(),
        r#"{ "jsonrpc" : "2.0", "method":"notifications/progress","params":{"progressToken":"t","progress":0.50,"total":1E2}}"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x\u00e9","reason":"user"}}"#.into(),
        "this is not JSON".into(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"#.into(),
        r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#.into(),
        r#"{"jsonrpc":"2.0","id":4,"result":{"n":123456789012345678901234567890}}"#.into(),
    ];
    let mut input = Vec::new();
    let mut want = Vec::new();
    for line in &script {
        input.extend_from_slice(line.as_bytes());
        input.extend_from_slice(b"\r\n");
        if !line.contains("roots/list_changed") {
            want.extend_from_slice(line.as_bytes());
            want.extend_from_slice(b"\r\n");
        }
    }
    input.extend_from_slice(big.as_bytes());
    want.extend_from_slice(big.as_bytes());
    // A last line without a newline comes out when the client's side ends.
    let lines_len = want.len();
    input.extend_from_slice(b"{\"last\":\"no newline\"}");
    want.extend_from_slice(b"{\"last\":\"no newline\"}");
    let (out, code) = echo_through(&env, input, lines_len, "7", |_| {});
    assert!(
        out == want,
        "the bytes changed: {} bytes came back, {} expected",
        out.len(),
        want.len()
    );
    assert_eq!(code, 7, "the server's exit code is berth's");
}

// Linux: the peak memory comes from /proc.
#[cfg(target_os = "linux")]
#[test]
fn a_line_of_100_mib_without_a_newline_streams_in_flat_memory() {
    let env = TestEnv::new();
    let input = vec![b'x'; 100 * 1024 * 1024];
    let len = input.len();
    let mut peak = 0;
    let (out, code) = echo_through(&env, input, len, "0", |pid| peak = peak_kib(pid));
    assert_eq!(out.len(), len);
    assert!(out.iter().all(|&b| b == b'x'));
    assert_eq!(code, 0);
    assert!(peak < 48 * 1024, "the relay peaked at {peak} KiB");
}

// Unix: signals.
#[cfg(unix)]
#[test]
fn a_server_killed_by_a_signal_exits_as_shells_report_and_its_stderr_reaches_the_client() {
    let env = TestEnv::new();
    let dir = env.dir("anywhere");
    let run = env
        .run_in(
            &dir,
            [
                "exec",
                "-w",
                "default",
                "--roots",
                "home",
                "--",
                "python3",
                probe().to_str().unwrap(),
                "die",
                "9",
            ],
        )
        .failure(137)
        .stderr_has(&["probe: dying by signal"]);
    assert!(run.output.stdout.is_empty());
}

// Unix: signals.
#[cfg(unix)]
#[test]
fn a_server_that_never_reads_is_ended_by_the_signal_sent_to_berth() {
    let env = TestEnv::new();
    let dir = env.dir("anywhere");
    let mut w = Wrapped::start(&env, &dir, &["-w", "default", "--roots", "home"], &["deaf"]);
    w.line_with("probe/deaf");
    let mut stdin = w.stdin.take().unwrap();
    // More than every pipe on the way holds; the writer thread blocks, not the test.
    std::thread::spawn(move || {
        let line = format!("{{\"pad\":\"{}\"}}\n", "p".repeat(1 << 20));
        for _ in 0..16 {
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
    });
    berth_tests::signal(w.child.id(), libc::SIGTERM);
    assert_eq!(exit_code(&mut w.child), 128 + libc::SIGTERM);
}

// Linux: the peak memory comes from /proc.
#[cfg(target_os = "linux")]
#[test]
fn a_flood_of_roots_requests_is_answered_every_one_in_flat_memory() {
    let env = TestEnv::new();
    let dir = env.dir("anywhere");
    let mut w = Wrapped::start(
        &env,
        &dir,
        &["-w", "default", "--roots", "home"],
        &["roots", "1"],
    );
    w.handshake("{}");
    w.line_with("probe/answer");
    w.send(r#"{"jsonrpc":"2.0","id":"flood","method":"probe/flood","params":{"n":100000}}"#);
    let done = w.line_with("\"flood\"");
    assert!(done.contains("\"answered\":100000"), "{done}");
    let peak = peak_kib(w.child.id());
    assert!(peak < 48 * 1024, "the relay peaked at {peak} KiB");
    assert_eq!(w.close(), 0);
}

/// Many small lines both ways at once, every byte back in order.
// Every byte of 300,000 lines comes back in order. Whether the two sides can stall each other
// through the rules is timing here, and is checked by the relay's unit test
// `the_rules_are_free_while_the_servers_side_waits_on_the_client`.
#[test]
fn many_small_lines_both_ways_at_once_keep_flowing() {
    let env = TestEnv::new();
    let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n";
    let input = line.repeat(300_000);
    let len = input.len();
    let (out, code) = echo_through(&env, input.clone(), len, "0", |_| {});
    assert!(out == input, "{} bytes came back of {len}", out.len());
    assert_eq!(code, 0);
}
