//! Hostile input through every entry point (docs/reliability.md): CLI arguments, RPC
//! fields, project files, hook payloads and tool arguments. Each gets a
//! clear answer (exit 1 or 2 with a message; an RPC error with a message;
//! a hook exits 0 with valid stdout), nothing hangs (every run is bounded),
//! the daemon survives, and nothing outside the folders berth owns changes
//! (a sentinel tree's files and mtimes are compared before and after).
//!
//! NUL bytes cannot reach berth through argv or the environment (the kernel
//! takes C strings), so they are sent where they can arrive: RPC fields,
//! tool arguments, project files and hook payloads.

use std::collections::BTreeMap;
#[cfg(unix)]
use std::ffi::OsStr;
#[cfg(unix)]
use std::os::unix::ffi::{OsStrExt, OsStringExt};
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[cfg(unix)]
use berth_client::client::ClientError;
#[cfg(unix)]
use berth_proto::pb;
#[cfg(unix)]
use berth_tests::{Run, names};
use berth_tests::{TestEnv, bin};
use serde_json::{Value, json};

/// Every run must end well within this: nothing hostile may make berth wait.
const BOUND: Duration = Duration::from_secs(15);

/// (kind, size, mtime, mode, content or link target) of every entry below `root`.
type Snapshot = BTreeMap<PathBuf, (String, u64, i64, u32, Vec<u8>)>;

fn snapshot(root: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).expect("lstat");
            let ft = meta.file_type();
            let (kind, body) = if ft.is_symlink() {
                (
                    "link",
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                )
            } else if ft.is_dir() {
                stack.push(p.clone());
                ("dir", Vec::new())
            } else if ft.is_file() {
                ("file", std::fs::read(&p).unwrap())
            } else {
                ("other", Vec::new())
            };
            out.insert(
                p,
                (
                    kind.to_string(),
                    meta.len(),
                    mtime_ns(&meta),
                    mode(&meta),
                    body,
                ),
            );
        }
    }
    out
}

#[cfg(unix)]
fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.mtime_nsec() + meta.mtime() * 1_000_000_000
}

#[cfg(windows)]
fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    let t = meta.modified().unwrap();
    t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    meta.mode()
}

/// The file attributes (read-only, hidden, ...): what Windows has of a mode.
#[cfg(windows)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    std::os::windows::fs::MetadataExt::file_attributes(meta)
}

/// A world with a sentinel tree outside every folder berth owns: files, a
/// folder, a symlink loop (`loop/a -> b -> a`; on Windows, where a link
/// takes a privilege, the loop's folder only), and links from the home and a
/// project pointing into it.
struct World {
    env: TestEnv,
    outside: PathBuf,
    before: Snapshot,
}

impl World {
    fn new() -> World {
        let env = TestEnv::new();
        let outside = env.dir("outside");
        std::fs::write(outside.join("secret.txt"), "do not touch\n").unwrap();
        std::fs::create_dir(outside.join("sub")).unwrap();
        std::fs::write(outside.join("sub").join("data.bin"), [0u8, 1, 2, 255]).unwrap();
        let lp = env.dir("outside/loop");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(lp.join("b"), lp.join("a")).unwrap();
            std::os::unix::fs::symlink(lp.join("a"), lp.join("b")).unwrap();
        }
        #[cfg(windows)]
        let _ = lp;
        let before = snapshot(&outside);
        World {
            env,
            outside,
            before,
        }
    }

    fn loop_path(&self) -> PathBuf {
        self.outside.join("loop").join("a")
    }

    /// Fails unless the sentinel tree is exactly as it was.
    fn untouched(&self) {
        let after = snapshot(&self.outside);
        if after != self.before {
            let changed: Vec<_> = after
                .iter()
                .filter(|(p, v)| self.before.get(*p) != Some(v))
                .map(|(p, _)| p.display().to_string())
                .chain(
                    self.before
                        .keys()
                        .filter(|p| !after.contains_key(*p))
                        .map(|p| format!("{} (removed)", p.display())),
                )
                .collect();
            panic!("something outside berth's folders changed: {changed:?}");
        }
    }
}

/// A clear refusal: exit 1 or 2, a message on stderr, no panic, in time.
#[cfg(unix)]
fn refused(run: Run) -> Run {
    if !matches!(run.code(), Some(1 | 2)) {
        run.fail("expected a refusal (exit 1 or 2)");
    }
    let err = run.stderr();
    if err.trim().is_empty() || err.contains("panicked") {
        run.fail("expected a clear message on stderr");
    }
    assert!(run.elapsed < BOUND, "took {:?}", run.elapsed);
    run
}

/// Either answered or clearly refused; never a crash, a hang or silence.
#[cfg(unix)]
fn answered_or_refused(run: Run) -> Run {
    if run.code() == Some(0) {
        assert!(run.elapsed < BOUND, "took {:?}", run.elapsed);
        return run;
    }
    refused(run)
}

#[cfg(unix)]
fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

// Non-UTF-8 arguments, /proc and symbolic links (a privilege on Windows).
#[cfg(unix)]
#[test]
fn hostile_cli_arguments_get_clear_errors_and_touch_nothing_outside() {
    let w = World::new();
    let env = &w.env;
    env.json(["workspace", "create", "w"]);
    let long = format!("/{}", "a".repeat(64 * 1024));
    let long_rel = "b/".repeat(32 * 1024);
    let a41 = "a".repeat(41);
    // A folder whose name is not UTF-8 (it exists: the refusal is about the name).
    let bad_name = env.root().join(os(b"proj-\xff\xfe"));
    std::fs::create_dir_all(&bad_name).unwrap();
    let bad = bad_name.as_os_str();
    let lp = w.loop_path();
    let lp = lp.as_os_str();
    let cases: Vec<(&str, Vec<&OsStr>)> = vec![
        ("non-UTF-8 path to resolve", vec![os(b"resolve"), bad]),
        (
            "non-UTF-8 root",
            vec![os(b"root"), os(b"add"), os(b"w"), bad],
        ),
        (
            "non-UTF-8 home",
            vec![
                os(b"workspace"),
                os(b"create"),
                os(b"x"),
                os(b"--home"),
                bad,
            ],
        ),
        (
            "non-UTF-8 name",
            vec![os(b"workspace"), os(b"create"), os(b"n\xffx")],
        ),
        ("non-UTF-8 claim cwd", vec![os(b"claim"), os(b"--cwd"), bad]),
        (
            "64 KiB absolute path",
            vec![os(b"resolve"), os(long.as_bytes())],
        ),
        (
            "64 KiB relative path",
            vec![os(b"resolve"), os(long_rel.as_bytes())],
        ),
        (
            "64 KiB root",
            vec![os(b"root"), os(b"add"), os(b"w"), os(long.as_bytes())],
        ),
        (
            "64 KiB home",
            vec![
                os(b"workspace"),
                os(b"create"),
                os(b"x"),
                os(b"--home"),
                os(long.as_bytes()),
            ],
        ),
        ("64 KiB tool path", vec![os(b"path"), os(long.as_bytes())]),
        (
            "relative home",
            vec![
                os(b"workspace"),
                os(b"create"),
                os(b"x"),
                os(b"--home"),
                os(b"rel"),
            ],
        ),
        (
            "dot-dot home",
            vec![
                os(b"workspace"),
                os(b"create"),
                os(b"x"),
                os(b"--home"),
                os(b"/tmp/../etc"),
            ],
        ),
        (
            "home through /proc/self/cwd (the daemon's, not ours)",
            vec![
                os(b"workspace"),
                os(b"create"),
                os(b"x"),
                os(b"--home"),
                os(b"/proc/self/cwd"),
            ],
        ),
        (
            "home through /proc/self/root to /etc",
            vec![
                os(b"workspace"),
                os(b"create"),
                os(b"x"),
                os(b"--home"),
                os(b"/proc/self/root/etc"),
            ],
        ),
        (
            "root through /proc/self/root to /",
            vec![os(b"root"), os(b"add"), os(b"w"), os(b"/proc/self/root")],
        ),
        (
            "name of 41 characters",
            vec![os(b"workspace"), os(b"create"), os(a41.as_bytes())],
        ),
        ("empty name", vec![os(b"workspace"), os(b"create"), os(b"")]),
        (
            "cyrillic look-alike name",
            vec![
                os(b"workspace"),
                os(b"create"),
                os("n\u{43e}tes".as_bytes()),
            ],
        ),
        (
            "fullwidth look-alike name",
            vec![
                os(b"workspace"),
                os(b"create"),
                os("\u{ff4e}otes".as_bytes()),
            ],
        ),
        (
            "look-alike of an existing name",
            vec![os(b"workspace"), os(b"switch"), os("\u{1d42}".as_bytes())],
        ),
        (
            "path-like name",
            vec![os(b"workspace"), os(b"create"), os(b"../etc")],
        ),
        ("symlink loop to resolve", vec![os(b"resolve"), lp]),
        (
            "symlink loop as a root",
            vec![os(b"root"), os(b"add"), os(b"w"), lp],
        ),
        (
            "symlink loop as a home",
            vec![os(b"workspace"), os(b"create"), os(b"x"), os(b"--home"), lp],
        ),
        (
            "symlink loop as a claim cwd",
            vec![os(b"claim"), os(b"--cwd"), lp],
        ),
        (
            "setting of an unknown key",
            vec![os(b"setting"), os(b"set"), os(b"no.such\xff"), os(b"v")],
        ),
        (
            "setting naming a look-alike workspace",
            vec![
                os(b"setting"),
                os(b"set"),
                os(b"workspace.unassigned"),
                os("\u{1d42}".as_bytes()),
            ],
        ),
    ];
    for (what, args) in &cases {
        let run = env.run_berth(args);
        if !matches!(run.code(), Some(1 | 2)) || run.stderr().trim().is_empty() {
            run.fail(&format!("{what}: expected a clear refusal"));
        }
        let _ = refused(run);
    }
    // In a folder whose name is not UTF-8, every command says so.
    let _ = refused(env.run_in(&bad_name, ["resolve"])).stderr_has(&["UTF-8"]);
    let _ = refused(env.run_in(&bad_name, ["workspace", "use", "x"]));
    // Names at the limit work; the refusals above changed nothing.
    let forty = "a".repeat(40);
    env.json(["workspace", "create", &forty]);
    assert_eq!(
        names(&env.json(["workspace", "list"])),
        [forty.as_str(), "default", "w"]
    );
    assert_eq!(env.json(["root", "list"]), json!({"roots": []}));
    // /proc/self/root/<dir> is <dir>: accepted as the same folder, canonical.
    let proj = env.dir("proj/via-proc");
    let via = Path::new("/proc/self/root").join(proj.strip_prefix("/").unwrap());
    let run = answered_or_refused(env.run_berth([
        OsStr::new("--json"),
        OsStr::new("root"),
        OsStr::new("add"),
        OsStr::new("w"),
        via.as_os_str(),
    ]));
    if run.code() == Some(0) {
        assert_eq!(
            run.json()["path"],
            json!(proj),
            "a root is stored canonical"
        );
    }
    w.untouched();
    assert!(!bad_name.join(".berth").exists());
    assert_eq!(env.daemon_pids().len(), 1);
}

// Symbolic links (a privilege on Windows) and a FIFO.
#[cfg(unix)]
#[test]
fn hostile_project_files_are_ignored_with_a_note_and_never_hang() {
    let w = World::new();
    let env = &w.env;
    // A symlink loop where the project file should be.
    let looped = env.git_root(env.dir("proj/looped"));
    std::fs::create_dir(looped.join(".berth")).unwrap();
    std::os::unix::fs::symlink(
        looped.join(".berth").join("x"),
        looped.join(".berth").join("workspace.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        looped.join(".berth").join("workspace.json"),
        looped.join(".berth").join("x"),
    )
    .unwrap();
    // A `.berth` that is a FIFO, not a folder.
    let fifo = env.git_root(env.dir("proj/fifo"));
    let c = std::ffi::CString::new(fifo.join(".berth").into_os_string().into_vec()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    // A project file linked out of the project, to the sentinel.
    let linked = env.git_root(env.dir("proj/linked"));
    std::fs::create_dir(linked.join(".berth")).unwrap();
    std::os::unix::fs::symlink(
        w.outside.join("secret.txt"),
        linked.join(".berth").join("workspace.json"),
    )
    .unwrap();
    for dir in [&looped, &fifo, &linked] {
        let r = env.run_in(dir, ["--json", "resolve"]);
        let r = answered_or_refused(r);
        if r.code() == Some(0) {
            let v = r.json();
            assert_eq!(v["workspace"], "default", "{v}");
            assert_eq!(v["project"], json!(dir), "{v}");
        }
        let _ = answered_or_refused(env.run_in(dir, ["explain"]));
        // `use` either writes a fresh file beside them or refuses; it never
        // follows the link out or blocks on the FIFO.
        let _ = answered_or_refused(env.run_in(dir, ["workspace", "use", "p"]));
    }
    let notes = env.json_in(&looped, ["resolve"])["notes"].to_string();
    assert!(
        notes.contains("workspace.json"),
        "the loop is ignored with a note: {notes}"
    );
    w.untouched();
    assert_eq!(env.daemon_pids().len(), 1);
}

/// Every file of the fuzz corpus for hook payloads, fed to the real hook (each of its events):
/// exit 0, in time, with nothing or one JSON document on stdout.
#[test]
fn hook_payload_corpus_and_garbage_exit_0_with_valid_stdout() {
    let w = World::new();
    let env = &w.env;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/hook_payload");
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    inputs.sort();
    let outside = w.outside.display().to_string();
    inputs.push((
        "cwd in the sentinel".into(),
        json!({"session_id": "h", "cwd": outside})
            .to_string()
            .into_bytes(),
    ));
    inputs.push((
        "cwd a loop".into(),
        json!({"session_id": "h", "cwd": w.loop_path()})
            .to_string()
            .into_bytes(),
    ));
    inputs.push((
        "nul in cwd".into(),
        br#"{"session_id":"h","cwd":"/tmp/\u0000x"}"#.to_vec(),
    ));
    inputs.push(("1 MiB of zeros".into(), vec![0u8; 1 << 20]));
    // The pre-tool hook's own inputs: write tools aimed at a loop, a NUL and the sentinel,
    // and every patch of the apply_patch corpus.
    for (name, file) in [
        ("write into a loop", w.loop_path().display().to_string()),
        ("write with a NUL", "/tmp/\0x".to_string()),
        ("write into the sentinel", outside.clone()),
    ] {
        inputs.push((
            name.into(),
            json!({"session_id": "h", "cwd": outside, "tool_name": "Write", "tool_input": {"file_path": file}})
                .to_string()
                .into_bytes(),
        ));
    }
    let patches = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/apply_patch");
    for e in std::fs::read_dir(&patches).unwrap().flatten() {
        let patch = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
        inputs.push((
            format!("apply_patch {}", e.file_name().to_string_lossy()),
            json!({"session_id": "h", "cwd": outside, "turn_id": "t", "tool_name": "apply_patch", "tool_input": {"command": patch}})
                .to_string()
                .into_bytes(),
        ));
    }
    for event in ["session-start", "stop", "pre-tool"] {
        for (name, bytes) in &inputs {
            let mut cmd = env.command(bin("berth-hook"));
            cmd.arg(event);
            let run = env.run_with_stdin(cmd, bytes);
            if run.code() != Some(0) {
                run.fail(&format!("{event} with {name}: a hook must exit 0"));
            }
            assert!(
                run.elapsed < BOUND,
                "{event} with {name}: took {:?}",
                run.elapsed
            );
            let out = run.stdout();
            if !out.trim().is_empty() && serde_json::from_str::<Value>(&out).is_err() {
                run.fail(&format!(
                    "{event} with {name}: stdout is neither empty nor JSON"
                ));
            }
        }
    }
    w.untouched();
}

// ---- RPC fields, straight to the daemon ----

/// An RPC error with a message (the daemon's words), never a lost connection.
#[cfg(unix)]
fn rpc_refused<T: std::fmt::Debug>(what: &str, r: Result<T, ClientError>) -> String {
    match r {
        Err(ClientError::Rpc(s)) => {
            assert!(
                !s.message().trim().is_empty(),
                "{what}: an error without a message"
            );
            s.message().to_string()
        }
        other => panic!("{what}: expected the daemon to refuse, got {other:?}"),
    }
}

#[cfg(unix)]
fn caller(cwd: &str) -> Option<pb::Caller> {
    Some(pb::Caller {
        cwd: cwd.to_string(),
        ..Default::default()
    })
}

// Symbolic links out of a home (creating one takes a privilege on Windows).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_rpc_fields_get_clear_errors_and_the_daemon_keeps_serving() {
    let w = World::new();
    let env = &w.env;
    let proj = env.git_root(env.dir("proj/app"));
    let _ = env.run_in(&proj, ["workspace", "use", "app"]).success();
    let pid = env.daemon_pid();
    let mut conn = env.connect().await;
    let long = format!("/{}", "c".repeat(64 * 1024));
    let home = env.home().display().to_string();

    // Callers whose cwd is not an absolute path.
    for (what, cwd) in [
        ("relative cwd", "rel/dir"),
        ("empty cwd", ""),
        ("dot-dot cwd", "../.."),
    ] {
        let req = pb::ResolveRequest {
            caller: caller(cwd),
            ..Default::default()
        };
        let msg = rpc_refused(
            what,
            conn.call(|mut c| {
                let r = req.clone();
                async move { c.resolve(r).await }
            })
            .await,
        );
        assert!(msg.contains("absolute"), "{what}: {msg}");
    }
    // A caller with no caller at all.
    let r = conn
        .call(|mut c| async move { c.resolve(pb::ResolveRequest::default()).await })
        .await;
    let _ = rpc_refused("no caller", r);
    // Long and `..`-laden paths: refused or answered, never a crash.
    for (what, cwd, path) in [
        ("64 KiB cwd", long.as_str(), ""),
        ("64 KiB path", home.as_str(), long.as_str()),
        (
            "dot-dot path",
            home.as_str(),
            "../../../../../../../../etc/../proc/self/root/etc",
        ),
        ("dot-dot cwd in an absolute path", "/a/../../b/../..", ""),
        ("NUL in a path", home.as_str(), "a\0b"),
        (
            "a loop",
            home.as_str(),
            &w.loop_path().display().to_string(),
        ),
    ] {
        let req = pb::ResolveRequest {
            caller: caller(cwd),
            path: path.to_string(),
            ..Default::default()
        };
        match conn
            .call(|mut c| {
                let r = req.clone();
                async move { c.resolve(r).await }
            })
            .await
        {
            Ok(reply) => assert!(reply.resolution.is_some(), "{what}"),
            Err(e) => {
                let _ = rpc_refused(what, Err::<(), _>(e));
            }
        }
    }
    // An unknown Mode integer.
    let req = pb::ResolveRequest {
        caller: caller(&proj.display().to_string()),
        mode: 42,
        ..Default::default()
    };
    match conn
        .call(|mut c| {
            let r = req.clone();
            async move { c.resolve(r).await }
        })
        .await
    {
        Ok(reply) => assert_eq!(reply.resolution.unwrap().workspace, "app"),
        Err(e) => {
            let _ = rpc_refused("unknown mode", Err::<(), _>(e));
        }
    }
    let req = pb::UseWorkspaceRequest {
        caller: caller(&proj.display().to_string()),
        name: "app".into(),
        mode: -7,
        ..Default::default()
    };
    let _ = conn
        .call(|mut c| {
            let r = req.clone();
            async move { c.use_workspace(r).await }
        })
        .await;
    // Registry writes with hostile fields.
    let creates = [
        ("NUL in a name", "a\0b", ""),
        ("NUL in a home", "x", "/tmp/a\0b"),
        ("relative home", "x", "rel"),
        ("64 KiB home", "x", long.as_str()),
        ("home at /", "x", "/"),
        ("look-alike name", "n\u{43e}tes", ""),
    ];
    for (what, name, h) in creates {
        let req = pb::CreateWorkspaceRequest {
            caller: caller(&home),
            name: name.into(),
            home: h.into(),
        };
        let _ = rpc_refused(
            what,
            conn.call(|mut c| {
                let r = req.clone();
                async move { c.create_workspace(r).await }
            })
            .await,
        );
    }
    for (what, path) in [
        ("root at /", "/"),
        ("root with NUL", "/tmp/\0"),
        ("64 KiB root", long.as_str()),
        ("relative root from a relative cwd", "x"),
    ] {
        let req = pb::RootRequest {
            caller: caller(if path == "x" { "rel" } else { &home }),
            workspace: "app".into(),
            path: path.into(),
            allow_overlap: true,
        };
        let _ = rpc_refused(
            what,
            conn.call(|mut c| {
                let r = req.clone();
                async move { c.add_root(r).await }
            })
            .await,
        );
    }
    let req = pb::SettingRequest {
        key: "workspace.unassigned".into(),
        value: "\0".into(),
    };
    let _ = rpc_refused(
        "NUL setting",
        conn.call(|mut c| {
            let r = req.clone();
            async move { c.set_setting(r).await }
        })
        .await,
    );

    // Sessions and tools.
    let bogus = pb::CallToolRequest {
        session_id: "no-such-session".into(),
        tool: "read".into(),
        arguments_json: json!({"path": "x"}).to_string(),
    };
    let _ = rpc_refused(
        "a bogus session id",
        conn.call(|mut c| {
            let r = bogus.clone();
            async move { c.call_tool(r).await }
        })
        .await,
    );
    let malformed_pin = pb::OpenSessionRequest {
        caller: caller(&proj.display().to_string()),
        session_id: "resumed".into(),
        pin: Some(pb::Resolution {
            workspace: "../../etc".into(),
            reason: "because".into(),
            directory: "relative".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let _ = rpc_refused(
        "a malformed resume pin",
        conn.call(|mut c| {
            let r = malformed_pin.clone();
            async move { c.open_session(r).await }
        })
        .await,
    );
    let open = pb::OpenSessionRequest {
        caller: caller(&proj.display().to_string()),
        client_name: "hostile".into(),
        ..Default::default()
    };
    let (first, stream) = berth_tests::open_session(&mut conn, open).await;
    let session = first.session_id.clone();
    assert_eq!(first.resolution.unwrap().workspace, "app");
    let app_home = env.managed_home("app");
    std::fs::create_dir_all(&app_home).unwrap();
    std::os::unix::fs::symlink(&w.outside, app_home.join("out")).unwrap();
    std::os::unix::fs::symlink(w.outside.join("secret.txt"), app_home.join("s.txt")).unwrap();
    let five_mib = json!({"path": "big.txt", "content": "x".repeat(5 << 20)}).to_string();
    let tool_cases: Vec<(&str, &str, String)> = vec![
        ("arguments that are an array", "read", "[1, 2]".into()),
        ("arguments that are a string", "read", "\"x\"".into()),
        ("arguments that are null", "write", "null".into()),
        ("arguments that are not JSON", "write", "{\"path\":".into()),
        ("empty arguments", "read", String::new()),
        ("an unknown tool", "rm -rf /", "{}".into()),
        (
            "read ../../etc/passwd",
            "read",
            json!({"path": "../../etc/passwd"}).to_string(),
        ),
        (
            "read app/../../etc/passwd",
            "read",
            json!({"path": "app/../../../etc/passwd"}).to_string(),
        ),
        (
            "read /etc/passwd",
            "read",
            json!({"path": "/etc/passwd"}).to_string(),
        ),
        (
            "read through /proc",
            "read",
            json!({"path": "/proc/self/root/etc/passwd"}).to_string(),
        ),
        (
            "read a link out",
            "read",
            json!({"path": "s.txt"}).to_string(),
        ),
        (
            "write through a link out",
            "write",
            json!({"path": "s.txt", "content": "pwned"}).to_string(),
        ),
        (
            "write through a folder link out",
            "write",
            json!({"path": "out/new.txt", "content": "pwned"}).to_string(),
        ),
        (
            "write to the sentinel by absolute path",
            "write",
            json!({"path": w.outside.join("new.txt"), "content": "pwned"}).to_string(),
        ),
        (
            "move a file out",
            "move",
            json!({"from": "out/secret.txt", "to": "stolen.txt"}).to_string(),
        ),
        (
            "delete through a link",
            "delete",
            json!({"path": "out/secret.txt"}).to_string(),
        ),
        (
            "edit through a link",
            "edit",
            json!({"path": "s.txt", "old": "do", "new": "did"}).to_string(),
        ),
        (
            "search the link loop",
            "search",
            json!({"query": "x", "path": "out/loop"}).to_string(),
        ),
        (
            "NUL in a path",
            "write",
            json!({"path": "a\u{0}b", "content": "x"}).to_string(),
        ),
        (
            "64 KiB path",
            "write",
            json!({"path": "d/".repeat(32 * 1024), "content": "x"}).to_string(),
        ),
        ("a 5 MiB write", "write", five_mib),
    ];
    for (what, tool, args) in &tool_cases {
        let req = pb::CallToolRequest {
            session_id: session.clone(),
            tool: tool.to_string(),
            arguments_json: args.clone(),
        };
        let r = conn
            .call(|mut c| {
                let r = req.clone();
                async move { c.call_tool(r).await }
            })
            .await;
        match r {
            // An atomic write replaces the link itself with a file (the
            // rename never follows it): the sentinel check below proves it.
            Ok(reply) if *what == "write through a link out" && !reply.is_error => {
                assert!(!app_home.join("s.txt").is_symlink(), "{}", reply.text);
            }
            Ok(reply) => {
                assert!(reply.is_error, "{what}: the tool did it: {}", reply.text);
                assert!(
                    !reply.text.trim().is_empty(),
                    "{what}: an error without words"
                );
                assert!(
                    !reply.text.contains("root:x:0:0"),
                    "{what}: leaked /etc/passwd"
                );
                assert!(
                    !reply.text.contains("do not touch"),
                    "{what}: leaked the sentinel"
                );
            }
            Err(ClientError::Rpc(s)) => assert!(!s.message().is_empty(), "{what}"),
            Err(e) => panic!("{what}: the daemon did not answer: {e}"),
        }
    }
    assert!(!app_home.join("big.txt").exists(), "a 5 MiB write landed");
    // Hooks with hostile fields.
    for (what, cwd, event) in [
        ("relative cwd", "rel", "session-start"),
        ("unknown event", home.as_str(), "rm"),
        ("NUL cwd", "/\0", "stop"),
    ] {
        let req = pb::HookRequest {
            caller: caller(cwd),
            event: event.into(),
            client: "no-such-client".into(),
            payload: "\0\u{feff}".into(),
            ..Default::default()
        };
        let _ = rpc_refused(
            what,
            conn.call(|mut c| {
                let r = req.clone();
                async move { c.hook(r).await }
            })
            .await,
        );
    }
    drop(stream);
    // The same daemon, still serving, and nothing outside touched.
    let status = conn.status().await.expect("status");
    assert_eq!(status.pid, pid);
    assert_eq!(env.daemon_pids(), vec![pid]);
    assert_eq!(names(&env.json(["workspace", "list"])), ["app", "default"]);
    w.untouched();
}
