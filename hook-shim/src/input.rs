//! Reading the payload from stdin: at most [`MAX_PAYLOAD`] bytes and at most
//! a time limit, so a client that never closes stdin cannot hang the hook.
//! A JSON object or array that is complete is taken at once, without
//! waiting for end of input.

use std::io::Read;
use std::sync::mpsc;
use std::time::Duration;

/// The largest payload read (1 MiB).
pub const MAX_PAYLOAD: usize = 1 << 20;

/// How long the hook waits for its payload.
pub const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// What arrived on stdin.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// The payload (end of input, or a complete JSON object or array).
    Payload(Vec<u8>),
    /// More than the limit arrived.
    TooLarge,
    /// Neither end of input nor a complete document within the time limit.
    TimedOut,
    /// Reading failed.
    Failed(String),
}

/// Reads `reader` on a thread of its own (left blocked behind if the time
/// runs out; the process exits without it). Stdin on platforms without
/// `poll`; on Unix [`read_stdin`] needs no thread.
#[cfg_attr(all(unix, not(test)), allow(dead_code))]
pub fn read(mut reader: impl Read + Send + 'static, limit: usize, timeout: Duration) -> Input {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_all(&mut reader, limit));
    });
    rx.recv_timeout(timeout).unwrap_or(Input::TimedOut)
}

/// Reads stdin within the limits. On Unix this stays on the calling thread
/// and waits with `poll`, so no reader thread is started (a thread costs a
/// hook call about 30k instructions and a `clone`; ADR 0010); elsewhere it is
/// [`read`].
pub fn read_stdin(limit: usize, timeout: Duration) -> Input {
    #[cfg(unix)]
    {
        read_fd(0, limit, timeout)
    }
    #[cfg(not(unix))]
    {
        read(std::io::stdin(), limit, timeout)
    }
}

/// Reads descriptor `fd` (left open), waiting for each chunk with `poll` until
/// `timeout` has passed in all.
#[cfg(unix)]
fn read_fd(fd: std::os::fd::RawFd, limit: usize, timeout: Duration) -> Input {
    use std::os::fd::FromRawFd;
    let deadline = std::time::Instant::now() + timeout;
    // SAFETY: `fd` is open for the process's life; ManuallyDrop never closes it.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let mut ready = || loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // Rounded up, so a wait never ends a little before the deadline.
        let ms = left.as_micros().div_ceil(1000);
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polls one local entry.
        match unsafe { libc::poll(&mut p, 1, i32::try_from(ms).unwrap_or(i32::MAX)) } {
            0 => return false,
            n if n > 0 => return true,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            // Let the read report what is wrong.
            _ => return true,
        }
    };
    read_all_when(&mut *file, limit, &mut ready)
}

#[cfg_attr(all(unix, not(test)), allow(dead_code))]
fn read_all(reader: &mut impl Read, limit: usize) -> Input {
    read_all_when(reader, limit, &mut || true)
}

/// Reads to end of input or a complete document; `ready` waits before each
/// read and says `false` when time is up.
fn read_all_when(reader: &mut impl Read, limit: usize, ready: &mut dyn FnMut() -> bool) -> Input {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if !ready() {
            return Input::TimedOut;
        }
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Input::Payload(buf),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Input::Failed(e.to_string()),
        };
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > limit {
            return Input::TooLarge;
        }
        if is_complete_document(&buf) {
            return Input::Payload(buf);
        }
    }
}

/// Whether `buf` holds one whole JSON object or array. Cheap unless the
/// last byte read could close one.
pub fn is_complete_document(buf: &[u8]) -> bool {
    let last = buf.iter().rev().find(|b| !b.is_ascii_whitespace());
    matches!(last, Some(b'}' | b']'))
        && serde_json::from_slice::<serde::de::IgnoredAny>(buf).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_is_read_to_end_of_input() {
        let got = read(&b"{\"cwd\":\"/p\"}\n"[..], MAX_PAYLOAD, READ_TIMEOUT);
        assert_eq!(got, Input::Payload(b"{\"cwd\":\"/p\"}\n".to_vec()));
    }

    #[test]
    fn more_than_the_limit_is_refused() {
        let big = vec![b' '; 100];
        assert_eq!(
            read(std::io::Cursor::new(big), 10, READ_TIMEOUT),
            Input::TooLarge
        );
    }

    /// A reader that yields `data` once and then blocks forever, like a
    /// client that writes its payload and never closes stdin.
    struct OpenPipe(Option<Vec<u8>>);
    impl Read for OpenPipe {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            match self.0.take() {
                Some(d) => {
                    out[..d.len()].copy_from_slice(&d);
                    Ok(d.len())
                }
                None => loop {
                    std::thread::park();
                },
            }
        }
    }

    #[test]
    fn a_complete_object_is_taken_without_waiting_for_end_of_input() {
        let started = std::time::Instant::now();
        let got = read(
            OpenPipe(Some(b"{\"a\":1}".to_vec())),
            MAX_PAYLOAD,
            READ_TIMEOUT,
        );
        assert_eq!(got, Input::Payload(b"{\"a\":1}".to_vec()));
        assert!(started.elapsed() < READ_TIMEOUT);
    }

    #[test]
    fn an_incomplete_payload_on_an_open_pipe_times_out() {
        let t = Duration::from_millis(50);
        assert_eq!(
            read(OpenPipe(Some(b"{\"a\":".to_vec())), MAX_PAYLOAD, t),
            Input::TimedOut
        );
    }

    /// A pipe whose write end stays open, holding `data`.
    #[cfg(unix)]
    fn open_pipe(data: &[u8]) -> (std::os::fd::RawFd, std::os::fd::RawFd) {
        let mut fds = [0; 2];
        // SAFETY: a pipe into a local array, and a write from a live slice.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            assert_eq!(
                libc::write(fds[1], data.as_ptr().cast(), data.len()),
                data.len() as isize
            );
        }
        (fds[0], fds[1])
    }

    #[cfg(unix)]
    #[test]
    fn stdin_is_read_without_a_thread_and_stops_at_a_complete_object() {
        let (r, w) = open_pipe(b"{\"a\":1}");
        assert_eq!(
            read_fd(r, MAX_PAYLOAD, READ_TIMEOUT),
            Input::Payload(b"{\"a\":1}".to_vec())
        );
        // SAFETY: closing the test's own descriptors.
        unsafe { (libc::close(r), libc::close(w)) };
    }

    #[cfg(unix)]
    #[test]
    fn stdin_left_open_with_half_a_payload_times_out() {
        let (r, w) = open_pipe(b"{\"a\":");
        assert_eq!(
            read_fd(r, MAX_PAYLOAD, Duration::from_millis(50)),
            Input::TimedOut
        );
        // SAFETY: closing the test's own descriptors.
        unsafe { (libc::close(r), libc::close(w)) };
    }

    #[test]
    fn completeness_needs_a_closing_bracket_and_valid_json() {
        assert!(is_complete_document(b"{\"a\": [1]} \n"));
        assert!(is_complete_document(b"[]"));
        assert!(!is_complete_document(b"{\"a\": [1]"));
        assert!(!is_complete_document(b"{\"a\": \"}\""));
        assert!(!is_complete_document(b"null"));
    }
}
