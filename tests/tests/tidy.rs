//! Checks of the repository itself, not of berth's behaviour: every test that ARCHITECTURE.md
//! names as the check of an invariant exists, so a renamed or deleted test cannot leave an
//! invariant guarded by nothing while the document still says otherwise.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository holds tests/")
        .to_path_buf()
}

/// A Rust source file and its text.
struct Source {
    path: PathBuf,
    text: String,
}

fn sources(dir: &Path, out: &mut Vec<Source>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "corpus" {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            sources(&path, out);
        } else if name.ends_with(".rs")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            out.push(Source { path, text });
        }
    }
}

/// The backquoted words of every "Checked by" paragraph.
fn checked_by_names(doc: &str) -> Vec<String> {
    let mut names = Vec::new();
    for paragraph in doc.split("\n\n") {
        let Some(at) = paragraph.find("Checked by") else {
            continue;
        };
        let tail = &paragraph[at..];
        names.extend(
            tail.split('`')
                .skip(1)
                .step_by(2)
                .map(|word| word.trim().to_owned()),
        );
    }
    names
}

fn is_snake(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A test's name, as this document writes one: snake case with at least three words (module
/// and crate names are shorter: `use_plan`, `berth_core`).
fn is_test_name(word: &str) -> bool {
    is_snake(word) && word.matches('_').count() >= 2
}

/// What is wrong with one name the document cites, if anything.
fn problem(name: &str, repo: &Path, files: &[Source]) -> Option<String> {
    if name.contains('/') && !name.contains(' ') && !name.contains("::") {
        // A file or folder of the repository.
        return (!repo.join(name).exists()).then(|| format!("`{name}`: no such file"));
    }
    let segments: Vec<&str> = name.split("::").collect();
    let (last, modules) = segments.split_last()?;
    if !is_test_name(last) || !modules.iter().all(|m| is_snake(m)) {
        return None;
    }
    let defines = |s: &Source| {
        ["fn ", "async fn "]
            .iter()
            .any(|kw| s.text.contains(&format!("{kw}{last}(")))
    };
    let in_module = |s: &Source, module: &str| {
        s.path
            .iter()
            .any(|part| part.to_string_lossy().trim_end_matches(".rs") == module)
            || s.text.contains(&format!("mod {module} "))
            || s.text.contains(&format!("mod {module}{{"))
            // A crate's name spells its folder with a dash.
            || module.starts_with("berth")
    };
    let found = files
        .iter()
        .any(|s| defines(s) && modules.iter().all(|m| in_module(s, m)));
    (!found).then(|| format!("`{name}`: no test of that name in that module"))
}

fn problems(doc: &str, repo: &Path, files: &[Source]) -> BTreeSet<String> {
    checked_by_names(doc)
        .iter()
        .filter_map(|name| problem(name, repo, files))
        .collect()
}

#[test]
fn every_check_architecture_names_exists() {
    let repo = repo();
    let doc = std::fs::read_to_string(repo.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut files = Vec::new();
    sources(&repo, &mut files);
    let cited = checked_by_names(&doc);
    assert!(
        cited
            .iter()
            .filter(|n| is_test_name(n.rsplit("::").next().unwrap_or(n)))
            .count()
            >= 20,
        "the document cites fewer tests than it did: {cited:?}"
    );
    let found = problems(&doc, &repo, &files);
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md names checks that do not exist:\n{}",
        found.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn a_renamed_test_or_a_moved_file_is_caught() {
    let repo = repo();
    let mut files = Vec::new();
    sources(&repo, &mut files);
    let doc = "Invariant.\nChecked by: test `resolve::tests::an_unapproved_file_proposes_and_assigns_nothing`,\n\
               `resolve::tests::a_test_that_was_renamed_long_ago`, `walk::an_unapproved_file_proposes_and_assigns_nothing`\n\
               and `daemon/tests/no_such_file.rs`; the compiler (`berth_core`, `std::fs`).\n";
    let found = problems(doc, &repo, &files);
    assert_eq!(
        found,
        BTreeSet::from([
            "`daemon/tests/no_such_file.rs`: no such file".to_owned(),
            "`resolve::tests::a_test_that_was_renamed_long_ago`: no test of that name in that module"
                .to_owned(),
            "`walk::an_unapproved_file_proposes_and_assigns_nothing`: no test of that name in that module"
                .to_owned(),
        ])
    );
}
