//! Benchmark client: spawn `berth-mcp`, handshake with rmcp's client, call
//! `device_context`, and time spawn → first tool result, N times. Run by
//! `mcp-shim/bench/first-result.sh` against a warm daemon; prints the
//! median and spread in milliseconds.
//!
//! Usage: first_result BERTH_MCP DIR N

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(exe), Some(dir), Some(n)) = (args.next(), args.next(), args.next()) else {
        eprintln!("usage: first_result BERTH_MCP DIR N");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("N is a number");
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let mut cmd = tokio::process::Command::new(&exe);
        cmd.arg("--cwd").arg(&dir);
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn berth-mcp");
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("berth-bench", "0"),
        )
        .serve(transport)
        .await
        .expect("handshake");
        let result = client
            .call_tool(CallToolRequestParams::new("device_context"))
            .await
            .expect("tools/call");
        let elapsed = started.elapsed();
        assert_ne!(result.is_error, Some(true), "device_context failed");
        times.push(elapsed);
        let _ = client.cancel().await;
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| ms(times[((times.len() - 1) as f64 * q).round() as usize]);
    println!(
        "spawn -> first tool result over {n} runs: median {:.2} ms, p10 {:.2} ms, p90 {:.2} ms, min {:.2} ms, max {:.2} ms",
        at(0.5),
        at(0.1),
        at(0.9),
        ms(times[0]),
        ms(*times.last().unwrap())
    );
}
