//! One resolution repeated, for counting its instructions with callgrind (which load does not
//! move): in a repository approved by a root, or in a linked worktree of it, through the lookup
//! cache or straight from the disk. `cold` is a first look each time: the cache fills and
//! watches a new pair of trees (made beforehand) on every round. The time per resolution goes
//! to stderr (for `cold`, the median of the rounds).
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
        eprintln!("usage: resolve_loop cached|uncached|unwatched|cold repository|worktree TIMES");
        std::process::exit(2);
    };
    let times: usize = times.parse().expect("TIMES is a number");
    let leaf_of = |pair: &WorktreePair| match place.as_str() {
        "worktree" => pair.worktree_leaf.clone(),
        "repository" => pair.repository.leaf.clone(),
        other => panic!("unknown place {other}"),
    };
    let cache = LookupCache::new(CacheConfig::default());
    if through == "cold" {
        let pairs: Vec<(WorktreePair, _)> = (0..times)
            .map(|_| {
                let pair = WorktreePair::new(12);
                let reg = registry(10, &pair.repository.top);
                (pair, reg)
            })
            .collect();
        // Each fill is timed by itself: its median is what a load spike does not move.
        let mut took: Vec<f64> = pairs
            .iter()
            .map(|(pair, reg)| {
                let leaf = leaf_of(pair);
                let start = std::time::Instant::now();
                std::hint::black_box(resolve_once(&*cache, &leaf, &pair.repository.homes, reg));
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        took.sort_by(f64::total_cmp);
        if let Some(median) = took.get(times / 2) {
            eprintln!("{median:.2} µs per resolution (median)");
        }
        return;
    }
    let pair = WorktreePair::new(12);
    let reg = registry(10, &pair.repository.top);
    let homes = &pair.repository.homes;
    let leaf = &leaf_of(&pair);
    // Warm: the first look fills and watches (`unwatched`: no cache at all, so reads in the
    // walk's folders raise no inotify events for a watcher to wake on).
    if through != "unwatched" {
        resolve_once(&*cache, leaf, homes, &reg);
    }
    let start = std::time::Instant::now();
    for _ in 0..times {
        match through.as_str() {
            "cached" => std::hint::black_box(resolve_once(&*cache, leaf, homes, &reg)),
            "uncached" | "unwatched" => {
                std::hint::black_box(resolve_once(&RealFs, leaf, homes, &reg))
            }
            other => panic!("unknown mode {other}"),
        };
    }
    per_resolution(start, times);
}

fn per_resolution(start: std::time::Instant, times: usize) {
    if times > 0 {
        let us = start.elapsed().as_secs_f64() * 1e6 / times as f64;
        eprintln!("{us:.2} µs per resolution");
    }
}
