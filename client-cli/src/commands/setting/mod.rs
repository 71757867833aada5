//! `berth setting ...`

pub mod get;
pub mod list;
pub mod set;
pub mod unset;

use berth_vocab::settings::{Kind, Setting};
use clap::Args;

/// A setting's key.
#[derive(Args, Debug)]
pub struct KeyArg {
    /// The setting, e.g. workspace.unassigned.
    pub key: String,
}

/// A setting in the JSON shape of `setting set` and `unset`.
pub fn setting_json(key: &str, value: Option<&str>) -> serde_json::Value {
    serde_json::json!({"key": key, "value": value})
}

/// A setting with what it means when unset, its default and what it
/// accepts: `setting get` and each entry of `setting list`. Adds to
/// [`setting_json`]'s fields, renaming none.
pub fn described_json(key: &str, value: Option<&str>) -> serde_json::Value {
    let mut doc = setting_json(key, value);
    if let Ok(s) = Setting::from_key(key) {
        let range = match s.kind() {
            Kind::Number { min, max, .. } => serde_json::json!({"min": min, "max": max}),
            Kind::Workspace | Kind::Command | Kind::Choice { .. } => serde_json::Value::Null,
        };
        let mut extra = serde_json::json!({
            "default": s.default_text(),
            "when_unset": s.when_unset(),
            "allowed": s.allowed(),
            "range": range,
        });
        if let (Kind::Choice { choices, .. }, Some(e)) = (s.kind(), extra.as_object_mut()) {
            e.insert("choices".into(), serde_json::json!(choices));
        }
        if let (Some(d), serde_json::Value::Object(e)) = (doc.as_object_mut(), extra) {
            d.extend(e);
        }
    }
    doc
}

/// The line under a setting that says its default and what it accepts.
pub fn described_text(key: &str) -> String {
    match Setting::from_key(key) {
        Ok(s) => format!(
            "default: {}; allowed: {}",
            s.default_text().as_deref().unwrap_or("none (unset)"),
            s.allowed()
        ),
        Err(_) => String::new(),
    }
}
