//! The session's question put in the client's own form (docs/reference.md, "Agent sessions";
//! docs/decisions/0049-the-question-in-the-clients-own-form.md): where the client can show a
//! form (MCP elicitation), `berth-mcp` takes the question here before the session's first tool
//! call, puts it to the user, and hands the answer back, which is acted on as `use_workspace`
//! acts. Until an answer settles it, the question reserved is the notice the first result gives,
//! so a declined, cancelled, unanswered or invalid form falls back to today's notice, once.

use berth_core::names::check_workspace_name;
use berth_core::resolve::Mode;
use berth_vocab::settings::Setting;
use berth_vocab::text::escaped;

use crate::error::BerthError;
use crate::ops::device::Device;
use crate::ops::live::{Peer, Question};

/// The most workspaces one form offers by name; any other is reached through "a new
/// workspace", whose name field takes an existing name too.
pub const MAX_OFFERED: usize = 100;

/// The question as the shim puts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The project folder.
    pub project: String,
    /// The workspace the project's file proposes, if any (also first in `workspaces`).
    pub proposal: Option<String>,
    /// The workspaces offered, the proposal first.
    pub workspaces: Vec<String>,
    /// How long the form waits for the person (`ask.elicit_wait_secs`).
    pub wait_secs: u32,
}

/// The user's answer, as the shim read it from the form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    /// One of the offered workspaces ("" for a new one or "not now").
    pub workspace: String,
    /// A new workspace's name.
    pub new_name: String,
    /// "not now".
    pub not_now: bool,
    /// The sharing with overlapping workspaces was confirmed.
    pub allow_overlap: bool,
}

/// What an answer did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// Acted on; one line per thing done.
    Done(Vec<String>),
    /// Nothing changed: the folder overlaps other workspaces' roots (the message names them);
    /// the same answer with the sharing confirmed is needed.
    Overlap(String),
}

impl Device {
    /// Takes session `id`'s question for its client's form: `None` when nothing is to be asked
    /// (a session without a project, an assigned one, one that already returned a result, one
    /// whose linked hook already put the question, `ask.elicit off`). Taking it reserves the
    /// session's one question: the first result gives the notice unless the answer settles it.
    pub fn open_question(&self, id: &str, peer: Peer) -> Result<Option<Offer>, BerthError> {
        let session = self.own_session(id, peer)?;
        let store = self.store();
        let on = store.get_setting(Setting::AskElicit.key())?;
        if Setting::AskElicit.choice(on.as_deref()) == "off" {
            return Ok(None);
        }
        let wait = store.get_setting(Setting::AskElicitWaitSecs.key())?;
        let wait_secs =
            u32::try_from(Setting::AskElicitWaitSecs.number(wait.as_deref())).unwrap_or(u32::MAX);
        let reg = self.registry();
        let askable = |s: &crate::ops::live::Session| {
            !s.answered && s.pin_error.is_none() && s.question == Question::NotTaken
        };
        if !askable(&session) || berth_core::notice::notice(&session.pin, &reg.names()).is_none() {
            return Ok(None);
        }
        // A hook linked by the client's session id that asked already: no second question.
        if !session.client_session_id.is_empty()
            && !self.store().take_ask(&session.client_session_id)?
        {
            return Ok(None);
        }
        let mut live = self.sessions().table();
        let Some(s) = live.get_mut(id) else {
            return Ok(None);
        };
        let notice = match berth_core::notice::notice(&s.pin, &reg.names()) {
            Some(n) if askable(s) => n,
            _ => return Ok(None),
        };
        // Decided under the table's lock, as its hook decides (ADR 0046).
        if s.link.is_some() && std::mem::replace(&mut s.asked, true) {
            return Ok(None);
        }
        let proposal = s.pin.proposal.clone();
        let mut workspaces: Vec<String> = proposal.iter().cloned().collect();
        workspaces.extend(
            reg.names()
                .into_iter()
                .filter(|n| proposal.as_deref() != Some(*n))
                .take(MAX_OFFERED)
                .map(str::to_string),
        );
        workspaces.truncate(MAX_OFFERED);
        let project = s
            .pin
            .project
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        s.question = Question::Open {
            notice,
            offered: workspaces.clone(),
            overlap: None,
        };
        tracing::info!(
            session = id,
            "the session's question goes to the client's form"
        );
        Ok(Some(Offer {
            project,
            proposal,
            workspaces,
            wait_secs,
        }))
    }

    /// Acts on the user's answer to session `id`'s open question, as `use_workspace` would. An
    /// answer that is not one the form offered, a name that breaks the naming rule, or one given
    /// when no question is open is refused with nothing changed; the first result then gives
    /// the notice (when it still owes one).
    pub fn answer_question(
        &self,
        id: &str,
        peer: Peer,
        choice: &Choice,
    ) -> Result<Answered, BerthError> {
        let session = self.own_session(id, peer)?;
        let name = {
            let mut live = self.sessions().table();
            let Some(s) = live.get_mut(id) else {
                return Err(no_question());
            };
            let Question::Open {
                notice,
                offered,
                overlap,
            } = &s.question
            else {
                return Err(no_question());
            };
            let checked = check_choice(choice, offered, overlap.as_deref());
            match checked {
                Ok(Some(name)) => name,
                Ok(None) => {
                    let stays = format!(
                        "the user was asked in the client's form which workspace {} should use and chose \"not now\": this session stays on workspace {} (reason: {}); do not ask again in this session",
                        escaped(
                            &s.pin
                                .project
                                .as_ref()
                                .map(|p| p.display().to_string())
                                .unwrap_or_default()
                        ),
                        escaped(&s.pin.workspace),
                        s.pin.reason
                    );
                    s.question = Question::Answered {
                        done: vec![stays.clone()],
                    };
                    return Ok(Answered::Done(vec![stays]));
                }
                Err(e) => {
                    s.question = Question::Unanswered {
                        notice: notice.clone(),
                    };
                    return Err(e);
                }
            }
        };
        let used = self.use_or_overlap(&session.caller, &name, choice.allow_overlap, Mode::Agent);
        let mut live = self.sessions().table();
        let Some(s) = live.get_mut(id) else {
            return Err(no_question());
        };
        let notice = match &s.question {
            Question::Open { notice, .. } => notice.clone(),
            _ => return Err(no_question()),
        };
        match used {
            Ok(Ok(done)) => {
                drop(live);
                if done.folder.is_some() {
                    self.repin(id, done.answer.clone())?;
                }
                let mut lines = vec![match &done.folder {
                    Some(f) if done.answer.workspace == name => format!(
                        "the user chose workspace {} for {} in the client's form: this session now uses it{}{}",
                        escaped(&name),
                        escaped(&f.display().to_string()),
                        if done.created {
                            "; the workspace was created"
                        } else {
                            ""
                        },
                        if done.root_added {
                            "; the folder was approved as its root"
                        } else {
                            ""
                        },
                    ),
                    Some(f) => format!(
                        "the user chose workspace {} for {} in the client's form, but this session stays on workspace {} (reason: {}, which outranks the project file)",
                        escaped(&name),
                        escaped(&f.display().to_string()),
                        escaped(&done.answer.workspace),
                        done.answer.reason
                    ),
                    None => format!(
                        "the user chose workspace {} in the client's form",
                        escaped(&name)
                    ),
                }];
                lines.extend(done.notes);
                if let Some(s) = self.sessions().table().get_mut(id) {
                    s.question = Question::Answered {
                        done: lines.clone(),
                    };
                }
                tracing::info!(session = id, workspace = %name, "the form's answer was used");
                Ok(Answered::Done(lines))
            }
            Ok(Err(refusal)) => {
                if let Question::Open { overlap, .. } = &mut s.question {
                    *overlap = Some(name);
                }
                Ok(Answered::Overlap(refusal.to_string()))
            }
            Err(e) => {
                s.question = Question::Unanswered { notice };
                Err(e)
            }
        }
    }
}

/// The workspace an answer names (`None`: "not now"), or why it is refused: exactly one of an
/// offered workspace, a new name that keeps the naming rule, or "not now"; the sharing
/// confirmed only for the workspace whose overlap was asked about, and then only that one.
fn check_choice(
    choice: &Choice,
    offered: &[String],
    overlap: Option<&str>,
) -> Result<Option<String>, BerthError> {
    let given = [
        !choice.workspace.is_empty(),
        !choice.new_name.is_empty(),
        choice.not_now,
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(BerthError::invalid(
            "the form's answer must be exactly one of an offered workspace, a new workspace's name, or \"not now\"",
        ));
    }
    let name = if choice.not_now {
        None
    } else if !choice.workspace.is_empty() {
        if !offered.contains(&choice.workspace) {
            return Err(BerthError::invalid(format!(
                "{} is not one of the workspaces the form offered",
                escaped(&choice.workspace)
            )));
        }
        Some(choice.workspace.clone())
    } else {
        check_workspace_name(&choice.new_name).map_err(|e| BerthError::invalid(e.to_string()))?;
        Some(choice.new_name.clone())
    };
    match (overlap, choice.allow_overlap) {
        (None, false) => Ok(name),
        (Some(o), true) if name.as_deref() == Some(o) => Ok(name),
        (Some(_), false) => Err(BerthError::invalid(
            "the folder's sharing with other workspaces was asked about; only its confirmation is an answer now",
        )),
        _ => Err(BerthError::invalid(
            "the sharing was confirmed for a workspace whose overlap was not asked about",
        )),
    }
}

fn no_question() -> BerthError {
    BerthError::refused(
        "no question is open for this session: it was answered already, or its first result gave the notice",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered() -> Vec<String> {
        vec!["team".into(), "default".into()]
    }

    fn check(c: Choice, overlap: Option<&str>) -> Result<Option<String>, String> {
        check_choice(&c, &offered(), overlap).map_err(|e| e.message)
    }

    #[test]
    fn exactly_one_valid_answer_is_taken() {
        let ws = |w: &str| Choice {
            workspace: w.into(),
            ..Choice::default()
        };
        let new = |n: &str| Choice {
            new_name: n.into(),
            ..Choice::default()
        };
        assert_eq!(check(ws("team"), None), Ok(Some("team".into())));
        assert_eq!(check(new("fresh-1"), None), Ok(Some("fresh-1".into())));
        let not_now = Choice {
            not_now: true,
            ..Choice::default()
        };
        assert_eq!(check(not_now, None), Ok(None));
        assert!(check(ws("other"), None).unwrap_err().contains("not one of"));
        assert!(check(new("Bad Name"), None).is_err());
        assert!(check(new(&"x".repeat(10_000)), None).is_err());
        assert!(check(Choice::default(), None).is_err());
        let both = Choice {
            workspace: "team".into(),
            new_name: "fresh".into(),
            ..Choice::default()
        };
        assert!(check(both, None).is_err());
    }

    #[test]
    fn the_sharing_is_confirmed_only_for_the_workspace_asked_about() {
        let confirm = |w: &str| Choice {
            workspace: w.into(),
            allow_overlap: true,
            ..Choice::default()
        };
        assert_eq!(
            check(confirm("team"), Some("team")),
            Ok(Some("team".into()))
        );
        assert!(check(confirm("default"), Some("team")).is_err());
        assert!(check(confirm("team"), None).is_err());
        let again = Choice {
            workspace: "team".into(),
            ..Choice::default()
        };
        assert!(check(again, Some("team")).is_err());
    }
}
