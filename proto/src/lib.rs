//! berth's wire protocol: the generated types of `proto/berth.proto`, the versions both ends
//! exchange, and how an error's code and hints ride on a gRPC status. The connection itself is
//! `berth-client`'s.
//!
//! - [`pb`]: the generated tonic/prost types for `proto/berth.proto`.
//! - [`status`]: an error's code and hints on a gRPC status.
//! - [`versions`]: how two berth versions compare.
#![deny(missing_docs)]

pub mod status;
pub mod versions;

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
