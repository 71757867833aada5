//! Workspace names: the one rule every name must pass (docs/reference.md, "Terms"), checked
//! wherever a name enters berth (CLI, tools, project files, settings), so an invalid name never
//! reaches the registry.

use std::fmt;

use thiserror::Error;

/// The longest name allowed, in characters (all allowed characters are ASCII, so also bytes).
pub const MAX_NAME_LEN: usize = 40;

/// A name that breaks the rule; the message names it and states the rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "invalid workspace name {name:?} ({problem}): a name is 1 to {MAX_NAME_LEN} characters of \
     a-z, 0-9 and '-', and starts with a letter or digit"
)]
pub struct NameError {
    pub name: String,
    pub problem: NameProblem,
}

/// What exactly is wrong, for callers that branch and for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    Empty,
    TooLong { chars: usize },
    BadChar(char),
    LeadingDash,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("it is empty"),
            Self::TooLong { chars } => write!(f, "it is {chars} characters long"),
            // escape_unicode makes look-alikes (Cyrillic 'а', fullwidth '－') visible.
            Self::BadChar(c) if c.is_ascii_graphic() => write!(f, "it contains {c:?}"),
            Self::BadChar(c) => write!(f, "it contains '{}'", c.escape_unicode()),
            Self::LeadingDash => f.write_str("it starts with '-'"),
        }
    }
}

/// Checks `name` against the workspace name rule (docs/reference.md, "Terms").
pub fn check_workspace_name(name: &str) -> Result<(), NameError> {
    let fail = |problem| {
        Err(NameError {
            name: name.to_owned(),
            problem,
        })
    };
    if name.is_empty() {
        return fail(NameProblem::Empty);
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_LEN {
        return fail(NameProblem::TooLong { chars });
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return fail(NameProblem::BadChar(c));
    }
    // A leading dash would read as a flag on every command line that takes a name.
    if name.starts_with('-') {
        return fail(NameProblem::LeadingDash);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::a_single_letter_is_fine("a")]
    #[case::a_single_digit_is_fine("7")]
    #[case::the_default_workspace_is_fine("default")]
    #[case::dashes_inside_are_fine("my-notes-2")]
    #[case::a_trailing_dash_is_fine("notes-")]
    #[case::a_leading_digit_is_fine("2024-q1")]
    #[case::forty_characters_are_fine("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
    fn valid_names_pass(#[case] name: &str) {
        assert_eq!(check_workspace_name(name), Ok(()));
    }

    #[rstest]
    #[case::an_empty_name_is_refused("", NameProblem::Empty)]
    #[case::forty_one_characters_are_too_long(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        NameProblem::TooLong { chars: 41 }
    )]
    #[case::a_leading_dash_is_refused("-notes", NameProblem::LeadingDash)]
    #[case::a_lone_dash_is_refused("-", NameProblem::LeadingDash)]
    #[case::uppercase_is_refused("Notes", NameProblem::BadChar('N'))]
    #[case::underscore_is_refused("my_notes", NameProblem::BadChar('_'))]
    #[case::a_space_is_refused("my notes", NameProblem::BadChar(' '))]
    #[case::a_slash_is_refused("a/b", NameProblem::BadChar('/'))]
    #[case::a_dot_is_refused("..", NameProblem::BadChar('.'))]
    #[case::a_cyrillic_look_alike_is_refused("n\u{043e}tes", NameProblem::BadChar('\u{043e}'))]
    #[case::a_fullwidth_dash_is_refused("a\u{ff0d}b", NameProblem::BadChar('\u{ff0d}'))]
    #[case::a_non_breaking_hyphen_is_refused("a\u{2011}b", NameProblem::BadChar('\u{2011}'))]
    #[case::forty_unicode_characters_are_judged_by_character_not_length(
        "ééééééééééééééééééééééééééééééééééééééé",
        NameProblem::BadChar('é')
    )]
    fn invalid_names_are_refused_with_the_problem(
        #[case] name: &str,
        #[case] problem: NameProblem,
    ) {
        let err = check_workspace_name(name).unwrap_err();
        assert_eq!(err.problem, problem);
        assert_eq!(err.name, name);
    }

    #[test]
    fn the_message_names_the_name_and_states_the_rule() {
        let msg = check_workspace_name("My_Notes").unwrap_err().to_string();
        assert!(msg.contains("\"My_Notes\""), "{msg}");
        assert!(
            msg.contains("1 to 40 characters of a-z, 0-9 and '-'"),
            "{msg}"
        );
        assert!(msg.contains("starts with a letter or digit"), "{msg}");
    }

    #[test]
    fn a_look_alike_is_shown_escaped_in_the_message() {
        let msg = check_workspace_name("n\u{043e}tes")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("\\u{43e}"), "{msg}");
    }
}
