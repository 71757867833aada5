//! The MCP side: the fixed tool list (generated from the table in
//! `berth_vocab::tools`, which the daemon dispatches on too; see
//! `tool_list`), the handshake of both eras, and the translation of each
//! call into one `CallTool` RPC.

use std::sync::Arc;
use std::time::Duration;

use crate::ask::{self, Reading, Round, States};
use crate::link::{Link, NotRegistered};
use berth_client::paths::EnvCtx;
use berth_proto::pb;
use berth_vocab::tool_results::{Failure, Reply, json_text};
use berth_vocab::tools::Tool;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult,
    ContentBlock, DiscoverResult, ElicitRequest, ElicitRequestParams, ElicitResult, Implementation,
    InitializeRequestParams, InitializeResult, InputRequest, InputRequiredResult, InputResponses,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ResultType,
    ServerCapabilities, ServerConfig, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServerInitializeError};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use rmcp::{Peer, RoleServer as Server};

/// How long the shim waits, after it started, for the client to say who it
/// is before it registers the session anyway. Clients send `initialize` (or
/// their first request) within milliseconds; this only bounds a silent one.
const CLIENT_INFO_GRACE: Duration = Duration::from_millis(200);

/// How the instructions the shim writes itself, without the daemon's, begin and end.
const OWN_INSTRUCTIONS_START: &str =
    "berth tells you which workspace this session belongs to and gives you a folder for its files.";
const OWN_INSTRUCTIONS_END: &str =
    "Every path may be qualified as <workspace>/<path>; \"/\" lists the workspaces.";

/// The server instructions: the daemon's, from the registration; without
/// them, the shim's own, saying why registering failed. Only a daemon that
/// could not be reached is blamed on reachability: one that answered with an
/// error is quoted.
fn instructions(from_daemon: Option<String>, failure: Option<NotRegistered>) -> String {
    if let Some(text) = from_daemon {
        return text;
    }
    let why = match failure {
        Some(NotRegistered::Unreachable(e)) => format!(
            "The berth daemon could not be reached when this session started ({e}); call device_context to retry."
        ),
        Some(NotRegistered::Refused(e)) => format!(
            "berth could not register this session when it started: {e}. Call device_context to retry."
        ),
        Some(NotRegistered::NotOurs(e)) => format!(
            "berth started no daemon and read nothing of its data: {e} Tell the user; berth's tools work again once they have fixed it (call device_context to retry)."
        ),
        Some(NotRegistered::Untrusted(e)) => format!(
            "berth did not use the daemon on its socket and sent it nothing: {e}. Tell the user; berth's tools work again once they have fixed it (call device_context to retry)."
        ),
        None => "This session is not registered with berth yet; call device_context.".to_string(),
    };
    format!("{OWN_INSTRUCTIONS_START} {why} {OWN_INSTRUCTIONS_END}")
}

/// Runs the MCP server on stdio until the client goes away.
pub async fn serve(caller: pb::Caller, client_session_id: String) -> Result<(), String> {
    let link = Arc::new(Link::new(EnvCtx::from_process(), caller, client_session_id));
    // Pin at startup: connect now (starting the daemon when needed), ask for
    // the handshake's instructions while the client's `initialize` is read,
    // and register as soon as the client said who it is (or after a short
    // grace).
    tokio::spawn({
        let link = link.clone();
        async move {
            link.warm().await;
            let register = async {
                link.client_known_within(CLIENT_INFO_GRACE).await;
                if let Err(e) = link.ensure().await {
                    tracing::warn!("cannot register the session with berthd: {e}");
                }
            };
            tokio::join!(link.greet(), register);
        }
    });
    // The connection (and the request for the instructions) goes out before
    // rmcp sets up stdio: the daemon works on it meanwhile.
    tokio::task::yield_now().await;
    let service = match Shim::new(link)
        .serve(crate::stdio::Stdio::new(rmcp::transport::stdio_pipes()))
        .await
    {
        Ok(service) => service,
        // A client that goes away before it says anything (a cancelled
        // start, a probe of the command) has nothing for us to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("the client closed stdin before the MCP handshake; exiting");
            return Ok(());
        }
        Err(e) => return Err(format!("MCP handshake failed: {e}")),
    };
    let reason = service
        .waiting()
        .await
        .map_err(|e| format!("MCP service failed: {e}"))?;
    tracing::debug!(?reason, "MCP client went away");
    Ok(())
}

/// The MCP server.
#[derive(Clone)]
pub struct Shim {
    link: Arc<Link>,
    /// The session's question in the client's form: held while it is put, so the calls that
    /// come meanwhile wait for its answer.
    asking: Arc<tokio::sync::Mutex<Asking>>,
}

/// Where the session's question in the client's form stands, for this process.
#[derive(Default)]
struct Asking {
    /// The first tool call came: the question was put, or there was none to put.
    tried: bool,
    /// The 2026-07-28 era's request states, once one was issued.
    states: Option<States>,
    /// How long a state stays good (the daemon's `ask.elicit_wait_secs`).
    wait: Duration,
}

/// What an answer the daemon took did.
enum Settled {
    /// Acted on, or nothing more to ask: the call runs.
    Run,
    /// The folder is shared with other workspaces' roots: the second question, for this
    /// answer.
    Overlap(String, pb::AnswerQuestionRequest),
}

impl Shim {
    fn new(link: Arc<Link>) -> Shim {
        Shim {
            link,
            asking: Arc::default(),
        }
    }

    /// Before the session's first tool call: puts the session's question to the user in the
    /// client's form, when the client declared form elicitation and the daemon has a question
    /// to put (docs/decisions/0049-the-question-in-the-clients-own-form.md). In the
    /// `initialize` era this waits for the answer (bounded) and hands it to the daemon; in
    /// the 2026-07-28 era it returns the input-required result the client answers by
    /// retrying the call. Any failure leaves the daemon's notice for the first result.
    async fn ask_first(
        &self,
        tool: &str,
        args: &JsonObject,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<InputRequiredResult> {
        let mut asking = self.asking.lock().await;
        if std::mem::replace(&mut asking.tried, true)
            || !ask::can_show_forms(ctx.client_capabilities().as_ref())
        {
            return None;
        }
        let offer = match self.link.open_question().await {
            Ok(offer) if offer.ask => offer,
            Ok(_) => return None,
            Err(e) => {
                tracing::warn!("cannot take the session's question: {e}");
                return None;
            }
        };
        asking.wait = Duration::from_secs(u64::from(offer.wait_secs.max(1)));
        if new_era(ctx) {
            let form = ask::workspace_form(&offer);
            return self
                .input_required(&mut asking, Round::Workspace(offer), form, tool, args)
                .await;
        }
        let wait = asking.wait;
        let answer = match elicit(&ctx.peer, ask::workspace_form(&offer), wait).await {
            Ok(result) => match ask::read_workspace(&result, &offer) {
                Reading::Answer(a) => a,
                Reading::NoAnswer(why) => {
                    tracing::info!("no answer from the form ({why}); the notice goes instead");
                    return None;
                }
            },
            Err(why) => {
                tracing::info!("the form failed ({why}); the notice goes instead");
                return None;
            }
        };
        if let Settled::Overlap(overlap, mut answer) = self.settle(answer).await {
            match elicit(&ctx.peer, ask::overlap_form(&overlap), wait).await {
                Ok(result) if ask::read_share(&result) == Ok(true) => {
                    answer.allow_overlap = true;
                    self.settle(answer).await;
                }
                Ok(result) => {
                    tracing::info!(?result, "the sharing was not confirmed; nothing changed");
                }
                Err(why) => tracing::info!("the second form failed ({why}); nothing changed"),
            }
        }
        None
    }

    /// Hands an answer to the daemon. A refusal leaves the notice for the first result.
    async fn settle(&self, answer: pb::AnswerQuestionRequest) -> Settled {
        match self.link.answer_question(answer.clone()).await {
            Ok(reply) if !reply.overlap.is_empty() => Settled::Overlap(reply.overlap, answer),
            Ok(_) => Settled::Run,
            Err(e) => {
                tracing::info!(
                    "the daemon refused the form's answer ({e}); the notice goes instead"
                );
                Settled::Run
            }
        }
    }

    /// The 2026-07-28 era's question: an input-required result whose state, sealed for this
    /// session and call, the client brings back with the answer.
    async fn input_required(
        &self,
        asking: &mut Asking,
        round: Round,
        form: ElicitRequestParams,
        tool: &str,
        args: &JsonObject,
    ) -> Option<InputRequiredResult> {
        if asking.states.is_none() {
            match States::new() {
                Ok(states) => asking.states = Some(states),
                Err(e) => {
                    tracing::warn!("cannot seal a request state ({e}); the notice goes instead");
                    return None;
                }
            }
        }
        let session = self.link.session_id().await.unwrap_or_default();
        let binding = ask::binding(&session, tool, args);
        let wait = asking.wait;
        let states = asking.states.as_mut().expect("made above");
        let state = match states.seal(round, &binding, wait) {
            Ok(state) => state,
            Err(e) => {
                tracing::warn!("cannot seal a request state ({e}); the notice goes instead");
                return None;
            }
        };
        let requests = [(
            ask::INPUT_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(form)),
        )]
        .into_iter()
        .collect();
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// A 2026-07-28 retry that brings back a request state and the form's answer: the state
    /// must be the one outstanding, sealed here for this session and this very call (else a
    /// protocol error, and nothing is changed); the answer is then handed to the daemon, and
    /// the call runs (or the second question follows).
    async fn retried(
        &self,
        tool: &str,
        args: &JsonObject,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Result<Option<InputRequiredResult>, McpError> {
        let Some(state) = state else {
            return Err(McpError::invalid_params(
                "berth: inputResponses came without the requestState they answer; nothing was changed",
                None,
            ));
        };
        let mut asking = self.asking.lock().await;
        let session = self.link.session_id().await.unwrap_or_default();
        let binding = ask::binding(&session, tool, args);
        let Some(states) = asking.states.as_mut() else {
            return Err(McpError::invalid_params(
                ask::Refused::Invalid("this server issued none".into()).to_string(),
                None,
            ));
        };
        let round = states
            .open(&state, &binding)
            .map_err(|r| McpError::invalid_params(r.to_string(), None))?;
        let result = responses
            .as_ref()
            .and_then(|r| r.get(ask::INPUT_KEY))
            .ok_or_else(|| "the retry carries no answer to the form".to_string())
            .and_then(ask::elicit_result);
        let answer = match (round, result) {
            (Round::Workspace(offer), Ok(result)) => match ask::read_workspace(&result, &offer) {
                Reading::Answer(a) => a,
                Reading::NoAnswer(why) => {
                    tracing::info!("no answer from the form ({why}); the notice goes instead");
                    return Ok(None);
                }
            },
            (Round::Overlap(mut answer), Ok(result)) => {
                if ask::read_share(&result) != Ok(true) {
                    tracing::info!("the sharing was not confirmed; nothing changed");
                    return Ok(None);
                }
                answer.allow_overlap = true;
                answer
            }
            (_, Err(why)) => {
                tracing::info!("no answer from the form ({why}); the notice goes instead");
                return Ok(None);
            }
        };
        match self.settle(answer).await {
            Settled::Run => Ok(None),
            Settled::Overlap(overlap, answer) => {
                let form = ask::overlap_form(&overlap);
                Ok(self
                    .input_required(&mut asking, Round::Overlap(answer), form, tool, args)
                    .await)
            }
        }
    }

    /// Waits until the handshake's instructions are known (both eras). They
    /// come from the daemon, ahead of the registration or with it; the first
    /// tool call waits for the registration. While they are on their way,
    /// the tool list the client asks for next is read and written once (the
    /// thread would only wait).
    async fn instructions_ready(&self) {
        if !self.link.is_settled() {
            crate::tool_list::warm();
        }
        self.link.settled().await;
    }

    /// Remembers the client's identity from a request's context (the
    /// 2026-07-28 era sends it with every request).
    fn note_client(&self, ctx: &RequestContext<RoleServer>) {
        if let Some(info) = ctx.client_info() {
            self.link.set_client(&info.name, &info.version);
        }
    }

    /// Forwards one call to the daemon and turns its reply into a result.
    /// The daemon checks the arguments (a missing or mistyped one is a tool
    /// error with code `bad-argument` and a correct call, which the model can
    /// act on, never a protocol error). A failing tool, and an unreachable
    /// daemon, are results with `is_error`, never protocol errors: the model
    /// reads why.
    async fn forward(
        &self,
        tool: &str,
        args: JsonObject,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        self.note_client(ctx);
        let json = serde_json::Value::Object(args).to_string();
        match self.link.call_tool(tool, json).await {
            Ok(reply) => Ok(result_of(tool, reply)),
            Err(e) => {
                tracing::warn!(tool, "{e}");
                let failure = Reply {
                    result: Failure {
                        error: format!("berth: {e}"),
                        code: e.code().map_or("unavailable", |c| c.as_str()).to_string(),
                        hints: e.hints(),
                    },
                    notice: None,
                    notes: Vec::new(),
                };
                let mut result =
                    CallToolResult::error(vec![ContentBlock::text(json_text(&failure))]);
                result.structured_content = serde_json::to_value(&failure).ok();
                Ok(result)
            }
        }
    }
}

/// Whether the request speaks the 2026-07-28 era, which asks through input-required results
/// instead of requests to the client.
fn new_era(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Puts a form to the user (`elicitation/create`) and waits for the answer at most `wait`.
async fn elicit(
    peer: &Peer<Server>,
    form: ElicitRequestParams,
    wait: Duration,
) -> Result<ElicitResult, String> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(form));
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(wait);
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| e.to_string())?;
    match handle.await_response().await {
        Ok(ClientResult::ElicitResult(result)) => Ok(result),
        Ok(_) => Err("the client answered the form with something else".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// A daemon reply as an MCP result. The structured content holds everything
/// (the data, and the notice and notes a session's first result carries),
/// because some clients hand the model only that. The text blocks follow the
/// MCP advice for structured results: the daemon's short prose when it has
/// any (the notice, notes, an error), then the serialised JSON.
fn result_of(tool: &str, reply: pb::CallToolReply) -> CallToolResult {
    let mut content = Vec::new();
    if !reply.text.is_empty() {
        content.push(ContentBlock::text(reply.text));
    }
    let structured = if reply.structured_json.is_empty() {
        None
    } else {
        match serde_json::from_str(&reply.structured_json) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(tool, "the daemon's structured content is not JSON: {e}");
                None
            }
        }
    };
    if structured.is_some() {
        content.push(ContentBlock::text(reply.structured_json));
    }
    let mut result = if reply.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured;
    result
}

impl ServerHandler for Shim {
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // The list never changes, which the 2026-07-28 era can say.
        let cache_hints = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools: crate::tool_list::tools().to_vec(),
            meta: None,
            next_cursor: None,
            ttl_ms: cache_hints.then_some(0),
            cache_scope: cache_hints.then_some(CacheScope::Public),
        })
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        crate::tool_list::tools()
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    /// Every tool of the table forwards its calls to the daemon.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = Tool::from_name(&request.name) else {
            return Err(McpError::invalid_params(Tool::unknown(&request.name), None));
        };
        let args = request.arguments.unwrap_or_default();
        self.note_client(&context);
        let retry = request.request_state.is_some() || request.input_responses.is_some();
        let question = if retry {
            self.retried(
                tool.name(),
                &args,
                request.request_state,
                request.input_responses,
            )
            .await?
        } else {
            self.ask_first(tool.name(), &args, &context).await
        };
        if let Some(input_required) = question {
            return Ok(input_required.into());
        }
        let result = self.forward(tool.name(), args, &context).await?;
        Ok(result.into())
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("berth-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions(
                self.link.instructions(),
                self.link.not_registered(),
            ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.link
            .set_client(&request.client_info.name, &request.client_info.version);
        self.instructions_ready().await;
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        self.note_client(&context);
        self.instructions_ready().await;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_client::client::ClientError;
    use berth_proto::status::CodeStatus as _;
    use berth_vocab::codes::Code;

    #[test]
    fn the_daemons_instructions_are_used_when_it_gave_them() {
        let text = instructions(
            Some("the daemon's".into()),
            Some(NotRegistered::Unreachable("gone".into())),
        );
        assert_eq!(text, "the daemon's");
    }

    #[test]
    fn only_an_unreachable_daemon_is_said_to_be_unreachable() {
        let gone = ClientError::NotRunning {
            socket: "/run/berthd.sock".into(),
        };
        let text = instructions(None, Some(NotRegistered::of(&gone)));
        assert!(text.contains("could not be reached"), "{text}");
        assert!(text.contains("berthd is not running"), "{text}");
        assert!(text.contains("<workspace>/<path>"), "{text}");
        let lost = ClientError::Rpc(tonic::Status::unavailable("broken pipe"));
        let text = instructions(None, Some(NotRegistered::of(&lost)));
        assert!(text.contains("could not be reached"), "{text}");
    }

    #[test]
    fn a_daemon_that_refused_the_registration_is_quoted_not_called_unreachable() {
        let refused = ClientError::Rpc(Code::NotFound.status("/gone: no such file or directory"));
        let text = instructions(None, Some(NotRegistered::of(&refused)));
        assert!(!text.contains("could not be reached"), "{text}");
        assert!(
            text.contains(
                "could not register this session when it started: /gone: no such file or directory."
            ),
            "{text}"
        );
        assert!(text.contains("device_context"), "{text}");
        assert!(text.contains("<workspace>/<path>"), "{text}");
    }

    #[test]
    fn a_data_folder_of_another_user_is_quoted_and_blamed_on_no_daemon() {
        let refused = ClientError::NotOurs(berth_client::ownership::NotOurs {
            role: berth_client::ownership::Role::DataFolder,
            path: "/tmp/evil".into(),
            problem: "it belongs to uid 65534, not to you (uid 0), and has mode 0777".into(),
            fix: "Set BERTH_DATA_DIR".into(),
        });
        let text = instructions(None, Some(NotRegistered::of(&refused)));
        assert!(!text.contains("could not be reached"), "{text}");
        assert!(text.contains("started no daemon"), "{text}");
        assert!(text.contains("belongs to uid 65534"), "{text}");
    }

    #[test]
    fn an_untrusted_daemon_is_quoted_and_said_to_have_been_sent_nothing() {
        let untrusted = ClientError::Untrusted(berth_client::verify::Untrusted {
            socket: "/tmp/berth-0/berthd.sock".into(),
            problem: "its folder \"/tmp/berth-0\" belongs to uid 65534, not to you (uid 0)".into(),
            next: "Remove it".into(),
        });
        let text = instructions(None, Some(NotRegistered::of(&untrusted)));
        assert!(!text.contains("could not be reached"), "{text}");
        assert!(text.contains("sent it nothing"), "{text}");
        assert!(text.contains("belongs to uid 65534"), "{text}");
    }
}
