//! The RPC layer: `server` hands each request to its operation, `wire` converts between the
//! protocol's messages and plain data, `socket` binds
//! the per-user socket and filters peers, `fallback` makes the socket folder of the daemon's
//! own when the derived one is another user's, `connections` bounds and tracks connections, and
//! `throttle` keeps floods out of the log. The only layer that knows the protocol's types.

pub(crate) mod connections;
#[cfg(unix)]
pub(crate) mod fallback;
pub(crate) mod server;
pub(crate) mod socket;
pub(crate) mod throttle;
pub(crate) mod wire;

use berth_proto::status::CodeStatus as _;

use crate::error::BerthError;

/// An operation's failure as the client sees it: the code in `berth-code`, the hints in
/// `berth-hint-bin` (docs/decisions/0022-error-hints-cross-the-rpc-as-metadata.md).
impl From<BerthError> for tonic::Status {
    fn from(e: BerthError) -> Self {
        e.code.status_with_hints(e.message, &e.hints)
    }
}
