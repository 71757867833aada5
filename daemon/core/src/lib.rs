//! berth-core: the pure core of berth. No I/O, no environment, no clock: every function here is
//! a function of its arguments, so tests drive it with plain values and the daemon supplies the
//! disk, the registry snapshot and the time (ARCHITECTURE.md, "Code Map").
//!
//! - [`names`]: workspace names.
//! - [`pathutil`]: component-wise path questions.
//! - [`walk`]: the walk plan, a function of the start and the homes.
//! - [`fsview`]: what one folder holds ([`fsview::DirLook`]), the view a walk looks through
//!   ([`fsview::FsView`]) and the walk's steps.
//! - [`project_file`]: parsing a project file.
//! - [`registry`]: a plain-data snapshot of the registry and its root queries.
//! - [`resolve`]: the resolution order as one function over gathered facts.
//! - [`claim`]: conversation claims.
//! - [`explain`]: the walk in words.
//! - [`homeguard`]: the lexical local-home guard.
//! - [`qualify`]: the qualified path forms.
//! - [`guard`]: the native-tool guard's rule, whether a write lands in another workspace's
//!   folders.
//! - [`notice`]: the ask-once text.
//! - [`instructions`]: the MCP server instructions.
//! - [`scratch`]: what the scratch sweep removes at a given time.
//! - [`use_plan`]: everything `workspace use` writes, decided before anything is written.
//! - [`ancestry`]: which client process started a hook or an MCP server, over a process table
//!   the daemon reads.
//! - `memfs` (tests, or the `test-support` feature): an in-memory [`fsview::FsView`].

pub mod ancestry;
pub mod claim;
pub mod explain;
pub mod fsview;
pub mod guard;
pub mod homeguard;
pub mod instructions;
#[cfg(any(test, feature = "test-support"))]
pub mod memfs;
pub mod names;
pub mod notice;
pub mod pathutil;
pub mod project_file;
pub mod qualify;
pub mod registry;
pub mod resolve;
pub mod scratch;
pub mod use_plan;
pub mod walk;
pub mod worktree;
