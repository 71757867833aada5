//! Links `berth-mcp` static and non-PIE where glibc allows: every agent
//! session spawns it and waits for its first tool result
//! (docs/decisions/0024-static-clients.md).

fn main() {
    berth_entry::static_link::link_static("berth-mcp");
}
