//! berth-vocab: what berth's daemon and its clients both say, with no runtime, no RPC and no
//! I/O, so the pure core and every client build on it (ARCHITECTURE.md, "Code Map").
//!
//! - [`text`]: wording shared by the daemon's and the clients' messages, and the one escaping
//!   function for human output.
//! - [`codes`]: stable machine codes for what went wrong.
//! - [`settings`]: the settings berth knows, their defaults and ranges.
//! - [`tools`]: the MCP tools, their names, descriptions and schemas, which the MCP shim lists
//!   and the daemon dispatches on.
//! - [`tool_args`]: each MCP tool's arguments.
//! - [`tool_results`]: the structured content of each MCP tool's result, from which the daemon
//!   builds results.
//! - [`pathform`]: a path's lexical forms, written the same way by the core and the clients.
#![deny(missing_docs)]

pub mod codes;
pub mod pathform;
pub mod settings;
pub mod text;
pub mod tool_args;
pub mod tool_results;
pub mod tools;
