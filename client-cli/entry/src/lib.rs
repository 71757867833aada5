//! How berth's hot-path clients (`berth`, `berth-hook`) start: they run on
//! every CLI call and every agent session start, so their start-up is
//! budgeted (docs/decisions/0010-client-start-up-budget.md,
//! docs/decisions/0024-static-clients.md).
//!
//! - [`run`] (Unix): the lean process entry their C `main` calls instead of
//!   Rust's standard start-up.
//! - [`static_link`]: for their build scripts, links them static and
//!   position-dependent on Linux with glibc, so the loader has nothing to
//!   load, relocate or look up.
//! - [`keep_standard_handles`] (Windows): what every client, `berth-mcp`
//!   too, does first, so a daemon it starts holds none of its caller's pipes.

#[cfg(unix)]
mod process;
pub mod static_link;
#[cfg(windows)]
mod windows;

#[cfg(windows)]
pub use windows::keep_standard_handles;

#[cfg(unix)]
pub use process::{PANIC_EXIT, run};
