//! `berth setting get/set/unset` (SPEC §10).

use berth_tests::TestEnv;
use serde_json::json;

const KEY: &str = "workspace.unassigned";

#[test]
fn an_unset_setting_reads_as_null() {
    let env = TestEnv::new();
    assert_eq!(
        env.json(["setting", "get", KEY]),
        json!({"key": KEY, "value": null})
    );
    let text = env.run_berth(["setting", "get", KEY]).success();
    assert!(text.stdout().is_empty(), "{}", text.stdout());
    assert!(text.stderr().contains("not set"), "{}", text.stderr());
}

#[test]
fn set_get_and_unset_round_trip() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    assert_eq!(
        env.json(["setting", "set", KEY, "w"]),
        json!({"key": KEY, "value": "w"})
    );
    assert_eq!(
        env.json(["setting", "get", KEY]),
        json!({"key": KEY, "value": "w"})
    );
    assert_eq!(
        env.run_berth(["setting", "get", KEY]).success().stdout(),
        "w\n"
    );
    assert_eq!(
        env.json(["setting", "unset", KEY]),
        json!({"key": KEY, "value": null})
    );
    assert_eq!(
        env.json(["setting", "get", KEY]),
        json!({"key": KEY, "value": null})
    );
    // Unsetting an unset setting is fine.
    env.json(["setting", "unset", KEY]);
}

#[test]
fn workspace_unassigned_must_name_an_existing_workspace() {
    let env = TestEnv::new();
    env.json(["workspace", "create", "w"]);
    env.json(["setting", "set", KEY, "w"]);
    let _ = env
        .run_berth(["setting", "set", KEY, "nope"])
        .failure(1)
        .stderr_has(&["no workspace nope — workspaces: default, w"]);
    assert_eq!(
        env.json(["setting", "get", KEY])["value"],
        "w",
        "a refused set changed the value"
    );
}

#[test]
fn an_unknown_key_is_refused_listing_the_known_ones() {
    let env = TestEnv::new();
    for args in [
        vec!["setting", "get", "no.such"],
        vec!["setting", "set", "no.such", "1"],
        vec!["setting", "unset", "no.such"],
    ] {
        let _ = env
            .run_berth(&args)
            .failure(1)
            .stderr_has(&["unknown setting", KEY]);
    }
}

#[test]
fn numeric_settings_are_validated() {
    let env = TestEnv::new();
    env.json(["setting", "set", "scratch.keep_hours", "0"]);
    let _ = env
        .run_berth(["setting", "set", "--", "scratch.keep_hours", "-1"])
        .failure(1)
        .stderr_has(&["scratch.keep_hours"]);
    let _ = env
        .run_berth(["setting", "set", "scratch.keep_hours", "many"])
        .failure(1);
    let _ = env
        .run_berth(["setting", "set", "hooks.stop_timeout_secs", "0"])
        .failure(1);
    assert_eq!(
        env.json(["setting", "get", "scratch.keep_hours"])["value"],
        "0"
    );
}
