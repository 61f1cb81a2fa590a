//! An API key. It lives only inside a provider: it prints as `***` (Debug and
//! Display), is not serialisable, and error text from servers is scrubbed of it.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `None` for an empty or blank value (an unset key, in effect).
    pub fn new(value: impl Into<String>) -> Option<Secret> {
        let value = value.into().trim().to_string();
        (!value.is_empty()).then_some(Secret(value))
    }

    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_and_scrubs_itself() {
        let s = Secret::new("sk-very-secret").unwrap();
        assert_eq!(format!("{s} {s:?} {:?}", Some(&s)), "*** *** Some(***)");
        assert_eq!(s.scrub("bad key sk-very-secret given"), "bad key *** given");
        assert_eq!(s.expose(), "sk-very-secret");
        assert!(Secret::new("  \n").is_none());
    }
}
