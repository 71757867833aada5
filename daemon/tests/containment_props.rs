//! Property tests of containment (ADR 0006): no generated tool path — with `..`, `.`, empty
//! and absolute parts, unicode, very long names, and symlinks planted in the
//! tree pointing out — ever resolves or reaches outside its folder.
// Tests write files freely (clippy.toml's bans are for product code).
#![allow(clippy::disallowed_methods)]
// Unix only for now: it plants links with Unix symlinks; on Windows the same cap-std handle does the containing.
#![cfg(unix)]

use std::path::{Component, Path, PathBuf};

use berth_core::qualify::{Own, Place, QualifyCtx, Target, qualify};
use berthd::Folder;
use proptest::prelude::*;

/// Path segments an agent (or an attacker) might send.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just(String::new()),
        Just("notes".to_string()),
        Just("work".to_string()),
        Just("out".to_string()),
        Just("up".to_string()),
        Just("inner".to_string()),
        Just("ü-ñ-文".to_string()),
        Just("x".repeat(255)),
        "[a-z.]{1,6}",
    ]
}

fn tool_path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(segment(), 0..8)).prop_map(|(absolute, segs)| {
        format!("{}{}", if absolute { "/" } else { "" }, segs.join("/"))
    })
}

fn homes() -> Vec<(String, PathBuf)> {
    vec![
        ("notes".into(), PathBuf::from("/d/workspaces/notes")),
        ("work".into(), PathBuf::from("/home/u/work")),
    ]
}

fn is_clean_relative(rel: &Path) -> bool {
    rel.components().all(|c| matches!(c, Component::Normal(_)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn a_qualified_path_never_leaves_its_folder(path in tool_path(), own in 0u8..3) {
        let names = vec!["notes".to_string(), "work".to_string()];
        let homes = homes();
        let scratch = PathBuf::from("/d/scratch/0123456789abcdef");
        let own = match own {
            0 => Own::Home("work".into()),
            1 => Own::Scratch,
            _ => Own::Ambiguous,
        };
        let ctx = QualifyCtx { names: &names, homes: &homes, own, scratch: Some(&scratch) };
        if let Ok(Target::In { place, rel }) = qualify(&path, &ctx) {
            prop_assert!(is_clean_relative(&rel), "{path:?} gave {rel:?}");
            if path.starts_with('/') {
                let folder = match &place {
                    Place::Home(ws) => homes.iter().find(|(n, _)| n == ws).unwrap().1.clone(),
                    Place::Scratch => scratch.clone(),
                };
                // The absolute path, normalised, is the folder plus rel.
                let mut normal = PathBuf::from("/");
                for c in Path::new(&path).components() {
                    match c {
                        Component::Normal(s) => normal.push(s),
                        Component::ParentDir => { normal.pop(); }
                        _ => {}
                    }
                }
                prop_assert_eq!(normal, folder.join(&rel));
            }
            // Quoting the answer back names the same place.
            let again = qualify(&Target::In { place: place.clone(), rel: rel.clone() }.qualified(), &ctx);
            if let Ok(t) = again {
                prop_assert_eq!(t, Target::In { place, rel });
            }
        }
    }
}

/// A folder holding links that point out of it, beside a secret.
struct Tree {
    _tmp: tempfile::TempDir,
    outside: PathBuf,
    folder: Folder,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("home");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(root.join("inner/deeper")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink(tmp.path(), root.join("up")).unwrap();
    std::os::unix::fs::symlink("../../outside/secret", root.join("inner/leak")).unwrap();
    std::os::unix::fs::symlink("deeper", root.join("inner/ok")).unwrap();
    let folder = Folder::open(&root, "w/".into(), false).unwrap();
    Tree {
        _tmp: tmp,
        outside,
        folder,
    }
}

fn outside_untouched(t: &Tree) -> bool {
    let names: Vec<_> = std::fs::read_dir(&t.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.len() == 1 && std::fs::read_to_string(t.outside.join("secret")).unwrap() == "secret"
}

fn rel_path() -> impl Strategy<Value = PathBuf> {
    prop::collection::vec(segment(), 1..6)
        .prop_map(|segs| segs.iter().filter(|s| !s.is_empty()).collect::<PathBuf>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn no_file_operation_reaches_outside_the_folder(rel in rel_path(), op in 0u8..4) {
        let t = tree();
        let result = match op {
            0 => t.folder.write(&rel, "pwned").map(|o| o.text),
            1 => t.folder.read(&rel).map(|o| o.text),
            2 => t.folder.ls(&rel).map(|o| o.text),
            _ => t.folder.delete(&rel).map(|o| o.text),
        };
        if let Ok(text) = result {
            prop_assert!(!text.contains("secret"), "{rel:?} read outside: {text}");
        }
        prop_assert!(outside_untouched(&t), "{rel:?} changed the outside");
    }
}
