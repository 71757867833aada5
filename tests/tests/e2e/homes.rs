//! Local homes at `workspace create --home` (docs/reference.md, "Workspaces and homes"): accepted
//! only where nothing can go wrong, refused with what to do otherwise.

use berth_tests::TestEnv;
#[cfg(unix)]
use rstest::rstest;

fn refused(env: &TestEnv, home: &str, needle: &str) {
    let _ = env
        .run_berth(["workspace", "create", "loc", "--home", home])
        .failure(1)
        .stderr_has(&[needle]);
    let list = env.json(["workspace", "list"]);
    assert_eq!(
        berth_tests::names(&list),
        ["default"],
        "a refused home created the workspace"
    );
}

// The system folders berth refuses are Unix's.
#[cfg(unix)]
#[rstest]
#[case::the_filesystem_root("/")]
#[case::etc("/etc")]
#[case::below_usr("/usr/lib")]
#[case::var("/var")]
#[case::proc("/proc")]
#[case::root_s_home("/root")]
fn system_folders_are_refused(#[case] home: &str) {
    let env = TestEnv::new();
    refused(&env, home, home);
}

#[test]
fn a_relative_path_is_refused() {
    let env = TestEnv::new();
    env.dir("proj/rel");
    let _ = env
        .run_in(
            env.dir("proj"),
            ["workspace", "create", "loc", "--home", "rel"],
        )
        .failure(1);
    assert_eq!(
        berth_tests::names(&env.json(["workspace", "list"])),
        ["default"]
    );
}

#[test]
fn a_path_with_dot_dot_is_refused() {
    let env = TestEnv::new();
    env.dir("proj/a");
    let p = format!("{}/proj/a/../a", env.root().display());
    refused(&env, &p, "..");
}

#[test]
fn a_missing_folder_is_refused_saying_to_create_it() {
    let env = TestEnv::new();
    let p = env.root().join("proj").join("missing");
    refused(&env, p.to_str().unwrap(), "mkdir");
}

#[test]
fn a_file_is_refused() {
    let env = TestEnv::new();
    let f = env.dir("proj").join("file");
    std::fs::write(&f, "x").unwrap();
    refused(&env, f.to_str().unwrap(), "not a folder");
}

#[test]
fn the_home_and_its_ancestors_are_refused() {
    let env = TestEnv::new();
    refused(&env, env.home().to_str().unwrap(), "home");
    refused(&env, env.root().to_str().unwrap(), "home");
}

#[test]
fn berths_data_dir_and_anything_overlapping_it_are_refused() {
    let env = TestEnv::new();
    let data = env.data_dir();
    refused(&env, data.to_str().unwrap(), "data");
    let inside = env.managed_home("default");
    std::fs::create_dir_all(&inside).unwrap();
    refused(&env, inside.to_str().unwrap(), "data");
}

// A Unix system folder, through a symbolic link.
#[cfg(unix)]
#[test]
fn a_symlink_into_a_system_folder_is_judged_by_its_target() {
    let env = TestEnv::new();
    let link = env.dir("proj").join("sneaky");
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    refused(&env, link.to_str().unwrap(), "/etc");
}

#[test]
fn a_folder_inside_the_home_is_accepted() {
    let env = TestEnv::new();
    let h = env.dir("home/notes");
    let w = env.json(["workspace", "create", "loc", "--home", h.to_str().unwrap()]);
    assert_eq!(w["home"], serde_json::json!(h));
    assert_eq!(w["home_mode"], "local");
}

/// Two workspaces with one folder as home would mix their files; the second is refused however
/// the folder is spelled (a trailing slash, a symlink), and so is a folder inside another's home
/// (homes never nest).
#[test]
fn a_folder_that_is_already_a_home_is_refused_for_a_second_workspace() {
    let env = TestEnv::new();
    let h = env.dir("home/notes");
    env.json([
        "workspace",
        "create",
        "first",
        "--home",
        h.to_str().unwrap(),
    ]);
    let trailing = format!("{}/", h.display());
    // Creating a symbolic link takes a privilege on Windows.
    #[cfg(unix)]
    let spellings = {
        let link = env.home().join("notes-link");
        std::os::unix::fs::symlink(&h, &link).unwrap();
        [trailing, link.display().to_string()]
    };
    #[cfg(windows)]
    let spellings = [trailing];
    for spelled in spellings {
        let _ = env
            .run_berth(["workspace", "create", "second", "--home", &spelled])
            .failure(1)
            .stderr_has(&["already the home of workspace \"first\""]);
    }
    assert_eq!(
        berth_tests::names(&env.json(["workspace", "list"])),
        ["default", "first"]
    );
    let inner = env.dir("home/notes/inner");
    let _ = env
        .run_berth([
            "workspace",
            "create",
            "inner",
            "--home",
            inner.to_str().unwrap(),
        ])
        .failure(1)
        .stderr_has(&["lies inside the home of workspace \"first\""]);
}
