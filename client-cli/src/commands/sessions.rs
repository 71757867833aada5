//! `berth sessions [--all]`: the agent sessions the daemon knows. Live ones
//! by default; `--all` adds those that ended within the grace period their
//! scratch folders are kept for (the `scratch.keep_hours` setting).
//!
//! `--json`: `{"keep_hours", "sessions": [{"id", "state", "connected",
//! "client", "client_version", "client_session_id", "pid", "directory",
//! "workspace", "reason", "project", "started_at", "pinned_at", "ended_at",
//! "scratch"}]}`, times in RFC 3339 (UTC), absent values `null`.

use berth_proto::pb;
use berth_vocab::text::escaped;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError, nullable};

/// Arguments of `berth sessions`.
#[derive(Args, Debug)]
pub struct SessionsArgs {
    /// Also list the sessions that ended within the grace period
    /// (the scratch.keep_hours setting).
    #[arg(long)]
    pub all: bool,
}

/// Runs `berth sessions`.
pub async fn cmd_sessions(ctx: &mut Ctx, args: SessionsArgs) -> Result<(), CliError> {
    let req = pb::ListSessionsRequest { all: args.all };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.list_sessions(r).await })
        .await?;
    if ctx.json {
        let list: Vec<_> = reply.sessions.iter().map(session_json).collect();
        return output::json(&serde_json::json!({
            "keep_hours": reply.keep_hours,
            "sessions": list,
        }));
    }
    if reply.sessions.is_empty() {
        return output::text(&if args.all {
            format!(
                "no sessions live or ended in the last {} h\n",
                reply.keep_hours
            )
        } else {
            "no live sessions (berth sessions --all shows those that ended)\n".to_string()
        });
    }
    let now = now_secs();
    let text: Vec<String> = reply
        .sessions
        .iter()
        .map(|s| session_text(s, now))
        .collect();
    output::text(&text.join("\n"))
}

fn state(s: &pb::SessionInfo) -> &'static str {
    if s.ended_at == 0 { "live" } else { "ended" }
}

fn session_json(s: &pb::SessionInfo) -> serde_json::Value {
    let time = |t: i64| match t {
        0 => serde_json::Value::Null,
        t => serde_json::Value::String(rfc3339(t)),
    };
    serde_json::json!({
        "id": s.id,
        "state": state(s),
        "connected": s.connected,
        "client": nullable(&s.client_name),
        "client_version": nullable(&s.client_version),
        "client_session_id": nullable(&s.client_session_id),
        "pid": (s.pid != 0).then_some(s.pid),
        "directory": s.directory,
        "workspace": s.workspace,
        "reason": s.reason,
        "project": nullable(&s.project),
        "started_at": time(s.started_at),
        "pinned_at": time(s.pinned_at),
        "ended_at": time(s.ended_at),
        "scratch": nullable(&s.scratch),
    })
}

/// One session as a block: a heading line, then `key: value` lines, every
/// value escaped.
fn session_text(s: &pb::SessionInfo, now: i64) -> String {
    let mut head = format!("{}  {}", output::bold(&escaped(&s.id)), state(s));
    if s.ended_at != 0 {
        head.push_str(&format!(" {}", when(s.ended_at, now)));
    } else if !s.connected {
        // Registered with the daemon before a restart; its shim re-registers on its next call.
        head.push_str(" (not connected since the daemon restarted)");
    }
    let client = match (s.client_name.as_str(), s.client_version.as_str()) {
        ("", _) => "unknown client".to_string(),
        (name, "") => escaped(name).into_owned(),
        (name, version) => format!("{} {}", escaped(name), escaped(version)),
    };
    head.push_str(&format!("  {client}"));
    if s.pid != 0 {
        head.push_str(&format!("  pid {}", s.pid));
    }
    let mut out = format!("{head}\n");
    let mut line = |k: &str, v: &str| {
        if !v.is_empty() {
            out.push_str(&format!("  {k}: {v}\n"));
        }
    };
    line("directory", &escaped(&s.directory));
    line(
        "workspace",
        &format!("{} ({})", escaped(&s.workspace), escaped(&s.reason)),
    );
    line("project", &escaped(&s.project));
    line("pinned", &when(s.pinned_at, now));
    line("scratch", &escaped(&s.scratch));
    line("client session", &escaped(&s.client_session_id));
    out
}

/// A time as RFC 3339 (UTC) and how long ago.
fn when(t: i64, now: i64) -> String {
    format!("{} ({})", rfc3339(t), ago(now - t))
}

fn rfc3339(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| t.to_string())
}

fn ago(secs: i64) -> String {
    match secs.max(0) {
        s if s < 60 => format!("{s} s ago"),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 48 * 3600 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86400),
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc_and_an_age() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(when(100, 160), "1970-01-01T00:01:40Z (1 min ago)");
        assert_eq!(ago(5), "5 s ago");
        assert_eq!(ago(7200), "2 h ago");
        assert_eq!(ago(3 * 86400), "3 days ago");
    }

    #[test]
    fn a_name_with_control_characters_is_escaped_in_text() {
        let s = pb::SessionInfo {
            id: "0123456789abcdef".into(),
            client_name: "evil\u{1b}[2J".into(),
            directory: "/x\ny".into(),
            workspace: "w".into(),
            reason: "root".into(),
            started_at: 1,
            pinned_at: 1,
            connected: true,
            ..Default::default()
        };
        let text = session_text(&s, 2);
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.contains("directory: /x\\ny"), "{text}");
    }
}
