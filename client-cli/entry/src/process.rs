//! The lean process entry of the clients on the hot path.
//!
//! Before `main`, Rust's standard start-up asks glibc where the main thread's
//! stack guard is (`pthread_getattr_np`, which reads and parses
//! `/proc/self/maps`: about 110k instructions and six system calls, a third of
//! an empty Rust program's start-up; docs/decisions/0010-client-start-up-budget.md).
//! berth's hot-path clients skip it: on Unix they are `#![no_main]` and their C
//! `main` calls [`run`], which keeps the parts of the standard start-up they
//! rely on:
//!
//! - standard descriptors 0–2 are open (on `/dev/null` if they were closed),
//!   so a socket or log file never lands on stdout;
//! - SIGPIPE is ignored, so a reader going away is a write error the program
//!   handles, not a signal that kills it;
//! - a panic ends the process with a line naming the program and a fixed exit
//!   code, as the standard start-up's 101, instead of unwinding into C (which
//!   aborts with SIGABRT, exit 134);
//! - stdout is flushed before the process exits.
//!
//! What is given up: a stack overflow ends in a plain SIGSEGV instead of
//! Rust's "has overflowed its stack" message, and panics name the main
//! thread `<unnamed>`.

use std::ffi::{CStr, OsString, c_char, c_int};
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The exit code of a program whose body panicked: the one Rust's standard
/// start-up gives, so a caller sees the same code with either entry.
pub const PANIC_EXIT: u8 = 101;

/// Prepares the process as the standard start-up would, runs `body` with the
/// process's arguments (program name first), flushes stdout, and gives
/// `main`'s return value: `body`'s exit code, or `on_panic` if it panicked.
/// A panic's message is printed by the panic hook; `run` adds one line on
/// stderr saying it was `program`'s internal error.
///
/// # Safety
/// `argv` must hold `argc` valid C strings, as the C runtime passes them to
/// `main`.
pub unsafe fn run(
    argc: c_int,
    argv: *const *const c_char,
    program: &str,
    on_panic: u8,
    body: impl FnOnce(Vec<OsString>) -> u8,
) -> c_int {
    // SAFETY: the caller's promise, passed on.
    let args = unsafe { start(argc, argv) };
    let code = match catch_unwind(AssertUnwindSafe(|| body(args))) {
        Ok(code) => code,
        Err(_) => {
            eprintln!(
                "{program}: internal error (a bug in {program}), see the panic message above"
            );
            on_panic
        }
    };
    let _ = std::io::stdout().flush();
    c_int::from(code)
}

/// Opens the standard descriptors, ignores SIGPIPE and reads the arguments.
///
/// # Safety
/// As for [`run`].
unsafe fn start(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
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

    fn argv(owned: &[&CStr]) -> Vec<*const c_char> {
        owned.iter().map(|a| a.as_ptr()).collect()
    }

    #[test]
    fn arguments_are_read_from_argv_in_order() {
        let owned = [c"berth", c"resolve", c"--json"];
        let argv = argv(&owned);
        let mut seen = Vec::new();
        // SAFETY: three valid C strings.
        let code = unsafe {
            run(3, argv.as_ptr(), "berth", PANIC_EXIT, |args| {
                seen = args;
                7
            })
        };
        assert_eq!(code, 7);
        assert_eq!(seen, ["berth", "resolve", "--json"]);
    }

    #[test]
    fn a_panic_gives_the_programs_panic_code_instead_of_an_abort() {
        let owned = [c"berth"];
        let argv = argv(&owned);
        // SAFETY: one valid C string.
        let code = unsafe { run(1, argv.as_ptr(), "berth", PANIC_EXIT, |_| panic!("a bug")) };
        assert_eq!(code, c_int::from(PANIC_EXIT));
        // berth-hook asks for 0: a hook never fails its client.
        // SAFETY: as above.
        let code = unsafe { run(1, argv.as_ptr(), "berth-hook", 0, |_| panic!("a bug")) };
        assert_eq!(code, 0);
    }
}
