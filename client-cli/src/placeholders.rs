//! The small template language of `berth exec` arguments and `berth prompt
//! --format`: `{name}` is replaced by a value, `{{` and `}}` stand for one
//! brace, and anything else in braces is refused before anything runs
//! (docs/decisions/0026-berth-exec.md).

/// Why a template cannot be filled; the message names the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

/// Fills `template` with `values` (name, value). A `}` that closes nothing
/// is kept as it is; a `{` must open `{{` or a known placeholder.
pub fn fill(template: &str, values: &[(&str, &str)]) -> Result<String, TemplateError> {
    let known: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template, &known)? {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Brace(b) => out.push(b),
            Piece::Name(name) => {
                let value = values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
                out.push_str(value.unwrap_or_default());
            }
        }
    }
    Ok(out)
}

/// The placeholders `template` holds, in order (`{{workspace}}` holds none).
pub fn names_in<'t>(template: &'t str, known: &[&str]) -> Result<Vec<&'t str>, TemplateError> {
    Ok(pieces(template, known)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Name(n) => Some(n),
            _ => None,
        })
        .collect())
}

/// One part of a template.
enum Piece<'t> {
    Text(&'t str),
    /// `{{` or `}}`, or a `}` that closes nothing.
    Brace(char),
    /// A known placeholder's name.
    Name(&'t str),
}

fn pieces<'t>(template: &'t str, known: &[&str]) -> Result<Vec<Piece<'t>>, TemplateError> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push(Piece::Text(&rest[..i]));
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{") {
            out.push(Piece::Brace('{'));
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            out.push(Piece::Brace('}'));
            rest = after;
        } else if let Some(after) = tail.strip_prefix('}') {
            out.push(Piece::Brace('}'));
            rest = after;
        } else {
            let inner = &tail[1..];
            let Some(end) = inner.find('}') else {
                return Err(TemplateError(format!(
                    "{template:?} has a `{{` that nothing closes, so it opens no placeholder; write `{{{{` for a literal brace"
                )));
            };
            let name = &inner[..end];
            if !known.contains(&name) {
                let known: Vec<String> = known.iter().map(|n| format!("{{{n}}}")).collect();
                return Err(TemplateError(format!(
                    "{template:?} has an unknown placeholder `{{{name}}}`; the known ones are {}, and `{{{{` is a literal brace",
                    known.join(", ")
                )));
            }
            out.push(Piece::Name(name));
            rest = &inner[end + 1..];
        }
    }
    out.push(Piece::Text(rest));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &[(&str, &str)] = &[
        ("workspace", "shop-2"),
        ("home", "/h/a b/é"),
        ("project", ""),
    ];

    #[test]
    fn placeholders_are_replaced_anywhere_in_a_word() {
        assert_eq!(fill("{workspace}", V).unwrap(), "shop-2");
        assert_eq!(
            fill("--dir={home}/notes", V).unwrap(),
            "--dir=/h/a b/é/notes"
        );
        assert_eq!(fill("{workspace}{workspace}", V).unwrap(), "shop-2shop-2");
        assert_eq!(fill("[{project}]", V).unwrap(), "[]");
        assert_eq!(fill("plain, ünïcode", V).unwrap(), "plain, ünïcode");
    }

    #[test]
    fn doubled_braces_are_one_brace_and_a_lone_closing_one_stays() {
        assert_eq!(fill("{{workspace}}", V).unwrap(), "{workspace}");
        assert_eq!(fill("{{{workspace}}}", V).unwrap(), "{shop-2}");
        assert_eq!(fill("a}b", V).unwrap(), "a}b");
        assert_eq!(fill("{{\"a\": 1}}", V).unwrap(), "{\"a\": 1}");
    }

    #[test]
    fn unknown_and_unclosed_placeholders_are_refused() {
        let e = fill("--x={work space}", V).unwrap_err().0;
        assert!(e.contains("`{work space}`"), "{e}");
        assert!(e.contains("{workspace}, {home}, {project}"), "{e}");
        let e = fill("{\"a\": 1}", V).unwrap_err().0;
        assert!(e.contains("unknown placeholder"), "{e}");
        let e = fill("x{workspace", V).unwrap_err().0;
        assert!(e.contains("nothing closes"), "{e}");
        assert!(fill("{}", V).is_err());
    }

    #[test]
    fn names_in_lists_the_placeholders_and_not_escaped_braces() {
        let known = ["workspace", "home", "project"];
        assert_eq!(
            names_in("a {home}/{project}", &known).unwrap(),
            ["home", "project"]
        );
        assert!(names_in("{{workspace}} a}b", &known).unwrap().is_empty());
        assert!(names_in("{homes}", &known).is_err());
    }
}
