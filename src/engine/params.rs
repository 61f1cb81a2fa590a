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
        self.info().react_steps
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
