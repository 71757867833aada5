//! The device's plain data as protocol messages, and the messages' parts as plain data: one
//! conversion per type, so each handler in `server` is only its operation.

use std::path::PathBuf;

use berth_core::resolve::{Answer, Mode, Reason};
use berth_proto::pb;
use berth_proto::status::CodeStatus as _;
use berth_vocab::codes::Code;
use tonic::Status;

use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::device::Device;
use crate::ops::sessions::Listed;
use crate::ops::workspaces::WorkspaceView;

/// The caller a request names; a missing one is the empty caller, which is refused for its
/// folder like any other that is not absolute.
pub(super) fn caller_of(c: Option<pb::Caller>) -> Result<Caller, BerthError> {
    let c = c.unwrap_or_default();
    Caller::new(&c.cwd, &c.env_workspace, &c.extra_home)
}

/// An optional text field: empty means absent.
pub(super) fn opt(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

pub(super) fn mode_of(m: i32) -> Mode {
    if m == pb::Mode::Agent as i32 {
        Mode::Agent
    } else {
        Mode::Cli
    }
}

/// A resolution on the wire, its notice listing today's workspaces. The list is built only
/// for an answer that carries a notice: most replies have none, and with 10k workspaces the
/// list is 10k entries.
pub(super) fn resolution(device: &Device, a: Answer) -> pb::Resolution {
    if berth_core::resolve::needs_asking(&a) {
        resolution_with(a, &device.registry().names())
    } else {
        resolution_with(a, &[])
    }
}

/// A resolution on the wire; `workspaces` feed the notice's list.
fn resolution_with(a: Answer, workspaces: &[&str]) -> pb::Resolution {
    let notice = berth_core::notice::notice(&a, workspaces).unwrap_or_default();
    let needs_asking = berth_core::resolve::needs_asking(&a);
    pb::Resolution {
        needs_asking,
        notice,
        workspace: a.workspace,
        reason: a.reason.as_str().to_string(),
        directory: path_text(a.directory),
        project: opt_path_text(a.project),
        project_file: opt_path_text(a.project_file),
        proposal: a.proposal.unwrap_or_default(),
        notes: a.notes,
        home: String::new(),
    }
}

/// Reads back a pin a shim kept across a daemon restart.
pub(super) fn answer_of(r: pb::Resolution) -> Result<Answer, Status> {
    let reason = match r.reason.as_str() {
        "argument" => Reason::Argument,
        "env" => Reason::Env,
        "project-file" => Reason::ProjectFile,
        "root" => Reason::Root,
        "active" => Reason::Active,
        "unassigned-setting" => Reason::UnassignedSetting,
        other => {
            return Err(Code::Invalid.status(format!("unknown reason {other:?} in a session pin")));
        }
    };
    let path = |s: String| (!s.is_empty()).then(|| PathBuf::from(s));
    Ok(Answer {
        workspace: r.workspace,
        reason,
        directory: PathBuf::from(r.directory),
        project: path(r.project),
        project_file: path(r.project_file),
        proposal: (!r.proposal.is_empty()).then_some(r.proposal),
        notes: r.notes,
    })
}

/// A path as text, as `display()` spells it, reusing the path's buffer when it is UTF-8 (every
/// reply carries three; going through the formatter cost more than the resolution).
pub(super) fn path_text(p: PathBuf) -> String {
    p.into_os_string()
        .into_string()
        .unwrap_or_else(|raw| raw.to_string_lossy().into_owned())
}

/// An optional path as text: empty when absent.
pub(super) fn opt_path_text(p: Option<PathBuf>) -> String {
    p.map(path_text).unwrap_or_default()
}

impl From<WorkspaceView> for pb::WorkspaceInfo {
    fn from(v: WorkspaceView) -> Self {
        pb::WorkspaceInfo {
            name: v.name,
            active: v.active,
            home: path_text(v.home),
            home_mode: v.home_mode.to_string(),
            roots: v.roots.into_iter().map(path_text).collect(),
            error: v.error.unwrap_or_default(),
            notes: v.notes,
            warnings: Vec::new(),
        }
    }
}

impl From<Listed> for pb::SessionInfo {
    fn from(l: Listed) -> Self {
        let r = l.record;
        pb::SessionInfo {
            id: r.id,
            client_name: r.client_name,
            client_version: r.client_version,
            client_session_id: r.client_session_id,
            pid: r.pid.unwrap_or_default(),
            directory: path_text(r.cwd),
            workspace: r.workspace,
            reason: r.reason,
            project: opt_path_text(r.project),
            started_at: r.started_at,
            pinned_at: r.pinned_at,
            ended_at: r.ended_at.unwrap_or_default(),
            scratch: opt_path_text(l.scratch),
            connected: l.connected,
        }
    }
}

/// One folder of the walk, as `explain` shows it.
pub(super) fn explain_step(s: berth_core::explain::ExplainStep) -> pb::ExplainStep {
    pb::ExplainStep {
        directory: path_text(s.dir),
        findings: s.findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)] // Paths that are not UTF-8 are Unix ones.
    fn a_path_reads_as_display_spells_it_even_when_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        for raw in [&b"/tmp/caf\xc3\xa9"[..], b"/tmp/bad\xff\xfename", b""] {
            let p = PathBuf::from(std::ffi::OsStr::from_bytes(raw));
            assert_eq!(path_text(p.clone()), p.display().to_string());
        }
    }

    #[test]
    fn a_pin_reads_back_as_it_was_sent_and_an_unknown_reason_is_refused() {
        let answer = Answer {
            workspace: "shop".into(),
            reason: Reason::ProjectFile,
            directory: PathBuf::from("/p/shop/src"),
            project: Some(PathBuf::from("/p/shop")),
            project_file: Some(PathBuf::from("/p/shop/.berth/workspace.json")),
            proposal: None,
            notes: vec!["a note".into()],
        };
        let back = answer_of(resolution_with(answer.clone(), &[])).unwrap();
        assert_eq!(back, answer);
        let bad = pb::Resolution {
            reason: "guess".into(),
            ..pb::Resolution::default()
        };
        assert_eq!(Code::of(&answer_of(bad).unwrap_err()), Some(Code::Invalid));
    }
}
