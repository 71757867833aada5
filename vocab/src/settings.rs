//! The settings berth knows: each key, its default, what it accepts, and how
//! its value is read. One table for the daemon, which validates and applies
//! them, and for the clients, which show them (`berth setting list`,
//! `setting get`), so a key, a default or a range exists once.

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// `workspace.unassigned`: the workspace of agent sessions outside every workspace.
    WorkspaceUnassigned,
    /// `scratch.keep_hours`: how long a scratch folder outlives its session.
    ScratchKeepHours,
    /// `hooks.stop_command`: a command run when a session stops.
    HooksStopCommand,
    /// `hooks.stop_timeout_secs`: how long that command may run.
    HooksStopTimeoutSecs,
    /// `cache.max_entries`: how many directories the lookup cache holds.
    CacheMaxEntries,
    /// `cache.max_watches`: how many watches the lookup cache keeps.
    CacheMaxWatches,
    /// `guard.cross_workspace`: what the pre-tool hook does with a write into another
    /// workspace's folders.
    GuardCrossWorkspace,
    /// `ask.elicit`: whether a session's question is put to the user in the client's own
    /// form (MCP elicitation) where the client can show one.
    AskElicit,
    /// `ask.elicit_wait_secs`: how long that form waits for the person.
    AskElicitWaitSecs,
}

/// What a setting's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The name of a workspace (which the daemon checks exists).
    Workspace,
    /// A shell command, not empty.
    Command,
    /// One of a few words.
    Choice {
        /// The value while it is unset.
        default: &'static str,
        /// Every word it accepts.
        choices: &'static [&'static str],
    },
    /// A whole number from `min` to `max` (no bound above when `None`).
    Number {
        /// The value while it is unset.
        default: u64,
        /// The smallest it accepts.
        min: u64,
        /// The largest it accepts.
        max: Option<u64>,
    },
}

impl Setting {
    /// Every setting, in the order `setting list` shows them.
    pub const ALL: [Setting; 9] = [
        Setting::WorkspaceUnassigned,
        Setting::ScratchKeepHours,
        Setting::HooksStopCommand,
        Setting::HooksStopTimeoutSecs,
        Setting::CacheMaxEntries,
        Setting::CacheMaxWatches,
        Setting::GuardCrossWorkspace,
        Setting::AskElicit,
        Setting::AskElicitWaitSecs,
    ];

    /// Its key, as stored and typed.
    pub fn key(self) -> &'static str {
        match self {
            Setting::WorkspaceUnassigned => "workspace.unassigned",
            Setting::ScratchKeepHours => "scratch.keep_hours",
            Setting::HooksStopCommand => "hooks.stop_command",
            Setting::HooksStopTimeoutSecs => "hooks.stop_timeout_secs",
            Setting::CacheMaxEntries => "cache.max_entries",
            Setting::CacheMaxWatches => "cache.max_watches",
            Setting::GuardCrossWorkspace => "guard.cross_workspace",
            Setting::AskElicit => "ask.elicit",
            Setting::AskElicitWaitSecs => "ask.elicit_wait_secs",
        }
    }

    /// The setting `key` names; an unknown key is an error that lists the
    /// known ones (`berth setting list` explains each).
    pub fn from_key(key: &str) -> Result<Setting, String> {
        Setting::ALL
            .into_iter()
            .find(|s| s.key() == key)
            .ok_or_else(|| {
                let keys: Vec<&str> = Setting::ALL.iter().map(|s| s.key()).collect();
                format!(
                    "unknown setting {key:?}; known settings: {}",
                    keys.join(", ")
                )
            })
    }

    /// What its value is.
    pub fn kind(self) -> Kind {
        let hours_or_secs = Some(u64::from(u32::MAX));
        match self {
            Setting::WorkspaceUnassigned => Kind::Workspace,
            Setting::HooksStopCommand => Kind::Command,
            Setting::ScratchKeepHours => Kind::Number {
                default: 24,
                min: 0,
                max: hours_or_secs,
            },
            Setting::HooksStopTimeoutSecs => Kind::Number {
                default: 30,
                min: 1,
                max: hours_or_secs,
            },
            Setting::CacheMaxEntries => Kind::Number {
                default: 100_000,
                min: 0,
                max: None,
            },
            Setting::CacheMaxWatches => Kind::Number {
                default: 65_536,
                min: 0,
                max: None,
            },
            Setting::GuardCrossWorkspace => Kind::Choice {
                default: "ask",
                choices: &["ask", "deny", "warn", "off"],
            },
            Setting::AskElicit => Kind::Choice {
                default: "on",
                choices: &["on", "off"],
            },
            Setting::AskElicitWaitSecs => Kind::Number {
                default: 300,
                min: 1,
                max: Some(3600),
            },
        }
    }

    /// The value in effect while it is unset, as text (`None`: there is none).
    pub fn default_text(self) -> Option<String> {
        match self.kind() {
            Kind::Number { default, .. } => Some(default.to_string()),
            Kind::Choice { default, .. } => Some(default.to_string()),
            Kind::Workspace | Kind::Command => None,
        }
    }

    /// What an unset setting means, in words.
    pub fn when_unset(self) -> String {
        let default = match self.kind() {
            Kind::Number { default, .. } => default,
            Kind::Workspace | Kind::Command | Kind::Choice { .. } => 0,
        };
        match self {
            Setting::WorkspaceUnassigned => {
                "agent sessions outside every workspace get the active workspace".to_string()
            }
            Setting::ScratchKeepHours => {
                format!("scratch folders are kept {default} hours after their session ends")
            }
            Setting::HooksStopCommand => "no command runs when a session stops".to_string(),
            Setting::HooksStopTimeoutSecs => format!("the stop command may run {default} seconds"),
            Setting::CacheMaxEntries => {
                format!("the lookup cache holds up to {default} directories")
            }
            Setting::CacheMaxWatches => format!("the lookup cache keeps up to {default} watches"),
            Setting::GuardCrossWorkspace => {
                "a write by an agent's own tools into another workspace's folders is put to the person where the client can ask, and refused where it cannot".to_string()
            }
            Setting::AskElicit => {
                "a session's question about its project's workspace is put to the user in the client's own form where the client can show one".to_string()
            }
            Setting::AskElicitWaitSecs => {
                format!("the form waits {default} seconds for the person, then the notice is given instead")
            }
        }
    }

    /// What it accepts, in words.
    pub fn allowed(self) -> &'static str {
        match self {
            Setting::WorkspaceUnassigned => "the name of an existing workspace",
            Setting::ScratchKeepHours => "a whole number of hours, 0 or more",
            Setting::HooksStopCommand => "a shell command",
            Setting::HooksStopTimeoutSecs => "a whole number of seconds, 1 or more",
            Setting::CacheMaxEntries => {
                "a whole number of directories, 0 or more (0 turns the lookup cache off); read at daemon start"
            }
            Setting::CacheMaxWatches => {
                "a whole number of watches, 0 or more (0 re-checks every cached directory on use); read at daemon start"
            }
            Setting::GuardCrossWorkspace => {
                "ask (put it to the person where the client can, refuse where it cannot), deny (always refuse), warn (allow, and tell the model) or off"
            }
            Setting::AskElicit => {
                "on (ask in the client's form where it can show one) or off (only the notice for the model)"
            }
            Setting::AskElicitWaitSecs => "a whole number of seconds, 1 to 3600",
        }
    }

    /// Refuses a value the setting does not accept, saying what it accepts.
    /// (Whether a workspace exists is the daemon's to decide, inside the write.)
    pub fn check(self, value: &str) -> Result<(), String> {
        let ok = match self.kind() {
            Kind::Workspace => true,
            Kind::Command => !value.is_empty(),
            Kind::Choice { choices, .. } => choices.contains(&value),
            Kind::Number { min, max, .. } => value
                .parse::<u64>()
                .is_ok_and(|n| n >= min && max.is_none_or(|max| n <= max)),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{value:?} is not a valid {}: expected {}",
                self.key(),
                self.allowed()
            ))
        }
    }

    /// A choice setting's value in effect: `stored` when it is one of its words, else its
    /// default. "" for a setting that is no choice.
    pub fn choice(self, stored: Option<&str>) -> &'static str {
        let Kind::Choice { default, choices } = self.kind() else {
            return "";
        };
        stored
            .and_then(|v| choices.iter().find(|c| **c == v))
            .copied()
            .unwrap_or(default)
    }

    /// A number setting's value in effect: `stored` when it is one the
    /// setting accepts, else its default. 0 for a setting that is no number.
    pub fn number(self, stored: Option<&str>) -> u64 {
        let Kind::Number { default, .. } = self.kind() else {
            return 0;
        };
        stored
            .filter(|v| self.check(v).is_ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_reads_back_as_its_setting_and_an_unknown_one_lists_them() {
        for s in Setting::ALL {
            assert_eq!(Setting::from_key(s.key()), Ok(s));
        }
        let e = Setting::from_key("scratch.keep").unwrap_err();
        assert!(
            e.starts_with("unknown setting \"scratch.keep\"; known settings: workspace.unassigned, scratch.keep_hours, "),
            "{e}"
        );
    }

    #[test]
    fn values_are_checked_against_the_kind() {
        let keep = Setting::ScratchKeepHours;
        assert_eq!(keep.check("0"), Ok(()));
        assert_eq!(keep.check("4294967295"), Ok(()));
        assert_eq!(
            keep.check("4294967296"),
            Err("\"4294967296\" is not a valid scratch.keep_hours: expected a whole number of hours, 0 or more".into())
        );
        assert!(keep.check("-1").is_err());
        assert!(keep.check("").is_err());
        assert!(Setting::HooksStopTimeoutSecs.check("0").is_err());
        assert_eq!(Setting::HooksStopTimeoutSecs.check("1"), Ok(()));
        assert_eq!(
            Setting::CacheMaxEntries.check("18446744073709551615"),
            Ok(())
        );
        assert!(Setting::HooksStopCommand.check("").is_err());
        assert_eq!(Setting::HooksStopCommand.check("make -s"), Ok(()));
        assert_eq!(Setting::WorkspaceUnassigned.check("notes"), Ok(()));
        let guard = Setting::GuardCrossWorkspace;
        for word in ["ask", "deny", "warn", "off"] {
            assert_eq!(guard.check(word), Ok(()));
        }
        assert_eq!(
            guard.check("Ask"),
            Err("\"Ask\" is not a valid guard.cross_workspace: expected ask (put it to the person where the client can, refuse where it cannot), deny (always refuse), warn (allow, and tell the model) or off".into())
        );
    }

    #[test]
    fn a_choice_in_effect_is_the_stored_word_when_valid_else_the_default() {
        let guard = Setting::GuardCrossWorkspace;
        assert_eq!(guard.choice(None), "ask");
        assert_eq!(guard.choice(Some("warn")), "warn");
        assert_eq!(guard.choice(Some("never")), "ask");
        assert_eq!(guard.default_text().as_deref(), Some("ask"));
        assert_eq!(Setting::ScratchKeepHours.choice(Some("ask")), "");
    }

    #[test]
    fn a_number_in_effect_is_the_stored_one_when_valid_else_the_default() {
        let keep = Setting::ScratchKeepHours;
        assert_eq!(keep.number(None), 24);
        assert_eq!(keep.number(Some("48")), 48);
        assert_eq!(keep.number(Some("nonsense")), 24);
        assert_eq!(Setting::HooksStopTimeoutSecs.number(Some("0")), 30);
        assert_eq!(Setting::HooksStopCommand.number(Some("5")), 0);
        assert_eq!(keep.default_text().as_deref(), Some("24"));
        assert_eq!(Setting::HooksStopCommand.default_text(), None);
    }
}
