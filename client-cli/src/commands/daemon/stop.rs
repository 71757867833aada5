//! `berth daemon stop [--force]`

use std::time::Duration;

use berth_proto::client::{self, Connection};
use berth_proto::paths;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// How long a stopping daemon may take to let go of its lock.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// Arguments of `berth daemon stop`.
#[derive(Args, Debug)]
pub struct StopArgs {
    /// Kill a daemon that does not answer or does not stop in time.
    #[arg(long)]
    pub force: bool,
}

/// Runs `berth daemon stop`.
pub async fn cmd_daemon_stop(ctx: &mut Ctx, args: StopArgs) -> Result<(), CliError> {
    let mut socket = paths::socket_path(&ctx.env).map_err(|e| CliError::failed(e.to_string()))?;
    let asked = match Connection::open_existing(&ctx.env).await {
        // The data folder's daemon may listen elsewhere than this
        // environment's socket; wait for that one.
        Ok(Some(mut conn)) => {
            socket = conn.socket().to_path_buf();
            conn.shutdown().await
        }
        Ok(None) if !client::lock_is_held(&socket) => {
            return done(ctx, false, "berthd is not running");
        }
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    if asked.is_ok() && client::wait_for_release(&socket, STOP_TIMEOUT).await {
        return done(ctx, true, "berthd stopped");
    }
    if !args.force {
        let why = match asked {
            Err(e) => e.to_string(),
            Ok(()) => format!("berthd did not stop within {} s", STOP_TIMEOUT.as_secs()),
        };
        return Err(CliError::failed(why).hint("berth daemon stop --force"));
    }
    let Some(pid) = client::daemon_pid(&socket) else {
        return Err(CliError::failed(
            "the daemon's lock file names no pid, so there is nothing to kill",
        ));
    };
    if !is_berthd(pid) {
        return Err(CliError::failed(format!(
            "pid {pid} from the lock file is not berthd; not killing it"
        )));
    }
    // SAFETY: kill with a pid we checked is berthd.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    if !client::wait_for_release(&socket, STOP_TIMEOUT).await {
        return Err(CliError::failed(format!(
            "berthd (pid {pid}) survived SIGKILL"
        )));
    }
    // The killed daemon could not remove its socket; the next one replaces
    // it, but leave no dead socket behind.
    let _ = std::fs::remove_file(&socket);
    done(ctx, true, &format!("berthd (pid {pid}) killed"))
}

fn done(ctx: &Ctx, stopped: bool, message: &str) -> Result<(), CliError> {
    if ctx.json {
        output::json(&serde_json::json!({"stopped": stopped, "message": message}))
    } else {
        output::text(&format!("{message}\n"))
    }
}

/// Whether `pid` runs the berthd program (so a reused pid is never killed).
fn is_berthd(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim() == "berthd",
        // No /proc (macOS): trust the lock file, which only berthd writes.
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}
