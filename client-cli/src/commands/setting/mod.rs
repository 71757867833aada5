//! `berth setting ...`

pub mod get;
pub mod set;
pub mod unset;

/// A setting in the JSON shape of SPEC §10.
pub fn setting_json(key: &str, value: Option<&str>) -> serde_json::Value {
    serde_json::json!({"key": key, "value": value})
}
