//! Running `hooks.stop_command`: through the platform's shell (`sh -c` on
//! Unix, `cmd.exe /d /s /c` on Windows), as a tree of its own (a process
//! group; a job object), with the payload on stdin, bounded in time. Its
//! output never reaches the hook's stdout (a client may reject anything
//! there); it is returned for the log.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How much of each output stream is kept for the log.
const KEEP: usize = 64 * 1024;

/// After SIGTERM, how long the group has before SIGKILL.
#[cfg(unix)]
const TERM_GRACE: Duration = Duration::from_millis(500);

/// After the command exits, how long its output readers may still take
/// (a background child may hold the pipes open).
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// What to run and how.
pub struct StopCommand<'a> {
    /// The shell command line.
    pub command: &'a str,
    /// Variables added to the hook's environment.
    pub env: Vec<(&'static str, String)>,
    /// Its working directory; the hook's own when `None`.
    pub cwd: Option<&'a Path>,
    /// Written to its stdin.
    pub stdin: Vec<u8>,
    /// Its time limit.
    pub timeout: Duration,
}

/// How it went.
#[derive(Debug)]
pub struct StopRun {
    /// Its exit status; `None` when it was killed for running over time.
    pub status: Option<ExitStatus>,
    /// The start of its stdout.
    pub stdout: Vec<u8>,
    /// The start of its stderr.
    pub stderr: Vec<u8>,
    /// How long it ran.
    pub elapsed: Duration,
}

/// Runs the command to completion or to its time limit, when everything it
/// started is stopped (see [`Tree::stop`]).
pub fn run(cmd: StopCommand<'_>) -> std::io::Result<StopRun> {
    let started = Instant::now();
    let mut command = shell(cmd.command);
    command
        .envs(cmd.env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = cmd.cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn()?;
    let tree = Tree::of(&child);

    let mut stdin = child.stdin.take().expect("piped stdin");
    let payload = cmd.stdin;
    // A command that never reads its stdin must not block us: write on a
    // thread, and ignore a closed pipe.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&payload);
    });
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));

    let deadline = started + cmd.timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            tree.stop(&mut child);
            break None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let grace = Instant::now() + DRAIN_GRACE;
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        rx.recv_timeout(grace.saturating_duration_since(Instant::now()))
            .unwrap_or_default()
    };
    Ok(StopRun {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
        elapsed: started.elapsed(),
    })
}

/// `sh -c COMMAND`, in a process group of its own so that a timeout stops
/// everything it started.
#[cfg(unix)]
fn shell(command: &str) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(command).process_group(0);
    c
}

/// `cmd.exe /d /s /c "COMMAND"`: `/d` skips the AutoRun commands of the
/// registry, and with `/s` cmd drops only the outer quotes and runs the rest
/// as written, so the command line is passed raw, not quoted as an argument.
/// cmd.exe from the system folder, not whatever PATH or the working
/// directory holds under that name.
#[cfg(windows)]
fn shell(command: &str) -> Command {
    use std::os::windows::process::CommandExt;
    let mut c = Command::new(system_dir().join("cmd.exe"));
    c.args(["/d", "/s", "/c"]).raw_arg(format!("\"{command}\""));
    c
}

/// The system folder (`C:\Windows\System32`).
#[cfg(windows)]
fn system_dir() -> std::path::PathBuf {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::SystemInformation::GetSystemDirectoryW;
    let mut buf = vec![0u16; 260];
    loop {
        // SAFETY: the buffer is valid for `buf.len()` UTF-16 units.
        let n = unsafe { GetSystemDirectoryW(buf.as_mut_ptr(), buf.len() as u32) } as usize;
        if n == 0 {
            // Cannot happen on a working system; the usual place then.
            return std::path::PathBuf::from(r"C:\Windows\System32");
        }
        if n < buf.len() {
            return std::ffi::OsString::from_wide(&buf[..n]).into();
        }
        buf.resize(n + 1, 0);
    }
}

/// Everything the command started: its process group.
#[cfg(unix)]
struct Tree {
    pid: libc::pid_t,
}

#[cfg(unix)]
impl Tree {
    fn of(child: &std::process::Child) -> Tree {
        Tree {
            pid: child.id() as libc::pid_t,
        }
    }

    /// SIGTERM to the group, a short grace, then SIGKILL; reaps the leader.
    fn stop(&self, child: &mut std::process::Child) {
        let pid = self.pid;
        // SAFETY: kill has no memory-safety preconditions; the leader is not
        // reaped yet, so its pid (the group id) cannot have been reused.
        unsafe { libc::kill(-pid, libc::SIGTERM) };
        let until = Instant::now() + TERM_GRACE;
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // The leader may be gone while others of its group live on.
        // SAFETY: as above; a group with no members left makes this a no-op.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.wait();
    }
}

/// Everything the command started: a job object holding cmd.exe, which its
/// children join as they start. `None` when the job could not be made; only
/// cmd.exe itself is then stopped.
#[cfg(windows)]
struct Tree {
    job: Option<std::os::windows::io::OwnedHandle>,
}

#[cfg(windows)]
impl Tree {
    fn of(child: &std::process::Child) -> Tree {
        use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
        use windows_sys::Win32::System::JobObjects::{AssignProcessToJobObject, CreateJobObjectW};
        // SAFETY: no attributes and no name: a new anonymous job, or null.
        let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return Tree { job: None };
        }
        // SAFETY: a handle just created and owned here alone.
        let job = unsafe { OwnedHandle::from_raw_handle(job) };
        // cmd.exe is assigned right after it starts, before it has read its
        // command line; a child it starts in that instant would escape the job.
        // SAFETY: both handles are open for the call.
        let assigned =
            unsafe { AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) };
        Tree {
            job: (assigned != 0).then_some(job),
        }
    }

    /// Terminates the job, then cmd.exe itself (in case it is not in the job);
    /// reaps it. Console programs without a console of their own have no
    /// gentle stop to ask for first, so there is no grace as on Unix.
    fn stop(&self, child: &mut std::process::Child) {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::System::JobObjects::TerminateJobObject;
        if let Some(job) = &self.job {
            // SAFETY: the job handle is open; the exit code is arbitrary.
            unsafe { TerminateJobObject(job.as_raw_handle(), 1) };
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Reads a stream to its end on a thread, keeping its first [`KEEP`] bytes.
fn drain(mut stream: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut chunk = [0u8; 8 * 1024];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = KEEP.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
        let _ = tx.send(kept);
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(command: &str, timeout_ms: u64) -> StopCommand<'_> {
        StopCommand {
            command,
            env: vec![("BERTH_WORKSPACE", "w".into())],
            cwd: None,
            stdin: b"{\"x\":1}".to_vec(),
            timeout: Duration::from_millis(timeout_ms),
        }
    }

    // sh syntax; the Windows versions, in cmd syntax, are below.
    #[cfg(unix)]
    #[test]
    fn the_command_sees_its_environment_and_the_payload_on_stdin() {
        let run = run(cmd("printf '%s ' \"$BERTH_WORKSPACE\"; cat", 5000)).unwrap();
        assert!(run.status.unwrap().success());
        assert_eq!(run.stdout, b"w {\"x\":1}");
    }

    // sh syntax; the Windows versions, in cmd syntax, are below.
    #[cfg(unix)]
    #[test]
    fn stderr_and_a_failing_status_are_reported() {
        let run = run(cmd("echo oops >&2; exit 3", 5000)).unwrap();
        assert_eq!(run.status.unwrap().code(), Some(3));
        assert_eq!(run.stderr, b"oops\n");
    }

    // sh syntax; the Windows versions, in cmd syntax, are below.
    #[cfg(unix)]
    #[test]
    fn a_command_over_its_time_is_stopped_with_everything_it_started() {
        let run = run(cmd("sleep 30 & sleep 30", 100)).unwrap();
        assert!(run.status.is_none());
        assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    }

    // sh syntax; the Windows versions, in cmd syntax, are below.
    #[cfg(unix)]
    #[test]
    fn a_command_that_ignores_sigterm_is_killed() {
        let run = run(cmd("trap '' TERM; while :; do sleep 1; done", 100)).unwrap();
        assert!(run.status.is_none());
        assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    }

    #[cfg(windows)]
    #[test]
    fn cmd_sees_its_environment_and_the_payload_on_stdin() {
        let run = run(cmd("echo %BERTH_WORKSPACE%& more", 5000)).unwrap();
        assert!(run.status.unwrap().success(), "{run:?}");
        let out = String::from_utf8_lossy(&run.stdout);
        assert!(out.starts_with("w\r\n"), "{out:?}");
        assert!(out.contains("{\"x\":1}"), "{out:?}");
    }

    #[cfg(windows)]
    #[test]
    fn cmd_stderr_and_a_failing_status_are_reported() {
        let run = run(cmd("echo oops>&2& exit 3", 5000)).unwrap();
        assert_eq!(run.status.unwrap().code(), Some(3));
        assert_eq!(run.stderr, b"oops\r\n");
    }

    #[cfg(windows)]
    #[test]
    fn cmd_over_its_time_is_stopped() {
        // A `for /l` with a step of 0 never ends.
        let run = run(cmd("for /l %i in (0,0,1) do @rem", 100)).unwrap();
        assert!(run.status.is_none());
        assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    }

    #[cfg(windows)]
    #[test]
    fn the_shell_is_the_system_cmd_with_the_line_passed_raw() {
        let c = shell("echo \"a b\"& exit 0");
        let program = std::path::PathBuf::from(c.get_program());
        assert!(program.is_absolute(), "{program:?}");
        assert!(
            program.ends_with("cmd.exe") && program.parent() == Some(system_dir().as_path()),
            "{program:?}"
        );
        let args: Vec<_> = c.get_args().collect();
        assert_eq!(args, ["/d", "/s", "/c", "\"echo \"a b\"& exit 0\""]);
    }

    #[test]
    fn a_command_that_ignores_a_large_stdin_still_finishes() {
        let mut c = cmd("exit 0", 5000);
        c.stdin = vec![b'x'; 4 << 20];
        let run = run(c).unwrap();
        assert!(run.status.unwrap().success());
    }
}
