//! Project files (docs/reference.md, "Roots, the walk and project files"): a bad file is ignored
//! with a note naming it, and a file that travelled with a repository only proposes.

#[cfg(unix)]
use std::ffi::CString;
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use berth_tests::TestEnv;
use rstest::rstest;
use serde_json::json;

/// How to put a bad project file in place.
#[derive(Debug, Clone, Copy)]
enum Bad {
    Bytes(&'static [u8]),
    Huge,
    /// Unix only, as are /dev/zero and links made without a privilege.
    #[cfg(unix)]
    Fifo,
    Directory,
    #[cfg(unix)]
    SymlinkToDevZero,
}

fn plant(file: &Path, bad: Bad) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    match bad {
        Bad::Bytes(b) => std::fs::write(file, b).unwrap(),
        Bad::Huge => {
            // Valid JSON naming a real workspace, padded to 200 KB.
            let mut s = String::from(r#"{"workspace": "w", "pad": ""#);
            s.push_str(&" ".repeat(200 * 1024));
            s.push_str("\"}");
            std::fs::write(file, s).unwrap();
        }
        #[cfg(unix)]
        Bad::Fifo => {
            let c = CString::new(file.as_os_str().as_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
        }
        Bad::Directory => std::fs::create_dir(file).unwrap(),
        #[cfg(unix)]
        Bad::SymlinkToDevZero => std::os::unix::fs::symlink("/dev/zero", file).unwrap(),
    }
}

#[rstest]
#[case::invalid_json(Bad::Bytes(br#"{"workspace": "w""#), "not valid JSON")]
#[case::not_utf8(Bad::Bytes(b"{\"workspace\": \"\xff\"}"), "UTF-8")]
#[case::empty(Bad::Bytes(b""), "not valid JSON")]
#[case::a_number_for_the_name(Bad::Bytes(br#"{"workspace": 7}"#), "a number")]
#[case::an_array(Bad::Bytes(br#"["w"]"#), "an array")]
#[case::no_workspace_key(Bad::Bytes(br#"{"name": "w"}"#), "no \"workspace\" key")]
#[case::an_invalid_name(Bad::Bytes(br#"{"workspace": "W W"}"#), "invalid workspace name")]
#[case::a_200_kb_file(Bad::Huge, "larger than 64 KiB")]
#[cfg_attr(unix, case::a_fifo(Bad::Fifo, "not a regular file"))]
#[case::a_directory(Bad::Directory, "not a regular file")]
#[cfg_attr(
    unix,
    case::a_symlink_to_dev_zero(Bad::SymlinkToDevZero, "not a regular file")
)]
fn a_bad_project_file_is_ignored_with_a_note_naming_it(#[case] bad: Bad, #[case] why: &str) {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    let repo = env.git_root(env.dir("proj/repo"));
    let file = repo.join(".berth").join("workspace.json");
    plant(&file, bad);
    let sub = env.dir("proj/repo/src");
    for args in [&["resolve"][..], &["resolve", "--agent"][..]] {
        let run = env.run_in(&sub, [&["--json"][..], args].concat()).success();
        assert!(
            run.elapsed < Duration::from_secs(10),
            "resolving took {:?}",
            run.elapsed
        );
        let r = run.json();
        assert_eq!(
            (r["workspace"].as_str(), r["reason"].as_str()),
            (Some("default"), Some("active")),
            "{r:#}"
        );
        assert_eq!(r["project"], json!(repo), "{r:#}");
        assert_eq!(r["project_file"], json!(null), "{r:#}");
        assert_eq!(r["proposal"], json!(null), "{r:#}");
        let notes: Vec<&str> = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(notes.len(), 1, "{r:#}");
        assert!(
            notes[0].contains(file.to_str().unwrap()) && notes[0].contains(why),
            "the note must name {} and say {why:?}: {:?}",
            file.display(),
            notes[0]
        );
    }
    // The text output carries the note too.
    let text = env.run_in(&sub, ["resolve"]).success().stdout();
    assert!(
        text.contains(&format!("note: ignored {}", file.display())),
        "{text}"
    );
    // The daemon is still healthy afterwards.
    assert_eq!(env.daemon_pids().len(), 1);
}

#[test]
fn a_bad_nearer_file_does_not_hide_an_approved_farther_one() {
    let env = TestEnv::new();
    let mono = env.dir("proj/mono");
    env.json_in(&mono, ["workspace", "use", "w"]);
    let pkg = env.git_root(env.dir("proj/mono/pkg"));
    let bad = env.project_file(&pkg, "{oops");
    let r = env.json_in(&pkg, ["resolve"]);
    assert_eq!(
        (r["workspace"].as_str(), r["reason"].as_str()),
        (Some("w"), Some("project-file")),
        "{r:#}"
    );
    assert_eq!(
        r["project_file"],
        json!(mono.join(".berth").join("workspace.json"))
    );
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains(bad.to_str().unwrap()),
        "{r:#}"
    );
}

/// `proj/orig` approved for `w`; `proj/clone` a fresh clone of it (its
/// `.git` and its committed project file), elsewhere on the disk.
fn cloned() -> (TestEnv, PathBuf, PathBuf) {
    let env = TestEnv::new();
    let orig = env.git_root(env.dir("proj/orig"));
    env.json_in(&orig, ["workspace", "use", "w"]);
    let clone = env.git_root(env.dir("proj/clone"));
    let file = env.project_file(
        &clone,
        std::fs::read(orig.join(".berth").join("workspace.json")).unwrap(),
    );
    (env, clone, file)
}

#[test]
fn a_cloned_repositorys_file_naming_an_existing_workspace_only_proposes() {
    let (env, clone, file) = cloned();
    let sub = env.dir("proj/clone/src");
    for agent in [false, true] {
        let mut cmd = env.berth_in(&sub, ["--json", "resolve"]);
        if agent {
            cmd.arg("--agent");
        }
        let r = env.run(cmd).success().json();
        assert_eq!(r["workspace"], "default", "{r:#}");
        assert_eq!(r["reason"], "active", "{r:#}");
        assert_ne!(r["reason"], "project-file");
        assert_eq!(r["proposal"], "w", "{r:#}");
        assert_eq!(r["project"], json!(clone));
        assert_eq!(r["project_file"], json!(file));
        // The notes' text, not their JSON (where a Windows path's `\` is escaped).
        let notes: Vec<&str> = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .collect();
        let notes = notes.join("\n");
        assert!(
            notes.contains(file.to_str().unwrap()) && notes.contains("berth workspace use w"),
            "the note must name the file and say how to approve it: {r:#}"
        );
    }
    // Claims do not honour it either: the clone is nobody's.
    let c = env.json([
        "claim",
        "--cwd",
        sub.to_str().unwrap(),
        "--workspace",
        "default",
    ]);
    assert_eq!(c["allowed"], true, "{c}");
    // Nothing was written or approved by resolving.
    assert_eq!(
        env.json(["workspace", "show", "w"])["roots"],
        json!([env.dir("proj/orig")])
    );
}

#[test]
fn workspace_use_confirms_a_cloned_proposal() {
    let (env, clone, file) = cloned();
    let before = std::fs::read(&file).unwrap();
    let out = env.json_in(&clone, ["workspace", "use", "w"]);
    assert_eq!(out["created"], false);
    assert_eq!(out["root_added"], true);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file already said w"
    );
    let r = env.json_in(env.dir("proj/clone/src"), ["resolve"]);
    assert_eq!(
        r,
        json!({
            "workspace": "w",
            "reason": "project-file",
            "directory": env.dir("proj/clone/src"),
            "project": clone,
            "project_file": file,
            "proposal": null,
            "notes": [],
        })
    );
}

#[test]
fn a_proposal_inside_another_workspaces_root_leaves_the_root_in_charge() {
    let (env, _clone, file) = cloned();
    env.json(["workspace", "create", "v"]);
    let ws = env.dir("proj/work");
    env.json(["root", "add", "v", ws.to_str().unwrap()]);
    let inner = env.git_root(env.dir("proj/work/clone2"));
    env.project_file(&inner, std::fs::read(&file).unwrap());
    let r = env.json_in(&inner, ["resolve"]);
    assert_eq!(
        (
            r["workspace"].as_str(),
            r["reason"].as_str(),
            r["proposal"].as_str()
        ),
        (Some("v"), Some("root"), Some("w")),
        "{r:#}"
    );
}

#[test]
fn a_file_naming_an_unknown_workspace_proposes_it() {
    let env = TestEnv::new();
    let repo = env.git_root(env.dir("proj/repo"));
    let file = env.project_file(&repo, r#"{"workspace": "newcomer"}"#);
    let r = env.json_in(&repo, ["resolve"]);
    assert_eq!(r["proposal"], "newcomer", "{r:#}");
    assert_eq!(r["reason"], "active");
    assert_eq!(r["project_file"], json!(file));
    assert!(r["notes"].to_string().contains("does not exist"), "{r:#}");
}

/// Two workspaces, `alpha` and `gamma`, both with a root at `<root>/top/proj` (so whichever
/// one its project file names is approved), and that folder.
fn two_approvable() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let proj = env.dir("top/proj");
    for w in ["alpha", "gamma"] {
        env.json(["workspace", "create", w]);
        env.json(["root", "add", w, proj.to_str().unwrap(), "--allow-overlap"]);
    }
    (env, proj)
}

/// The workspace each of `resolve`, `explain`, `prompt` and a new agent session's
/// `device_context` answers in `dir`.
async fn answers_in(env: &TestEnv, dir: &Path) -> [String; 4] {
    let resolved = env.json_in(dir, ["resolve"]);
    let explained = env.json_in(dir, ["explain"]);
    let prompt = env.run(env.berth_in(dir, ["prompt"])).success().stdout();
    // A session opened as berth-mcp opens one, without a client session id: its
    // device_context is answered on the daemon's worker, from memory (ADR 0034).
    let mut conn = env.connect().await;
    let open = berth_proto::pb::OpenSessionRequest {
        caller: Some(berth_proto::pb::Caller {
            cwd: dir.display().to_string(),
            ..Default::default()
        }),
        client_name: "e2e".into(),
        ..Default::default()
    };
    let (first, _events) = berth_tests::open_session(&mut conn, open).await;
    let call = berth_proto::pb::CallToolRequest {
        session_id: first.session_id,
        tool: "device_context".into(),
        arguments_json: "{}".into(),
    };
    let reply = conn
        .call(|mut c| {
            let r = call.clone();
            async move { c.call_tool(r).await }
        })
        .await
        .expect("device_context answers");
    assert!(!reply.is_error, "{}", reply.text);
    let context: serde_json::Value = serde_json::from_str(&reply.structured_json).unwrap();
    let name = |v: &serde_json::Value| v["workspace"].as_str().unwrap_or_default().to_string();
    [
        name(&resolved),
        name(&explained),
        prompt.trim().to_string(),
        name(&context),
    ]
}

/// The reported case: `top/proj/.berth/workspace.json` is a hard link to `other/pf.json`, and
/// `other/pf.json` is rewritten in place. No watched folder holds that name, yet a warm daemon
/// answers the new workspace at once, everywhere (ADR 0038).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_rewritten_through_a_hard_link_is_answered_new_at_once() {
    let (env, proj) = two_approvable();
    let sub = env.dir("top/proj/src");
    let pf = env.dir("other").join("pf.json");
    std::fs::write(&pf, r#"{"workspace": "alpha"}"#).unwrap();
    std::fs::create_dir(proj.join(".berth")).unwrap();
    std::fs::hard_link(&pf, proj.join(".berth").join("workspace.json")).unwrap();
    // Twice, so the second round is what the cache (and its memory) answers.
    for _ in 0..2 {
        for dir in [&proj, &sub] {
            assert_eq!(answers_in(&env, dir).await, ["alpha"; 4], "in {dir:?}");
        }
    }
    // In place, the same size: the same file, so the project file's name sees new content.
    std::fs::write(&pf, r#"{"workspace": "gamma"}"#).unwrap();
    for dir in [&proj, &sub] {
        assert_eq!(answers_in(&env, dir).await, ["gamma"; 4], "in {dir:?}");
    }
}

/// A project file with one name is answered from memory; a hard link made later from a folder
/// nothing watches, and a write through it, still reach the daemon: inotify watches the file
/// itself, not only its folder (ADR 0038). macOS's and Windows's watchers report names, not
/// files, so there the folder's watch cannot see either.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hard_link_made_later_and_a_write_through_it_are_seen() {
    let (env, proj) = two_approvable();
    let file = env.project_file(&proj, r#"{"workspace": "alpha"}"#);
    for _ in 0..2 {
        assert_eq!(answers_in(&env, &proj).await, ["alpha"; 4]);
    }
    let x = env.dir("elsewhere").join("x");
    std::fs::hard_link(&file, &x).unwrap();
    std::fs::write(&x, r#"{"workspace": "gamma"}"#).unwrap();
    // The file's own watch reports both; its event is on its way.
    let seen = berth_tests::wait_until(Duration::from_secs(10), || {
        let r = env.json_in(&proj, ["resolve"]);
        if r["workspace"] == "gamma" {
            Ok(())
        } else {
            Err(r)
        }
    });
    assert!(seen.is_ok(), "still answered {:?}", seen.unwrap_err());
    assert_eq!(answers_in(&env, &proj).await, ["gamma"; 4]);
}
