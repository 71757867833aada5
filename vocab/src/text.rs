//! Wording shared by the daemon's and the clients' messages, and the one place that escapes
//! what human output shows (see ARCHITECTURE.md, "Escaping").

use std::borrow::Cow;

/// A user-given name as a message shows it: as typed when every character is visible and not a
/// quote (`no workspace plans — workspaces: …`, as docs/reference.md words it), else quoted and
/// escaped, so a space, a control character or an empty name cannot hide in the sentence.
pub fn shown(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '\'');
    if plain {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// `no workspace plans — workspaces: default, notes`: the one wording for a
/// name that is not a workspace, with the workspaces there are, so the next
/// step is in sight. Callers add what named it and how to create it.
pub fn no_workspace<S: AsRef<str>>(name: &str, known: &[S]) -> String {
    let known: Vec<&str> = known.iter().map(AsRef::as_ref).collect();
    format!(
        "no workspace {} — workspaces: {}",
        shown(name),
        known.join(", ")
    )
}

/// `text` as human output shows it: every control character escaped as Rust writes it (`\u{1b}`,
/// `\n`, `\r`, `\t`, `\u{7}`), and so are the Unicode controls that reorder the text a terminal
/// draws (`\u{202e}`). A path or a note can then never move the cursor, recolour or retitle the
/// terminal, reorder a line, or start a line of its own. Everything else stays as it is, so a
/// plain path reads as typed. JSON output never goes through here: serde escapes it exactly.
pub fn escaped(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// [`escaped`] for text made of several lines: every line break is kept, every other control
/// character escaped. For messages whose parts were not escaped one by one.
pub fn escaped_lines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n')
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let hidden = |c: char| is_hidden(c) && !keep(c);
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !hidden(c) {
            out.push(c);
        } else if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.extend(c.escape_unicode());
        }
    }
    Cow::Owned(out)
}

/// Control characters (C0, DEL, C1) and the bidirectional marks, embeddings, overrides and
/// isolates, which a terminal obeys rather than shows.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::{escaped, escaped_lines, no_workspace, shown};

    #[test]
    fn an_unknown_workspace_is_named_with_the_workspaces_there_are() {
        assert_eq!(
            no_workspace("plans", &["default", "notes"]),
            "no workspace plans — workspaces: default, notes"
        );
        assert_eq!(
            no_workspace("my plans", &Vec::<String>::new()),
            "no workspace \"my plans\" — workspaces: "
        );
    }

    #[test]
    fn control_characters_are_escaped_and_the_rest_is_kept() {
        let evil = "/p/evil\u{1b}[31mRED\u{1b}]0;TITLE\u{7}\r\nx\ty\u{9b}z\u{7f}";
        assert_eq!(
            escaped(evil),
            "/p/evil\\u{1b}[31mRED\\u{1b}]0;TITLE\\u{7}\\r\\nx\\ty\\u{9b}z\\u{7f}"
        );
        assert_eq!(escaped("a\u{202e}b\u{2066}c"), "a\\u{202e}b\\u{2066}c");
        for plain in [
            "/home/u/my project",
            "Ünïcode ✓ 日本",
            "C:\\Users\\u",
            "say \"hi\"",
        ] {
            assert!(
                matches!(escaped(plain), std::borrow::Cow::Borrowed(_)),
                "{plain}"
            );
        }
    }

    #[test]
    fn escaped_lines_keeps_line_breaks_only() {
        assert_eq!(escaped_lines("a\u{1b}[1m\nb\r\n"), "a\\u{1b}[1m\nb\\r\n");
        // Idempotent: escaped text has nothing left to escape.
        let once = escaped_lines("x\u{1b}y\n").into_owned();
        assert_eq!(escaped_lines(&once), once);
    }

    #[test]
    fn plain_names_are_shown_as_typed_and_others_quoted() {
        assert_eq!(shown("plans"), "plans");
        assert_eq!(shown("Ünïcode-ok"), "Ünïcode-ok");
        assert_eq!(shown(""), "\"\"");
        assert_eq!(shown("two words"), "\"two words\"");
        assert_eq!(shown("bell\u{7}"), "\"bell\\u{7}\"");
        assert_eq!(shown("say \"hi\""), "\"say \\\"hi\\\"\"");
    }
}
