//! An empty Rust program: the floor a Rust client's whole-process time is compared with.

fn main() {}
