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
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{") {
            out.push('{');
            rest = after;
        } else if let Some(after) = tail.strip_prefix("}}") {
            out.push('}');
            rest = after;
        } else if let Some(after) = tail.strip_prefix('}') {
            out.push('}');
            rest = after;
        } else {
            let inner = &tail[1..];
            let Some(end) = inner.find('}') else {
                return Err(TemplateError(format!(
                    "{template:?} has a `{{` that nothing closes, so it opens no placeholder; write `{{{{` for a literal brace"
                )));
            };
            let name = &inner[..end];
            match values.iter().find(|(n, _)| *n == name) {
                Some((_, v)) => out.push_str(v),
                None => {
                    let known: Vec<String> =
                        values.iter().map(|(n, _)| format!("{{{n}}}")).collect();
                    return Err(TemplateError(format!(
                        "{template:?} has an unknown placeholder `{{{name}}}`; the known ones are {}, and `{{{{` is a literal brace",
                        known.join(", ")
                    )));
                }
            }
            rest = &inner[end + 1..];
        }
    }
    out.push_str(rest);
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
}
