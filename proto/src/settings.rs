//! The settings berth knows: each key, its default, and what it accepts.
//! One table for the daemon, which validates and applies them, and for the
//! clients, which show them (`berth setting list`, `setting get`).

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Its key.
    pub key: &'static str,
    /// The value in effect while it is unset (`None`: there is none).
    pub default: Option<&'static str>,
    /// What an unset setting means, in words.
    pub when_unset: &'static str,
    /// What it accepts, in words.
    pub allowed: &'static str,
    /// The smallest whole number it accepts, for numeric settings.
    pub min: Option<u64>,
    /// The largest whole number it accepts, for numeric settings.
    pub max: Option<u64>,
}

/// Every setting, in the order `setting list` shows them.
pub const KNOWN: &[Setting] = &[
    Setting {
        key: "workspace.unassigned",
        default: None,
        when_unset: "agent sessions outside every workspace get the active workspace",
        allowed: "the name of an existing workspace",
        min: None,
        max: None,
    },
    Setting {
        key: "scratch.keep_hours",
        default: Some("24"),
        when_unset: "scratch folders are kept 24 hours after their session ends",
        allowed: "a whole number of hours, 0 or more",
        min: Some(0),
        max: Some(u32::MAX as u64),
    },
    Setting {
        key: "hooks.stop_command",
        default: None,
        when_unset: "no command runs when a session stops",
        allowed: "a shell command",
        min: None,
        max: None,
    },
    Setting {
        key: "hooks.stop_timeout_secs",
        default: Some("30"),
        when_unset: "the stop command may run 30 seconds",
        allowed: "a whole number of seconds, 1 or more",
        min: Some(1),
        max: Some(u32::MAX as u64),
    },
    Setting {
        key: "cache.max_entries",
        default: Some("100000"),
        when_unset: "the lookup cache holds up to 100000 directories",
        allowed: "a whole number of directories, 0 or more (0 turns the lookup cache off); read at daemon start",
        min: Some(0),
        max: None,
    },
    Setting {
        key: "cache.max_watches",
        default: Some("65536"),
        when_unset: "the lookup cache keeps up to 65536 watches",
        allowed: "a whole number of watches, 0 or more (0 re-checks every cached directory on use); read at daemon start",
        min: Some(0),
        max: None,
    },
];

/// The setting named `key`, if berth knows it.
pub fn find(key: &str) -> Option<&'static Setting> {
    KNOWN.iter().find(|s| s.key == key)
}

/// The known keys, for a message that lists them.
pub fn keys() -> Vec<&'static str> {
    KNOWN.iter().map(|s| s.key).collect()
}
