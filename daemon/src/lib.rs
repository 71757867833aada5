//! berthd: berth's per-user daemon, around the pure core in the `berth-core` crate
//! (ARCHITECTURE.md, "Code Map"). Its folders are its layers:
//!
//! - `ops`: the device's state ([`Device`]) and its operations, plain Rust data in and out;
//!   `gather` is where resolution meets the disk.
//! - `store`: the registry in SQLite.
//! - `cache`: the lookup cache of project files, its watches and the real filesystem view.
//! - `files`: the file tools, atomic replaces and opening folders without following links.
//! - `pool`: the bounded threads every blocking call runs on, with a deadline.
//! - `rpc`: the gRPC server, the socket and its connections; the only layer that knows the
//!   protocol's message types.
//! - `process`: start-up, the instance locks, logging and shutdown.
//! - `canonical` (shared): the one way a path is canonicalised.
//! - `clock` (shared): where the daemon reads the time, so tests step it instead of waiting.
//! - `pids` (shared, like `error`): whether a process id is still a running berth program.
//! - `procs` (shared): the system's process table, for the client process a caller was
//!   started by.
//!
//! Every module is private to the crate. What is public below is what `main.rs`, the
//! benches and the integration tests use.

// Tests write files freely; the product code replaces one only through `atomic` (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]
mod cache;
mod canonical;
mod clock;
mod error;
mod files;
mod ops;
mod pids;
mod pool;
mod process;
mod procs;
mod rpc;
mod store;

pub use cache::realfs::RealFs;
pub use cache::watch::{EventSink, NotifyWatcher, WatchEvent};
pub use cache::{CacheConfig, LookupCache};
pub use files::Folder;
pub use ops::caller::Caller;
pub use ops::device::Device;
pub use process::lifecycle::{Options, run};
pub use rpc::connections::Limits;
pub use store::Store;
