//! ReTreVal's own parameters, read from `Params::extra` (flattened into the session
//! header; the flag is the name with dashes). All are optional:
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

use crate::engine::params::real;
use crate::engine::{ParamError, Params};

use super::complexity::{Complexity, ComplexityTable};
use super::scoring::Weights;

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

impl Default for RetrevalParams {
    fn default() -> Self {
        RetrevalParams {
            table: ComplexityTable::paper(),
            weights: Weights::default(),
            decompose_threshold: 0.5,
            decompose_min_complexity: Complexity(3),
            max_subtasks: 4,
            no_memory: false,
            no_backtrack: false,
            no_tools: false,
            no_cross: false,
            no_decompose: false,
        }
    }
}

impl RetrevalParams {
    pub const COMPLEXITY_TABLE: &'static str = "complexity_table";
    pub const LOCAL_WEIGHT: &'static str = "local_weight";
    pub const CROSS_WEIGHT: &'static str = "cross_weight";
    pub const SKEPTIC_WEIGHT: &'static str = "skeptic_weight";
    pub const DECOMPOSE_THRESHOLD: &'static str = "decompose_threshold";
    pub const DECOMPOSE_MIN_COMPLEXITY: &'static str = "decompose_min_complexity";
    pub const MAX_SUBTASKS: &'static str = "max_subtasks";
    pub const NO_MEMORY: &'static str = "no_memory";
    pub const NO_BACKTRACK: &'static str = "no_backtrack";
    pub const NO_TOOLS: &'static str = "no_tools";
    pub const NO_CROSS: &'static str = "no_cross";
    pub const NO_DECOMPOSE: &'static str = "no_decompose";

    /// Every name this reads from `Params::extra`: the method's `MethodInfo::own_params`.
    pub const OWN: &'static [&'static str] = &[
        Self::COMPLEXITY_TABLE,
        Self::LOCAL_WEIGHT,
        Self::CROSS_WEIGHT,
        Self::SKEPTIC_WEIGHT,
        Self::DECOMPOSE_THRESHOLD,
        Self::DECOMPOSE_MIN_COMPLEXITY,
        Self::MAX_SUBTASKS,
        Self::NO_MEMORY,
        Self::NO_BACKTRACK,
        Self::NO_TOOLS,
        Self::NO_CROSS,
        Self::NO_DECOMPOSE,
    ];

    /// [`RetrevalParams::OWN`], for `MethodInfo::own_params`.
    pub const fn own_params() -> &'static [&'static str] {
        Self::OWN
    }

    /// The parameters from the header's (defaults for those not given), range-checked;
    /// the error names the parameter (and so the flag), the value and what it must be.
    pub fn read(params: &Params) -> Result<RetrevalParams, ParamError> {
        let d = RetrevalParams::default();
        let extra = &params.extra;
        let number = |key: &'static str, default: f64, min: f64, max: f64| -> Result<f64, ParamError> {
            match extra.get(key) {
                None => Ok(default),
                // JSON has no NaN or infinity: serde_json writes them as null.
                Some(serde_json::Value::Null) => real(key, f64::NAN, min, max),
                Some(v) => match v.as_f64() {
                    Some(n) => real(key, n, min, max),
                    None => Err(ParamError { name: key, value: v.to_string(), expected: "it must be a number".into() }),
                },
            }
        };
        let count = |key: &'static str, default: u64, min: u64, max: u64| -> Result<u64, ParamError> {
            let Some(v) = extra.get(key) else { return Ok(default) };
            match v.as_f64() {
                // A whole number written as 4.0 (a config file's float) is still 4.
                Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(n as u64),
                _ => Err(ParamError {
                    name: key,
                    // JSON has no NaN: serde_json writes it as null.
                    value: if v.is_null() { "NaN".into() } else { v.to_string() },
                    expected: format!("it must be a whole number from {min} to {max}"),
                }),
            }
        };
        let flag = |key: &'static str| -> Result<bool, ParamError> {
            match extra.get(key) {
                None => Ok(false),
                Some(v) => v.as_bool().ok_or_else(|| ParamError {
                    name: key,
                    value: v.to_string(),
                    expected: "it must be true or false".into(),
                }),
            }
        };
        let table = match extra.get(Self::COMPLEXITY_TABLE) {
            None => d.table,
            Some(v) => {
                let bad = |why: String| ParamError {
                    name: Self::COMPLEXITY_TABLE,
                    value: super::clip(&v.to_string(), 80),
                    expected: format!("{why}; it must be {}", ComplexityTable::FORMAT),
                };
                let text = v.as_str().ok_or_else(|| bad("it is not text".into()))?;
                ComplexityTable::parse(text).map_err(bad)?
            }
        };
        let weights = Weights {
            local: number(Self::LOCAL_WEIGHT, d.weights.local, 0.0, 1.0)?,
            cross: number(Self::CROSS_WEIGHT, d.weights.cross, 0.0, 1.0)?,
            skeptic: number(Self::SKEPTIC_WEIGHT, d.weights.skeptic, 0.0, 1.0)?,
        };
        if weights.local + weights.cross <= 0.0 {
            return Err(ParamError {
                name: Self::LOCAL_WEIGHT,
                value: weights.local.to_string(),
                expected: "local_weight and cross_weight cannot both be 0".into(),
            });
        }
        let min_level = count(Self::DECOMPOSE_MIN_COMPLEXITY, u64::from(d.decompose_min_complexity.level()), 1, 5)?;
        Ok(RetrevalParams {
            table,
            weights,
            decompose_threshold: number(Self::DECOMPOSE_THRESHOLD, d.decompose_threshold, 0.0, 1.0)?,
            decompose_min_complexity: Complexity::new(min_level as u8).unwrap_or(d.decompose_min_complexity),
            max_subtasks: count(Self::MAX_SUBTASKS, d.max_subtasks as u64, 2, 4)? as usize,
            no_memory: flag(Self::NO_MEMORY)?,
            no_backtrack: flag(Self::NO_BACKTRACK)?,
            no_tools: flag(Self::NO_TOOLS)?,
            no_cross: flag(Self::NO_CROSS)?,
            no_decompose: flag(Self::NO_DECOMPOSE)?,
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

    fn with(extra: serde_json::Value) -> Params {
        let mut p = Params::default();
        if let serde_json::Value::Object(map) = extra {
            p.extra = map;
        }
        p
    }

    #[test]
    fn the_defaults_are_the_papers() {
        let p = RetrevalParams::read(&Params::default()).unwrap();
        assert_eq!(p, RetrevalParams::default());
        assert_eq!((p.weights.local, p.weights.cross, p.weights.skeptic), (0.6, 0.4, 0.4));
        assert_eq!(p.table, ComplexityTable::paper());
        assert_eq!((p.decompose_threshold, p.decompose_min_complexity.level(), p.max_subtasks), (0.5, 3, 4));
        assert!(!(p.no_memory || p.no_backtrack || p.no_tools || p.no_cross || p.no_decompose));
        assert_eq!(p.label(), "retreval paper 0.6L+0.4X−0.4skep split<0.5@c≥3 ≤4");
    }

    #[test]
    fn every_parameter_is_read_from_extra() {
        let p = RetrevalParams::read(&with(json!({
            "complexity_table": "official",
            "local_weight": 0.7, "cross_weight": 0.3, "skeptic_weight": 0,
            "decompose_threshold": 0.25, "decompose_min_complexity": 4, "max_subtasks": 2,
            "no_memory": true, "no_backtrack": false, "no_tools": true, "no_cross": true, "no_decompose": true,
        })))
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
        let custom =
            RetrevalParams::read(&with(json!({"complexity_table": "1:1x2, 2:2x2,3:3x3,4:4x3,5:5x5"}))).unwrap();
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
            (json!({"skeptic_weight": "high"}), "skeptic_weight (--skeptic-weight) is \"high\": it must be a number"),
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
            let err = RetrevalParams::read(&with(extra.clone())).expect_err(&extra.to_string());
            assert_eq!(err.to_string(), message);
            assert!(!err.to_string().contains('\n'));
            assert!(RetrevalParams::OWN.contains(&err.name), "{} is one of the own parameters", err.name);
        }
    }

    #[test]
    fn no_cross_gives_the_cross_weight_to_the_local_score() {
        let p = RetrevalParams::read(&with(json!({"no_cross": true}))).unwrap();
        let w = p.effective_weights();
        assert_eq!((w.local, w.cross, w.skeptic), (1.0, 0.0, 0.4));
        assert_eq!(RetrevalParams::default().effective_weights(), Weights::default());
    }

    #[test]
    fn decomposition_waits_for_complexity_and_a_low_best_score() {
        let p = RetrevalParams::default();
        let c = |l| Complexity::new(l).unwrap();
        assert!(p.should_decompose(c(3), Some(0.49)));
        assert!(p.should_decompose(c(5), None), "nothing scored yet counts as low");
        assert!(!p.should_decompose(c(3), Some(0.5)), "at the threshold the search is good enough");
        assert!(!p.should_decompose(c(2), Some(0.0)), "below the minimum complexity");
        let off = RetrevalParams { no_decompose: true, ..RetrevalParams::default() };
        assert!(!off.should_decompose(c(5), Some(0.0)));
    }
}
