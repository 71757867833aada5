//! Stable machine codes that cross the gRPC boundary.
//!
//! The daemon attaches one to every error it returns (metadata key
//! [`CODE_HEADER`]); clients branch on the code, never on message text.

/// Metadata key carrying a [`Code`] on an error status.
pub const CODE_HEADER: &str = "berth-code";

/// Longest error message sent, in bytes.
pub const MAX_MESSAGE_CHARS: usize = 2048;

/// What went wrong, as far as a client needs to know to react.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Code {
    /// A named thing (workspace, root, setting, path) does not exist.
    NotFound,
    /// The request was understood and refused (a guard, an overlap, a rule).
    Refused,
    /// The request was malformed (a bad name, a relative path).
    Invalid,
    /// The running daemon is older than the client; restart it.
    DaemonOutdated,
    /// The running daemon is newer than the client; upgrade the client.
    ClientOutdated,
    /// Something failed inside the daemon (storage, I/O).
    Internal,
    /// A file tool met a FIFO, device or socket, which it never opens for
    /// reading or writing (opening one can wait for ever).
    NotRegularFile,
    /// The daemon is stopping: it takes no new work and commits no new write.
    ShuttingDown,
    /// The call did not finish within the daemon's deadline (a hung or slow
    /// filesystem); a write that timed out was not committed.
    TimedOut,
    /// The daemon serves another data folder (another registry) than the
    /// client's; the message names both.
    OtherDataDir,
    /// A tool's argument is missing or of the wrong type; the message names
    /// it and shows a correct call.
    BadArgument,
}

impl Code {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::NotFound => "not-found",
            Code::Refused => "refused",
            Code::Invalid => "invalid",
            Code::DaemonOutdated => "daemon-outdated",
            Code::ClientOutdated => "client-outdated",
            Code::Internal => "internal",
            Code::NotRegularFile => "not-regular-file",
            Code::ShuttingDown => "shutting-down",
            Code::TimedOut => "timed-out",
            Code::OtherDataDir => "other-data-dir",
            Code::BadArgument => "bad-argument",
        }
    }

    /// Parses the wire spelling; unknown codes (from a newer daemon) are `None`.
    pub fn parse(s: &str) -> Option<Code> {
        Some(match s {
            "not-found" => Code::NotFound,
            "refused" => Code::Refused,
            "invalid" => Code::Invalid,
            "daemon-outdated" => Code::DaemonOutdated,
            "client-outdated" => Code::ClientOutdated,
            "internal" => Code::Internal,
            "not-regular-file" => Code::NotRegularFile,
            "shutting-down" => Code::ShuttingDown,
            "timed-out" => Code::TimedOut,
            "other-data-dir" => Code::OtherDataDir,
            "bad-argument" => Code::BadArgument,
            _ => return None,
        })
    }

    /// Builds a status carrying this code. The message travels in an HTTP/2
    /// trailer, so it is cut to [`MAX_MESSAGE_CHARS`]: a message quoting a
    /// hostile 64 KiB path would otherwise overflow the peer's header limit
    /// and break the connection.
    pub fn status(self, message: impl Into<String>) -> tonic::Status {
        let mut message = message.into();
        if message.len() > MAX_MESSAGE_CHARS {
            let mut cut = MAX_MESSAGE_CHARS;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push('…');
        }
        let grpc = match self {
            Code::NotFound => tonic::Code::NotFound,
            Code::Refused => tonic::Code::FailedPrecondition,
            Code::Invalid | Code::BadArgument => tonic::Code::InvalidArgument,
            Code::DaemonOutdated | Code::ClientOutdated | Code::OtherDataDir => {
                tonic::Code::FailedPrecondition
            }
            Code::Internal => tonic::Code::Internal,
            Code::NotRegularFile => tonic::Code::FailedPrecondition,
            Code::ShuttingDown => tonic::Code::Unavailable,
            Code::TimedOut => tonic::Code::DeadlineExceeded,
        };
        let mut status = tonic::Status::new(grpc, message);
        status
            .metadata_mut()
            .insert(CODE_HEADER, self.as_str().parse().expect("codes are ASCII"));
        status
    }

    /// Reads the code off a status, if the daemon attached one.
    pub fn of(status: &tonic::Status) -> Option<Code> {
        status
            .metadata()
            .get(CODE_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(Code::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_message_is_cut_on_a_character_boundary() {
        let s = Code::Refused.status("é".repeat(40_000));
        assert!(s.message().len() <= MAX_MESSAGE_CHARS + '…'.len_utf8());
        assert!(s.message().ends_with('…'));
    }

    #[test]
    fn every_code_survives_a_round_trip_through_a_status() {
        for code in [
            Code::NotFound,
            Code::Refused,
            Code::Invalid,
            Code::DaemonOutdated,
            Code::ClientOutdated,
            Code::Internal,
            Code::NotRegularFile,
            Code::ShuttingDown,
            Code::TimedOut,
            Code::BadArgument,
            Code::OtherDataDir,
        ] {
            assert_eq!(Code::of(&code.status("x")), Some(code));
        }
    }
}
