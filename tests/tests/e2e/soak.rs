//! Crash-safety soak (every answered write is durable; a crash loses
//! nothing answered: docs/reference.md, "The daemon"): a stream of registry writes through the CLI
//! while another thread `kill -9`s the daemon at random moments.
//!
//! CI runs a few kills; the long run is
//! `BERTH_SOAK_KILLS=100 cargo test -p berth-tests --test e2e soak -- --nocapture`
//! (`BERTH_SOAK_SEED=N` replays one schedule). The figure it prints,
//! "acknowledged writes lost", must be 0.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use berth_tests::{TestEnv, kill_and_wait, names};
use serde_json::{Value, json};

/// splitmix64: a seeded schedule without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the registry must hold: every answered write, and for writes the
/// kill hit, the outcomes that are allowed.
#[derive(Default)]
struct Model {
    /// Workspaces whose create (or `use`) was answered and which no answered
    /// delete removed since.
    present: BTreeSet<String>,
    /// Workspaces whose delete was answered.
    deleted: BTreeSet<String>,
    /// Workspaces some failed write may or may not have created or deleted.
    unsure: BTreeSet<String>,
    /// Answered roots: path → workspace.
    roots: BTreeMap<PathBuf, String>,
    /// Roots whose removal was answered.
    removed_roots: BTreeSet<PathBuf>,
    /// Roots a failed add or remove may or may not have changed.
    unsure_roots: BTreeSet<PathBuf>,
    /// The last answered value of the setting, and the values of failed sets since.
    setting: Option<String>,
    setting_maybe: Vec<String>,
    /// Answered `workspace use`: project dir → workspace.
    used: Vec<(PathBuf, String)>,
    /// Failed `workspace use`, whose file may exist.
    maybe_used: Vec<(PathBuf, String)>,
    acked: usize,
    failed: usize,
    /// The first few failures, for the log.
    errors: Vec<String>,
}

const KEY: &str = "hooks.stop_timeout_secs";

fn berth_ok(env: &TestEnv, dir: &Path, args: &[&str]) -> Result<(), String> {
    let run = env.run_in(dir, args);
    if run.output.status.success() {
        Ok(())
    } else {
        Err(run.stderr())
    }
}

/// One write, chosen by `rng`, applied to the model by its outcome.
fn one_write(env: &TestEnv, rng: &mut Rng, m: &mut Model, n: usize) {
    let home = env.home();
    let stable: Vec<String> = m
        .present
        .iter()
        .filter(|w| !m.unsure.contains(*w))
        .cloned()
        .collect();
    let pick = |rng: &mut Rng, v: &[String]| v[rng.below(v.len() as u64) as usize].clone();
    let outcome = match rng.below(10) {
        // create
        0..=2 => {
            let ws = format!("s{n}");
            let r = berth_ok(env, &home, &["workspace", "create", &ws]);
            match r {
                Ok(()) => {
                    m.present.insert(ws);
                }
                Err(_) => {
                    m.unsure.insert(ws);
                }
            }
            r
        }
        // delete one that is surely there and has no answered roots left to track
        3 if !stable.is_empty() => {
            let ws = pick(rng, &stable);
            let r = berth_ok(env, &home, &["workspace", "delete", &ws]);
            // Deleting removes its roots too.
            let its_roots: Vec<PathBuf> = m
                .roots
                .iter()
                .filter(|(_, w)| **w == ws)
                .map(|(p, _)| p.clone())
                .collect();
            match r {
                Ok(()) => {
                    m.present.remove(&ws);
                    m.deleted.insert(ws.clone());
                    for p in its_roots {
                        m.roots.remove(&p);
                        m.removed_roots.insert(p);
                    }
                    m.used.retain(|(_, w)| *w != ws);
                }
                Err(_) => {
                    m.present.remove(&ws);
                    m.unsure.insert(ws.clone());
                    for p in its_roots {
                        m.roots.remove(&p);
                        m.unsure_roots.insert(p);
                    }
                    m.used.retain(|(_, w)| *w != ws);
                }
            }
            r
        }
        // add a root: a fresh folder, so no overlap refusal
        4 | 5 if !stable.is_empty() => {
            let ws = pick(rng, &stable);
            let dir = env.dir(&format!("proj/r{n}"));
            let r = berth_ok(env, &home, &["root", "add", &ws, dir.to_str().unwrap()]);
            match r {
                Ok(()) => {
                    m.roots.insert(dir, ws);
                }
                Err(_) => {
                    m.unsure_roots.insert(dir);
                }
            }
            r
        }
        // remove an answered root
        6 if !m.roots.is_empty() => {
            let (dir, ws) = m
                .roots
                .iter()
                .nth(rng.below(m.roots.len() as u64) as usize)
                .map(|(p, w)| (p.clone(), w.clone()))
                .unwrap();
            let r = berth_ok(env, &home, &["root", "remove", &ws, dir.to_str().unwrap()]);
            m.roots.remove(&dir);
            match r {
                Ok(()) => {
                    m.removed_roots.insert(dir);
                }
                Err(_) => {
                    m.unsure_roots.insert(dir);
                }
            }
            r
        }
        // a setting
        7 => {
            let v = (1 + n).to_string();
            let r = berth_ok(env, &home, &["setting", "set", KEY, &v]);
            match r {
                Ok(()) => {
                    m.setting = Some(v);
                    m.setting_maybe.clear();
                }
                Err(_) => m.setting_maybe.push(v),
            }
            r
        }
        // `workspace use` in a fresh git project: creates, approves, writes the file
        _ => {
            let ws = format!("u{n}");
            let dir = env.git_root(env.dir(&format!("proj/u{n}")));
            let r = berth_ok(env, &dir, &["workspace", "use", &ws]);
            match r {
                Ok(()) => {
                    m.present.insert(ws.clone());
                    m.roots.insert(dir.clone(), ws.clone());
                    m.used.push((dir, ws));
                }
                Err(_) => {
                    m.unsure.insert(ws.clone());
                    m.unsure_roots.insert(dir.clone());
                    m.maybe_used.push((dir, ws));
                }
            }
            r
        }
    };
    match outcome {
        Ok(()) => m.acked += 1,
        Err(e) => {
            m.failed += 1;
            if m.errors.len() < 6 {
                m.errors.push(e.trim().to_string());
            }
        }
    }
}

/// Checks the registry against the model; returns the answered writes lost.
fn lost_writes(env: &TestEnv, m: &Model) -> Vec<String> {
    let mut lost = Vec::new();
    let list = env.json(["workspace", "list"]);
    let have: BTreeSet<String> = names(&list).into_iter().collect();
    for ws in &m.present {
        if !have.contains(ws) {
            lost.push(format!("answered create of {ws}: missing"));
        }
    }
    for ws in &m.deleted {
        if have.contains(ws) && !m.unsure.contains(ws) {
            lost.push(format!("answered delete of {ws}: still there"));
        }
    }
    for ws in &have {
        let known = ws == "default" || m.present.contains(ws) || m.unsure.contains(ws);
        assert!(known, "workspace {ws} appeared from nowhere: {list}");
    }
    // A workspace some failed write left behind is whole: it shows, with its home.
    for w in list["workspaces"].as_array().unwrap() {
        let ws = w["name"].as_str().unwrap();
        let show = env.json(["workspace", "show", ws]);
        assert_eq!(&show, w, "show and list disagree about {ws}");
        assert_eq!(w["home_mode"], "managed", "{w}");
        assert_eq!(w["home"], json!(env.managed_home(ws)), "{w}");
    }
    let roots: BTreeMap<PathBuf, String> = env.json(["root", "list"])["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                PathBuf::from(r["path"].as_str().unwrap()),
                r["workspace"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (p, ws) in &m.roots {
        if roots.get(p) != Some(ws) {
            lost.push(format!(
                "answered root {} of {ws}: {:?}",
                p.display(),
                roots.get(p)
            ));
        }
    }
    for p in &m.removed_roots {
        if roots.contains_key(p) && !m.unsure_roots.contains(p) {
            lost.push(format!(
                "answered removal of root {}: still there",
                p.display()
            ));
        }
    }
    for (p, ws) in &roots {
        assert!(
            have.contains(ws),
            "root {} of missing workspace {ws}",
            p.display()
        );
    }
    let value = env.json(["setting", "get", KEY])["value"].clone();
    let allowed: Vec<Value> = m
        .setting
        .iter()
        .chain(&m.setting_maybe)
        .map(|v| json!(v))
        .chain(m.setting.is_none().then_some(Value::Null))
        .collect();
    if !allowed.contains(&value) {
        lost.push(format!(
            "setting {KEY} is {value}, answered {:?}",
            m.setting
        ));
    }
    for (dir, ws) in &m.used {
        let file = dir.join(".berth").join("workspace.json");
        match std::fs::read(&file) {
            Ok(b) if serde_json::from_slice::<Value>(&b).ok() == Some(json!({"workspace": ws})) => {
            }
            other => lost.push(format!(
                "answered use of {ws}: {} is {other:?}",
                file.display()
            )),
        }
    }
    // A project file a failed `use` left is never torn.
    for (dir, ws) in &m.maybe_used {
        if let Ok(b) = std::fs::read(dir.join(".berth").join("workspace.json")) {
            assert_eq!(
                serde_json::from_slice::<Value>(&b).ok(),
                Some(json!({"workspace": ws})),
                "a torn project file in {}",
                dir.display()
            );
        }
    }
    lost
}

#[test]
fn every_answered_write_survives_kill_9_at_random_moments() {
    let kills_wanted = env_number("BERTH_SOAK_KILLS", 4) as usize;
    let seed = env_number("BERTH_SOAK_SEED", 0x5eed_0009);
    eprintln!("soak: seed {seed}, {kills_wanted} kills (BERTH_SOAK_SEED, BERTH_SOAK_KILLS)");
    let env = Arc::new(TestEnv::new());
    let started = Instant::now();
    let _ = env.run_berth(["resolve"]).success();

    let done = Arc::new(AtomicBool::new(false));
    let kills = Arc::new(AtomicUsize::new(0));
    let killer = {
        let (env, done, kills) = (env.clone(), done.clone(), kills.clone());
        let mut rng = Rng(seed ^ 0xdead_beef);
        std::thread::spawn(move || {
            loop {
                // Paces the load: kills land at random moments among the writes.
                std::thread::sleep(Duration::from_millis(20 + rng.below(180)));
                // Checked after the pause: a kill once the writes ended would
                // hit the final checks, which no kill may touch.
                if done.load(Ordering::SeqCst) {
                    break;
                }
                for pid in env.daemon_pids() {
                    // Waits until the daemon is wholly gone, so once this thread
                    // has joined no killed daemon is still accepting connections.
                    assert!(
                        kill_and_wait(pid, Duration::from_secs(10)),
                        "berthd {pid} outlived SIGKILL by 10 s"
                    );
                    kills.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };

    let mut rng = Rng(seed);
    let mut m = Model::default();
    let mut n = 0;
    // The kills come from the other thread; the writes go on until enough
    // landed (bounded, so a daemon that never comes back fails the test).
    while kills.load(Ordering::Relaxed) < kills_wanted || n < 20 {
        one_write(&env, &mut rng, &mut m, n);
        n += 1;
        assert!(
            started.elapsed() < Duration::from_secs(60 + 3 * kills_wanted as u64),
            "the soak made no progress: {n} writes, {} answered, {} kills",
            m.acked,
            kills.load(Ordering::Relaxed)
        );
    }
    done.store(true, Ordering::SeqCst);
    killer.join().unwrap();
    let kills = kills.load(Ordering::Relaxed);

    for e in &m.errors {
        eprintln!("soak: a write the kill hit said: {e}");
    }
    let lost = lost_writes(&env, &m);
    eprintln!(
        "soak: {n} writes, {} answered, {} failed under {kills} kills in {:.1?}; acknowledged writes lost = {}",
        m.acked,
        m.failed,
        started.elapsed(),
        lost.len()
    );
    assert!(
        lost.is_empty(),
        "answered writes lost:\n{}",
        lost.join("\n")
    );
    assert!(
        m.acked >= n / 2,
        "too few writes were answered ({} of {n}): the daemon does not come back",
        m.acked
    );

    let _ = env.run_berth(["daemon", "stop"]).success();
    env.wait_no_daemon(Duration::from_secs(5));
    let db =
        rusqlite::Connection::open_with_flags(env.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
