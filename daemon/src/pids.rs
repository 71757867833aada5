//! Whether a process id is still a running berth program: a shim whose session
//! is kept, or a writer whose temporary files must not be swept. A pid reused
//! by another program must not keep either forever, so where the system tells
//! a process's name (Linux's `/proc`, Windows' image name) the name must match.

/// Whether `pid` runs a program whose name starts with `name` (`berthd`,
/// `berth-mcp`). Without a way to read names (macOS), whether it runs at all.
pub fn runs(pid: u32, name: &str) -> bool {
    pid != 0 && imp::runs(pid, name)
}

#[cfg(unix)]
mod imp {
    pub fn runs(pid: u32, name: &str) -> bool {
        let Some(pid_t) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        let proc = std::path::Path::new("/proc");
        if proc.join("self").exists() {
            return std::fs::read_to_string(proc.join(pid.to_string()).join("comm"))
                .is_ok_and(|comm| comm.trim_end().starts_with(name));
        }
        // Signal 0 only checks that the process exists and may be signalled.
        match rustix::process::test_kill_process(pid_t) {
            Ok(()) => true,
            Err(e) => e == rustix::io::Errno::PERM,
        }
    }
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        QueryFullProcessImageNameW,
    };

    pub fn runs(pid: u32, name: &str) -> bool {
        // SAFETY: OpenProcess returns a new handle or null; it is closed below.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if h.is_null() {
            return false;
        }
        let mut code = 0u32;
        // SAFETY: `h` is a valid process handle; `code` lives for the call.
        let alive = unsafe { GetExitCodeProcess(h, &mut code) } != 0 && code == STILL_ACTIVE as u32;
        let mut buf = [0u16; 1024];
        let mut len = buf.len() as u32;
        // SAFETY: `buf` holds `len` u16s.
        let named = unsafe { QueryFullProcessImageNameW(h, 0, buf.as_mut_ptr(), &mut len) } != 0;
        // SAFETY: opened above, closed once.
        unsafe { CloseHandle(h) };
        if !alive {
            return false;
        }
        if !named {
            return true;
        }
        let image = String::from_utf16_lossy(&buf[..len as usize]);
        let file = image.rsplit(['\\', '/']).next().unwrap_or(&image);
        file.to_ascii_lowercase()
            .starts_with(&name.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_under_its_own_name_and_not_another() {
        let me = std::env::current_exe().unwrap();
        let stem = me.file_stem().unwrap().to_string_lossy();
        // Linux's comm is at most 15 bytes.
        let prefix: String = stem.chars().take(15).collect();
        assert!(runs(std::process::id(), &prefix));
        assert!(!runs(std::process::id(), "no-such-program-name"));
        assert!(!runs(0, &prefix));
    }
}
