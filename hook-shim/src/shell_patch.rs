//! A shell command that runs `apply_patch`: the path Codex's models take to edit files.
//! Pure: the command's text in, the patches it applies and the folder their relative paths
//! are against out.
//!
//! Codex 0.171 reports such an edit to its pre-tool hook as a `Bash` call whose `command` is
//! `apply_patch <<'EOF' … EOF`, maybe after `cd <dir> &&`, and applies the patch itself; its
//! `apply_patch` helper on the `PATH` runs any other spelling. So every `apply_patch` (or
//! `applypatch`) word that starts a command makes every patch envelope in the command count.
//! Nothing else in a shell command is read
//! (docs/decisions/0048-the-native-tool-guard.md).

/// The patches a shell command applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellPatch<'a> {
    /// The folder of a leading `cd <dir> &&`, which the patches' relative paths are against.
    pub dir: Option<String>,
    /// Each patch's text, from its `*** Begin Patch` on.
    pub patches: Vec<&'a str>,
}

const NAMES: [&str; 2] = ["apply_patch", "applypatch"];
const BEGIN: &str = "*** Begin Patch";

/// The patches `command` applies, or `None` when it runs no `apply_patch` with a patch.
pub fn shell_patch(command: &str) -> Option<ShellPatch<'_>> {
    if !command_words(command).any(|(_, word)| NAMES.contains(&word)) {
        return None;
    }
    // Every envelope counts, wherever it is: a hunk's line may itself start with the word.
    let patches: Vec<&str> = command
        .match_indices(BEGIN)
        .map(|(at, _)| &command[at..])
        .collect();
    if patches.is_empty() {
        return None;
    }
    Some(ShellPatch {
        dir: leading_cd(command),
        patches,
    })
}

/// Each word that starts a command: at the start, or after `&&`, `||`, `;`, `|`, `&`, `(`,
/// or a line break; with its byte offset.
fn command_words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let start = at;
            let boundary =
                start == 0 || matches!(bytes[start - 1], b'&' | b'|' | b';' | b'(' | b'\n');
            at += 1;
            if !boundary {
                continue;
            }
            let word_at = start + leading_blanks(&text[start..]);
            let word_len = text[word_at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(text.len() - word_at);
            if word_len > 0 {
                at = word_at + word_len;
                return Some((word_at, &text[word_at..word_at + word_len]));
            }
        }
        None
    })
}

fn leading_blanks(s: &str) -> usize {
    s.len() - s.trim_start_matches([' ', '\t']).len()
}

/// The folder of a leading `cd <dir> &&` (the word unquoted, or in single or double quotes).
fn leading_cd(command: &str) -> Option<String> {
    let rest = command.trim_start().strip_prefix("cd")?;
    let rest = rest
        .strip_prefix([' ', '\t'])?
        .trim_start_matches([' ', '\t']);
    let (dir, after) = match rest.chars().next()? {
        q @ ('\'' | '"') => {
            let end = rest[1..].find(q)? + 1;
            (&rest[1..end], &rest[end + 1..])
        }
        _ => {
            let end = rest.find([' ', '\t', '&', ';', '\n']).unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    if dir.is_empty() || !after.trim_start_matches([' ', '\t']).starts_with("&&") {
        return None;
    }
    Some(dir.to_string())
}

/// The fuzz target's invariants (with the patch reader's): never panics; every patch found
/// starts with its envelope; a `cd` folder is never empty.
pub fn check(command: &str) {
    if let Some(found) = shell_patch(command) {
        assert!(!found.patches.is_empty());
        assert!(found.patches.iter().all(|p| p.starts_with(BEGIN)));
        assert!(found.dir.as_deref().is_none_or(|d| !d.is_empty()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n";

    #[test]
    fn codexs_heredoc_is_a_patch_against_the_payloads_folder() {
        let cmd = format!("apply_patch <<'PATCH'\n{PATCH}PATCH\n");
        let found = shell_patch(&cmd).expect("a patch");
        assert_eq!(found.dir, None);
        assert_eq!(found.patches.len(), 1);
        assert!(found.patches[0].contains("*** Add File: a.txt"));
    }

    #[test]
    fn a_leading_cd_names_the_folder_of_relative_paths() {
        for (cmd, dir) in [
            (
                format!("cd /w/alpha && apply_patch <<'E'\n{PATCH}E\n"),
                "/w/alpha",
            ),
            (
                format!("cd '/w/my alpha' && applypatch <<E\n{PATCH}E"),
                "/w/my alpha",
            ),
            (format!("  cd \"rel\"&&apply_patch <<E\n{PATCH}E"), "rel"),
        ] {
            let found = shell_patch(&cmd).unwrap_or_else(|| panic!("{cmd}"));
            assert_eq!(found.dir.as_deref(), Some(dir), "{cmd}");
        }
        // A `cd` not followed by `&&` is not the patch's folder.
        let cmd = format!("cd /x; apply_patch <<E\n{PATCH}E");
        let found = shell_patch(&cmd).unwrap();
        assert_eq!(found.dir, None);
    }

    #[test]
    fn every_apply_patch_of_a_command_counts() {
        let other = PATCH.replace("a.txt", "/w/alpha/b.txt");
        let cmd = format!("apply_patch <<A\n{PATCH}A\necho done && apply_patch <<B\n{other}B\n");
        let found = shell_patch(&cmd).unwrap();
        assert_eq!(found.patches.len(), 2);
        assert!(found.patches[1].starts_with("*** Begin Patch\n*** Add File: /w/alpha/b.txt"));
    }

    #[test]
    fn other_shell_commands_are_not_patches() {
        for cmd in [
            "ls -la",
            "echo apply_patch",
            "cat notes.txt # apply_patch",
            "my_apply_patch <<E\n*** Begin Patch\nE",
            "apply_patch --help",
            "",
        ] {
            assert_eq!(shell_patch(cmd), None, "{cmd:?}");
        }
    }
}
