//! Settings: a few known keys, each validated before it is stored.

use crate::device::Device;
use crate::error::BerthError;

/// The settings berth knows, with what each accepts.
pub const KNOWN: &[(&str, &str)] = &[
    ("workspace.unassigned", "the name of an existing workspace"),
    ("scratch.keep_hours", "a whole number of hours, 0 or more"),
    ("hooks.stop_command", "a shell command"),
    (
        "hooks.stop_timeout_secs",
        "a whole number of seconds, 1 or more",
    ),
    (
        "cache.max_entries",
        "a whole number of directories, 0 or more (0 turns the lookup cache off); read at daemon start",
    ),
    (
        "cache.max_watches",
        "a whole number of watches, 0 or more (0 re-checks every cached directory on use); read at daemon start",
    ),
];

impl Device {
    /// A setting's value, `None` when unset.
    pub fn get_setting(&self, key: &str) -> Result<Option<String>, BerthError> {
        check_key(key)?;
        Ok(self.store.get_setting(key)?)
    }

    /// Sets a setting after validating its value.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<(), BerthError> {
        check_key(key)?;
        let names_workspace = key == "workspace.unassigned";
        let ok = match key {
            "workspace.unassigned" => true,
            "scratch.keep_hours" => value.parse::<u32>().is_ok(),
            "cache.max_entries" | "cache.max_watches" => value.parse::<usize>().is_ok(),
            "hooks.stop_timeout_secs" => value.parse::<u32>().is_ok_and(|v| v >= 1),
            _ => !value.is_empty(),
        };
        if !ok {
            let what = KNOWN.iter().find(|(k, _)| *k == key).map_or("", |(_, w)| w);
            return Err(BerthError::invalid(format!(
                "{value:?} is not a valid {key}: expected {what}"
            )));
        }
        // Decided inside the write: a delete of that workspace at the same
        // moment must not leave the setting naming it.
        self.store.write(|w| {
            if names_workspace && !w.registry().exists(value) {
                return Err(self.unknown_workspace(value));
            }
            Ok(w.set_setting(key, value)?)
        })?;
        self.refresh()?;
        tracing::info!(key, value, "setting changed");
        Ok(())
    }

    /// Unsets a setting (unsetting an unset one is fine).
    pub fn unset_setting(&self, key: &str) -> Result<(), BerthError> {
        check_key(key)?;
        self.store.unset_setting(key)?;
        self.refresh()?;
        Ok(())
    }
}

fn check_key(key: &str) -> Result<(), BerthError> {
    if KNOWN.iter().any(|(k, _)| *k == key) {
        return Ok(());
    }
    let keys: Vec<&str> = KNOWN.iter().map(|(k, _)| *k).collect();
    Err(BerthError::invalid(format!(
        "unknown setting {key:?}; known settings: {}",
        keys.join(", ")
    )))
}
