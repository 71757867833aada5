//! The project file `<dir>/.berth/workspace.json` (docs/reference.md, "Roots, the walk and project
//! files"): where it lives, how big it may be, and how its bytes become a workspace name. Parsing
//! is pure; reading it is the daemon's job (`RealFs`). A file only *proposes* a workspace; whether it is
//! honoured is decided in `resolve`.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::names::{NameError, check_workspace_name};

/// The folder, inside a project, that holds berth's file.
pub const PROJECT_DIR: &str = ".berth";
/// The project file's name inside [`PROJECT_DIR`].
pub const PROJECT_FILE_NAME: &str = "workspace.json";
/// Anything larger is refused unread: the file holds one short name.
pub const MAX_PROJECT_FILE_BYTES: usize = 64 * 1024;

/// Why a project file is ignored. Each message completes "ignored <file>: ...".
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProjectFileError {
    #[error("it is larger than {} KiB", MAX_PROJECT_FILE_BYTES / 1024)]
    TooLarge,
    #[error("it is not UTF-8 text (invalid byte at offset {valid_up_to})")]
    NotUtf8 { valid_up_to: usize },
    #[error("it is not valid JSON: {0}")]
    InvalidJson(String),
    #[error("it holds {found}, not a JSON object like {{\"workspace\": \"notes\"}}")]
    NotAnObject { found: &'static str },
    #[error("it has no \"workspace\" key")]
    MissingWorkspace,
    #[error("its \"workspace\" is {found}, not a string")]
    WorkspaceNotString { found: &'static str },
    #[error(transparent)]
    InvalidName(#[from] NameError),
    #[error("it is {found}, not a regular file")]
    NotRegularFile { found: &'static str },
    #[error("it cannot be read: {0}")]
    Unreadable(String),
}

/// `<dir>/.berth/workspace.json`.
pub fn project_file_path(dir: &Path) -> PathBuf {
    dir.join(PROJECT_DIR).join(PROJECT_FILE_NAME)
}

/// The workspace a project file names. It must be a JSON object whose string `workspace` passes
/// the name rule; other keys are ignored, so later versions can add some.
pub fn parse_project_file(bytes: &[u8]) -> Result<String, ProjectFileError> {
    if bytes.len() > MAX_PROJECT_FILE_BYTES {
        return Err(ProjectFileError::TooLarge);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ProjectFileError::NotUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    // Some Windows editors write a byte-order mark; serde_json rejects it, a person would not.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ProjectFileError::InvalidJson(e.to_string()))?;
    let serde_json::Value::Object(map) = value else {
        return Err(ProjectFileError::NotAnObject {
            found: json_kind(&value),
        });
    };
    match map.get("workspace") {
        None => Err(ProjectFileError::MissingWorkspace),
        Some(serde_json::Value::String(name)) => {
            check_workspace_name(name)?;
            Ok(name.clone())
        }
        Some(other) => Err(ProjectFileError::WorkspaceNotString {
            found: json_kind(other),
        }),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::names::NameProblem;

    #[rstest]
    #[case::a_plain_file_names_its_workspace(r#"{"workspace": "notes"}"#, "notes")]
    #[case::extra_keys_are_ignored(r#"{"workspace": "notes", "comment": [1, 2], "v": 2}"#, "notes")]
    #[case::surrounding_whitespace_is_fine("\n  {\"workspace\":\"a-1\"}\n\n", "a-1")]
    #[case::a_byte_order_mark_is_tolerated("\u{feff}{\"workspace\": \"notes\"}", "notes")]
    fn valid_files_yield_the_workspace(#[case] text: &str, #[case] expected: &str) {
        assert_eq!(parse_project_file(text.as_bytes()), Ok(expected.to_owned()));
    }

    #[rstest]
    #[case::an_empty_file_is_invalid_json("", "not valid JSON")]
    #[case::a_truncated_object_is_invalid_json(r#"{"workspace": "no"#, "not valid JSON")]
    #[case::trailing_garbage_is_invalid_json(r#"{"workspace": "a"} x"#, "not valid JSON")]
    #[case::an_array_is_not_an_object(r#"["notes"]"#, "holds an array, not a JSON object")]
    #[case::null_is_not_an_object("null", "holds null, not a JSON object")]
    #[case::a_bare_string_is_not_an_object(r#""notes""#, "holds a string, not a JSON object")]
    #[case::an_object_without_workspace_is_refused(r#"{"name": "notes"}"#, "no \"workspace\" key")]
    #[case::a_number_is_not_a_name(r#"{"workspace": 7}"#, "is a number, not a string")]
    #[case::null_is_not_a_name(r#"{"workspace": null}"#, "is null, not a string")]
    #[case::an_invalid_name_is_refused(r#"{"workspace": "My Notes"}"#, "invalid workspace name")]
    #[case::a_key_in_another_case_does_not_count(r#"{"Workspace": "a"}"#, "no \"workspace\" key")]
    fn invalid_files_are_refused_with_a_reason(#[case] text: &str, #[case] reason: &str) {
        let err = parse_project_file(text.as_bytes()).unwrap_err();
        assert!(err.to_string().contains(reason), "{err}");
    }

    #[test]
    fn an_invalid_name_keeps_the_name_error() {
        let err = parse_project_file(br#"{"workspace": "-x"}"#).unwrap_err();
        assert!(matches!(
            err,
            ProjectFileError::InvalidName(NameError {
                problem: NameProblem::LeadingDash,
                ..
            })
        ));
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_offset() {
        assert_eq!(
            parse_project_file(b"{\"workspace\": \"\xff\"}"),
            Err(ProjectFileError::NotUtf8 { valid_up_to: 15 })
        );
    }

    #[test]
    fn invalid_json_carries_the_parser_message() {
        let err = parse_project_file(b"{").unwrap_err();
        assert!(err.to_string().contains("line 1 column 1"), "{err}");
    }

    /// A file of exactly `len` bytes: the object, padded with trailing spaces.
    fn padded(len: usize) -> Vec<u8> {
        let mut bytes = br#"{"workspace": "notes"}"#.to_vec();
        bytes.resize(len, b' ');
        bytes
    }

    #[rstest]
    #[case::exactly_64_kib_is_accepted(MAX_PROJECT_FILE_BYTES, Ok("notes".to_owned()))]
    #[case::one_byte_more_is_too_large(MAX_PROJECT_FILE_BYTES + 1, Err(ProjectFileError::TooLarge))]
    fn the_size_limit_is_64_kib_inclusive(
        #[case] len: usize,
        #[case] expected: Result<String, ProjectFileError>,
    ) {
        assert_eq!(parse_project_file(&padded(len)), expected);
    }

    #[test]
    fn the_path_is_inside_the_berth_folder() {
        assert_eq!(
            project_file_path(Path::new("/p")),
            PathBuf::from("/p/.berth/workspace.json")
        );
    }
}
