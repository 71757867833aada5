//! `berth daemon ...`

pub mod start;
pub mod status;
pub mod stop;

use berth_proto::pb::StatusReply;
use berth_proto::text::escaped;

/// The JSON shape of `daemon status` (docs/reference.md, "The CLI").
pub fn status_json(s: Option<&StatusReply>, socket: &str, data_dir: &str) -> serde_json::Value {
    match s {
        Some(s) => serde_json::json!({
            "running": true,
            "pid": s.pid,
            "version": s.version,
            "socket": s.socket,
            "data_dir": s.data_dir,
            "protocol": s.protocol,
            "cache_entries": s.cache_entries,
            "watches": s.watches,
        }),
        None => serde_json::json!({
            "running": false,
            "pid": null,
            "version": null,
            "socket": socket,
            "data_dir": data_dir,
        }),
    }
}

/// `daemon status` as text.
pub fn status_text(s: &StatusReply) -> String {
    format!(
        "berthd {} running (pid {})\nsocket: {}\ndata dir: {}\n",
        escaped(&s.version),
        s.pid,
        escaped(&s.socket),
        escaped(&s.data_dir)
    )
}
