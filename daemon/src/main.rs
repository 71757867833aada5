//! `berthd`: berth's per-user daemon. Clients start it on demand; run it by
//! hand with `--foreground` to watch it, or under systemd.

use std::process::ExitCode;

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
}

fn main() -> ExitCode {
    let args = Args::parse();
    if !args.foreground && args.ready_fd.is_none() {
        return background(&args);
    }
    berthd::lifecycle::run(berthd::lifecycle::Options {
        foreground: args.foreground,
        ready_fd: args.ready_fd,
        advertise_version: args.advertise_version,
    })
}

/// Started by hand without `--foreground`: start a detached copy of
/// ourselves, and report what it said.
fn background(args: &Args) -> ExitCode {
    use berth_proto::spawn::{Readiness, spawn_detached};
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("berthd: cannot find my own executable: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut extra = Vec::new();
    if let Some(v) = &args.advertise_version {
        extra.extend(["--advertise-version", v.as_str()]);
    }
    match spawn_detached(&exe, &extra, berth_proto::client::START_TIMEOUT) {
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
