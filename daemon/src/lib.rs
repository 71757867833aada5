//! berthd: berth's per-user daemon, around the pure core in the `berth-core` crate.
//!
//! [`fsview`] and [`gather`] meet the disk; [`store`] keeps the registry; [`device`] holds
//! the state and its operations ([`workspaces`], [`roots`], [`settings`],
//! [`use_workspace`], [`homes`], opened through [`linkfree`]); [`server`]
//! speaks the protocol and runs blocking work on the bounded [`pool`];
//! [`socket`], [`connections`], [`lock`], [`logging`] and [`lifecycle`] run
//! the process.

pub mod atomic;
pub mod cache;
pub mod caller;
pub mod connections;
pub mod device;
pub mod diagnose;
pub mod error;
pub mod files;
pub mod fsview;
pub mod gather;
pub mod homes;
pub mod hooks;
pub mod lifecycle;
pub mod linkfree;
pub mod lock;
pub mod logging;
pub mod pool;
pub mod roots;
pub mod scratch;
pub mod server;
pub mod sessions;
pub mod settings;
pub mod socket;
pub mod store;
pub mod throttle;
pub mod tools;
pub mod use_workspace;
pub mod watch;
pub mod workspaces;
