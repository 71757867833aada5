//! One resolution repeated, for counting its instructions with callgrind (which load does not
//! move): in a repository approved by a root, or in a linked worktree of it, through the lookup
//! cache or straight from the disk.
//!
//! ```text
//! cargo build --release -p berth-bench --example resolve_loop
//! valgrind --tool=callgrind --toggle-collect='*resolve_once*' \
//!     target/release/examples/resolve_loop cached worktree 1000
//! ```

use berth_bench::{WorktreePair, registry, resolve_once};
use berthd::{CacheConfig, LookupCache, RealFs};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [through, place, times] = args.as_slice() else {
        eprintln!("usage: resolve_loop cached|uncached|unwatched repository|worktree TIMES");
        std::process::exit(2);
    };
    let times: usize = times.parse().expect("TIMES is a number");
    let pair = WorktreePair::new(12);
    let cache = LookupCache::new(CacheConfig::default());
    let reg = registry(10, &pair.repository.top);
    let homes = &pair.repository.homes;
    let leaf = match place.as_str() {
        "worktree" => &pair.worktree_leaf,
        "repository" => &pair.repository.leaf,
        other => panic!("unknown place {other}"),
    };
    // Warm: the first look fills and watches (`unwatched`: no cache at all, so reads in the
    // walk's folders raise no inotify events for a watcher to wake on).
    if through != "unwatched" {
        resolve_once(&*cache, leaf, homes, &reg);
    }
    for _ in 0..times {
        match through.as_str() {
            "cached" => std::hint::black_box(resolve_once(&*cache, leaf, homes, &reg)),
            "uncached" | "unwatched" => {
                std::hint::black_box(resolve_once(&RealFs, leaf, homes, &reg))
            }
            other => panic!("unknown mode {other}"),
        };
    }
}
