//! Settings: a few known keys, each validated before it is stored. The keys,
//! defaults, ranges and checks are `berth_vocab::settings::Setting`, shared
//! with the clients that show them.

use berth_vocab::settings::Setting;

use crate::error::BerthError;
use crate::ops::device::Device;

impl Device {
    /// A setting's value, `None` when unset.
    pub fn get_setting(&self, key: &str) -> Result<Option<String>, BerthError> {
        let setting = known(key)?;
        Ok(self.store().get_setting(setting.key())?)
    }

    /// Sets a setting after validating its value.
    pub fn set_setting(&self, key: &str, value: &str) -> Result<(), BerthError> {
        let setting = known(key)?;
        setting.check(value).map_err(BerthError::invalid)?;
        let names_workspace = setting == Setting::WorkspaceUnassigned;
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
        let setting = known(key)?;
        self.store().unset_setting(setting.key())?;
        self.refresh()?;
        Ok(())
    }
}

fn known(key: &str) -> Result<Setting, BerthError> {
    Setting::from_key(key).map_err(|e| {
        BerthError::invalid(e).hint("`berth setting list` shows each setting with its default")
    })
}
