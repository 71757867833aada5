//! A tool result's JSON schema in words: each field's name, type and
//! meaning, one line each, for the `description` of a lean `outputSchema`
//! (docs/decisions/0030-lean-output-schemas.md). The words are read from the
//! schema schemars derives from the result types, so they cannot drift from
//! what the daemon returns.

use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The fields of a result schema of the shape `Outcome<T>` makes: a root
/// `anyOf` of branches (the tool's own result, then a failure), each
/// described. Fields every branch shares alike are written once, under
/// "Every result".
///
/// The failure and the shared fields are the same for every tool, so with
/// `explained_in` naming another tool they are written with their names and
/// types only, and a last line points at that tool's words for their meaning:
/// the tool list then says each meaning once rather than once per tool.
pub fn describe(schema: &Object, explained_in: Option<&str>) -> String {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let own = Words {
        defs: &defs,
        meanings: true,
    };
    let common = Words {
        defs: &defs,
        meanings: explained_in.is_none(),
    };
    let branches: Vec<(String, &Object)> = match schema.get("anyOf").and_then(Value::as_array) {
        Some(branches) => branches
            .iter()
            .filter_map(Value::as_object)
            .map(|b| (doc(b), own.resolve(b)))
            .collect(),
        None => vec![(String::new(), schema)],
    };
    let shared = shared_fields(branches.iter().map(|(_, b)| *b));
    let mut lines = Vec::new();
    for (i, (heading, branch)) in branches.iter().enumerate() {
        if !heading.is_empty() {
            lines.push(format!("{}:", heading.trim_end_matches('.')));
        }
        let words = if i == 0 { &own } else { &common };
        words.object(branch, &shared, "", &mut lines);
    }
    if !shared.is_empty() && branches.len() > 1 {
        lines.push("Every result:".to_string());
        let first = branches[0].1;
        common.fields(first, "", &mut lines, |name| shared.contains(name));
    }
    if let Some(tool) = explained_in
        && branches.len() > 1
    {
        lines.push(format!(
            "The failure's fields and those of every result mean what {tool}'s outputSchema says."
        ));
    }
    lines.join("\n")
}

/// The names of the fields every branch declares with the same schema.
fn shared_fields<'a>(mut branches: impl Iterator<Item = &'a Object>) -> Vec<String> {
    let Some(first) = branches.next() else {
        return Vec::new();
    };
    let rest: Vec<&Object> = branches.collect();
    if rest.is_empty() {
        return Vec::new();
    }
    properties(first)
        .filter(|(name, schema)| {
            rest.iter()
                .all(|b| properties(b).any(|(n, s)| n == *name && s == *schema))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

fn properties(object: &Object) -> impl Iterator<Item = (&String, &Value)> {
    object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// A schema's description, on one line.
fn doc(schema: &Object) -> String {
    let text = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

struct Words<'a> {
    defs: &'a Object,
    /// Whether each field's line carries its meaning, or only its name and type.
    meanings: bool,
}

impl<'a> Words<'a> {
    /// The schema a `$ref` points at, or the schema itself.
    fn resolve(&self, schema: &'a Object) -> &'a Object {
        schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| self.defs.get(name))
            .and_then(Value::as_object)
            .unwrap_or(schema)
    }

    /// An object's fields but `skip`, then its alternatives, if any.
    fn object(&self, object: &Object, skip: &[String], indent: &str, lines: &mut Vec<String>) {
        self.fields(object, indent, lines, |name| !skip.contains(name));
        let Some(alternatives) = object.get("anyOf").and_then(Value::as_array) else {
            return;
        };
        lines.push(format!("{indent}One of:"));
        let inner = format!("{indent}  ");
        for alternative in alternatives.iter().filter_map(Value::as_object) {
            let heading = doc(alternative);
            lines.push(format!("{inner}{}:", heading.trim_end_matches('.')));
            self.object(self.resolve(alternative), &[], &format!("{inner}  "), lines);
        }
    }

    /// One line per field that `keep` keeps, by name, and the fields of the objects
    /// an array field holds, indented beneath it.
    fn fields(
        &self,
        object: &Object,
        indent: &str,
        lines: &mut Vec<String>,
        keep: impl Fn(&String) -> bool,
    ) {
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // By name, so the words do not depend on whether serde_json keeps
        // the declaration order (a feature another crate may turn on).
        let mut fields: Vec<(&String, &Value)> =
            properties(object).filter(|(name, _)| keep(name)).collect();
        fields.sort_by_key(|(name, _)| *name);
        for (name, schema) in fields {
            let Some(schema) = schema.as_object() else {
                continue;
            };
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                ", optional"
            };
            let (ty, inner) = self.type_words(schema);
            let line = format!("{indent}- {name} ({ty}{optional})");
            lines.push(if self.meanings {
                format!("{line}: {}", doc(schema))
            } else {
                line
            });
            if let Some(inner) = inner {
                self.object(inner, &[], &format!("{indent}  "), lines);
            }
        }
    }

    /// A field's type in words, and the object schema its items have.
    fn type_words(&self, schema: &'a Object) -> (String, Option<&'a Object>) {
        let schema = self.resolve(schema);
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut inner = None;
        let mut words: Vec<String> = types
            .iter()
            .filter(|t| **t != "null")
            .map(|t| match *t {
                "array" => {
                    let items = schema
                        .get("items")
                        .and_then(Value::as_object)
                        .map(|i| self.type_words(i));
                    match items {
                        Some((item, nested)) => {
                            inner = nested;
                            format!("array of {item}s")
                        }
                        None => "array".to_string(),
                    }
                }
                "object" => {
                    inner = Some(schema);
                    "object".to_string()
                }
                t => t.to_string(),
            })
            .collect();
        if types.contains(&"null") {
            words.push("null".to_string());
        }
        (words.join(" or "), inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_branch_lists_its_fields_and_the_shared_ones_come_once_at_the_end() {
        let schema = json!({
            "anyOf": [
                {"$ref": "#/$defs/A", "description": "It worked."},
                {"$ref": "#/$defs/B", "description": "It failed."}
            ],
            "$defs": {
                "A": {"type": "object", "required": ["path", "notes"], "properties": {
                    "path": {"type": "string", "description": "The\n path."},
                    "notes": {"type": "array", "items": {"type": "string"}, "description": "Notes."}
                }},
                "B": {"type": "object", "required": ["error", "notes"], "properties": {
                    "error": {"type": "string", "description": "Why."},
                    "notes": {"type": "array", "items": {"type": "string"}, "description": "Notes."}
                }}
            }
        });
        let text = describe(schema.as_object().unwrap(), None);
        assert_eq!(
            text,
            "It worked:\n- path (string): The path.\nIt failed:\n- error (string): Why.\nEvery result:\n- notes (array of strings): Notes."
        );
        let text = describe(schema.as_object().unwrap(), Some("first"));
        assert_eq!(
            text,
            "It worked:\n- path (string): The path.\nIt failed:\n- error (string)\nEvery result:\n- notes (array of strings)\nThe failure's fields and those of every result mean what first's outputSchema says."
        );
    }

    #[test]
    fn arrays_of_objects_and_alternatives_are_written_beneath_their_field() {
        let schema = json!({
            "anyOf": [{"$ref": "#/$defs/Done", "description": "Done."}],
            "$defs": {
                "Done": {
                    "type": "object",
                    "properties": {
                        "gone": {"type": ["string", "null"], "description": "Maybe."},
                        "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}, "description": "Rows."}
                    },
                    "required": ["rows"],
                    "anyOf": [{"$ref": "#/$defs/Row", "description": "Just a row."}]
                },
                "Row": {"type": "object", "required": ["n"], "properties": {
                    "n": {"type": "integer", "description": "A number."}
                }}
            }
        });
        let text = describe(schema.as_object().unwrap(), Some("other"));
        assert_eq!(
            text,
            "Done:\n- gone (string or null, optional): Maybe.\n- rows (array of objects): Rows.\n  - n (integer): A number.\nOne of:\n  Just a row:\n    - n (integer): A number."
        );
    }
}
