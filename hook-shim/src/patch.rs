//! Codex's `apply_patch` envelope: which files a patch adds, updates, moves or deletes. Pure:
//! text in, the files out, or why not. Only the file headers are read; hunks are skipped.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: <path>
//! +<line>
//! *** Update File: <path>
//! *** Move to: <new path>
//! @@ <context>
//! -<old>
//! +<new>
//! *** Delete File: <path>
//! *** End Patch
//! ```
//!
//! The command may wrap the envelope (`apply_patch <<'EOF' ... EOF`): everything before
//! `*** Begin Patch` and after `*** End Patch` is ignored. A header is a line that starts with
//! its marker (a hunk's lines start with a space, `-`, `+` or `@@`, so none is taken for one);
//! a carriage return at a line's end is dropped.

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `*** Add File: <path>`
    Add(String),
    /// `*** Update File: <path>`, with `*** Move to: <path>` when it is moved.
    Update {
        /// The file updated.
        path: String,
        /// Where it moves, when it does.
        move_to: Option<String>,
    },
    /// `*** Delete File: <path>`
    Delete(String),
}

/// Why a patch could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// No `*** Begin Patch` line.
    NoBegin,
    /// The envelope names no file.
    NoFiles,
    /// A header with nothing after its marker.
    EmptyPath(&'static str),
    /// `*** Move to:` not right after an `*** Update File:` header.
    StrayMove,
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatchError::NoBegin => write!(f, "the patch has no \"*** Begin Patch\" line"),
            PatchError::NoFiles => write!(f, "the patch names no file"),
            PatchError::EmptyPath(marker) => write!(f, "a \"{marker}\" header names no file"),
            PatchError::StrayMove => write!(
                f,
                "a \"*** Move to:\" header does not follow an \"*** Update File:\" header"
            ),
        }
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const UPDATE: &str = "*** Update File:";
const DELETE: &str = "*** Delete File:";
const MOVE: &str = "*** Move to:";

/// The files of the patch in `text`, in order.
pub fn parse(text: &str) -> Result<Vec<Op>, PatchError> {
    let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    if !lines.by_ref().any(|l| l.trim() == BEGIN) {
        return Err(PatchError::NoBegin);
    }
    let mut ops = Vec::new();
    // Whether the last line was an Update header (a Move may follow it only).
    let mut after_update = false;
    for line in lines {
        if line.trim() == END {
            break;
        }
        let header = |marker: &'static str| -> Option<Result<String, PatchError>> {
            let path = line.strip_prefix(marker)?.trim();
            Some(if path.is_empty() {
                Err(PatchError::EmptyPath(marker))
            } else {
                Ok(path.to_string())
            })
        };
        if let Some(path) = header(ADD) {
            ops.push(Op::Add(path?));
            after_update = false;
        } else if let Some(path) = header(UPDATE) {
            ops.push(Op::Update {
                path: path?,
                move_to: None,
            });
            after_update = true;
        } else if let Some(path) = header(DELETE) {
            ops.push(Op::Delete(path?));
            after_update = false;
        } else if let Some(path) = header(MOVE) {
            match ops.last_mut() {
                Some(Op::Update { move_to, .. }) if after_update => *move_to = Some(path?),
                _ => return Err(PatchError::StrayMove),
            }
            after_update = false;
        } else {
            after_update = false;
        }
    }
    if ops.is_empty() {
        return Err(PatchError::NoFiles);
    }
    Ok(ops)
}

/// Every file the patch touches: each one added, updated or deleted, and both ends of a move.
pub fn targets(ops: &[Op]) -> Vec<String> {
    let mut out = Vec::new();
    for op in ops {
        match op {
            Op::Add(p) | Op::Delete(p) => out.push(p.clone()),
            Op::Update { path, move_to } => {
                out.push(path.clone());
                out.extend(move_to.iter().cloned());
            }
        }
    }
    out
}

/// The invariants the fuzz target `apply_patch` asserts, and the corpus replay: never a panic;
/// a refusal has a message; an accepted patch names at least one file, every one non-empty,
/// without surrounding whitespace or a line break.
pub fn check(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    crate::shell_patch::check(text);
    match parse(text) {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(ops) => {
            let files = targets(&ops);
            assert!(!files.is_empty(), "accepted a patch naming no file");
            for f in files {
                assert!(!f.is_empty(), "an empty file name from {text:?}");
                assert_eq!(f.trim(), f, "untrimmed file name from {text:?}");
                assert!(!f.contains(['\n', '\r']), "a line break in {f:?}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_header_is_read_and_hunks_are_skipped() {
        let patch = "*** Begin Patch\n*** Add File: web/new.rs\n+fn main() {}\n+*** Update File: not/a/header\n*** Update File: /abs/lib.rs\n@@ fn a\n-old\n+new\n *** Delete File: context/line\n*** Update File: old.rs\n*** Move to: ../alpha/new.rs\n@@\n-x\n+y\n*** Delete File: gone.txt\n*** End Patch\n";
        assert_eq!(
            parse(patch).unwrap(),
            [
                Op::Add("web/new.rs".into()),
                Op::Update {
                    path: "/abs/lib.rs".into(),
                    move_to: None
                },
                Op::Update {
                    path: "old.rs".into(),
                    move_to: Some("../alpha/new.rs".into())
                },
                Op::Delete("gone.txt".into()),
            ]
        );
        assert_eq!(
            targets(&parse(patch).unwrap()),
            [
                "web/new.rs",
                "/abs/lib.rs",
                "old.rs",
                "../alpha/new.rs",
                "gone.txt"
            ]
        );
    }

    #[test]
    fn a_wrapped_envelope_and_crlf_lines_are_read() {
        let patch = "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Add File: a b.txt \r\n+x\r\n*** End Patch\r\nEOF\r\n*** Add File: after-the-end\n";
        assert_eq!(parse(patch).unwrap(), [Op::Add("a b.txt".into())]);
    }

    #[test]
    fn broken_patches_are_refused_with_their_reason() {
        assert_eq!(parse(""), Err(PatchError::NoBegin));
        assert_eq!(parse("*** Add File: x\n"), Err(PatchError::NoBegin));
        assert_eq!(
            parse("*** Begin Patch\n*** End Patch\n"),
            Err(PatchError::NoFiles)
        );
        assert_eq!(
            parse("*** Begin Patch\n*** Add File:   \n"),
            Err(PatchError::EmptyPath(ADD))
        );
        assert_eq!(
            parse("*** Begin Patch\n*** Add File: a\n*** Move to: b\n"),
            Err(PatchError::StrayMove)
        );
        assert_eq!(
            parse("*** Begin Patch\n*** Update File: a\n@@\n*** Move to: b\n"),
            Err(PatchError::StrayMove)
        );
        for e in [PatchError::NoBegin, PatchError::StrayMove] {
            assert!(!e.to_string().is_empty());
        }
    }

    /// The checked-in fuzz corpus (`fuzz/corpus/apply_patch/`) holds the fuzz target's
    /// invariants on stable.
    #[test]
    fn the_apply_patch_corpus_holds() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/apply_patch");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            if std::panic::catch_unwind(|| check(&bytes)).is_err() {
                panic!("{} breaks the apply_patch invariants", path.display());
            }
            n += 1;
        }
        assert!(n >= 10, "only {n} seeds in {}", dir.display());
    }
}
