//! The client's hook payload: which client sent it and the few fields berth
//! needs (session id, working directory, transcript). Pure: bytes in, a
//! [`Payload`] or a reason out.
//!
//! Every field is read leniently: a field of the wrong type counts as
//! absent, so a payload that is a JSON object always yields a [`Payload`].
//!
//! **The working directory** is the payload's `cwd` and nothing else (docs/reference.md,
//! "Hooks"). Cursor's payloads carry none, only `workspace_roots`, the folders of
//! its window: a multi-root window lists several, and the first need not be
//! where the agent works, so taking one would be a guess that can put a
//! conversation in the wrong workspace. `workspace_roots` only tells the
//! payload is Cursor's; a Cursor payload that does carry a `cwd` is read like
//! any other. (`BERTH_CWD`, which wins over the payload, is read by `main`.)
//!
//! **Which client** (when `--client` is not given), first rule that matches:
//! 1. `workspace_roots`, `cursor_version` or `conversation_id` → Cursor;
//! 2. a `hook_event_name` only Gemini CLI uses (`BeforeTool`, `AfterTool`, `BeforeAgent`,
//!    `AfterAgent`, `BeforeModel`, `AfterModel`, `BeforeToolSelection`) → Gemini CLI;
//! 3. camelCase `sessionId` or `hookEventName` → VS Code when `hookEventName`
//!    is present or `timestamp` is a string (VS Code sends ISO 8601), else the
//!    Copilot CLI (a camelCase event name such as `sessionStart`: numeric
//!    millisecond `timestamp`, no event name field);
//! 4. `turn_id` → Codex (its Stop payload);
//! 5. `timestamp` in a snake_case payload → the Copilot CLI registered with a
//!    PascalCase event name (`SessionStart`), which sends snake_case fields;
//! 6. anything else → Claude Code. Codex's SessionStart payload has the same
//!    shape as Claude Code's; both take the same output, and `berth install
//!    codex` registers the hook with `--client codex` so the record is right.

use serde_json::{Map, Value};

/// A client that calls berth's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code (snake_case payloads).
    ClaudeCode,
    /// OpenAI Codex (snake_case payloads, `turn_id` on Stop).
    Codex,
    /// GitHub Copilot CLI (camelCase or, with PascalCase event names,
    /// snake_case payloads).
    CopilotCli,
    /// VS Code's agent hooks (camelCase payloads).
    VsCode,
    /// Cursor (`workspace_roots`, no `cwd`: its hooks name no session
    /// directory, so only `BERTH_CWD` gives them one).
    Cursor,
    /// Gemini CLI (snake_case payloads with a `timestamp`, its own event names).
    GeminiCli,
}

impl Client {
    /// The name sent to the daemon and accepted by `--client`.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::CopilotCli => "copilot-cli",
            Client::VsCode => "vscode",
            Client::Cursor => "cursor",
            Client::GeminiCli => "gemini-cli",
        }
    }

    /// Parses a `--client` value; `None` for a name berth does not know.
    pub fn from_name(name: &str) -> Option<Client> {
        Some(match name.to_ascii_lowercase().as_str() {
            "claude-code" | "claude" => Client::ClaudeCode,
            "codex" => Client::Codex,
            "copilot-cli" | "copilot" => Client::CopilotCli,
            "vscode" | "vs-code" => Client::VsCode,
            "cursor" => Client::Cursor,
            "gemini-cli" | "gemini" => Client::GeminiCli,
            _ => return None,
        })
    }
}

/// What berth takes from a hook payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// The calling client (given or detected).
    pub client: Client,
    /// The client's session id; empty when absent.
    pub session_id: String,
    /// The session's absolute working directory: the payload's `cwd`. `None`
    /// when absent, empty or relative. Cursor's `workspace_roots` is never
    /// read as one: a window may list several folders, and the first need
    /// not be where the agent works (docs/reference.md, "Hooks"; ADR 0007).
    pub cwd: Option<String>,
    /// The payload's `cwd` when it was relative, and so ignored (the log
    /// says so).
    pub relative_cwd: Option<String>,
    /// The transcript file; empty when absent or null.
    pub transcript_path: String,
}

/// Why a payload could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadError {
    /// Nothing (or only whitespace) arrived.
    Empty,
    /// The bytes are not UTF-8.
    NotUtf8,
    /// The text is not one JSON document.
    NotJson(String),
    /// A JSON document, but not an object.
    NotObject(&'static str),
}

impl std::fmt::Display for PayloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PayloadError::Empty => write!(f, "the payload is empty"),
            PayloadError::NotUtf8 => write!(f, "the payload is not UTF-8"),
            PayloadError::NotJson(e) => write!(f, "the payload is not JSON: {e}"),
            PayloadError::NotObject(kind) => {
                write!(f, "the payload is a JSON {kind}, not an object")
            }
        }
    }
}

/// Reads a payload; `client` (from `--client`) overrides detection.
pub fn parse(bytes: &[u8], client: Option<Client>) -> Result<Payload, PayloadError> {
    parse_object(bytes, client).map(|(p, _)| p)
}

/// [`parse`], also giving back the payload's object (the pre-tool hook reads its tool call).
pub fn parse_object(
    bytes: &[u8],
    client: Option<Client>,
) -> Result<(Payload, Map<String, Value>), PayloadError> {
    let text = std::str::from_utf8(bytes).map_err(|_| PayloadError::NotUtf8)?;
    if text.trim().is_empty() {
        return Err(PayloadError::Empty);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| PayloadError::NotJson(e.to_string()))?;
    let obj = match value {
        Value::Object(o) => o,
        other => return Err(PayloadError::NotObject(kind(&other))),
    };
    let payload = payload_of(&obj, client);
    Ok((payload, obj))
}

fn payload_of(obj: &Map<String, Value>, client: Option<Client>) -> Payload {
    Payload {
        client: client.unwrap_or_else(|| detect(obj)),
        session_id: string(obj, &["session_id", "sessionId", "conversation_id"]).to_string(),
        cwd: cwd(obj),
        relative_cwd: Some(string(obj, &["cwd"]))
            .filter(|c| !c.is_empty() && !std::path::Path::new(c).is_absolute())
            .map(str::to_string),
        transcript_path: string(obj, &["transcript_path", "transcriptPath"]).to_string(),
    }
}

/// The client whose payload has this shape (rules in the module docs).
pub fn detect(obj: &Map<String, Value>) -> Client {
    let has = |k: &str| obj.contains_key(k);
    if has("workspace_roots") || has("cursor_version") || has("conversation_id") {
        return Client::Cursor;
    }
    let gemini_event = obj
        .get("hook_event_name")
        .and_then(Value::as_str)
        .is_some_and(|e| GEMINI_EVENTS.contains(&e));
    if gemini_event {
        return Client::GeminiCli;
    }
    if has("sessionId") || has("hookEventName") {
        let iso_time = obj.get("timestamp").is_some_and(Value::is_string);
        return if has("hookEventName") || iso_time {
            Client::VsCode
        } else {
            Client::CopilotCli
        };
    }
    if has("turn_id") {
        return Client::Codex;
    }
    if has("timestamp") {
        return Client::CopilotCli;
    }
    Client::ClaudeCode
}

/// The hook events only Gemini CLI sends.
const GEMINI_EVENTS: [&str; 7] = [
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
];

/// The first of `keys` holding a string; "" when none does.
fn string<'a>(obj: &'a Map<String, Value>, keys: &[&str]) -> &'a str {
    keys.iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .unwrap_or("")
}

fn cwd(obj: &Map<String, Value>) -> Option<String> {
    Some(string(obj, &["cwd"]))
        .filter(|c| !c.is_empty() && std::path::Path::new(c).is_absolute())
        .map(str::to_string)
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Payload {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        parse(&bytes, None).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// One check per fixture: the detected client and the fields read.
    fn check(name: &str, client: Client, session: &str, cwd: Option<&str>, transcript: &str) {
        let p = fixture(name);
        assert_eq!(p.client, client, "{name}");
        assert_eq!(p.session_id, session, "{name}");
        assert_eq!(p.cwd.as_deref(), cwd, "{name}");
        assert_eq!(p.transcript_path, transcript, "{name}");
    }

    // The fixtures, recorded on Linux, hold Unix paths: not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn claude_code_payloads_are_snake_case() {
        let t = "/home/ada/.claude/projects/-home-ada-code-shop/0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5.jsonl";
        let id = "0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5";
        let cwd = Some("/home/ada/code/shop");
        check(
            "claude-code-session-start.json",
            Client::ClaudeCode,
            id,
            cwd,
            t,
        );
        check("claude-code-stop.json", Client::ClaudeCode, id, cwd, t);
    }

    // The fixtures, recorded on Linux, hold Unix paths: not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn codex_stop_is_told_by_its_turn_id_and_its_session_start_reads_as_claude_code() {
        let id = "019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e37";
        let t = "/home/ada/.codex/sessions/2026/07/14/rollout-2026-07-14T09-12-44-019a7c3e-2f41-7d12-9b6e-4c2a8f1d0e37.jsonl";
        let cwd = Some("/home/ada/code/shop");
        check("codex-stop.json", Client::Codex, id, cwd, t);
        // Same shape as Claude Code's; `--client codex` names it.
        check("codex-session-start.json", Client::ClaudeCode, id, cwd, t);
    }

    // The fixtures, recorded on Linux, hold Unix paths: not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn copilot_cli_camel_case_payloads_have_a_numeric_timestamp() {
        let id = "714bfd7c-a8ef-4bde-8bea-ec39ceec45e8";
        let cwd = Some("/home/ada/code/shop");
        check(
            "copilot-cli-session-start.json",
            Client::CopilotCli,
            id,
            cwd,
            "",
        );
        let t =
            "/home/ada/.copilot/session-state/714bfd7c-a8ef-4bde-8bea-ec39ceec45e8/events.jsonl";
        check(
            "copilot-cli-agent-stop.json",
            Client::CopilotCli,
            id,
            cwd,
            t,
        );
    }

    // The fixtures, recorded on Linux, hold Unix paths: not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn copilot_cli_pascal_case_events_send_snake_case_with_a_timestamp() {
        let id = "714bfd7c-a8ef-4bde-8bea-ec39ceec45e8";
        let cwd = Some("/home/ada/code/shop");
        check(
            "copilot-cli-pascal-session-start.json",
            Client::CopilotCli,
            id,
            cwd,
            "",
        );
        let t =
            "/home/ada/.copilot/session-state/714bfd7c-a8ef-4bde-8bea-ec39ceec45e8/events.jsonl";
        check(
            "copilot-cli-pascal-stop.json",
            Client::CopilotCli,
            id,
            cwd,
            t,
        );
    }

    // The fixtures, recorded on Linux, hold Unix paths: not absolute on Windows.
    #[cfg(unix)]
    #[test]
    fn vscode_payloads_are_camel_case_with_an_event_name() {
        let id = "5f0c2a9e-7b1d-4c3e-9f8a-2d6b4e1c0a73";
        let cwd = Some("/home/ada/code/shop");
        let t = "/home/ada/.config/Code/User/workspaceStorage/8d2f/GitHub.copilot-chat/transcripts/5f0c2a9e-7b1d-4c3e-9f8a-2d6b4e1c0a73.json";
        check("vscode-session-start.json", Client::VsCode, id, cwd, t);
        check("vscode-stop.json", Client::VsCode, id, cwd, t);
    }

    #[test]
    fn cursor_payloads_have_workspace_roots_and_so_no_cwd() {
        let id = "afafb0bf-9b2e-4e2a-8857-88e522b364e6";
        // Both fixtures list /home/ada/code/shop in `workspace_roots`.
        check("cursor-session-start.json", Client::Cursor, id, None, "");
        let t = "/home/ada/.cursor/projects/home-ada-code-shop/agent-transcripts/afafb0bf-9b2e-4e2a-8857-88e522b364e6.jsonl";
        check("cursor-stop.json", Client::Cursor, id, None, t);
    }

    // Unix paths, which are not absolute on Windows (see the Windows test below).
    #[cfg(unix)]
    #[test]
    fn workspace_roots_name_the_client_but_never_the_cwd() {
        // A multi-root window: the first folder need not be the agent's.
        let p = parse(
            br#"{"conversation_id": "c", "workspace_roots": ["/a", "/b"]}"#,
            None,
        )
        .unwrap();
        assert_eq!((p.client, p.cwd), (Client::Cursor, None));
        // A Cursor payload with a `cwd` (newer builds might send one) is
        // read like any other, whatever its roots say.
        let p = parse(
            br#"{"conversation_id": "c", "workspace_roots": ["/a", "/b"], "cwd": "/b/sub"}"#,
            None,
        )
        .unwrap();
        assert_eq!(p.client, Client::Cursor);
        assert_eq!(p.cwd.as_deref(), Some("/b/sub"));
        // So is any payload told to be Cursor's.
        let p = parse(br#"{"session_id": "s", "cwd": "/p"}"#, Some(Client::Cursor)).unwrap();
        assert_eq!(p.cwd.as_deref(), Some("/p"));
    }

    #[test]
    fn gemini_cli_is_told_by_its_own_event_names() {
        let p = parse(
            br#"{"session_id": "s", "cwd": "/p", "hook_event_name": "BeforeTool", "timestamp": "2026-12-03T10:00:00Z", "tool_name": "write_file"}"#,
            None,
        )
        .unwrap();
        assert_eq!(p.client, Client::GeminiCli);
        // Claude Code's PreToolUse is not Gemini's.
        let p = parse(
            br#"{"session_id": "s", "cwd": "/p", "hook_event_name": "PreToolUse"}"#,
            None,
        )
        .unwrap();
        assert_eq!(p.client, Client::ClaudeCode);
    }

    #[test]
    fn the_client_flag_overrides_the_shape() {
        let p = parse(br#"{"session_id":"s","cwd":"/p"}"#, Some(Client::Codex)).unwrap();
        assert_eq!(p.client, Client::Codex);
    }

    #[test]
    fn client_names_round_trip() {
        for c in [
            Client::ClaudeCode,
            Client::Codex,
            Client::CopilotCli,
            Client::VsCode,
            Client::Cursor,
            Client::GeminiCli,
        ] {
            assert_eq!(Client::from_name(c.name()), Some(c));
        }
        assert_eq!(Client::from_name("emacs"), None);
    }

    #[test]
    fn garbage_is_refused_with_its_reason() {
        assert_eq!(parse(b"", None), Err(PayloadError::Empty));
        assert_eq!(parse(b" \n", None), Err(PayloadError::Empty));
        assert_eq!(parse(b"\xff\xfe{}", None), Err(PayloadError::NotUtf8));
        assert!(matches!(
            parse(br#"{"session_id": "x", "cwd": "/p"#, None),
            Err(PayloadError::NotJson(_))
        ));
        assert_eq!(parse(b"null", None), Err(PayloadError::NotObject("null")));
        assert_eq!(
            parse(br#"[{"cwd":"/p"}]"#, None),
            Err(PayloadError::NotObject("array"))
        );
        assert_eq!(parse(b"42", None), Err(PayloadError::NotObject("number")));
    }

    #[test]
    fn fields_of_the_wrong_type_count_as_absent() {
        let p = parse(
            br#"{"session_id": 7, "cwd": ["/p"], "transcript_path": null}"#,
            None,
        )
        .unwrap();
        assert_eq!(p.session_id, "");
        assert_eq!(p.cwd, None);
        assert_eq!(p.transcript_path, "");
        let p = parse(br#"{"workspace_roots": [1, "/r"], "cwd": false}"#, None).unwrap();
        assert_eq!((p.client, p.cwd), (Client::Cursor, None));
        let p = parse(br#"{"workspace_roots": "/r"}"#, None).unwrap();
        assert_eq!(p.cwd, None);
    }

    // Unix paths, which are not absolute on Windows (see the Windows test below).
    #[cfg(unix)]
    #[test]
    fn a_relative_or_empty_cwd_is_no_cwd() {
        let p = parse(br#"{"cwd": "code/shop"}"#, None).unwrap();
        assert_eq!(p.cwd, None);
        assert_eq!(p.relative_cwd.as_deref(), Some("code/shop"));
        let p = parse(br#"{"cwd": ""}"#, None).unwrap();
        assert_eq!((p.cwd, p.relative_cwd), (None, None));
        let p = parse(br#"{"cwd": "/p"}"#, None).unwrap();
        assert_eq!(p.relative_cwd, None);
        assert_eq!(
            parse(br#"{"workspace_roots": []}"#, None).unwrap().cwd,
            None
        );
    }

    #[cfg(windows)]
    #[test]
    fn a_windows_cwd_needs_its_drive_to_be_absolute() {
        let p = parse(br#"{"session_id": "s", "cwd": "C:\\code\\shop"}"#, None).unwrap();
        assert_eq!(p.cwd.as_deref(), Some(r"C:\code\shop"));
        assert_eq!(p.relative_cwd, None);
        // A root without a drive is relative to the current drive.
        let p = parse(br#"{"session_id": "s", "cwd": "/code/shop"}"#, None).unwrap();
        assert_eq!(p.cwd, None);
        assert_eq!(p.relative_cwd.as_deref(), Some("/code/shop"));
        let p = parse(
            br#"{"conversation_id": "c", "workspace_roots": ["C:\\a"], "cwd": "C:\\a\\sub"}"#,
            None,
        )
        .unwrap();
        assert_eq!(
            (p.client, p.cwd.as_deref()),
            (Client::Cursor, Some(r"C:\a\sub"))
        );
    }
}
