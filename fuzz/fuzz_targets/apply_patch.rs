//! Fuzzes berth-hook's reader of Codex's `apply_patch` envelope (pure: text in, the files it
//! touches or a reason out), through the `berth_hook` library target.
//! Invariants (`berth_hook::patch::check`): never panics; a refusal has a message; an accepted
//! patch names at least one file, each non-empty, trimmed and on one line; the same text read
//! as a shell command (`berth_hook::shell_patch::check`) yields only whole envelopes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    berth_hook::patch::check(data);
});
