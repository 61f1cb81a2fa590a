//! Shared, immutable text: what a node's thought and path are held as. Cloning one is a
//! pointer copy, so a node cloned for a replay checkpoint (or for a change to its
//! status) copies no text, and equal texts can be stored once (siblings sampled to the
//! same thought share it). Reads as `&str` wherever one is wanted, and is written to a
//! session or an export as a plain JSON string. A completion's text is one too (the run
//! keeps every reply, and a reply's samples often repeat each other).

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Both hold the very same allocation (not only equal text).
    pub fn shares(&self, other: &Text) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for Text {
    fn default() -> Self {
        Text(Arc::from(""))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text(Arc::from(s.as_str()))
    }
}

impl From<Text> for String {
    fn from(t: Text) -> Self {
        t.0.to_string()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == &*other.0
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Text::from(String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::Text;

    #[test]
    fn reads_compares_and_serialises_as_a_plain_string() {
        let t = Text::from("4 + 5 = 9 (left: 6 9 10)");
        assert_eq!(t, "4 + 5 = 9 (left: 6 9 10)");
        assert_eq!(t.len(), 24);
        assert!(t.starts_with("4 + 5"));
        assert_eq!(format!("{t} / {t:?}"), "4 + 5 = 9 (left: 6 9 10) / \"4 + 5 = 9 (left: 6 9 10)\"");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"4 + 5 = 9 (left: 6 9 10)\"");
        let back: Text = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        assert!(!back.shares(&t), "a text read back is its own copy");
        assert!(t.clone().shares(&t), "a clone shares the text");
        assert_eq!(Text::default(), "");
    }
}
