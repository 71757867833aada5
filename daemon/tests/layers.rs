//! The daemon's layering, checked by parsing its sources (ARCHITECTURE.md, "berthd"): each
//! layer uses only the layers the document's table lets it, no two files import each other, and
//! only the `rpc` layer names the protocol's message types (`berth_proto::pb`).
//!
//! A file's imports are the paths its code names outside `#[cfg(test)]` items, read with `syn`:
//! every `use` tree (grouped, renamed, glob, nested) and every path in an expression, a type, a
//! pattern or a macro's arguments. A path is resolved through `crate`, `super`, `self`, the
//! file's own modules and the names its `use` items bind, and names the file of the longest
//! module path it starts with. A folder's `mod.rs` naming its own files is not an import.
//!
//! `BERTH_CHECKED_TREE` names another checkout to read instead of this one: `.ci/planted` points
//! it at a copy with a violation planted, and expects these tests to fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::Visit;

/// The checkout whose daemon is read.
fn tree() -> PathBuf {
    std::env::var_os("BERTH_CHECKED_TREE").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
        PathBuf::from,
    )
}

/// One path a file's code names, absolute: `crate::ops::device::Device`, `berth_proto::pb::X`.
#[derive(Debug, Clone)]
struct Named {
    path: Vec<String>,
    line: usize,
}

impl Named {
    fn shown(&self) -> String {
        self.path.join("::")
    }
}

/// A file of `daemon/src` and the paths its code names.
struct Source {
    /// Relative to `daemon/src`: `ops/device.rs`.
    file: String,
    names: Vec<Named>,
}

/// Every `.rs` file under `src`, by module path (`ops::device`; `cache` for `cache/mod.rs`;
/// `""` for the crate root; `main.rs`, the binary, as `main`).
fn sources(src: &Path) -> BTreeMap<String, Source> {
    let mut out = BTreeMap::new();
    let mut todo = vec![src.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let file = path
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let text = std::fs::read_to_string(&path).unwrap();
                let module = module_of(&file);
                let names = names_in(&module, &text).unwrap_or_else(|e| panic!("{file}: {e}"));
                out.insert(module, Source { file, names });
            }
        }
    }
    out
}

fn module_of(file: &str) -> String {
    let mut parts: Vec<&str> = file.trim_end_matches(".rs").split('/').collect();
    if matches!(parts.last(), Some(&("mod" | "lib"))) {
        parts.pop();
    }
    parts.join("::")
}

/// The absolute paths a file's code names outside its `#[cfg(test)]` items.
fn names_in(module: &str, text: &str) -> syn::Result<Vec<Named>> {
    let file = syn::parse_file(text)?;
    let here: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let mut names = Names {
        children: file
            .items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Mod(m) => Some(m.ident.to_string()),
                _ => None,
            })
            .collect(),
        module: here,
        aliases: BTreeMap::new(),
        found: Vec::new(),
    };
    names.visit_file(&file);
    Ok(names.found)
}

struct Names {
    /// The module being read, from the crate root (an inline `mod` adds to it).
    module: Vec<String>,
    /// The modules the file declares, which a bare path may start with.
    children: BTreeSet<String>,
    /// What each name a `use` or `extern crate` binds stands for, absolute.
    aliases: BTreeMap<String, Vec<String>>,
    found: Vec<Named>,
}

impl Names {
    /// The absolute form of a path, when it starts in this crate or in `berth_proto`.
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let mut out = match first.as_str() {
            "crate" => vec!["crate".to_owned()],
            "berth_proto" => vec!["berth_proto".to_owned()],
            "self" => self.here(),
            "super" => {
                let mut at = self.here();
                let mut rest = rest;
                at.pop();
                while let Some((s, more)) = rest.split_first()
                    && s == "super"
                {
                    at.pop();
                    rest = more;
                }
                at.extend(rest.iter().cloned());
                return Some(at);
            }
            name if self.aliases.contains_key(name) => self.aliases[name].clone(),
            name if self.children.contains(name) => {
                let mut at = self.here();
                at.push(name.to_owned());
                at
            }
            _ => return None,
        };
        out.extend(rest.iter().cloned());
        Some(out)
    }

    fn here(&self) -> Vec<String> {
        std::iter::once("crate".to_owned())
            .chain(self.module.iter().cloned())
            .collect()
    }

    fn note(&mut self, segments: &[String], line: usize) {
        if let Some(path) = self.resolve(segments) {
            self.found.push(Named { path, line });
        }
    }

    /// Each path of a `use` tree, with the name it binds (none for a glob).
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, line);
                prefix.pop();
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t, line);
                }
            }
            syn::UseTree::Glob(_) => {
                let mut path = prefix.clone();
                path.push("*".to_owned());
                self.note(&path, line);
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                // `use a::{self}` binds `a`.
                let (path, bound) = if name == "self" {
                    (prefix.clone(), prefix.last().cloned())
                } else {
                    let mut path = prefix.clone();
                    path.push(name.clone());
                    (path, Some(name))
                };
                self.bind(&path, bound, line);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.bind(&path, Some(r.rename.to_string()), line);
            }
        }
    }

    fn bind(&mut self, path: &[String], bound: Option<String>, line: usize) {
        let Some(absolute) = self.resolve(path) else {
            return;
        };
        self.found.push(Named {
            path: absolute.clone(),
            line,
        });
        if let Some(name) = bound.filter(|n| n != "_") {
            self.aliases.insert(name, absolute);
        }
    }

    /// The paths in a macro's tokens, which `syn` leaves unparsed: every run of `a::b::c`.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut at = 0;
        while at < trees.len() {
            match &trees[at] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    at += 1;
                }
                TokenTree::Ident(first) => {
                    let line = first.span().start().line;
                    let mut segments = vec![first.to_string()];
                    at += 1;
                    while is_colons(&trees, at)
                        && let Some(TokenTree::Ident(next)) = trees.get(at + 2)
                    {
                        segments.push(next.to_string());
                        at += 3;
                    }
                    if segments.len() > 1 {
                        self.note(&segments, line);
                    }
                }
                _ => at += 1,
            }
        }
    }
}

/// Whether `trees[at]` and `trees[at + 1]` are a `::`.
fn is_colons(trees: &[TokenTree], at: usize) -> bool {
    matches!(
        (trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// Whether an item's attributes leave it out of the product build: a `cfg` that holds only
/// under `test` (`cfg(test)`, `cfg(all(test, unix))`).
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|meta| needs_test(&meta))
    })
}

fn needs_test(meta: &syn::Meta) -> bool {
    match meta {
        syn::Meta::Path(p) => p.is_ident("test"),
        syn::Meta::List(list) => {
            let Ok(inner) = list.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            ) else {
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

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !test_only(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.module.push(item.ident.to_string());
        syn::visit::visit_item_mod(self, item);
        self.module.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let line = item.use_token.span.start().line;
        self.use_tree(&mut Vec::new(), &item.tree, line);
    }

    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        let line = item.extern_token.span.start().line;
        let bound = item.rename.as_ref().map(|(_, r)| r.to_string());
        self.bind(&[item.ident.to_string()], bound, line);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.leading_colon.is_none() || segments.first().is_some_and(|s| s == "berth_proto") {
            let line = path
                .segments
                .first()
                .map_or(0, |s| s.ident.span().start().line);
            self.note(&segments, line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    // Doc comments and attributes' arguments name no code this file runs.
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
}

/// The file each crate path names: the longest module path it starts with (`""`, the crate
/// root, when it names an item of `lib.rs`). Paths outside the crate name no file.
fn target(path: &[String], files: &BTreeSet<String>) -> Option<String> {
    let (root, rest) = path.split_first()?;
    if root != "crate" {
        return None;
    }
    let mut best = String::new();
    let mut at = String::new();
    for seg in rest {
        at = if at.is_empty() {
            seg.clone()
        } else {
            format!("{at}::{seg}")
        };
        if files.contains(&at) {
            best = at.clone();
        }
    }
    Some(best)
}

/// Who imports whom: each file's module, the modules it names, and for each the first line.
type Graph = BTreeMap<String, BTreeMap<String, usize>>;

fn graph(sources: &BTreeMap<String, Source>) -> Graph {
    let files: BTreeSet<String> = sources.keys().cloned().collect();
    sources
        .iter()
        .filter(|(m, _)| !m.is_empty() && m.as_str() != "main")
        .map(|(m, s)| {
            let mut deps = BTreeMap::new();
            for named in &s.names {
                let Some(t) = target(&named.path, &files) else {
                    continue;
                };
                // The crate root re-exports; a folder's mod.rs declares and re-exports its files.
                if t.is_empty() || t == *m || t.starts_with(&format!("{m}::")) {
                    continue;
                }
                deps.entry(t).or_insert(named.line);
            }
            (m.clone(), deps)
        })
        .collect()
}

/// A cycle through `start`, if there is one.
fn cycle_from(
    g: &Graph,
    start: &str,
    at: &str,
    path: &mut Vec<String>,
    seen: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    for next in g.get(at).into_iter().flat_map(BTreeMap::keys) {
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

fn cycles(g: &Graph) -> Vec<String> {
    g.keys()
        .filter_map(|m| cycle_from(g, m, m, &mut vec![m.clone()], &mut BTreeSet::new()))
        .map(|c| c.join(" -> "))
        .collect()
}

/// A module's layer: its folder, or the shared file it is (`error`, `canonical`).
fn layer(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// Whether a file is shared, one directly in `src/` (`error.rs`), not a layer's folder.
fn shared(source: &Source) -> bool {
    !source.file.contains('/')
}

/// The layers ARCHITECTURE.md's table lets each layer's folder use: the rows of the table under
/// "Layers depend downwards", `| `ops/` | `files/`, `cache/` |`.
fn documented_layers(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let at = doc
        .find("Layers depend downwards")
        .expect("ARCHITECTURE.md's berthd section holds the table of layers");
    let mut out = BTreeMap::new();
    for line in doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
    {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [layers, uses, ..] = cells[..] else {
            continue;
        };
        let words = |cell: &str| -> Vec<String> {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(|w| w.trim_end_matches('/').to_owned())
                .collect()
        };
        let uses: BTreeSet<String> = words(uses).into_iter().collect();
        for l in words(layers) {
            out.insert(l, uses.clone());
        }
    }
    out
}

/// Every use of a layer that the table does not allow, every folder it leaves out, and every
/// use of a layer by a shared file (which any layer may use, and so may use none).
fn layer_violations(
    g: &Graph,
    sources: &BTreeMap<String, Source>,
    allowed: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let none = BTreeSet::new();
    let mut out = Vec::new();
    for (m, deps) in g {
        let from = layer(m);
        let may = if shared(&sources[m]) {
            &none
        } else if let Some(may) = allowed.get(from) {
            may
        } else {
            out.push(format!(
                "{}: layer `{from}/` is not in ARCHITECTURE.md's table",
                sources[m].file
            ));
            continue;
        };
        for (d, line) in deps {
            let to = layer(d);
            if to != from && !shared(&sources[d]) && !may.contains(to) {
                out.push(format!(
                    "{}:{line}: `{from}` uses `{to}/` ({d}), which the table does not let it",
                    sources[m].file
                ));
            }
        }
    }
    out
}

/// Every place outside `rpc/` that names `berth_proto::pb`, however spelled: a path through it,
/// a `use` of it (renamed, grouped) or a glob of `berth_proto`, which brings it in.
fn protocol_mentions(sources: &BTreeMap<String, Source>) -> Vec<String> {
    let mut out = Vec::new();
    for (m, s) in sources {
        if layer(m) == "rpc" {
            continue;
        }
        for named in &s.names {
            if names_the_protocol(&named.path) {
                out.push(format!("{}:{}: {}", s.file, named.line, named.shown()));
            }
        }
    }
    out
}

/// `berth_proto::pb…`, or a glob of `berth_proto`, which brings `pb` in.
fn names_the_protocol(path: &[String]) -> bool {
    matches!(
        path,
        [root, next, ..] if root == "berth_proto" && (next == "pb" || next == "*")
    )
}

fn daemon_sources() -> BTreeMap<String, Source> {
    let s = sources(&tree().join("daemon/src"));
    assert!(s.len() > 30, "read only {} files", s.len());
    s
}

#[test]
fn each_layer_uses_only_the_layers_architecture_md_lets_it() {
    let doc = std::fs::read_to_string(tree().join("ARCHITECTURE.md")).unwrap();
    let allowed = documented_layers(&doc);
    assert!(
        allowed.contains_key("ops") && allowed.contains_key("rpc"),
        "the table was not read: {allowed:?}"
    );
    let s = daemon_sources();
    let g = graph(&s);
    let found = layer_violations(&g, &s, &allowed);
    assert!(
        found.is_empty(),
        "layers used against ARCHITECTURE.md's table:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other() {
    let g = graph(&daemon_sources());
    assert!(
        g["ops::tools"].contains_key("files"),
        "the reader finds imports: {:?}",
        g["ops::tools"]
    );
    let found = cycles(&g);
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn only_the_rpc_layer_names_protocol_messages() {
    let s = daemon_sources();
    assert!(
        s["rpc::server"]
            .names
            .iter()
            .any(|n| names_the_protocol(&n.path)),
        "the reader finds the server's use of the protocol"
    );
    let found = protocol_mentions(&s);
    assert!(
        found.is_empty(),
        "outside rpc/, code names the protocol's message types (berth_proto::pb); map them in rpc/:\n{}",
        found.join("\n")
    );
}

/// The reader on sources written to hide an import from a string search.
mod reader {
    use super::*;

    fn one(module: &str, text: &str) -> BTreeMap<String, Source> {
        let mut files: BTreeMap<String, Source> = [
            "ops",
            "ops::device",
            "ops::live",
            "rpc",
            "rpc::server",
            "store",
            "error",
        ]
        .into_iter()
        .map(|m| {
            let source = Source {
                file: file_of(m),
                names: Vec::new(),
            };
            (m.to_owned(), source)
        })
        .collect();
        files.insert(
            module.to_owned(),
            Source {
                file: file_of(module),
                names: names_in(module, text).unwrap(),
            },
        );
        files
    }

    /// `error` is the shared file; the others are layers' folders.
    fn file_of(module: &str) -> String {
        match module {
            "error" => "error.rs".to_owned(),
            m if !m.contains("::") => format!("{m}/mod.rs"),
            m => format!("{}.rs", m.replace("::", "/")),
        }
    }

    fn deps(module: &str, text: &str) -> Vec<String> {
        graph(&one(module, text))[module].keys().cloned().collect()
    }

    #[test]
    fn grouped_renamed_nested_and_glob_imports_are_read() {
        let text = "use crate::{error::BerthError, rpc::{self as wire}};\n\
                    use super::live::*;\n";
        assert_eq!(deps("ops::device", text), ["error", "ops::live", "rpc"]);
    }

    #[test]
    fn paths_in_expressions_types_and_macros_are_read_and_tests_are_not() {
        let text = "fn f() -> crate::store::Store { crate::rpc::server::serve(); todo!() }\n\
                    fn g() { tracing::info!(\"{}\", crate::error::CODE); }\n\
                    #[cfg(test)]\nmod tests { use crate::ops::live; }\n\
                    #[cfg(all(test, unix))]\nfn h() { crate::ops::device::x(); }\n";
        assert_eq!(deps("ops::live", text), ["error", "rpc::server", "store"]);
    }

    #[test]
    fn a_name_a_use_binds_is_followed() {
        let text = "use crate::rpc as r;\nfn f() { r::server::serve(); }\n";
        assert_eq!(deps("store", text), ["rpc", "rpc::server"]);
    }

    #[test]
    fn every_spelling_of_the_protocol_is_caught() {
        for text in [
            "use berth_proto::pb as wire;",
            "use berth_proto::{pb};",
            "use berth_proto::{self as p}; fn f(_: p::pb::Status) {}",
            "fn f(_: berth_proto::pb::Status) {}",
            "fn f() -> Vec<::berth_proto::pb::Status> { vec![] }",
            "use berth_proto::*;",
            "fn f() { let _ = format!(\"{:?}\", berth_proto::pb::Status::default()); }",
        ] {
            let found = protocol_mentions(&one("ops::device", text));
            assert!(!found.is_empty(), "not caught: {text}");
        }
        let clean = "use berth_client::paths; fn f() { paths::data_dir(); }\n\
                     #[cfg(test)]\nmod tests { use berth_proto::pb; }";
        assert!(protocol_mentions(&one("ops::device", clean)).is_empty());
    }

    #[test]
    fn a_use_against_the_table_a_folder_it_misses_and_a_shared_file_using_a_layer_are_caught() {
        let table = "Layers depend downwards:\n\n| Layer | Uses |\n|---|---|\n\
                     | `rpc/` | `ops/` |\n| `ops/` | `store` |\n| `store/` | none |\n";
        let allowed = documented_layers(table);
        assert_eq!(allowed["rpc"], BTreeSet::from(["ops".to_owned()]));
        let found = |module: &str, text: &str| {
            let s = one(module, text);
            layer_violations(&graph(&s), &s, &allowed)
        };
        let wrong = found(
            "ops::device",
            "use crate::{store::Store, error, rpc::server};",
        );
        assert_eq!(wrong.len(), 1, "{wrong:?}");
        assert!(wrong[0].contains("`ops` uses `rpc/`"), "{wrong:?}");
        let wrong = found("error", "fn f(_: crate::rpc::Server) {}");
        assert!(
            wrong.iter().any(|w| w.contains("`error` uses `rpc/`")),
            "{wrong:?}"
        );
        let allowed = documented_layers(&table.replace("| `ops/` | `store` |\n", ""));
        let s = one("ops::device", "");
        let wrong = layer_violations(&graph(&s), &s, &allowed);
        assert!(
            wrong.iter().any(|w| w.contains("layer `ops/` is not in")),
            "{wrong:?}"
        );
    }

    #[test]
    fn an_import_circle_is_caught() {
        let mut s = one("ops::device", "use crate::ops::live::Live;");
        s.get_mut("ops::live").unwrap().names =
            names_in("ops::live", "use super::device;").unwrap();
        assert_eq!(cycles(&graph(&s)).len(), 2);
    }
}
