//! berth-client: how a berth process finds, trusts and reaches the one daemon of its data
//! folder, and touches the user's files on the way. The clients connect through it; `berthd`
//! uses the same pieces from the other end, so both derive one socket path, make one ownership
//! check and write one record (ARCHITECTURE.md, "berth-client").
//!
//! - [`client`]: connect, start the daemon when it is not running, and
//!   compare versions.
//! - [`spawn`]: starting a detached daemon and waiting for it to be ready.
//! - [`paths`]: where the socket, data and logs live, derived in one place
//!   for the daemon and every client alike.
//! - [`record`]: where the one daemon of a data folder listens, written by
//!   it in that folder.
//! - [`transport`]: the local-socket stream both ends speak gRPC over.
//! - [`verify`]: is the daemon behind a socket this user's? Checked on
//!   every dial, before anything is sent.
//! - [`ownership`]: are the data folder, the database and the state folder
//!   this user's alone? Checked before anything is read from them.
//! - [`instance_lock`]: the lock that makes one daemon per data folder
//!   and per socket.
//! - [`atomic`]: the one way berth replaces a file, syncing it and
//!   following no link.
//! - [`careful_open`]: reading a file without following a link or waiting
//!   on a FIFO.
//! - [`landing`]: where a write tool's file lands, followed through links;
//!   the pre-tool hook and the daemon's guard follow targets the same way.
//! - [`logfile`]: log files only their user may read.
//! - `user_sid` (Windows): who a process runs as, by its token's user SID.
//!
//! ```no_run
//! # async fn demo() -> Result<(), berth_client::client::ClientError> {
//! let env = berth_client::paths::EnvCtx::from_process();
//! let mut conn = berth_client::client::Connection::open(&env).await?;
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
pub mod transport;
#[cfg(windows)]
pub mod user_sid;
pub mod verify;
