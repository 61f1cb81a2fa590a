//! A parameter's declaration: its name, help line, default and what it accepts. Each
//! method declares the parameters it reads (`MethodInfo::params`), and everything else
//! comes from those declarations: the command line's flags, the config file's
//! `[defaults]` keys, the range checks and the session header's `params`.

use super::ParamError;

/// One parameter a method reads. Its name is the session header's and `[defaults]`'s
/// key; the flag is the name with dashes (`uct_c` is `--uct-c`).
#[derive(Debug, Clone, Copy)]
pub struct ParamDecl {
    pub name: &'static str,
    /// One line for `--help` and the README.
    pub help: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A whole number from `min` to `max`.
    Whole { min: u64, max: u64 },
    /// A finite number from `min` to `max` (an infinite bound: none on that side).
    Real { min: f64, max: f64 },
    /// One of named values (name, help), in the order help lists them.
    Choice(fn() -> Vec<(&'static str, &'static str)>),
    /// On or off; on the command line a flag without a value.
    Flag,
    /// Text the method reads itself: `check` says why a text does not read (then the
    /// error adds "it must be {format}"); `value_name` is help's placeholder.
    Text { value_name: &'static str, format: &'static str, check: fn(&str) -> Result<(), String> },
}

/// A declared default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    Whole(u64),
    Real(f64),
    /// A choice's name, or a text.
    Word(&'static str),
    Flag(bool),
    /// No value: the method asks the task (e.g. `steps`: the task's number of steps).
    /// The text says what that gives, for help (`the task's, 4 for game24`).
    Unset(&'static str),
}

/// A value of a parameter, as given (a flag, a config key, a header), checked against
/// its declaration by [`ParamDecl::check`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Whole(u64),
    /// A number that is not a whole one of `u64` (negative, fractional, NaN...).
    Real(f64),
    Word(String),
    Flag(bool),
    /// No value: the default of an optional parameter (the task's).
    Unset,
    /// A value of the wrong type, as written (for the error message).
    Other(String),
}

/// Enums a choice parameter names: every value with its name (flag, config file and
/// session header) and a line of help (`""` for none).
pub trait Choice: Sized + Copy + 'static {
    const CHOICES: &'static [(&'static str, &'static str, Self)];
}

/// The names and help lines of a [`Choice`], for [`Kind::Choice`].
pub fn choices<T: Choice>() -> Vec<(&'static str, &'static str)> {
    T::CHOICES.iter().map(|(name, help, _)| (*name, *help)).collect()
}

/// The name of `value` among its choices.
pub fn choice_name<T: Choice + PartialEq>(value: T) -> &'static str {
    T::CHOICES.iter().find(|(_, _, v)| *v == value).map_or("", |(name, _, _)| name)
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Whole(n)
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Whole(u64::from(n))
    }
}

impl From<usize> for Value {
    fn from(n: usize) -> Value {
        u64::try_from(n).map_or(Value::Real(n as f64), Value::Whole)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        u64::try_from(n).map_or(Value::Real(f64::from(n)), Value::Whole)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Real(x)
    }
}

impl From<f32> for Value {
    /// By its shortest decimal, so 0.7f32 is 0.7 (not 0.699999988...).
    fn from(x: f32) -> Value {
        Value::Real(x.to_string().parse().unwrap_or(f64::from(x)))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Flag(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Word(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Word(s)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Unset, Into::into)
    }
}

impl std::fmt::Display for Value {
    /// As an error message quotes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Whole(n) => write!(f, "{n}"),
            Value::Real(x) => write!(f, "{x}"),
            Value::Word(s) => write!(f, "{:?}", clip(s, 80)),
            Value::Flag(b) => write!(f, "{b}"),
            Value::Unset => f.write_str("unset"),
            Value::Other(s) => f.write_str(&clip(s, 80)),
        }
    }
}

fn clip(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

impl DefaultValue {
    pub fn value(self) -> Value {
        match self {
            DefaultValue::Whole(n) => Value::Whole(n),
            DefaultValue::Real(x) => Value::Real(x),
            DefaultValue::Word(w) => Value::Word(w.to_string()),
            DefaultValue::Flag(b) => Value::Flag(b),
            DefaultValue::Unset(_) => Value::Unset,
        }
    }

    /// As help shows it: `5`, `0.7`, `greedy`, `off`, or what an unset one gives.
    pub fn describe(self) -> String {
        match self {
            DefaultValue::Whole(n) => n.to_string(),
            DefaultValue::Real(x) => x.to_string(),
            DefaultValue::Word(w) => w.to_string(),
            DefaultValue::Flag(b) => (if b { "on" } else { "off" }).to_string(),
            DefaultValue::Unset(what) => what.to_string(),
        }
    }
}

impl ParamDecl {
    /// The command-line flag, without its dashes: the name with `-` for `_`.
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }

    /// Whether it may have no value (its default is the task's).
    pub fn optional(&self) -> bool {
        matches!(self.default, DefaultValue::Unset(_))
    }

    /// The value names of a choice (empty for other kinds).
    pub fn choice_names(&self) -> Vec<&'static str> {
        match self.kind {
            Kind::Choice(list) => list().into_iter().map(|(name, _)| name).collect(),
            _ => Vec::new(),
        }
    }

    /// `value` in this parameter's type where it converts without loss: a whole number
    /// where a number is asked for, an integral number where a whole one is.
    pub fn accept(&self, value: Value) -> Value {
        match (self.kind, value) {
            (Kind::Real { .. }, Value::Whole(n)) => Value::Real(n as f64),
            (Kind::Whole { .. }, Value::Real(x)) if x.fract() == 0.0 && x >= 0.0 && x < u64::MAX as f64 => {
                Value::Whole(x as u64)
            }
            (_, value) => value,
        }
    }

    /// A value read from a session header (JSON), in this parameter's type where it has
    /// one. `null` is an optional parameter's "unset", else NaN (serde_json writes a NaN
    /// as `null`), which the check refuses.
    pub fn from_json(&self, json: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        let value = match json {
            J::Null if self.optional() => Value::Unset,
            J::Null => Value::Real(f64::NAN),
            J::Bool(b) => Value::Flag(*b),
            J::Number(n) => match n.as_u64() {
                Some(n) => Value::Whole(n),
                None => Value::Real(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::Word(s.clone()),
            other => Value::Other(other.to_string()),
        };
        self.accept(value)
    }

    /// A value as a session header writes it.
    pub fn to_json(value: &Value) -> serde_json::Value {
        use serde_json::Value as J;
        match value {
            Value::Whole(n) => J::from(*n),
            Value::Real(x) => serde_json::Number::from_f64(*x).map_or(J::Null, J::Number),
            Value::Word(s) | Value::Other(s) => J::String(s.clone()),
            Value::Flag(b) => J::Bool(*b),
            Value::Unset => J::Null,
        }
    }

    /// A value as written on the command line: its type only (the range is
    /// [`ParamDecl::check`]'s, so the error names the parameter and its range).
    pub fn parse_arg(&self, text: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Whole { .. } => match (text.parse::<u64>(), text.parse::<f64>()) {
                (Ok(n), _) => Ok(Value::Whole(n)),
                (_, Ok(x)) => Ok(Value::Real(x)),
                _ => Err("expected a whole number".into()),
            },
            Kind::Real { .. } => text.parse::<f64>().map(Value::Real).map_err(|_| "expected a number".into()),
            Kind::Flag => match text {
                "true" => Ok(Value::Flag(true)),
                "false" => Ok(Value::Flag(false)),
                _ => Err("expected true or false".into()),
            },
            Kind::Choice(_) | Kind::Text { .. } => Ok(Value::Word(text.to_string())),
        }
    }

    /// What it accepts, as errors and help say it: `a whole number from 1 to 10`,
    /// `a number from 0 to 1`, `one of self, oracle`, `true or false`, or a text's format.
    pub fn accepts(&self) -> String {
        match self.kind {
            Kind::Whole { min, max } if max == u64::MAX => format!("a whole number of at least {min}"),
            Kind::Whole { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Real { min, max } => match (min.is_finite(), max.is_finite()) {
                (true, true) => format!("a number from {min} to {max}"),
                (true, false) => format!("a number of at least {min}"),
                (false, true) => format!("a number of at most {max}"),
                (false, false) => "a finite number".to_string(),
            },
            Kind::Choice(_) => format!("one of {}", self.choice_names().join(", ")),
            Kind::Flag => "true or false".to_string(),
            Kind::Text { format, .. } => format.to_string(),
        }
    }

    /// Whether `value` is one this parameter accepts; the error names it, the value and
    /// what it must be. The one place ranges are checked: flags, `[defaults]`, session
    /// headers and imported logs all come through here, and no non-finite number passes.
    pub fn check(&self, value: &Value) -> Result<(), ParamError> {
        let ok = match (self.kind, value) {
            _ if *value == Value::Unset => self.optional(),
            (Kind::Whole { min, max }, Value::Whole(n)) => (min..=max).contains(n),
            (Kind::Real { min, max }, Value::Real(x)) => x.is_finite() && *x >= min && *x <= max,
            (Kind::Choice(_), Value::Word(w)) => self.choice_names().contains(&w.as_str()),
            (Kind::Flag, Value::Flag(_)) => true,
            (Kind::Text { check, .. }, Value::Word(text)) => {
                if let Err(why) = check(text) {
                    return Err(self.error(value, format!("{why}; it must be {}", self.accepts())));
                }
                true
            }
            (Kind::Text { .. }, _) => {
                return Err(self.error(value, format!("it is not text; it must be {}", self.accepts())))
            }
            _ => false,
        };
        match ok {
            true => Ok(()),
            false => Err(self.error(value, format!("it must be {}", self.accepts()))),
        }
    }

    fn error(&self, value: &Value, expected: String) -> ParamError {
        ParamError { name: self.name.to_string(), value: value.to_string(), expected }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNT: ParamDecl = ParamDecl {
        name: "max_things",
        help: "things",
        kind: Kind::Whole { min: 1, max: 10 },
        default: DefaultValue::Whole(3),
    };
    const SHARE: ParamDecl = ParamDecl {
        name: "share",
        help: "a share",
        kind: Kind::Real { min: 0.0, max: 1.0 },
        default: DefaultValue::Real(0.5),
    };

    #[test]
    fn checks_name_the_parameter_its_flag_the_value_and_the_range() {
        assert_eq!(COUNT.check(&Value::Whole(10)), Ok(()));
        let says = |d: &ParamDecl, v: Value| d.check(&v).unwrap_err().to_string();
        assert_eq!(
            says(&COUNT, Value::Whole(0)),
            "max_things (--max-things) is 0: it must be a whole number from 1 to 10"
        );
        assert_eq!(
            says(&COUNT, Value::Real(2.5)),
            "max_things (--max-things) is 2.5: it must be a whole number from 1 to 10"
        );
        assert_eq!(
            says(&COUNT, Value::Real(-1.0)),
            "max_things (--max-things) is -1: it must be a whole number from 1 to 10"
        );
        assert_eq!(
            says(&COUNT, Value::Unset),
            "max_things (--max-things) is unset: it must be a whole number from 1 to 10"
        );
        assert_eq!(
            says(&COUNT, Value::Other("[]".into())),
            "max_things (--max-things) is []: it must be a whole number from 1 to 10"
        );
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.5, -0.1] {
            assert!(SHARE.check(&Value::Real(x)).is_err(), "{x}");
        }
        assert_eq!(says(&SHARE, Value::Real(f64::NAN)), "share (--share) is NaN: it must be a number from 0 to 1");
        assert_eq!(
            says(&SHARE, Value::Real(f64::NEG_INFINITY)),
            "share (--share) is -inf: it must be a number from 0 to 1"
        );
        assert_eq!(SHARE.check(&SHARE.accept(Value::Whole(1))), Ok(()), "a whole number is a number");
        assert_eq!(COUNT.accept(Value::Real(4.0)), Value::Whole(4), "4.0 is a whole number");
    }

    #[test]
    fn values_convert_from_headers_and_flags_by_the_declared_type() {
        assert_eq!(COUNT.from_json(&serde_json::json!(4)), Value::Whole(4));
        assert_eq!(COUNT.from_json(&serde_json::json!(4.0)), Value::Whole(4));
        assert!(matches!(SHARE.from_json(&serde_json::Value::Null), Value::Real(x) if x.is_nan()));
        assert_eq!(SHARE.from_json(&serde_json::json!(1)), Value::Real(1.0));
        assert_eq!(COUNT.from_json(&serde_json::json!("deep")), Value::Word("deep".into()));
        assert_eq!(COUNT.parse_arg("7"), Ok(Value::Whole(7)));
        assert_eq!(COUNT.parse_arg("-2"), Ok(Value::Real(-2.0)), "its range check names it");
        assert!(COUNT.parse_arg("many").is_err());
        for text in ["NaN", "nan", "inf", "-inf", "infinity"] {
            let v = SHARE.parse_arg(text).unwrap();
            assert!(SHARE.check(&v).is_err(), "{text} is refused");
        }
        assert_eq!(Value::from(0.7f32), Value::Real(0.7));
        assert_eq!(ParamDecl::to_json(&Value::Real(0.7)).to_string(), "0.7");
    }
}
