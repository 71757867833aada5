//! The daemon's layering, checked by reading its sources (ARCHITECTURE.md, "berthd"):
//! no two files import each other, directly or through others, and only the `rpc` layer
//! names the protocol's message types.
//!
//! A file's imports are the `crate::…`, `super::…` and `self::…` paths in its code before its
//! `#[cfg(test)]` test module; each names the file of the longest module path it starts with.
//! A folder's `mod.rs` declaring its files is not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `daemon/src`, by module path (`ops::device`; `cache` for
/// `cache/mod.rs`; the crate root is `""`).
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut todo = vec![src.clone()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = module_of(&src, &path);
                // main.rs is the binary, not a module of the library.
                if path != src.join("main.rs") {
                    out.insert(
                        module,
                        product_code(&std::fs::read_to_string(&path).unwrap()),
                    );
                }
            }
        }
    }
    out
}

fn module_of(src: &Path, file: &Path) -> String {
    let rel: PathBuf = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The source up to its test module, without comment lines.
fn product_code(source: &str) -> String {
    let end = source
        .find("#[cfg(test)]\nmod tests")
        .unwrap_or(source.len());
    source[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file's code names, resolved to files.
fn imports(module: &str, code: &str, files: &BTreeSet<String>) -> BTreeSet<String> {
    let parent = |m: &str| {
        m.rsplit_once("::")
            .map_or(String::new(), |(p, _)| p.to_owned())
    };
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for (at, _) in code.match_indices("::") {
        // The identifier chain ending just before this `::`, if it is the start of a path.
        let mut start = at;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        if start > 1 && &code[start - 2..start] == "::" {
            continue;
        }
        let root = &code[start..at];
        let base = match root {
            "crate" => String::new(),
            "super" => parent(module),
            "self" => module.to_owned(),
            _ => continue,
        };
        let rest: String = code[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let mut path = base.clone();
        let mut best = None;
        for seg in rest.split("::").filter(|s| !s.is_empty()) {
            path = if path.is_empty() {
                seg.to_owned()
            } else {
                format!("{path}::{seg}")
            };
            if files.contains(&path) {
                best = Some(path.clone());
            }
        }
        let target = best.unwrap_or(base);
        if target != module {
            out.insert(target);
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules();
    let files: BTreeSet<String> = mods.keys().cloned().collect();
    mods.iter()
        .map(|(m, code)| {
            let mut deps = imports(m, code, &files);
            // A folder's mod.rs naming its own files declares them; the crate root re-exports.
            deps.retain(|d| !m.is_empty() && !d.starts_with(&format!("{m}::")));
            deps.remove("");
            (m.clone(), deps)
        })
        .collect()
}

/// A cycle through `start`, if there is one.
fn cycle_from(
    g: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    at: &str,
    path: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    for next in g.get(at).into_iter().flatten() {
        if next == start {
            let mut c = path.clone();
            c.push(start.to_owned());
            return Some(c);
        }
        if seen.insert(next.clone()) {
            path.push(next.clone());
            if let Some(c) = cycle_from(g, start, next, path, seen) {
                return Some(c);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn no_two_files_import_each_other() {
    let g = graph();
    assert!(g.len() > 30, "read only {} files", g.len());
    assert!(
        g["ops::tools"].contains("files"),
        "the reader finds imports: {:?}",
        g["ops::tools"]
    );
    let mut cycles = Vec::new();
    for m in g.keys() {
        if let Some(c) = cycle_from(&g, m, m, &mut vec![m.clone()], &mut BTreeSet::new()) {
            cycles.push(c.join(" -> "));
        }
    }
    assert!(cycles.is_empty(), "import circles:\n{}", cycles.join("\n"));
}

#[test]
fn only_the_rpc_layer_names_protocol_messages() {
    for (m, code) in modules() {
        if m == "rpc" || m.starts_with("rpc::") {
            continue;
        }
        assert!(
            !code.contains("pb::"),
            "{m} names the protocol's message types (berth_proto::pb); map them in rpc/"
        );
    }
}
