//! The roots relay of `berth exec --roots home|project`: CMD runs as berth's
//! child behind a thin stdio relay that passes every message through as it
//! came, except the roots exchange, which berth answers itself with the
//! session's folder (docs/decisions/0051-a-roots-relay-for-wrapped-servers.md).
//!
//! `rules` decides what happens to each line and does no I/O; `pump` moves
//! the bytes; this module starts the server, waits for it and exits as it
//! did.

mod fields;
mod pump;
mod rules;

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use rules::Root;
use rules::Rules;

/// Which folders a wrapped server gets as its roots.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootsFrom {
    /// The workspace's home (what `{home}` names).
    Home,
    /// The project folder; the home when there is no project.
    Project,
    /// The client's own roots: no relay, CMD replaces berth as without the flag.
    Client,
}

impl RootsFrom {
    /// The flag's value as written in a registration.
    pub fn word(self) -> &'static str {
        match self {
            RootsFrom::Home => "home",
            RootsFrom::Project => "project",
            RootsFrom::Client => "client",
        }
    }
}

/// A folder as a root: its `file://` URI and `name`.
pub fn root(folder: &Path, name: &str) -> Root {
    Root {
        uri: file_uri(folder),
        name: name.to_string(),
    }
}

/// The `file://` URI of an absolute path: every byte but the unreserved
/// ones and `/` percent-encoded; on Windows `\` becomes `/` and the drive
/// gets its leading `/` (`file:///C:/x`).
fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut uri = String::from("file://");
    if cfg!(windows) && !text.starts_with(['/', '\\']) {
        uri.push('/');
    }
    for b in text.bytes() {
        match b {
            b'\\' if cfg!(windows) => uri.push('/'),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(b as char)
            }
            b':' if cfg!(windows) => uri.push(':'),
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

/// How long the relay keeps forwarding the server's output after the
/// server exited, while none arrives: a process the server left behind may
/// hold its stdout open, and the client must still see the server end.
const DRAIN_IDLE: Duration = Duration::from_millis(500);

/// Runs CMD behind the relay and gives the exit code to leave with: the
/// server's, or 128+N when signal N ended it, as shells report. An error
/// is a server that could not start.
pub async fn run(
    words: &[OsString],
    env: &[(&str, &str)],
    roots: &[Root],
) -> Result<i32, std::io::Error> {
    let mut child = Command::new(&words[0])
        .args(&words[1..])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the server's pipes were not made"));
    };
    let rules = Arc::new(Mutex::new(Rules::new(roots)));
    let credit = Arc::new(pump::Credit::default());
    let moved = Arc::new(AtomicU64::new(0));
    let (to_server, queue) = std::sync::mpsc::channel();
    {
        let credit = credit.clone();
        std::thread::spawn(move || pump::write_to_server(Some(server_in), queue, &credit));
    }
    {
        let (rules, to, credit) = (rules.clone(), to_server.clone(), credit.clone());
        // Left running at exit: it may wait on a client that never closes.
        std::thread::spawn(move || {
            pump::client_to_server(std::io::stdin().lock(), &rules, &to, &credit)
        });
    }
    let (drained, drained_rx) = std::sync::mpsc::channel::<()>();
    {
        let (rules, moved) = (rules.clone(), moved.clone());
        std::thread::spawn(move || {
            pump::server_to_client(
                server_out,
                std::io::stdout().lock(),
                &rules,
                &to_server,
                &moved,
            );
            drop(drained);
        });
    }
    let status = wait(child).await?;
    // The server's last words reach the client before berth exits.
    let mut seen = moved.load(std::sync::atomic::Ordering::Relaxed);
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = drained_rx.recv_timeout(DRAIN_IDLE)
    {
        let now = moved.load(std::sync::atomic::Ordering::Relaxed);
        if now == seen {
            break;
        }
        seen = now;
    }
    Ok(exit_code(status))
}

/// Waits for the server; on Unix, a SIGTERM, SIGHUP or SIGINT sent to berth
/// is passed on to it, since the client knows berth's process as the
/// server's.
async fn wait(mut child: std::process::Child) -> std::io::Result<std::process::ExitStatus> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let pid = child.id() as libc::pid_t;
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut waited = tokio::task::spawn_blocking(move || child.wait());
        loop {
            let sig = tokio::select! {
                done = &mut waited => return done.map_err(std::io::Error::other)?,
                _ = term.recv() => libc::SIGTERM,
                _ = hup.recv() => libc::SIGHUP,
                _ = int.recv() => libc::SIGINT,
            };
            // SAFETY: kill has no memory effects. The wait has not been
            // seen to return, so the pid is the child's (barring the instant
            // between its reaping and this line, as with any kill by pid).
            unsafe { libc::kill(pid, sig) };
        }
    }
    #[cfg(not(unix))]
    {
        tokio::task::spawn_blocking(move || child.wait())
            .await
            .map_err(std::io::Error::other)?
    }
}

/// The code to exit with for the server's status.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return 128 + sig;
        }
    }
    status.code().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_folder_becomes_a_file_uri_with_odd_bytes_escaped() {
        assert_eq!(
            file_uri(Path::new("/home/me/my notes/ü%#?")),
            "file:///home/me/my%20notes/%C3%BC%25%23%3F"
        );
    }

    #[cfg(windows)]
    #[test]
    fn a_windows_folder_becomes_a_file_uri_with_its_drive() {
        assert_eq!(
            file_uri(Path::new(r"C:\Users\me\my notes")),
            "file:///C:/Users/me/my%20notes"
        );
    }
}
