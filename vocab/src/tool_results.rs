//! What each MCP tool returns as structured content. The daemon builds every
//! result from these types, and `berth-mcp` derives each tool's
//! `outputSchema` from the same types, so the two cannot drift apart.
//!
//! Some clients (Claude Code) hand the model only a result's structured
//! content, so everything the model must read is here: the ask-once
//! `notice`, the resolution's `notes`, an error's `code`, and what a
//! session's `folder` means.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tool's result: its own fields and what every result carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reply<T> {
    /// The tool's own fields.
    #[serde(flatten)]
    pub result: T,
    /// Present on the session's first result only, when the user must be
    /// asked which workspace this project uses: ask the user once, then call
    /// use_workspace with their answer. Do not ask again in this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Things about how this session's workspace was decided that the user
    /// should hear (an ignored project file, tied roots, a setting naming a
    /// deleted workspace). On device_context always; on other tools only on
    /// the session's first result.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Either a tool's own result or its failure: the shape of every result,
/// and so of every tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Outcome<T> {
    /// The tool did its work.
    Done(Reply<T>),
    /// The tool refused or failed (the result has `isError: true`).
    Failed(Reply<Failure>),
}

/// Why a tool failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// What happened and what to do next, naming the thing concerned.
    pub error: String,
    /// A stable code to branch on: bad-argument, not-found, refused,
    /// invalid, not-regular-file, timed-out, shutting-down, internal, ...
    pub code: String,
    /// What to do next, one step each, when berth knows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
}

/// `device_context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceContext {
    /// The workspace this session (or this call's `workspace` argument) uses.
    pub workspace: String,
    /// Why: argument, env, project-file, root, unassigned-setting or active.
    pub reason: String,
    /// The session's project folder, or null when it has none.
    pub project: Option<String>,
    /// A workspace an unapproved project file proposes, or null.
    pub proposal: Option<String>,
    /// The absolute folder unqualified paths go to, or null when there is
    /// none (see folder_meaning).
    pub folder: Option<String>,
    /// What `folder` is and how to spell paths in it.
    pub folder_meaning: String,
    /// Every workspace on this device.
    pub workspaces: Vec<String>,
}

/// `list_workspaces`, and `ls /`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceList {
    /// The device's active workspace.
    pub active: String,
    /// Every workspace.
    pub workspaces: Vec<WorkspaceView>,
}

/// One workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceView {
    /// Its name; `<name>/<path>` reaches its files.
    pub name: String,
    /// Whether it is the device's active workspace.
    pub active: bool,
    /// Its home folder.
    pub home: String,
    /// managed (in berth's data folder) or local (a folder the user chose).
    pub home_mode: String,
    /// The folders approved for it.
    pub roots: Vec<String>,
    /// Why its home cannot be used, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Anything else to know about it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `use_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsedWorkspace {
    /// The workspace asked for.
    pub workspace: String,
    /// The project folder now assigned to it, or null without a project.
    pub folder: Option<String>,
    /// Whether the workspace was created by this call.
    pub created: bool,
    /// Whether the project folder was approved as a new root.
    pub root_added: bool,
    /// The project file written, or null.
    pub project_file: Option<String>,
    /// Whether this session now uses the workspace.
    pub switched: bool,
    /// What happened, in a sentence for the model.
    pub outcome: String,
}

/// `ls`: a folder's entries, or, for `/`, the workspaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Ls {
    /// A folder's entries (a file lists as itself).
    Entries(Listing),
    /// `ls /`: the workspaces.
    Workspaces(WorkspaceList),
}

/// A folder's entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Listing {
    /// Sorted by path.
    pub entries: Vec<Entry>,
}

/// One entry of a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    /// Its qualified path; a folder's ends with `/`.
    pub path: String,
    /// file, dir, symlink, fifo, socket, device, or other (only a file is read or written).
    pub kind: String,
    /// Its size in bytes (0 for anything but a file).
    pub size: u64,
}

/// `read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileText {
    /// The file's qualified path.
    pub path: String,
    /// Its whole content.
    pub content: String,
}

/// `write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Written {
    /// The file's qualified path.
    pub path: String,
    /// How many bytes were written.
    pub bytes: u64,
}

/// `edit`, `delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    /// The qualified path edited or deleted.
    pub path: String,
}

/// `move`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Moved {
    /// Where it was, qualified.
    pub from: String,
    /// Where it is now, qualified.
    pub to: String,
}

/// `search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The matching lines, in path order.
    pub matches: Vec<Match>,
    /// Whether the search stopped early at its limits (narrow the path).
    pub truncated: bool,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Match {
    /// The file's qualified path.
    pub path: String,
    /// The line number, from 1.
    pub line: u64,
    /// The line.
    pub text: String,
}

/// A value as the JSON text of a result's text block. Every character that
/// human output escapes (controls, DEL, C1 and the bidirectional marks) is
/// written as a `\uXXXX` escape, so the text can neither drive a terminal nor
/// reorder what a person reads (ADR 0018), and it parses back to the same
/// value.
pub fn json_text<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_string());
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if crate::text::is_hidden(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_text_escapes_bidirectional_controls_and_parses_back() {
        let v = Done {
            path: "w/a\u{202e}b\u{1b}\u{9b}.md".into(),
        };
        let text = json_text(&v);
        assert!(!text.chars().any(crate::text::is_hidden), "{text}");
        assert_eq!(serde_json::from_str::<Done>(&text).unwrap(), v);
    }

    #[test]
    fn a_reply_carries_its_fields_the_notice_and_the_notes_side_by_side() {
        let r = Reply {
            result: Done { path: "w/a".into() },
            notice: Some("ask".into()),
            notes: vec![],
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"path": "w/a", "notice": "ask", "notes": []})
        );
    }
}
