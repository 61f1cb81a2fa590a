//! [`Params`]: a method and the values of exactly the parameters it declares, as the
//! session header records them; [`ParamReader`]: how a method reads them when it is built.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use super::decl::{Choice, ParamDecl, Value};
use super::{methods, MethodKind, ParamError};

/// A method and a value for each parameter it declares (its own, then those every
/// method reads: `temperature`, `seed`), in declaration order. Nothing else: a value for
/// a parameter the method does not read cannot be set, so a session header records
/// exactly what the method reads. Values are checked by [`Params::check`] (and again as
/// the method reads them).
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub method: MethodKind,
    values: Vec<(&'static str, Value)>,
}

impl Default for Params {
    /// The default method with its defaults.
    fn default() -> Self {
        Params::new(methods::tot_bfs::KIND)
    }
}

impl Params {
    /// `method` with the defaults of every parameter it declares.
    pub fn new(method: MethodKind) -> Params {
        let values = method.info().declared().into_iter().map(|d| (d.name, d.default.value())).collect();
        Params { method, values }
    }

    /// Each declared parameter with its value, in declaration order.
    pub fn declared(&self) -> Vec<(&'static ParamDecl, &Value)> {
        let decls = self.method.info().declared();
        self.values.iter().filter_map(|(name, v)| decls.iter().find(|d| d.name == *name).map(|d| (*d, v))).collect()
    }

    /// These values under another method: each parameter `method` declares takes the
    /// value given here where this method reads it too, else its default.
    pub fn switched(&self, method: MethodKind) -> Params {
        let mut params = Params::new(method);
        for slot in params.values.iter_mut() {
            if let Some(value) = self.get(slot.0) {
                slot.1 = value.clone();
            }
        }
        params
    }

    /// Whether the method reads the parameter `name`.
    pub fn reads(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| *n == name)
    }

    /// The value of `name`, if the method reads it.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The whole-number value of `name`, if the method reads it and it is one.
    pub fn whole(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Whole(n)) => Some(*n),
            _ => None,
        }
    }

    /// The number value of `name` (whole or not), if the method reads it and it is one.
    pub fn number(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Some(Value::Whole(n)) => Some(*n as f64),
            Some(Value::Real(x)) => Some(*x),
            _ => None,
        }
    }

    /// The word (a choice's name, a text) of `name`, if the method reads it and it is one.
    pub fn word(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(Value::Word(w)) => Some(w),
            _ => None,
        }
    }

    /// The seed of the method's random choices and of `sim` (every method reads it).
    pub fn seed(&self) -> u64 {
        self.whole(super::SEED.name).unwrap_or(0)
    }

    /// Set the parameter `name` (converted to its declared type; its range is
    /// [`Params::check`]'s). A parameter the method does not read is an error.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) -> Result<(), ParamError> {
        let value = value.into();
        let decls = self.method.info().declared();
        let Some(decl) = decls.iter().find(|d| d.name == name) else {
            let readers: Vec<&str> = methods::readers_of(name).iter().map(|m| m.label()).collect();
            let expected = match readers.is_empty() {
                true => format!("{} does not read it (no method does)", self.method),
                false => format!("{} does not read it (it is for --method {})", self.method, readers.join(", ")),
            };
            return Err(ParamError { name: name.to_string(), value: value.to_string(), expected });
        };
        let value = decl.accept(value);
        if let Some(slot) = self.values.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = value;
        }
        Ok(())
    }

    /// [`Params::set`] for values written in the program (built-in runs, tests): a name
    /// the method does not declare is a bug, and panics.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Params {
        if let Err(e) = self.set(name, value) {
            panic!("{e}");
        }
        self
    }

    /// Whether every value is in range and the method accepts them together (it is
    /// built from them). Run on every parameter set that comes from outside (flags,
    /// config, a session header, an imported log).
    pub fn check(&self) -> Result<(), ParamError> {
        for (decl, value) in self.declared() {
            decl.check(value)?;
        }
        methods::build(self).map(drop)
    }

    /// A reader for building the method (it notes what is read).
    pub fn reader(&self) -> ParamReader<'_> {
        ParamReader { params: self, read: RefCell::new(Vec::new()) }
    }

    /// From a header's `params` object: the method, and the value of each parameter it
    /// declares (the default where one is missing). Other keys are not the method's and
    /// are ignored: headers of format version 1 record every parameter of every method.
    fn from_map(map: &serde_json::Map<String, serde_json::Value>) -> Result<Params, String> {
        let name = map.get("method").and_then(|m| m.as_str()).ok_or("the parameters name no method")?;
        let method = MethodKind::from_name(name)
            .ok_or_else(|| format!("unknown method {name:?} (known: {})", methods::names().join(", ")))?;
        let mut params = Params::new(method);
        for (decl, slot) in method.info().declared().into_iter().zip(params.values.iter_mut()) {
            if let Some(json) = map.get(decl.name) {
                slot.1 = decl.from_json(json);
            }
        }
        Ok(params)
    }
}

impl Serialize for Params {
    /// `{"method": ..., then each declared parameter by name}`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.values.len() + 1))?;
        map.serialize_entry("method", &self.method)?;
        for (name, value) in &self.values {
            map.serialize_entry(name, &ParamDecl::to_json(value))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        Params::from_map(&map).map_err(serde::de::Error::custom)
    }
}

/// What a method reads its parameters through when it is built: each read is checked
/// against the parameter's declaration, a parameter the method does not declare cannot
/// be read, and the reader notes every parameter read (a test checks that each method
/// reads exactly what it declares).
pub struct ParamReader<'a> {
    params: &'a Params,
    read: RefCell<Vec<&'static str>>,
}

impl ParamReader<'_> {
    pub fn method(&self) -> MethodKind {
        self.params.method
    }

    /// The names read so far, in order.
    pub fn names_read(&self) -> Vec<&'static str> {
        self.read.borrow().clone()
    }

    fn value(&self, decl: &'static ParamDecl) -> Result<&Value, ParamError> {
        let Some(value) = self.params.get(decl.name) else {
            return Err(ParamError {
                name: decl.name.to_string(),
                value: "read".into(),
                expected: format!("{} does not declare it (a bug: add it to its MethodInfo::params)", self.method()),
            });
        };
        decl.check(value)?;
        let mut read = self.read.borrow_mut();
        if !read.contains(&decl.name) {
            read.push(decl.name);
        }
        Ok(value)
    }

    fn mismatch(decl: &ParamDecl, value: &Value) -> ParamError {
        ParamError {
            name: decl.name.to_string(),
            value: value.to_string(),
            expected: format!("it must be {}", decl.accepts()),
        }
    }

    pub fn whole(&self, decl: &'static ParamDecl) -> Result<u64, ParamError> {
        match self.value(decl)? {
            Value::Whole(n) => Ok(*n),
            other => Err(Self::mismatch(decl, other)),
        }
    }

    /// A whole number as a count (every declared count's range fits a `usize`).
    pub fn count(&self, decl: &'static ParamDecl) -> Result<usize, ParamError> {
        let n = self.whole(decl)?;
        usize::try_from(n).map_err(|_| Self::mismatch(decl, &Value::Whole(n)))
    }

    /// A whole number, or `None` where it is unset (the task decides).
    pub fn optional_count(&self, decl: &'static ParamDecl) -> Result<Option<usize>, ParamError> {
        match self.value(decl)? {
            Value::Unset => Ok(None),
            _ => self.count(decl).map(Some),
        }
    }

    pub fn real(&self, decl: &'static ParamDecl) -> Result<f64, ParamError> {
        match self.value(decl)? {
            Value::Real(x) => Ok(*x),
            other => Err(Self::mismatch(decl, other)),
        }
    }

    pub fn flag(&self, decl: &'static ParamDecl) -> Result<bool, ParamError> {
        match self.value(decl)? {
            Value::Flag(b) => Ok(*b),
            other => Err(Self::mismatch(decl, other)),
        }
    }

    pub fn text(&self, decl: &'static ParamDecl) -> Result<String, ParamError> {
        match self.value(decl)? {
            Value::Word(w) => Ok(w.clone()),
            other => Err(Self::mismatch(decl, other)),
        }
    }

    pub fn choice<T: Choice>(&self, decl: &'static ParamDecl) -> Result<T, ParamError> {
        self.optional_choice(decl)?.ok_or_else(|| Self::mismatch(decl, &Value::Unset))
    }

    /// A choice, or `None` where it is unset (the task decides).
    pub fn optional_choice<T: Choice>(&self, decl: &'static ParamDecl) -> Result<Option<T>, ParamError> {
        match self.value(decl)? {
            Value::Unset => Ok(None),
            Value::Word(w) => T::CHOICES
                .iter()
                .find(|(name, _, _)| name == w)
                .map(|(_, _, v)| Some(*v))
                .ok_or_else(|| Self::mismatch(decl, &Value::Word(w.clone()))),
            other => Err(Self::mismatch(decl, other)),
        }
    }
}
