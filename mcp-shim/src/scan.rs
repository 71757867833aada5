//! A look at one line of JSON without parsing it: how deeply it nests, and
//! the `id` member of its top-level object. The scan goes a byte at a time,
//! keeps no more than the id, and can be fed in pieces, so a line too long to
//! hold is scanned as it is discarded and its error can still carry its id.

use rmcp::model::RequestId;

/// Longest `id` value the scan keeps; a longer one is not read.
const MAX_ID_BYTES: usize = 256;

/// What the scan has seen so far of one line.
#[derive(Debug, Default)]
pub struct Scan {
    depth: usize,
    max_depth: usize,
    /// Inside a string, and which one.
    string: Option<Str>,
    escaped: bool,
    at: At,
    /// The current top-level key's first bytes (up to three: is it `id`?).
    key: Vec<u8>,
    id: Id,
    /// The top level is an object the scan follows member by member.
    object: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Str {
    Key,
    Value,
    Nested,
}

/// Where the scan is, outside strings, in the line's top-level value.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum At {
    #[default]
    Start,
    /// In the top-level object, before a key (or its end).
    Key,
    Colon,
    Value,
    /// In a number or literal at the top level of the object.
    Scalar,
    /// After a member's value.
    After,
    /// Inside a nested value, or in a line whose top level is no object.
    Deeper,
    /// Past the end of the top-level object.
    End,
}

#[derive(Debug, Default)]
enum Id {
    #[default]
    NotYet,
    /// The next value is the id's.
    Next,
    Reading(Vec<u8>),
    Read(Vec<u8>),
    /// There is an id, but not one the scan can give (too long, an object).
    Unreadable,
}

impl Scan {
    /// Scans the next piece of the line (without its newline).
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some((&b, rest)) = bytes.split_first() {
            // Most of a long line is inside one string: skip to its end or
            // next escape at once.
            if matches!(self.string, Some(Str::Value | Str::Nested))
                && !self.escaped
                && !matches!(self.id, Id::Reading(_))
                && b != b'"'
                && b != b'\\'
            {
                match memchr::memchr2(b'"', b'\\', bytes) {
                    Some(i) => bytes = &bytes[i..],
                    None => return,
                }
                continue;
            }
            self.step(b);
            bytes = rest;
        }
    }

    /// The deepest nesting of arrays and objects seen (the top level is 1).
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The top-level object's `id`, when it is one JSON-RPC allows and the
    /// scan could read it.
    pub fn id(&self) -> Option<RequestId> {
        match &self.id {
            Id::Read(raw) => serde_json::from_slice(raw).ok(),
            _ => None,
        }
    }

    fn step(&mut self, b: u8) {
        if let Some(s) = self.string {
            self.in_string(s, b);
            return;
        }
        if self.at == At::Scalar {
            if b == b',' || b == b'}' || b.is_ascii_whitespace() {
                self.end_id_value();
                self.at = At::After;
            } else {
                self.push_id(b);
                return;
            }
        }
        match (self.at, b) {
            (_, b' ' | b'\t' | b'\r' | b'\n') => {}
            (At::End, _) => {}
            (At::Start, b'{') => {
                self.open();
                self.object = true;
                self.at = At::Key;
            }
            (At::Start, _) => {
                self.at = At::Deeper;
                self.step(b);
            }
            (At::Key, b'"') => {
                self.key.clear();
                self.string = Some(Str::Key);
            }
            (At::Key | At::After, b'}') => {
                self.depth -= 1;
                self.at = At::End;
            }
            (At::Colon, b':') => self.at = At::Value,
            (At::After, b',') => self.at = At::Key,
            (At::Value, _) => {
                if matches!(self.id, Id::Next) {
                    self.id = Id::Reading(Vec::new());
                }
                match b {
                    b'"' => {
                        self.push_id(b);
                        self.string = Some(Str::Value);
                    }
                    b'{' | b'[' => {
                        if matches!(self.id, Id::Reading(_)) {
                            self.id = Id::Unreadable;
                        }
                        self.open();
                        self.at = At::Deeper;
                    }
                    _ => {
                        self.push_id(b);
                        self.at = At::Scalar;
                    }
                }
            }
            (At::Deeper, b'"') => self.string = Some(Str::Nested),
            (At::Deeper, b'{' | b'[') => self.open(),
            (At::Deeper, b'}' | b']') => {
                self.depth = self.depth.saturating_sub(1);
                // Back in the top-level object, if that is what holds it.
                if self.depth == 1 && self.object {
                    self.at = At::After;
                } else if self.depth == 0 {
                    self.at = At::End;
                }
            }
            (At::Deeper, _) => {}
            // Not JSON the scan follows: keep counting depth, read no id.
            _ => {
                self.stop_reading_id();
                self.object = false;
                self.at = At::Deeper;
                self.step(b);
            }
        }
    }

    fn in_string(&mut self, s: Str, b: u8) {
        let ends = !self.escaped && b == b'"';
        self.escaped = !self.escaped && b == b'\\';
        match s {
            Str::Key if ends => {
                if self.key == b"id" && matches!(self.id, Id::NotYet) {
                    self.id = Id::Next;
                }
                self.at = At::Colon;
            }
            Str::Key => {
                if self.key.len() < 3 {
                    self.key.push(b);
                }
            }
            Str::Value => {
                self.push_id(b);
                if ends {
                    self.end_id_value();
                    self.at = At::After;
                }
            }
            Str::Nested => {}
        }
        if ends {
            self.string = None;
        }
    }

    fn open(&mut self) {
        self.depth = self.depth.saturating_add(1);
        self.max_depth = self.max_depth.max(self.depth);
    }

    fn push_id(&mut self, b: u8) {
        if let Id::Reading(raw) = &mut self.id {
            if raw.len() < MAX_ID_BYTES {
                raw.push(b);
            } else {
                self.id = Id::Unreadable;
            }
        }
    }

    fn end_id_value(&mut self) {
        if let Id::Reading(raw) = &mut self.id {
            self.id = Id::Read(std::mem::take(raw));
        }
    }

    fn stop_reading_id(&mut self) {
        if matches!(self.id, Id::Next | Id::Reading(_)) {
            self.id = Id::Unreadable;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Scan;
    use rmcp::model::RequestId;

    fn scan(pieces: &[&[u8]]) -> Scan {
        let mut scan = Scan::default();
        for piece in pieces {
            scan.feed(piece);
        }
        scan
    }

    fn id_of(line: &str) -> Option<RequestId> {
        scan(&[line.as_bytes()]).id()
    }

    #[test]
    fn the_top_level_id_is_read_wherever_it_stands() {
        let n = |i| Some(RequestId::Number(i));
        assert_eq!(id_of(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#), n(7));
        assert_eq!(
            id_of(r#"{"method":"x","params":{"id":1,"a":[{"id":2}]},"id":3}"#),
            n(3)
        );
        assert_eq!(id_of(r#"{ "id" : -12 }"#), n(-12));
        assert_eq!(id_of(r#"{"id":7}"#), n(7));
        assert_eq!(
            id_of(r#"{"params":"\"id\":9 \\","id":"a\"b"}"#),
            Some(RequestId::String("a\"b".into()))
        );
        // Keys that merely start like it, and ids JSON-RPC does not allow.
        assert_eq!(id_of(r#"{"idx":1,"i":2}"#), None);
        assert_eq!(id_of(r#"{"id":{"n":1}}"#), None);
        assert_eq!(id_of(r#"{"id":[1]}"#), None);
        assert_eq!(id_of(r#"{"id":true}"#), None);
        assert_eq!(id_of(r#"{"id":null}"#), None);
        assert_eq!(id_of(r#"[{"id":1}]"#), None);
        assert_eq!(id_of(r#""id""#), None);
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(300));
        assert_eq!(id_of(&long), None);
    }

    #[test]
    fn the_scan_reads_the_same_fed_a_byte_at_a_time() {
        let line =
            br#"{"method":"tools/call","params":{"arguments":{"content":"a\"}\\"}},"id":"q-1"}"#;
        let pieces: Vec<&[u8]> = line.chunks(1).collect();
        let scan = scan(&pieces);
        assert_eq!(scan.id(), Some(RequestId::String("q-1".into())));
        assert_eq!(scan.max_depth(), 3);
    }

    #[test]
    fn depth_is_counted_outside_strings_without_recursion() {
        assert_eq!(scan(&[b"{}"]).max_depth(), 1);
        assert_eq!(scan(&[br#"{"a":"[[[[{{"}"#]).max_depth(), 1);
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(scan(&[deep.as_bytes()]).max_depth(), 100_000);
        let unclosed = format!(r#"{{"id":5,"p":{}"#, "{\"a\":".repeat(1000));
        let scan = scan(&[unclosed.as_bytes()]);
        assert_eq!(scan.max_depth(), 1001);
        assert_eq!(scan.id(), Some(RequestId::Number(5)));
    }

    #[test]
    fn garbage_keeps_the_scan_going_but_reads_no_id_after_it() {
        assert_eq!(id_of(r#"{"id":1,x,"id":2}"#), Some(RequestId::Number(1)));
        assert_eq!(id_of(r#"{x "id":2}"#), None);
        assert_eq!(scan(&[b"\xff\xfe{[\x00"]).max_depth(), 2);
    }
}
