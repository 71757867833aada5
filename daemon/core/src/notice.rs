//! The question an agent session asks the user once (docs/reference.md, "Agent sessions"), in
//! words: the workspace used meanwhile, the workspaces that exist, and the request
//! to ask once and call `use_workspace`. Pure: the MCP shim and the
//! session-start hook both show this text, so they say the same thing.
//! Paths, names and notes are escaped in it, as in every human output.

use berth_vocab::text::escaped;

use crate::resolve::{Answer, needs_asking};

/// The notice for `answer`, or `None` when nothing should be asked.
pub fn notice(answer: &Answer, workspaces: &[&str]) -> Option<String> {
    if !needs_asking(answer) {
        return None;
    }
    let project = answer.project.as_ref()?.display().to_string();
    let project = escaped(&project);
    let situation = match answer.proposal.as_deref().map(escaped) {
        Some(p) => format!(
            "The project {project} has a project file proposing workspace \"{p}\", which this device has not approved."
        ),
        None => format!("The project {project} is not assigned to a workspace."),
    };
    Some(format!(
        "berth: {situation} Meanwhile this session uses workspace \"{}\" (reason: {}). \
Workspaces on this device: {}. Ask the user once which workspace this project should use \
(one of these or a new name), then call use_workspace with that name. Do not ask again in this session.",
        escaped(&answer.workspace),
        answer.reason,
        escaped(&workspaces.join(", "))
    ))
}

/// The resolution's notes, one line each (an ignored project file, tied roots, a setting naming
/// a deleted workspace): docs/reference.md ("Roots, the walk and project files") has them reach the
/// user through the session too, so the session's first result and the session-start hook carry
/// them after the notice or status line.
pub fn notes(answer: &Answer) -> Option<String> {
    note_lines(&answer.notes)
}

/// Notes, one `berth note:` line each; `None` without notes.
pub fn note_lines(notes: &[String]) -> Option<String> {
    if notes.is_empty() {
        return None;
    }
    let lines: Vec<String> = notes
        .iter()
        .map(|n| format!("berth note: {}", escaped(n)))
        .collect();
    Some(lines.join("\n"))
}

/// Two optional texts as one, a line apart.
pub fn joined(first: Option<String>, then: Option<String>) -> Option<String> {
    match (first, then) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Reason;
    use std::path::PathBuf;

    fn answer(reason: Reason, project: Option<&str>, proposal: Option<&str>) -> Answer {
        Answer {
            workspace: "default".into(),
            reason,
            directory: PathBuf::from("/p"),
            project: project.map(PathBuf::from),
            project_file: None,
            proposal: proposal.map(str::to_string),
            notes: vec![],
        }
    }

    #[test]
    fn an_unassigned_project_is_asked_about_with_the_workspaces_listed() {
        let n = notice(&answer(Reason::Active, Some("/p"), None), &["default", "w"]).unwrap();
        assert!(n.contains("/p is not assigned"), "{n}");
        assert!(n.contains("uses workspace \"default\""), "{n}");
        assert!(n.contains("default, w"), "{n}");
        assert!(n.contains("use_workspace"), "{n}");
    }

    #[test]
    fn a_proposal_is_named_in_the_notice() {
        let n = notice(&answer(Reason::Root, Some("/p"), Some("x")), &["default"]).unwrap();
        assert!(n.contains("proposing workspace \"x\""), "{n}");
    }

    #[test]
    fn a_session_without_a_project_is_never_asked() {
        assert_eq!(
            notice(&answer(Reason::Active, None, None), &["default"]),
            None
        );
    }

    #[test]
    fn notes_are_one_line_each_and_none_without_notes() {
        let mut a = answer(Reason::Root, Some("/p"), None);
        assert_eq!(notes(&a), None);
        a.notes = vec![
            "ignored /p/.berth/workspace.json: not JSON".into(),
            "tied".into(),
        ];
        assert_eq!(
            notes(&a).unwrap(),
            "berth note: ignored /p/.berth/workspace.json: not JSON\nberth note: tied"
        );
        assert_eq!(joined(Some("a".into()), Some("b".into())).unwrap(), "a\nb");
        assert_eq!(joined(None, Some("b".into())).unwrap(), "b");
        assert_eq!(joined(None, None), None);
    }

    #[test]
    fn paths_and_notes_are_escaped_in_the_text() {
        let mut a = answer(Reason::Active, Some("/p/x\u{1b}]0;T\u{7}\nforged"), None);
        a.notes = vec!["ignored /p/x\u{1b}[1m: bad".into()];
        let n = notice(&a, &["default"]).unwrap();
        assert!(
            n.contains("/p/x\\u{1b}]0;T\\u{7}\\nforged is not assigned"),
            "{n}"
        );
        assert_eq!(
            notes(&a).unwrap(),
            "berth note: ignored /p/x\\u{1b}[1m: bad"
        );
    }

    #[test]
    fn an_assigned_project_is_not_asked_about() {
        assert_eq!(
            notice(&answer(Reason::Root, Some("/p"), None), &["default"]),
            None
        );
    }
}
