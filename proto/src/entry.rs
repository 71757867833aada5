//! A lean process entry for the clients on the hot path (`berth`, `berth-hook`).
//!
//! Before `main`, Rust's standard start-up asks glibc where the main thread's
//! stack guard is (`pthread_getattr_np`, which reads and parses
//! `/proc/self/maps`: about 110k instructions and six system calls, a third of
//! an empty Rust program's start-up; docs/benchmarks.md,
//! "The suite against the start-up limits"). berth's
//! hot-path clients skip it: on Unix they are `#![no_main]` and call
//! [`start`] and [`finish`] from a C `main`, which keep the parts of the
//! standard start-up they rely on:
//!
//! - standard descriptors 0–2 are open (on `/dev/null` if they were closed),
//!   so a socket or log file never lands on stdout;
//! - SIGPIPE is ignored, so a reader going away is a write error the program
//!   handles, not a signal that kills it;
//! - stdout is flushed before the process exits.
//!
//! What is given up: a stack overflow ends in a plain SIGSEGV instead of
//! Rust's "has overflowed its stack" message, and panics name the main
//! thread `<unnamed>`.

use std::ffi::{CStr, OsString, c_char, c_int};
use std::io::Write;
use std::os::unix::ffi::OsStringExt;

/// Prepares the process as the standard start-up would and returns its
/// arguments (program name first).
///
/// # Safety
/// `argv` must hold `argc` valid C strings, as the C runtime passes them to
/// `main`.
pub unsafe fn start(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    open_standard_fds();
    // SAFETY: only sets SIGPIPE's disposition to "ignore".
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    (0..usize::try_from(argc).unwrap_or(0))
        .map(|i| {
            // SAFETY: the caller promises `argc` valid C strings in `argv`.
            let arg = unsafe { CStr::from_ptr(*argv.add(i)) };
            OsString::from_vec(arg.to_bytes().to_vec())
        })
        .collect()
}

/// Flushes stdout and gives `main`'s return value for `code`.
pub fn finish(code: u8) -> c_int {
    let _ = std::io::stdout().flush();
    c_int::from(code)
}

/// Opens `/dev/null` on any of descriptors 0–2 that is closed, lowest first
/// (`open` takes the lowest free number), as the standard start-up does.
fn open_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: polls a local array of three entries without waiting.
    if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } < 0 {
        return;
    }
    for fd in fds {
        if fd.revents & libc::POLLNVAL != 0 {
            // SAFETY: opens a path from a static C string.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_read_from_argv_in_order() {
        let owned = [c"berth", c"resolve", c"--json"];
        let argv: Vec<*const c_char> = owned.iter().map(|a| a.as_ptr()).collect();
        // SAFETY: three valid C strings.
        let args = unsafe { start(3, argv.as_ptr()) };
        assert_eq!(args, ["berth", "resolve", "--json"]);
    }
}
