//! Wording shared by the daemon's and the clients' messages.

/// A user-given name as a message shows it: as typed when every character is visible and not a
/// quote (`no workspace plans — workspaces: …`, the SPEC's wording), else quoted and escaped, so
/// a space, a control character or an empty name cannot hide in the sentence.
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

#[cfg(test)]
mod tests {
    use super::shown;

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
