//! A client's JSON file as that client reads it, kept as a concrete syntax
//! tree so that berth edits it in place
//! (docs/decisions/0043-json-with-comments-edited-in-place.md).
//!
//! `jsonc-parser`'s tree holds every comment, comma, space and line break of
//! the text; berth changes nodes of it and writes the file back from it, so
//! every byte outside berth's entries stays as it was. Each file has a
//! [`Reader`], the client whose rule decides whether it may hold comments and
//! trailing commas. Pure: text in, text out.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstContainerNode, CstLeafNode, CstNode, CstObject, CstRootNode};
use jsonc_parser::errors::{ParseError, ParseErrorKind};
use serde_json::{Map, Value};

/// How the client that reads a file parses it: plain JSON, or JSON with
/// comments (`//`, `/* */`) and trailing commas, as VS Code reads its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// The client whose rule decides: of the programs reading the file, the
    /// strictest (Claude Code's `settings.json` is VS Code's hook file too).
    pub client: &'static str,
    /// Whether comments and trailing commas are allowed.
    pub comments: bool,
}

impl Reader {
    /// Plain JSON, read by `client`.
    pub const fn plain(client: &'static str) -> Reader {
        Reader {
            client,
            comments: false,
        }
    }

    /// JSON with comments and trailing commas, read by `client`.
    pub const fn with_comments(client: &'static str) -> Reader {
        Reader {
            client,
            comments: true,
        }
    }

    /// Nothing of JSON5 beyond what the client allows: comments and trailing
    /// commas at most, as VS Code's own parser.
    fn options(self) -> ParseOptions {
        ParseOptions {
            allow_comments: self.comments,
            allow_trailing_commas: self.comments,
            allow_loose_object_property_names: false,
            allow_missing_commas: false,
            allow_single_quoted_strings: false,
            allow_hexadecimal_numbers: false,
            allow_unary_plus_numbers: false,
            allow_bare_decimal_point_numbers: false,
            allow_non_finite_numbers: false,
            allow_extended_string_escapes: false,
        }
    }
}

/// A UTF-8 byte order mark: the clients tried read past one, so it is kept
/// and not parsed.
const BOM: char = '\u{feff}';

/// The depth at which `jsonc-parser` stops nesting.
const MAX_DEPTH: usize = 512;

/// A parsed file: its tree, edited in place.
#[derive(Debug)]
pub struct Doc {
    root: CstRootNode,
    bom: bool,
}

impl Doc {
    /// Parses `text` as `reader` reads it. Text with no value (empty, or
    /// only spaces) is an empty object; anything but an object is refused,
    /// and so is a key twice in one object (clients differ on which counts).
    pub fn parse(text: &str, reader: Reader) -> Result<Doc, String> {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let options = reader.options();
        if !reader.comments {
            // The tree keeps comments as tokens, and so never refuses one itself.
            jsonc_parser::parse_to_ast(body, &Default::default(), &options)
                .map_err(|e| refusal(&e, reader))?;
        }
        let root = CstRootNode::parse(body, &options).map_err(|e| refusal(&e, reader))?;
        match root.value() {
            None => {}
            Some(v) if v.as_object().is_some() => {}
            Some(_) => return Err("its top level is not a JSON object".into()),
        }
        let doc = Doc { root, bom };
        doc.refuse_duplicate_keys()?;
        Ok(doc)
    }

    /// The top-level object, created when the text had none.
    pub fn object(&self) -> CstObject {
        self.root.object_value_or_set()
    }

    /// The top-level object when there is one.
    pub fn existing_object(&self) -> Option<CstObject> {
        self.root.object_value()
    }

    /// What the document means, comments and layout aside.
    pub fn value(&self) -> Map<String, Value> {
        match self.root.value().and_then(|v| v.to_serde_value()) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }

    /// Every comment, in order: with the value, what a person wrote.
    pub fn comments(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack: Vec<CstNode> = self.root.children().into_iter().rev().collect();
        while let Some(node) = stack.pop() {
            match node {
                CstNode::Container(c) => stack.extend(c.children().into_iter().rev()),
                CstNode::Leaf(CstLeafNode::Comment(c)) => out.push(c.raw_value()),
                CstNode::Leaf(_) => {}
            }
        }
        out
    }

    /// The text, byte order mark included.
    pub fn text(&self) -> String {
        let body = self.root.to_string();
        if self.bom {
            format!("{BOM}{body}")
        } else {
            body
        }
    }

    fn refuse_duplicate_keys(&self) -> Result<(), String> {
        let Some(top) = self.root.value() else {
            return Ok(());
        };
        let mut stack: Vec<(CstNode, String)> = vec![(top, String::new())];
        while let Some((node, path)) = stack.pop() {
            let CstNode::Container(container) = node else {
                continue;
            };
            match container {
                CstContainerNode::Object(obj) => {
                    let mut seen = std::collections::HashSet::new();
                    for prop in obj.properties() {
                        let name = prop.decoded_name().unwrap_or_default();
                        if !seen.insert(name.clone()) {
                            let place = if path.is_empty() {
                                "the top-level object".to_string()
                            } else {
                                format!("\"{path}\"")
                            };
                            return Err(format!(
                                "the key \"{name}\" appears twice in {place}; clients differ on which one counts, so berth changes nothing: remove one"
                            ));
                        }
                        if let Some(value) = prop.value() {
                            let inner = if path.is_empty() {
                                name
                            } else {
                                format!("{path}.{name}")
                            };
                            stack.push((value, inner));
                        }
                    }
                }
                CstContainerNode::Array(list) => {
                    for (i, element) in list.elements().into_iter().enumerate() {
                        stack.push((element, format!("{path}[{i}]")));
                    }
                }
                CstContainerNode::Root(_) | CstContainerNode::ObjectProp(_) => {}
            }
        }
        Ok(())
    }
}

/// What is wrong with the text, in the words of the client's rule where it
/// is the rule that refuses it.
fn refusal(e: &ParseError, reader: Reader) -> String {
    let at = format!("line {} column {}", e.line_display(), e.column_display());
    let rule = format!(
        "{} reads this file as plain JSON, without comments or trailing commas",
        reader.client
    );
    match e.kind() {
        ParseErrorKind::CommentsNotAllowed => {
            format!("it has a comment at {at}, and {rule}: remove the comments")
        }
        ParseErrorKind::TrailingCommasNotAllowed => {
            format!("it has a trailing comma at {at}, and {rule}: remove it")
        }
        ParseErrorKind::NestingDepthExceeded => format!(
            "its objects and lists nest more than {MAX_DEPTH} deep (at {at}), deeper than berth reads"
        ),
        kind => format!("it is not valid JSON ({kind} at {at})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VSCODE: Reader = Reader::with_comments("VS Code");
    const CURSOR: Reader = Reader::plain("Cursor");

    #[test]
    fn a_file_comes_back_byte_for_byte_comments_and_all() {
        for text in [
            "",
            "{}",
            "// top\n{\n  /* a */ \"a\": 1, // one\n  \"b\": [1, 2,],\n}\n",
            "\u{feff}{\r\n\t\"a\": 1\r\n}\r\n",
        ] {
            assert_eq!(Doc::parse(text, VSCODE).unwrap().text(), text);
        }
    }

    #[test]
    fn comments_and_trailing_commas_are_the_clients_call() {
        let text = "{\n  // mine\n  \"a\": 1\n}\n";
        assert!(Doc::parse(text, VSCODE).is_ok());
        let e = Doc::parse(text, CURSOR).unwrap_err();
        assert!(e.contains("a comment at line 2 column 3"), "{e}");
        assert!(e.contains("Cursor reads this file as plain JSON"), "{e}");
        let e = Doc::parse("{\"a\": 1,}", CURSOR).unwrap_err();
        assert!(e.contains("a trailing comma"), "{e}");
        // JSON5's other liberties are no client's.
        for text in ["{'a': 1}", "{a: 1}", "{\"a\": 0x1}", "{\"a\": 1 \"b\": 2}"] {
            assert!(Doc::parse(text, VSCODE).is_err(), "{text}");
        }
    }

    #[test]
    fn hostile_text_gets_a_clear_refusal() {
        let deep = "[".repeat(100_000);
        let e = Doc::parse(&format!("{{\"a\": {deep}"), VSCODE).unwrap_err();
        assert!(e.contains("nest more than 512 deep"), "{e}");
        let e = Doc::parse("{\n  /* never closed\n", VSCODE).unwrap_err();
        assert!(e.contains("not valid JSON") && e.contains("line 2"), "{e}");
        let e = Doc::parse("{\"s\": {\"x\": 1, \"x\": 2}}", VSCODE).unwrap_err();
        assert!(e.contains("\"x\" appears twice in \"s\""), "{e}");
        let e = Doc::parse("{\"s\": 1, \"s\": 1}", VSCODE).unwrap_err();
        assert!(e.contains("twice in the top-level object"), "{e}");
        assert!(Doc::parse("[1]", VSCODE).unwrap_err().contains("top level"));
        assert!(Doc::parse("{} {}", VSCODE).is_err());
    }

    #[test]
    fn the_value_and_the_comments_are_read_apart() {
        let doc = Doc::parse("{\n  // x\n  \"a\": {\"b\": [1]}, /* y */\n}", VSCODE).unwrap();
        assert_eq!(
            Value::Object(doc.value()),
            serde_json::json!({"a": {"b": [1]}})
        );
        assert_eq!(doc.comments(), ["// x", "/* y */"]);
        assert!(Doc::parse("  \n", CURSOR).unwrap().value().is_empty());
    }
}
