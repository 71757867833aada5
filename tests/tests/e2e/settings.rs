//! `berth setting get/set/unset` (docs/reference.md, "The CLI").

use berth_tests::TestEnv;
use serde_json::json;

const KEY: &str = "workspace.unassigned";

#[test]
fn an_unset_setting_reads_as_null() {
    let env = TestEnv::new();
    let got = env.json(["setting", "get", KEY]);
    assert_eq!((&got["key"], &got["value"]), (&json!(KEY), &json!(null)));
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
    assert_eq!(env.json(["setting", "get", KEY])["value"], "w");
    assert_eq!(
        env.run_berth(["setting", "get", KEY]).success().stdout(),
        "w\n"
    );
    assert_eq!(
        env.json(["setting", "unset", KEY]),
        json!({"key": KEY, "value": null})
    );
    assert_eq!(env.json(["setting", "get", KEY])["value"], json!(null));
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
        let _ = env.run_berth(&args).failure(1).stderr_has(&[
            "unknown setting",
            KEY,
            "\nHint: `berth setting list` shows each setting with its default\n",
        ]);
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

#[test]
fn get_shows_the_default_and_what_the_setting_accepts() {
    let env = TestEnv::new();
    assert_eq!(
        env.json(["setting", "get", "scratch.keep_hours"]),
        json!({
            "key": "scratch.keep_hours",
            "value": null,
            "default": "24",
            "when_unset": "scratch folders are kept 24 hours after their session ends",
            "allowed": "a whole number of hours, 0 or more",
            "range": {"min": 0, "max": 4294967295u64},
        })
    );
    env.json(["setting", "set", "hooks.stop_timeout_secs", "7"]);
    let run = env
        .run_berth(["setting", "get", "hooks.stop_timeout_secs"])
        .success();
    assert_eq!(run.stdout(), "7\n", "stdout stays the bare value");
    assert!(
        run.stderr()
            .contains("default: 30; allowed: a whole number of seconds, 1 or more"),
        "{}",
        run.stderr()
    );
    let unset = env.run_berth(["setting", "get", KEY]).success();
    assert!(
        unset
            .stderr()
            .contains("not set: agent sessions outside every workspace get the active workspace")
            && unset
                .stderr()
                .contains("default: none (unset); allowed: the name of an existing workspace"),
        "{}",
        unset.stderr()
    );
}

#[test]
fn list_shows_every_setting_with_its_value_default_and_range() {
    let env = TestEnv::new();
    env.json(["setting", "set", "scratch.keep_hours", "48"]);
    let doc = env.json(["setting", "list"]);
    let list = doc["settings"].as_array().expect("a settings list");
    let keys: Vec<_> = list.iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "workspace.unassigned",
            "scratch.keep_hours",
            "hooks.stop_command",
            "hooks.stop_timeout_secs",
            "cache.max_entries",
            "cache.max_watches",
            "guard.cross_workspace",
            "ask.elicit",
            "ask.elicit_wait_secs",
        ]
    );
    for s in list {
        assert!(s["allowed"].is_string(), "{s}");
        assert!(s["when_unset"].is_string(), "{s}");
        assert!(
            s.get("default").is_some() && s.get("range").is_some(),
            "{s}"
        );
    }
    assert_eq!(list[1]["value"], "48");
    assert_eq!(list[1]["default"], "24");
    assert_eq!(list[3]["range"], json!({"min": 1, "max": 4294967295u64}));
    assert_eq!(list[4]["range"], json!({"min": 0, "max": null}));
    assert_eq!(list[0]["range"], json!(null));
    assert_eq!(list[6]["default"], "ask");
    assert_eq!(list[6]["choices"], json!(["ask", "deny", "warn", "off"]));
    // Every key the daemon knows is listed: each one `get` accepts.
    for key in keys {
        env.json(["setting", "get", key]);
    }
    let text = env.run_berth(["setting", "list"]).success().stdout();
    assert!(
        text.contains(
            "scratch.keep_hours = 48\n    default: 24; allowed: a whole number of hours, 0 or more\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("hooks.stop_command is not set: no command runs when a session stops\n"),
        "{text}"
    );
}
