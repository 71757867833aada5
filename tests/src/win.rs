//! The Windows side of the harness: the process list, another process's
//! environment (read from its memory, as /proc/<pid>/environ is on Linux),
//! suspending a process's threads, and terminating a process through a handle.

use std::ffi::{OsStr, OsString};
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::PathBuf;
use std::time::Duration;

use windows_sys::Wdk::System::Threading::{NtQueryInformationProcess, ProcessBasicInformation};
use windows_sys::Win32::Foundation::{INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Diagnostics::Debug::ReadProcessMemory;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
    TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::Threading::{
    OpenProcess, OpenThread, PEB, PROCESS_ACCESS_RIGHTS, PROCESS_BASIC_INFORMATION,
    PROCESS_QUERY_INFORMATION, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
    PROCESS_TERMINATE, PROCESS_VM_READ, QueryFullProcessImageNameW, RTL_USER_PROCESS_PARAMETERS,
    SuspendThread, THREAD_SUSPEND_RESUME, TerminateProcess, WaitForSingleObject,
};

/// Every process now: its pid and its program's file name.
pub fn processes() -> Vec<(u32, OsString)> {
    // SAFETY: a snapshot of the process list, or INVALID_HANDLE_VALUE.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return Vec::new();
    }
    // SAFETY: a handle just created and owned here alone.
    let snap = unsafe { OwnedHandle::from_raw_handle(snap) };
    let mut out = Vec::new();
    // SAFETY: all-zero is a valid PROCESSENTRY32W; dwSize is set below.
    let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<PROCESSENTRY32W>() as u32;
    // SAFETY: the snapshot is open and the entry's size is set.
    let mut more = unsafe { Process32FirstW(snap.as_raw_handle(), &mut entry) } != 0;
    while more {
        let name = &entry.szExeFile;
        let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
        out.push((entry.th32ProcessID, OsString::from_wide(&name[..len])));
        // SAFETY: as above.
        more = unsafe { Process32NextW(snap.as_raw_handle(), &mut entry) } != 0;
    }
    out
}

fn open(pid: u32, access: PROCESS_ACCESS_RIGHTS) -> Option<OwnedHandle> {
    // SAFETY: OpenProcess returns a new handle or null.
    let h = unsafe { OpenProcess(access, 0, pid) };
    // SAFETY: a non-null handle just opened and owned here alone.
    (!h.is_null()).then(|| unsafe { OwnedHandle::from_raw_handle(h) })
}

/// The full path of the program `process` runs.
fn image(process: &OwnedHandle) -> Option<PathBuf> {
    let mut buf = vec![0u16; 32 * 1024];
    let mut len = buf.len() as u32;
    // SAFETY: the buffer holds `len` UTF-16 units; 0 asks for a Win32 path.
    let ok = unsafe {
        QueryFullProcessImageNameW(process.as_raw_handle(), 0, buf.as_mut_ptr(), &mut len)
    };
    (ok != 0).then(|| OsString::from_wide(&buf[..len as usize]).into())
}

/// Whether `pid` runs a program named `name` (as Windows compares names) and
/// has not exited.
pub fn is_live(pid: u32, name: &str) -> bool {
    let Some(process) = open(pid, PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE) else {
        return false;
    };
    let named = image(&process)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .is_some_and(|n| n.eq_ignore_ascii_case(name));
    // SAFETY: the handle is open with SYNCHRONIZE; 0 only polls.
    named && unsafe { WaitForSingleObject(process.as_raw_handle(), 0) } == WAIT_TIMEOUT
}

/// Terminates `pid`, without waiting; nothing when it is gone.
pub fn terminate(pid: u32) {
    if let Some(process) = open(pid, PROCESS_TERMINATE) {
        // SAFETY: the handle is open with PROCESS_TERMINATE.
        unsafe { TerminateProcess(process.as_raw_handle(), 1) };
    }
}

/// Terminates `pid` and waits for it to exit, at most `timeout`.
pub fn terminate_and_wait(pid: u32, timeout: Duration) -> bool {
    let Some(process) = open(pid, PROCESS_TERMINATE | PROCESS_SYNCHRONIZE) else {
        return true;
    };
    let millis = timeout.as_millis().min(u128::from(u32::MAX - 1)) as u32;
    // SAFETY: the handle is open with both rights for these calls.
    unsafe {
        TerminateProcess(process.as_raw_handle(), 1);
        WaitForSingleObject(process.as_raw_handle(), millis) == WAIT_OBJECT_0
    }
}

/// Suspends every thread of `pid`, as SIGSTOP stops a Unix process: pass
/// after pass until one finds no thread it has not suspended yet (a thread
/// may start while the others are being suspended). False when none could be.
pub fn suspend(pid: u32) -> bool {
    let mut done = std::collections::BTreeSet::new();
    loop {
        let new: Vec<u32> = threads_of(pid)
            .into_iter()
            .filter(|t| !done.contains(t))
            .collect();
        if new.is_empty() {
            return !done.is_empty();
        }
        for tid in new {
            // SAFETY: OpenThread returns a new handle or null.
            let h = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, tid) };
            if !h.is_null() {
                // SAFETY: a handle just opened and owned here alone.
                let h = unsafe { OwnedHandle::from_raw_handle(h) };
                // SAFETY: the handle is open with THREAD_SUSPEND_RESUME.
                unsafe { SuspendThread(h.as_raw_handle()) };
            }
            done.insert(tid);
        }
    }
}

/// The ids of the threads of `pid` now.
fn threads_of(pid: u32) -> Vec<u32> {
    // SAFETY: a snapshot of every thread, or INVALID_HANDLE_VALUE.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return Vec::new();
    }
    // SAFETY: a handle just created and owned here alone.
    let snap = unsafe { OwnedHandle::from_raw_handle(snap) };
    let mut out = Vec::new();
    // SAFETY: all-zero is a valid THREADENTRY32; dwSize is set below.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    // SAFETY: the snapshot is open and the entry's size is set.
    let mut more = unsafe { Thread32First(snap.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            out.push(entry.th32ThreadID);
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snap.as_raw_handle(), &mut entry) } != 0;
    }
    out
}

/// Whether the environment of `pid` holds the entry `kv` (`NAME=value`).
pub fn has_env_entry(pid: u32, kv: &str) -> bool {
    let want: Vec<u16> = OsStr::new(kv).encode_wide().collect();
    environment(pid).is_some_and(|block| block.split(|&c| c == 0).any(|e| e == want.as_slice()))
}

/// Reads `len` bytes at `at` in `process` into `out`; false when any of
/// them cannot be read.
fn read(process: &OwnedHandle, at: usize, out: *mut u8, len: usize) -> bool {
    let mut got = 0;
    // SAFETY: `out` is valid for `len` bytes; the other process's memory is
    // only read, and a bad address fails the call rather than faulting.
    let ok = unsafe {
        ReadProcessMemory(
            process.as_raw_handle(),
            at as *const _,
            out.cast(),
            len,
            &mut got,
        )
    };
    ok != 0 && got == len
}

/// The environment block of `pid`: its PEB's process parameters point at
/// it. Read page by page up to its closing empty entry, since its size is
/// not recorded everywhere (older systems, Wine).
fn environment(pid: u32) -> Option<Vec<u16>> {
    let process = open(pid, PROCESS_QUERY_INFORMATION | PROCESS_VM_READ)?;
    // SAFETY: all-zero is a valid PROCESS_BASIC_INFORMATION.
    let mut info: PROCESS_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
    let mut len = 0u32;
    // SAFETY: the buffer is the structure this information class fills.
    let status = unsafe {
        NtQueryInformationProcess(
            process.as_raw_handle(),
            ProcessBasicInformation,
            (&raw mut info).cast(),
            size_of::<PROCESS_BASIC_INFORMATION>() as u32,
            &mut len,
        )
    };
    if status < 0 || info.PebBaseAddress.is_null() {
        return None;
    }
    let mut params = 0usize;
    let at = info.PebBaseAddress as usize + std::mem::offset_of!(PEB, ProcessParameters);
    if !read(&process, at, (&raw mut params).cast(), size_of::<usize>()) || params == 0 {
        return None;
    }
    // `Environment` follows `CommandLine`, where the published structure ends.
    let mut env = 0usize;
    let at = params + size_of::<RTL_USER_PROCESS_PARAMETERS>();
    if !read(&process, at, (&raw mut env).cast(), size_of::<usize>()) || env == 0 {
        return None;
    }
    const PAGE: usize = 4096;
    const MAX: usize = 4 << 20;
    let mut bytes: Vec<u8> = Vec::new();
    let mut at = env;
    while bytes.len() < MAX {
        let n = PAGE - at % PAGE;
        let start = bytes.len();
        bytes.resize(start + n, 0);
        if !read(&process, at, bytes[start..].as_mut_ptr(), n) {
            return None;
        }
        at += n;
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect();
        if let Some(end) = units.windows(2).position(|w| w == [0, 0]) {
            return Some(units[..end + 1].to_vec());
        }
    }
    None
}
