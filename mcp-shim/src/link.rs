//! The shim's one link to `berthd`: the session's registration, held open
//! for the process's life, and the tool calls forwarded over it.
//!
//! The daemon makes every decision. The shim keeps only what it needs to
//! survive a daemon restart: the session id the daemon made and the pin it
//! returned last. When the registration stream ends, or a call finds the
//! daemon gone (or a new daemon that never heard of the session), the shim
//! reconnects (which starts the daemon again), re-registers with the same id
//! and pin, and retries the call once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use berth_client::client::{ClientError, Connection};
use berth_client::paths::EnvCtx;
use berth_proto::pb;
use berth_proto::status::CodeStatus as _;
use berth_vocab::codes::Code;
use tokio::sync::{Mutex, watch};

/// How long the first session event may take once the stream is open.
const FIRST_EVENT_TIMEOUT: Duration = Duration::from_secs(5);

/// The client's MCP name and version, once known.
pub type ClientInfo = Option<(String, String)>;

/// The registered session, as far as the shim needs to know it.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The daemon-made id.
    pub id: String,
    /// The pinned resolution (updated from every tool reply).
    pub pin: pb::Resolution,
    /// Whether a tool result of this session reached the client: the first
    /// one carries the notice and notes, so until one did, a daemon that
    /// re-adopts the session still owes them.
    pub first_result_sent: bool,
}

struct State {
    conn: Option<Connection>,
    session: Option<Registered>,
    /// True while the current registration's stream is open; `None` when
    /// the session is not registered with the running daemon.
    live: Option<Arc<AtomicBool>>,
}

/// Why the session is not registered with the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRegistered {
    /// The daemon could not be reached or started, or the connection broke
    /// before it answered.
    Unreachable(String),
    /// The daemon answered, and refused or failed the registration.
    Refused(String),
    /// What listens on the socket is not this user's daemon: nothing was
    /// sent to it, and nothing will be.
    Untrusted(String),
    /// The data folder is not the user's alone: nothing in it was read and no daemon was
    /// started on it.
    NotOurs(String),
}

impl NotRegistered {
    /// Sorts a registration error: every error the daemon makes carries a
    /// berth code; one without is the transport's.
    pub fn of(e: &ClientError) -> NotRegistered {
        match e {
            ClientError::Untrusted(_) => return NotRegistered::Untrusted(e.to_string()),
            ClientError::NotOurs(_) => return NotRegistered::NotOurs(e.to_string()),
            _ => {}
        }
        match e.code() {
            Some(_) => NotRegistered::Refused(e.to_string()),
            None => NotRegistered::Unreachable(e.to_string()),
        }
    }
}

/// The link to the daemon.
pub struct Link {
    env: EnvCtx,
    caller: pb::Caller,
    client_session_id: String,
    client: watch::Sender<ClientInfo>,
    state: Mutex<State>,
    instructions: std::sync::Mutex<Option<String>>,
    /// Why the last registration failed; `None` once one succeeded.
    not_registered: std::sync::Mutex<Option<NotRegistered>>,
    /// True once the handshake can be answered: the daemon gave the
    /// instructions, or said why the session cannot register.
    settled: watch::Sender<bool>,
}

impl Link {
    /// A link for this caller; nothing is opened yet.
    pub fn new(env: EnvCtx, caller: pb::Caller, client_session_id: String) -> Link {
        Link {
            env,
            caller,
            client_session_id,
            client: watch::Sender::new(None),
            state: Mutex::new(State {
                conn: None,
                session: None,
                live: None,
            }),
            instructions: std::sync::Mutex::new(None),
            not_registered: std::sync::Mutex::new(None),
            settled: watch::Sender::new(false),
        }
    }

    /// Records the client's name and version (the first one known wins).
    pub fn set_client(&self, name: &str, version: &str) {
        self.client.send_if_modified(|c| {
            if c.is_some() {
                return false;
            }
            *c = Some((name.to_string(), version.to_string()));
            true
        });
    }

    /// Waits until the client's info is known or `limit` passes.
    pub async fn client_known_within(&self, limit: Duration) {
        let mut rx = self.client.subscribe();
        let _ = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
    }

    /// The server instructions the daemon gave, once registered.
    pub fn instructions(&self) -> Option<String> {
        self.instructions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the handshake can be answered now (see [`Link::settled`]).
    pub fn is_settled(&self) -> bool {
        *self.settled.borrow()
    }

    /// Waits until the handshake can be answered: the instructions are
    /// known, or why the session cannot register.
    pub async fn settled(&self) {
        let mut rx = self.settled.subscribe();
        let _ = rx.wait_for(|settled| *settled).await;
    }

    /// Asks the daemon for the server instructions alongside the
    /// registration, so the client's handshake does not wait for the
    /// session to be recorded (docs/decisions/0032-the-handshake-does-not-wait-for-the-registration.md).
    /// The daemon checks the session's directory first: its refusal is
    /// remembered as the registration's would be. Any other failure is left
    /// for the registration to report.
    pub async fn greet(&self) {
        let call = {
            let st = self.state.lock().await;
            let Some(conn) = st.conn.as_ref() else {
                return;
            };
            let req = pb::SessionInstructionsRequest {
                caller: Some(self.caller.clone()),
            };
            conn.alongside(move |mut c| async move { c.session_instructions(req).await })
        };
        let reply = call.await;
        {
            let mut known = self.instructions.lock().unwrap_or_else(|p| p.into_inner());
            match reply {
                Ok(reply) => {
                    known.get_or_insert(reply.instructions);
                }
                // An older daemon is replaced by the registration, which
                // then gives the instructions itself.
                Err(e) if e.code().is_some_and(|c| c != Code::DaemonOutdated) => {
                    if known.is_none() {
                        *self
                            .not_registered
                            .lock()
                            .unwrap_or_else(|p| p.into_inner()) = Some(NotRegistered::of(&e));
                    }
                }
                Err(e) => {
                    tracing::debug!("no instructions ahead of the registration: {e}");
                    return;
                }
            }
        }
        self.settled.send_replace(true);
    }

    /// Why the last registration failed, if it did.
    pub fn not_registered(&self) -> Option<NotRegistered> {
        self.not_registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Connects to the daemon (starting it when needed) without registering.
    pub async fn warm(&self) {
        let mut st = self.state.lock().await;
        if st.conn.is_none() {
            match Connection::open(&self.env).await {
                Ok(c) => st.conn = Some(c),
                Err(e) => tracing::warn!("cannot reach berthd yet: {e}"),
            }
        }
    }

    /// Registers the session unless it already is; its id and pin.
    pub async fn ensure(&self) -> Result<Registered, ClientError> {
        let mut st = self.state.lock().await;
        self.ensure_locked(&mut st).await
    }

    async fn ensure_locked(&self, st: &mut State) -> Result<Registered, ClientError> {
        let live = st.live.as_ref().is_some_and(|l| l.load(Ordering::Acquire));
        if let (true, Some(s)) = (live, &st.session) {
            return Ok(s.clone());
        }
        if st.live.take().is_some() {
            // The registration stream ended: the daemon went away or was
            // replaced. Reconnect, which starts it again when needed.
            tracing::info!("the daemon's session stream ended; registering again");
            st.conn = None;
        }
        let registered = match self.register(st).await {
            Err(e) if daemon_gone(&e) && st.conn.is_some() => {
                tracing::info!("registering failed ({e}); reconnecting once");
                st.conn = None;
                self.register(st).await
            }
            other => other,
        };
        *self
            .not_registered
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = registered.as_ref().err().map(NotRegistered::of);
        self.settled.send_replace(true);
        registered
    }

    /// Opens the session stream and reads its first event.
    async fn register(&self, st: &mut State) -> Result<Registered, ClientError> {
        if st.conn.is_none() {
            st.conn = Some(Connection::open(&self.env).await?);
        }
        let conn = st.conn.as_mut().expect("just opened");
        let (client_name, client_version) = self.client.borrow().clone().unwrap_or_default();
        let req = pb::OpenSessionRequest {
            caller: Some(self.caller.clone()),
            client_name,
            client_version,
            client_session_id: self.client_session_id.clone(),
            session_id: st
                .session
                .as_ref()
                .map(|s| s.id.clone())
                .unwrap_or_default(),
            pin: st.session.as_ref().map(|s| s.pin.clone()),
            pid: std::process::id(),
            first_result_sent: st.session.as_ref().is_some_and(|s| s.first_result_sent),
        };
        let mut stream = conn
            .call(|mut c| {
                let req = req.clone();
                async move { c.open_session(req).await }
            })
            .await?;
        let first = match tokio::time::timeout(FIRST_EVENT_TIMEOUT, stream.message()).await {
            Ok(Ok(Some(ev))) => ev,
            Ok(Ok(None)) => {
                return Err(ClientError::Rpc(tonic::Status::unavailable(
                    "berthd closed the session stream before its first event",
                )));
            }
            Ok(Err(status)) => return Err(ClientError::Rpc(status)),
            Err(_) => {
                return Err(ClientError::Rpc(tonic::Status::deadline_exceeded(
                    "berthd did not send the session's first event in time",
                )));
            }
        };
        let pin = first.resolution.unwrap_or_default();
        // A re-adopted session keeps what it already sent; a new id starts afresh.
        let first_result_sent = st
            .session
            .as_ref()
            .is_some_and(|old| old.id == first.session_id && old.first_result_sent);
        let session = Registered {
            id: first.session_id,
            pin,
            first_result_sent,
        };
        if let Some(old) = &st.session
            && old.id != session.id
        {
            tracing::warn!(old = %old.id, new = %session.id, "the daemon gave this session a new id");
        }
        tracing::info!(
            session = %session.id,
            workspace = %session.pin.workspace,
            reason = %session.pin.reason,
            "session registered"
        );
        *self.instructions.lock().unwrap_or_else(|p| p.into_inner()) = Some(first.instructions);
        let live = Arc::new(AtomicBool::new(true));
        st.live = Some(live.clone());
        st.session = Some(session.clone());
        // Hold the stream for the process's life: its end is the session's
        // end for the daemon, and for us the sign that the daemon went away.
        tokio::spawn(async move {
            loop {
                match stream.message().await {
                    Ok(Some(_)) => continue,
                    Ok(None) => tracing::info!("the daemon closed the session stream"),
                    Err(e) => tracing::info!("the session stream broke: {e}"),
                }
                break;
            }
            live.store(false, Ordering::Release);
        });
        Ok(session)
    }

    /// Runs one tool for the session. A daemon that went away (or restarted
    /// and forgot the session) is reconnected to, the session re-registered
    /// with its id and pin, and the call retried once.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments_json: String,
    ) -> Result<pb::CallToolReply, ClientError> {
        let mut st = self.state.lock().await;
        let mut retried = false;
        loop {
            let session = self.ensure_locked(&mut st).await?;
            let req = pb::CallToolRequest {
                session_id: session.id.clone(),
                tool: tool.to_string(),
                arguments_json: arguments_json.clone(),
            };
            let conn = st
                .conn
                .as_mut()
                .expect("registered sessions have a connection");
            let result = conn
                .call(|mut c| {
                    let req = req.clone();
                    async move { c.call_tool(req).await }
                })
                .await;
            match result {
                Ok(reply) => {
                    if let Some(s) = st.session.as_mut() {
                        if let Some(pin) = &reply.pin {
                            s.pin = pin.clone();
                        }
                        s.first_result_sent = true;
                    }
                    return Ok(reply);
                }
                Err(e) if !retried && daemon_gone(&e) => {
                    tracing::info!(tool, "call failed ({e}); reconnecting and retrying once");
                    retried = true;
                    st.live = None;
                    st.conn = None;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Link {
    /// Takes the session's question for the client's form, when there is one to put
    /// (docs/decisions/0049-the-question-in-the-clients-own-form.md).
    pub async fn open_question(&self) -> Result<pb::OpenQuestionReply, ClientError> {
        let mut st = self.state.lock().await;
        let session = self.ensure_locked(&mut st).await?;
        let conn = st
            .conn
            .as_mut()
            .expect("registered sessions have a connection");
        let req = pb::OpenQuestionRequest {
            session_id: session.id,
        };
        conn.call(|mut c| {
            let req = req.clone();
            async move { c.open_question(req).await }
        })
        .await
    }

    /// Hands the user's answer to the daemon, which acts on it as `use_workspace` would.
    pub async fn answer_question(
        &self,
        mut answer: pb::AnswerQuestionRequest,
    ) -> Result<pb::AnswerQuestionReply, ClientError> {
        let mut st = self.state.lock().await;
        let session = self.ensure_locked(&mut st).await?;
        answer.session_id = session.id;
        let conn = st
            .conn
            .as_mut()
            .expect("registered sessions have a connection");
        // The call that follows carries the new pin back.
        conn.call(|mut c| {
            let req = answer.clone();
            async move { c.answer_question(req).await }
        })
        .await
    }

    /// The daemon-made id of the session, once registered.
    pub async fn session_id(&self) -> Option<String> {
        self.state
            .lock()
            .await
            .session
            .as_ref()
            .map(|s| s.id.clone())
    }
}

/// Whether an error means the daemon is gone or no longer knows the
/// session, so reconnecting and registering again may help. Every error the
/// daemon itself makes carries a berth code; one without is the transport's.
fn daemon_gone(e: &ClientError) -> bool {
    match e {
        ClientError::Rpc(status) => match Code::of(status) {
            // A restarted daemon answers a lost session with not-found.
            Some(code) => code == Code::NotFound,
            None => true,
        },
        ClientError::NotRunning { .. }
        | ClientError::Unreachable { .. }
        | ClientError::ConnectionLost { .. } => true,
        _ => false,
    }
}
