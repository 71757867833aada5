//! The crates' dependency edges, read from `cargo metadata`: what each product crate must not
//! reach, directly or through another crate (ARCHITECTURE.md, "Code Map";
//! docs/decisions/0056-crates-cut-by-job.md). The compiler already refuses a `use` of a crate
//! that a `Cargo.toml` does not list; this catches a crate that comes in through another.
//!
//! `BERTH_CHECKED_TREE` names another checkout to read instead of this one: `.ci/planted` points
//! it at a copy with an edge planted, and expects the test to fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repo() -> PathBuf {
    std::env::var_os("BERTH_CHECKED_TREE").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("the repository holds tests/")
                .to_path_buf()
        },
        PathBuf::from,
    )
}

/// What each crate must never link, on any platform. Build scripts' dependencies are not
/// linked and are not followed.
const MUST_NOT_REACH: [(&str, &[&str]); 9] = [
    // The vocabulary is plain data and wording: no runtime, no RPC, nothing of berth's above it.
    (
        "berth-vocab",
        &[
            "tokio",
            "tonic",
            "prost",
            "berth-core",
            "berth-proto",
            "berth-client",
        ],
    ),
    // The pure core: no protocol, database, runtime or watcher (ADR 0020).
    (
        "berth-core",
        &[
            "tokio",
            "tonic",
            "prost",
            "rusqlite",
            "notify",
            "berth-proto",
            "berth-client",
        ],
    ),
    // The protocol is the wire alone.
    ("berth-proto", &["berth-core", "berth-client", "berthd"]),
    // Clients and the crates they are built from never link resolution or the daemon.
    ("berth-client", &["berth-core", "berthd", "rusqlite"]),
    ("berth-install", &["berth-core", "berthd", "rusqlite"]),
    ("berth-cli", &["berth-core", "berthd", "rusqlite"]),
    ("berth-mcp", &["berth-core", "berthd", "rusqlite"]),
    ("berth-hook", &["berth-core", "berthd", "rusqlite"]),
    // The lean entry of the hot-path clients, also a build dependency of theirs.
    (
        "berth-entry",
        &["tokio", "tonic", "berth-client", "berth-proto"],
    ),
];

/// Each package's name, and the names of the packages it links (normal dependencies, any
/// platform), from the resolved graph.
fn graph(repo: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .arg("--manifest-path")
        .arg(repo.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let names: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap_or(""),
                p["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().expect("resolve.nodes") {
        let from = names[node["id"].as_str().expect("a node's id")].to_owned();
        let linked = node["deps"].as_array().into_iter().flatten().filter(|dep| {
            dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null())
        });
        let entry = graph.entry(from).or_default();
        for dep in linked {
            entry.insert(names[dep["pkg"].as_str().expect("a dep's pkg")].to_owned());
        }
    }
    graph
}

/// The path from `from` to `to` through linked dependencies, if there is one.
fn path_to(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> Option<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = vec![to];
            let mut step = to;
            while let Some(prev) = came_from.get(step) {
                path.push(prev);
                step = prev;
            }
            path.reverse();
            return Some(path.join(" → "));
        }
        for next in graph.get(at).into_iter().flatten() {
            if next != from && !came_from.contains_key(next.as_str()) {
                came_from.insert(next, at);
                queue.push_back(next);
            }
        }
    }
    None
}

fn violations(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for (krate, banned) in MUST_NOT_REACH {
        assert!(
            graph.contains_key(krate),
            "no crate {krate} in the workspace"
        );
        for &ban in banned {
            if let Some(path) = path_to(graph, krate, ban) {
                found.push(format!("{krate} links {ban}: {path}"));
            }
        }
    }
    found
}

#[test]
fn each_crate_links_none_of_the_crates_it_must_not() {
    let found = violations(&graph(&repo()));
    assert!(
        found.is_empty(),
        "crates link what ARCHITECTURE.md keeps them from:\n{}",
        found.join("\n")
    );
}

#[test]
fn an_edge_through_another_crate_is_caught() {
    let mut graph = graph(&repo());
    graph
        .get_mut("berth-vocab")
        .expect("berth-vocab")
        .insert("berth-client".to_owned());
    let found = violations(&graph);
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("berth-vocab links tokio: berth-vocab → berth-client → ")),
        "{found:?}"
    );
}
