//! What the relay does with one line from each side
//! (docs/decisions/0051-a-roots-relay-for-wrapped-servers.md). No I/O: the
//! pump hands each line in and writes what comes back.
//!
//! Only lines that mention one of a few words are parsed at all; every
//! other line, and every line that is not a JSON object (a batch, a log line
//! printed by mistake, malformed JSON), passes as it came.

use std::collections::VecDeque;

use memchr::memmem;
use serde_json::value::RawValue;

use super::fields::{Fields, raw};

/// The per-request capabilities of the 2026-07-28 protocol, in `_meta`.
const ERA_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The client requests a 2026-07-28 server may answer with an
/// `input_required` result that asks for roots.
const RETRIED: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// A request kept for answering its roots rounds is at most this long; a
/// longer one is left to the client's own roots.
const MAX_KEPT_BYTES: usize = 256 * 1024;
/// At most this many requests are kept, and this many stripped rounds
/// wait for the client's retry; the oldest goes first.
const MAX_KEPT: usize = 32;
/// Rounds of `input_required` the relay answers alone for one request
/// before it leaves the next to the client.
const MAX_ROUNDS: u32 = 10;

/// What becomes of a line from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum FromClient {
    /// It goes to the server as it came.
    Pass,
    /// This goes to the server instead (a whole line, newline included).
    Replace(Vec<u8>),
    /// Nothing goes to the server.
    Drop,
}

/// What becomes of a line from the server.
#[derive(Debug, PartialEq, Eq)]
pub enum FromServer {
    /// It goes to the client as it came.
    Pass,
    /// This goes to the client instead.
    ToClient(Vec<u8>),
    /// This goes back to the server, and nothing to the client.
    ToServer(Vec<u8>),
}

/// One folder the relay names as a root.
#[derive(Debug, Clone)]
pub struct Root {
    /// Its `file://` URI.
    pub uri: String,
    /// The name shown for it.
    pub name: String,
}

/// The relay's state between lines: its answer, and what it remembers of
/// the 2026-07-28 exchanges it takes part in.
#[derive(Debug)]
pub struct Rules {
    /// `{"roots":[...]}`, the result of every `roots/list` it answers.
    answer: Box<RawValue>,
    /// Client requests of the 2026-07-28 protocol still in flight, by raw id.
    kept: VecDeque<Kept>,
    /// Rounds whose roots requests were taken out before the client saw them.
    stripped: VecDeque<Stripped>,
}

#[derive(Debug)]
struct Kept {
    id: String,
    line: Vec<u8>,
    rounds: u32,
}

#[derive(Debug)]
struct Stripped {
    request_state: Option<String>,
    /// The keys left for the client to answer.
    others: Vec<String>,
    /// The keys the relay answers in the client's retry.
    roots: Vec<String>,
}

impl Rules {
    /// Rules that answer every roots request with `roots`.
    pub fn new(roots: &[Root]) -> Rules {
        let list: Vec<_> = roots
            .iter()
            .map(|r| serde_json::json!({"uri": r.uri, "name": r.name}))
            .collect();
        Rules {
            answer: raw(serde_json::json!({ "roots": list }).to_string()),
            kept: VecDeque::new(),
            stripped: VecDeque::new(),
        }
    }

    /// A line from the client, without its newline.
    pub fn client_line(&mut self, line: &[u8]) -> FromClient {
        let words = [
            "initialize",
            "roots/list_changed",
            ERA_CAPABILITIES,
            "inputResponses",
            "requestState",
        ];
        if !mentions(line, &words) {
            return FromClient::Pass;
        }
        let Some(mut msg) = Fields::parse(line) else {
            return FromClient::Pass;
        };
        let method = msg.str("method");
        let is_request = msg.has("id");
        if method.as_deref() == Some("notifications/roots/list_changed") && !is_request {
            // berth's roots do not change with the client's.
            return FromClient::Drop;
        }
        let (Some(method), true) = (method, is_request) else {
            return FromClient::Pass;
        };
        let Some(mut params) = msg.get("params").and_then(Fields::of) else {
            return FromClient::Pass;
        };
        let mut changed = false;
        if method == "initialize" {
            changed |= declare_roots(&mut params, "capabilities");
        }
        let mut era = false;
        if let Some(mut meta) = params.get("_meta").and_then(Fields::of) {
            era = meta.has(ERA_CAPABILITIES);
            if declare_roots(&mut meta, ERA_CAPABILITIES) {
                params.set("_meta", meta.to_raw());
                changed = true;
            }
        }
        changed |= self.answer_in_retry(&mut params);
        let out = if changed {
            msg.set("params", params.to_raw());
            Some(msg.to_text().into_bytes())
        } else {
            None
        };
        if era && RETRIED.contains(&method.as_str()) {
            let id = msg.get("id").map(|id| id.get().to_string());
            let line = out.clone().unwrap_or_else(|| line.to_vec());
            if let (Some(id), true) = (id, line.len() <= MAX_KEPT_BYTES) {
                self.keep(id, line);
            }
        }
        match out {
            Some(mut out) => {
                out.push(b'\n');
                FromClient::Replace(out)
            }
            None => FromClient::Pass,
        }
    }

    /// A line from the server, without its newline.
    pub fn server_line(&mut self, line: &[u8]) -> FromServer {
        let asks = mentions(line, &["roots/list"]);
        if !asks && self.kept.is_empty() {
            return FromServer::Pass;
        }
        let Some(msg) = Fields::parse(line) else {
            return FromServer::Pass;
        };
        let Some(id) = msg.get("id") else {
            return FromServer::Pass;
        };
        match msg.str("method") {
            Some(m) if m == "roots/list" => {
                let mut answer = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
                    id.get(),
                    self.answer.get()
                )
                .into_bytes();
                answer.push(b'\n');
                FromServer::ToServer(answer)
            }
            Some(_) => FromServer::Pass,
            None if msg.has("method") => FromServer::Pass,
            None => {
                let id = id.get().to_string();
                let asked = if asks { self.input_round(&msg) } else { None };
                match asked {
                    Some(round) => self.answer_round(&id, &msg, round),
                    None => {
                        // The request is done; its kept copy goes.
                        self.kept.retain(|k| k.id != id);
                        FromServer::Pass
                    }
                }
            }
        }
    }

    /// The roots requests of an `input_required` result, if it has any.
    fn input_round(&self, msg: &Fields) -> Option<Round> {
        let result = Fields::of(msg.get("result")?)?;
        if result.str("resultType").as_deref() != Some("input_required") {
            return None;
        }
        let requests = Fields::of(result.get("inputRequests")?)?;
        let mut round = Round {
            request_state: result.str("requestState"),
            roots: Vec::new(),
            others: Vec::new(),
        };
        for key in requests.keys() {
            let asks_roots = requests
                .get(key)
                .and_then(Fields::of)
                .and_then(|r| r.str("method"))
                .is_some_and(|m| m == "roots/list");
            if asks_roots {
                round.roots.push(key.to_string());
            } else {
                round.others.push(key.to_string());
            }
        }
        (!round.roots.is_empty()).then_some(round)
    }

    /// Answers a round's roots requests: alone, by retrying the kept
    /// request, when roots are all it asks; else by taking them out of what
    /// the client sees and adding the answers to the client's retry.
    fn answer_round(&mut self, id: &str, msg: &Fields, round: Round) -> FromServer {
        if round.others.is_empty()
            && let Some(retry) = self.retry(id, &round)
        {
            return FromServer::ToServer(retry);
        }
        if round.others.is_empty() && round.request_state.is_none() {
            // Nothing would be left for the client to send back: it answers
            // with its own roots.
            self.kept.retain(|k| k.id != id);
            return FromServer::Pass;
        }
        let Some(mut result) = msg.get("result").and_then(Fields::of) else {
            return FromServer::Pass;
        };
        let Some(mut requests) = result.get("inputRequests").and_then(Fields::of) else {
            return FromServer::Pass;
        };
        requests.retain(|k, _| !round.roots.iter().any(|r| r == k));
        result.set("inputRequests", requests.to_raw());
        let mut msg = msg.clone();
        msg.set("result", result.to_raw());
        self.kept.retain(|k| k.id != id);
        if self.stripped.len() == MAX_KEPT {
            self.stripped.pop_front();
        }
        self.stripped.push_back(Stripped {
            request_state: round.request_state,
            others: round.others,
            roots: round.roots,
        });
        let mut out = msg.to_text().into_bytes();
        out.push(b'\n');
        FromServer::ToClient(out)
    }

    /// The kept request `id` again, with the roots answers and the round's
    /// state, as the client would retry it.
    fn retry(&mut self, id: &str, round: &Round) -> Option<Vec<u8>> {
        let responses = self.responses(&round.roots);
        let kept = self.kept.iter_mut().find(|k| k.id == id)?;
        if kept.rounds >= MAX_ROUNDS {
            return None;
        }
        let mut msg = Fields::parse(&kept.line)?;
        let mut params = Fields::of(msg.get("params")?)?;
        params.set("inputResponses", responses);
        match &round.request_state {
            Some(s) => params.set("requestState", raw(serde_json::to_string(s).ok()?)),
            None => params.remove("requestState"),
        }
        msg.set("params", params.to_raw());
        let mut line = msg.to_text().into_bytes();
        kept.line = line.clone();
        kept.rounds += 1;
        line.push(b'\n');
        Some(line)
    }

    /// Adds the relay's answers to a client retry of a round it stripped.
    fn answer_in_retry(&mut self, params: &mut Fields) -> bool {
        if self.stripped.is_empty() {
            return false;
        }
        let state = params.str("requestState");
        let answered = params.get("inputResponses").and_then(Fields::of);
        let has = |key: &str| answered.as_ref().is_some_and(|a| a.has(key));
        let Some(at) = self
            .stripped
            .iter()
            .position(|s| s.request_state == state && s.others.iter().all(|k| has(k)))
        else {
            return false;
        };
        let Some(s) = self.stripped.remove(at) else {
            return false;
        };
        let mut responses = answered.unwrap_or_default();
        for key in &s.roots {
            responses.set(key, self.answer.clone());
        }
        params.set("inputResponses", responses.to_raw());
        true
    }

    /// `{"key": {"roots": [...]}, ...}` for these keys.
    fn responses(&self, keys: &[String]) -> Box<RawValue> {
        let mut f = Fields::default();
        for k in keys {
            f.set(k, self.answer.clone());
        }
        f.to_raw()
    }

    fn keep(&mut self, id: String, line: Vec<u8>) {
        self.kept.retain(|k| k.id != id);
        if self.kept.len() == MAX_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(Kept {
            id,
            line,
            rounds: 0,
        });
    }
}

/// The roots requests of one `input_required` round.
#[derive(Debug)]
struct Round {
    request_state: Option<String>,
    roots: Vec<String>,
    others: Vec<String>,
}

/// Adds `roots` to the capabilities object at `key` of `obj` when the
/// client did not declare it; a client's own declaration stays as it is.
/// Whether it changed anything.
fn declare_roots(obj: &mut Fields, key: &str) -> bool {
    let mut caps = match obj.get(key) {
        None => Fields::default(),
        Some(v) => match Fields::of(v) {
            Some(c) => c,
            // Not an object: the server will refuse it as it would have.
            None => return false,
        },
    };
    if caps.has("roots") {
        return false;
    }
    caps.set("roots", raw(r#"{"listChanged":false}"#.to_string()));
    obj.set(key, caps.to_raw());
    true
}

/// Whether `line` holds any of `words` (a cheap test before any parse).
fn mentions(line: &[u8], words: &[&str]) -> bool {
    words
        .iter()
        .any(|w| memmem::find(line, w.as_bytes()).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules::new(&[Root {
            uri: "file:///h/notes".into(),
            name: "notes".into(),
        }])
    }

    fn to_server(r: FromServer) -> String {
        match r {
            FromServer::ToServer(b) => String::from_utf8(b).unwrap(),
            other => panic!("expected an answer to the server, got {other:?}"),
        }
    }

    fn replaced(r: FromClient) -> String {
        match r {
            FromClient::Replace(b) => String::from_utf8(b).unwrap(),
            other => panic!("expected a replaced line, got {other:?}"),
        }
    }

    #[test]
    fn a_roots_request_is_answered_with_the_exact_id() {
        for id in [
            "1",
            "\"abc\"",
            "null",
            "123456789012345678901234567890123",
            "-0.5e7",
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"roots/list"}}"#);
            let got = to_server(rules().server_line(line.as_bytes()));
            assert_eq!(
                got,
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"roots\":[{{\"uri\":\"file:///h/notes\",\"name\":\"notes\"}}]}}}}\n"
                )
            );
        }
    }

    #[test]
    fn a_roots_notification_and_other_lines_pass() {
        let mut r = rules();
        for line in [
            r#"{"jsonrpc":"2.0","method":"roots/list"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"roots/list"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"roots/list""#,
            "roots/list is what I call",
            r#"{"jsonrpc":"2.0","id":1,"result":{"note":"roots/list"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ] {
            assert_eq!(r.server_line(line.as_bytes()), FromServer::Pass, "{line}");
        }
    }

    #[test]
    fn the_clients_roots_change_never_reaches_the_server() {
        let mut r = rules();
        let note = br#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
        assert_eq!(r.client_line(note), FromClient::Drop);
        let odd = br#"{"jsonrpc":"2.0","id":4,"method":"notifications/roots/list_changed"}"#;
        assert_eq!(r.client_line(odd), FromClient::Pass);
    }

    #[test]
    fn initialize_declares_roots_when_the_client_did_not() {
        let mut r = rules();
        let line = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"codex","version":"1"}}}"#;
        assert_eq!(
            replaced(r.client_line(line)),
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"elicitation\":{},\"roots\":{\"listChanged\":false}},\"clientInfo\":{\"name\":\"codex\",\"version\":\"1\"}}}\n"
        );
        let bare = br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#;
        assert_eq!(
            replaced(r.client_line(bare)),
            "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"capabilities\":{\"roots\":{\"listChanged\":false}}}}\n"
        );
    }

    #[test]
    fn initialize_with_roots_or_odd_shapes_passes() {
        let mut r = rules();
        for line in [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true}}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":7}}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"#,
        ] {
            assert_eq!(r.client_line(line.as_bytes()), FromClient::Pass, "{line}");
        }
    }

    const DISCOVER_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

    #[test]
    fn a_2026_request_declares_roots_in_its_capabilities() {
        let mut r = rules();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{DISCOVER_META}}}}}"#
        );
        let got = replaced(r.client_line(line.as_bytes()));
        assert!(
            got.contains(r#""io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{"listChanged":false}}"#),
            "{got}"
        );
    }

    fn call(id: &str, extra: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{DISCOVER_META},"name":"read","arguments":{{"n":1.50}}{extra}}}}}"#
        )
    }

    #[test]
    fn a_2026_round_that_asks_only_roots_is_answered_by_retrying() {
        let mut r = rules();
        let _ = r.client_line(call("7", "").as_bytes());
        let round = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"s1"}}"#;
        let retry = to_server(r.server_line(round));
        let v: serde_json::Value = serde_json::from_str(&retry).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["requestState"], "s1");
        assert_eq!(
            v["params"]["inputResponses"]["r"]["roots"][0]["uri"],
            "file:///h/notes"
        );
        assert!(retry.contains(r#""arguments":{"n":1.50}"#), "{retry}");
        // The final answer goes to the client, and the kept copy with it.
        let done = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert_eq!(r.server_line(done), FromServer::Pass);
        assert!(r.kept.is_empty());
    }

    #[test]
    fn a_2026_round_asks_the_relay_at_most_ten_times() {
        let mut r = rules();
        let _ = r.client_line(call("7", "").as_bytes());
        let round = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s"}}"#;
        for _ in 0..MAX_ROUNDS {
            let _ = to_server(r.server_line(round));
        }
        // Then the client sees the round, without the roots request, and
        // its retry carries the relay's answer.
        let FromServer::ToClient(seen) = r.server_line(round) else {
            panic!("the eleventh round goes to the client");
        };
        let seen: serde_json::Value = serde_json::from_slice(&seen).unwrap();
        assert_eq!(seen["result"]["inputRequests"], serde_json::json!({}));
        let retry = replaced(r.client_line(call("8", r#","requestState":"s""#).as_bytes()));
        let v: serde_json::Value = serde_json::from_str(&retry).unwrap();
        assert_eq!(
            v["params"]["inputResponses"]["r"]["roots"][0]["name"],
            "notes"
        );
    }

    #[test]
    fn a_2026_round_that_also_asks_the_person_leaves_that_to_the_client() {
        let mut r = rules();
        let _ = r.client_line(call("7", "").as_bytes());
        let round = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"},"e":{"method":"elicitation/create","params":{"message":"ok?"}}}}}"#;
        let FromServer::ToClient(seen) = r.server_line(round) else {
            panic!("the client must see the elicitation");
        };
        let seen: serde_json::Value = serde_json::from_slice(&seen).unwrap();
        assert_eq!(
            seen["result"]["inputRequests"],
            serde_json::json!({"e":{"method":"elicitation/create","params":{"message":"ok?"}}})
        );
        // A retry that answers something else is not this round's.
        let other = call("8", r#","inputResponses":{"x":{}}"#);
        let v: serde_json::Value =
            serde_json::from_str(&replaced(r.client_line(other.as_bytes()))).unwrap();
        assert_eq!(v["params"]["inputResponses"], serde_json::json!({"x":{}}));
        let retry = call("9", r#","inputResponses":{"e":{"action":"accept"}}"#);
        let v: serde_json::Value =
            serde_json::from_str(&replaced(r.client_line(retry.as_bytes()))).unwrap();
        assert_eq!(v["params"]["inputResponses"]["e"]["action"], "accept");
        assert_eq!(
            v["params"]["inputResponses"]["r"]["roots"][0]["uri"],
            "file:///h/notes"
        );
        assert!(r.stripped.is_empty());
    }

    #[test]
    fn a_round_for_a_request_not_kept_and_without_state_goes_to_the_client_unchanged() {
        let mut r = rules();
        let round = br#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}}"#;
        assert_eq!(r.server_line(round), FromServer::Pass);
    }

    #[test]
    fn memory_stays_bounded_under_a_flood_of_kept_requests_and_rounds() {
        let mut r = rules();
        for i in 0..10_000 {
            let _ = r.client_line(call(&i.to_string(), "").as_bytes());
            let round = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"resultType":"input_required","inputRequests":{{"r":{{"method":"roots/list"}},"e":{{"method":"elicitation/create"}}}},"requestState":"{i}"}}}}"#,
                i + 1_000_000
            );
            let _ = r.server_line(round.as_bytes());
        }
        assert!(r.kept.len() <= MAX_KEPT && r.stripped.len() <= MAX_KEPT);
    }
}
