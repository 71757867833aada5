//! A JSON object read as its members' raw text, so the relay can change one
//! member and write every other byte of it back as it came: ids keep their
//! exact digits, arguments their numbers, strings their escapes.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

/// The members of one JSON object, in their order, duplicates kept.
#[derive(Debug, Default, Clone)]
pub struct Fields<'a>(Vec<(String, Cow<'a, RawValue>)>);

impl<'a> Fields<'a> {
    /// Reads `text` as an object; anything else (an array, a number, text
    /// that is not JSON) is `None`.
    pub fn parse(text: &'a [u8]) -> Option<Fields<'a>> {
        serde_json::from_slice(text).ok()
    }

    /// Reads a member's raw value as an object.
    pub fn of(raw: &'a RawValue) -> Option<Fields<'a>> {
        serde_json::from_str(raw.get()).ok()
    }

    /// The raw value of `key`; the last one when it repeats, as JSON
    /// readers take it.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// `key`'s value read as a string.
    pub fn str(&self, key: &str) -> Option<String> {
        self.get(key)
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
    }

    /// Whether the object has `key`.
    pub fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// The members' names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// Sets `key` (every copy of it) to `value`, or adds it at the end.
    pub fn set(&mut self, key: &str, value: Box<RawValue>) {
        let mut value = Some(value);
        self.0.retain_mut(|(k, v)| {
            if k != key {
                return true;
            }
            match value.take() {
                Some(new) => {
                    *v = Cow::Owned(new);
                    true
                }
                None => false,
            }
        });
        if let Some(new) = value {
            self.0.push((key.to_string(), Cow::Owned(new)));
        }
    }

    /// Removes `key` (every copy of it).
    pub fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// Keeps the members for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &RawValue) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
    }

    /// The object as compact JSON text: the members' values byte for byte.
    pub fn to_text(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            // A String always serializes.
            out.push_str(&serde_json::to_string(k).unwrap_or_default());
            out.push(':');
            out.push_str(v.get());
        }
        out.push('}');
        out
    }

    /// The object as a raw JSON value.
    pub fn to_raw(&self) -> Box<RawValue> {
        raw(self.to_text())
    }
}

/// Text the relay wrote itself as a raw value. Every caller passes JSON it
/// built from parsed parts, so the fallback (`null`) is never taken.
pub fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Fields<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push((k, Cow::Borrowed(v)));
                }
                Ok(Fields(members))
            }
        }
        d.deserialize_map(Members(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_members_keep_their_bytes() {
        let text = br#"{"id": 123456789012345678901234567890, "x": "\u00e9", "n": 1.50}"#;
        let f = Fields::parse(text).unwrap();
        assert_eq!(
            f.to_text(),
            r#"{"id":123456789012345678901234567890,"x":"\u00e9","n":1.50}"#
        );
    }

    #[test]
    fn set_replaces_in_place_or_appends() {
        let mut f = Fields::parse(br#"{"a":1,"b":2,"a":3}"#).unwrap();
        f.set("a", raw("9".into()));
        f.set("c", raw("true".into()));
        assert_eq!(f.to_text(), r#"{"a":9,"b":2,"c":true}"#);
        assert_eq!(f.get("a").unwrap().get(), "9");
    }

    #[test]
    fn only_objects_are_fields() {
        for text in [&b"[1,2]"[..], b"42", b"not json", b"{\"a\":", b""] {
            assert!(
                Fields::parse(text).is_none(),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
