//! An MCP session over a real `berth-mcp`'s stdio, spoken line by line, as an editor would.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// A running `berth-mcp` and the lines it prints.
pub struct McpSession {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl McpSession {
    /// Starts the shim and completes the `initialize` handshake; returns
    /// the session and the handshake's answer.
    pub fn start(mut cmd: Command) -> (McpSession, String) {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn berth-mcp");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let lines = stdout_lines(stdout);
        let mut session = McpSession {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let said = session.request(
            "initialize",
            r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}"#,
        );
        session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        (session, said)
    }

    /// The shim's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to berth-mcp");
    }

    /// Sends a request and returns every line up to and including its answer.
    pub fn request(&mut self, method: &str, params: &str) -> String {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ));
        let mut said = String::new();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("berth-mcp answered in time");
            said.push_str(&line);
            said.push('\n');
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if v["id"] == id {
                return said;
            }
        }
    }

    /// A `tools/call` with these params (`{"name": ..., "arguments": ...}`).
    pub fn call(&mut self, params: &str) -> String {
        self.request("tools/call", params)
    }

    /// Closes the shim's stdin, as a client that quits does, and waits for it to exit.
    pub fn exit(mut self) {
        self.close();
    }

    fn close(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The lines a child writes on stdout, read on a thread of their own so a
/// test can wait for one with a deadline.
pub fn stdout_lines(stdout: std::process::ChildStdout) -> Receiver<String> {
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Drop for McpSession {
    fn drop(&mut self) {
        self.close();
    }
}
