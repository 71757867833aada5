//! Registry rules that span rows hold under concurrent writers: each is
//! decided inside the write that would break it (docs/reliability.md,
//! "Hostile folders and races").

use std::process::{Output, Stdio};

use berth_tests::TestEnv;
use serde_json::{Value, json};

const CLIENTS: usize = 6;
const ROUNDS: usize = 50;

/// Every client of a round approves a folder on one nested chain
/// (`a`, `a/b`, `a/b/c`, ...) for its own workspace, all at once. Without
/// `--allow-overlap` exactly one may win; the others get the overlap refusal.
#[test]
fn concurrent_nested_roots_of_different_workspaces_never_all_win() {
    let env = TestEnv::new();
    for i in 0..CLIENTS {
        env.json(["workspace", "create", &format!("w{i}")]);
    }
    for round in 0..ROUNDS {
        let mut rel = format!("tree/{round}");
        let mut dirs = Vec::new();
        for i in 0..CLIENTS {
            rel.push_str(&format!("/d{i}"));
            dirs.push(env.dir(&rel));
        }
        // Spawned back to back, then waited for: the requests overlap in the daemon.
        let children: Vec<_> = dirs
            .iter()
            .enumerate()
            .map(|(i, dir)| {
                let mut cmd = env.berth(["root", "add", &format!("w{i}"), dir.to_str().unwrap()]);
                cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
                cmd.spawn().expect("spawn berth")
            })
            .collect();
        let mut won = Vec::new();
        for (i, child) in children.into_iter().enumerate() {
            let out = child.wait_with_output().expect("wait for berth");
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.success() {
                won.push(i);
            } else {
                assert_eq!(out.status.code(), Some(1), "round {round}, w{i}: {stderr}");
                assert!(
                    stderr.contains("overlaps roots of other workspaces")
                        && stderr.contains("--allow-overlap"),
                    "round {round}, w{i}: {stderr}"
                );
            }
        }
        assert_eq!(won.len(), 1, "round {round}: these all won: {won:?}");
        let roots = env.json(["root", "list"])["roots"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(roots, round + 1, "round {round}: the registry disagrees");
    }
}

/// Runs one `berth` per argument list at once (each in `dir`); their outputs in order.
fn all_at_once(env: &TestEnv, dir: &std::path::Path, runs: &[Vec<String>]) -> Vec<Output> {
    let children: Vec<_> = runs
        .iter()
        .map(|args| {
            let mut cmd = env.berth_in(dir, args);
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            cmd.spawn().expect("spawn berth")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait for berth"))
        .collect()
}

/// Several new workspaces asking for the same local home at once: one gets it.
#[test]
fn concurrent_creates_with_one_local_home_give_it_to_one_workspace() {
    let env = TestEnv::new();
    for round in 0..20 {
        let home = env.dir(&format!("homes/{round}"));
        let runs: Vec<Vec<String>> = (0..CLIENTS)
            .map(|i| {
                vec![
                    "workspace".into(),
                    "create".into(),
                    format!("h{round}-{i}"),
                    "--home".into(),
                    home.display().to_string(),
                ]
            })
            .collect();
        let outs = all_at_once(&env, &env.home(), &runs);
        let won = outs.iter().filter(|o| o.status.success()).count();
        for o in outs.iter().filter(|o| !o.status.success()) {
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                stderr.contains("is already the home of workspace"),
                "{stderr}"
            );
        }
        assert_eq!(
            won,
            1,
            "round {round}: {won} workspaces got {}",
            home.display()
        );
    }
}

/// `workspace use` of different workspaces in one project at once: one wins,
/// and the project file names the winner.
#[test]
fn concurrent_uses_of_one_project_leave_one_root_and_its_file() {
    let env = TestEnv::new();
    for round in 0..20 {
        let dir = env.git_root(env.dir(&format!("proj/{round}")));
        let runs: Vec<Vec<String>> = (0..CLIENTS)
            .map(|i| vec!["workspace".into(), "use".into(), format!("u{round}-{i}")])
            .collect();
        let outs = all_at_once(&env, &dir, &runs);
        let won: Vec<usize> = (0..CLIENTS).filter(|&i| outs[i].status.success()).collect();
        assert_eq!(won.len(), 1, "round {round}: these all won: {won:?}");
        let winner = format!("u{round}-{}", won[0]);
        let file = std::fs::read(dir.join(".berth").join("workspace.json"))
            .unwrap_or_else(|e| panic!("round {round}: the project file of {winner}: {e}"));
        let named: Value = serde_json::from_slice(&file).unwrap();
        assert_eq!(named, json!({"workspace": winner}), "round {round}");
        let roots = env.json(["root", "list"])["roots"].clone();
        let here: Vec<&Value> = roots
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["path"] == json!(dir))
            .collect();
        assert_eq!(here.len(), 1, "round {round}: {roots}");
        assert_eq!(here[0]["workspace"], json!(winner), "round {round}");
    }
}
