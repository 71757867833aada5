//! What one line of the client's input is: a message for rmcp, a line that
//! JSON-RPC answers with an error (and which error), or one it never answers
//! (a notification or a response). A good line costs one parse, as it did in
//! rmcp's own transport; only a line that fails it is looked at again
//! (docs/decisions/0040-malformed-mcp-input-gets-a-json-rpc-error.md).

use rmcp::model::{ClientJsonRpcMessage, RequestId};
use serde_json::{Map, Value, json};

use crate::scan::Scan;

/// Longest line (without its newline) the shim reads: a `write` of the
/// largest file the tools accept (4 MiB) fits even with every byte escaped
/// as `\u00XX` (24 MiB), and no longer request could reach the daemon,
/// whose messages are bounded at the same figure.
pub const MAX_LINE_BYTES: usize = berth_proto::MAX_MESSAGE_BYTES;

/// Deepest nesting of arrays and objects a line may have (the message's own
/// object is the first level): serde_json's parser refuses the next one.
pub const MAX_DEPTH: usize = 127;

/// JSON-RPC's codes for a line that is not JSON and for a message that is
/// not a valid request.
pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;

/// UTF-8's byte order mark, which RFC 8259 lets a parser ignore.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What to do with one line.
#[derive(Debug)]
pub enum Triage {
    /// A message rmcp takes.
    Message(Box<ClientJsonRpcMessage>),
    /// The JSON-RPC error (or, for a batch, errors) to answer with.
    Answer(Value),
    /// Nothing to answer; why, for the log.
    Ignore(String),
}

/// Sorts one line (without its newline and any `\r`).
pub fn triage(line: &[u8]) -> Triage {
    let line = line.strip_prefix(BOM).unwrap_or(line);
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Triage::Message(Box::new(message)),
        Err(e) => refuse(line, &e),
    }
}

/// The answer to a line longer than [`MAX_LINE_BYTES`], which the shim
/// discarded as it read it, with the id its scan found.
pub fn too_long(id: Option<RequestId>) -> Value {
    let mib = MAX_LINE_BYTES / (1024 * 1024);
    error(
        id.map(RequestId::into_json_value),
        INVALID_REQUEST,
        format!(
            "the line is longer than {mib} MiB and was discarded unread: berth-mcp reads \
             messages up to {mib} MiB, enough for a write of the largest file berth's tools \
             accept (4 MiB); send less in one message"
        ),
    )
}

/// A JSON-RPC error response.
pub fn error(id: Option<Value>, code: i32, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    })
}

/// Why a line rmcp cannot take is refused, or why it is left unanswered.
fn refuse(line: &[u8], parse: &serde_json::Error) -> Triage {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Triage::Ignore("a blank line".into());
    }
    if let Err(e) = std::str::from_utf8(line) {
        return Triage::Answer(error(
            None,
            PARSE_ERROR,
            format!(
                "the line is not UTF-8 (byte {} starts no character): send each JSON-RPC \
                 message as UTF-8 JSON on one line",
                e.valid_up_to()
            ),
        ));
    }
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        Err(e) => {
            let mut scan = Scan::default();
            scan.feed(line);
            let message = if scan.max_depth() > MAX_DEPTH {
                format!(
                    "the line nests arrays and objects deeper than {MAX_DEPTH} levels, which \
                     berth-mcp does not parse; no MCP message needs that many"
                )
            } else {
                format!(
                    "the line is not JSON ({e}): send each JSON-RPC message as JSON on one line"
                )
            };
            return Triage::Answer(error(None, PARSE_ERROR, message));
        }
    };
    match value {
        Value::Array(items) => batch(&items),
        value => match single(&value, &parse.to_string()) {
            Ok(answer) => Triage::Answer(answer),
            Err(why) => Triage::Ignore(why),
        },
    }
}

/// Most members of a batch answered one by one; a larger batch gets one
/// error, so a line of tiny members is not answered with many times its size.
pub const MAX_BATCH_ANSWERS: usize = 1000;

/// A batch: MCP dropped JSON-RPC batches in 2025-06-18, and berth-mcp takes
/// none. Each request in it gets its error, in one array, as JSON-RPC answers
/// a batch; an empty or very large batch one error.
fn batch(items: &[Value]) -> Triage {
    const WHY: &str = "batches are not supported (MCP removed them in protocol 2025-06-18): \
                       send each message on its own line";
    if items.is_empty() || items.len() > MAX_BATCH_ANSWERS {
        let what = if items.is_empty() {
            "an empty batch".to_string()
        } else {
            format!("a batch of {} messages", items.len())
        };
        return Triage::Answer(error(None, INVALID_REQUEST, format!("{what}: {WHY}")));
    }
    let answers: Vec<Value> = items
        .iter()
        .filter_map(|item| match item.as_object() {
            Some(object) if is_unanswered(object) => None,
            object => Some(error(
                object.and_then(readable_id),
                INVALID_REQUEST,
                WHY.to_string(),
            )),
        })
        .collect();
    if answers.is_empty() {
        Triage::Ignore("a batch of notifications and responses".into())
    } else {
        Triage::Answer(Value::Array(answers))
    }
}

/// The error a JSON value that is not one valid message gets, or why it gets
/// none.
fn single(value: &Value, parse: &str) -> Result<Value, String> {
    let Some(object) = value.as_object() else {
        return Ok(error(
            None,
            INVALID_REQUEST,
            format!(
                "the line is {} in JSON, not a JSON-RPC message: send an object with \
                 \"jsonrpc\": \"2.0\", \"method\" and, for a request, \"id\"",
                kind(value)
            ),
        ));
    };
    if is_unanswered(object) {
        return Err(format!("an invalid notification or response ({parse})"));
    }
    let id = readable_id(object);
    let problem = if object.get("jsonrpc") != Some(&json!("2.0")) {
        "\"jsonrpc\" must be \"2.0\"".to_string()
    } else if object.get("id").is_some() && id.is_none() {
        "\"id\" must be a string or an integer".to_string()
    } else if !object.get("method").is_some_and(Value::is_string) {
        "\"method\" must be a string".to_string()
    } else if object.get("params").is_some_and(|p| !p.is_object()) {
        "\"params\" must be an object".to_string()
    } else {
        format!("it does not fit the method's shape ({parse})")
    };
    Ok(error(
        id,
        INVALID_REQUEST,
        format!("not a valid JSON-RPC request: {problem}"),
    ))
}

/// A notification (a `method` and no `id`) or a response (`result` or
/// `error`, no `method`): JSON-RPC answers neither, even when invalid.
fn is_unanswered(object: &Map<String, Value>) -> bool {
    let method = object.get("method");
    let notification = object.get("id").is_none() && method.is_some_and(Value::is_string);
    let response =
        method.is_none() && (object.contains_key("result") || object.contains_key("error"));
    notification || response
}

/// The message's id, when it is one a response can carry (a string or an
/// integer, as rmcp reads ids).
fn readable_id(object: &Map<String, Value>) -> Option<Value> {
    let id = object.get("id")?;
    serde_json::from_value::<RequestId>(id.clone())
        .ok()
        .map(RequestId::into_json_value)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &[u8]) -> Value {
        match triage(line) {
            Triage::Answer(answer) => answer,
            other => panic!("{:?} got {other:?}", String::from_utf8_lossy(line)),
        }
    }

    fn code_and_id(line: &[u8]) -> (i64, Value) {
        let a = answer(line);
        assert_eq!(a["jsonrpc"], "2.0", "{a}");
        (a["error"]["code"].as_i64().unwrap(), a["id"].clone())
    }

    #[test]
    fn good_messages_go_to_rmcp() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}",
            br#"{"jsonrpc":"2.0","id":2,"method":"some/extension","params":{}}"#,
        ] {
            assert!(matches!(triage(line), Triage::Message(_)), "{line:?}");
        }
    }

    #[test]
    fn lines_that_are_not_json_are_parse_errors_with_a_null_id() {
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xed\xa0\x80\"}",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
            b"hello",
            br#"{"jsonrpc":"2.0","id":1,"#,
        ] {
            assert_eq!(code_and_id(line), (-32700, Value::Null), "{line:?}");
        }
        let t = answer(b"ab\xffcd")["error"]["message"].to_string();
        assert!(t.contains("not UTF-8") && t.contains("byte 2"), "{t}");
        let t = answer(br#"{"x":"\ud800"}"#)["error"]["message"].to_string();
        assert!(t.contains("not JSON") && t.contains("escape"), "{t}");
    }

    #[test]
    fn the_depth_bound_is_the_parsers_own() {
        let nest = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(serde_json::from_str::<Value>(&nest(MAX_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&nest(MAX_DEPTH + 1)).is_err());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"ls","arguments":{{"path":{}}}}}}}"#,
            nest(100_000)
        );
        let a = answer(deep.as_bytes());
        assert_eq!(a["error"]["code"], -32700);
        assert_eq!(a["id"], Value::Null);
        let t = a["error"]["message"].as_str().unwrap();
        assert!(t.contains("deeper than 127 levels"), "{t}");
    }

    #[test]
    fn json_that_is_no_valid_request_gets_invalid_request_with_its_id() {
        let cases: [(&[u8], Value, &str); 8] = [
            (
                br#"{"id":7,"method":"ping"}"#,
                json!(7),
                "\"jsonrpc\" must be",
            ),
            (
                br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#,
                json!("x"),
                "\"jsonrpc\"",
            ),
            (
                br#"{"jsonrpc":"2.0","id":8,"method":5}"#,
                json!(8),
                "\"method\" must be",
            ),
            (
                br#"{"jsonrpc":"2.0","id":9}"#,
                json!(9),
                "\"method\" must be",
            ),
            (
                br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"x"}"#,
                json!(10),
                "\"params\"",
            ),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                Value::Null,
                "\"id\" must be",
            ),
            (
                br#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
                Value::Null,
                "\"method\"",
            ),
            (b"42", Value::Null, "a number in JSON"),
        ];
        for (line, id, says) in cases {
            let a = answer(line);
            assert_eq!(a["error"]["code"], -32600, "{a}");
            assert_eq!(a["id"], id, "{a}");
            let t = a["error"]["message"].as_str().unwrap();
            assert!(t.contains(says), "{t}");
        }
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for line in [
            &br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#[..],
            br#"{"method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
            br#"{"jsonrpc":"2.0","error":"x"}"#,
            b"",
            b"  \t",
        ] {
            assert!(matches!(triage(line), Triage::Ignore(_)), "{line:?}");
        }
    }

    #[test]
    fn a_batch_gets_one_error_per_request_in_an_array() {
        let a = answer(
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},3,{"jsonrpc":"2.0","id":"b","method":"tools/list"}]"#,
        );
        let ids: Vec<&Value> = a.as_array().unwrap().iter().map(|e| &e["id"]).collect();
        assert_eq!(ids, [&json!(1), &Value::Null, &json!("b")]);
        assert!(
            a[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("batches are not supported")
        );
        assert_eq!(code_and_id(b"[]"), (-32600, Value::Null));
        let huge = format!("[{}1]", "1,".repeat(MAX_BATCH_ANSWERS));
        assert_eq!(code_and_id(huge.as_bytes()), (-32600, Value::Null));
        assert!(matches!(
            triage(br#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#),
            Triage::Ignore(_)
        ));
    }

    #[test]
    fn a_too_long_line_carries_the_id_its_scan_found() {
        let a = too_long(Some(RequestId::Number(12)));
        assert_eq!(a["id"], 12);
        assert_eq!(a["error"]["code"], -32600);
        assert!(a["error"]["message"].as_str().unwrap().contains("32 MiB"));
        assert_eq!(too_long(None)["id"], Value::Null);
    }
}
