//! The method parameters as command-line flags: `--method` and each declared parameter's
//! flag once (flattened into `run` and `tui`), read into the library's
//! [`ParamPatch`]. Nothing here names a parameter: the flags, their help and headings
//! come from the methods' declarations (`MethodInfo::params`, `config::params`).

use std::ops::{Deref, DerefMut};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser, ValueParser};
use clap::{Arg, ArgAction, ArgMatches, Command};

use thoughtscope::config::params::{heading_of, help_line, method_heading, EVERY_METHOD, SEVERAL_METHODS};
use thoughtscope::config::ParamPatch;
use thoughtscope::engine::methods::{self, SharedParam};
use thoughtscope::engine::params::{Kind, Value};
use thoughtscope::engine::{MethodKind, Params};

/// The parameters given as flags: a [`ParamPatch`] that clap fills.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ParamFlags(pub(crate) ParamPatch);

impl Deref for ParamFlags {
    type Target = ParamPatch;
    fn deref(&self) -> &ParamPatch {
        &self.0
    }
}

impl DerefMut for ParamFlags {
    fn deref_mut(&mut self) -> &mut ParamPatch {
        &mut self.0
    }
}

fn method_arg() -> Arg {
    let values = methods::REGISTRY.iter().map(|info| PossibleValue::new(info.kind.label()).help(info.about));
    let parser = PossibleValuesParser::new(values)
        .try_map(|name: String| MethodKind::from_name(&name).ok_or_else(|| format!("unknown method {name}")));
    Arg::new("method")
        .long("method")
        .value_name("METHOD")
        .value_parser(parser)
        .help(format!("Search method [default: {}]; flags of other methods are refused", Params::default().method))
}

fn param_arg(p: &SharedParam) -> Arg {
    let decl = p.decl;
    let arg = Arg::new(decl.name).long(decl.flag()).value_name(decl.name.to_uppercase()).help(help_line(p));
    match decl.kind {
        Kind::Flag => arg.action(ArgAction::SetTrue),
        Kind::Choice(list) => {
            let values = list().into_iter().map(|(name, help)| match help {
                "" => PossibleValue::new(name),
                help => PossibleValue::new(name).help(help),
            });
            arg.value_parser(PossibleValuesParser::new(values).map(Value::Word))
        }
        Kind::Text { value_name, .. } => arg.value_name(value_name).value_parser(ValueParser::new(text_value)),
        // The type only: the range is checked with the other sources' (ParamPatch::resolve).
        Kind::Whole { .. } => arg.value_parser(ValueParser::new(move |text: &str| decl.parse_arg(text))),
        // `-inf` is a number too (refused by the range check, naming the parameter).
        Kind::Real { .. } => {
            arg.allow_hyphen_values(true).value_parser(ValueParser::new(move |text: &str| decl.parse_arg(text)))
        }
    }
}

fn text_value(text: &str) -> Result<Value, String> {
    Ok(Value::Word(text.to_string()))
}

impl clap::Args for ParamFlags {
    /// Every declared parameter's flag once, grouped in help by who reads it (see
    /// [`heading_of`]): every method, several methods, then one heading per method.
    fn augment_args(cmd: Command) -> Command {
        let before = cmd.get_next_help_heading().map(str::to_owned);
        let all = methods::all_params();
        let mut cmd = cmd.next_help_heading(EVERY_METHOD).arg(method_arg());
        let mut headings: Vec<String> = vec![EVERY_METHOD.into(), SEVERAL_METHODS.into()];
        headings.extend(methods::REGISTRY.iter().map(|info| method_heading(info.kind)));
        for heading in headings {
            cmd = cmd.next_help_heading(heading.clone());
            for p in all.iter().filter(|p| heading_of(p) == heading) {
                cmd = cmd.arg(param_arg(p));
            }
        }
        match before {
            Some(heading) => cmd.next_help_heading(heading),
            None => cmd.next_help_heading(None::<&'static str>),
        }
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for ParamFlags {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = ParamFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        if let Ok(Some(method)) = matches.try_get_one::<MethodKind>("method") {
            self.0.method = Some(*method);
        }
        for p in methods::all_params() {
            let value = match p.decl.kind {
                Kind::Flag => {
                    matches.try_get_one::<bool>(p.decl.name).ok().flatten().filter(|on| **on).map(|_| Value::Flag(true))
                }
                _ => matches.try_get_one::<Value>(p.decl.name).ok().flatten().cloned(),
            };
            if let Some(value) = value {
                self.0.set(p.decl, value);
            }
        }
        Ok(())
    }
}
