//! Links `berth` static and non-PIE where glibc allows: its start-up is
//! budgeted (docs/decisions/0024-static-clients.md).

fn main() {
    berth_entry::static_link::link_static("berth");
}
