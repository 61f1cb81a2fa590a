//! The 42 math-demo problems: each with its subject and level, its gold answer, the
//! worked calculation the simulated model follows and the typical mistakes it makes.

use super::{Calc, DemoProblem, Mistake, MistakeKind};

const fn c(step: usize, expr: &'static str, value: &'static str) -> Option<Calc> {
    Some(Calc { step, expr, value })
}

const fn m(kind: MistakeKind, step: usize, text: &'static str, answer: &'static str) -> Mistake {
    Mistake { kind, step, text, answer }
}

use MistakeKind::{Arithmetic, MissedCase, OffByOne, Sign, WrongFormula};

const ALG: &str = "Algebra";
const CNT: &str = "Counting & Probability";
const GEO: &str = "Geometry";
const INT: &str = "Intermediate Algebra";
const NUM: &str = "Number Theory";
const PRE: &str = "Prealgebra";
const PCA: &str = "Precalculus";

pub const PROBLEMS: &[DemoProblem] = &[
    // Algebra
    DemoProblem {
        subject: ALG,
        level: 1,
        problem: r"Solve for $x$: $3x + 7 = 25$.",
        answer: "6",
        steps: &[r"Subtract $7$ from both sides: $3x = 25 - 7 = 18$.", r"Divide by $3$: $x = 18/3 = 6$."],
        calc: c(0, "25 - 7", "18"),
        mistakes: &[
            m(
                Arithmetic,
                0,
                r"Subtract $7$ from both sides: $3x = 25 - 7 = 16$, so $x = \frac{16}{3}$.",
                r"\frac{16}{3}",
            ),
            m(Sign, 0, r"Move the $7$ across: $3x = 25 + 7 = 32$, so $x = \frac{32}{3}$.", r"\frac{32}{3}"),
        ],
    },
    DemoProblem {
        subject: ALG,
        level: 2,
        problem: r"What is the slope of the line through $(2, -3)$ and $(6, 5)$?",
        answer: "2",
        steps: &[
            r"The slope is $\frac{y_2 - y_1}{x_2 - x_1}$.",
            r"Here that is $\frac{5 - (-3)}{6 - 2} = \frac{8}{4} = 2$.",
        ],
        calc: c(1, "(5 - (-3)) / (6 - 2)", "2"),
        mistakes: &[
            m(Sign, 1, r"Here that is $\frac{-3 - 5}{6 - 2} = \frac{-8}{4} = -2$.", "-2"),
            m(
                WrongFormula,
                0,
                r"The slope is $\frac{x_2 - x_1}{y_2 - y_1} = \frac{6 - 2}{5 - (-3)} = \frac{4}{8} = \frac{1}{2}$.",
                r"\frac{1}{2}",
            ),
        ],
    },
    DemoProblem {
        subject: ALG,
        level: 3,
        problem: r"Find all real $x$ with $x^2 - 5x + 6 \le 0$. Give your answer as an interval.",
        answer: "[2,3]",
        steps: &[
            r"The discriminant is $5^2 - 4 \cdot 6 = 1$, so the roots are $\frac{5 \pm 1}{2}$: $2$ and $3$.",
            r"So $x^2 - 5x + 6 = (x - 2)(x - 3)$, which is at most zero between the roots, the roots included.",
            r"The solution set is $[2,3]$.",
        ],
        calc: c(0, "5^2 - 4*6", "1"),
        mistakes: &[
            m(MissedCase, 1, r"So $(x - 2)(x - 3)$ is negative between the roots, and the set is $(2,3)$.", "(2,3)"),
            m(
                Sign,
                1,
                r"So $(x - 2)(x - 3)$ is at most zero outside the roots: $(-\infty,2] \cup [3,\infty)$.",
                r"(-\infty,2]\cup[3,\infty)",
            ),
        ],
    },
    DemoProblem {
        subject: ALG,
        level: 4,
        problem: r"Find all real solutions of $|2x - 3| = 7$. Give them as a set.",
        answer: r"\{-2,5\}",
        steps: &[
            r"Either $2x - 3 = 7$ or $2x - 3 = -7$.",
            r"The first gives $2x = 10$, so $x = 5$.",
            r"The second gives $2x = -4$, so $x = -2$.",
            r"The solutions are $\{-2, 5\}$.",
        ],
        calc: c(2, "(-7 + 3) / 2", "-2"),
        mistakes: &[
            m(MissedCase, 0, r"Then $2x - 3 = 7$, so $2x = 10$ and $x = 5$ is the only solution.", "5"),
            m(Sign, 2, r"The second gives $2x = -10$, so $x = -5$; the solutions are $\{-5, 5\}$.", r"\{-5,5\}"),
            m(Arithmetic, 2, r"The second gives $2x = -4$, so $x = -1$; the solutions are $\{-1, 5\}$.", r"\{-1,5\}"),
        ],
    },
    DemoProblem {
        subject: ALG,
        level: 5,
        problem: r"The first $20$ terms of an arithmetic sequence sum to $610$, and its first term is $2$. What is its common difference?",
        answer: "3",
        steps: &[
            r"$S_{20} = \frac{20}{2}(2a + 19d) = 10(4 + 19d)$.",
            r"So $4 + 19d = 61$, and $19d = 57$.",
            r"Hence $d = 57/19 = 3$.",
        ],
        calc: c(2, "(61 - 4) / 19", "3"),
        mistakes: &[
            m(
                OffByOne,
                0,
                r"$S_{20} = \frac{20}{2}(2a + 20d) = 10(4 + 20d)$, so $20d = 57$ and $d = \frac{57}{20}$.",
                r"\frac{57}{20}",
            ),
            m(
                WrongFormula,
                0,
                r"$S_{20} = 20(a + 19d) = 20(2 + 19d)$, so $2 + 19d = \frac{61}{2}$ and $d = \frac{3}{2}$.",
                r"\frac{3}{2}",
            ),
        ],
    },
    DemoProblem {
        subject: ALG,
        level: 3,
        problem: r"Simplify $\frac{x^2 - 9}{x + 3}$ for $x \ne -3$.",
        answer: "x-3",
        steps: &[
            r"$x^2 - 9$ is a difference of squares: $(x - 3)(x + 3)$.",
            r"Cancel the common factor $x + 3$.",
            r"Check at $x = 5$: $\frac{5^2 - 9}{5 + 3} = 2 = 5 - 3$.",
            r"The result is $x - 3$.",
        ],
        calc: c(2, "(5^2 - 9) / (5 + 3)", "2"),
        mistakes: &[m(Sign, 0, r"$x^2 - 9 = (x + 3)(x + 3)$, so after cancelling the result is $x + 3$.", "x+3")],
    },
    // Counting & Probability
    DemoProblem {
        subject: CNT,
        level: 1,
        problem: r"In how many ways can $4$ different books be arranged in a row on a shelf?",
        answer: "24",
        steps: &[
            r"There are $4$ choices for the first spot, $3$ for the second, $2$ for the third and $1$ for the last.",
            r"That is $4! = 4 \cdot 3 \cdot 2 \cdot 1 = 24$.",
        ],
        calc: c(1, "4*3*2*1", "24"),
        mistakes: &[
            m(Arithmetic, 1, r"That is $4 \cdot 3 \cdot 2 \cdot 1 = 12 \cdot 2 = 18$.", "18"),
            m(WrongFormula, 0, r"Each book can go in any of the $4$ spots, so there are $4^4 = 256$ ways.", "256"),
        ],
    },
    DemoProblem {
        subject: CNT,
        level: 2,
        problem: r"Two fair six-sided dice are rolled. What is the probability that the sum is $8$? Express your answer as a common fraction.",
        answer: r"\frac{5}{36}",
        steps: &[
            r"There are $6 \cdot 6 = 36$ equally likely outcomes.",
            r"The sum is $8$ for $(2,6), (3,5), (4,4), (5,3), (6,2)$: $5$ outcomes.",
            r"The probability is $\frac{5}{36}$.",
        ],
        calc: c(0, "6*6", "36"),
        mistakes: &[
            m(
                MissedCase,
                1,
                r"The sum is $8$ for $(2,6), (3,5), (5,3), (6,2)$: $4$ outcomes, so the probability is $\frac{4}{36} = \frac{1}{9}$.",
                r"\frac{1}{9}",
            ),
            m(
                WrongFormula,
                1,
                r"Counting unordered pairs $\{2,6\}, \{3,5\}, \{4,4\}$ gives $3$ outcomes, so the probability is $\frac{3}{36} = \frac{1}{12}$.",
                r"\frac{1}{12}",
            ),
        ],
    },
    DemoProblem {
        subject: CNT,
        level: 3,
        problem: r"How many integers from $1$ to $100$ inclusive are multiples of $3$ or of $5$?",
        answer: "47",
        steps: &[
            r"Multiples of $3$: $\lfloor 100/3 \rfloor = 33$. Multiples of $5$: $100/5 = 20$.",
            r"Multiples of both, that is of $15$: $\lfloor 100/15 \rfloor = 6$.",
            r"By inclusion-exclusion: $33 + 20 - 6 = 47$.",
        ],
        calc: c(2, "33 + 20 - 6", "47"),
        mistakes: &[
            m(WrongFormula, 2, r"Adding the two counts: $33 + 20 = 53$.", "53"),
            m(Arithmetic, 2, r"By inclusion-exclusion: $33 + 20 - 6 = 45$.", "45"),
            m(
                OffByOne,
                0,
                r"Multiples of $3$: $100/3$ rounds to $34$. Multiples of $5$: $20$. Of both: $6$. So $34 + 20 - 6 = 48$.",
                "48",
            ),
        ],
    },
    DemoProblem {
        subject: CNT,
        level: 4,
        problem: r"A committee of $3$ is chosen from $5$ women and $4$ men. How many possible committees include at least one man?",
        answer: "74",
        steps: &[
            r"All committees: $\binom{9}{3} = \frac{9 \cdot 8 \cdot 7}{6} = 84$.",
            r"Committees with no man: $\binom{5}{3} = 10$.",
            r"So $84 - 10 = 74$ include at least one man.",
        ],
        calc: c(0, "9*8*7/6", "84"),
        mistakes: &[
            m(
                Arithmetic,
                0,
                r"All committees: $\binom{9}{3} = \frac{9 \cdot 8 \cdot 7}{6} = 72$. With no man: $10$. So $72 - 10 = 62$.",
                "62",
            ),
            m(
                WrongFormula,
                0,
                r"Choose one man ($4$ ways), then any $2$ of the other $8$ people ($\binom{8}{2} = 28$): $4 \cdot 28 = 112$.",
                "112",
            ),
            m(MissedCase, 0, r"Exactly one man: $4 \cdot \binom{5}{2} = 40$ committees, and that is the count.", "40"),
        ],
    },
    DemoProblem {
        subject: CNT,
        level: 5,
        problem: r"How many positive integers less than $1000$ have digits that sum to $5$?",
        answer: "21",
        steps: &[
            r"Write the number with three digits $a, b, c$ (leading zeros allowed); we need $a + b + c = 5$.",
            r"By stars and bars there are $\binom{5 + 2}{2} = \binom{7}{2} = 21$ solutions, and no digit exceeds $9$.",
            r"None of them is $000$, so the count is $21$.",
        ],
        calc: c(1, "7*6/2", "21"),
        mistakes: &[
            m(OffByOne, 1, r"By stars and bars there are $\binom{5 + 1}{2} = \binom{6}{2} = 15$ solutions.", "15"),
            m(WrongFormula, 1, r"By stars and bars there are $\binom{5 + 3}{3} = 56$ solutions.", "56"),
        ],
    },
    DemoProblem {
        subject: CNT,
        level: 3,
        problem: r"A bag holds $4$ red and $6$ blue marbles. Two are drawn without replacement. What is the probability that both are red? Express your answer as a common fraction.",
        answer: r"\frac{2}{15}",
        steps: &[
            r"The first is red with probability $\frac{4}{10}$.",
            r"Then $3$ of the $9$ left are red: $\frac{3}{9}$.",
            r"Together $\frac{4}{10} \cdot \frac{3}{9} = \frac{12}{90} = \frac{2}{15}$.",
        ],
        calc: c(2, "4/10 * 3/9", "2/15"),
        mistakes: &[
            m(
                WrongFormula,
                1,
                r"The second is red with probability $\frac{4}{10}$ too, so $\frac{4}{10} \cdot \frac{4}{10} = \frac{4}{25}$.",
                r"\frac{4}{25}",
            ),
            m(
                Arithmetic,
                2,
                r"Together $\frac{4}{10} \cdot \frac{3}{9} = \frac{12}{90} = \frac{2}{9}$.",
                r"\frac{2}{9}",
            ),
        ],
    },
    // Geometry
    DemoProblem {
        subject: GEO,
        level: 1,
        problem: r"A rectangle has length $12$ and width $5$. How long is its diagonal?",
        answer: "13",
        steps: &[
            r"The diagonal is the hypotenuse of a right triangle with legs $12$ and $5$.",
            r"$d^2 = 12^2 + 5^2 = 144 + 25 = 169$.",
            r"So $d = 13$.",
        ],
        calc: c(1, "12^2 + 5^2", "169"),
        mistakes: &[
            m(Arithmetic, 1, r"$d^2 = 144 + 25 = 179$, so $d = \sqrt{179}$.", r"\sqrt{179}"),
            m(WrongFormula, 1, r"$d = 12 + 5 = 17$.", "17"),
        ],
    },
    DemoProblem {
        subject: GEO,
        level: 2,
        problem: r"What is the area of a circle whose circumference is $10\pi$? Express your answer in terms of $\pi$.",
        answer: r"25\pi",
        steps: &[r"$2\pi r = 10\pi$, so $r = 5$.", r"The area is $\pi r^2 = \pi \cdot 5^2 = 25\pi$."],
        calc: c(1, "5^2", "25"),
        mistakes: &[
            m(WrongFormula, 0, r"$\pi r = 10\pi$, so $r = 10$ and the area is $\pi \cdot 10^2 = 100\pi$.", r"100\pi"),
            m(Arithmetic, 1, r"The area is $\pi r^2 = \pi \cdot 5^2 = 10\pi$.", r"10\pi"),
        ],
    },
    DemoProblem {
        subject: GEO,
        level: 3,
        problem: r"A triangle has vertices $(0,0)$, $(6,0)$ and $(2,5)$. What is its area?",
        answer: "15",
        steps: &[
            r"Take the side from $(0,0)$ to $(6,0)$ as the base: its length is $6$.",
            r"The height is the $y$-coordinate of $(2,5)$: $5$.",
            r"The area is $\frac{1}{2} \cdot 6 \cdot 5 = 15$.",
        ],
        calc: c(2, "6*5/2", "15"),
        mistakes: &[
            m(WrongFormula, 2, r"The area is base times height: $6 \cdot 5 = 30$.", "30"),
            m(Arithmetic, 2, r"The area is $\frac{1}{2} \cdot 6 \cdot 5 = 12$.", "12"),
        ],
    },
    DemoProblem {
        subject: GEO,
        level: 4,
        problem: r"A regular hexagon has side length $4$. What is its area? Express your answer in simplest radical form.",
        answer: r"24\sqrt{3}",
        steps: &[
            r"A regular hexagon splits into $6$ equilateral triangles of side $4$.",
            r"Each has area $\frac{\sqrt{3}}{4} \cdot 4^2 = 4\sqrt{3}$.",
            r"The total is $6 \cdot 4\sqrt{3} = 24\sqrt{3}$.",
        ],
        calc: c(2, "6 * 4^2 / 4", "24"),
        mistakes: &[
            m(WrongFormula, 1, r"Each has area $\frac{1}{2} \cdot 4^2 = 8$, so the total is $6 \cdot 8 = 48$.", "48"),
            m(Arithmetic, 2, r"The total is $6 \cdot 4\sqrt{3} = 20\sqrt{3}$.", r"20\sqrt{3}"),
        ],
    },
    DemoProblem {
        subject: GEO,
        level: 5,
        problem: r"In right triangle $ABC$ with the right angle at $C$, $AC = 6$ and $BC = 8$. How long is the altitude from $C$ to $AB$? Express your answer as a common fraction.",
        answer: r"\frac{24}{5}",
        steps: &[
            r"$AB = \sqrt{6^2 + 8^2} = 10$.",
            r"Twice the area is $AC \cdot BC = 48$, and also $AB \cdot h$.",
            r"So $h = \frac{48}{10} = \frac{24}{5}$.",
        ],
        calc: c(2, "6*8/10", "24/5"),
        mistakes: &[
            m(WrongFormula, 1, r"The altitude to the hypotenuse is half the hypotenuse: $5$.", "5"),
            m(Arithmetic, 2, r"So $h = \frac{48}{10} = \frac{12}{5}$.", r"\frac{12}{5}"),
        ],
    },
    DemoProblem {
        subject: GEO,
        level: 2,
        problem: r"The interior angles of a convex polygon add up to $1260^\circ$. How many sides does it have?",
        answer: "9",
        steps: &[
            r"The angles of an $n$-gon add up to $(n - 2) \cdot 180^\circ$.",
            r"$1260 / 180 = 7$, so $n - 2 = 7$.",
            r"So $n = 9$.",
        ],
        calc: c(1, "1260/180", "7"),
        mistakes: &[
            m(OffByOne, 2, r"So the polygon has $7 + 1 = 8$ sides.", "8"),
            m(
                WrongFormula,
                0,
                r"The angles of an $n$-gon add up to $n \cdot 180^\circ$, and $1260/180 = 7$, so $n = 7$.",
                "7",
            ),
        ],
    },
    // Intermediate Algebra
    DemoProblem {
        subject: INT,
        level: 2,
        problem: r"Find the sum of the roots of $2x^2 - 7x + 3 = 0$. Express your answer as a common fraction.",
        answer: r"\frac{7}{2}",
        steps: &[
            r"By Vieta's formulas the roots of $ax^2 + bx + c$ sum to $-\frac{b}{a}$.",
            r"Here that is $-\frac{-7}{2} = \frac{7}{2}$.",
        ],
        calc: c(1, "-(-7)/2", "7/2"),
        mistakes: &[
            m(Sign, 1, r"Here that is $-\frac{7}{2}$.", r"-\frac{7}{2}"),
            m(WrongFormula, 0, r"By Vieta's formulas the roots sum to $\frac{c}{a} = \frac{3}{2}$.", r"\frac{3}{2}"),
        ],
    },
    DemoProblem {
        subject: INT,
        level: 3,
        problem: r"Find the domain of $f(x) = \sqrt{x - 2} + \frac{1}{x - 5}$. Express your answer in interval notation.",
        answer: r"[2,5)\cup(5,\infty)",
        steps: &[
            r"The square root needs $x - 2 \ge 0$, so $x \ge 2$.",
            r"The fraction needs $x - 5 \ne 0$; at $x = 5$ the denominator is $5 - 5 = 0$, so $x \ne 5$.",
            r"The domain is $[2,5) \cup (5,\infty)$.",
        ],
        calc: c(1, "5 - 5", "0"),
        mistakes: &[
            m(MissedCase, 1, r"Nothing else restricts $x$, so the domain is $[2,\infty)$.", r"[2,\infty)"),
            m(
                Sign,
                0,
                r"The square root needs $x - 2 \ge 0$, so $x \le 2$; with $x \ne 5$ the domain is $(-\infty,2]$.",
                r"(-\infty,2]",
            ),
        ],
    },
    DemoProblem {
        subject: INT,
        level: 4,
        problem: r"Find the remainder when $x^4 - 3x^2 + 2x - 5$ is divided by $x - 2$.",
        answer: "3",
        steps: &[
            r"By the remainder theorem the remainder is $f(2)$.",
            r"$f(2) = 2^4 - 3 \cdot 2^2 + 2 \cdot 2 - 5 = 16 - 12 + 4 - 5 = 3$.",
        ],
        calc: c(1, "2^4 - 3*2^2 + 2*2 - 5", "3"),
        mistakes: &[
            m(Sign, 0, r"By the remainder theorem the remainder is $f(-2) = 16 - 12 - 4 - 5 = -5$.", "-5"),
            m(Arithmetic, 1, r"$f(2) = 16 - 12 + 4 - 5 = 5$.", "5"),
        ],
    },
    DemoProblem {
        subject: INT,
        level: 5,
        problem: r"Find all real $x$ such that $\frac{x+1}{x-3} > 0$. Express your answer in interval notation.",
        answer: r"(-\infty,-1)\cup(3,\infty)",
        steps: &[
            r"The fraction changes sign only at $x = -1$ and $x = 3$.",
            r"At $x = 0$ it is $\frac{0 + 1}{0 - 3} = -\frac{1}{3} < 0$, so $(-1,3)$ is out; outside it both parts have the same sign.",
            r"So $x \in (-\infty,-1) \cup (3,\infty)$.",
        ],
        calc: c(1, "(0 + 1)/(0 - 3)", "-1/3"),
        mistakes: &[
            m(MissedCase, 1, r"For $x > 3$ both parts are positive, so $x \in (3,\infty)$.", r"(3,\infty)"),
            m(Sign, 1, r"At $x = 0$ it is positive, so the answer is $(-1,3)$.", "(-1,3)"),
        ],
    },
    DemoProblem {
        subject: INT,
        level: 3,
        problem: r"Let $f(x) = 2x + 3$ and $g(x) = x^2 - 1$. Find $f(g(x))$.",
        answer: "2x^2+1",
        steps: &[
            r"$f(g(x)) = 2(x^2 - 1) + 3$.",
            r"$= 2x^2 - 2 + 3 = 2x^2 + 1$.",
            r"Check at $x = 2$: $2(2^2 - 1) + 3 = 9 = 2 \cdot 4 + 1$.",
            r"So $f(g(x)) = 2x^2 + 1$.",
        ],
        calc: c(2, "2*(2^2 - 1) + 3", "9"),
        mistakes: &[
            m(WrongFormula, 0, r"$f(g(x)) = (2x + 3)^2 - 1 = 4x^2 + 12x + 8$.", "4x^2+12x+8"),
            m(Sign, 1, r"$= 2x^2 + 2 + 3 = 2x^2 + 5$.", "2x^2+5"),
        ],
    },
    DemoProblem {
        subject: INT,
        level: 4,
        problem: r"Find the ordered pair $(x,y)$ with $2x + 3y = 12$ and $x - y = 1$.",
        answer: "(3,2)",
        steps: &[
            r"From the second equation $x = y + 1$.",
            r"Substituting: $2(y + 1) + 3y = 12$, so $5y = 10$ and $y = 2$.",
            r"Then $x = 3$, and the solution is $(3,2)$.",
        ],
        calc: c(1, "(12 - 2)/5", "2"),
        mistakes: &[
            m(
                Sign,
                0,
                r"From the second equation $x = y - 1$. Substituting: $2(y - 1) + 3y = 12$, so $5y = 14$, $y = \frac{14}{5}$ and $x = \frac{9}{5}$.",
                r"\left(\frac{9}{5},\frac{14}{5}\right)",
            ),
            m(Arithmetic, 1, r"Substituting: $2(y + 1) + 3y = 12$, so $5y = 10$ and $y = 5$; then $x = 6$.", "(6,5)"),
        ],
    },
    // Number Theory
    DemoProblem {
        subject: NUM,
        level: 1,
        problem: r"What is the greatest common divisor of $84$ and $126$?",
        answer: "42",
        steps: &[r"$126 = 1 \cdot 84 + 42$.", r"$84 = 2 \cdot 42 + 0$.", r"So $\gcd(84, 126) = 42$."],
        calc: c(0, "126 - 84", "42"),
        mistakes: &[m(
            Arithmetic,
            0,
            r"$126 = 1 \cdot 84 + 32$, and $84 = 2 \cdot 32 + 20$, $32 = 20 + 12$, $20 = 12 + 8$, $12 = 8 + 4$, $8 = 2 \cdot 4$: the gcd is $4$.",
            "4",
        )],
    },
    DemoProblem {
        subject: NUM,
        level: 2,
        problem: r"What is the remainder when $2^{10}$ is divided by $7$?",
        answer: "2",
        steps: &[
            r"$2^3 = 8 \equiv 1 \pmod 7$.",
            r"$2^{10} = (2^3)^3 \cdot 2 \equiv 1 \cdot 2 = 2 \pmod 7$; indeed $2^{10} - 7 \cdot 146 = 2$.",
        ],
        calc: c(1, "2^10 - 7*146", "2"),
        mistakes: &[
            m(OffByOne, 1, r"$2^{10} = (2^3)^3 \cdot 2^2 \equiv 4 \pmod 7$.", "4"),
            m(Arithmetic, 1, r"$2^{10} = 1024 = 7 \cdot 146 + 3$, so the remainder is $3$.", "3"),
        ],
    },
    DemoProblem {
        subject: NUM,
        level: 3,
        problem: r"How many positive divisors does $360$ have?",
        answer: "24",
        steps: &[r"$360 = 2^3 \cdot 3^2 \cdot 5$.", r"The number of divisors is $(3 + 1)(2 + 1)(1 + 1) = 24$."],
        calc: c(1, "(3 + 1)*(2 + 1)*(1 + 1)", "24"),
        mistakes: &[
            m(OffByOne, 1, r"The number of divisors is $3 \cdot 2 \cdot 1 = 6$.", "6"),
            m(Arithmetic, 1, r"The number of divisors is $(3 + 1)(2 + 1)(1 + 1) = 4 \cdot 3 \cdot 2 = 20$.", "20"),
        ],
    },
    DemoProblem {
        subject: NUM,
        level: 4,
        problem: r"What is the smallest positive integer $n$ with $n \equiv 2 \pmod 3$, $n \equiv 3 \pmod 5$ and $n \equiv 2 \pmod 7$?",
        answer: "23",
        steps: &[
            r"$n \equiv 2 \pmod 3$ and $n \equiv 2 \pmod 7$ together mean $n \equiv 2 \pmod{21}$.",
            r"Try $2, 23, 44, \ldots$: $2$ leaves remainder $2$ mod $5$, and $23 - 4 \cdot 5 = 3$.",
            r"So $n = 23$.",
        ],
        calc: c(1, "23 - 4*5", "3"),
        mistakes: &[
            m(MissedCase, 1, r"The smallest such number is $n = 2$.", "2"),
            m(
                Arithmetic,
                1,
                r"$23 = 4 \cdot 5 + 2$ fails, and so do $44$, $65$, $86$ and $107$; $128 = 25 \cdot 5 + 3$ works, so $n = 128$.",
                "128",
            ),
        ],
    },
    DemoProblem {
        subject: NUM,
        level: 5,
        problem: r"What is the sum of all positive divisors of $100$?",
        answer: "217",
        steps: &[r"$100 = 2^2 \cdot 5^2$.", r"The divisor sum is $(1 + 2 + 4)(1 + 5 + 25) = 7 \cdot 31 = 217$."],
        calc: c(1, "(1 + 2 + 4)*(1 + 5 + 25)", "217"),
        mistakes: &[
            m(MissedCase, 1, r"The divisor sum is $(2 + 4)(5 + 25) = 6 \cdot 30 = 180$.", "180"),
            m(Arithmetic, 1, r"The divisor sum is $(1 + 2 + 4)(1 + 5 + 25) = 7 \cdot 31 = 207$.", "207"),
        ],
    },
    DemoProblem {
        subject: NUM,
        level: 2,
        problem: r"What is the units digit of $7^{23}$?",
        answer: "3",
        steps: &[
            r"The units digits of the powers of $7$ repeat every $4$: $7, 9, 3, 1$.",
            r"$23 - 4 \cdot 5 = 3$, so $7^{23}$ ends like $7^3$.",
            r"$7^3 = 343$ ends in $3$.",
        ],
        calc: c(1, "23 - 4*5", "3"),
        mistakes: &[
            m(
                OffByOne,
                1,
                r"$23 - 4 \cdot 5 = 3$, so $7^{23}$ ends like the next one in the cycle, $7^4$, which ends in $1$.",
                "1",
            ),
            m(Arithmetic, 2, r"$7^3 = 7 \cdot 49 = 349$ ends in $9$.", "9"),
        ],
    },
    // Prealgebra
    DemoProblem {
        subject: PRE,
        level: 1,
        problem: r"What is $\frac{2}{3} + \frac{3}{4}$? Express your answer as a common fraction.",
        answer: r"\frac{17}{12}",
        steps: &[
            r"The common denominator is $12$.",
            r"$\frac{2}{3} = \frac{8}{12}$ and $\frac{3}{4} = \frac{9}{12}$.",
            r"The sum is $\frac{17}{12}$.",
        ],
        calc: c(2, "2/3 + 3/4", "17/12"),
        mistakes: &[
            m(WrongFormula, 0, r"Add the tops and the bottoms: $\frac{2 + 3}{3 + 4} = \frac{5}{7}$.", r"\frac{5}{7}"),
            m(
                Arithmetic,
                1,
                r"$\frac{2}{3} = \frac{8}{12}$ and $\frac{3}{4} = \frac{6}{12}$, so the sum is $\frac{14}{12} = \frac{7}{6}$.",
                r"\frac{7}{6}",
            ),
        ],
    },
    DemoProblem {
        subject: PRE,
        level: 1,
        problem: r"What is $15\%$ of $240$?",
        answer: "36",
        steps: &[r"$15\% = \frac{15}{100}$.", r"$\frac{15}{100} \cdot 240 = 36$."],
        calc: c(1, "15/100 * 240", "36"),
        mistakes: &[m(Arithmetic, 1, r"$\frac{15}{100} \cdot 240 = 32$.", "32")],
    },
    DemoProblem {
        subject: PRE,
        level: 2,
        problem: r"Evaluate $-3^2 + (-2)^3$.",
        answer: "-17",
        steps: &[r"$-3^2 = -(3^2) = -9$.", r"$(-2)^3 = -8$.", r"So the sum is $-9 - 8 = -17$."],
        calc: c(2, "-(3^2) + (-2)^3", "-17"),
        mistakes: &[
            m(Sign, 0, r"$-3^2 = (-3)^2 = 9$, so the sum is $9 - 8 = 1$.", "1"),
            m(Sign, 1, r"$(-2)^3 = 8$, so the sum is $-9 + 8 = -1$.", "-1"),
        ],
    },
    DemoProblem {
        subject: PRE,
        level: 2,
        problem: r"After a $20\%$ discount a shirt costs $\$40$. What was its original price, in dollars?",
        answer: "50",
        steps: &[r"After the discount the price is $80\%$ of the original.", r"So the original is $40 / 0.8 = 50$."],
        calc: c(1, "40 / (8/10)", "50"),
        mistakes: &[
            m(WrongFormula, 1, r"So the original is $40$ plus $20\%$ of $40$: $40 + 8 = 48$.", "48"),
            m(Arithmetic, 1, r"So the original is $40 / 0.8 = 45$.", "45"),
        ],
    },
    DemoProblem {
        subject: PRE,
        level: 3,
        problem: r"How many whole numbers lie between $\sqrt{10}$ and $\sqrt{200}$?",
        answer: "11",
        steps: &[
            r"$3^2 = 9 < 10 < 16 = 4^2$, so $\sqrt{10}$ is between $3$ and $4$.",
            r"$14^2 = 196 < 200 < 225 = 15^2$, so $\sqrt{200}$ is between $14$ and $15$.",
            r"The whole numbers between are $4$ through $14$: $14 - 4 + 1 = 11$.",
        ],
        calc: c(2, "14 - 4 + 1", "11"),
        mistakes: &[m(OffByOne, 2, r"The whole numbers between are $4$ through $14$: $14 - 4 = 10$.", "10")],
    },
    DemoProblem {
        subject: PRE,
        level: 3,
        problem: r"The mean of five numbers is $12$. Four of them are $8$, $10$, $15$ and $9$. What is the fifth?",
        answer: "18",
        steps: &[
            r"The five numbers add up to $5 \cdot 12 = 60$.",
            r"The four known ones add up to $8 + 10 + 15 + 9 = 42$.",
            r"The fifth is $60 - 42 = 18$.",
        ],
        calc: c(1, "8 + 10 + 15 + 9", "42"),
        mistakes: &[
            m(
                Arithmetic,
                1,
                r"The four known ones add up to $8 + 10 + 15 + 9 = 44$, so the fifth is $60 - 44 = 16$.",
                "16",
            ),
            m(
                OffByOne,
                0,
                r"The numbers add up to $4 \cdot 12 = 48$, and the four known ones to $42$, so the fifth is $6$.",
                "6",
            ),
        ],
    },
    // Precalculus
    DemoProblem {
        subject: PCA,
        level: 1,
        problem: r"Convert $210^\circ$ to radians.",
        answer: r"\frac{7\pi}{6}",
        steps: &[r"Multiply by $\frac{\pi}{180}$.", r"$210 \cdot \frac{\pi}{180} = \frac{7\pi}{6}$."],
        calc: c(1, "210/180", "7/6"),
        mistakes: &[
            m(WrongFormula, 0, r"Divide $180$ by $210$: $\frac{180}{210}\pi = \frac{6\pi}{7}$.", r"\frac{6\pi}{7}"),
            m(Arithmetic, 1, r"$210 \cdot \frac{\pi}{180} = \frac{7\pi}{5}$.", r"\frac{7\pi}{5}"),
        ],
    },
    DemoProblem {
        subject: PCA,
        level: 2,
        problem: r"What is $\cos 120^\circ$? Express your answer as a common fraction.",
        answer: r"-\frac{1}{2}",
        steps: &[
            r"$120^\circ = 180^\circ - 60^\circ$.",
            r"$\cos(180^\circ - \theta) = -\cos\theta$, so $\cos 120^\circ = -\cos 60^\circ = -\frac{1}{2}$.",
        ],
        calc: c(0, "180 - 120", "60"),
        mistakes: &[
            m(Sign, 1, r"$\cos 120^\circ = \cos 60^\circ = \frac{1}{2}$.", r"\frac{1}{2}"),
            m(WrongFormula, 1, r"$\cos 120^\circ = -\sin 60^\circ = -\frac{\sqrt{3}}{2}$.", r"-\frac{\sqrt{3}}{2}"),
        ],
    },
    DemoProblem {
        subject: PCA,
        level: 3,
        problem: r"Find the magnitude of the vector $\begin{pmatrix} 2 \\ -6 \\ 3 \end{pmatrix}$.",
        answer: "7",
        steps: &[r"$\|v\| = \sqrt{2^2 + (-6)^2 + 3^2}$.", r"$= \sqrt{4 + 36 + 9} = \sqrt{49} = 7$."],
        calc: c(1, "2^2 + (-6)^2 + 3^2", "49"),
        mistakes: &[
            m(WrongFormula, 0, r"$\|v\| = |2| + |-6| + |3| = 11$.", "11"),
            m(Arithmetic, 1, r"$= \sqrt{4 + 36 + 9} = \sqrt{59}$.", r"\sqrt{59}"),
        ],
    },
    DemoProblem {
        subject: PCA,
        level: 4,
        problem: r"Find the dot product of $\begin{pmatrix} 3 \\ -1 \\ 4 \end{pmatrix}$ and $\begin{pmatrix} 2 \\ 5 \\ -2 \end{pmatrix}$.",
        answer: "-7",
        steps: &[
            r"Multiply matching entries and add: $3 \cdot 2 + (-1) \cdot 5 + 4 \cdot (-2)$.",
            r"$= 6 - 5 - 8 = -7$.",
        ],
        calc: c(1, "3*2 + (-1)*5 + 4*(-2)", "-7"),
        mistakes: &[m(Sign, 1, r"$= 6 + 5 - 8 = 3$.", "3"), m(Arithmetic, 1, r"$= 6 - 5 - 8 = -9$.", "-9")],
    },
    DemoProblem {
        subject: PCA,
        level: 5,
        problem: r"Find all $x$ in $[0, 2\pi)$ with $2\sin^2 x = 1$. Give them as a set.",
        answer: r"\{\frac{\pi}{4},\frac{3\pi}{4},\frac{5\pi}{4},\frac{7\pi}{4}\}",
        steps: &[
            r"Dividing by $2$: $\sin^2 x = 1/2$, so $\sin x = \pm\frac{\sqrt{2}}{2}$.",
            r"$\sin x = \frac{\sqrt{2}}{2}$ at $\frac{\pi}{4}$ and $\frac{3\pi}{4}$; $\sin x = -\frac{\sqrt{2}}{2}$ at $\frac{5\pi}{4}$ and $\frac{7\pi}{4}$.",
            r"The solutions are $\{\frac{\pi}{4}, \frac{3\pi}{4}, \frac{5\pi}{4}, \frac{7\pi}{4}\}$.",
        ],
        calc: c(0, "1/2", "1/2"),
        mistakes: &[
            m(
                MissedCase,
                0,
                r"Dividing by $2$: $\sin x = \frac{\sqrt{2}}{2}$, at $\frac{\pi}{4}$ and $\frac{3\pi}{4}$.",
                r"\{\frac{\pi}{4},\frac{3\pi}{4}\}",
            ),
            m(
                WrongFormula,
                0,
                r"Dividing by $2$: $\sin x = \frac{1}{2}$, at $\frac{\pi}{6}$ and $\frac{5\pi}{6}$.",
                r"\{\frac{\pi}{6},\frac{5\pi}{6}\}",
            ),
        ],
    },
    DemoProblem {
        subject: PCA,
        level: 3,
        problem: r"Convert the point $(-2, 2\sqrt{3})$ to polar coordinates $(r,\theta)$ with $r > 0$ and $0 \le \theta < 2\pi$.",
        answer: r"\left(4,\frac{2\pi}{3}\right)",
        steps: &[
            r"$r = \sqrt{(-2)^2 + (2\sqrt{3})^2} = \sqrt{4 + 12} = 4$.",
            r"$\cos\theta = -\frac{1}{2}$ and $\sin\theta = \frac{\sqrt{3}}{2}$, so $\theta = \frac{2\pi}{3}$.",
            r"The point is $\left(4, \frac{2\pi}{3}\right)$.",
        ],
        calc: c(0, "(-2)^2 + 12", "16"),
        mistakes: &[
            m(
                Sign,
                1,
                r"$\tan\theta = -\sqrt{3}$, so $\theta = -\frac{\pi}{3}$, that is $\frac{5\pi}{3}$.",
                r"\left(4,\frac{5\pi}{3}\right)",
            ),
            m(
                Arithmetic,
                0,
                r"$r = \sqrt{(-2)^2 + (2\sqrt{3})^2} = \sqrt{4 + 6} = \sqrt{10}$.",
                r"\left(\sqrt{10},\frac{2\pi}{3}\right)",
            ),
        ],
    },
];
