//! Running `hooks.stop_command`: through `sh -c`, in its own process group,
//! with the payload on stdin, bounded in time. Its output never reaches the
//! hook's stdout (a client may reject anything there); it is returned for
//! the log.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How much of each output stream is kept for the log.
const KEEP: usize = 64 * 1024;

/// After SIGTERM, how long the group has before SIGKILL.
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

/// Runs the command to completion or to its time limit, when its whole
/// process group is stopped (SIGTERM, then SIGKILL).
pub fn run(cmd: StopCommand<'_>) -> std::io::Result<StopRun> {
    let started = Instant::now();
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(cmd.command)
        .envs(cmd.env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout stops everything it started.
        .process_group(0);
    if let Some(dir) = cmd.cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn()?;
    let pid = child.id() as libc::pid_t;

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
            stop_group(pid, &mut child);
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

/// SIGTERM to the group, a short grace, then SIGKILL; reaps the leader.
fn stop_group(pid: libc::pid_t, child: &mut std::process::Child) {
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

    #[test]
    fn the_command_sees_its_environment_and_the_payload_on_stdin() {
        let run = run(cmd("printf '%s ' \"$BERTH_WORKSPACE\"; cat", 5000)).unwrap();
        assert!(run.status.unwrap().success());
        assert_eq!(run.stdout, b"w {\"x\":1}");
    }

    #[test]
    fn stderr_and_a_failing_status_are_reported() {
        let run = run(cmd("echo oops >&2; exit 3", 5000)).unwrap();
        assert_eq!(run.status.unwrap().code(), Some(3));
        assert_eq!(run.stderr, b"oops\n");
    }

    #[test]
    fn a_command_over_its_time_is_stopped_with_everything_it_started() {
        let run = run(cmd("sleep 30 & sleep 30", 100)).unwrap();
        assert!(run.status.is_none());
        assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    }

    #[test]
    fn a_command_that_ignores_sigterm_is_killed() {
        let run = run(cmd("trap '' TERM; while :; do sleep 1; done", 100)).unwrap();
        assert!(run.status.is_none());
        assert!(run.elapsed < Duration::from_secs(3), "{:?}", run.elapsed);
    }

    #[test]
    fn a_command_that_ignores_a_large_stdin_still_finishes() {
        let mut c = cmd("exit 0", 5000);
        c.stdin = vec![b'x'; 4 << 20];
        let run = run(c).unwrap();
        assert!(run.status.unwrap().success());
    }
}
