//! The RPC layer: `server` maps the protocol's messages to operations and back, `socket` binds
//! the per-user socket and filters peers, `connections` bounds and tracks connections, and
//! `throttle` keeps floods out of the log. The only layer that knows the protocol's types.

pub(crate) mod connections;
pub(crate) mod server;
pub(crate) mod socket;
pub(crate) mod throttle;
