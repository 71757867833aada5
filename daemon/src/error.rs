//! The daemon's one error type for requests: a stable [`Code`] for clients to
//! branch on, a message that names the thing, and hints: the next steps, which
//! the CLI prints as `Hint:` lines and MCP results carry beside the error
//! (docs/decisions/0022-error-hints-cross-the-rpc-as-metadata.md).

use berth_vocab::codes::Code;

/// A request's failure, as a client will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BerthError {
    /// What kind of failure.
    pub code: Code,
    /// What happened (and what to do, where no hint says it).
    pub message: String,
    /// What to do next, one step each, in order.
    pub hints: Vec<String>,
}

impl BerthError {
    /// The request was understood and refused.
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(Code::Refused, message)
    }
    /// A named thing does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Code::NotFound, message)
    }
    /// The request was malformed.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Code::Invalid, message)
    }
    /// A tool's argument is missing or of the wrong type.
    pub fn bad_argument(message: impl Into<String>) -> Self {
        Self::new(Code::BadArgument, message)
    }
    /// Something failed inside the daemon.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Code::Internal, message)
    }
    /// A file tool met a FIFO, device or socket.
    pub fn not_regular(message: impl Into<String>) -> Self {
        Self::new(Code::NotRegularFile, message)
    }
    /// The daemon is stopping and takes no new work.
    pub fn shutting_down(message: impl Into<String>) -> Self {
        Self::new(Code::ShuttingDown, message)
    }
    /// The call missed its deadline.
    pub fn timed_out(message: impl Into<String>) -> Self {
        Self::new(Code::TimedOut, message)
    }
    /// A session another process holds.
    pub fn owned(message: impl Into<String>) -> Self {
        Self::new(Code::SessionOwned, message)
    }
    /// The disk holding `what` is full, so it was not written. Every writer
    /// of berth's leaves the old content in place when a write fails (an
    /// atomic replace, a rolled-back transaction), so the message can say so.
    pub fn disk_full(what: impl std::fmt::Display, place: impl std::fmt::Display) -> Self {
        Self::new(
            Code::DiskFull,
            format!(
                "{what} could not be written: the disk is full (no space left on device); nothing was changed"
            ),
        )
        .hint(format!(
            "free some space on the disk that holds {place}, then try again"
        ))
    }
    /// Adds a next step.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
    fn new(code: Code, message: impl Into<String>) -> Self {
        BerthError {
            code,
            message: message.into(),
            hints: Vec::new(),
        }
    }
}

/// Whether an I/O error says the disk, or the user's quota on it, is full.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

impl std::fmt::Display for BerthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BerthError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_names_what_was_not_written_and_the_way_out() {
        let e = BerthError::disk_full("w/notes.md", "w/notes.md");
        assert_eq!(e.code, Code::DiskFull);
        assert_eq!(e.code.as_str(), "disk-full");
        assert_eq!(
            e.message,
            "w/notes.md could not be written: the disk is full (no space left on device); nothing was changed"
        );
        assert_eq!(
            e.hints,
            ["free some space on the disk that holds w/notes.md, then try again"]
        );
    }

    #[test]
    fn enospc_and_edquot_are_a_full_disk_and_nothing_else_is() {
        #[cfg(unix)]
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            assert!(is_disk_full(&std::io::Error::from_raw_os_error(errno)));
        }
        // ERROR_DISK_FULL and ERROR_HANDLE_DISK_FULL.
        #[cfg(windows)]
        for code in [112, 39] {
            assert!(is_disk_full(&std::io::Error::from_raw_os_error(code)));
        }
        assert!(!is_disk_full(&std::io::Error::from(
            std::io::ErrorKind::PermissionDenied
        )));
    }
}
