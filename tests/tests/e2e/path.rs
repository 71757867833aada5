//! `berth path PATH [--cwd DIR]` (docs/reference.md, "Qualified paths and file tools" and "The
//! CLI"): every path form, qualified as a tool in that directory would see it, in the
//! `{"qualified", "absolute", "workspace"}` shape.

use berth_tests::TestEnv;
use serde_json::{Value, json};

/// `work` with a root at `proj`; `gp` is a git project nothing assigns; `plain` is no project.
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.json(["workspace", "create", "work"]);
    let proj = env.git_root(env.dir("proj"));
    env.json(["root", "add", "work", proj.to_str().unwrap()]);
    env.git_root(env.dir("gp"));
    env.dir("plain");
    env
}

fn path(env: &TestEnv, p: &str, cwd: &str) -> Value {
    let cwd = env.dir(cwd);
    env.json(["path", p, "--cwd", cwd.to_str().unwrap()])
}

#[test]
fn every_path_form_qualifies_with_the_spec_shape() {
    let env = world();
    let work = env.managed_home("work");
    let abs = |rel: &str| json!(rel.split('/').fold(work.clone(), |p, c| p.join(c)));
    assert_eq!(
        path(&env, "/", "proj"),
        json!({"qualified": "/", "absolute": null, "workspace": null})
    );
    // A workspace's own folder: no trailing slash in the absolute path.
    assert_eq!(
        path(&env, "work", "plain"),
        json!({"qualified": "work/", "absolute": json!(work), "workspace": "work"})
    );
    assert_eq!(
        path(&env, "work/a/b.md", "plain"),
        json!({"qualified": "work/a/b.md", "absolute": abs("a/b.md"), "workspace": "work"})
    );
    // Unqualified in a project a root assigns: that workspace's home.
    assert_eq!(
        path(&env, "notes.md", "proj"),
        json!({"qualified": "work/notes.md", "absolute": abs("notes.md"), "workspace": "work"})
    );
    // `./` reaches the session's own folder, even past a workspace's name.
    assert_eq!(path(&env, "./work/x", "proj")["qualified"], "work/work/x");
    // Without a project: the session's scratch folder, which a CLI call does not have.
    assert_eq!(
        path(&env, "x.md", "plain"),
        json!({"qualified": "./x.md", "absolute": null, "workspace": null})
    );
    // An absolute path inside a home comes back qualified.
    let inside = work.join("z").join("q.md");
    assert_eq!(
        path(&env, inside.to_str().unwrap(), "plain")["qualified"],
        "work/z/q.md"
    );
}

#[test]
fn a_defaulted_project_with_several_workspaces_refuses_unqualified_paths() {
    let env = world();
    let gp = env.dir("gp");
    let _ = env
        .run_berth(["path", "plans/a.md", "--cwd", gp.to_str().unwrap()])
        .failure(1)
        .stderr_has(&[
            "no workspace plans — workspaces: default, work",
            "<workspace>/plans/a.md",
        ]);
    let _ = env
        .run_berth(["path", "./a.md", "--cwd", gp.to_str().unwrap()])
        .failure(1)
        .stderr_has(&["has no folder of its own", "workspaces: default, work"]);
    // A qualified path still works there.
    assert_eq!(path(&env, "work/a.md", "gp")["qualified"], "work/a.md");
}

#[test]
fn escapes_and_outside_paths_are_refused() {
    let env = world();
    // An absolute path outside every home (`/etc/passwd` has no drive on Windows).
    let outside = if cfg!(windows) {
        r"C:\Windows\win.ini"
    } else {
        "/etc/passwd"
    };
    for (p, why) in [
        (outside, "outside every workspace home"),
        ("work/../../x", "leads outside its folder"),
        ("../x", "leads outside its folder"),
    ] {
        let proj = env.dir("proj");
        let _ = env
            .run_berth(["path", p, "--cwd", proj.to_str().unwrap()])
            .failure(1)
            .stderr_has(&[why]);
    }
}
