//! `lp` against answers known independently: a table solved by hand (free variables,
//! equalities, degenerate optima, the programs that once made the solver loop), and random
//! small programs checked against a brute-force search over exact vertices.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use proptest::prelude::*;

use super::lp::lp;

/// What `lp` said, read back: the optimum, or the kind of non-answer.
#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    Optimum(BigRational),
    /// An optimum shown in floating point (no exact fraction was feasible).
    Approx(f64),
    Infeasible,
    Unbounded,
}

fn verdict(text: &str) -> Verdict {
    let answer = lp(text).unwrap_or_else(|e| panic!("lp[{text}] failed: {e}"));
    if answer.starts_with("infeasible") {
        return Verdict::Infeasible;
    }
    if answer.starts_with("unbounded") {
        return Verdict::Unbounded;
    }
    if let Some(rest) = answer.strip_prefix("optimal (floating point, no exact fraction found): ") {
        let value = rest.split(" ≈ ").nth(1).and_then(|v| v.split(' ').next()).expect("a value");
        return Verdict::Approx(value.parse().expect("a float"));
    }
    let rest = answer
        .strip_prefix("optimal: maximum = ")
        .or_else(|| answer.strip_prefix("optimal: minimum = "))
        .unwrap_or_else(|| panic!("lp[{text}]: unexpected answer {answer:?}"));
    let value = rest.split(" at ").next().and_then(|v| v.split(" (≈").next()).expect("a value");
    Verdict::Optimum(value.parse().unwrap_or_else(|_| panic!("lp[{text}]: {value:?} is not a fraction")))
}

fn q(n: i64, d: i64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}

#[test]
fn hand_solved_programs_with_free_variables_equalities_and_degenerate_optima() {
    let table: &[(&str, Verdict)] = &[
        // The programs that were called unbounded or looped forever (issue 26); the first
        // fails at once on the old solver set-up, the others never returned from it.
        ("maximize x - y subject to x - y <= 3", Verdict::Optimum(q(3, 1))),
        ("maximize x + y subject to x + y <= 4", Verdict::Optimum(q(4, 1))),
        ("minimize x + y subject to x + y >= 2", Verdict::Optimum(q(2, 1))),
        ("minimize x + y subject to x + y >= 2; x + y <= 1000", Verdict::Optimum(q(2, 1))),
        ("maximize x + y subject to x + y <= 1000", Verdict::Optimum(q(1000, 1))),
        ("maximize x + y subject to x + y <= 1e12", Verdict::Optimum(q(1_000_000_000_000, 1))),
        // Free variables with one side bounded, and fixed by equalities.
        ("minimize x subject to x >= -3", Verdict::Optimum(q(-3, 1))),
        ("maximize x subject to x + y = 5; y >= 2", Verdict::Optimum(q(3, 1))),
        ("minimize 2x + 3y subject to x + y = 4; x - y = 2", Verdict::Optimum(q(9, 1))),
        ("maximize 3x - 2y subject to x - y <= 1; x + y = 3", Verdict::Optimum(q(4, 1))),
        ("maximize y subject to y <= x; y <= -x", Verdict::Optimum(q(0, 1))),
        ("maximize x + 2y subject to 2x + 3y = 1; x >= -1/2", Verdict::Optimum(q(5, 6))),
        // Degenerate: three constraints meet at the optimum (1, 1) in the plane.
        ("maximize x + y subject to x <= 1; y <= 1; x + y <= 2; x - y <= 0", Verdict::Optimum(q(2, 1))),
        ("maximize x subject to x + y <= 2; x - y <= 0; y <= 1; x >= 0; y >= 0", Verdict::Optimum(q(1, 1))),
        // Unbounded and infeasible with free variables.
        ("maximize x subject to x + y <= 4", Verdict::Unbounded),
        ("minimize x - y subject to x - y >= -1000; x + y <= 0; y <= 5", Verdict::Optimum(q(-1000, 1))),
        ("maximize x + y subject to x + y <= 1; x + y >= 2", Verdict::Infeasible),
        ("maximize x subject to x + y = 1; x + y = 2", Verdict::Infeasible),
        // Integers with free variables.
        ("maximize x + y subject to 2x + 2y <= 5; integer x, y", Verdict::Optimum(q(2, 1))),
        ("minimize x subject to 3x >= -7; integer x", Verdict::Optimum(q(-2, 1))),
    ];
    for (text, want) in table {
        assert_eq!(&verdict(text), want, "lp[{text}]");
    }
}

/// A small program: `coeffs · x  cmp  rhs` rows over `n` variables named x, y, z.
#[derive(Debug, Clone)]
struct Small {
    maximize: bool,
    objective: Vec<i64>,
    rows: Vec<(Vec<i64>, Cmp, i64)>,
    integer: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Le,
    Ge,
    Eq,
}

const NAMES: [&str; 3] = ["x", "y", "z"];

fn form(coeffs: &[i64]) -> String {
    let terms: Vec<String> = coeffs.iter().zip(NAMES).map(|(c, v)| format!("({c})*{v}")).collect();
    terms.join(" + ")
}

impl Small {
    fn text(&self, bound: Option<i64>) -> String {
        let mut rows: Vec<String> = self
            .rows
            .iter()
            .map(|(c, cmp, b)| {
                let op = match cmp {
                    Cmp::Le => "<=",
                    Cmp::Ge => ">=",
                    Cmp::Eq => "=",
                };
                format!("{} {op} {b}", form(c))
            })
            .collect();
        if let Some(b) = bound {
            rows.extend(NAMES[..self.objective.len()].iter().map(|v| format!("-{b} <= {v} <= {b}")));
        }
        if self.integer {
            rows.push(format!("integer {}", NAMES[..self.objective.len()].join(", ")));
        }
        let sense = if self.maximize { "maximize" } else { "minimize" };
        format!("{sense} {} subject to {}", form(&self.objective), rows.join("; "))
    }

    fn feasible(&self, x: &[BigRational], bound: i64) -> bool {
        let limit = q(bound, 1);
        x.iter().all(|v| v.abs() <= limit)
            && self.rows.iter().all(|(c, cmp, b)| {
                let lhs: BigRational = c.iter().zip(x).map(|(c, v)| q(*c, 1) * v).sum();
                let rhs = q(*b, 1);
                match cmp {
                    Cmp::Le => lhs <= rhs,
                    Cmp::Ge => lhs >= rhs,
                    Cmp::Eq => lhs == rhs,
                }
            })
    }

    fn value(&self, x: &[BigRational]) -> BigRational {
        self.objective.iter().zip(x).map(|(c, v)| q(*c, 1) * v).sum()
    }

    fn better(&self, a: &BigRational, b: &BigRational) -> bool {
        if self.maximize {
            a > b
        } else {
            a < b
        }
    }

    /// The optimum within the box |x_i| <= bound: the best feasible vertex, found by
    /// making every choice of n rows (constraints and box sides) tight, exactly.
    fn box_optimum(&self, bound: i64) -> Option<BigRational> {
        let n = self.objective.len();
        let mut planes: Vec<(Vec<BigRational>, BigRational)> =
            self.rows.iter().map(|(c, _, b)| (c.iter().map(|&k| q(k, 1)).collect(), q(*b, 1))).collect();
        for i in 0..n {
            let unit: Vec<BigRational> = (0..n).map(|j| q(i64::from(i == j), 1)).collect();
            planes.push((unit.clone(), q(bound, 1)));
            planes.push((unit, q(-bound, 1)));
        }
        let mut best: Option<BigRational> = None;
        for chosen in choose(planes.len(), n) {
            let rows: Vec<_> = chosen.iter().map(|&i| planes[i].clone()).collect();
            let Some(x) = solve_square(rows) else { continue };
            if self.feasible(&x, bound) {
                let v = self.value(&x);
                if best.as_ref().is_none_or(|b| self.better(&v, b)) {
                    best = Some(v);
                }
            }
        }
        best
    }

    /// The integer optimum within the box, by enumeration.
    fn grid_optimum(&self, bound: i64) -> Option<BigRational> {
        let n = self.objective.len();
        let mut best: Option<BigRational> = None;
        let side = (2 * bound + 1) as usize;
        for k in 0..side.pow(n as u32) {
            let x: Vec<BigRational> = (0..n).map(|i| q((k / side.pow(i as u32) % side) as i64 - bound, 1)).collect();
            if self.feasible(&x, bound) {
                let v = self.value(&x);
                if best.as_ref().is_none_or(|b| self.better(&v, b)) {
                    best = Some(v);
                }
            }
        }
        best
    }

    /// The true answer of the program without a box. A nonempty box-cut polyhedron has a
    /// vertex; the box optimum V(B) is concave and non-decreasing (maximising) in B, so it is
    /// constant from the box that holds an optimum on (bounded program) or grows with B
    /// (unbounded). Vertices of these small programs lie within a few hundred of 0.
    fn brute_force(&self) -> Verdict {
        let (near, far) = (10_000, 20_000);
        match (self.box_optimum(near), self.box_optimum(far)) {
            (None, _) => Verdict::Infeasible,
            (Some(a), Some(b)) if a == b => Verdict::Optimum(a),
            _ => Verdict::Unbounded,
        }
    }
}

/// Every k-subset of 0..n, in order.
fn choose(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    if n < k {
        return Vec::new();
    }
    let mut out = choose(n - 1, k);
    for mut rest in choose(n - 1, k - 1) {
        rest.push(n - 1);
        out.push(rest);
    }
    out
}

/// The unique solution of a square system, by exact Gaussian elimination.
fn solve_square(mut rows: Vec<(Vec<BigRational>, BigRational)>) -> Option<Vec<BigRational>> {
    let n = rows.len();
    for col in 0..n {
        let pivot = (col..n).find(|&r| !rows[r].0[col].is_zero())?;
        rows.swap(col, pivot);
        let (lead, rhs) = rows[col].clone();
        for (r, (coeffs, b)) in rows.iter_mut().enumerate() {
            if r != col && !coeffs[col].is_zero() {
                let f = &coeffs[col] / &lead[col];
                for (c, l) in coeffs.iter_mut().zip(&lead) {
                    *c -= &f * l;
                }
                *b -= &f * &rhs;
            }
        }
    }
    Some(rows.iter().enumerate().map(|(i, (c, b))| b / &c[i]).collect())
}

fn small(integer: bool) -> impl Strategy<Value = Small> {
    let vars = if integer { 1..=2usize } else { 1..=3usize };
    vars.prop_flat_map(move |n| {
        let coeffs = proptest::collection::vec(-3i64..=3, n);
        let cmp = prop_oneof![Just(Cmp::Le), Just(Cmp::Ge), Just(Cmp::Eq)];
        let row = (coeffs.clone(), cmp, -6i64..=6);
        let objective = coeffs.prop_filter("a non-zero objective", |c| c.iter().any(|&k| k != 0));
        (any::<bool>(), objective, proptest::collection::vec(row, 1..=4))
            .prop_map(move |(maximize, objective, rows)| Small { maximize, objective, rows, integer })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_small_programs_match_a_brute_force_search(p in small(false)) {
        let text = p.text(None);
        let got = verdict(&text);
        let want = p.brute_force();
        match (&got, &want) {
            (Verdict::Approx(v), Verdict::Optimum(w)) => {
                let w = w.to_f64().unwrap_or(f64::NAN);
                prop_assert!((v - w).abs() <= 1e-6 * w.abs().max(1.0), "lp[{}]: {} vs {}", text, v, w);
            }
            _ => prop_assert_eq!(&got, &want, "lp[{}]", text),
        }
    }

    #[test]
    fn random_small_integer_programs_match_an_enumeration(p in small(true)) {
        let bound = 5;
        let text = p.text(Some(bound));
        let want = p.grid_optimum(bound).map_or(Verdict::Infeasible, Verdict::Optimum);
        prop_assert_eq!(verdict(&text), want, "lp[{}]", text);
    }
}
