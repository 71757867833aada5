//! The session's question in the client's own form (MCP elicitation, form mode): what the
//! form offers, how an answer is read, and the request state of the 2026-07-28 era
//! (docs/decisions/0049-the-question-in-the-clients-own-form.md,
//! docs/decisions/0050-the-forms-request-state-is-sealed-by-the-shim.md).
//!
//! The daemon decides whether to ask and acts on the answer; this module only translates
//! between its offer and the client's form, and refuses every answer the form did not offer.

use std::time::Duration;

use berth_proto::pb;
use rmcp::model::{
    ClientCapabilities, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    RequestStateCodec, SealOptions,
};
use serde_json::{Value, json};

/// The choice that asks for a new workspace, named in the second field.
pub const NEW: &str = "a new workspace";
/// The choice that leaves the project as it is.
pub const NOT_NOW: &str = "not now";
/// The choice that confirms sharing the folder with the overlapping workspaces.
pub const SHARE: &str = "share the folder";
/// The choice that refuses it.
pub const DO_NOT_SHARE: &str = "do not share";
/// The key of the one input request of the 2026-07-28 era.
pub const INPUT_KEY: &str = "berth-workspace";

/// The largest answer read, as JSON: a workspace name is 40 characters at most, so anything
/// near this is not an answer to this form.
const MAX_ANSWER_BYTES: usize = 4096;

/// Whether the client declared form elicitation (an empty `elicitation` object means form mode,
/// as the older protocol revisions define it).
pub fn can_show_forms(caps: Option<&ClientCapabilities>) -> bool {
    caps.and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The question: "Which workspace should <project> use?", one choice of the proposal first, the
/// device's workspaces, a new workspace (named in the second field) and "not now".
pub fn workspace_form(offer: &pb::OpenQuestionReply) -> ElicitRequestParams {
    let mut values = Vec::new();
    let mut titles = Vec::new();
    for w in &offer.workspaces {
        values.push(w.clone());
        titles.push(if *w == offer.proposal {
            format!("{w} (proposed by the project's file)")
        } else {
            w.clone()
        });
    }
    values.extend([NEW.to_string(), NOT_NOW.to_string()]);
    titles.extend([
        "a new workspace (type its name below)".to_string(),
        "not now".to_string(),
    ]);
    let schema = json!({
        "type": "object",
        "properties": {
            "workspace": {
                "type": "string",
                "title": "Workspace",
                "description": "berth keeps this project's files and sessions in the workspace chosen",
                "enum": values,
                "enumNames": titles,
            },
            "name": {
                "type": "string",
                "title": "New workspace's name",
                "description": "only for \"a new workspace\": lowercase letters, digits and dashes, not starting with a dash",
                "maxLength": offer.max_name_chars,
            },
        },
        "required": ["workspace"],
    });
    form(
        format!(
            "Which workspace should {} use?",
            berth_vocab::text::escaped(&offer.project)
        ),
        schema,
    )
}

/// The second question, after an answer whose folder other workspaces' roots overlap.
pub fn overlap_form(overlap: &str) -> ElicitRequestParams {
    let schema = json!({
        "type": "object",
        "properties": {
            "share": {
                "type": "string",
                "title": "Share the folder?",
                "enum": [SHARE, DO_NOT_SHARE],
            },
        },
        "required": ["share"],
    });
    form(
        format!(
            "{}. Share it, or leave everything as it is?",
            berth_vocab::text::escaped(overlap)
        ),
        schema,
    )
}

fn form(message: String, schema: Value) -> ElicitRequestParams {
    let requested_schema: ElicitationSchema =
        serde_json::from_value(schema).expect("the form's schema is a valid elicitation schema");
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    }
}

/// What the user did with the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// An answer the form offered, for the daemon.
    Answer(pb::AnswerQuestionRequest),
    /// No usable answer (declined, cancelled, or one the form did not offer): why.
    NoAnswer(String),
}

/// Reads the first form's result: exactly the fields it asked for, one of the values it
/// offered, and a name only with "a new workspace".
pub fn read_workspace(result: &ElicitResult, offer: &pb::OpenQuestionReply) -> Reading {
    let fields = match accepted(result, &["workspace", "name"]) {
        Ok(f) => f,
        Err(why) => return Reading::NoAnswer(why),
    };
    let Some(Value::String(choice)) = fields.get("workspace") else {
        return Reading::NoAnswer("the answer has no workspace chosen".into());
    };
    let name = match fields.get("name") {
        None => "",
        Some(Value::String(n)) => n.trim(),
        Some(_) => return Reading::NoAnswer("the new workspace's name is not text".into()),
    };
    let mut answer = pb::AnswerQuestionRequest::default();
    match choice.as_str() {
        NEW if name.is_empty() => {
            return Reading::NoAnswer("a new workspace was chosen without its name".into());
        }
        NEW => answer.new_name = name.to_string(),
        _ if !name.is_empty() => {
            return Reading::NoAnswer("a name was typed for a choice that takes none".into());
        }
        NOT_NOW => answer.not_now = true,
        w if offer.workspaces.iter().any(|o| o == w) => answer.workspace = w.to_string(),
        _ => return Reading::NoAnswer("the answer is not one of the choices offered".into()),
    }
    Reading::Answer(answer)
}

/// Reads the second form's result: whether the user confirmed sharing the folder.
pub fn read_share(result: &ElicitResult) -> Result<bool, String> {
    let fields = accepted(result, &["share"])?;
    match fields.get("share") {
        Some(Value::String(s)) if s == SHARE => Ok(true),
        Some(Value::String(s)) if s == DO_NOT_SHARE => Ok(false),
        _ => Err("the answer is not one of the choices offered".into()),
    }
}

/// An accepted result's fields, when they are an object of at most `known` fields, small
/// enough to be an answer to this form.
fn accepted<'a>(
    result: &'a ElicitResult,
    known: &[&str],
) -> Result<&'a serde_json::Map<String, Value>, String> {
    match result.action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return Err("the user declined the form".into()),
        _ => return Err("the form was cancelled".into()),
    }
    let Some(Value::Object(fields)) = &result.content else {
        return Err("the accepted form carries no answer".into());
    };
    let size = serde_json::to_string(fields).map_or(usize::MAX, |t| t.len());
    if size > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answer is {size} bytes, larger than any answer to this form"
        ));
    }
    if let Some(extra) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!(
            "the answer has a field the form did not ask for ({})",
            berth_vocab::text::escaped(extra)
        ));
    }
    Ok(fields)
}

/// An `ElicitResult` from a 2026-07-28 retry's `inputResponses` value.
pub fn elicit_result(value: &Value) -> Result<ElicitResult, String> {
    if serde_json::to_string(value).map_or(usize::MAX, |t| t.len()) > MAX_ANSWER_BYTES {
        return Err("the answer is larger than any answer to this form".into());
    }
    serde_json::from_value(value.clone())
        .map_err(|e| format!("the answer is not a form's result: {e}"))
}

/// Which question a request state stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Round {
    /// The first: which workspace.
    Workspace(pb::OpenQuestionReply),
    /// The second: share the folder with the overlapping workspaces, for this answer.
    Overlap(pb::AnswerQuestionRequest),
}

/// The request state of the 2026-07-28 era: sealed with a key only this process holds, bound
/// to the session and to the tool call it interrupted, and good once.
pub struct States {
    codec: RequestStateCodec,
    /// The one state the client may bring back now, by its nonce.
    outstanding: Option<(String, Round)>,
    /// Nonces already brought back (a replay of one is named as such).
    used: Vec<String>,
}

/// Why a request state was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not sealed by this process for this session and call (forged, changed, or from
    /// another session), or past its time.
    Invalid(String),
    /// Sealed here, and already brought back once.
    Replayed,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Invalid(why) => write!(
                f,
                "berth: the requestState is not one this server issued for this session and call ({why}); nothing was changed. Call the tool again without requestState"
            ),
            Refused::Replayed => f.write_str(
                "berth: this requestState was already used; nothing was changed. Call the tool again without requestState",
            ),
        }
    }
}

impl States {
    /// A fresh key from the operating system's random source.
    pub fn new() -> Result<States, String> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("no random numbers for a key: {e}"))?;
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(|e| e.to_string())?;
        Ok(States {
            codec,
            outstanding: None,
            used: Vec::new(),
        })
    }

    /// Seals `round` for `binding` (the session and the call), good for `ttl`; any state
    /// sealed before it is no longer good.
    pub fn seal(&mut self, round: Round, binding: &[u8], ttl: Duration) -> Result<String, String> {
        let mut n = [0u8; 16];
        getrandom::fill(&mut n).map_err(|e| format!("no random numbers for a nonce: {e}"))?;
        let nonce: String = n.iter().map(|b| format!("{b:02x}")).collect();
        let sealed = self.codec.seal_with(
            nonce.as_bytes(),
            &SealOptions::new().associated_data(binding).ttl(ttl),
        );
        if let Some((old, _)) = self.outstanding.replace((nonce, round)) {
            self.used.push(old);
        }
        Ok(sealed)
    }

    /// Opens a state the client brought back for `binding`: its round, once.
    pub fn open(&mut self, sealed: &str, binding: &[u8]) -> Result<Round, Refused> {
        if sealed.len() > MAX_ANSWER_BYTES {
            return Err(Refused::Invalid(
                "it is far longer than any berth issues".into(),
            ));
        }
        let nonce = self
            .codec
            .open_with(sealed, binding)
            .map_err(|e| Refused::Invalid(e.to_string()))?;
        let nonce = String::from_utf8(nonce).map_err(|_| Refused::Invalid("not text".into()))?;
        match self.outstanding.take() {
            Some((n, round)) if n == nonce => {
                self.used.push(n);
                Ok(round)
            }
            other => {
                self.outstanding = other;
                if self.used.contains(&nonce) {
                    Err(Refused::Replayed)
                } else {
                    Err(Refused::Invalid("it is not the one outstanding".into()))
                }
            }
        }
    }
}

/// What binds a state to its session and call: the session's id, the tool and its arguments
/// (the arguments are an object whose keys serialise in order).
pub fn binding(session: &str, tool: &str, args: &serde_json::Map<String, Value>) -> Vec<u8> {
    let args = serde_json::to_string(args).unwrap_or_default();
    format!("berth-mcp question\n{session}\n{tool}\n{args}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer() -> pb::OpenQuestionReply {
        pb::OpenQuestionReply {
            ask: true,
            project: "/src/p".into(),
            proposal: "team".into(),
            workspaces: vec!["team".into(), "default".into()],
            wait_secs: 300,
            max_name_chars: 40,
        }
    }

    fn accept(content: Value) -> ElicitResult {
        ElicitResult::new(ElicitationAction::Accept).with_content(content)
    }

    #[test]
    fn an_empty_elicitation_object_means_forms() {
        let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).unwrap();
        assert!(can_show_forms(Some(&caps(json!({"elicitation": {}})))));
        assert!(can_show_forms(Some(&caps(
            json!({"elicitation": {"form": {}, "url": {}}})
        ))));
        assert!(!can_show_forms(Some(&caps(
            json!({"elicitation": {"url": {}}})
        ))));
        assert!(!can_show_forms(Some(&caps(json!({"roots": {}})))));
        assert!(!can_show_forms(None));
    }

    #[test]
    fn the_form_offers_the_proposal_first_then_the_workspaces_a_new_one_and_not_now() {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = workspace_form(&offer())
        else {
            panic!("not a form")
        };
        assert_eq!(message, "Which workspace should /src/p use?");
        let s = serde_json::to_value(requested_schema).unwrap();
        let w = &s["properties"]["workspace"];
        assert_eq!(
            w["enum"],
            json!(["team", "default", "a new workspace", "not now"])
        );
        assert_eq!(w["enumNames"][0], "team (proposed by the project's file)");
        assert_eq!(s["required"], json!(["workspace"]));
        assert_eq!(s["properties"]["name"]["maxLength"], 40);
    }

    #[test]
    fn only_answers_the_form_offered_are_read() {
        let o = offer();
        let read = |v: Value| read_workspace(&accept(v), &o);
        let Reading::Answer(a) = read(json!({"workspace": "default"})) else {
            panic!()
        };
        assert_eq!(a.workspace, "default");
        let Reading::Answer(a) = read(json!({"workspace": NEW, "name": "fresh"})) else {
            panic!()
        };
        assert_eq!(a.new_name, "fresh");
        let Reading::Answer(a) = read(json!({"workspace": NOT_NOW})) else {
            panic!()
        };
        assert!(a.not_now);
        for bad in [
            json!({"workspace": "Other (typed)"}),
            json!({"workspace": "default", "extra": 1}),
            json!({"workspace": NEW}),
            json!({"workspace": "default", "name": "x"}),
            json!({"workspace": 7}),
            json!({"name": "x"}),
            json!({"workspace": NEW, "name": "x".repeat(100_000)}),
            json!(["default"]),
        ] {
            assert!(matches!(read(bad.clone()), Reading::NoAnswer(_)), "{bad}");
        }
        for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
            let r = ElicitResult::new(action).with_content(json!({"workspace": "default"}));
            assert!(matches!(read_workspace(&r, &o), Reading::NoAnswer(_)));
        }
        assert_eq!(read_share(&accept(json!({"share": SHARE}))), Ok(true));
        assert_eq!(
            read_share(&accept(json!({"share": DO_NOT_SHARE}))),
            Ok(false)
        );
        assert!(read_share(&accept(json!({"share": "yes"}))).is_err());
    }

    #[test]
    fn a_state_opens_once_for_its_own_binding_only() {
        let mut states = States::new().unwrap();
        let round = Round::Workspace(offer());
        let ttl = Duration::from_secs(60);
        let sealed = states.seal(round.clone(), b"s1", ttl).unwrap();
        assert!(matches!(
            states.open(&sealed, b"s2"),
            Err(Refused::Invalid(_))
        ));
        let mut changed = sealed.clone().into_bytes();
        let i = changed.len() / 2;
        changed[i] = if changed[i] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).unwrap();
        assert!(matches!(
            states.open(&changed, b"s1"),
            Err(Refused::Invalid(_))
        ));
        assert_eq!(states.open(&sealed, b"s1"), Ok(round.clone()));
        assert_eq!(states.open(&sealed, b"s1"), Err(Refused::Replayed));
        // Another process's key: not this one's.
        let mut other = States::new().unwrap();
        let foreign = other.seal(round, b"s1", ttl).unwrap();
        assert!(matches!(
            states.open(&foreign, b"s1"),
            Err(Refused::Invalid(_))
        ));
    }
}
