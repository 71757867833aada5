//! `berth-load`: the RPC load generator behind `bench/rpc.sh` and `bench/scale.sh`.
//! It talks to a running berthd through the one client connector
//! (`berth_client::client::Connection`), as every shim does, and prints one JSON line per run.
//!
//! - `latency DIR...`: sequential calls on one reused connection, a bare `Ping` and a
//!   `Resolve` of a random DIR interleaved (so both see the same noise); p50/p99 of each.
//! - `throughput DIR...`: `--clients` connections (one task each) resolving random DIRs for
//!   `--secs` (or, with `--rpc ping`, sending bare `Ping`s); calls per second.
//! - `race CMD...`: whole-process times of a few commands, spawned in turn (each round runs
//!   every command once, so drifting load hits every command alike, in a fresh order: a
//!   daemon's client leaves its connection's close behind it, and a fixed order would always
//!   hand that to the same next command), stdin from `--stdin`, stdout to /dev/null; median,
//!   p10 and p90 of each, and each median over the first command's.
//! - `populate DB`: writes `--workspaces` workspaces and `--roots` roots straight into a
//!   stopped daemon's `berth.db` (one transaction), for the scale runs.
//!
//! Timing is measured here and printed, never asserted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use berth_client::client::Connection;
use berth_client::paths::EnvCtx;
use berth_proto::pb;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "berth-load")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The call `throughput` repeats.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Rpc {
    /// A `Resolve` of a random directory.
    Resolve,
    /// A bare `Ping`: the transport's own cost, the baseline.
    Ping,
}

#[derive(Subcommand)]
enum Cmd {
    /// Ping vs Resolve on one reused connection, sequential.
    Latency {
        /// Calls of each kind.
        #[arg(long, default_value_t = 20_000)]
        calls: usize,
        /// Calls of each kind first, not counted.
        #[arg(long, default_value_t = 2_000)]
        warmup: usize,
        /// Directories to resolve (one chosen at random per call).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Concurrent clients resolving random directories.
    Throughput {
        /// Concurrent clients, each with its own connection.
        #[arg(long, default_value_t = 32)]
        clients: usize,
        /// Seconds to measure (after one second of warm-up).
        #[arg(long, default_value_t = 5)]
        secs: u64,
        /// Worker threads of the load generator's runtime (1: current-thread).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// The call each client repeats.
        #[arg(long, value_enum, default_value = "resolve")]
        rpc: Rpc,
        /// Directories to resolve.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Whole-process times of commands run in turn (each a whitespace-separated argv).
    Race {
        /// Rounds (each runs every command once).
        #[arg(long, default_value_t = 1000)]
        runs: usize,
        /// Rounds first, not counted.
        #[arg(long, default_value_t = 50)]
        warmup: usize,
        /// File fed to every command's stdin.
        #[arg(long)]
        stdin: Option<PathBuf>,
        /// The commands; the first is the baseline the ratios use.
        #[arg(required = true)]
        cmds: Vec<String>,
    },
    /// Fills a stopped daemon's database with workspaces and roots.
    Populate {
        /// `<data>/berth.db`, created by one start of the daemon.
        db: PathBuf,
        #[arg(long, default_value_t = 10_000)]
        workspaces: usize,
        #[arg(long, default_value_t = 100_000)]
        roots: usize,
        /// Folder the made-up roots live under (they need not exist).
        #[arg(long, default_value = "/srv/berth-scale")]
        under: PathBuf,
    },
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match Cli::parse().cmd {
        Cmd::Latency {
            calls,
            warmup,
            dirs,
        } => runtime(1)?.block_on(latency(calls, warmup, &dirs)),
        Cmd::Throughput {
            clients,
            secs,
            threads,
            rpc,
            dirs,
        } => runtime(threads)?.block_on(throughput(clients, secs, rpc, dirs)),
        Cmd::Race {
            runs,
            warmup,
            stdin,
            cmds,
        } => race(runs, warmup, stdin.as_deref(), &cmds),
        Cmd::Populate {
            db,
            workspaces,
            roots,
            under,
        } => populate(&db, workspaces, roots, &under),
    }
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
}

/// xorshift64: enough to pick directories without a dependency.
struct Rng(u64);

impl Rng {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        &items[(self.0 % items.len() as u64) as usize]
    }
}

fn request(dir: &Path) -> pb::ResolveRequest {
    pb::ResolveRequest {
        caller: Some(pb::Caller {
            cwd: dir.display().to_string(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

async fn connect() -> Result<Connection, Box<dyn std::error::Error>> {
    Ok(Connection::open_existing(&EnvCtx::from_process())
        .await?
        .ok_or("berthd is not running")?)
}

async fn ping(conn: &mut Connection) -> Result<(), Box<dyn std::error::Error>> {
    conn.call(|mut c| async move { c.ping(pb::PingRequest {}).await })
        .await?;
    Ok(())
}

async fn resolve(conn: &mut Connection, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let req = request(dir);
    let reply = conn
        .call(|mut c| {
            let req = req.clone();
            async move { c.resolve(req).await }
        })
        .await?;
    if reply.resolution.is_none() {
        return Err("a resolve without a resolution".into());
    }
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

async fn latency(
    calls: usize,
    warmup: usize,
    dirs: &[PathBuf],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut conn = connect().await?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut pings, mut resolves) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 0..warmup + calls {
        let t = Instant::now();
        ping(&mut conn).await?;
        let p = t.elapsed();
        let dir = rng.pick(dirs);
        let t = Instant::now();
        resolve(&mut conn, dir).await?;
        let r = t.elapsed();
        if i >= warmup {
            pings.push(p);
            resolves.push(r);
        }
    }
    pings.sort();
    resolves.sort();
    let (p50, p99) = (percentile(&pings, 0.5), percentile(&pings, 0.99));
    let (r50, r99) = (percentile(&resolves, 0.5), percentile(&resolves, 0.99));
    println!(
        "{{\"calls\":{calls},\"dirs\":{},\"ping_p50_us\":{p50:.1},\"ping_p99_us\":{p99:.1},\
\"resolve_p50_us\":{r50:.1},\"resolve_p99_us\":{r99:.1},\"p50_ratio\":{:.3}}}",
        dirs.len(),
        r50 / p50
    );
    Ok(())
}

async fn throughput(
    clients: usize,
    secs: u64,
    rpc: Rpc,
    dirs: Vec<PathBuf>,
) -> Result<(), Box<dyn std::error::Error>> {
    let dirs = Arc::new(dirs);
    let count = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for i in 0..clients {
        let mut conn = connect().await?;
        let (dirs, count, stop) = (dirs.clone(), count.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0xff51_afd7));
            while !stop.load(Ordering::Relaxed) {
                let done = match rpc {
                    Rpc::Resolve => resolve(&mut conn, rng.pick::<PathBuf>(&dirs)).await,
                    Rpc::Ping => ping(&mut conn).await,
                };
                done.map_err(|e| e.to_string())?;
                count.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (start, before) = (Instant::now(), count.load(Ordering::Relaxed));
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let done = count.load(Ordering::Relaxed) - before;
    let took = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await??;
    }
    println!(
        "{{\"rpc\":\"{}\",\"clients\":{clients},\"dirs\":{},\"secs\":{took:.2},\"calls\":{done},\"per_sec\":{:.0}}}",
        match rpc {
            Rpc::Resolve => "resolve",
            Rpc::Ping => "ping",
        },
        dirs.len(),
        done as f64 / took
    );
    Ok(())
}

fn race(
    runs: usize,
    warmup: usize,
    stdin: Option<&Path>,
    cmds: &[String],
) -> Result<(), Box<dyn std::error::Error>> {
    use std::process::{Command, Stdio};
    let argvs: Vec<Vec<&str>> = cmds
        .iter()
        .map(|c| c.split_whitespace().collect())
        .collect();
    let mut times = vec![Vec::with_capacity(runs); cmds.len()];
    let mut order: Vec<usize> = (0..cmds.len()).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64; // fixed: two runs meet the same orders
    for round in 0..warmup + runs {
        shuffle(&mut order, &mut seed);
        for &i in &order {
            let (argv, times) = (&argvs[i], &mut times[i]);
            let input = match stdin {
                Some(p) => Stdio::from(std::fs::File::open(p)?),
                None => Stdio::null(),
            };
            let t = Instant::now();
            let status = Command::new(argv[0])
                .args(&argv[1..])
                .stdin(input)
                .stdout(Stdio::null())
                .status()?;
            let took = t.elapsed();
            if !status.success() {
                return Err(format!("{argv:?} failed: {status}").into());
            }
            if round >= warmup {
                times.push(took);
            }
        }
    }
    let mut base = 0.0;
    for (i, (cmd, t)) in cmds.iter().zip(&mut times).enumerate() {
        t.sort();
        let (p10, p50, p90) = (percentile(t, 0.1), percentile(t, 0.5), percentile(t, 0.9));
        if i == 0 {
            base = p50;
        }
        println!(
            "{{\"cmd\":{cmd:?},\"runs\":{runs},\"p10_us\":{p10:.0},\"median_us\":{p50:.0},\"p90_us\":{p90:.0},\"over_first\":{:.3}}}",
            p50 / base
        );
    }
    Ok(())
}

/// Fisher-Yates with xorshift64: a different order each round, the same rounds each run.
fn shuffle(order: &mut [usize], seed: &mut u64) {
    for i in (1..order.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let j = (*seed % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
}

fn populate(
    db: &Path,
    workspaces: usize,
    roots: usize,
    under: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut c = rusqlite::Connection::open(db)?;
    let tx = c.transaction()?;
    {
        let mut ws = tx.prepare(
            "INSERT INTO workspaces (name, home_mode, home_path, created_at)
             VALUES (?1, 'managed', NULL, unixepoch())",
        )?;
        for w in 0..workspaces {
            ws.execute([format!("scale-{w}")])?;
        }
        let mut rs = tx.prepare(
            "INSERT INTO roots (workspace, path, created_at) VALUES (?1, ?2, unixepoch())",
        )?;
        for r in 0..roots {
            let w = r % workspaces.max(1);
            let path = under.join(format!("w{w}/r{r}"));
            rs.execute([format!("scale-{w}"), path.display().to_string()])?;
        }
    }
    tx.commit()?;
    println!("{{\"workspaces\":{workspaces},\"roots\":{roots}}}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shuffle;

    /// Every round is a whole permutation, and no command keeps one predecessor: what a fixed
    /// order did, and the reason for shuffling.
    #[test]
    fn each_round_runs_every_command_once_after_changing_neighbours() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut order: Vec<usize> = (0..5).collect();
        let mut before = std::collections::HashSet::new();
        for _ in 0..200 {
            shuffle(&mut order, &mut seed);
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, (0..5).collect::<Vec<_>>());
            let at = order.iter().position(|&c| c == 0).unwrap();
            if at > 0 {
                before.insert(order[at - 1]);
            }
        }
        assert_eq!(before.len(), 4, "command 0 followed only {before:?}");
    }
}
