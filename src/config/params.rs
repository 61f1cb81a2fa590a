//! The method parameters as a patch: every one optional. The command line fills one
//! from flags (`cli::params` makes them from the declarations below), the config file
//! fills one from `[defaults]`, and [`ParamPatch::resolve`] lays them over the chosen
//! method's defaults: flag > file > default.
//!
//! Nothing here names a parameter: the flags, their help, the `[defaults]` keys and
//! their checks all come from the methods' declarations (`MethodInfo::params`, see
//! `engine::params`), so a method's new parameter is declared in the method's file only.

use std::collections::BTreeMap;

use crate::engine::methods::{self, SharedParam};
use crate::engine::params::{DefaultValue, Kind, ParamDecl, Value};
use crate::engine::{MethodKind, ParamError, Params};

use super::Reader;

/// Method parameters, by the names the methods declare. Unset ones come from the
/// config file's `[defaults]`, then the method's own defaults.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParamPatch {
    pub method: Option<MethodKind>,
    /// Given values, by parameter name (each one some method declares).
    values: BTreeMap<&'static str, Value>,
}

/// The heading of the parameters every method reads (and `--method`).
pub const EVERY_METHOD: &str = "Options of every method";
/// The heading of the parameters several methods read; each one's help names them.
pub const SEVERAL_METHODS: &str = "Options several methods read (each names its methods)";

/// The heading of the parameters only `method` reads.
pub fn method_heading(method: MethodKind) -> String {
    format!("Options of --method {method}")
}

impl ParamPatch {
    /// A patch that chooses `method` and sets nothing else.
    pub fn of(method: MethodKind) -> ParamPatch {
        ParamPatch { method: Some(method), values: BTreeMap::new() }
    }

    /// The keys `[defaults]` accepts for method parameters: `method` and every declared one.
    pub fn keys() -> Vec<&'static str> {
        std::iter::once("method").chain(methods::all_params().iter().map(|p| p.decl.name)).collect()
    }

    /// The value given for `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The names given, in alphabetical order.
    pub fn names(&self) -> Vec<&'static str> {
        self.values.keys().copied().collect()
    }

    /// With `decl`'s parameter set to `value` (in its declared form: see [`ParamDecl::accept`]).
    pub fn set(&mut self, decl: &'static ParamDecl, value: Value) {
        self.values.insert(decl.name, decl.accept(value));
    }

    /// With `name` set to `value` (for values written in the program and tests): a name
    /// no method declares is a bug, and panics.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> ParamPatch {
        let Some(p) = methods::all_params().into_iter().find(|p| p.decl.name == name) else {
            panic!("no method declares a parameter {name:?}");
        };
        self.set(p.decl, value.into());
        self
    }

    /// The patch `[defaults]` gives: each key in its declared type and range, else a
    /// warning naming it (and the key is left to the default).
    pub(crate) fn read<W: FnMut(&str, String)>(reader: &mut Reader<'_, W>) -> ParamPatch {
        let mut patch = ParamPatch { method: reader.method("method"), values: BTreeMap::new() };
        for p in methods::all_params() {
            if let Some(value) = reader.param(p.decl) {
                patch.set(p.decl, value);
            }
        }
        patch
    }

    /// Each value set in `self`, else in `under`.
    pub fn or(&self, under: &ParamPatch) -> ParamPatch {
        let mut out = under.clone();
        out.method = self.method.or(under.method);
        for (name, value) in &self.values {
            if let Some(p) = methods::all_params().into_iter().find(|p| p.decl.name == *name) {
                out.set(p.decl, value.clone());
            }
        }
        out
    }

    /// The one place parameters are merged: `flags` over `file` over the chosen
    /// method's defaults, checked. A flag's value is checked even when the method does
    /// not read it (a value no method accepts is worth saying first); the file's were
    /// checked, with warnings, when it was read.
    pub fn resolve(flags: &ParamPatch, file: &ParamPatch) -> Result<Params, ParamError> {
        for (name, value) in &flags.values {
            if let Some(p) = methods::all_params().into_iter().find(|p| p.decl.name == *name) {
                p.decl.check(value)?;
            }
        }
        let method = flags.method.or(file.method).unwrap_or(Params::default().method);
        let mut params = Params::new(method);
        for decl in method.info().declared() {
            if let Some(value) = flags.get(decl.name).or_else(|| file.get(decl.name)) {
                params.set(decl.name, value.clone())?;
            }
        }
        params.check()?;
        Ok(params)
    }

    /// The first parameter given here that `method` does not read, with the methods that do.
    pub fn not_read_by(&self, method: MethodKind) -> Option<(&'static str, Vec<MethodKind>)> {
        let name = self.values.keys().find(|name| method.info().param(name).is_none())?;
        Some((name, methods::readers_of(name)))
    }
}

/// The methods in a line: `a`, `a or b`, `a, b or c`.
pub fn or_list(methods: &[MethodKind]) -> String {
    let names: Vec<&str> = methods.iter().map(|m| m.label()).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// What help says a parameter's default is: `5`, or, where its readers differ,
/// `10; 21 for react-cot-sc, cot-sc-react` (the most common one first).
pub fn describe_default(p: &SharedParam) -> String {
    let mut groups: Vec<(DefaultValue, Vec<MethodKind>)> = Vec::new();
    for (method, default) in &p.readers {
        match groups.iter_mut().find(|(d, _)| d == default) {
            Some((_, ms)) => ms.push(*method),
            None => groups.push((*default, vec![*method])),
        }
    }
    groups.sort_by_key(|(_, ms)| std::cmp::Reverse(ms.len()));
    let mut parts = groups.iter().map(|(d, ms)| (d.describe(), ms));
    let Some((first, _)) = parts.next() else { return String::new() };
    let rest: Vec<String> = parts
        .map(|(d, ms)| format!("{d} for {}", ms.iter().map(|m| m.label()).collect::<Vec<_>>().join(", ")))
        .collect();
    std::iter::once(first).chain(rest).collect::<Vec<_>>().join("; ")
}

/// A parameter's help line: its declaration's, the methods that read it (when several,
/// not all, do) and its default.
pub fn help_line(p: &SharedParam) -> String {
    let readers = if p.readers.len() > 1 && !p.everyone() {
        let names: Vec<&str> = p.readers.iter().map(|(m, _)| m.label()).collect();
        format!(" ({})", names.join(", "))
    } else {
        String::new()
    };
    format!("{}{readers} [default: {}]", p.decl.help, describe_default(p))
}

/// Where a parameter's flag is listed in help: [`EVERY_METHOD`] if every method reads
/// it, [`SEVERAL_METHODS`] if several do, else under its one method's heading.
pub fn heading_of(p: &SharedParam) -> String {
    match p.readers.as_slice() {
        _ if p.everyone() => EVERY_METHOD.to_string(),
        [(method, _)] => method_heading(*method),
        _ => SEVERAL_METHODS.to_string(),
    }
}

/// The reference's table of method parameters (docs/reference/parameters.md, written by
/// `thoughtscope docs`), made from the declarations: each flag once, who reads it, what it
/// is and accepts, and its default.
pub fn readme_table() -> String {
    let mut out = String::from("| flag | read by | meaning | default |\n|---|---|---|---|\n");
    for p in methods::all_params() {
        let decl = p.decl;
        let value = match decl.kind {
            Kind::Whole { .. } => " N".to_string(),
            Kind::Real { .. } => " X".to_string(),
            Kind::Choice(_) => format!(" {}", decl.choice_names().join("\\|")),
            Kind::Flag => String::new(),
            Kind::Text { value_name, .. } => format!(" {value_name}"),
        };
        let readers = match p.everyone() {
            true => "every method".to_string(),
            false => p.readers.iter().map(|(m, _)| m.label()).collect::<Vec<_>>().join(", "),
        };
        let accepts = match decl.kind {
            Kind::Choice(list) => {
                list().iter().map(|(name, help)| format!("`{name}`: {help}")).collect::<Vec<_>>().join("; ")
            }
            Kind::Flag => String::new(),
            _ => decl.accepts(),
        };
        let accepts = if accepts.is_empty() { accepts } else { format!(" ({accepts})") };
        let row =
            format!("| `--{}{value}` | {readers} | {}{accepts} | {} |\n", decl.flag(), decl.help, describe_default(&p));
        out.push_str(&row);
    }
    out
}
