//! Who a process runs as on Windows: the user SID in its access token.
//!
//! Windows has no uid. The SID is what the named pipe's security descriptor
//! admits, what names this user's pipe, and what a client compares, before it
//! sends a byte, against the token of the process serving the pipe: a pipe
//! squatted by another user's process has another SID and is refused.

use std::io;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
use windows_sys::Win32::Security::{
    EqualSid, GetTokenInformation, IsValidSid, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// A user SID, copied out of a token (the bytes of a `SID` structure).
#[derive(Clone, PartialEq, Eq)]
pub struct Sid {
    /// The token's `TOKEN_USER` buffer; the SID lives inside it.
    buf: Vec<u64>,
}

impl std::fmt::Debug for Sid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_string_sid().unwrap_or_else(|_| "<sid>".into()))
    }
}

struct Handle(HANDLE);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle was opened here and is closed once.
        unsafe { CloseHandle(self.0) };
    }
}

impl Sid {
    /// The user this process runs as.
    pub fn of_this_process() -> io::Result<Sid> {
        // SAFETY: the pseudo-handle of the current process needs no closing.
        Sid::of_process_handle(unsafe { GetCurrentProcess() })
    }

    /// The user process `pid` runs as.
    pub fn of_process(pid: u32) -> io::Result<Sid> {
        // SAFETY: OpenProcess returns a new handle or null.
        let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if process.is_null() {
            return Err(io::Error::last_os_error());
        }
        let process = Handle(process);
        Sid::of_process_handle(process.0)
    }

    fn of_process_handle(process: HANDLE) -> io::Result<Sid> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: `token` receives a new handle, closed by `Handle`.
        if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let token = Handle(token);
        let mut len = 0u32;
        // SAFETY: a size query with no buffer.
        unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        if len == 0 {
            return Err(io::Error::last_os_error());
        }
        // u64s keep the buffer aligned for TOKEN_USER.
        let mut buf = vec![0u64; (len as usize).div_ceil(8)];
        // SAFETY: `buf` holds at least `len` bytes.
        let ok = unsafe {
            GetTokenInformation(token.0, TokenUser, buf.as_mut_ptr().cast(), len, &mut len)
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        let sid = Sid { buf };
        // SAFETY: the buffer was just filled by GetTokenInformation.
        if unsafe { IsValidSid(sid.psid()) } == 0 {
            return Err(io::Error::other("the token holds no valid user SID"));
        }
        Ok(sid)
    }

    fn psid(&self) -> *mut core::ffi::c_void {
        // SAFETY: `buf` starts with a TOKEN_USER, whose SID pointer points into `buf`.
        unsafe { (*self.buf.as_ptr().cast::<TOKEN_USER>()).User.Sid }
    }

    /// Whether both are the same user.
    pub fn same_user(&self, other: &Sid) -> bool {
        // SAFETY: both SIDs were validated when read.
        unsafe { equal_sids(self.psid(), other.psid()) }
    }

    /// The SID as text, `S-1-5-21-...`.
    pub fn to_string_sid(&self) -> io::Result<String> {
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: on success `text` is a NUL-terminated string freed with LocalFree.
        if unsafe { ConvertSidToStringSidW(self.psid(), &mut text) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `text` is NUL-terminated.
        let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
        // SAFETY: `len` u16s were just counted.
        let s = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
        // SAFETY: allocated by ConvertSidToStringSidW.
        unsafe { LocalFree(text.cast()) };
        Ok(s)
    }
}

/// The one comparison trust rests on: the same SID, as Windows compares them.
///
/// # Safety
/// Both pointers must point to valid SIDs.
unsafe fn equal_sids(a: *mut core::ffi::c_void, b: *mut core::ffi::c_void) -> bool {
    // SAFETY: the caller's promise.
    unsafe { EqualSid(a, b) != 0 }
}

/// The security descriptor of this user's pipe, in SDDL: a protected DACL
/// (nothing inherited) granting full access to this user alone. Without it a
/// named pipe's default descriptor lets Everyone read.
pub fn pipe_sddl(user: &Sid) -> io::Result<String> {
    Ok(format!("D:P(A;;GA;;;{})", user.to_string_sid()?))
}

/// [`pipe_sddl`] for this process's user, ready for the pipe listener.
pub fn pipe_security_descriptor()
-> io::Result<interprocess::os::windows::security_descriptor::SecurityDescriptor> {
    let sddl = pipe_sddl(&Sid::of_this_process()?)?;
    let wide = widestring::U16CString::from_str(&sddl).map_err(io::Error::other)?;
    interprocess::os::windows::security_descriptor::SecurityDescriptor::deserialize(&wide)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_its_own_user_and_the_sddl_admits_only_it() {
        let me = Sid::of_this_process().unwrap();
        let again = Sid::of_process(std::process::id()).unwrap();
        assert!(me.same_user(&again));
        let text = me.to_string_sid().unwrap();
        assert!(text.starts_with("S-1-"), "{text}");
        assert_eq!(pipe_sddl(&me).unwrap(), format!("D:P(A;;GA;;;{text})"));
        pipe_security_descriptor().expect("the descriptor parses");
    }

    /// A pipe served by another account (here LocalSystem, `S-1-5-18`, as a service squatting
    /// the name would be) is not ours. Wine runs everything as one user, so this is where the
    /// refusal's decision is shown.
    #[test]
    fn another_accounts_sid_is_not_ours() {
        use windows_sys::Win32::Security::Authorization::ConvertStringSidToSidW;
        let me = Sid::of_this_process().unwrap();
        let text: Vec<u16> = "S-1-5-18\0".encode_utf16().collect();
        let mut system = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string; the SID is freed below.
        assert_ne!(
            unsafe { ConvertStringSidToSidW(text.as_ptr(), &mut system) },
            0
        );
        // SAFETY: both are valid SIDs.
        unsafe {
            assert!(!equal_sids(me.psid(), system));
            assert!(equal_sids(me.psid(), me.psid()));
            LocalFree(system);
        }
    }
}
