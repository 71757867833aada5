//! Invalidation latency: from a write to a project file to the cache answering the new content,
//! p50 and p99 over many changes. Run: `cargo bench -p berth-bench --bench invalidation`
//! (`BERTH_BENCH_CHANGES` sets the number of changes, default 2,000).

use std::time::{Duration, Instant};

use berth_bench::Tree;
use berth_core::fsview::{DirLook, FsView};
use berthd::{CacheConfig, LookupCache};

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that does not match skips the run.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"invalidation".contains(&a))
    {
        return;
    }
    let changes: usize = std::env::var("BERTH_BENCH_CHANGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let tree = Tree::new(12);
    let dir = tree.leaf.clone();
    std::fs::create_dir(dir.join(".berth")).expect(".berth");
    let file = dir.join(".berth/workspace.json");
    let cache = LookupCache::new(CacheConfig::default());
    let mut samples = Vec::with_capacity(changes);
    for i in 0..changes {
        let name = if i % 2 == 0 { "aaaa" } else { "bbbb" };
        let before = if i % 2 == 0 { "bbbb" } else { "aaaa" };
        std::fs::write(&file, format!(r#"{{"workspace": "{before}"}}"#)).expect("write");
        // Let the previous change settle and the entry be cached again.
        while cache.look(&dir) != DirLook::file(before) {
            std::hint::spin_loop();
        }
        let _ = cache.look(&dir);
        // In place and same size: only the watch can tell.
        let start = Instant::now();
        std::fs::write(&file, format!(r#"{{"workspace": "{name}"}}"#)).expect("write");
        while cache.look(&dir) != DirLook::file(name) {
            std::hint::spin_loop();
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "never invalidated"
            );
        }
        samples.push(start.elapsed());
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize];
    println!(
        "invalidation latency over {changes} changes: p50 {:?}, p99 {:?}, max {:?}",
        pct(0.50),
        pct(0.99),
        samples[samples.len() - 1]
    );
}
