//! What a session-start or pre-tool hook prints, in each client's format (see
//! docs/decisions/0007-hook-output-per-client.md and
//! docs/decisions/0048-the-native-tool-guard.md). Pure.

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
    let context = berth_vocab::text::escaped_lines(context);
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
        Client::GeminiCli => json!({
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": context,
            }
        }),
    };
    let mut out = doc.to_string();
    out.push('\n');
    out
}

/// What the guard asks of the client for one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Put it to the person; only Claude Code (and VS Code, which runs its hooks) can, and
    /// only in a mode that asks. Everywhere else it is [`Verdict::Deny`].
    Ask,
    /// Refuse the call, telling the model why.
    Deny,
    /// Let it run, telling the model.
    Warn,
}

/// How the person's terminal shows a desktop notification, for the one channel Claude Code's
/// TUI offers a hook beside its permission prompt: `terminalSequence`, which Claude Code
/// writes to the terminal itself (wrapped for tmux or screen). Its prompt for a file write has
/// no room for a hook's reason, and `systemMessage` is shown only once the write is allowed
/// (docs/clients.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notifier {
    /// OSC 9, iTerm2's form, which most terminals with notifications read (WezTerm, Ghostty,
    /// kitty too); the one sent when the terminal is not known.
    Osc9,
    /// OSC 99, kitty's own.
    Kitty,
    /// OSC 777 `notify`, Ghostty's and foot's (and urxvt's).
    Osc777,
}

impl Notifier {
    /// The notifier for the terminal the environment names (`TERM_PROGRAM`, `TERM`, whether
    /// `KITTY_WINDOW_ID` is set), as Claude Code chooses its own notifications.
    pub fn from_env(term_program: Option<&str>, term: Option<&str>, kitty_window: bool) -> Self {
        match (term_program, term) {
            (Some("ghostty"), _) | (_, Some("xterm-ghostty" | "foot" | "foot-extra")) => {
                Notifier::Osc777
            }
            (Some("kitty"), _) | (_, Some("xterm-kitty")) => Notifier::Kitty,
            _ if kitty_window => Notifier::Kitty,
            _ => Notifier::Osc9,
        }
    }

    /// The escape sequence that shows `text` (already escaped: no control characters) as a
    /// notification titled berth. Bounded well below the 4 KiB Claude Code accepts.
    pub fn sequence(self, text: &str) -> String {
        let text = bounded(text, NOTIFICATION_MAX);
        match self {
            Notifier::Osc9 => format!("\u{1b}]9;{text}\u{7}"),
            Notifier::Kitty => format!(
                "\u{1b}]99;i=berth:d=0:p=title;berth\u{1b}\\\u{1b}]99;i=berth:p=body;{text}\u{1b}\\"
            ),
            Notifier::Osc777 => format!("\u{1b}]777;notify;berth;{text}\u{7}"),
        }
    }
}

/// The most of the reason a notification carries, in bytes.
const NOTIFICATION_MAX: usize = 1024;

/// `text` cut to at most `max` bytes, at a character's boundary.
fn bounded(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The stdout of a pre-tool hook that objects to a call, in `client`'s format; `reason` is
/// the guard's sentence. `asks` says whether the client can put a question to the person now
/// (Claude Code outside its no-question modes); `notifier`, how the person's terminal shows
/// the reason beside Claude Code's question. Empty for Cursor, which has no pre-tool hook.
pub fn pre_tool(
    client: Client,
    verdict: Verdict,
    reason: &str,
    asks: bool,
    notifier: Notifier,
) -> String {
    let reason = berth_vocab::text::escaped(reason);
    let reason = reason.as_ref();
    let verdict = match verdict {
        Verdict::Ask if !(asks && matches!(client, Client::ClaudeCode | Client::VsCode)) => {
            Verdict::Deny
        }
        v => v,
    };
    let decision = match verdict {
        Verdict::Ask => "ask",
        Verdict::Deny | Verdict::Warn => "deny",
    };
    let doc = match (client, verdict) {
        (Client::Cursor, _) => return String::new(),
        // Claude Code's prompt for a file write shows no hook's reason, and `systemMessage`
        // only once the write is allowed: the terminal shows the reason as the question is
        // put. VS Code, which runs the same hooks, is no terminal.
        (Client::ClaudeCode, Verdict::Ask) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            },
            "systemMessage": reason,
            "terminalSequence": notifier.sequence(reason),
        }),
        // With `deny` the TUI shows `systemMessage` and the reason.
        (Client::ClaudeCode | Client::VsCode, Verdict::Ask | Verdict::Deny) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            },
            "systemMessage": reason,
        }),
        // Codex takes only `deny` (`ask` and `allow` count as a failed hook, and the patch
        // is applied).
        (Client::Codex, Verdict::Ask | Verdict::Deny) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        // The Copilot CLI takes only the flat form: wrapped, it is ignored and the file
        // written.
        (Client::CopilotCli, Verdict::Ask | Verdict::Deny) => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }),
        (Client::GeminiCli, Verdict::Ask | Verdict::Deny) => json!({
            "decision": "deny",
            "reason": reason,
            "systemMessage": reason,
        }),
        (Client::CopilotCli, Verdict::Warn) => json!({ "additionalContext": reason }),
        (Client::ClaudeCode | Client::VsCode | Client::Codex, Verdict::Warn) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": reason,
            }
        }),
        (Client::GeminiCli, Verdict::Warn) => json!({
            "hookSpecificOutput": {
                "hookEventName": "BeforeTool",
                "additionalContext": reason,
            }
        }),
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

    const WHY: &str = "berth: this session works in workspace shop; ~/src/alpha/a.rs belongs to workspace alpha (root ~/src/alpha).";

    fn pre(client: Client, verdict: Verdict, asks: bool) -> Value {
        let out = pre_tool(client, verdict, WHY, asks, Notifier::Osc9);
        assert!(out.ends_with('\n'), "{out:?}");
        serde_json::from_str(&out).unwrap()
    }

    #[test]
    fn claude_code_is_asked_with_the_reason_shown_to_the_person() {
        let mut expect = json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": WHY,
            },
            "systemMessage": WHY,
        });
        // VS Code runs the same hook, and is no terminal.
        assert_eq!(pre(Client::VsCode, Verdict::Ask, true), expect);
        expect["terminalSequence"] = format!("\u{1b}]9;{WHY}\u{7}").into();
        assert_eq!(pre(Client::ClaudeCode, Verdict::Ask, true), expect);
        // Where it cannot ask, the question is a denial.
        let denied = pre(Client::ClaudeCode, Verdict::Ask, false);
        assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(denied["systemMessage"], WHY);
        assert_eq!(
            pre(Client::ClaudeCode, Verdict::Deny, true)["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
    }

    #[test]
    fn a_denial_needs_no_notification() {
        for c in [Client::ClaudeCode, Client::VsCode] {
            let denied = pre(c, Verdict::Deny, true);
            assert!(denied.get("terminalSequence").is_none(), "{c:?}");
            let cannot_ask = pre(c, Verdict::Ask, false);
            assert!(cannot_ask.get("terminalSequence").is_none(), "{c:?}");
        }
    }

    #[test]
    fn the_notification_takes_the_form_of_the_persons_terminal() {
        let from = |program, term, kitty| Notifier::from_env(program, term, kitty);
        assert_eq!(from(Some("iTerm.app"), None, false), Notifier::Osc9);
        assert_eq!(
            from(Some("WezTerm"), Some("xterm-256color"), false),
            Notifier::Osc9
        );
        assert_eq!(from(None, None, false), Notifier::Osc9);
        assert_eq!(from(Some("tmux"), Some("screen"), false), Notifier::Osc9);
        assert_eq!(from(None, Some("xterm-kitty"), false), Notifier::Kitty);
        assert_eq!(
            from(Some("tmux"), Some("tmux-256color"), true),
            Notifier::Kitty
        );
        assert_eq!(from(Some("ghostty"), None, false), Notifier::Osc777);
        assert_eq!(from(None, Some("foot"), false), Notifier::Osc777);

        assert_eq!(
            Notifier::Kitty.sequence("why"),
            "\u{1b}]99;i=berth:d=0:p=title;berth\u{1b}\\\u{1b}]99;i=berth:p=body;why\u{1b}\\"
        );
        assert_eq!(
            Notifier::Osc777.sequence("why"),
            "\u{1b}]777;notify;berth;why\u{7}"
        );
    }

    #[test]
    fn the_notification_is_bounded_at_a_characters_edge() {
        let long = "é".repeat(NOTIFICATION_MAX);
        let seq = Notifier::Osc9.sequence(&long);
        let body = &seq["\u{1b}]9;".len()..seq.len() - 1];
        assert!(body.len() <= NOTIFICATION_MAX && body.len() >= NOTIFICATION_MAX - 1);
        assert!(body.chars().all(|c| c == 'é'));
        // Claude Code refuses sequences over 4 KiB and OSC 9 bodies that begin with a digit.
        for n in [Notifier::Osc9, Notifier::Kitty, Notifier::Osc777] {
            assert!(n.sequence(&long).len() < 4096, "{n:?}");
        }
    }

    #[test]
    fn control_characters_in_the_reason_never_reach_the_terminal() {
        let out = pre_tool(
            Client::ClaudeCode,
            Verdict::Ask,
            "berth: /p/\u{1b}]0;pwned\u{7}x",
            true,
            Notifier::Osc9,
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        let seq = v["terminalSequence"].as_str().unwrap();
        let body = &seq["\u{1b}]9;".len()..seq.len() - 1];
        assert!(!body.chars().any(char::is_control), "{seq:?}");
    }

    #[test]
    fn codex_is_never_asked_only_denied() {
        let expect = json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": WHY,
        }});
        for v in [Verdict::Ask, Verdict::Deny] {
            assert_eq!(pre(Client::Codex, v, true), expect);
        }
    }

    #[test]
    fn the_copilot_clis_denial_is_the_flat_form() {
        let expect = json!({"permissionDecision": "deny", "permissionDecisionReason": WHY});
        for v in [Verdict::Ask, Verdict::Deny] {
            let got = pre(Client::CopilotCli, v, true);
            assert_eq!(got, expect);
            assert!(got.get("hookSpecificOutput").is_none());
        }
    }

    #[test]
    fn gemini_cli_is_denied_with_its_decision_field() {
        assert_eq!(
            pre(Client::GeminiCli, Verdict::Ask, true),
            json!({"decision": "deny", "reason": WHY, "systemMessage": WHY})
        );
    }

    #[test]
    fn a_warning_allows_and_tells_the_model() {
        for c in [Client::ClaudeCode, Client::VsCode, Client::Codex] {
            let got = pre(c, Verdict::Warn, true);
            assert_eq!(
                got,
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": WHY}}),
                "{c:?}"
            );
        }
        assert_eq!(
            pre(Client::CopilotCli, Verdict::Warn, true),
            json!({"additionalContext": WHY})
        );
        assert_eq!(
            pre(Client::GeminiCli, Verdict::Warn, true)["hookSpecificOutput"]["additionalContext"],
            WHY
        );
    }

    #[test]
    fn cursor_has_no_pre_tool_hook_and_gets_nothing() {
        assert_eq!(
            pre_tool(Client::Cursor, Verdict::Deny, WHY, true, Notifier::Osc9),
            ""
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
