//! The parts of `berth-hook` other crates reach: the hook payload parser, which the fuzz
//! target `hook_payload` drives; the reader of Codex's `apply_patch` envelope, which the fuzz
//! target `apply_patch` drives; and the pre-tool payload's tool call. The executable itself is
//! `main.rs`.

pub mod patch;
pub mod payload;
pub mod shell_patch;
pub mod tool_call;
