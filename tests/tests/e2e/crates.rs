//! The crates' Cargo metadata: each says what it is, none points at a place
//! that does not exist, and a crate meant for crates.io could be published as
//! it is (a licence, a readme that is there, and only publishable crates of
//! this workspace among its dependencies, each with a version).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn metadata() -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// `publish = false` reads as an empty list of registries.
fn publishable(p: &Value) -> bool {
    p["publish"].as_array().is_none_or(|r| !r.is_empty())
}

#[test]
fn every_crate_says_what_it_is_and_the_publishable_ones_can_be_published() {
    let doc = metadata();
    let packages = doc["packages"].as_array().expect("packages");
    let by_name = |name: &str| packages.iter().find(|p| p["name"] == name);
    let mut problems = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap();
        if p["description"]
            .as_str()
            .is_none_or(|d| d.trim().is_empty())
        {
            problems.push(format!("{name}: no description"));
        }
        for key in ["repository", "homepage", "documentation"] {
            if let Some(url) = p[key].as_str()
                && (url.contains(".invalid") || url.contains("example."))
            {
                problems.push(format!("{name}: {key} {url} is not a real place"));
            }
        }
        if !publishable(p) {
            continue;
        }
        if p["license"].as_str().is_none_or(str::is_empty) {
            problems.push(format!("{name}: publishable without a licence"));
        }
        let dir = PathBuf::from(p["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap()
            .to_path_buf();
        match p["readme"].as_str() {
            Some(readme) if dir.join(readme).is_file() => {}
            other => problems.push(format!("{name}: publishable with readme {other:?}")),
        }
        for dep in p["dependencies"].as_array().unwrap() {
            // Dev-dependencies without a version are dropped when publishing.
            if dep["path"].is_null() || dep["kind"] == "dev" {
                continue;
            }
            let dep_name = dep["name"].as_str().unwrap();
            if dep["req"] == "*" {
                problems.push(format!(
                    "{name}: depends on {dep_name} by path with no version"
                ));
            }
            if by_name(dep_name).is_some_and(|d| !publishable(d)) {
                problems.push(format!(
                    "{name}: depends on {dep_name}, which is publish = false"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
