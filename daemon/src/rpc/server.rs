//! The gRPC service: translates between protocol types and the device's
//! operations, and checks each client's version.
//!
//! **Architecture Invariant:** only this module (and `lifecycle`) knows the
//! protocol's types; the operations take and return plain Rust data.

use std::sync::Arc;

use berth_client::paths::{BERTH_DATA_DIR, BERTH_SOCKET};
use berth_proto::pb::{self, berth_server::BerthServer};
use berth_proto::status::CodeStatus as _;
use berth_proto::{CLIENT_VERSION_HEADER, PROTOCOL};
use berth_vocab::codes::Code;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status};
use tracing::instrument;

use super::wire::{
    answer_of, caller_of, explain_step, mode_of, opt, opt_path_text, path_text, resolution,
};
use crate::error::BerthError;
use crate::ops::caller::Caller;
use crate::ops::device::{Device, STOP_GRACE};
use crate::ops::guard::{Followed, GuardCall};
use crate::ops::live::Peer;
use crate::pool::Lane;

/// The service, wrapped in the version check.
pub fn service(
    device: Arc<Device>,
) -> InterceptedService<BerthServer<Service>, impl tonic::service::Interceptor + Clone> {
    let version = device.version().to_string();
    let registry = ServedDataDir::of(&device);
    // Above gRPC's 4 MiB default, so a file at the tools' own limit arrives
    // and is refused (or written) with berth's message, not a transport error.
    let server = BerthServer::new(Service { device })
        .max_decoding_message_size(berth_proto::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(berth_proto::MAX_MESSAGE_BYTES);
    InterceptedService::new(server, move |req: Request<()>| {
        check_client_version(&version, &req)?;
        registry.check(&req)?;
        Ok(req)
    })
}

/// Compares the client's `<version>/<protocol>` stamp with ours. A newer
/// client finds an outdated daemon (it restarts it); an older client that
/// speaks an older protocol is told to upgrade. Requests without a stamp
/// (other tools) are served.
fn check_client_version(ours: &str, req: &Request<()>) -> Result<(), Status> {
    let Some(stamp) = req
        .metadata()
        .get(CLIENT_VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
    else {
        return Ok(());
    };
    let (theirs, protocol) = stamp.split_once('/').unwrap_or((stamp, "0"));
    let protocol: u32 = protocol.parse().unwrap_or(0);
    let newer_client = protocol > PROTOCOL
        || berth_proto::versions::compare_versions(theirs, ours) == std::cmp::Ordering::Greater;
    if newer_client {
        return Err(Code::DaemonOutdated.status(format!(
            "the running berthd ({ours}) is older than this client ({theirs})"
        )));
    }
    if protocol < PROTOCOL {
        return Err(Code::ClientOutdated.status(format!(
            "this client ({theirs}) is older than the running berthd ({ours}) and speaks an older protocol ({protocol} < {PROTOCOL}); upgrade berth, or stop the daemon with `berth daemon stop`"
        )));
    }
    Ok(())
}

/// The data folder this daemon serves, to refuse a client of another one
/// (docs/decisions/0013-one-daemon-per-data-folder.md).
#[derive(Clone)]
struct ServedDataDir {
    path: std::path::PathBuf,
    canonical: Option<std::path::PathBuf>,
    socket: std::path::PathBuf,
}

impl ServedDataDir {
    fn of(device: &Device) -> ServedDataDir {
        ServedDataDir {
            path: device.data_dir().to_path_buf(),
            canonical: crate::canonical::canonicalize(device.data_dir()).ok(),
            socket: device.socket().to_path_buf(),
        }
    }

    /// A request naming another data folder is refused; one naming none
    /// (status, other tools) is served. Clients send the canonical spelling
    /// of a folder that exists, so a symlink or a relative path names the
    /// same registry without this check touching the disk: it runs on an
    /// async worker, which must never block (a path on a hung mount would).
    fn check(&self, req: &Request<()>) -> Result<(), Status> {
        let Some(Ok(bytes)) = req
            .metadata()
            .get_bin(berth_proto::DATA_DIR_HEADER)
            .map(|v| v.to_bytes())
        else {
            return Ok(());
        };
        let Some(theirs) = berth_client::paths::path_from_wire(&bytes) else {
            return Err(Code::OtherDataDir.status(format!(
                "the client's data folder is not a path this system can name; set {BERTH_DATA_DIR} to a folder whose name is valid Unicode",
            )));
        };
        let theirs = theirs.as_path();
        if theirs == self.path || self.canonical.as_deref() == Some(theirs) {
            return Ok(());
        }
        Err(Code::OtherDataDir.status(format!(
            "the berthd on {:?} (pid {}) serves the data folder {:?}, not this client's {theirs:?}; \
             one socket cannot serve two registries: give this one its own socket with {BERTH_SOCKET}, \
             or set {BERTH_DATA_DIR}={} to use that registry",
            self.socket,
            std::process::id(),
            self.path,
            self.path.display()
        )))
    }
}

/// The protocol's face of the device.
pub struct Service {
    device: Arc<Device>,
}

impl Service {
    /// Runs an operation that reads the store, writes, or may block on the
    /// disk on the bounded pool, with its deadline, off the async workers:
    /// a slow filesystem never stalls other clients.
    async fn blocking<T: Send + 'static>(
        &self,
        op: impl FnOnce(&Device) -> Result<T, BerthError> + Send + 'static,
    ) -> Result<T, Status> {
        self.in_lane(Lane::Requests, op).await
    }

    async fn in_lane<T: Send + 'static>(
        &self,
        lane: Lane,
        op: impl FnOnce(&Device) -> Result<T, BerthError> + Send + 'static,
    ) -> Result<T, Status> {
        let device = self.device.clone();
        self.device
            .pool()
            .run(lane, move || op(&device))
            .await
            .map_err(Status::from)
    }

    /// The whole of most handlers: the request's message handed to `op` on the pool's
    /// requests lane, and what it makes of it answered.
    async fn on_pool<R: Send + 'static, P: Send + 'static>(
        &self,
        req: Request<R>,
        op: impl FnOnce(&Device, R) -> Result<P, BerthError> + Send + 'static,
    ) -> Result<Response<P>, Status> {
        let r = req.into_inner();
        self.blocking(move |d| op(d, r)).await.map(Response::new)
    }

    /// A resolution, from memory when the cache can give it: most requests
    /// are a folder the cache already holds, answered here with no I/O and
    /// no hop to the pool (docs/decisions/0025-resolving-from-memory.md).
    async fn resolve_answer(
        &self,
        caller: Caller,
        path: String,
        workspace: String,
        mode: berth_core::resolve::Mode,
    ) -> Result<berth_core::resolve::Answer, Status> {
        let in_memory = self.device.pool().is_taking_work().then(|| {
            self.device
                .resolve_in_memory(&caller, &path, opt(&workspace), mode)
        });
        match in_memory.flatten() {
            Some(answer) => Ok(answer?),
            None => {
                self.blocking(move |d| d.resolve(&caller, &path, opt(&workspace), mode))
                    .await
            }
        }
    }

    /// The MCP server instructions, naming today's workspaces.
    fn session_instructions(&self) -> String {
        berth_core::instructions::instructions(&self.device.registry().names())
    }

    fn res(&self, a: berth_core::resolve::Answer) -> pb::Resolution {
        resolution(&self.device, a)
    }
}

/// A hook request as the operations take it.
fn hook_call(r: &pb::HookRequest, peer: Peer) -> crate::ops::hooks::HookCall<'_> {
    crate::ops::hooks::HookCall {
        event: &r.event,
        client: &r.client,
        client_session_id: &r.client_session_id,
        transcript_path: &r.transcript_path,
        peer,
    }
}

/// The process the request came from, as the socket's credentials name it (`Tracked`).
fn peer_of<T>(req: &Request<T>) -> Result<Peer, Status> {
    req.extensions().get::<Peer>().copied().ok_or_else(|| {
        Code::Internal.status("the process at the other end of this connection is unknown")
    })
}

fn guard_call<'a>(r: &'a pb::GuardRequest, followed: &'a [Followed]) -> GuardCall<'a> {
    GuardCall {
        client: &r.client,
        client_session_id: &r.client_session_id,
        tool: &r.tool,
        targets: &r.targets,
        followed,
    }
}

#[tonic::async_trait]
impl pb::berth_server::Berth for Service {
    type OpenSessionStream =
        tokio_stream::wrappers::ReceiverStream<Result<pb::SessionEvent, Status>>;

    #[instrument(skip_all, name = "open_session")]
    async fn open_session(
        &self,
        req: Request<pb::OpenSessionRequest>,
    ) -> Result<Response<Self::OpenSessionStream>, Status> {
        let peer = peer_of(&req)?;
        let r = req.into_inner();
        let caller = caller_of(r.caller)?;
        let resume = match r.pin {
            Some(pin) if !r.session_id.is_empty() => Some((r.session_id, answer_of(pin)?)),
            _ => None,
        };
        let registration = crate::ops::sessions::Registration {
            client_name: r.client_name,
            client_version: r.client_version,
            client_session_id: r.client_session_id,
            resume,
            first_result_sent: r.first_result_sent,
            // The request's `pid` is what the client says; the kernel's is what counts.
            peer,
        };
        let session = self
            .blocking(move |d| d.open_session(caller, registration))
            .await?;
        let first = pb::SessionEvent {
            session_id: session.id.clone(),
            resolution: Some(self.res(session.pin.clone())),
            instructions: self.session_instructions(),
        };
        let (tx, rx) = tokio::sync::mpsc::channel(1);
        let _ = tx.send(Ok(first)).await;
        let device = self.device.clone();
        tokio::spawn(async move {
            // The stream stays open for the session's life; the shim's going
            // away (or dying) closes it.
            tokio::select! {
                () = tx.closed() => {
                    // Recording the end writes to the store: not on an async worker.
                    let d = device.clone();
                    let ended = device
                        .pool()
                        .run(Lane::Requests, move || {
                            d.close_session(&session.id, session.registration);
                            Ok(())
                        })
                        .await;
                    if let Err(e) = ended {
                        tracing::warn!(error = %e, "could not end a session whose shim went away");
                    }
                }
                () = device.stopped() => {}
            }
        });
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
            rx,
        )))
    }

    #[instrument(skip_all, name = "session_instructions")]
    async fn session_instructions(
        &self,
        req: Request<pb::SessionInstructionsRequest>,
    ) -> Result<Response<pb::SessionInstructionsReply>, Status> {
        let caller = caller_of(req.into_inner().caller)?;
        // The directory is resolved as a registration resolves it, so a
        // directory it would refuse is refused here with the same words.
        // BERTH_WORKSPACE does not fail a registration, so it is left out.
        let unpinned = Caller {
            env_workspace: None,
            ..caller
        };
        self.resolve_answer(
            unpinned,
            String::new(),
            String::new(),
            berth_core::resolve::Mode::Agent,
        )
        .await?;
        Ok(Response::new(pb::SessionInstructionsReply {
            instructions: self.session_instructions(),
        }))
    }

    #[instrument(skip_all, name = "call_tool", fields(tool))]
    async fn call_tool(
        &self,
        req: Request<pb::CallToolRequest>,
    ) -> Result<Response<pb::CallToolReply>, Status> {
        let peer = peer_of(&req)?;
        let r = req.into_inner();
        tracing::Span::current().record("tool", r.tool.as_str());
        let from_memory = self.device.pool().is_taking_work()
            && self
                .device
                .answers_from_memory(&r.session_id, &r.tool, &r.arguments_json);
        let reply = if from_memory {
            self.device
                .call_tool(&r.session_id, peer, &r.tool, &r.arguments_json)?
        } else {
            // File tools touch whatever the user's folders hold: their own lane.
            self.in_lane(Lane::Tools, move |d| {
                d.call_tool(&r.session_id, peer, &r.tool, &r.arguments_json)
            })
            .await?
        };
        Ok(Response::new(pb::CallToolReply {
            text: reply.text,
            structured_json: reply.structured_json,
            is_error: reply.is_error,
            pin: Some(self.res(reply.pin)),
        }))
    }

    #[instrument(skip_all, name = "open_question")]
    async fn open_question(
        &self,
        req: Request<pb::OpenQuestionRequest>,
    ) -> Result<Response<pb::OpenQuestionReply>, Status> {
        let peer = peer_of(&req)?;
        self.on_pool(req, move |d, r| {
            Ok(match d.open_question(&r.session_id, peer)? {
                Some(o) => pb::OpenQuestionReply {
                    ask: true,
                    project: o.project,
                    proposal: o.proposal.unwrap_or_default(),
                    workspaces: o.workspaces,
                    wait_secs: o.wait_secs,
                    max_name_chars: berth_core::names::MAX_NAME_LEN as u32,
                },
                None => pb::OpenQuestionReply::default(),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "answer_question")]
    async fn answer_question(
        &self,
        req: Request<pb::AnswerQuestionRequest>,
    ) -> Result<Response<pb::AnswerQuestionReply>, Status> {
        let peer = peer_of(&req)?;
        let r = req.into_inner();
        let choice = crate::ops::question::Choice {
            workspace: r.workspace,
            new_name: r.new_name,
            not_now: r.not_now,
            allow_overlap: r.allow_overlap,
        };
        // It may write a project file and the registry, as use_workspace does.
        let answered = self
            .in_lane(Lane::Tools, move |d| {
                d.answer_question(&r.session_id, peer, &choice)
            })
            .await?;
        Ok(Response::new(match answered {
            crate::ops::question::Answered::Done(done) => pb::AnswerQuestionReply {
                overlap: String::new(),
                done,
            },
            crate::ops::question::Answered::Overlap(overlap) => pb::AnswerQuestionReply {
                overlap,
                done: Vec::new(),
            },
        }))
    }

    #[instrument(skip_all, name = "qualify_path")]
    async fn qualify_path(
        &self,
        req: Request<pb::QualifyPathRequest>,
    ) -> Result<Response<pb::QualifyPathReply>, Status> {
        self.on_pool(req, |d, r| {
            let (qualified, absolute, workspace) = d.qualify_for(&caller_of(r.caller)?, &r.path)?;
            Ok(pb::QualifyPathReply {
                qualified,
                absolute: opt_path_text(absolute),
                workspace: workspace.unwrap_or_default(),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "hook", fields(event))]
    async fn hook(&self, req: Request<pb::HookRequest>) -> Result<Response<pb::HookReply>, Status> {
        let peer = peer_of(&req)?;
        let mut r = req.into_inner();
        tracing::Span::current().record("event", r.event.as_str());
        let caller = caller_of(r.caller.take())?;
        let in_memory = (r.event == "session-start" && self.device.pool().is_taking_work())
            .then(|| {
                self.device
                    .session_start_in_memory(&caller, &hook_call(&r, peer))
            })
            .flatten();
        let done = match in_memory {
            Some(done) => done?,
            None => {
                self.blocking(move |d| d.hook(&caller, &hook_call(&r, peer)))
                    .await?
            }
        };
        Ok(Response::new(pb::HookReply {
            resolution: Some(self.res(done.answer)),
            context: done.context,
            stop_command: done.stop_command.unwrap_or_default(),
            stop_timeout_secs: done.stop_timeout_secs,
        }))
    }

    #[instrument(skip_all, name = "guard", fields(tool))]
    async fn guard(
        &self,
        req: Request<pb::GuardRequest>,
    ) -> Result<Response<pb::GuardReply>, Status> {
        let mut r = req.into_inner();
        tracing::Span::current().record("tool", r.tool.as_str());
        let caller = caller_of(r.caller.take())?;
        let followed: Vec<Followed> = std::mem::take(&mut r.followed)
            .into_iter()
            .map(|f| Followed {
                path: f.path.into(),
                folder: f.folder.into(),
            })
            .collect();
        // From memory when the cache vouches for the hook's following of every target
        // (docs/decisions/0052-the-guard-answers-from-memory.md); else on the pool, where each
        // target is followed on the disk.
        let in_memory = self
            .device
            .pool()
            .is_taking_work()
            .then(|| {
                self.device
                    .guard_in_memory(&caller, &guard_call(&r, &followed))
            })
            .flatten();
        let done = match in_memory {
            Some(done) => done?,
            None => {
                self.blocking(move |d| d.guard(&caller, &guard_call(&r, &[])))
                    .await?
            }
        };
        Ok(Response::new(pb::GuardReply {
            decision: done
                .decision
                .map(|d| d.as_str().to_string())
                .unwrap_or_default(),
            reason: done.reason,
            workspace: done.workspace,
            target: opt_path_text(done.target),
            other_workspace: done.other_workspace,
            other_folder: opt_path_text(done.other_folder),
        }))
    }

    #[instrument(skip_all, name = "list_sessions")]
    async fn list_sessions(
        &self,
        req: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsReply>, Status> {
        self.on_pool(req, |d, r| {
            let (listed, keep_hours) = d.list_sessions(r.all, d.now_secs())?;
            Ok(pb::ListSessionsReply {
                sessions: listed.into_iter().map(Into::into).collect(),
                keep_hours: u32::try_from(keep_hours).unwrap_or(u32::MAX),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "diagnose")]
    async fn diagnose(
        &self,
        req: Request<pb::DiagnoseRequest>,
    ) -> Result<Response<pb::DiagnoseReply>, Status> {
        self.on_pool(req, |d, _| {
            let d = d.diagnose()?;
            Ok(pb::DiagnoseReply {
                data_dir: path_text(d.data_dir),
                database: path_text(d.database),
                integrity: d.integrity,
                log_file: path_text(d.log_file),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "status")]
    async fn status(
        &self,
        _: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusReply>, Status> {
        let d = &self.device;
        Ok(Response::new(pb::StatusReply {
            version: d.version().to_string(),
            pid: std::process::id(),
            socket: d.socket().display().to_string(),
            data_dir: d.data_dir().display().to_string(),
            protocol: PROTOCOL,
            cache_entries: d.fs().stats().entries as u64,
            watches: d.fs().stats().watches as u64,
            calls_running: d.pool().running() as u64,
        }))
    }

    #[instrument(skip_all, name = "ping")]
    async fn ping(&self, _: Request<pb::PingRequest>) -> Result<Response<pb::PingReply>, Status> {
        Ok(Response::new(pb::PingReply {}))
    }

    #[instrument(skip_all, name = "shutdown")]
    async fn shutdown(
        &self,
        _: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownReply>, Status> {
        tracing::info!("shutdown requested");
        // Answered only once no write can commit any more.
        self.device.shut_down(STOP_GRACE).await;
        Ok(Response::new(pb::ShutdownReply {}))
    }

    #[instrument(skip_all, name = "resolve")]
    async fn resolve(
        &self,
        req: Request<pb::ResolveRequest>,
    ) -> Result<Response<pb::ResolveReply>, Status> {
        let r = req.into_inner();
        let caller = caller_of(r.caller)?;
        let answer = self
            .resolve_answer(caller, r.path, r.workspace, mode_of(r.mode))
            .await?;
        // berth exec's command gets the home's path, so the folder must be there; an answer
        // it refuses to run with leaves nothing behind.
        let home = if r.open_home && answer.reason != berth_core::resolve::Reason::Active {
            let name = answer.workspace.clone();
            path_text(self.blocking(move |d| d.ready_home(&name)).await?)
        } else {
            String::new()
        };
        Ok(Response::new(pb::ResolveReply {
            resolution: Some(pb::Resolution {
                home,
                ..self.res(answer)
            }),
        }))
    }

    #[instrument(skip_all, name = "explain")]
    async fn explain(
        &self,
        req: Request<pb::ResolveRequest>,
    ) -> Result<Response<pb::ExplainReply>, Status> {
        self.on_pool(req, |d, r| {
            let caller = caller_of(r.caller)?;
            let (answer, ex) = d.explain(&caller, &r.path, opt(&r.workspace), mode_of(r.mode))?;
            Ok(pb::ExplainReply {
                resolution: Some(resolution(d, answer)),
                steps: ex.steps.into_iter().map(explain_step).collect(),
                stopped: ex.stopped,
                decided: ex.decided,
            })
        })
        .await
    }

    #[instrument(skip_all, name = "claim")]
    async fn claim(
        &self,
        req: Request<pb::ClaimRequest>,
    ) -> Result<Response<pb::ClaimReply>, Status> {
        self.on_pool(req, |d, r| {
            let workspaces = d.claim(&caller_of(r.caller)?, &r.cwds)?;
            if !r.workspace.is_empty() && !d.registry().exists(&r.workspace) {
                return Err(d.unknown_workspace(&r.workspace));
            }
            let allowed = !r.workspace.is_empty() && workspaces.contains(&r.workspace);
            Ok(pb::ClaimReply {
                workspaces,
                allowed,
            })
        })
        .await
    }

    #[instrument(skip_all, name = "list_workspaces")]
    async fn list_workspaces(
        &self,
        req: Request<pb::ListWorkspacesRequest>,
    ) -> Result<Response<pb::ListWorkspacesReply>, Status> {
        // Opens each local home (to report one moved or swapped): filesystem work, off the
        // async workers.
        self.on_pool(req, |d, _| {
            let (active, views) = d.list_workspaces()?;
            Ok(pb::ListWorkspacesReply {
                active,
                workspaces: views.into_iter().map(Into::into).collect(),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "create_workspace")]
    async fn create_workspace(
        &self,
        req: Request<pb::CreateWorkspaceRequest>,
    ) -> Result<Response<pb::WorkspaceInfo>, Status> {
        self.on_pool(req, |d, r| {
            let view = d.create_workspace(&r.name, opt(&r.home))?;
            Ok(pb::WorkspaceInfo {
                warnings: d.shadowed_folders(&r.name),
                ..view.into()
            })
        })
        .await
    }

    #[instrument(skip_all, name = "delete_workspace")]
    async fn delete_workspace(
        &self,
        req: Request<pb::DeleteWorkspaceRequest>,
    ) -> Result<Response<pb::DeleteWorkspaceReply>, Status> {
        self.on_pool(req, |d, r| {
            let done = d.delete_workspace(&r.name, r.purge)?;
            Ok(pb::DeleteWorkspaceReply {
                notes: done.notes,
                purged: done.purged,
            })
        })
        .await
    }

    #[instrument(skip_all, name = "switch_workspace")]
    async fn switch_workspace(
        &self,
        req: Request<pb::SwitchWorkspaceRequest>,
    ) -> Result<Response<pb::WorkspaceInfo>, Status> {
        self.on_pool(req, |d, r| d.switch_workspace(&r.name).map(Into::into))
            .await
    }

    #[instrument(skip_all, name = "use_workspace")]
    async fn use_workspace(
        &self,
        req: Request<pb::UseWorkspaceRequest>,
    ) -> Result<Response<pb::UseWorkspaceReply>, Status> {
        self.on_pool(req, |d, r| {
            let caller = caller_of(r.caller)?;
            let done = d.use_workspace(&caller, &r.name, r.allow_overlap, mode_of(r.mode))?;
            Ok(pb::UseWorkspaceReply {
                folder: opt_path_text(done.folder),
                created: done.created,
                root_added: done.root_added,
                project_file: opt_path_text(done.project_file),
                notes: done.notes,
                resolution: Some(resolution(d, done.answer)),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "add_root")]
    async fn add_root(
        &self,
        req: Request<pb::RootRequest>,
    ) -> Result<Response<pb::RootReply>, Status> {
        self.on_pool(req, |d, r| {
            let caller = caller_of(r.caller)?;
            let (path, _) = d.add_root(&caller, &r.workspace, &r.path, r.allow_overlap)?;
            Ok(pb::RootReply {
                workspace: r.workspace,
                path: path_text(path),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "remove_root")]
    async fn remove_root(
        &self,
        req: Request<pb::RootRequest>,
    ) -> Result<Response<pb::RootReply>, Status> {
        self.on_pool(req, |d, r| {
            let path = d.remove_root(&caller_of(r.caller)?, &r.workspace, &r.path)?;
            Ok(pb::RootReply {
                workspace: r.workspace,
                path: path_text(path),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "list_roots")]
    async fn list_roots(
        &self,
        req: Request<pb::ListRootsRequest>,
    ) -> Result<Response<pb::ListRootsReply>, Status> {
        self.on_pool(req, |d, r| {
            let roots = d.list_roots(opt(&r.workspace))?;
            Ok(pb::ListRootsReply {
                roots: roots
                    .into_iter()
                    .map(|r| pb::RootEntry {
                        workspace: r.workspace,
                        path: path_text(r.path),
                    })
                    .collect(),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "get_setting")]
    async fn get_setting(
        &self,
        req: Request<pb::SettingRequest>,
    ) -> Result<Response<pb::SettingReply>, Status> {
        self.on_pool(req, |d, r| {
            let value = d.get_setting(&r.key)?;
            Ok(pb::SettingReply { key: r.key, value })
        })
        .await
    }

    #[instrument(skip_all, name = "set_setting")]
    async fn set_setting(
        &self,
        req: Request<pb::SettingRequest>,
    ) -> Result<Response<pb::SettingReply>, Status> {
        self.on_pool(req, |d, r| {
            d.set_setting(&r.key, &r.value)?;
            Ok(pb::SettingReply {
                key: r.key,
                value: Some(r.value),
            })
        })
        .await
    }

    #[instrument(skip_all, name = "unset_setting")]
    async fn unset_setting(
        &self,
        req: Request<pb::SettingRequest>,
    ) -> Result<Response<pb::SettingReply>, Status> {
        self.on_pool(req, |d, r| {
            d.unset_setting(&r.key)?;
            Ok(pb::SettingReply {
                key: r.key,
                value: None,
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const OURS: &str = "0.5.0";

    fn check(stamp: Option<&str>) -> Result<(), Status> {
        let mut req = Request::new(());
        if let Some(s) = stamp {
            req.metadata_mut()
                .insert(CLIENT_VERSION_HEADER, s.parse().expect("ASCII stamp"));
        }
        check_client_version(OURS, &req)
    }

    /// A newer daemon meeting an old client: the old client has no code to
    /// restart anything, so the message itself must say what happened and
    /// what to do, naming both versions.
    #[test]
    fn an_older_client_speaking_an_older_protocol_is_told_to_upgrade_naming_both_versions() {
        let err = check(Some("0.0.1/0")).unwrap_err();
        assert_eq!(Code::of(&err), Some(Code::ClientOutdated));
        let msg = err.message();
        for needle in ["0.0.1", OURS, "upgrade berth", "berth daemon stop"] {
            assert!(msg.contains(needle), "{needle:?} missing from {msg:?}");
        }
    }

    /// A newer client meeting this daemon: `daemon-outdated`, which the
    /// client answers by replacing the daemon.
    #[rstest]
    #[case::a_newer_version("99.0.0/1".to_string())]
    #[case::a_newer_protocol(format!("{OURS}/{}", PROTOCOL + 1))]
    fn a_newer_client_finds_the_daemon_outdated(#[case] stamp: String) {
        let err = check(Some(&stamp)).unwrap_err();
        assert_eq!(Code::of(&err), Some(Code::DaemonOutdated));
        assert!(err.message().contains(OURS), "{}", err.message());
    }

    #[rstest]
    #[case::the_same_version(Some(format!("{OURS}/{PROTOCOL}")))]
    #[case::an_older_client_on_the_same_protocol(Some(format!("0.4.9/{PROTOCOL}")))]
    #[case::no_stamp(None)]
    fn compatible_clients_and_other_tools_are_served(#[case] stamp: Option<String>) {
        assert!(check(stamp.as_deref()).is_ok());
    }
}
