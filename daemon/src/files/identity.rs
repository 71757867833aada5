//! Which file an open handle is, whatever its path says now: (device, inode)
//! on Unix, (volume serial number, file index) on Windows. Two handles with
//! the same identity are the same file; a path that now names another file
//! (a folder moved or replaced) shows as another identity.

use std::fs::File;
use std::io;

/// The identity of the open file `f`.
#[cfg(unix)]
pub fn of_file(f: &File) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = f.metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// The identity of the open file `f`.
#[cfg(windows)]
pub fn of_file(f: &File) -> io::Result<(u64, u64)> {
    of_handle(f)
}

/// The identity of any open handle (a file's or a folder's).
#[cfg(windows)]
pub fn of_handle(h: &impl std::os::windows::io::AsRawHandle) -> io::Result<(u64, u64)> {
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    // SAFETY: all-zero is a valid value of this plain struct.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a live handle and a struct that lives for the call.
    if unsafe { GetFileInformationByHandle(h.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
    Ok((u64::from(info.dwVolumeSerialNumber), index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_has_one_identity_and_a_replaced_one_another() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f");
        std::fs::write(&p, "a").unwrap();
        let first = of_file(&File::open(&p).unwrap()).unwrap();
        assert_eq!(of_file(&File::open(&p).unwrap()).unwrap(), first);
        let q = t.path().join("g");
        std::fs::write(&q, "b").unwrap();
        let other = of_file(&File::open(&q).unwrap()).unwrap();
        assert_ne!(other, first);
        // Renamed over it, the path names the other file: the identity moves with the file.
        std::fs::rename(&q, &p).unwrap();
        assert_eq!(of_file(&File::open(&p).unwrap()).unwrap(), other);
    }
}
