//! The system's process table as the core's `ProcView`: each process's parent, start time and
//! name, from `/proc/<pid>/stat` on Linux, `proc_pidinfo` on macOS and a Toolhelp snapshot
//! with `GetProcessTimes` on Windows. Elsewhere nothing is known, and no process has a client
//! (docs/decisions/0046-a-hook-and-a-server-are-linked-by-their-client-process.md).

use berth_core::ancestry::{ProcView, ProcessFacts, ProcessId, client_of};

/// The nearest client ancestor of the process `pid` (a connection's peer, as the kernel named
/// it), or `None` when the system cannot tell one for sure.
pub fn client_process(pid: u32) -> Option<ProcessId> {
    client_of(&imp::table(), pid, std::process::id())
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;

    pub struct Table;

    pub fn table() -> Table {
        Table
    }

    impl ProcView for Table {
        fn process(&self, pid: u32) -> Option<ProcessFacts> {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            berth_core::ancestry::parse_linux_stat(&stat)
        }
    }
}

#[cfg(target_os = "macos")]
mod imp {
    use super::*;

    pub struct Table;

    pub fn table() -> Table {
        Table
    }

    impl ProcView for Table {
        fn process(&self, pid: u32) -> Option<ProcessFacts> {
            let pid_c = libc::c_int::try_from(pid).ok()?;
            // SAFETY: all-zero is a valid proc_bsdinfo (integers and byte arrays).
            let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
            let size = libc::c_int::try_from(size_of::<libc::proc_bsdinfo>()).ok()?;
            // SAFETY: `info` is writable for `size` bytes and outlives the call.
            let got = unsafe {
                libc::proc_pidinfo(
                    pid_c,
                    libc::PROC_PIDTBSDINFO,
                    0,
                    (&raw mut info).cast(),
                    size,
                )
            };
            if got != size {
                return None;
            }
            let name: Vec<u8> = info
                .pbi_comm
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            Some(ProcessFacts {
                started: info
                    .pbi_start_tvsec
                    .saturating_mul(1_000_000)
                    .saturating_add(info.pbi_start_tvusec),
                parent: info.pbi_ppid,
                name: String::from_utf8_lossy(&name).into_owned(),
            })
        }
    }
}

#[cfg(windows)]
mod imp {
    use super::*;
    use std::cell::OnceCell;
    use std::collections::HashMap;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

    use windows_sys::Win32::Foundation::{FILETIME, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW,
        TH32CS_SNAPPROCESS,
    };
    use windows_sys::Win32::System::Threading::{
        GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    /// One snapshot of the process list for a whole walk (Windows never re-parents a process,
    /// so re-reading it would tell nothing new); start times are read live, so a parent's pid
    /// taken by a later process shows as a parent younger than its child.
    pub struct Table {
        snapshot: OnceCell<HashMap<u32, (u32, String)>>,
    }

    pub fn table() -> Table {
        Table {
            snapshot: OnceCell::new(),
        }
    }

    impl ProcView for Table {
        fn process(&self, pid: u32) -> Option<ProcessFacts> {
            let (parent, name) = self.snapshot.get_or_init(snapshot).get(&pid)?.clone();
            Some(ProcessFacts {
                started: created(pid)?,
                parent,
                name,
            })
        }
    }

    /// Every process: its parent's pid and its program's file name.
    fn snapshot() -> HashMap<u32, (u32, String)> {
        let mut out = HashMap::new();
        // SAFETY: a snapshot of the process list, or INVALID_HANDLE_VALUE.
        let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
        if snap == INVALID_HANDLE_VALUE {
            return out;
        }
        // SAFETY: a handle just created and owned here alone.
        let snap = unsafe { OwnedHandle::from_raw_handle(snap) };
        // SAFETY: all-zero is a valid PROCESSENTRY32W; dwSize is set below.
        let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
        entry.dwSize = size_of::<PROCESSENTRY32W>() as u32;
        // SAFETY: the snapshot is open and the entry's size is set.
        let mut more = unsafe { Process32FirstW(snap.as_raw_handle(), &mut entry) } != 0;
        while more {
            let name = &entry.szExeFile;
            let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
            out.insert(
                entry.th32ProcessID,
                (
                    entry.th32ParentProcessID,
                    String::from_utf16_lossy(&name[..len]),
                ),
            );
            // SAFETY: as above.
            more = unsafe { Process32NextW(snap.as_raw_handle(), &mut entry) } != 0;
        }
        out
    }

    /// When `pid` was created, in 100 ns units since 1601.
    fn created(pid: u32) -> Option<u64> {
        // SAFETY: OpenProcess returns a new handle or null.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if h.is_null() {
            return None;
        }
        // SAFETY: a non-null handle just opened and owned here alone.
        let h = unsafe { OwnedHandle::from_raw_handle(h) };
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut creation, mut exit, mut kernel, mut user) = (zero, zero, zero, zero);
        // SAFETY: the handle is open with query rights; the four times live for the call.
        let ok = unsafe {
            GetProcessTimes(
                h.as_raw_handle(),
                &mut creation,
                &mut exit,
                &mut kernel,
                &mut user,
            )
        };
        (ok != 0)
            .then(|| (u64::from(creation.dwHighDateTime) << 32) | u64::from(creation.dwLowDateTime))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod imp {
    use super::*;

    pub struct Table;

    pub fn table() -> Table {
        Table
    }

    impl ProcView for Table {
        fn process(&self, _pid: u32) -> Option<ProcessFacts> {
            None
        }
    }
}

// Only Linux's process table is read by a test here: the macOS and Windows readers are
// built and linted for their targets (.ci/platforms), not run.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// This test process, started by cargo's test runner (not a shell), is its children's
    /// client; its own client is whatever started it, never itself.
    #[test]
    fn a_child_of_this_process_has_this_process_for_its_client() {
        let me = std::process::id();
        let mine = imp::table().process(me).expect("this process");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--list", "--exact", "no-such-test"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let client = client_of(&imp::table(), child.id(), 0);
        let _ = child.wait();
        assert_eq!(
            client,
            Some(ProcessId {
                pid: me,
                started: mine.started
            })
        );
    }
}
