//! Stampede (many clients starting the daemon at once yield one daemon:
//! docs/reference.md, "The daemon"): 32 clients released together with no daemon running, round
//! after round. Extends `daemon.rs`'s single round of 24.
//!
//! CI runs 3 rounds; the long run is
//! `BERTH_STAMPEDE_ROUNDS=100 cargo test -p berth-tests --test e2e stampede -- --nocapture`.

use std::process::Stdio;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use berth_tests::{TestEnv, wait_until};
use serde_json::Value;

const CLIENTS: usize = 32;

#[test]
fn thirty_two_clients_at_once_start_exactly_one_daemon_round_after_round() {
    let rounds: usize = std::env::var("BERTH_STAMPEDE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let env = Arc::new(TestEnv::new());
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for round in 0..rounds {
        assert!(
            env.daemon_pids().is_empty(),
            "round {round}: a daemon already runs"
        );
        // Threads spawn their client together at the barrier: half resolve
        // (auto-start on first use), half `daemon start` (which prints the pid).
        let barrier = Arc::new(Barrier::new(CLIENTS));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (env, barrier) = (env.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let args: &[&str] = if i % 2 == 0 {
                        &["--json", "resolve"]
                    } else {
                        &["--json", "daemon", "start"]
                    };
                    let mut cmd = env.berth(args);
                    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
                    barrier.wait();
                    let t = Instant::now();
                    let out = cmd
                        .spawn()
                        .expect("spawn berth")
                        .wait_with_output()
                        .expect("wait");
                    (i, out, t.elapsed())
                })
            })
            .collect();
        let mut pids = Vec::new();
        for t in threads {
            let (i, out, took) = t.join().expect("client thread");
            slowest = slowest.max(took);
            assert!(
                out.status.success(),
                "round {round}, client {i} was not answered: {}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
            if i % 2 == 0 {
                assert_eq!(v["workspace"], "default", "round {round}, client {i}: {v}");
            } else {
                assert_eq!(v["running"], true, "round {round}, client {i}: {v}");
                pids.push(v["pid"].as_u64().expect("pid") as u32);
            }
        }
        // The race's losers exit on their own; then exactly one remains, and
        // it is the one every `daemon start` reported.
        let settled = wait_until(Duration::from_secs(5), || {
            let p = env.daemon_pids();
            if p.len() == 1 { Ok(p) } else { Err(p) }
        });
        let daemons = settled.unwrap_or_else(|p| panic!("round {round}: daemons {p:?}"));
        pids.sort_unstable();
        pids.dedup();
        assert_eq!(
            pids, daemons,
            "round {round}: clients met different daemons"
        );
        let _ = env.run_berth(["daemon", "stop"]).success();
        env.wait_no_daemon(Duration::from_secs(5));
    }
    eprintln!(
        "stampede: {rounds} rounds of {CLIENTS} clients, one daemon each, in {:.1?}; slowest client {slowest:.1?}",
        started.elapsed()
    );
}
