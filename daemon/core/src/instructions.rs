//! The MCP server `instructions` (docs/reference.md, "Agent sessions"): the workspaces, the path
//! rule, and what a "Use berth workspace <name>" line in a chat project means.

/// The instructions for a session's handshake.
pub fn instructions(workspaces: &[&str]) -> String {
    format!(
        "berth tells you which workspace this session belongs to and gives you a folder for its files.\n\
Workspaces on this device: {}.\n\
Call device_context first: it says the session's workspace, why, and its folder.\n\
Paths: every path may be qualified as <workspace>/<path>, and every path returned is qualified, so you can quote it back. \
\"/\" lists the workspaces; \"./<path>\" is in this session's own folder; an unqualified path goes to the session's own folder. \
A workspace name wins over a folder of the same name: \"<name>/...\" is that workspace, \"./<name>/...\" the folder. \
An unqualified path whose first segment is neither a workspace nor already in the session's folder is refused by write, move and ls (\"no workspace X\"): it is most likely a mistyped workspace name. To create a new top-level folder on purpose, write \"./X/...\". \
When the session's workspace is only a default and several workspaces exist, unqualified paths are refused: qualify them.\n\
Every tool takes an optional workspace argument that overrides the session's workspace for that call.\n\
If a result carries a notice (the structured field \"notice\", also the first text), ask the user once which workspace this project should use and call use_workspace; do not ask again. Read a result's \"notes\" too.\n\
If a chat project's instructions contain a line \"Use berth workspace <name>\", pass workspace \"<name>\" on every berth call in that conversation.",
        workspaces.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collision_rule_and_the_unknown_segment_refusal_are_stated() {
        let text = instructions(&["default", "notes"]);
        assert!(text.contains("default, notes"), "{text}");
        assert!(
            text.contains("A workspace name wins over a folder of the same name"),
            "{text}"
        );
        assert!(text.contains("\"no workspace X\""), "{text}");
        assert!(text.contains("\"./X/...\""), "{text}");
    }
}
