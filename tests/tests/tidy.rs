//! Checks of the repository itself, not of berth's behaviour: every test that ARCHITECTURE.md
//! names as the check of an invariant exists, so a renamed or deleted test cannot leave an
//! invariant guarded by nothing while the document still says otherwise; and the names of
//! berth's files and of the variables that locate them are spelled once, in `paths` (and the
//! log names in `logfile`).
//!
//! `BERTH_CHECKED_TREE` names another checkout to read instead of this one: `.ci/planted` points
//! it at a copy with a violation planted, and expects these tests to fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

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

/// The product crates' source folders: what ships (tests, benches and fuzz checks do not).
const PRODUCT_SOURCES: [&str; 10] = [
    "vocab/src",
    "proto/src",
    "client/src",
    "daemon/src",
    "daemon/core/src",
    "client-cli/src",
    "client-cli/install/src",
    "client-cli/entry/src",
    "mcp-shim/src",
    "hook-shim/src",
];

/// The files berth keeps in its data, state and socket folders, each with the one file that may
/// spell its name.
const FILE_NAMES: [(&str, &str); 6] = [
    ("berth.db", "client/src/paths.rs"),
    ("berthd.json", "client/src/paths.rs"),
    ("berthd.lock", "client/src/paths.rs"),
    ("berthd.sock", "client/src/paths.rs"),
    ("berthd.log", "client/src/logfile.rs"),
    ("berth-hook.log", "client/src/logfile.rs"),
];

/// The one file that may spell the variables that locate berth's folders.
const VARIABLES_HOME: &str = "client/src/paths.rs";

/// The variables that locate berth's folders: `paths::LOCATION_VARIABLES`, read from the source
/// (its items are string constants of `paths` or literals).
fn location_variables(paths_rs: &str) -> Vec<String> {
    let file = syn::parse_file(paths_rs).expect("paths.rs parses");
    let mut consts = BTreeMap::new();
    let mut list = None;
    for item in &file.items {
        let syn::Item::Const(c) = item else { continue };
        match &*c.expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => {
                consts.insert(c.ident.to_string(), s.value());
            }
            syn::Expr::Array(a) if c.ident == "LOCATION_VARIABLES" => list = Some(a.clone()),
            _ => {}
        }
    }
    let list = list.expect("paths.rs defines LOCATION_VARIABLES as an array");
    list.elems
        .iter()
        .map(|e| match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => s.value(),
            syn::Expr::Path(p) => {
                let name = p.path.get_ident().expect("a constant of paths").to_string();
                consts[&name].clone()
            }
            _ => panic!("LOCATION_VARIABLES holds neither a literal nor a constant"),
        })
        .collect()
}

/// The words one literal spells that only their home may: file names not followed by a letter
/// (`berth.db-wal` spells `berth.db`, the unit `berthd.socket` no name), variables as whole words
/// (`set BERTH_SOCKET to ...`), and any `XDG_` variable; not a format string's `{BERTH_SOCKET}`,
/// which names the constant.
fn spelled(text: &str, variables: &[String]) -> Vec<String> {
    let mut out: Vec<String> = FILE_NAMES
        .iter()
        .filter(|(name, _)| {
            text.match_indices(name).any(|(at, _)| {
                !text[at + name.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .map(|(name, _)| (*name).to_owned())
        .collect();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut rest = text;
    while let Some(start) = rest.find(is_word) {
        let len = rest[start..]
            .find(|c| !is_word(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + len];
        let captured = rest[..start].ends_with('{')
            && rest[start + len..].starts_with(['}', ':'])
            && !rest[..start].ends_with("{{");
        if !captured && (variables.iter().any(|v| v == word) || word.starts_with("XDG_")) {
            out.push(word.to_owned());
        }
        rest = &rest[start + len..];
    }
    out
}

/// Every string literal of a file's product code, by line: in expressions, patterns,
/// attributes (`#[error("...")]`) and macro arguments; not in doc comments or `#[cfg(test)]`
/// items.
fn literals(text: &str) -> syn::Result<Vec<(usize, String)>> {
    let file = syn::parse_file(text)?;
    let mut v = Literals(Vec::new());
    v.visit_file(&file);
    Ok(v.0)
}

struct Literals(Vec<(usize, String)>);

impl Literals {
    fn tokens(&mut self, tokens: TokenStream) {
        for tree in tokens {
            match tree {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Literal(l) => self.0.push((l.span().start().line, l.to_string())),
                _ => {}
            }
        }
    }
}

/// Whether a `cfg` holds only under `test`: `cfg(test)`, `cfg(all(test, unix))`.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    fn needs_test(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(p) => p.is_ident("test"),
            syn::Meta::List(list) => {
                let parser =
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
                let Ok(inner) = list.parse_args_with(parser) else {
                    return false;
                };
                if list.path.is_ident("all") {
                    inner.iter().any(needs_test)
                } else if list.path.is_ident("any") {
                    !inner.is_empty() && inner.iter().all(needs_test)
                } else {
                    false
                }
            }
            syn::Meta::NameValue(_) => false,
        }
    }
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| needs_test(&m))
    })
}

impl<'ast> Visit<'ast> for Literals {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => &[],
        };
        if !test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !test_only(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        self.0.push((lit.span().start().line, lit.value()));
    }

    fn visit_lit_byte_str(&mut self, lit: &'ast syn::LitByteStr) {
        let text = String::from_utf8_lossy(&lit.value()).into_owned();
        self.0.push((lit.span().start().line, text));
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        match &attr.meta {
            // Doc comments are free.
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => {}
            syn::Meta::NameValue(nv) => self.visit_expr(&nv.value),
            syn::Meta::List(list) => self.tokens(list.tokens.clone()),
            syn::Meta::Path(_) => {}
        }
    }
}

/// Every literal outside a name's home that spells it, as `file:line: name`; `files` are paths
/// relative to the repository with their text.
fn misspelled(files: &[(String, String)], variables: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (file, text) in files {
        let literals = literals(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (line, literal) in literals {
            for word in spelled(&literal, variables) {
                let home = FILE_NAMES
                    .iter()
                    .find(|(name, _)| *name == word)
                    .map_or(VARIABLES_HOME, |(_, home)| home);
                if file != home {
                    out.insert(format!("{file}:{line}: {word}"));
                }
            }
        }
    }
    out
}

fn product_files(repo: &Path) -> Vec<(String, String)> {
    let mut sources_found = Vec::new();
    for dir in PRODUCT_SOURCES {
        sources(&repo.join(dir), &mut sources_found);
    }
    sources_found
        .into_iter()
        .map(|s| {
            let rel = s.path.strip_prefix(repo).unwrap();
            (rel.to_string_lossy().replace('\\', "/"), s.text)
        })
        .collect()
}

#[test]
fn berths_file_names_and_location_variables_are_spelled_only_in_paths_and_logfile() {
    let repo = repo();
    let files = product_files(&repo);
    assert!(files.len() > 100, "read only {} files", files.len());
    let text_of = |rel: &str| {
        files
            .iter()
            .find(|(f, _)| f == rel)
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("{rel} is not among the product sources"))
    };
    let variables = location_variables(text_of(VARIABLES_HOME));
    assert_eq!(variables.len(), 5, "{variables:?}");
    // Each name is spelled in its home, so a renamed one cannot leave this test checking nothing.
    for (name, home) in FILE_NAMES {
        let found = literals(text_of(home)).unwrap();
        assert!(
            found.iter().any(|(_, l)| l.contains(name)),
            "{home} no longer spells {name}: update FILE_NAMES"
        );
    }
    let found = misspelled(&files, &variables);
    assert!(
        found.is_empty(),
        "product code spells these outside their one home (use the function or constant of \
         berth_client::paths or berth_client::logfile):\n{}",
        found.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn a_name_spelled_outside_its_home_is_caught_and_tests_docs_and_comments_are_free() {
    let variables: Vec<String> = ["BERTH_SOCKET", "BERTH_DATA_DIR"].map(String::from).into();
    let file = |name: &str, text: &str| (name.to_owned(), text.to_owned());
    let files = [
        file(
            "daemon/src/store/mod.rs",
            "fn f(d: &Path) -> PathBuf { d.join(\"berth.db\") }\n\
             #[derive(thiserror::Error)]\nenum E { #[error(\"set BERTH_SOCKET\")] A }\n\
             fn g() { tracing::warn!(\"see {}\", \"berthd.log\"); let _ = b\"XDG_STATE_HOME\"; }\n\
             /// `berth.db`, BERTH_DATA_DIR\nfn h() {} // berthd.json\n\
             #[cfg(test)]\nmod tests { const D: &str = \"berth.db\"; }\n\
             const NOT_A_VARIABLE: &str = \"BERTH_SOCKETS\";\n\
             const UNIT: &str = \"berthd.socket\"; const WAL: &str = \"berth.db-wal\";\n\
             fn m() -> String { format!(\"set {BERTH_SOCKET} or {BERTH_DATA_DIR:?}\") }\n",
        ),
        file(
            "client/src/paths.rs",
            "fn f() -> [&str; 2] { [\"BERTH_DATA_DIR\", \"berthd.sock\"] }",
        ),
        file(
            "client/src/logfile.rs",
            "const L: &str = \"berthd.log\"; const S: &str = \"berthd.sock\";",
        ),
    ];
    assert_eq!(
        misspelled(&files, &variables),
        BTreeSet::from(
            [
                "daemon/src/store/mod.rs:1: berth.db",
                "daemon/src/store/mod.rs:3: BERTH_SOCKET",
                "daemon/src/store/mod.rs:4: berthd.log",
                "daemon/src/store/mod.rs:4: XDG_STATE_HOME",
                "daemon/src/store/mod.rs:10: berth.db",
                "client/src/logfile.rs:1: berthd.sock",
            ]
            .map(String::from)
        )
    );
}
