//! Settings: a few known keys, each validated before it is stored. The keys,
//! defaults and ranges are `berth_proto::settings`, shared with the clients
//! that show them.

use berth_proto::settings;

use crate::error::BerthError;
use crate::ops::device::Device;

impl Device {
    /// A setting's value, `None` when unset.
    pub fn get_setting(&self, key: &str) -> Result<Option<String>, BerthError> {
        check_key(key)?;
        Ok(self.store().get_setting(key)?)
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
            let what = settings::find(key).map_or("", |s| s.allowed);
            return Err(BerthError::invalid(format!(
                "{value:?} is not a valid {key}: expected {what}"
            )));
        }
        // Decided inside the write: a delete of that workspace at the same
        // moment must not leave the setting naming it.
        self.store().write(|w| {
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
        self.store().unset_setting(key)?;
        self.refresh()?;
        Ok(())
    }
}

fn check_key(key: &str) -> Result<(), BerthError> {
    if settings::find(key).is_some() {
        return Ok(());
    }
    Err(BerthError::invalid(format!(
        "unknown setting {key:?}; known settings: {} (`berth setting list` shows each with its default)",
        settings::keys().join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use berth_proto::settings::find;

    /// The defaults the clients show are the ones the daemon applies.
    #[test]
    fn the_shown_defaults_are_the_applied_ones() {
        let default = |k: &str| find(k).and_then(|s| s.default).map(str::to_string);
        let cache = crate::cache::CacheConfig::default();
        assert_eq!(
            default("scratch.keep_hours"),
            Some(berth_core::scratch::DEFAULT_KEEP_HOURS.to_string())
        );
        assert_eq!(
            default("hooks.stop_timeout_secs"),
            Some(crate::ops::hooks::DEFAULT_STOP_TIMEOUT_SECS.to_string())
        );
        assert_eq!(
            default("cache.max_entries"),
            Some(cache.max_entries.to_string())
        );
        assert_eq!(
            default("cache.max_watches"),
            Some(cache.max_watches.to_string())
        );
        assert_eq!(default("workspace.unassigned"), None);
        assert_eq!(default("hooks.stop_command"), None);
    }
}
