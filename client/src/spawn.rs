//! Starting `berthd` in the background, fully detached, and waiting until it
//! is ready, without fixed sleeps.
//!
//! The child gets a new session, `/dev/null` for stdio, `/` as its working
//! directory and no inherited descriptors except one readiness pipe (fd 3),
//! on which it writes one line: `ready`, `busy` (another daemon holds the
//! lock), `elsewhere: <which>` (another daemon serves the same data folder
//! on another socket) or `error: <why>`, and then closes it. An editor that waits for its
//! MCP shim's pipes to close therefore never waits for the daemon.
//!
//! On Windows the child is a detached process in a new process group (and,
//! where the client's job allows it, outside the client's job, so an editor
//! that kills its job on exit does not kill the daemon); its readiness pipe is
//! its standard output, which it closes once it has spoken.

use std::ffi::OsString;
use std::io;
#[cfg(unix)]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

/// The descriptor number the readiness pipe has in the daemon.
#[cfg(unix)]
pub const READY_FD: i32 = 3;
/// The readiness pipe is the daemon's standard output on Windows.
#[cfg(windows)]
pub const READY_FD: i32 = 1;

/// The daemon's file name on this platform.
const DAEMON_EXE: &str = if cfg!(windows) {
    "berthd.exe"
} else {
    "berthd"
};

/// What a freshly spawned daemon said on its readiness pipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// It is serving on its socket.
    Ready,
    /// Another daemon holds the lock; use that one.
    Busy,
    /// Another daemon serves the same data folder on another socket; its
    /// record in the data folder says where. The text names it.
    Elsewhere(String),
    /// It could not start; the text says why.
    Failed(String),
    /// It closed the pipe without a word, or said nothing in time.
    Silent,
}

/// Finds the daemon executable: `$BERTH_DAEMON` when set (an explicit choice
/// wins), else `berthd` beside the current executable, else on `PATH`.
pub fn find_daemon(berth_daemon: Option<OsString>) -> Option<PathBuf> {
    if let Some(p) = berth_daemon.filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_owned))
    {
        let beside = dir.join(DAEMON_EXE);
        if beside.is_file() {
            return Some(beside);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(DAEMON_EXE))
        .find(|p| p.is_file())
}

/// Spawns `exe` detached with `args` and waits up to `timeout` for its
/// readiness line.
#[cfg(unix)]
pub fn spawn_detached(exe: &Path, args: &[&str], timeout: Duration) -> io::Result<Readiness> {
    let (read_end, write_end) = pipe()?;
    let write_fd = write_end.as_raw_fd();
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .arg("--ready-fd")
        .arg(READY_FD.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/");
    // SAFETY: only async-signal-safe calls (dup2, setsid, close_range/close)
    // run between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(write_fd, READY_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            cloexec_from(READY_FD + 1);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    drop(write_end);
    let said = read_line(&read_end, timeout);
    match &said {
        // The daemon keeps running; it was started in its own session, and
        // init reaps it should this process outlive it.
        Readiness::Ready | Readiness::Silent => {}
        Readiness::Busy | Readiness::Elsewhere(_) | Readiness::Failed(_) => {
            let _ = child.wait();
        }
    }
    Ok(said)
}

/// Spawns `exe` detached with `args` and waits up to `timeout` for its
/// readiness line on its standard output.
#[cfg(windows)]
pub fn spawn_detached(exe: &Path, args: &[&str], timeout: Duration) -> io::Result<Readiness> {
    use std::os::windows::process::CommandExt;
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
    const ERROR_ACCESS_DENIED: i32 = 5;
    // A folder that is always there, so the daemon holds no project open.
    let root = std::env::var_os("SystemRoot").map_or_else(|| PathBuf::from(r"C:\"), PathBuf::from);
    let mut breakaway = CREATE_BREAKAWAY_FROM_JOB;
    loop {
        let (read_end, write_end) = io::pipe()?;
        let mut cmd = Command::new(exe);
        cmd.args(args)
            .arg("--ready-fd")
            .arg(READY_FD.to_string())
            .stdin(Stdio::null())
            .stdout(write_end)
            .stderr(Stdio::null())
            .current_dir(&root)
            .creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | breakaway);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            // A job that forbids breaking away: stay in it rather than fail.
            Err(e) if breakaway != 0 && e.raw_os_error() == Some(ERROR_ACCESS_DENIED) => {
                breakaway = 0;
                continue;
            }
            Err(e) => return Err(e),
        };
        // The command holds our copy of the write end: only once it is gone
        // does the daemon's close of its own end read as the end of the line.
        drop(cmd);
        let said = read_line(read_end, timeout);
        if matches!(
            said,
            Readiness::Busy | Readiness::Elsewhere(_) | Readiness::Failed(_)
        ) {
            let _ = child.wait();
        }
        return Ok(said);
    }
}

/// Reads the readiness line on a thread, so the wait has a deadline; a
/// daemon that never speaks leaves that thread blocked until it exits or
/// closes its end, which costs a short-lived client nothing.
#[cfg(windows)]
fn read_line(mut pipe: io::PipeReader, timeout: Duration) -> Readiness {
    use std::io::Read;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 512];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.contains(&b'\n') || buf.len() > 4096 {
                        break;
                    }
                }
            }
        }
        let _ = tx.send(buf);
    });
    match rx.recv_timeout(timeout) {
        Ok(buf) => parse_readiness(&buf),
        Err(_) => Readiness::Silent,
    }
}

#[cfg(unix)]
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in fds {
        // SAFETY: fd was just returned by pipe().
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Marks every descriptor from `first` up close-on-exec (async-signal-safe),
/// so the daemon inherits none of them. Closing them here instead would also
/// close the pipe std uses to report a failed exec, and hide that failure.
#[cfg(unix)]
fn cloexec_from(first: i32) {
    #[cfg(target_os = "linux")]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range with CLOEXEC only changes descriptor flags.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as u32,
                u32::MAX,
                CLOSE_RANGE_CLOEXEC,
            )
        };
        if done == 0 {
            return;
        }
    }
    for fd in first..4096 {
        // SAFETY: setting a flag on an unused descriptor fails harmlessly.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

#[cfg(unix)]
fn read_line(fd: &OwnedFd, timeout: Duration) -> Readiness {
    let deadline = Instant::now() + timeout;
    let mut buf = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Readiness::Silent;
        }
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Readiness::Silent;
        }
        if n == 0 {
            return Readiness::Silent;
        }
        let mut chunk = [0u8; 512];
        // SAFETY: chunk is a valid buffer of its length.
        let got = unsafe { libc::read(fd.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
        if got < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Readiness::Silent;
        }
        if got == 0 {
            return parse_readiness(&buf);
        }
        buf.extend_from_slice(&chunk[..got as usize]);
        if buf.contains(&b'\n') || buf.len() > 4096 {
            return parse_readiness(&buf);
        }
    }
}

/// Parses the daemon's readiness line.
pub fn parse_readiness(line: &[u8]) -> Readiness {
    let text = String::from_utf8_lossy(line);
    let text = text.lines().next().unwrap_or("").trim();
    match text {
        "ready" => Readiness::Ready,
        "busy" => Readiness::Busy,
        "" => Readiness::Silent,
        other if other.starts_with("elsewhere: ") => {
            Readiness::Elsewhere(other["elsewhere: ".len()..].to_string())
        }
        other => Readiness::Failed(other.strip_prefix("error: ").unwrap_or(other).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_lines_parse() {
        assert_eq!(parse_readiness(b"ready\n"), Readiness::Ready);
        assert_eq!(parse_readiness(b"busy\n"), Readiness::Busy);
        assert_eq!(parse_readiness(b""), Readiness::Silent);
        assert_eq!(
            parse_readiness(b"elsewhere: pid 7 on /run/a.sock\n"),
            Readiness::Elsewhere("pid 7 on /run/a.sock".into())
        );
        assert_eq!(
            parse_readiness(b"error: database is corrupt\n"),
            Readiness::Failed("database is corrupt".into())
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_child_that_exits_silently_is_reported_silent_not_hung() {
        let said = spawn_detached(Path::new("/bin/true"), &[], Duration::from_secs(5)).unwrap();
        assert_eq!(said, Readiness::Silent);
    }

    #[test]
    #[cfg(unix)]
    fn a_missing_executable_fails_the_spawn_instead_of_timing_out() {
        let started = Instant::now();
        let err = spawn_detached(
            Path::new("/nonexistent/berthd"),
            &[],
            Duration::from_secs(5),
        );
        assert!(err.is_err());
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    #[cfg(unix)]
    fn a_child_gets_only_the_readiness_pipe_beyond_stdio() {
        // The child reports its own descriptors on the readiness pipe.
        let said = spawn_detached(
            Path::new("/bin/sh"),
            &[
                "-c",
                "echo \"error: $(ls /proc/self/fd | tr '\\n' ' ')\" >&3",
            ],
            Duration::from_secs(5),
        )
        .unwrap();
        let Readiness::Failed(fds) = said else {
            panic!("{said:?}")
        };
        // 0,1,2, the pipe (3) and the fd ls itself opened to read the dir.
        let fds: Vec<i32> = fds
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        assert!(fds.iter().all(|&f| f <= 4), "{fds:?}");
    }

    /// The line comes back over the child's standard output, and a child
    /// that says nothing is silent, not hung.
    #[test]
    #[cfg(windows)]
    fn a_windows_child_speaks_on_its_standard_output() {
        let cmd = Path::new(r"C:\Windows\System32\cmd.exe");
        let said = spawn_detached(
            cmd,
            &["/c", "echo", "ready&", "rem"],
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(said, Readiness::Ready);
        let said = spawn_detached(cmd, &["/c", "rem"], Duration::from_secs(20)).unwrap();
        assert_eq!(said, Readiness::Silent);
        assert!(
            spawn_detached(
                Path::new(r"C:\nonexistent\berthd.exe"),
                &[],
                Duration::from_secs(5)
            )
            .is_err()
        );
    }
}
