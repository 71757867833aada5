//! berth's wire protocol and the one client path every shim uses.
//!
//! - [`pb`]: the generated tonic/prost types for `proto/berth.proto`.
//! - [`atomic`]: the one way berth replaces a file, syncing it and
//!   following no link.
//! - [`careful_open`]: reading a file without following a link or waiting
//!   on a FIFO.
//! - [`landing`]: where a write tool's file lands, followed through links;
//!   the pre-tool hook and the daemon's guard follow targets the same way.
//! - [`paths`]: where the socket, data and logs live, derived in one place
//!   for the daemon and every client alike.
//! - [`record`]: where the one daemon of a data folder listens, written by
//!   it in that folder.
//! - [`transport`]: the local-socket stream both ends speak gRPC over.
//! - [`client`]: connect, start the daemon when it is not running, and
//!   compare versions.
//! - [`verify`]: is the daemon behind a socket this user's? Checked on
//!   every dial, before anything is sent.
//! - [`instance_lock`]: the lock that makes one daemon per data folder
//!   and per socket.
//! - [`status`]: an error's code and hints on a gRPC status.
//! - [`logfile`]: log files only their user may read.
//! - [`ownership`]: are the data folder, the database and the state folder
//!   this user's alone? Checked before anything is read from them.
//! - `user_sid` (Windows): who a process runs as, by its token's user SID.
//!
//! ```no_run
//! # async fn demo() -> Result<(), berth_proto::client::ClientError> {
//! let env = berth_proto::paths::EnvCtx::from_process();
//! let mut conn = berth_proto::client::Connection::open(&env).await?;
//! let status = conn.status().await?;
//! println!("berthd {} at {}", status.version, status.socket);
//! # Ok(()) }
//! ```
// Tests write files freely; the product code replaces one only through `atomic` (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#![deny(missing_docs)]

pub mod atomic;
pub mod careful_open;
pub mod client;
pub mod instance_lock;
pub mod landing;
pub mod logfile;
pub mod ownership;
pub mod paths;
pub mod record;
pub mod spawn;
pub mod status;
pub mod transport;
#[cfg(windows)]
pub mod user_sid;
pub mod verify;

/// Generated protocol types (package `berth.v1`).
#[allow(missing_docs, clippy::all)]
pub mod pb {
    tonic::include_proto!("berth.v1");
}

/// This build's version, exchanged between client and daemon.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Bumped whenever a request or reply changes meaning.
pub const PROTOCOL: u32 = 1;

/// Largest message either side sends or accepts: room for a file at the
/// tools' 4 MiB limit twice over (text and structured content) plus framing.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// Request metadata key carrying the client's version.
pub const CLIENT_VERSION_HEADER: &str = "berth-client-version";

/// Request metadata key (binary) carrying the client's data folder: the
/// daemon refuses a request meant for another registry.
pub const DATA_DIR_HEADER: &str = "berth-data-dir-bin";
