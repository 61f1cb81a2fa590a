//! ReTreVal's own parameters, declared here (the flag is the name with dashes):
//!
//! | name                       | default | range                                      |
//! |----------------------------|---------|--------------------------------------------|
//! | `complexity_table`         | `paper` | `paper`, `official`, `1:2x2,2:2x3,...`     |
//! | `local_weight`             | 0.6     | 0 to 1                                     |
//! | `cross_weight`             | 0.4     | 0 to 1 (local + cross > 0)                 |
//! | `skeptic_weight`           | 0.4     | 0 to 1                                     |
//! | `decompose_threshold`      | 0.5     | 0 to 1                                     |
//! | `decompose_min_complexity` | 3       | 1 to 5                                     |
//! | `max_subtasks`             | 4       | 2 to 4                                     |
//! | `no_memory`, `no_backtrack`, `no_tools`, `no_cross`, `no_decompose` | false | true or false |
//!
//! The decomposition threshold is on the combined score's 0–1 scale, and 0.5 is its
//! midpoint: a node both critiques judge more right than wrong clears it even under
//! the starting reliability's penalty (local 0.8, cross 0.6, reliability 0.5:
//! 0.48 + 0.24 − 0.2 = 0.52), while a middling one does not (local 0.6, cross 0.5:
//! 0.56 unpenalised, 0.36 at reliability 0.5), so only a search whose best node stays
//! doubtful pays for subtasks.

use crate::engine::params::{DefaultValue, Kind, ParamDecl};
use crate::engine::{ParamError, ParamReader};

use super::complexity::{Complexity, ComplexityTable};
use super::scoring::Weights;

pub const COMPLEXITY_TABLE: ParamDecl = ParamDecl {
    name: "complexity_table",
    help: "Complexity level 1-5 → tree depth × branching",
    kind: Kind::Text {
        value_name: "TABLE",
        format: ComplexityTable::FORMAT,
        check: |text| ComplexityTable::parse(text).map(drop),
    },
    default: DefaultValue::Word("paper"),
};

const fn weight(name: &'static str, help: &'static str, default: f64) -> ParamDecl {
    ParamDecl { name, help, kind: Kind::Real { min: 0.0, max: 1.0 }, default: DefaultValue::Real(default) }
}

const fn ablation(name: &'static str, help: &'static str) -> ParamDecl {
    ParamDecl { name, help, kind: Kind::Flag, default: DefaultValue::Flag(false) }
}

pub const LOCAL_WEIGHT: ParamDecl =
    weight("local_weight", "Weight of the local self-assessment in a node's score", 0.6);
pub const CROSS_WEIGHT: ParamDecl = weight("cross_weight", "Weight of the cross critique against siblings", 0.4);
pub const SKEPTIC_WEIGHT: ParamDecl =
    weight("skeptic_weight", "Weight of the skepticism penalty on 1 − the approach's reliability", 0.4);
pub const DECOMPOSE_THRESHOLD: ParamDecl =
    weight("decompose_threshold", "Decompose when the best score stays below this", 0.5);
pub const DECOMPOSE_MIN_COMPLEXITY: ParamDecl = ParamDecl {
    name: "decompose_min_complexity",
    help: "Decompose only problems at least this complex",
    kind: Kind::Whole { min: 1, max: 5 },
    default: DefaultValue::Whole(3),
};
pub const MAX_SUBTASKS: ParamDecl = ParamDecl {
    name: "max_subtasks",
    help: "Most subtasks of a decomposition",
    kind: Kind::Whole { min: 2, max: 4 },
    default: DefaultValue::Whole(4),
};
pub const NO_MEMORY: ParamDecl =
    ablation("no_memory", "Ablation: no cross-problem memory (no lessons, no updates, no skepticism penalty)");
pub const NO_BACKTRACK: ParamDecl =
    ablation("no_backtrack", "Ablation: no typed-failure backtracking after a failed validation");
pub const NO_TOOLS: ParamDecl = ablation("no_tools", "Ablation: no tools (each attempt is one chain-of-thought call)");
pub const NO_CROSS: ParamDecl = ablation("no_cross", "Ablation: no cross critique (the local score takes its weight)");
pub const NO_DECOMPOSE: ParamDecl = ablation("no_decompose", "Ablation: never decompose");

/// ReTreVal's own parameters, in the order help lists them.
pub const OWN: [&ParamDecl; 12] = [
    &COMPLEXITY_TABLE,
    &LOCAL_WEIGHT,
    &CROSS_WEIGHT,
    &SKEPTIC_WEIGHT,
    &DECOMPOSE_THRESHOLD,
    &DECOMPOSE_MIN_COMPLEXITY,
    &MAX_SUBTASKS,
    &NO_MEMORY,
    &NO_BACKTRACK,
    &NO_TOOLS,
    &NO_CROSS,
    &NO_DECOMPOSE,
];

/// ReTreVal's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrevalParams {
    /// Complexity level → depth × branching.
    pub table: ComplexityTable,
    /// The score's weights (local, cross, skepticism).
    pub weights: Weights,
    /// Decompose when the best total stays below this...
    pub decompose_threshold: f64,
    /// ...and the complexity is at least this.
    pub decompose_min_complexity: Complexity,
    /// Most subtasks a decomposition may have (at least 2).
    pub max_subtasks: usize,
    /// Ablations: no cross-problem memory (no retrieval, no update, no skepticism penalty).
    pub no_memory: bool,
    /// Ablation: no typed-failure backtracking after a failed validation.
    pub no_backtrack: bool,
    /// Ablation: no tool calls during refinement.
    pub no_tools: bool,
    /// Ablation: no cross critique; the local score takes the cross weight too.
    pub no_cross: bool,
    /// Ablation: never decompose.
    pub no_decompose: bool,
}

impl RetrevalParams {
    /// The parameters, each checked against its declaration as it is read; the error
    /// names the parameter (and so the flag), the value and what it must be.
    pub fn read(p: &ParamReader) -> Result<RetrevalParams, ParamError> {
        let text = p.text(&COMPLEXITY_TABLE)?;
        let table = ComplexityTable::parse(&text).map_err(|why| ParamError {
            name: COMPLEXITY_TABLE.name.to_string(),
            value: format!("{text:?}"),
            expected: why,
        })?;
        let weights =
            Weights { local: p.real(&LOCAL_WEIGHT)?, cross: p.real(&CROSS_WEIGHT)?, skeptic: p.real(&SKEPTIC_WEIGHT)? };
        if weights.local + weights.cross <= 0.0 {
            return Err(ParamError {
                name: LOCAL_WEIGHT.name.to_string(),
                value: weights.local.to_string(),
                expected: "local_weight and cross_weight cannot both be 0".into(),
            });
        }
        let level = p.whole(&DECOMPOSE_MIN_COMPLEXITY)?;
        let decompose_min_complexity =
            u8::try_from(level).ok().and_then(Complexity::new).ok_or_else(|| ParamError {
                name: DECOMPOSE_MIN_COMPLEXITY.name.to_string(),
                value: level.to_string(),
                expected: "it must be a complexity level from 1 to 5".into(),
            })?;
        Ok(RetrevalParams {
            table,
            weights,
            decompose_threshold: p.real(&DECOMPOSE_THRESHOLD)?,
            decompose_min_complexity,
            max_subtasks: p.count(&MAX_SUBTASKS)?,
            no_memory: p.flag(&NO_MEMORY)?,
            no_backtrack: p.flag(&NO_BACKTRACK)?,
            no_tools: p.flag(&NO_TOOLS)?,
            no_cross: p.flag(&NO_CROSS)?,
            no_decompose: p.flag(&NO_DECOMPOSE)?,
        })
    }

    /// The weights the score uses: with `no_cross`, the cross weight goes to the local score.
    pub fn effective_weights(&self) -> Weights {
        if self.no_cross {
            Weights { local: self.weights.local + self.weights.cross, cross: 0.0, skeptic: self.weights.skeptic }
        } else {
            self.weights
        }
    }

    /// Whether a search at `complexity` whose best total is `best` should decompose.
    pub fn should_decompose(&self, complexity: Complexity, best: Option<f64>) -> bool {
        !self.no_decompose
            && complexity >= self.decompose_min_complexity
            && best.is_none_or(|b| b.is_nan() || b < self.decompose_threshold)
    }

    /// For the status bar: `retreval paper 0.6L+0.4X−0.4skep split<0.5@c≥3 ≤4` and the
    /// ablations in force (`no-memory no-cross`).
    pub fn label(&self) -> String {
        let w = self.weights;
        let mut label = format!(
            "retreval {} {}L+{}X−{}skep split<{}@c≥{} ≤{}",
            self.table.name(),
            w.local,
            w.cross,
            w.skeptic,
            self.decompose_threshold,
            self.decompose_min_complexity,
            self.max_subtasks
        );
        for (on, name) in [
            (self.no_memory, "no-memory"),
            (self.no_backtrack, "no-backtrack"),
            (self.no_tools, "no-tools"),
            (self.no_cross, "no-cross"),
            (self.no_decompose, "no-decompose"),
        ] {
            if on {
                label.push(' ');
                label.push_str(name);
            }
        }
        label
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(extra: serde_json::Value) -> crate::engine::Params {
        let fields: Vec<(&str, serde_json::Value)> =
            extra.as_object().map(|o| o.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()).unwrap_or_default();
        crate::engine::testkit::from_header(super::super::method::KIND, &fields)
    }

    fn read(extra: serde_json::Value) -> Result<RetrevalParams, ParamError> {
        RetrevalParams::read(&with(extra).reader())
    }

    fn defaults() -> RetrevalParams {
        read(json!({})).unwrap()
    }

    #[test]
    fn the_defaults_are_the_papers() {
        let p = defaults();
        assert_eq!((p.weights.local, p.weights.cross, p.weights.skeptic), (0.6, 0.4, 0.4));
        assert_eq!(p.table, ComplexityTable::paper());
        assert_eq!((p.decompose_threshold, p.decompose_min_complexity.level(), p.max_subtasks), (0.5, 3, 4));
        assert!(!(p.no_memory || p.no_backtrack || p.no_tools || p.no_cross || p.no_decompose));
        assert_eq!(p.label(), "retreval paper 0.6L+0.4X−0.4skep split<0.5@c≥3 ≤4");
    }

    #[test]
    fn every_parameter_is_read_from_the_header() {
        let p = read(json!({
            "complexity_table": "official",
            "local_weight": 0.7, "cross_weight": 0.3, "skeptic_weight": 0,
            "decompose_threshold": 0.25, "decompose_min_complexity": 4, "max_subtasks": 2,
            "no_memory": true, "no_backtrack": false, "no_tools": true, "no_cross": true, "no_decompose": true,
        }))
        .unwrap();
        assert_eq!(p.table, ComplexityTable::official());
        assert_eq!((p.weights.local, p.weights.cross, p.weights.skeptic), (0.7, 0.3, 0.0));
        assert_eq!((p.decompose_threshold, p.decompose_min_complexity.level(), p.max_subtasks), (0.25, 4, 2));
        assert_eq!(
            (p.no_memory, p.no_backtrack, p.no_tools, p.no_cross, p.no_decompose),
            (true, false, true, true, true)
        );
        assert_eq!(
            p.label(),
            "retreval official 0.7L+0.3X−0skep split<0.25@c≥4 ≤2 no-memory no-tools no-cross no-decompose"
        );
        let custom = read(json!({"complexity_table": "1:1x2, 2:2x2,3:3x3,4:4x3,5:5x5"})).unwrap();
        assert_eq!(custom.table.name(), "1:1x2,2:2x2,3:3x3,4:4x3,5:5x5");
        assert!(custom.label().starts_with("retreval 1:1x2,2:2x2,3:3x3,4:4x3,5:5x5 "));
    }

    #[test]
    fn out_of_range_values_are_one_line_errors_naming_the_flag() {
        for (extra, message) in [
            (json!({"local_weight": 1.5}), "local_weight (--local-weight) is 1.5: it must be a number from 0 to 1"),
            (json!({"cross_weight": -0.1}), "cross_weight (--cross-weight) is -0.1: it must be a number from 0 to 1"),
            (
                json!({"skeptic_weight": null}),
                "skeptic_weight (--skeptic-weight) is NaN: it must be a number from 0 to 1",
            ),
            (
                json!({"skeptic_weight": "high"}),
                "skeptic_weight (--skeptic-weight) is \"high\": it must be a number from 0 to 1",
            ),
            (
                json!({"local_weight": 0, "cross_weight": 0}),
                "local_weight (--local-weight) is 0: local_weight and cross_weight cannot both be 0",
            ),
            (
                json!({"decompose_threshold": 2}),
                "decompose_threshold (--decompose-threshold) is 2: it must be a number from 0 to 1",
            ),
            (
                json!({"decompose_min_complexity": 6}),
                "decompose_min_complexity (--decompose-min-complexity) is 6: it must be a whole number from 1 to 5",
            ),
            (
                json!({"decompose_min_complexity": 2.5}),
                "decompose_min_complexity (--decompose-min-complexity) is 2.5: it must be a whole number from 1 to 5",
            ),
            (json!({"max_subtasks": 1}), "max_subtasks (--max-subtasks) is 1: it must be a whole number from 2 to 4"),
            (json!({"max_subtasks": 5}), "max_subtasks (--max-subtasks) is 5: it must be a whole number from 2 to 4"),
            (
                json!({"max_subtasks": "3"}),
                "max_subtasks (--max-subtasks) is \"3\": it must be a whole number from 2 to 4",
            ),
            (json!({"max_subtasks": -3}), "max_subtasks (--max-subtasks) is -3: it must be a whole number from 2 to 4"),
            (json!({"no_cross": "yes"}), "no_cross (--no-cross) is \"yes\": it must be true or false"),
            (json!({"no_memory": 1}), "no_memory (--no-memory) is 1: it must be true or false"),
            (
                json!({"complexity_table": "1:2x2"}),
                "complexity_table (--complexity-table) is \"1:2x2\": level 2 is missing; it must be paper, official, \
or LEVEL:DEPTHxBRANCHING for levels 1 to 5, e.g. 1:2x2,2:2x3,3:3x3,4:4x4,5:5x4 (depth 1 to 8, branching 1 to 6)",
            ),
            (
                json!({"complexity_table": 3}),
                "complexity_table (--complexity-table) is 3: it is not text; it must be paper, official, \
or LEVEL:DEPTHxBRANCHING for levels 1 to 5, e.g. 1:2x2,2:2x3,3:3x3,4:4x4,5:5x4 (depth 1 to 8, branching 1 to 6)",
            ),
        ] {
            let err = read(extra.clone()).expect_err(&extra.to_string());
            assert_eq!(err.to_string(), message);
            assert!(!err.to_string().contains('\n'));
            assert!(OWN.iter().any(|d| d.name == err.name), "{} is one of the own parameters", err.name);
        }
    }

    #[test]
    fn no_cross_gives_the_cross_weight_to_the_local_score() {
        let p = read(json!({"no_cross": true})).unwrap();
        let w = p.effective_weights();
        assert_eq!((w.local, w.cross, w.skeptic), (1.0, 0.0, 0.4));
        assert_eq!(defaults().effective_weights(), Weights::default());
    }

    #[test]
    fn decomposition_waits_for_complexity_and_a_low_best_score() {
        let p = defaults();
        let c = |l| Complexity::new(l).unwrap();
        assert!(p.should_decompose(c(3), Some(0.49)));
        assert!(p.should_decompose(c(5), None), "nothing scored yet counts as low");
        assert!(!p.should_decompose(c(3), Some(0.5)), "at the threshold the search is good enough");
        assert!(!p.should_decompose(c(2), Some(0.0)), "below the minimum complexity");
        let off = RetrevalParams { no_decompose: true, ..defaults() };
        assert!(!off.should_decompose(c(5), Some(0.0)));
    }
}
