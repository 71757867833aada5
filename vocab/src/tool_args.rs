//! Each MCP tool's arguments. `berth-mcp` derives every tool's `inputSchema`
//! from these types and forwards the arguments as they came; the daemon
//! checks them against the same schema (a missing or mistyped one is a tool
//! error naming it) and reads them into the same types, so the two sides
//! cannot drift apart. Which tool takes which type is in [`crate::tools`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `device_context`, `list_workspaces`: only the optional workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Only {
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `use_workspace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UseWorkspace {
    /// The workspace this project should use: an existing one or a new name
    /// (1 to 40 of a-z, 0-9 and '-', starting with a letter or digit). Ask the
    /// user first.
    pub name: String,
    /// Approve the folder even though another workspace's root overlaps it.
    /// Set it only after the user agreed to the overlap berth reported.
    #[serde(default)]
    pub allow_overlap: bool,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `ls`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LsPath {
    /// The folder to list: `<workspace>/<path>`, `./<path>` (the session's
    /// own folder), or unqualified (the session's own folder; its first
    /// segment must be a workspace or already exist there). `/` lists the
    /// workspaces.
    pub path: String,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `read`, `delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FilePath {
    /// A path, qualified as `<workspace>/<path>` or unqualified (the
    /// session's own folder); `./<path>` is always the session's own folder.
    pub path: String,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Write {
    /// The file to write, qualified as `<workspace>/<path>` or unqualified
    /// (the session's own folder). Parent folders are created, but a new
    /// top-level folder only on purpose, as `./<folder>/...`: an unqualified
    /// first segment that is neither a workspace nor already there is refused.
    pub path: String,
    /// The whole new content of the file (UTF-8 text).
    pub content: String,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `edit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Edit {
    /// The file to edit, qualified as `<workspace>/<path>` or unqualified
    /// (the session's own folder).
    pub path: String,
    /// The exact text to replace; it must occur in the file.
    pub old: String,
    /// The text to put in its place.
    pub new: String,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `move`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Move {
    /// The file or folder to move, qualified as `<workspace>/<path>` or
    /// unqualified (the session's own folder).
    pub from: String,
    /// Where it goes, qualified as `<workspace>/<path>` or unqualified; it
    /// may be in another workspace. A new top-level folder only on purpose,
    /// as `./<folder>/...`.
    pub to: String,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// `search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Search {
    /// The text to look for (plain text, not a pattern).
    pub query: String,
    /// The folder to search under, qualified as `<workspace>/<path>` or
    /// unqualified; the session's own folder when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Run this call in this workspace instead of the session's own (reason
    /// `argument`). Omit it normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}
