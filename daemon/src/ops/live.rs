//! The live sessions: the table of sessions connected to this daemon, which the device holds
//! and the session operations (`ops::sessions`) read and change.

use std::collections::HashMap;
use std::sync::Mutex;

use berth_core::resolve::Answer;

use crate::error::BerthError;
use crate::ops::caller::Caller;

/// A live session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The daemon-made id (hex; also its scratch folder's name).
    pub id: String,
    /// Who the session is: its directory and forwarded environment.
    pub caller: Caller,
    /// The pinned resolution.
    pub pin: Answer,
    /// Why the pin is not the session's answer: `BERTH_WORKSPACE` names no workspace (an error:
    /// docs/reference.md, "Resolution"). `pin` is then the answer without it, for the folder a
    /// qualified path or a tool's own `workspace` reaches; calls without one get this error.
    pub pin_error: Option<BerthError>,
    /// `CLAUDE_CODE_SESSION_ID`, linking it to the same session's hooks.
    pub client_session_id: String,
    /// Whether the session already returned a tool result (the notice goes
    /// on the first one only).
    pub answered: bool,
}

/// The live sessions, by id.
#[derive(Debug, Default)]
pub struct Sessions {
    pub(super) live: Mutex<HashMap<String, Session>>,
}
