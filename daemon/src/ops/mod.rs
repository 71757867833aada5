//! The daemon's state and its operations. [`daemon::Daemon`] holds the state; each other file is one
//! kind of operation, an `impl Daemon` block that takes and returns plain Rust data and
//! `BerthError`, never protocol types. Blocking work: the server runs every operation on the
//! pool.

pub(crate) mod answers;
pub(crate) mod caller;
pub(crate) mod daemon;
pub(crate) mod diagnose;
pub(crate) mod gather;
pub(crate) mod guard;
pub(crate) mod homes;
pub(crate) mod hooks;
pub(crate) mod links;
pub(crate) mod live;
pub(crate) mod question;
pub(crate) mod roots;
pub(crate) mod scratch;
pub(crate) mod sessions;
pub(crate) mod settings;
pub(crate) mod started_in;
pub(crate) mod tools;
pub(crate) mod use_workspace;
pub(crate) mod workspaces;
