//! The MCP server `instructions` (SPEC §5): the workspaces, the path rule,
//! and what a "Use berth workspace <name>" line in a chat project means.

/// The instructions for a session's handshake.
pub fn instructions(workspaces: &[&str]) -> String {
    format!(
        "berth tells you which workspace this session belongs to and gives you a folder for its files.\n\
Workspaces on this device: {}.\n\
Call device_context first: it says the session's workspace, why, and its folder.\n\
Paths: every path may be qualified as <workspace>/<path>, and every path returned is qualified, so you can quote it back. \
\"/\" lists the workspaces; \"./<path>\" is in this session's own folder; an unqualified path goes to the session's own folder. \
When the session's workspace is only a default and several workspaces exist, unqualified paths are refused: qualify them.\n\
Every tool takes an optional workspace argument that overrides the session's workspace for that call.\n\
If a result starts with a berth notice, ask the user once which workspace this project should use and call use_workspace; do not ask again.\n\
If a chat project's instructions contain a line \"Use berth workspace <name>\", pass workspace \"<name>\" on every berth call in that conversation.",
        workspaces.join(", ")
    )
}
