//! `berth uninstall` removes the folders `berth install` created once nothing else is in them,
//! and no other folder: not one that existed before (even empty), not one holding a file of the
//! user's, not a link put in a recorded folder's place, not one whose record is not berth's
//! (docs/reference.md, "The CLI"; docs/decisions/0008-registering-clients.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use berth_tests::TestEnv;
use serde_json::Value;

/// Every client berth registers with.
const CLIENTS: [&str; 7] = [
    "claude-code",
    "codex",
    "vscode",
    "cursor",
    "claude-desktop",
    "cline",
    "copilot-cli",
];

/// The clients with files in a project.
const PROJECT_CLIENTS: [&str; 4] = ["claude-code", "codex", "vscode", "cursor"];

/// The record install leaves in each folder it creates.
const RECORD: &str = ".berth-created";

/// Every entry under `dir`, relative to it: its kind and, for a file, its bytes; for a link,
/// its target.
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = std::fs::symlink_metadata(&p).unwrap().file_type();
            let what = if t.is_symlink() {
                format!("link to {}", std::fs::read_link(&p).unwrap().display())
            } else if t.is_dir() {
                stack.push(p.clone());
                "folder".into()
            } else {
                format!(
                    "file {:?}",
                    String::from_utf8_lossy(&std::fs::read(&p).unwrap())
                )
            };
            out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), what);
        }
    }
    out
}

/// The folders client files live in: the home and the application config folder.
fn user_tree(env: &TestEnv) -> BTreeMap<PathBuf, String> {
    let mut all = BTreeMap::new();
    for d in ["home", "config"] {
        for (p, what) in tree(&env.root().join(d)) {
            all.insert(Path::new(d).join(p), what);
        }
    }
    all
}

/// The folders a `--json` install or uninstall reports, with their action.
fn folders(out: &Value) -> Vec<(String, String)> {
    out["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["folders"].as_array().into_iter().flatten())
        .map(|f| {
            (
                f["folder"].as_str().unwrap().to_string(),
                f["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn install_then_uninstall_of_each_client_from_an_empty_home_gives_the_tree_back() {
    for client in CLIENTS {
        let env = TestEnv::new();
        let before = user_tree(&env);
        // The second round: installing again after an uninstall records its folders again.
        for round in 0..2 {
            let out = env.json(["install", client]);
            let created = folders(&out);
            let recorded = created
                .iter()
                .all(|(f, _)| Path::new(f).join(RECORD).is_file());
            let out = env.json(["uninstall", client]);
            assert_eq!(user_tree(&env), before, "{client}, round {round}");
            assert!(!created.is_empty(), "{client}: no folder created: {out}");
            assert!(recorded, "{client}: a folder it created holds no record");
            let removed = folders(&out);
            assert!(removed.iter().all(|(_, a)| a == "removed"), "{out}");
            let sorted = |l: &[(String, String)]| {
                let mut l: Vec<String> = l.iter().map(|(f, _)| f.clone()).collect();
                l.sort();
                l
            };
            assert_eq!(sorted(&removed), sorted(&created), "{client}: {out}");
        }
    }
}

#[test]
fn project_scope_install_then_uninstall_gives_the_projects_tree_back() {
    let env = TestEnv::new();
    let project = env.git_root(env.dir("shop"));
    let before = tree(&project);
    for client in PROJECT_CLIENTS {
        let _ = env
            .run_in(&project, ["install", client, "--scope", "project"])
            .success();
        assert_ne!(tree(&project), before, "{client}");
        let _ = env
            .run_in(&project, ["uninstall", client, "--scope", "project"])
            .success();
        assert_eq!(tree(&project), before, "{client}");
    }
    // All four at once: Claude Code and VS Code share `.claude`.
    for client in PROJECT_CLIENTS {
        let _ = env
            .run_in(&project, ["install", client, "--scope", "project"])
            .success();
    }
    for client in PROJECT_CLIENTS {
        let _ = env
            .run_in(&project, ["uninstall", client, "--scope", "project"])
            .success();
    }
    assert_eq!(tree(&project), before);
}

/// VS Code's user folder holds VS Code's `mcp.json` and Cline's folders; `~/.claude` holds the
/// hooks Claude Code and VS Code share. Such a folder goes with the last client that needs it,
/// whichever installed first.
#[test]
fn a_folder_two_clients_use_goes_with_the_last_of_them() {
    let orders: [[&str; 7]; 2] = [
        CLIENTS,
        [
            "cline",
            "claude-code",
            "copilot-cli",
            "vscode",
            "claude-desktop",
            "codex",
            "cursor",
        ],
    ];
    for order in orders {
        let env = TestEnv::new();
        let before = user_tree(&env);
        for client in CLIENTS {
            let _ = env.run_berth(["install", client]).success();
        }
        let code_user = env.root().join("config").join("Code").join("User");
        let claude = env.home().join(".claude");
        for (i, client) in order.iter().enumerate() {
            let _ = env.run_berth(["uninstall", client]).success();
            let left = &order[i + 1..];
            let needs = |users: &[&str]| users.iter().any(|u| left.contains(u));
            assert_eq!(
                code_user.is_dir(),
                needs(&["vscode", "cline"]),
                "after uninstalling {:?}",
                &order[..=i]
            );
            assert_eq!(
                claude.is_dir(),
                needs(&["vscode", "claude-code"]),
                "after uninstalling {:?}",
                &order[..=i]
            );
        }
        assert_eq!(user_tree(&env), before, "{order:?}");
    }
}

/// Only the folders install made go: `~/.copilot/hooks` when only Copilot's `mcp-config.json`
/// was there, never an empty folder the user had.
#[test]
fn a_folder_that_existed_before_install_stays_after_uninstall_even_empty() {
    let env = TestEnv::new();
    let copilot = env.home().join(".copilot");
    std::fs::create_dir_all(&copilot).unwrap();
    std::fs::write(
        copilot.join("mcp-config.json"),
        "{\n  \"mcpServers\": {}\n}\n",
    )
    .unwrap();
    for empty in [
        env.home().join(".cursor"),
        env.home().join(".codex"),
        env.root().join("config").join("Code").join("User"),
        env.root().join("config").join("Claude"),
    ] {
        std::fs::create_dir_all(empty).unwrap();
    }
    let before = user_tree(&env);
    for client in CLIENTS {
        let out = env.json(["install", client]);
        for (folder, _) in folders(&out) {
            assert!(
                !before
                    .keys()
                    .any(|k| env.root().join(k) == Path::new(&folder)),
                "{client} claims {folder}, which was there before: {out}"
            );
        }
    }
    assert!(!copilot.join(RECORD).exists(), "~/.copilot existed before");
    for client in CLIENTS {
        let _ = env.run_berth(["uninstall", client]).success();
    }
    assert_eq!(user_tree(&env), before);
}

/// A file the user put in a folder berth made keeps the folder (and its record); once the file
/// is gone, a later uninstall removes the folder.
#[test]
fn a_users_file_keeps_a_folder_berth_made_until_it_is_gone() {
    let env = TestEnv::new();
    let cursor = env.home().join(".cursor");
    let _ = env.run_berth(["install", "cursor"]).success();
    std::fs::write(cursor.join("notes.txt"), "mine\n").unwrap();
    let out = env.json(["uninstall", "cursor"]);
    assert!(folders(&out).is_empty(), "{out}");
    assert_eq!(
        std::fs::read_to_string(cursor.join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert!(cursor.join(RECORD).is_file());

    std::fs::remove_file(cursor.join("notes.txt")).unwrap();
    let _ = env.run_berth(["install", "cursor"]).success();
    let run = env.run_berth(["uninstall", "cursor"]).success();
    assert!(
        run.stdout()
            .contains(&format!("removed folder {}", shown(&cursor))),
        "{}",
        run.stdout()
    );
    assert!(!cursor.exists());
}

/// Something at the record's name that is not berth's record, word for word, is not a record:
/// the folder stays, and so does that thing.
#[test]
fn a_record_in_other_words_or_of_another_kind_keeps_the_folder() {
    let env = TestEnv::new();
    let _ = env.run_berth(["install", "cursor"]).success();
    let _ = env.run_berth(["install", "codex"]).success();
    let cursor = env.home().join(".cursor");
    let codex = env.home().join(".codex");
    std::fs::write(cursor.join(RECORD), "not berth's\n").unwrap();
    std::fs::remove_file(codex.join(RECORD)).unwrap();
    std::fs::create_dir(codex.join(RECORD)).unwrap();
    for client in ["cursor", "codex"] {
        let out = env.json(["uninstall", client]);
        assert!(folders(&out).is_empty(), "{out}");
    }
    assert_eq!(
        std::fs::read_to_string(cursor.join(RECORD)).unwrap(),
        "not berth's\n"
    );
    assert!(codex.join(RECORD).is_dir());
    assert_eq!(std::fs::read_dir(&cursor).unwrap().count(), 1);
}

/// A recorded folder replaced by a link (to a folder holding a copy of the record): the link
/// stays, and nothing is removed where it leads.
// Creating a symbolic link takes a privilege on Windows.
#[cfg(unix)]
#[test]
fn a_link_in_a_recorded_folders_place_is_not_followed_or_removed() {
    let env = TestEnv::new();
    let _ = env.run_berth(["install", "cursor"]).success();
    let cursor = env.home().join(".cursor");
    let elsewhere = env.home().join("elsewhere");
    std::fs::rename(&cursor, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &cursor).unwrap();
    let out = env.json(["uninstall", "cursor"]);
    assert!(folders(&out).is_empty(), "{out}");
    assert!(
        std::fs::symlink_metadata(&cursor)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(elsewhere.join(RECORD).is_file());
}
