//! What kind of file a stat found, in the words a note uses ("a named pipe (FIFO)"): shared by
//! the project file's and the `.git` file's refusals.

use std::fs::Metadata;
#[cfg(unix)]
use std::os::unix::fs::FileTypeExt;

#[cfg(windows)]
pub(crate) fn describe(meta: &Metadata) -> &'static str {
    if meta.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

#[cfg(unix)]
pub(crate) fn describe(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}
