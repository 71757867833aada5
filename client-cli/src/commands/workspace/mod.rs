//! `berth workspace ...`

pub mod create;
pub mod delete;
pub mod list;
pub mod show;
pub mod switch;
pub mod use_;

use berth_proto::pb;
use clap::Args;

/// A workspace name.
#[derive(Args, Debug)]
pub struct NameArg {
    /// The workspace.
    pub name: String,
}

/// One workspace in the JSON shape of docs/reference.md, "The CLI".
pub fn info_json(w: &pb::WorkspaceInfo) -> serde_json::Value {
    let mut v = serde_json::json!({
        "name": w.name,
        "active": w.active,
        "home": w.home,
        "home_mode": w.home_mode,
        "roots": w.roots,
    });
    // Present only when there is something to say, so a sound workspace keeps its shape.
    if !w.error.is_empty() {
        v["error"] = w.error.clone().into();
    }
    if !w.notes.is_empty() {
        v["notes"] = w.notes.clone().into();
    }
    v
}

/// One workspace as text.
pub fn info_text(w: &pb::WorkspaceInfo) -> String {
    use berth_vocab::text::escaped;
    let mut s = format!(
        "{}{}\n  home: {} ({})\n",
        crate::output::bold(&escaped(&w.name)),
        if w.active { " (active)" } else { "" },
        escaped(&w.home),
        escaped(&w.home_mode)
    );
    for r in &w.roots {
        s.push_str(&format!("  root: {}\n", escaped(r)));
    }
    if !w.error.is_empty() {
        s.push_str(&format!("  error: {}\n", w.error));
    }
    for n in &w.notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    s
}
