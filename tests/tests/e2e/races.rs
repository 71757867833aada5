//! Registry rules that span rows hold under concurrent writers: each is
//! decided inside the write that would break it (docs/reliability.md,
//! "Hostile folders and races").

use std::process::Stdio;

use berth_tests::TestEnv;

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
