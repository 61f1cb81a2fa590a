//! `mc-demo`: 16 multiple-choice questions the project wrote, in MMLU-Pro's
//! categories (math, physics, chemistry, biology, economics, business, engineering,
//! computer science), each with 4 to 6 options, a worked solution, the arithmetic step a
//! calculator can do, and the distractors a typed mistake leads to (the mistake's
//! `answer` is the option letter it picks).

use std::collections::BTreeMap;

use super::answer::{join_options, letter};
use super::demo::{Calc, Mistake, MistakeKind};
use super::Item;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McQuestion {
    pub category: &'static str,
    pub question: &'static str,
    pub options: &'static [&'static str],
    /// 0-based index of the right option.
    pub answer: usize,
    pub steps: &'static [&'static str],
    pub calc: Option<Calc>,
    pub mistakes: &'static [Mistake],
}

impl McQuestion {
    /// The task input: the question, then its options one a line.
    pub fn input(&self) -> String {
        let options: Vec<String> = self.options.iter().map(|o| o.to_string()).collect();
        join_options(self.question, &options)
    }

    pub fn gold(&self) -> String {
        letter(self.answer).to_string()
    }

    pub fn item(&self) -> Item {
        let mut facets = BTreeMap::new();
        facets.insert("category".to_string(), self.category.to_string());
        Item { input: self.input(), gold: self.gold(), facets }
    }
}

/// The questions as task items.
pub fn items() -> Vec<Item> {
    QUESTIONS.iter().map(McQuestion::item).collect()
}

/// The question whose input text is `input`, if it is one of these.
pub fn find(input: &str) -> Option<&'static McQuestion> {
    let input = input.trim();
    QUESTIONS.iter().find(|q| q.input().trim() == input)
}

const fn c(step: usize, expr: &'static str, value: &'static str) -> Option<Calc> {
    Some(Calc { step, expr, value })
}

const fn m(kind: MistakeKind, step: usize, text: &'static str, answer: &'static str) -> Mistake {
    Mistake { kind, step, text, answer }
}

use MistakeKind::{Arithmetic, MissedCase, OffByOne, Sign, WrongFormula};

pub const QUESTIONS: &[McQuestion] = &[
    McQuestion {
        category: "math",
        question: "What is the value of 3^4 - 2^5?",
        options: &["47", "49", "17", "113"],
        answer: 1,
        steps: &["3^4 = 81 and 2^5 = 32.", "81 - 32 = 49."],
        calc: c(1, "3^4 - 2^5", "49"),
        mistakes: &[m(Arithmetic, 1, "81 - 32 = 47.", "A"), m(Sign, 1, "Adding them: 81 + 32 = 113.", "D")],
    },
    McQuestion {
        category: "physics",
        question: "A car starts from rest and accelerates uniformly at 3 m/s^2. How far does it travel in the first 4 seconds?",
        options: &["12 m", "24 m", "48 m", "6 m", "36 m"],
        answer: 1,
        steps: &["From rest, the distance is d = (1/2) a t^2.", "d = (1/2)(3)(4^2) = 24 m."],
        calc: c(1, "3*4^2/2", "24"),
        mistakes: &[
            m(WrongFormula, 0, "The distance is d = a t^2 = 3 * 16 = 48 m.", "C"),
            m(Arithmetic, 1, "d = (1/2)(3)(4^2) = 36 m.", "E"),
        ],
    },
    McQuestion {
        category: "chemistry",
        question: "In 2 H2 + O2 -> 2 H2O, how many moles of water form when 4 moles of hydrogen gas react with excess oxygen?",
        options: &["2", "4", "8", "1"],
        answer: 1,
        steps: &["The equation gives 2 mol H2O for every 2 mol H2, a 1:1 ratio.", "So 4 mol H2 gives 4 * 2 / 2 = 4 mol H2O."],
        calc: c(1, "4*2/2", "4"),
        mistakes: &[
            m(WrongFormula, 0, "Oxygen and water are in a 1:2 ratio, so I halve the hydrogen: 2 mol H2O.", "A"),
            m(Arithmetic, 1, "So 4 mol H2 gives 4 * 2 = 8 mol H2O.", "C"),
        ],
    },
    McQuestion {
        category: "biology",
        question: "In a cross of two pea plants heterozygous for one gene (Aa x Aa), what fraction of the offspring is expected to show the recessive phenotype?",
        options: &["1/2", "1/4", "3/4", "0", "1/3"],
        answer: 1,
        steps: &["Each parent passes a with probability 1/2.", "Only aa shows the recessive trait: 1/2 * 1/2 = 1/4."],
        calc: c(1, "1/2*1/2", "1/4"),
        mistakes: &[
            m(WrongFormula, 1, "AA, Aa and aA all carry A, so 3/4 of the offspring show the trait.", "C"),
            m(MissedCase, 1, "Aa and aa both carry a, so 1/2 of them show the recessive trait.", "A"),
        ],
    },
    McQuestion {
        category: "economics",
        question: "A good's price rises from $10 to $12 and the quantity demanded falls from 100 to 90 units. Using percentage changes relative to the starting values, what is the absolute price elasticity of demand?",
        options: &["0.5", "2", "0.2", "1", "5"],
        answer: 0,
        steps: &["The quantity falls by 10/100 = 10%; the price rises by 2/10 = 20%.", "Elasticity = 10% / 20% = 0.5."],
        calc: c(1, "(10/100)/(2/10)", "1/2"),
        mistakes: &[
            m(WrongFormula, 1, "Elasticity = 20% / 10% = 2.", "B"),
            m(Arithmetic, 1, "Elasticity = 10% / 20% = 0.2.", "C"),
        ],
    },
    McQuestion {
        category: "economics",
        question: "Nominal GDP grows by 8% and the GDP deflator rises by 3%. Approximately how much does real GDP grow?",
        options: &["11%", "5%", "2.67%", "24%"],
        answer: 1,
        steps: &["Real growth is about nominal growth minus inflation.", "8% - 3% = 5%."],
        calc: c(1, "8 - 3", "5"),
        mistakes: &[
            m(Sign, 1, "8% + 3% = 11%.", "A"),
            m(WrongFormula, 0, "Real growth is nominal growth divided by inflation: 8 / 3 = 2.67%.", "C"),
        ],
    },
    McQuestion {
        category: "computer science",
        question: "How many edges does a complete graph on 6 vertices have?",
        options: &["30", "36", "15", "12", "6", "21"],
        answer: 2,
        steps: &["Every pair of vertices is joined by one edge.", "There are 6 * 5 / 2 = 15 pairs."],
        calc: c(1, "6*5/2", "15"),
        mistakes: &[
            m(OffByOne, 1, "There are 7 * 6 / 2 = 21 pairs.", "F"),
            m(WrongFormula, 1, "Each of the 6 vertices has 5 edges: 6 * 5 = 30.", "A"),
        ],
    },
    McQuestion {
        category: "computer science",
        question: "Binary search over a sorted array of 1000 elements makes at most how many probes in the worst case?",
        options: &["9", "10", "11", "500", "1000"],
        answer: 1,
        steps: &["Each probe halves the range, so k probes suffice when 2^k > 1000.", "2^10 = 1024 > 1000 while 2^9 = 512 is not, so 10 probes."],
        calc: c(1, "2^10", "1024"),
        mistakes: &[
            m(OffByOne, 1, "2^9 = 512 is about half of 1000, so 9 probes.", "A"),
            m(WrongFormula, 0, "In the worst case it looks at half of the array: 500 probes.", "D"),
        ],
    },
    McQuestion {
        category: "engineering",
        question: "Resistors of 6 ohms and 3 ohms are connected in parallel. What is the equivalent resistance?",
        options: &["9 ohms", "2 ohms", "4.5 ohms", "18 ohms", "0.5 ohms"],
        answer: 1,
        steps: &["In parallel, R = R1 R2 / (R1 + R2).", "R = 6 * 3 / (6 + 3) = 18 / 9 = 2 ohms."],
        calc: c(1, "6*3/(6+3)", "2"),
        mistakes: &[
            m(WrongFormula, 0, "Resistances add: 6 + 3 = 9 ohms.", "A"),
            m(Arithmetic, 1, "1/R = 1/6 + 1/3 = 1/2, so R = 0.5 ohms.", "E"),
        ],
    },
    McQuestion {
        category: "engineering",
        question: "A 2 kW heater runs for 3 hours. How much energy does it use?",
        options: &["6 kWh", "1.5 kWh", "5 kWh", "0.67 kWh"],
        answer: 0,
        steps: &["Energy is power times time.", "2 kW * 3 h = 6 kWh."],
        calc: c(1, "2*3", "6"),
        mistakes: &[
            m(WrongFormula, 0, "Energy is time over power: 3 / 2 = 1.5 kWh.", "B"),
            m(Arithmetic, 1, "2 kW * 3 h = 5 kWh.", "C"),
        ],
    },
    McQuestion {
        category: "physics",
        question: "An object of mass 2 kg moves at 3 m/s. What is its kinetic energy?",
        options: &["6 J", "9 J", "18 J", "3 J", "12 J"],
        answer: 1,
        steps: &["Kinetic energy is (1/2) m v^2.", "(1/2)(2)(3^2) = 9 J."],
        calc: c(1, "2*3^2/2", "9"),
        mistakes: &[
            m(WrongFormula, 0, "Kinetic energy is m v^2 = 2 * 9 = 18 J.", "C"),
            m(Arithmetic, 1, "(1/2)(2)(3^2) = 6 J.", "A"),
        ],
    },
    McQuestion {
        category: "chemistry",
        question: "Using C = 12 g/mol and O = 16 g/mol, what is the molar mass of carbon dioxide, CO2?",
        options: &["28 g/mol", "44 g/mol", "32 g/mol", "60 g/mol"],
        answer: 1,
        steps: &["CO2 has one carbon and two oxygens.", "12 + 2 * 16 = 44 g/mol."],
        calc: c(1, "12 + 2*16", "44"),
        mistakes: &[
            m(MissedCase, 1, "12 + 16 = 28 g/mol.", "A"),
            m(Arithmetic, 1, "12 + 2 * 16 = 60 g/mol.", "D"),
        ],
    },
    McQuestion {
        category: "math",
        question: "How many integers n satisfy -3 <= n < 5?",
        options: &["7", "8", "9", "10"],
        answer: 1,
        steps: &["The integers are -3, -2, ..., 4.", "That is 4 - (-3) + 1 = 8 integers."],
        calc: c(1, "4 - (-3) + 1", "8"),
        mistakes: &[
            m(OffByOne, 1, "That is 5 - (-3) + 1 = 9 integers.", "C"),
            m(OffByOne, 1, "That is 4 - (-3) = 7 integers.", "A"),
        ],
    },
    McQuestion {
        category: "math",
        question: "What is the derivative of x^3 - 4x at x = 2?",
        options: &["4", "8", "12", "0", "16"],
        answer: 1,
        steps: &["The derivative is 3x^2 - 4.", "At x = 2: 3 * 2^2 - 4 = 8."],
        calc: c(1, "3*2^2 - 4", "8"),
        mistakes: &[
            m(WrongFormula, 0, "Evaluating at x = 2: 2^3 - 4 * 2 = 0.", "D"),
            m(Sign, 1, "At x = 2: 3 * 2^2 + 4 = 16.", "E"),
        ],
    },
    McQuestion {
        category: "biology",
        question: "A bacterial population doubles every 20 minutes. Starting from 100 cells, how many cells are there after 2 hours?",
        options: &["1200", "6400", "3200", "12800", "600"],
        answer: 1,
        steps: &["2 hours is 120 / 20 = 6 doublings.", "100 * 2^6 = 6400 cells."],
        calc: c(1, "100*2^6", "6400"),
        mistakes: &[
            m(OffByOne, 1, "The first 20 minutes only start growth, so 5 doublings: 100 * 2^5 = 3200 cells.", "C"),
            m(WrongFormula, 1, "100 * 2 * 6 = 1200 cells.", "A"),
        ],
    },
    McQuestion {
        category: "business",
        question: "An investment of $1000 earns 10% interest compounded annually. What is it worth after 2 years?",
        options: &["$1200", "$1210", "$1100", "$1221", "$2000"],
        answer: 1,
        steps: &["Each year multiplies the value by 1.1.", "1000 * 1.1^2 = 1210 dollars."],
        calc: c(1, "1000*(11/10)^2", "1210"),
        mistakes: &[
            m(WrongFormula, 0, "Simple interest: 1000 + 2 * 100 = 1200 dollars.", "A"),
            m(Arithmetic, 1, "1000 * 1.1^2 = 1221 dollars.", "D"),
        ],
    },
];
