use super::*;

fn kind(name: &str) -> MethodKind {
    MethodKind::from_name(name).unwrap()
}

/// A valid value of `decl` other than its default (a text keeps its default: only the
/// method knows another one), so a test can vary each declared parameter.
pub(crate) fn alternative(decl: &ParamDecl) -> Value {
    match (decl.kind, decl.default) {
        (Kind::Whole { min, .. }, DefaultValue::Whole(d)) if d != min => Value::Whole(min),
        (Kind::Whole { min, max }, _) => Value::Whole((min + 1).min(max)),
        (Kind::Real { max, .. }, DefaultValue::Real(d)) if max.is_finite() && d != max => Value::Real(max),
        (Kind::Real { min, .. }, DefaultValue::Real(d)) if min.is_finite() && d != min => Value::Real(min),
        (Kind::Real { .. }, DefaultValue::Real(d)) => Value::Real(d + 1.0),
        (Kind::Choice(list), default) => {
            let names: Vec<&str> = list().into_iter().map(|(n, _)| n).collect();
            let other = names.iter().find(|n| DefaultValue::Word(n) != default).copied().unwrap_or(names[0]);
            Value::Word(other.to_string())
        }
        (Kind::Flag, DefaultValue::Flag(on)) => Value::Flag(!on),
        (_, default) => default.value(),
    }
}

/// The proof that a method reads exactly what it declares: building it reads every
/// declared parameter (a declaration it never reads fails here), and a read of one it
/// does not declare is an error (so does a missing declaration: the method cannot be
/// built with its defaults).
#[test]
fn every_method_reads_exactly_the_parameters_it_declares() {
    for info in methods::REGISTRY {
        let params = Params::new(info.kind);
        let built = methods::build(&params).unwrap_or_else(|e| panic!("{}: {e}", info.kind));
        let mut read = built.read.clone();
        let mut declared: Vec<&str> = info.declared().iter().map(|d| d.name).collect();
        read.sort_unstable();
        declared.sort_unstable();
        assert_eq!(read, declared, "{} reads what it declares", info.kind);
        assert_eq!(built.search.is_some(), info.param(EVALUATOR.name).is_some(), "{}", info.kind);
    }
    // A parameter outside the declarations cannot be read.
    let react = Params::new(kind("react"));
    let err = react.reader().whole(&methods::tot_bfs::BREADTH).unwrap_err();
    assert_eq!(err.name, "breadth");
    assert!(err.expected.contains("react does not declare it"), "{err}");
}

#[test]
fn declarations_of_one_name_agree_and_their_defaults_pass_their_checks() {
    for p in methods::all_params() {
        assert!(
            p.decl.name.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
            "{} is a snake_case name (its flag is it with dashes)",
            p.decl.name
        );
        for info in methods::REGISTRY {
            let Some(d) = info.param(p.decl.name) else { continue };
            assert_eq!(d.accepts(), p.decl.accepts(), "{}: {} accepts the same", info.kind, d.name);
            assert_eq!(d.help, p.decl.help, "{}: {} has one help line", info.kind, d.name);
            assert_eq!(d.check(&d.default.value()), Ok(()), "{}: {}'s default", info.kind, d.name);
        }
    }
    for info in methods::REGISTRY {
        let names: Vec<&str> = info.declared().iter().map(|d| d.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{} declares each parameter once: {names:?}", info.kind);
    }
}

/// The header records the method and exactly the parameters it declares, defaults
/// included, and reads back the same.
#[test]
fn a_header_records_exactly_the_declared_parameters() {
    for info in methods::REGISTRY {
        let params = Params::new(info.kind);
        let json = serde_json::to_value(&params).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected: Vec<&str> = std::iter::once("method").chain(info.declared().iter().map(|d| d.name)).collect();
        let mut keys = keys.clone();
        keys.sort_unstable();
        expected.sort_unstable();
        assert_eq!(keys, expected, "{}", info.kind);
        assert_eq!(serde_json::from_value::<Params>(json).unwrap(), params, "{}", info.kind);
    }
    let retreval = serde_json::to_value(Params::new(kind("retreval"))).unwrap();
    assert!(retreval.get("breadth").is_none() && retreval.get("max_states").is_none(), "{retreval}");
    assert_eq!(retreval["local_weight"], 0.6, "its own defaults are recorded: {retreval}");
}

/// Headers of format version 1 record every parameter of every method (and leave out
/// a few at their defaults): reading one takes the method's and ignores the rest.
#[test]
fn a_version_1_header_reads_the_methods_parameters_and_ignores_the_rest() {
    let v1 = r#"{"method":"react","breadth":5,"n_generate":1,"n_evaluate":3,"generator":"propose",
        "evaluator":"value","select":"greedy","steps":null,"threshold":3.0,"max_states":100,"samples":10,
        "max_steps":4,"temperature":0.7,"lenient":false,"seed":0}"#;
    let p: Params = serde_json::from_str(v1).unwrap();
    assert_eq!(p, Params::new(kind("react")).with("max_steps", 4));
    assert_eq!(p.word("tool_mode"), Some("text"), "left out when text");
    let v1 = r#"{"method":"cot-sc-react","samples":21,"max_steps":7,"temperature":0.7,"seed":3,"breadth":5}"#;
    let p: Params = serde_json::from_str(v1).unwrap();
    assert_eq!(p.get("majority_threshold"), Some(&Value::Real(0.5)), "left out at its default");
    assert_eq!((p.whole("samples"), p.seed()), (Some(21), 3));
    let v1 = r#"{"method":"mcts","n_evaluate":1,"uct_c":0.5,"max_steps":7,"temperature":0.7,"seed":0}"#;
    let p: Params = serde_json::from_str(v1).unwrap();
    assert_eq!(p, Params::new(kind("mcts")).with("n_evaluate", 1).with("uct_c", 0.5));
    // A header whose method is unknown is not read.
    assert!(serde_json::from_str::<Params>(r#"{"method":"chess"}"#).is_err());
}

#[test]
fn a_parameter_the_method_does_not_read_cannot_be_set() {
    let mut p = Params::new(kind("react"));
    let err = p.set("breadth", 3).unwrap_err();
    assert_eq!(err.to_string(), "breadth (--breadth) is 3: react does not read it (it is for --method tot-bfs)");
    let err = p.set("colour", "red").unwrap_err();
    assert!(err.expected.contains("no method does"), "{err}");
    assert_eq!(p, Params::new(kind("react")));
}

#[test]
fn every_method_checks_the_ranges_of_what_it_reads() {
    // (method, parameter, bad value)
    let cases: [(&str, &str, Value); 17] = [
        ("tot-bfs", "breadth", Value::Whole(0)),
        ("tot-bfs", "n_evaluate", Value::Whole(0)),
        ("tot-bfs", "n_evaluate", Value::Whole(u64::from(u32::MAX))),
        ("tot-bfs", "n_generate", Value::Whole(1_000_000)),
        ("tot-bfs", "steps", Value::Whole(0)),
        ("tot-dfs", "max_states", Value::Whole(0)),
        ("tot-dfs", "threshold", Value::Real(f64::NAN)),
        ("tot-dfs", "threshold", Value::Real(f64::INFINITY)),
        ("mcts", "n_evaluate", Value::Whole(0)),
        ("io", "samples", Value::Whole(0)),
        ("cot-sc", "samples", Value::Whole(u64::from(u32::MAX))),
        ("react", "max_steps", Value::Whole(0)),
        ("cot-sc-react", "majority_threshold", Value::Real(1.5)),
        ("cot-sc-react", "majority_threshold", Value::Real(f64::NEG_INFINITY)),
        ("react-cot-sc", "samples", Value::Whole(0)),
        ("tot-bfs", "temperature", Value::Real(f64::NAN)),
        ("retreval", "temperature", Value::Real(f64::INFINITY)),
    ];
    for (method, name, value) in cases {
        let p = Params::new(kind(method)).with(name, value.clone());
        let err = p.check().expect_err(method);
        assert_eq!(err.name, name, "{method}: {err}");
        let task = std::sync::Arc::new(crate::tasks::game24::Game24::builtin());
        // The engine reads the parameters before it asks whether the task serves the method.
        let err = crate::engine::Engine::try_new(task, "4 5 6 10", p).err().unwrap();
        assert!(matches!(&err, crate::engine::EngineError::Params(e) if e.name == name), "{method} {value:?}: {err}");
    }
    for info in methods::REGISTRY {
        assert_eq!(Params::new(info.kind).check(), Ok(()), "{}'s defaults pass", info.kind);
    }
}

#[test]
fn a_parameter_error_is_one_line_naming_flag_value_and_range() {
    let err = Params::default().with("n_evaluate", u64::from(u32::MAX)).check().unwrap_err();
    assert_eq!(err.to_string(), "n_evaluate (--n-evaluate) is 4294967295: it must be a whole number from 1 to 1000");
    let err = Params::default().with("temperature", f64::NAN).check().unwrap_err();
    assert_eq!(err.to_string(), "temperature (--temperature) is NaN: it must be a number from 0 to 2");
}

#[test]
fn each_declared_parameter_can_be_varied_and_is_recorded() {
    for info in methods::REGISTRY {
        for decl in info.declared() {
            let value = alternative(decl);
            let p = Params::new(info.kind).with(decl.name, value.clone());
            if matches!(decl.kind, Kind::Text { .. }) {
                continue;
            }
            assert_ne!(p, Params::new(info.kind), "{}: {} varies", info.kind, decl.name);
            assert_eq!(p.check(), Ok(()), "{}: {} = {value:?}", info.kind, decl.name);
            let back: Params = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
            assert_eq!(back.get(decl.name), Some(&value), "{}: the header keeps {}", info.kind, decl.name);
        }
    }
}
