//! The clients' start on Windows.

use windows_sys::Win32::Foundation::{
    HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE, SetHandleInformation,
};
use windows_sys::Win32::System::Console::{
    GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
};

/// Makes this process's standard handles its own: not inheritable.
///
/// A Windows child inherits every inheritable handle of its parent, not only
/// the three it is given; a client's standard handles usually are (its
/// caller made them so, to pass them), so the daemon a client starts
/// detached would hold the caller's pipes, and a caller waiting for the end
/// of a hook's or a command's output would wait for the daemon to exit.
/// Children a client starts on purpose still get these handles: std passes
/// an inherited one as a new inheritable copy.
pub fn keep_standard_handles() {
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: GetStdHandle only reads the process's handle table.
        let h = unsafe { GetStdHandle(which) };
        if h.is_null() || h == INVALID_HANDLE_VALUE {
            continue;
        }
        // SAFETY: a handle of this process; only its inherit flag changes.
        // A console handle that refuses is no pipe to leak.
        unsafe { SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Foundation::GetHandleInformation;

    #[test]
    fn an_inheritable_standard_handle_is_made_the_process_own() {
        // Stand in for a handle the caller passed: an inheritable pipe end
        // made this process's stdout for the test's duration.
        let (_r, w) = std::io::pipe().unwrap();
        let h = w.as_raw_handle();
        let inherit = |h| {
            let mut flags = 0;
            // SAFETY: a valid handle and a local out value.
            assert_ne!(unsafe { GetHandleInformation(h, &mut flags) }, 0);
            flags & HANDLE_FLAG_INHERIT != 0
        };
        // SAFETY: a handle of this process.
        unsafe { SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) };
        assert!(inherit(h));
        use windows_sys::Win32::System::Console::SetStdHandle;
        // SAFETY: reading and setting this process's standard handle.
        let before = unsafe { GetStdHandle(STD_OUTPUT_HANDLE) };
        // SAFETY: as above; it is put back below.
        unsafe { SetStdHandle(STD_OUTPUT_HANDLE, h) };
        keep_standard_handles();
        // SAFETY: as above.
        unsafe { SetStdHandle(STD_OUTPUT_HANDLE, before) };
        assert!(!inherit(h));
    }
}
