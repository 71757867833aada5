//! What a session-start hook prints, in each client's format (see
//! docs/decisions/0007-hook-output-per-client.md). Pure.

use serde_json::json;

use berth_hook::payload::Client;

/// The stdout of a session-start hook that shows `context` to `client`'s
/// model; empty (valid for every client: "nothing to add") when `context`
/// is empty. The daemon escapes each path and note in it; escaping the
/// whole again (lines kept) covers a daemon of another version.
pub fn session_start(client: Client, context: &str) -> String {
    if context.is_empty() {
        return String::new();
    }
    let context = berth_proto::text::escaped_lines(context);
    let doc = match client {
        // Claude Code and Codex document this shape; VS Code reads the same
        // one (it also runs Claude Code's hooks).
        Client::ClaudeCode | Client::Codex | Client::VsCode => json!({
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": context,
            }
        }),
        // The Copilot CLI reads a top-level camelCase field.
        Client::CopilotCli => json!({ "additionalContext": context }),
        // Cursor reads a top-level snake_case field.
        Client::Cursor => json!({ "additional_context": context }),
    };
    let mut out = doc.to_string();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn check(client: Client, expect: Value) {
        let out = session_start(client, "berth: this session uses workspace \"w\".");
        assert!(out.ends_with('\n'), "{out:?}");
        let got: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(got, expect, "{client:?}");
    }

    #[test]
    fn claude_code_codex_and_vscode_get_hook_specific_output() {
        let expect = json!({"hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "berth: this session uses workspace \"w\"."
        }});
        for c in [Client::ClaudeCode, Client::Codex, Client::VsCode] {
            check(c, expect.clone());
        }
    }

    #[test]
    fn copilot_cli_gets_a_top_level_additional_context() {
        check(
            Client::CopilotCli,
            json!({"additionalContext": "berth: this session uses workspace \"w\"."}),
        );
    }

    #[test]
    fn cursor_gets_a_snake_case_additional_context() {
        check(
            Client::Cursor,
            json!({"additional_context": "berth: this session uses workspace \"w\"."}),
        );
    }

    #[test]
    fn control_characters_in_the_context_are_escaped_and_lines_kept() {
        let out = session_start(
            Client::ClaudeCode,
            "project /p/x\u{1b}[31m\u{7}\nberth note: n",
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["hookSpecificOutput"]["additionalContext"],
            "project /p/x\\u{1b}[31m\\u{7}\nberth note: n"
        );
    }

    #[test]
    fn nothing_to_say_prints_nothing() {
        assert_eq!(session_start(Client::Codex, ""), "");
    }

    #[test]
    fn quotes_and_newlines_in_the_context_stay_valid_json() {
        let out = session_start(Client::ClaudeCode, "a \"b\"\nc\\d");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["hookSpecificOutput"]["additionalContext"],
            "a \"b\"\nc\\d"
        );
    }
}
