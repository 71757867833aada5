//! `berthd`: berth's per-user daemon. Clients start it on demand; run it by
//! hand with `--foreground` to watch it, or under systemd.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// berth's per-user daemon: the workspace registry, device trust and
/// resolution, served on a private local socket.
#[derive(Parser, Debug)]
#[command(name = "berthd", version)]
struct Args {
    /// Stay in the foreground and log to stderr as well as the log file.
    #[arg(long)]
    foreground: bool,
    /// Report readiness on this descriptor (used by the client that
    /// spawns the daemon).
    #[arg(long, hide = true)]
    ready_fd: Option<i32>,
    /// Advertise this version instead of the build's (tests of version skew).
    #[arg(long, hide = true)]
    advertise_version: Option<String>,
    /// Close a connection the daemon has read nothing from for this many
    /// seconds (a decimal; live clients are pinged four times as often).
    #[arg(long, value_name = "SECONDS", value_parser = seconds, default_value = "60")]
    idle_timeout: Duration,
    /// Keep at most this many connections open; past it, a new one closes
    /// the longest-silent one (lowered to half the descriptor limit).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), default_value = "512")]
    max_connections: u32,
}

/// A positive number of seconds, decimals allowed (`0.5`).
fn seconds(s: &str) -> Result<Duration, String> {
    let refuse = || format!("{s:?} is not a positive number of seconds (e.g. 60 or 0.5)");
    let secs: f64 = s.trim().parse().map_err(|_| refuse())?;
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if d >= Duration::from_millis(1) => Ok(d),
        _ => Err(refuse()),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if !args.foreground && args.ready_fd.is_none() {
        return background(&args);
    }
    berthd::run(berthd::Options {
        foreground: args.foreground,
        ready_fd: args.ready_fd,
        advertise_version: args.advertise_version,
        limits: berthd::Limits {
            idle_timeout: args.idle_timeout,
            max_connections: args.max_connections as usize,
        },
    })
}

/// Started by hand without `--foreground`: start a detached copy of
/// ourselves, and report what it said.
fn background(args: &Args) -> ExitCode {
    use berth_client::spawn::{Readiness, spawn_detached};
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("berthd: cannot find my own executable: {e}");
            return ExitCode::FAILURE;
        }
    };
    let idle = args.idle_timeout.as_secs_f64().to_string();
    let max = args.max_connections.to_string();
    let mut extra = vec![
        "--idle-timeout",
        idle.as_str(),
        "--max-connections",
        max.as_str(),
    ];
    if let Some(v) = &args.advertise_version {
        extra.extend(["--advertise-version", v.as_str()]);
    }
    match spawn_detached(&exe, &extra, berth_client::client::START_TIMEOUT) {
        Ok(Readiness::Ready) => ExitCode::SUCCESS,
        Ok(Readiness::Busy) => {
            eprintln!("berthd: already running");
            ExitCode::SUCCESS
        }
        Ok(Readiness::Elsewhere(which)) => {
            eprintln!("berthd: {which}");
            ExitCode::FAILURE
        }
        Ok(Readiness::Failed(why)) => {
            eprintln!("berthd: {why}");
            ExitCode::FAILURE
        }
        Ok(Readiness::Silent) => {
            eprintln!("berthd: the daemon did not report readiness; see its log");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("berthd: starting {}: {e}", exe.display());
            ExitCode::FAILURE
        }
    }
}
