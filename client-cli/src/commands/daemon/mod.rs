//! `berth daemon ...`

pub mod start;
pub mod status;
pub mod stop;

use berth_client::paths::EnvCtx;
use berth_client::record::{self, Fallback};
use berth_proto::pb::StatusReply;
use berth_vocab::text::escaped;

/// Why the daemon listens in a folder of its own, when it does (ADR 0042): the running
/// daemon's record says; with none running, what one started now would do, because the
/// derived socket's folder is refused.
pub fn fallback(env: &EnvCtx, running: Option<&StatusReply>) -> Option<Fallback> {
    match running {
        Some(s) => record::read(std::path::Path::new(&s.data_dir))
            .filter(|r| r.pid == s.pid)
            .and_then(|r| r.fallback),
        #[cfg(unix)]
        None => berth_client::client::refused_derived_socket(env).map(|u| Fallback {
            instead_of: u.socket,
            because: u.problem,
        }),
        #[cfg(windows)]
        None => {
            let _ = env;
            None
        }
    }
}

/// The JSON shape of `daemon status` (docs/reference.md, "The CLI").
pub fn status_json(
    s: Option<&StatusReply>,
    socket: &str,
    data_dir: &str,
    fallback: Option<&Fallback>,
) -> serde_json::Value {
    let fallback = fallback.map(|f| {
        serde_json::json!({
            "instead_of": f.instead_of.display().to_string(),
            "because": f.because,
        })
    });
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
            "calls_running": s.calls_running,
            "fallback": fallback,
        }),
        None => serde_json::json!({
            "running": false,
            "pid": null,
            "version": null,
            "socket": socket,
            "data_dir": data_dir,
            "fallback": fallback,
        }),
    }
}

/// `daemon status` as text.
pub fn status_text(s: &StatusReply, fallback: Option<&Fallback>) -> String {
    format!(
        "berthd {} running (pid {})\nsocket: {}\n{}data dir: {}\n",
        escaped(&s.version),
        s.pid,
        escaped(&s.socket),
        fallback.map(|f| fallback_line(f, true)).unwrap_or_default(),
        escaped(&s.data_dir)
    )
}

/// The line under `socket:` that says why the daemon listens there.
pub fn fallback_line(f: &Fallback, running: bool) -> String {
    let who = if running {
        "a folder of its own"
    } else {
        "a folder of its own once started"
    };
    format!(
        "  in {who}, because {} is not used: {}\n",
        escaped(&f.instead_of.display().to_string()),
        escaped(&f.because)
    )
}
