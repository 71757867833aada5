//! What `workspace use` (and the MCP `use_workspace` tool) does for a project folder, decided
//! from plain data before anything is written (docs/decisions/0005-workspace-use-decides-everything-before-writing.md).
//!
//! [`plan`] takes the registry, the chosen name, the folder and the project file's current
//! bytes, and returns a [`UsePlan`]: whether the workspace is created, whether the folder
//! becomes a root, and what the project file becomes. Every refusal is an `Err` of [`plan`], so
//! a caller holding a `UsePlan` has nothing left to decide: the daemon only applies it.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::registry::{Registry, Root};
use crate::resolve::Mode;

/// Everything `use` writes, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsePlan {
    /// The workspace is new and is created.
    pub create: bool,
    /// No root of the workspace contains the folder yet: it is approved as one.
    pub add_root: bool,
    /// What happens to the project file.
    pub file: FileEdit,
}

/// What happens to the project file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEdit {
    /// It already names the workspace: left as it is.
    Keep,
    /// It is written with `text`, its other keys kept. `backup` holds the old content when it
    /// was not a JSON object, to be saved next to it before it is replaced.
    Write {
        text: String,
        backup: Option<Vec<u8>>,
    },
}

/// Why `use` refuses a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UseRefusal {
    /// The folder overlaps roots of other workspaces, and the caller did not confirm it.
    Overlap {
        folder: PathBuf,
        others: Vec<Root>,
        mode: Mode,
    },
}

impl fmt::Display for UseRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overlap {
                folder,
                others,
                mode,
            } => {
                let confirm = match mode {
                    Mode::Cli => "repeat with --allow-overlap",
                    Mode::Agent => {
                        "ask the user, then call use_workspace again with allow_overlap: true"
                    }
                };
                f.write_str(&overlap_message(others, folder, confirm))
            }
        }
    }
}

impl std::error::Error for UseRefusal {}

/// The refusal of a folder that overlaps `others` (roots of other workspaces), ending with how
/// to confirm it. Shared by `use` and `root add`.
pub fn overlap_message<'a>(
    others: impl IntoIterator<Item = &'a Root>,
    dir: &Path,
    confirm: &str,
) -> String {
    let list: Vec<String> = others
        .into_iter()
        .map(|r| format!("{} (workspace {:?})", r.path.display(), r.workspace))
        .collect();
    format!(
        "{} overlaps roots of other workspaces: {}. Sharing folders between workspaces must be confirmed: {confirm}",
        dir.display(),
        list.join(", ")
    )
}

/// Decides what `use` of `name` for `folder` writes, given the registry and the project file's
/// current content (`None`: there is none). Refuses a folder that overlaps other workspaces'
/// roots unless `allow_overlap`.
pub fn plan(
    reg: &Registry,
    name: &str,
    folder: &Path,
    previous: Option<&[u8]>,
    allow_overlap: bool,
    mode: Mode,
) -> Result<UsePlan, UseRefusal> {
    let create = !reg.exists(name);
    let covered = !create && reg.root_of_workspace_contains(name, folder);
    if !covered && !allow_overlap {
        let others = reg.overlapping_roots(folder, name);
        if !others.is_empty() {
            return Err(UseRefusal::Overlap {
                folder: folder.to_path_buf(),
                others: others.into_iter().cloned().collect(),
                mode,
            });
        }
    }
    Ok(UsePlan {
        create,
        add_root: !covered,
        file: file_edit(previous, name),
    })
}

/// The project file naming `name`: `{"workspace": name}`, keeping the other keys of a file that
/// holds a JSON object; a file that does not is backed up and replaced.
pub fn file_edit(previous: Option<&[u8]>, name: &str) -> FileEdit {
    let mut object = serde_json::Map::new();
    let mut backup = None;
    if let Some(bytes) = previous {
        match serde_json::from_slice::<serde_json::Value>(bytes) {
            Ok(serde_json::Value::Object(existing)) => {
                if existing.get("workspace").and_then(|v| v.as_str()) == Some(name) {
                    return FileEdit::Keep;
                }
                object = existing;
            }
            _ => backup = Some(bytes.to_vec()),
        }
    }
    object.insert("workspace".into(), serde_json::Value::String(name.into()));
    let mut text = serde_json::to_string_pretty(&serde_json::Value::Object(object))
        .expect("a JSON object serialises");
    text.push('\n');
    FileEdit::Write { text, backup }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::registry;

    const P: &str = "/home/u/code/app";

    fn world() -> Registry {
        registry(
            &["default", "work", "notes"],
            "default",
            &[("work", "/home/u/code"), ("notes", "/home/u/code/app/docs")],
        )
    }

    fn write(text: &str) -> FileEdit {
        FileEdit::Write {
            text: text.into(),
            backup: None,
        }
    }

    #[test]
    fn a_new_workspace_is_created_and_its_folder_approved() {
        let reg = registry(&["default"], "default", &[]);
        let got = plan(&reg, "side", Path::new(P), None, false, Mode::Cli).unwrap();
        assert_eq!(
            got,
            UsePlan {
                create: true,
                add_root: true,
                file: write("{\n  \"workspace\": \"side\"\n}\n"),
            }
        );
    }

    #[test]
    fn a_folder_inside_a_root_of_the_workspace_adds_no_root() {
        let got = plan(&world(), "work", Path::new(P), None, false, Mode::Cli).unwrap();
        assert!(!got.create && !got.add_root, "{got:?}");
    }

    #[test]
    fn a_folder_overlapping_other_workspaces_is_refused_before_anything_is_decided() {
        let err = plan(&world(), "side", Path::new(P), None, false, Mode::Cli).unwrap_err();
        let UseRefusal::Overlap { others, .. } = &err;
        let paths: Vec<_> = others.iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/home/u/code"),
                PathBuf::from("/home/u/code/app/docs")
            ]
        );
        assert!(
            err.to_string()
                .ends_with("must be confirmed: repeat with --allow-overlap"),
            "{err}"
        );
        let agent = plan(&world(), "side", Path::new(P), None, false, Mode::Agent).unwrap_err();
        assert!(agent.to_string().contains("allow_overlap: true"), "{agent}");
        let allowed = plan(&world(), "side", Path::new(P), None, true, Mode::Cli).unwrap();
        assert!(allowed.create && allowed.add_root);
    }

    #[test]
    fn a_file_naming_the_workspace_already_is_kept() {
        let previous = br#"{"workspace": "work", "note": 1}"#;
        assert_eq!(file_edit(Some(previous), "work"), FileEdit::Keep);
    }

    #[test]
    fn other_keys_are_kept_and_the_workspace_replaced() {
        let previous = br#"{"note": "keep me", "workspace": "old"}"#;
        assert_eq!(
            file_edit(Some(previous), "work"),
            write("{\n  \"note\": \"keep me\",\n  \"workspace\": \"work\"\n}\n")
        );
    }

    #[test]
    fn a_file_that_is_not_a_json_object_is_backed_up_and_replaced() {
        for previous in [&b"{not json"[..], b"[1, 2]", b"\xff\xfe"] {
            assert_eq!(
                file_edit(Some(previous), "work"),
                FileEdit::Write {
                    text: "{\n  \"workspace\": \"work\"\n}\n".into(),
                    backup: Some(previous.to_vec()),
                },
                "{previous:?}"
            );
        }
    }
}
