//! Stable machine codes for what went wrong, which cross the boundary between the daemon and
//! its clients: clients branch on the code, never on message text. How a code and its hints
//! travel on a gRPC status is the protocol's (`berth_proto::status`).

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
    /// A live session belongs to another process: only the process that
    /// registered it may call its tools or register it again, until it ends.
    SessionOwned,
    /// The disk (or the user's quota) is full, so something could not be
    /// written; the message names it, and nothing was changed.
    DiskFull,
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
            Code::SessionOwned => "session-owned",
            Code::DiskFull => "disk-full",
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
            "session-owned" => Code::SessionOwned,
            "disk-full" => Code::DiskFull,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_survives_a_round_trip_through_its_spelling() {
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
            Code::SessionOwned,
            Code::DiskFull,
        ] {
            assert_eq!(Code::parse(code.as_str()), Some(code));
        }
        assert_eq!(Code::parse("from-a-newer-daemon"), None);
    }
}
