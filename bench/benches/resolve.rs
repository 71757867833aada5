//! In-process resolution, through the lookup cache and straight from the disk, by walk depth
//! and number of roots, through the cache with a hard-linked project file, and in a linked git
//! worktree against its repository. Run: `cargo bench -p berth-bench --bench resolve`.

use std::time::Duration;

use berth_bench::{Tree, WorktreePair, registry, resolve_once};
use berthd::RealFs;
use berthd::{CacheConfig, LookupCache};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("resolve");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for depth in [4, 12, 24] {
        let tree = Tree::new(depth);
        let cache = LookupCache::new(CacheConfig::default());
        for roots in [10, 10_000, 100_000] {
            let reg = registry(roots, &tree.top);
            let id = format!("depth{depth}/roots{roots}");
            // Warm: the first look fills and watches.
            resolve_once(&*cache, &tree.leaf, &tree.homes, &reg);
            group.bench_function(BenchmarkId::new("cached", &id), |b| {
                b.iter(|| resolve_once(&*cache, &tree.leaf, &tree.homes, &reg));
            });
            group.bench_function(BenchmarkId::new("uncached", &id), |b| {
                b.iter(|| resolve_once(&RealFs, &tree.leaf, &tree.homes, &reg));
            });
        }
    }
    // A project file with two names is checked on every use. Its stamp is trusted once it is
    // 2 s old, so the timing starts after that.
    let tree = Tree::with_linked_project_file(12);
    std::thread::sleep(Duration::from_millis(2100));
    let cache = LookupCache::new(CacheConfig::default());
    let reg = registry(10, &tree.top);
    resolve_once(&*cache, &tree.leaf, &tree.homes, &reg);
    group.bench_function(BenchmarkId::new("cached-linked", "depth12/roots10"), |b| {
        b.iter(|| resolve_once(&*cache, &tree.leaf, &tree.homes, &reg));
    });
    // A linked worktree against its repository, the same walk from each: the worktree's look
    // also judges its `.git` file against git's admin records (ADR 0047).
    let pair = WorktreePair::new(12);
    let cache = LookupCache::new(CacheConfig::default());
    let reg = registry(10, &pair.repository.top);
    let homes = &pair.repository.homes;
    for (id, leaf) in [
        ("repository/depth12", &pair.repository.leaf),
        ("worktree/depth12", &pair.worktree_leaf),
    ] {
        let warm = resolve_once(&*cache, leaf, homes, &reg);
        assert_eq!(warm, resolve_once(&RealFs, leaf, homes, &reg));
        assert_eq!(
            warm.notes
                .iter()
                .any(|n| n.contains("through the repository")),
            leaf == &pair.worktree_leaf,
            "{warm:?}"
        );
        group.bench_function(BenchmarkId::new("cached", id), |b| {
            b.iter(|| resolve_once(&*cache, leaf, homes, &reg));
        });
        group.bench_function(BenchmarkId::new("uncached", id), |b| {
            b.iter(|| resolve_once(&RealFs, leaf, homes, &reg));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
