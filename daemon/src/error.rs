//! The daemon's one error type for requests: a stable [`Code`] for clients to
//! branch on, a message that names the thing, and hints: the next steps, which
//! the CLI prints as `Hint:` lines and MCP results carry beside the error
//! (docs/decisions/0022-error-hints-cross-the-rpc-as-metadata.md).

use berth_proto::codes::Code;

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

impl std::fmt::Display for BerthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BerthError {}
