//! The parts of `berth-hook` other crates reach: the hook payload parser, which the fuzz
//! target `hook_payload` drives. The executable itself is `main.rs`.

pub mod payload;
