//! Method parameters and the method and component names they use (sessions store them in the header).

use super::*;

/// A search method, by its registered name (`methods::REGISTRY`). Each method's
/// module defines its own `KIND`; sessions store the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MethodKind(pub(crate) &'static str);

impl MethodKind {
    pub fn label(self) -> &'static str {
        self.0
    }

    /// The registered method with this name.
    pub fn from_name(name: &str) -> Option<MethodKind> {
        methods::find(name).map(|info| info.kind)
    }

    /// Its registration (every `MethodKind` is registered: they come from the registry).
    pub fn info(self) -> &'static methods::MethodInfo {
        methods::find(self.0).unwrap_or(methods::REGISTRY[0])
    }

    /// Methods that follow a ReAct trajectory (thought, action, observation), alone
    /// or as a part of a hybrid.
    pub fn has_react_steps(self) -> bool {
        self.info().react != methods::ReactShape::None
    }
}

impl std::fmt::Display for MethodKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for MethodKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for MethodKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        MethodKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown method {name:?} (known: {})", methods::names().join(", ")))
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    Propose,
    Sample,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evaluator {
    Value,
    Vote,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    Greedy,
    Sample,
}

/// How a ReAct agent writes its actions: in the paper's text format (`Action i: Tool[arg]`,
/// with stop sequences), or as native tool calls (OpenAI `tools`, Anthropic `tool_use`),
/// where the reply's text is the thought and the tool call is the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolMode {
    #[default]
    Text,
    Native,
}

impl ToolMode {
    pub fn label(self) -> &'static str {
        match self {
            ToolMode::Text => "text",
            ToolMode::Native => "native",
        }
    }

    /// Sessions of text-mode runs leave the field out, so they read as they did before it existed.
    fn is_text(&self) -> bool {
        *self == ToolMode::Text
    }
}

/// Method parameters, named as in the Tree-of-Thoughts paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub method: MethodKind,
    /// b: states kept per step (BFS).
    pub breadth: usize,
    /// k: samples per state when the generator samples.
    pub n_generate: u32,
    /// Evaluator samples per state (value) or per step (vote).
    pub n_evaluate: u32,
    pub generator: Generator,
    pub evaluator: Evaluator,
    pub select: Selection,
    /// T: thought steps; `None` means the task's default.
    pub steps: Option<usize>,
    /// DFS: children valued below this are pruned.
    pub threshold: f64,
    /// DFS: cap on states visited.
    pub max_states: usize,
    /// k for io / cot / cot-sc.
    pub samples: u32,
    /// ReAct: most thought/action/observation steps.
    #[serde(default = "default_max_steps")]
    pub max_steps: usize,
    /// ReAct: actions as text or as native tool calls.
    #[serde(default, skip_serializing_if = "ToolMode::is_text")]
    pub tool_mode: ToolMode,
    /// cot-sc-react: switch to ReAct when the majority answer has fewer than this share of the samples.
    #[serde(default = "default_majority_threshold", skip_serializing_if = "is_default_majority_threshold")]
    pub majority_threshold: f64,
    pub temperature: f32,
    /// Keep malformed proposals as candidates, like the reference implementation,
    /// instead of rejecting them.
    pub lenient: bool,
    /// Seed for the method's own choices (`--select sample`).
    pub seed: u64,
    /// The parameters of methods that keep their own (e.g. MCTS's `uct_c`,
    /// `iterations`), by name, flattened into the header; each method reads its own.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            method: methods::tot_bfs::KIND,
            breadth: 5,
            n_generate: 1,
            n_evaluate: 3,
            generator: Generator::Propose,
            evaluator: Evaluator::Value,
            select: Selection::Greedy,
            steps: None,
            threshold: 3.0,
            max_states: 100,
            samples: 10,
            max_steps: 7,
            tool_mode: ToolMode::Text,
            majority_threshold: default_majority_threshold(),
            temperature: 0.7,
            lenient: false,
            seed: 0,
            extra: serde_json::Map::new(),
        }
    }
}

fn default_max_steps() -> usize {
    7
}

/// The ReAct paper's n/2.
fn default_majority_threshold() -> f64 {
    0.5
}

fn is_default_majority_threshold(t: &f64) -> bool {
    *t == default_majority_threshold()
}

/// A parameter outside what it accepts, in one line: its name (as in the session
/// header and `[defaults]`; the flag is the same with dashes), the value and the range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{name} (--{flag}) is {value}: {expected}", flag = name.replace('_', "-"))]
pub struct ParamError {
    pub name: &'static str,
    pub value: String,
    pub expected: String,
}

/// Largest sample counts (`n_generate`, `n_evaluate`, `samples`): far above any
/// published setting, and small enough that one call's replies fit in memory.
pub const MAX_SAMPLES: u64 = 1000;

/// `value` as a whole number within `min..=max`.
pub fn whole<T: Copy + TryInto<u64> + std::fmt::Display>(
    name: &'static str,
    value: T,
    min: u64,
    max: u64,
) -> Result<T, ParamError> {
    match value.try_into() {
        Ok(v) if (min..=max).contains(&v) => Ok(value),
        _ => Err(ParamError {
            name,
            value: value.to_string(),
            expected: if max == u64::MAX {
                format!("it must be at least {min}")
            } else {
                format!("it must be from {min} to {max}")
            },
        }),
    }
}

/// `value` as a finite number within `min..=max`.
pub fn real(name: &'static str, value: f64, min: f64, max: f64) -> Result<f64, ParamError> {
    if value.is_finite() && value >= min && value <= max {
        return Ok(value);
    }
    let expected = match (min.is_finite(), max.is_finite()) {
        (true, true) => format!("it must be a number from {min} to {max}"),
        (true, false) => format!("it must be a number of at least {min}"),
        (false, true) => format!("it must be a number of at most {max}"),
        (false, false) => "it must be a finite number".to_string(),
    };
    Err(ParamError { name, value: value.to_string(), expected })
}

impl Params {
    /// Whether every parameter is in range for its method: the shared ones here,
    /// the method's own by building its parameter struct. Run on every parameter set
    /// that comes from outside (flags, config, a session header, an imported log).
    pub fn check(&self) -> Result<(), ParamError> {
        real("temperature", f64::from(self.temperature), 0.0, 2.0)?;
        methods::build(self).map(drop)
    }

    /// Like [`Params::check`], but for every method's parameters, not only those the
    /// chosen method reads: a value no method accepts (`--max-steps 0` on a BFS run)
    /// is a mistake worth saying. For parameters a person just gave.
    pub fn check_all(&self) -> Result<(), ParamError> {
        self.check()?;
        for info in methods::REGISTRY {
            (info.build)(&Params { method: info.kind, ..self.clone() })?;
        }
        Ok(())
    }
}

/// The task components a tree search drives (the generator and the evaluator with
/// their sample counts, the step count, temperature and leniency): the parameter
/// struct every tree-search method embeds in its own. `Core` applies them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchParams {
    pub generator: Generator,
    pub n_generate: u32,
    pub evaluator: Evaluator,
    pub n_evaluate: u32,
    /// `None`: the task's default.
    pub steps: Option<usize>,
}

impl SearchParams {
    pub fn read(p: &Params) -> Result<SearchParams, ParamError> {
        Ok(SearchParams {
            generator: p.generator,
            n_generate: whole("n_generate", p.n_generate, 1, MAX_SAMPLES)?,
            evaluator: p.evaluator,
            n_evaluate: whole("n_evaluate", p.n_evaluate, 1, MAX_SAMPLES)?,
            steps: p.steps.map(|s| whole("steps", s, 1, 1000)).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(method: &str, edit: impl Fn(&mut Params)) -> Params {
        let mut p = Params { method: MethodKind::from_name(method).unwrap(), ..Params::default() };
        edit(&mut p);
        p
    }

    #[test]
    fn every_method_reads_its_own_parameters_and_checks_their_ranges() {
        // (method, the bad setting, the parameter the error names)
        type Edit = fn(&mut Params);
        let cases: [(&str, Edit, &str); 14] = [
            ("tot-bfs", |p| p.breadth = 0, "breadth"),
            ("tot-bfs", |p| p.n_evaluate = 0, "n_evaluate"),
            ("tot-bfs", |p| p.n_evaluate = u32::MAX, "n_evaluate"),
            ("tot-bfs", |p| p.n_generate = 1_000_000, "n_generate"),
            ("tot-bfs", |p| p.steps = Some(0), "steps"),
            ("tot-dfs", |p| p.max_states = 0, "max_states"),
            ("tot-dfs", |p| p.threshold = f64::NAN, "threshold"),
            ("mcts", |p| p.n_evaluate = 0, "n_evaluate"),
            ("io", |p| p.samples = 0, "samples"),
            ("cot-sc", |p| p.samples = u32::MAX, "samples"),
            ("react", |p| p.max_steps = 0, "max_steps"),
            ("cot-sc-react", |p| p.majority_threshold = 1.5, "majority_threshold"),
            ("react-cot-sc", |p| p.samples = 0, "samples"),
            ("tot-bfs", |p| p.temperature = f32::NAN, "temperature"),
        ];
        for (method, edit, name) in cases {
            let p = with(method, edit);
            let err = p.check().expect_err(method);
            assert_eq!(err.name, name, "{method}: {err}");
            let task = std::sync::Arc::new(crate::tasks::game24::Game24::builtin());
            // The engine reads the parameters before it asks whether the task serves the method.
            let err = crate::engine::Engine::try_new(task, "4 5 6 10", p).err().unwrap();
            assert!(matches!(&err, crate::engine::EngineError::Params(e) if e.name == name), "{method}: {err}");
        }
        // Parameters a method does not read are its own business...
        assert_eq!(with("tot-bfs", |p| p.max_steps = 0).check(), Ok(()));
        assert_eq!(with("react", |p| p.breadth = 0).check(), Ok(()));
        // ...but a value no method accepts is refused when a person gives it.
        assert_eq!(with("tot-bfs", |p| p.max_steps = 0).check_all().map_err(|e| e.name), Err("max_steps"));
        assert_eq!(with("tot-bfs", |p| p.temperature = -0.5).check_all().map_err(|e| e.name), Err("temperature"));
        // The defaults of every method pass.
        for info in methods::REGISTRY {
            assert_eq!(with(info.kind.label(), |_| ()).check_all(), Ok(()), "{}", info.kind);
        }
    }

    #[test]
    fn a_parameter_error_is_one_line_naming_flag_value_and_range() {
        let err = with("tot-bfs", |p| p.n_evaluate = u32::MAX).check().unwrap_err();
        assert_eq!(err.to_string(), "n_evaluate (--n-evaluate) is 4294967295: it must be from 1 to 1000");
        let err = with("tot-bfs", |p| p.temperature = f32::NAN).check().unwrap_err();
        assert_eq!(err.to_string(), "temperature (--temperature) is NaN: it must be a number from 0 to 2");
    }
}
