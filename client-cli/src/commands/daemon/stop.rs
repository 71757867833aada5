//! `berth daemon stop [--force]`

use std::time::Duration;

use berth_client::client::{self, Connection};
use berth_client::paths;
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
    paths::socket_path(&ctx.env).map_err(|e| CliError::failed(e.to_string()))?;
    // Never the lock in a refused folder: the record's socket then (ADR 0042).
    let mut socket = client::lock_socket(&ctx.env);
    let asked = match Connection::open_existing(&ctx.env).await {
        // The data folder's daemon may listen elsewhere than this
        // environment's socket; wait for that one.
        Ok(Some(mut conn)) => {
            socket = Some(conn.socket().to_path_buf());
            conn.shutdown().await
        }
        Ok(None) if !socket.as_deref().is_some_and(client::lock_is_held) => {
            return done(ctx, false, "berthd is not running");
        }
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    let Some(socket) = socket else {
        return Err(asked
            .err()
            .map_or_else(|| CliError::failed("berthd is not running"), CliError::from));
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
    kill_berthd(pid)?;
    if !client::wait_for_release(&socket, STOP_TIMEOUT).await {
        return Err(CliError::failed(format!(
            "berthd (pid {pid}) survived {KILL}"
        )));
    }
    // The killed daemon could not remove its socket; the next one replaces
    // it, but leave no dead socket behind. (A pipe goes with its last handle.)
    #[cfg(unix)]
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

fn not_berthd(pid: u32) -> CliError {
    CliError::failed(format!(
        "pid {pid} from the lock file is not berthd; not killing it"
    ))
}

/// How the daemon is killed, for the message when it survives.
#[cfg(unix)]
const KILL: &str = "SIGKILL";

/// SIGKILL to `pid`, once it is seen to run berthd.
#[cfg(unix)]
fn kill_berthd(pid: u32) -> Result<(), CliError> {
    if !is_berthd(pid) {
        return Err(not_berthd(pid));
    }
    // SAFETY: kill with a pid we checked is berthd.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    Ok(())
}

/// Whether `pid` runs the berthd program (so a reused pid is never killed).
#[cfg(unix)]
fn is_berthd(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim() == "berthd",
        // No /proc (macOS): trust the lock file, which only berthd writes.
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}

/// How the daemon is killed, for the message when it survives.
#[cfg(windows)]
const KILL: &str = "TerminateProcess";

/// Terminates `pid` once it is seen to run berthd. One handle both reads the
/// program and terminates, so a pid reused in between is never hit.
#[cfg(windows)]
fn kill_berthd(pid: u32) -> Result<(), CliError> {
    use std::os::windows::ffi::OsStringExt;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
    use windows_sys::Win32::Foundation::ERROR_INVALID_PARAMETER;
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_TERMINATE,
        QueryFullProcessImageNameW, TerminateProcess,
    };
    // SAFETY: OpenProcess returns a new handle or null.
    let raw = unsafe {
        OpenProcess(
            PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_TERMINATE,
            0,
            pid,
        )
    };
    if raw.is_null() {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32) {
            // No such process: it exited; the lock's release says so.
            return Ok(());
        }
        return Err(CliError::failed(format!(
            "cannot open berthd (pid {pid}) to terminate it: {e}"
        )));
    }
    // SAFETY: a handle just opened and owned here alone.
    let process = unsafe { OwnedHandle::from_raw_handle(raw) };
    let mut buf = vec![0u16; 32 * 1024];
    let mut len = buf.len() as u32;
    // SAFETY: the buffer holds `len` UTF-16 units; 0 asks for a Win32 path.
    let named = unsafe {
        QueryFullProcessImageNameW(process.as_raw_handle(), 0, buf.as_mut_ptr(), &mut len)
    };
    if named == 0 {
        return Err(CliError::failed(format!(
            "cannot read which program pid {pid} runs ({}); not killing it",
            std::io::Error::last_os_error()
        )));
    }
    let image = std::path::PathBuf::from(std::ffi::OsString::from_wide(&buf[..len as usize]));
    if !is_berthd_image(&image) {
        return Err(not_berthd(pid));
    }
    // SAFETY: the handle is open with PROCESS_TERMINATE; 1 is the exit code.
    if unsafe { TerminateProcess(process.as_raw_handle(), 1) } == 0 {
        return Err(CliError::failed(format!(
            "terminating berthd (pid {pid}): {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Whether a program's path is berthd's: `berthd.exe`, as Windows compares
/// names (without case).
#[cfg(windows)]
fn is_berthd_image(image: &std::path::Path) -> bool {
    image
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.eq_ignore_ascii_case("berthd.exe"))
}

#[cfg(all(test, windows))]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn only_berthd_exe_is_berthd() {
        assert!(is_berthd_image(Path::new(
            r"C:\Program Files\berth\berthd.exe"
        )));
        assert!(is_berthd_image(Path::new(r"C:\x\BERTHD.EXE")));
        assert!(!is_berthd_image(Path::new(r"C:\x\berthd.exe.bak")));
        assert!(!is_berthd_image(Path::new(r"C:\x\notberthd.exe")));
        assert!(!is_berthd_image(Path::new(r"C:\berthd.exe\other.exe")));
    }
}
