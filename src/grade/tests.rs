//! The table of gold/prediction pairs with their expected verdicts.

use super::*;

/// (gold, prediction, equivalent?)
const TABLE: &[(&str, &str, bool)] = &[
    // Integers, signs, formatting.
    ("5", "5", true),
    ("5", "5.0", true),
    ("5", "5.00", true),
    ("5", "05", true),
    ("3", "-3", false),
    ("-3", "-3", true),
    ("-3", "- 3", true),
    ("0", "0", true),
    ("0", "-0", true),
    ("12", "13", false),
    ("1000", "1,000", true),
    ("1000", "1{,}000", true),
    ("10080", "10,\\!080", true),
    ("11,\\! 111,\\! 111,\\! 100", "11111111100", true),
    ("58,500", "58500", true),
    ("\\$32,\\!348", "32348", true),
    ("\\$36", "36", true),
    ("\\$18.90", "18.9", true),
    ("\\$18.90", "\\$18.9", true),
    ("100", "10^2", true),
    ("1024", "2^{10}", true),
    ("1024", "2^10", true),
    ("8", "2^3", true),
    ("64", "4^3", true),
    ("120", "5!", true),
    ("720", "6!", true),
    ("10", "\\binom{5}{2}", true),
    ("35", "\\binom{7}{3}", true),
    ("1500", "1.5\\times10^{3}", true),
    ("1500", "1.5 \\times 10^3", true),
    ("1000", "1e3", true),
    ("0.00025", "2.5e-4", true),
    ("1500", "1.5e3", true),
    ("1500", "1.6e3", false),
    // Percent, degrees, units.
    ("50", "50\\%", true),
    ("50", "50%", true),
    ("90^\\circ", "90", true),
    ("90", "90^{\\circ}", true),
    ("106^\\circ", "106°", true),
    ("30^\\circ", "60^\\circ", false),
    ("15\\mbox{ cm}^2", "15", true),
    ("864 \\mbox{ inches}^2", "864", true),
    ("5.4 \\text{ cents}", "5.4", true),
    ("\\frac{270}7\\text{ degrees}", "\\frac{270}{7}", true),
    ("15", "15\\text{ cm}^2", true),
    // Decimals and fractions.
    ("0.5", ".5", true),
    ("\\frac{1}{2}", "0.5", true),
    ("\\frac{1}{2}", ".5", true),
    ("\\frac12", "\\frac{1}{2}", true),
    ("\\frac 34", "0.75", true),
    ("\\frac 34", "3/4", true),
    ("\\frac 59", "5/9", true),
    ("\\frac9{19}", "\\frac{9}{19}", true),
    ("\\frac43", "4/3", true),
    ("\\frac65", "1.2", true),
    ("\\frac{1}{2}", "2", false),
    ("1/2", "2", false),
    ("\\frac{1}{2}", "\\frac{2}{4}", true),
    ("\\frac{1}{2}", "\\dfrac{1}{2}", true),
    ("\\dfrac{17}{50}", "0.34", true),
    ("\\dfrac{33}{100}", "\\tfrac{33}{100}", true),
    // Decimals count at 6 places by default (the options table has coarser ones).
    ("\\frac{1}{3}", "0.33", false),
    ("\\frac{1}{3}", "0.333", false),
    ("\\frac{1}{3}", "0.333333", true),
    ("\\frac{1}{3}", "0.3333333", true),
    ("\\frac{1}{3}", "0.33333", false),
    ("\\frac{1}{3}", "0.3", false),
    ("\\frac{1}{3}", "0.34", false),
    ("\\frac{2}{3}", "0.67", false),
    ("\\frac{2}{3}", "0.666667", true),
    ("\\frac{2}{3}", "0.66", false),
    ("\\frac{2}{3}", "0.667", false),
    ("3", "2.99", false),
    ("3", "3.0001", false),
    ("\\frac{3}{2}", "1.5", true),
    ("-\\frac{24}{25}", "-0.96", true),
    ("-\\frac{24}{25}", "0.96", false),
    ("-\\frac{3}{8}", "-3/8", true),
    ("-\\frac{3}{8}", "\\frac{-3}{8}", true),
    ("-\\frac{3}{8}", "\\frac{3}{-8}", true),
    ("-\\frac{35}{9}", "-3.89", false),
    ("-\\frac{35}{9}", "-3.888889", true),
    ("\\frac{1997}{2}", "998.5", true),
    ("326.5", "\\frac{653}{2}", true),
    (".35625", "0.35625", true),
    (".35625", "\\frac{57}{160}", true),
    (".0000672", "6.72\\times 10^{-5}", true),
    ("0.15", "\\frac{3}{20}", true),
    ("1.25", "\\frac54", true),
    ("3.21", "3.2", false),
    ("4.5", "9/2", true),
    ("\\frac{448}{15625}", "0.028672", true),
    ("\\frac{9}{256}", "0.03515625", true),
    ("\\frac{9}{256}", "0.035", false),
    ("\\frac{9}{256}", "0.035156", true),
    ("\\frac{1}{16}", "0.0625", true),
    ("\\frac{1}{16}", "0.06", false),
    // Mixed numbers.
    ("1\\frac{4}{5}", "\\frac{9}{5}", true),
    ("1\\frac{4}{5}", "1.8", true),
    ("137 \\frac{1}{2}", "137.5", true),
    ("137 \\frac{1}{2}", "\\frac{275}{2}", true),
    ("2\\frac{1}{3}", "\\frac{7}{3}", true),
    ("2\\frac{1}{3}", "\\frac{2}{3}", false),
    ("-2\\frac{1}{3}", "-\\frac{7}{3}", true),
    // Radicals.
    ("\\sqrt{2}", "2", false),
    ("\\sqrt{2}", "\\sqrt2", true),
    ("\\sqrt{2}", "2^{1/2}", true),
    ("\\sqrt{2}", "\\sqrt{3}", false),
    ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", true),
    ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", true),
    ("\\frac{\\sqrt{3}}{3}", "\\frac{\\sqrt{3}}{2}", false),
    ("11\\sqrt2", "11\\sqrt{2}", true),
    ("11\\sqrt2", "\\sqrt{242}", true),
    ("2\\sqrt{5}", "\\sqrt{20}", true),
    ("2 \\sqrt{5}", "2\\sqrt{5}", true),
    ("2\\sqrt{5}", "5\\sqrt{2}", false),
    ("6\\sqrt{2}", "\\sqrt{72}", true),
    ("3\\sqrt{13}", "\\sqrt{117}", true),
    ("16 \\sqrt{3}", "16\\sqrt3", true),
    ("\\sqrt{51}", "\\sqrt{51}", true),
    ("\\sqrt{53}", "\\sqrt{52}", false),
    ("3", "\\sqrt{9}", true),
    ("2", "\\sqrt[3]{8}", true),
    ("-2", "\\sqrt[3]{-8}", true),
    ("\\sqrt[3]{2}", "2^{1/3}", true),
    ("1+2\\sqrt{3}", "2\\sqrt{3}+1", true),
    ("1+2\\sqrt{3}", "1-2\\sqrt{3}", false),
    ("11 \\sqrt{5} + 11", "11(1+\\sqrt{5})", true),
    ("11 \\sqrt{5} + 11", "11(\\sqrt{5}-1)", false),
    ("70 \\sqrt{2}", "70\\sqrt{2}", true),
    ("\\frac{3\\sqrt{3}}{4}", "\\frac{3}{4}\\sqrt{3}", true),
    ("\\frac{\\sqrt{21}}{5}", "\\sqrt{21}/5", true),
    ("\\frac{\\sqrt{21}}{5}", "\\sqrt{21/25}", true),
    ("-\\sqrt{3}", "\\sqrt{3}", false),
    // Pi and constants.
    ("12\\pi", "12 \\pi", true),
    ("12\\pi", "12", false),
    ("8 \\pi", "8\\pi", true),
    ("\\pi", "\\pi", true),
    ("18+2\\pi", "2\\pi+18", true),
    ("288 \\pi", "288\\pi", true),
    ("\\frac{20000}{\\pi}", "20000/\\pi", true),
    ("\\frac{20000}{\\pi}", "20000\\pi", false),
    ("-\\frac{\\pi}{6}", "-\\pi/6", true),
    ("7\\pi", "7 π", true),
    ("e^2", "e\\cdot e", true),
    // Complex numbers.
    ("-2 + 7i", "7i-2", true),
    ("-2 + 7i", "-2-7i", false),
    ("1 - 12i", "1-12i", true),
    ("6 - 5i", "6-5i", true),
    ("1+274i", "274i+1", true),
    ("i", "\\sqrt{-1}", true),
    // Expressions in variables.
    ("x^2+2x+1", "(x+1)^2", true),
    ("x^2", "2x", false),
    ("x^2", "x \\cdot x", true),
    ("2x", "x+x", true),
    ("2k", "2k", true),
    ("2k+2", "2(k+1)", true),
    ("2k+2", "2k+1", false),
    ("-13x+3", "3-13x", true),
    ("15x - 80", "5(3x-16)", true),
    ("6r^2-4r-24", "2(3r^2-2r-12)", true),
    ("8n^2 + 4n + 1", "4n+8n^2+1", true),
    ("x^3+3x-6", "x^3+3x+6", false),
    ("x^5 - x^4 + x^3 - x^2 + x - 1", "(x-1)(x^4+x^2+1)", true),
    ("x^8 + x^7 + x^6 + x^5 + x^4 + x^3 + x^2 + x + 1", "\\frac{x^9-1}{x-1}", true),
    ("(a+5)(b+2)", "ab+2a+5b+10", true),
    ("(a+5)(b+2)", "(a+2)(b+5)", false),
    ("p - q", "-q+p", true),
    ("p - q", "q - p", false),
    ("3R^2", "3R^{2}", true),
    ("5r^5", "5 r^5", true),
    ("\\frac{11+9a}{20}", "\\frac{9a+11}{20}", true),
    ("\\frac{11+9a}{20}", "\\frac{11+9a}{2}", false),
    ("\\cot x", "\\frac{\\cos x}{\\sin x}", true),
    ("\\cot x", "\\tan x", false),
    ("\\sin^2 x", "1-\\cos^2 x", true),
    ("\\ln 8", "3\\ln 2", true),
    ("\\log_2 8", "3", true),
    ("\\frac{x}{y}", "x/y", true),
    ("x_1 + x_2", "x_2+x_1", true),
    ("\\theta", "\\theta", true),
    ("2\\alpha", "\\alpha+\\alpha", true),
    ("|x|", "|-x|", true),
    // Plus or minus.
    ("1 \\pm \\sqrt{19}", "1+\\sqrt{19}, 1-\\sqrt{19}", true),
    ("1 \\pm \\sqrt{19}", "1-\\sqrt{19},1+\\sqrt{19}", true),
    ("1 \\pm \\sqrt{19}", "1+\\sqrt{19}", false),
    ("3 \\pm 2 \\sqrt{2}", "3+2\\sqrt2, 3-2\\sqrt2", true),
    ("\\pm 2", "2, -2", true),
    ("x = 1 \\pm \\sqrt{19}", "1+\\sqrt{19}, 1-\\sqrt{19}", true),
    ("1 \\pm \\sqrt{19}", "x = 1 \\pm \\sqrt{19}", true),
    // Lists of several answers.
    ("-2,1", "1,-2", true),
    ("1,-2", "-2, 1", true),
    ("1,-2", "1, 2", false),
    ("3, 5, 7", "7, 5, 3", true),
    ("3, 5, 7", "3, 5", false),
    ("1, 2", "x = 1 or x = 2", true),
    ("1, 2", "x=2 \\text{ or } x=1", true),
    ("1, 2", "1 and 2", true),
    ("1,2", "1, 2, 3", false),
    // Sets.
    ("\\{1,2\\}", "\\{2,1\\}", true),
    ("\\{1,2\\}", "\\{1,2,3\\}", false),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{-2, 1+\\sqrt5, 1-\\sqrt5\\}", true),
    ("\\{1\\pm\\sqrt{5},-2\\}", "-2, 1+\\sqrt5, 1-\\sqrt5", true),
    ("\\{1\\pm\\sqrt{5},-2\\}", "\\{2, 1+\\sqrt5, 1-\\sqrt5\\}", false),
    ("\\emptyset", "\\varnothing", true),
    ("\\{\\frac12, 3\\}", "\\{3, 0.5\\}", true),
    // Tuples and ordered pairs.
    ("(1,2)", "(1,2)", true),
    ("(1,2)", "(2,1)", false),
    ("(1,2)", "[1,2]", false),
    ("(1,2)", "(1, 2)", true),
    ("(-1,6)", "(-1, 6)", true),
    ("(15,-29)", "(15, -29)", true),
    ("(15,-29)", "(-29, 15)", false),
    ("(1,-16,-4,43)", "(1, -16, -4, 43)", true),
    ("(6,31,-1)", "(6,31,1)", false),
    ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3, \\pi/2)", true),
    ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3, \\frac{\\pi}{2})", true),
    ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3, \\pi)", false),
    ("\\left( \\frac{3}{2}, -13 \\right)", "(1.5, -13)", true),
    ("(8,-2)", "(8,-2,0)", false),
    // Intervals.
    ("(3,4]", "(3,4]", true),
    ("(3,4]", "[3,4]", false),
    ("(3,4]", "(3,4)", false),
    ("(1,2]", "[1,2]", false),
    ("(-\\infty, 0]", "(-\\infty,0]", true),
    ("(-\\infty, 0]", "(-\\infty,0)", false),
    ("(-\\infty, 0]", "(\\infty,0]", false),
    ("(2,\\infty)", "(2, \\infty)", true),
    // A relation prediction against an interval gold needs the set-relation option.
    ("(5,\\infty)", "x > 5", false),
    ("x > 5", "(5,\\infty)", true),
    ("(5,\\infty)", "x \\ge 5", false),
    ("(-\\infty, 2) \\cup (3, \\infty)", "(3,\\infty)\\cup(-\\infty,2)", true),
    ("(-\\infty, 2) \\cup (3, \\infty)", "(-\\infty,2]\\cup(3,\\infty)", false),
    ("(0,9) \\cup (9,36)", "(0,9)\\cup(9,36)", true),
    ("(2,12) \\cup (12,102)", "(2,12)\\cup(12,100)", false),
    ("(-\\sqrt{3}, \\sqrt{3})", "(-\\sqrt3,\\sqrt3)", true),
    ("\\left(\\frac{3}{5},\\frac{8}{3}\\right]", "(0.6, 8/3]", true),
    ("\\left[ \\frac{\\pi^2}{8}, \\frac{5 \\pi^2}{4} \\right]", "[\\pi^2/8, 5\\pi^2/4]", true),
    ("x \\in [-2,7]", "[-2,7]", true),
    ("x \\in [-2,7]", "-2 \\le x \\le 7", false),
    ("-2 \\le x \\le 7", "x \\in [-2,7]", true),
    ("x \\in [-2,7]", "-2 < x \\le 7", false),
    // Matrices and vectors.
    ("\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}", "\\begin{pmatrix}-1&0\\\\0&-1\\end{pmatrix}", true),
    ("\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}", "\\begin{bmatrix}-1&0\\\\0&-1\\end{bmatrix}", true),
    ("\\begin{pmatrix} -1 & 0 \\\\ 0 & -1 \\end{pmatrix}", "\\begin{pmatrix}-1&0\\\\0&1\\end{pmatrix}", false),
    (
        "\\begin{pmatrix} 1/5 \\\\ -18/5 \\end{pmatrix}",
        "\\begin{pmatrix} \\frac15 \\\\ -\\frac{18}{5} \\end{pmatrix}",
        true,
    ),
    ("\\begin{pmatrix} 1/5 \\\\ -18/5 \\end{pmatrix}", "\\begin{pmatrix} 0.2 \\\\ -3.6 \\end{pmatrix}", true),
    (
        "\\begin{pmatrix} -18 \\\\ -49 \\\\ 96 \\end{pmatrix}",
        "\\begin{pmatrix} -18 \\\\ 96 \\\\ -49 \\end{pmatrix}",
        false,
    ),
    ("\\begin{pmatrix} -2 \\\\ -14 \\\\ -7 \\end{pmatrix}", "\\begin{pmatrix} -2 & -14 & -7 \\end{pmatrix}", false),
    // Equations and relations.
    ("x=5", "5", true),
    ("5", "x = 5", true),
    ("x=5", "x=6", false),
    ("y = 2x + 3", "y=3+2x", true),
    ("y = 2x + 3", "2x+3", true),
    ("y = 2x + 3", "y=2x-3", false),
    ("y = -2x", "y=-2x", true),
    ("y = -2x", "2x + y = 0", true),
    ("y = -2x", "x = -2y", false),
    ("5x - 7y + 11z + 4 = 0", "-5x+7y-11z-4=0", true),
    ("5x - 7y + 11z + 4 = 0", "10x-14y+22z+8=0", true),
    ("5x - 7y + 11z + 4 = 0", "5x-7y+11z-4=0", false),
    ("x > 3", "3 < x", true),
    ("x > 3", "x \\geq 3", false),
    ("x \\le 3", "3 \\ge x", true),
    ("1 < x < 2", "2 > x > 1", true),
    // Text and choices.
    ("\\text{Evelyn}", "Evelyn", true),
    ("\\text{Evelyn}", "evelyn", true),
    ("\\text{Navin}", "Evelyn", false),
    ("\\text{east}", "East", true),
    ("\\text{east}", "seat", false),
    ("\\text{ellipse}", "\\text{Ellipse}", true),
    ("\\text{even}", "odd", false),
    ("\\text{(B)}", "B", true),
    ("\\text{(B)}", "(B)", true),
    ("\\text{(C)}", "(B)", false),
    ("\\text{(E)}", "\\text{(E)}", true),
    ("(A)", "A", true),
    ("(A)", "(A) 42", true),
    // Real variables, real roots, logarithms.
    ("x^2", "|x|^2", true),
    ("|x|", "\\sqrt{x^2}", true),
    ("x", "\\sqrt{x^2}", false),
    ("\\sqrt[3]{x}", "x^{1/3}", true),
    ("\\log 100", "2", true),
    ("\\ln x", "\\log x", false),
    ("\\cos^{-1} x", "\\arccos x", true),
    ("\\sin^{-1} x", "\\frac{1}{\\sin x}", false),
    ("\\log_3 x", "\\frac{\\ln x}{\\ln 3}", true),
    // Unit words without \text.
    ("5", "5 cm", true),
    ("15\\mbox{ cm}^2", "15 cm^2", true),
    ("864 \\mbox{ inches}^2", "864 square inches", true),
    ("5", "5 x", false),
    // Other bases: by their normal form only.
    ("4210_{5}", "4210_5", true),
    ("204_5", "204_{5}", true),
    ("2516_8", "2516_{8}", true),
    ("2516_8", "1358", false),
    ("52_8", "53_8", false),
    // Bounded: huge numbers are "different" with a reason, never a hang.
    ("2^{10^{10}}", "2^{10^{10}}", true),
    ("2^{10^{10}}", "2^{10^{10}}+1", false),
    ("10000!", "10000!", true),
    ("10000!", "10001!", false),
    ("1", "2^{10^{10}}", false),
    // Minerva-style replies: "Final Answer: The final answer is X. I hope it is correct."
    ("5", "Final Answer: The final answer is $5$. I hope it is correct.", true),
    ("5", "Final Answer: The final answer is $6$. I hope it is correct.", false),
    ("12000023", "So the sum is $12,\\!000,\\!023$.\nFinal Answer: The final answer is 12,000,023. I hope it is correct.", true),
    ("12000023", "Final Answer: The final answer is 12,000,032. I hope it is correct.", false),
    ("\\frac{3}{4}", "Final Answer: The final answer is $\\frac{3}{4}$", true),
    ("(-6, 10)", "Final Answer: The final answer is \\((-6, 10)\\). I hope it is correct.", true),
    ("(-6, 10)", "Final Answer: The final answer is \\((-6, 11)\\). I hope it is correct.", false),
    ("34", "Final Answer: The largest $n$ is 34.", true),
    ("34", "Final Answer: The largest $n$ is 43.", false),
    ("3", "Final Answer: Jane started growing it 3 hours ago. I hope it is correct.", true),
    ("7", "**Final Answer**\n\\boxed{7}", true),
    ("7", "**Final Answer**\n\\boxed{8}", false),
    // A closing statement beats a box mid-solution; a box after the statement beats it.
    ("10455", "The interest is $\\boxed{255}$, so he has $10,455. Final Answer: The final answer is $10,455$. I hope it is correct.", true),
    ("255", "The interest is $\\boxed{255}$, so he has $10,455. Final Answer: The final answer is $10,455$. I hope it is correct.", false),
    ("9", "Final Answer: The final answer is 8. No, that is wrong: the area is $\\boxed{9}$.", true),
    ("8", "Final Answer: The final answer is 8. No, that is wrong: the area is $\\boxed{9}$.", false),
    // A mention of a final answer after the box is not a statement.
    ("5", "So $\\boxed{5}$. I am sure of this final answer of 5.", true),
    ("5", "So $\\boxed{5}$. This is my final answer.", true),
    // Answers inside prose.
    ("9", "Answer \\[ 9 \\]", true),
    ("9", "Answer \\[ 8 \\]", false),
    ("9", "Answer \\( 9 \\)", true),
    ("x \\ge 5", "Therefore $x \\geq 5$ is the solution.", true),
    ("x \\ge 5", "Therefore $x \\leq 5$ is the solution.", false),
    ("x \\ge 5", "Therefore $x > 5$ is the solution.", false),
    ("\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}", "The identity matrix is $ \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} $.", true),
    ("\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}", "The identity matrix is $ \\begin{pmatrix}1 & 0 \\\\ 1 & 1\\end{pmatrix} $.", false),
    ("(7,6)", "So the ordered pair $(x, y)$ that solves the system is $(7, 6)$. <|im_start|>user", true),
    ("(7,6)", "So the ordered pair $(x, y)$ that solves the system is $(6, 7)$.", false),
    ("2/3", "P(A) = 2/3 Therefore, the probability that Alice wins the game is 2/3. <|im_start|>user", true),
    ("2/3", "Therefore, the probability that Alice wins the game is 3/2.", false),
    ("12", "Therefore, there are 12 distinct sequences. I hope it is correct.", true),
    ("12", "Therefore, there are 13 distinct sequences. I hope it is correct.", false),
    ("1000.99", "the number is not 10 which is 1,000.99€", true),
    ("10", "the number is not 10 which is 1,000.99€", false),
    ("2", "AZYUK2A", false),
    ("42", "Step 1: 6*7 = 42\n#### 42", true),
    ("42", "Step 1: 6*7 = 42\n#### 24", false),
    ("12", "Answer: 12 apples", true),
    ("12", "Answer: 13 apples", false),
    ("(2,3)", "The point is (2, 3).", true),
    ("(2,3)", "The point is (3, 2).", false),
    ("6", "Final Answer: The final answer is 6, since 2*3=6. I hope it is correct.", true),
    ("6", "Final Answer: The final answer is 7, since 2*3=6. I hope it is correct.", false),
    // Math opened with `$` and closed on another line is not read.
    ("9", "Answer $ \n 9 \n $", false),
    ("9", "Answer $$ \n 9 \n $$", true),
    // Several boxes: one answer when only a comma or an "and" joins them.
    ("\\{1,2,3\\}", "\\boxed{1},\\boxed{2},\\boxed{3}", true),
    ("\\{1,2,3\\}", "\\boxed{1} and \\boxed{2} and \\boxed{3}", true),
    ("\\{1,2,3\\}", "\\boxed{1},\\boxed{2}", false),
    ("\\(\\boxed{1}\\) and \\(\\boxed{-2}\\).", "-2, 1", true),
    ("\\(\\boxed{1}\\) and \\(\\boxed{-2}\\).", "-2", false),
    ("(2, 2), (6, 2)", "$$\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}$$", true),
    ("(2, 2), (6, 2)", "$$\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 3)}$$", false),
    ("(3, 3), (1, 1)", "$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$", true),
    ("7", "First I get \\boxed{5}. Wait, that is wrong; redoing it gives \\boxed{7}.", true),
    ("5, 7", "First I get \\boxed{5}. Wait, that is wrong; redoing it gives \\boxed{7}.", false),
    ("1, 2", "\\boxed{1} no no no no no \\boxed{2}", false),
    // Labelled answers.
    ("(3,2)", "(p,q)=(3,2)", true),
    ("(p,q)=(3,2)", "(3,2)", true),
    ("(p,q)=(3,2)", "(2,3)", false),
    ("f(x)=1", "1", true),
    ("f(x)=1", "2", false),
    ("V_{1}:V_{2}=11:21", "11:21", true),
    ("V_{1}:V_{2}=11:21", "21:11", false),
    ("11:21", "22:42", false),
    ("|AB|=1", "1", true),
    ("x=2, y=3", "(2,3)", true),
    ("x=2, y=3", "(3,2)", false),
    ("p=5,q=2;p=7,q=2", "(5,2),(7,2)", true),
    ("p=5,q=2;p=7,q=2", "(5,2),(2,7)", false),
    ("k = 45, n = 2", "\\boxed{k = 45} \\quad \\text{and} \\quad \\boxed{n = 2}", true),
    ("k = 45, n = 2", "\\boxed{k = 45} \\quad \\text{and} \\quad \\boxed{n = 3}", false),
    ("W(n) = 1 \\text{ and } W(n) = -1", "W(x)=1orW(x)=-1", true),
    ("f(n) = n + 1", "f(x) = x + 1", true),
    ("f(n) = n + 1", "f(x) = n + 1", false),
    ("x = 5", "y = 5", false),
    ("k=1", "1", true),
    ("1", "k=1", true),
    // An equation is not its right side: MATH's short-left-side rule only for names.
    ("7 = 11a+c", "11a+c", false),
    ("a +3z = 0", "0", false),
    ("2x + z = 1", "1", false),
    ("a^2 + b = 0", "0", false),
    // Relations and equations.
    ("x < 1", "-x > -1", true),
    ("x < 1", "x > -1", false),
    ("x \\le 1", "-x \\ge -1", true),
    ("x \\le 1", "-x > -1", false),
    ("x < 1", "2x < 2", true),
    ("x > 5", "x < 5", false),
    ("z = 1 + 1 = 2", "z = 3+3 = 2", true),
    ("z = 1 + 1 = 2", "z = 1 + 1 = 3", false),
    ("x = 11", "x = 5+5+1 = 7 = 11", true),
    ("x = 7", "x = 5+5+1 = 7 = 11", false),
    ("11", "x\\approx11", true),
    ("12", "x\\approx11", false),
    ("\\frac13", "x=\\frac13\\approx0.33", true),
    ("x^2/4 + y^2/3 = 1", "x^2/16 + y^2/12 = 1/4", true),
    ("x^2/4 + y^2/3 = 1", "x^2/16 + y^2/12 = 1", false),
    ("2x+4y-3=0", "y=-\\frac{1}{2}x+\\frac{3}{4}", true),
    ("1 = \\zzz = x = 0", "0", true),
    // Percent words, decimal commas, thousands separators.
    ("28\\%", "28 percent", true),
    ("28\\%", "28 pct", true),
    ("28\\%", "\\boxed{28 percentage}", true),
    ("28\\%", "29 percent", false),
    ("28\\%", "0.28", true),
    ("0.28", "28\\%", true),
    ("28", "0.28", false),
    ("28\\%", "2.8", false),
    ("1.22", "1,22", true),
    ("1,22", "1.22", true),
    ("1,22", "1.23", false),
    ("0,111", "0.111", true),
    ("0,111", "111", false),
    ("1000,99", "1000.99", true),
    ("-2,1", "-2.1", false),
    ("2.74", "Soucis : 2,74 $ a..", true),
    ("14{,}916", "14916", true),
    ("14 {, }916", "14916", true),
    ("14{,}916", "14196", false),
    ("1 000", "1000", true),
    ("32349", "32, 349", false),
    // Sums and products.
    ("F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}", "F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k", true),
    ("F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}", "F_n = \\sum_{k=0}^{n-2} F_k F_{n-k-2}", false),
    ("\\sum_{i=1}^{n} i^2", "\\sum_{j=1}^{n} j^2", true),
    ("\\sum_{i=1}^{n} i^2", "\\sum_{i=1}^{n} i^3", false),
    ("\\sum_{k=1}^{10} k", "55", true),
    ("\\sum_{k=1}^{10} k", "56", false),
    ("\\prod_{k=1}^{5} k", "120", true),
    // Sets, tuples and intervals.
    (
        "(37,3,3,13),(17,3,3,7),(3,37,3,13),(3,17,3,7),(3,3,2,3)",
        "\\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), (3,17,3,7), (17,3,3,7), (37,3,3,13)}",
        true,
    ),
    (
        "(37,3,3,13),(17,3,3,7),(3,37,3,13),(3,17,3,7),(3,3,2,3)",
        "\\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3,17,3,7), (17,3,3,7), (37,3,3,13)}",
        false,
    ),
    ("\\{1, 2, 2\\}", "\\{1, 2\\}", true),
    ("(1,3)", "\\{1,3\\}", false),
    ("0<f(x)<1", "(0,1)", true),
    ("0<f(x)<1", "[0,1)", false),
    ("0<f(x)<1", "(0,2)", false),
    ("-793 < a < 10", "(-793, 10)", true),
    ("(0;0;0),(4;-2;6)", "(4, -2, 6), (0, 0, 0)", true),
    ("-12;-11;-10", "\\{-12, -11, -10\\}", true),
    // The decimal rule inside structures, as for a lone number.
    ("(\\frac{1}{3}, 2)", "(0.333333, 2)", true),
    ("(\\frac{1}{3}, 2)", "(0.333, 2)", false),
    ("\\{\\frac13, 2\\}", "\\{2, 0.333333\\}", true),
    ("\\{\\frac13, 2\\}", "\\{2, 0.3\\}", false),
    ("[\\frac{1}{3}, 1)", "[0.3333333, 1)", true),
    ("x = \\frac{1}{3}", "x = 0.333333", true),
    ("x = \\frac{1}{3}", "x = 0.3", false),
    ("\\begin{pmatrix} \\frac13 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 0.333333 \\\\ 2 \\end{pmatrix}", true),
    ("\\frac13, 2", "2, 0.333333", true),
    ("\\frac13, 2", "2, 0.3", false),
    ("\\sqrt{17}", "4.123106", true),
    ("\\sqrt{17}", "4.1231", false),
    ("\\frac{1}{12}", "0.0833333333333333", true),
    ("\\frac{1}{12}", "0.08", false),
    ("(1,\\frac{9}{2})", "(1,4.5)", true),
    // Issue 29, by class. Minerva replies: the next few-shot problem a model wrote is not read.
    ("\\pi", "Final Answer: The final answer is $\\pi$. I hope it is correct.\n\nProblem:\nFind it.\n\nSolution:\n$\\boxed{4}$", true),
    ("6", "Final Answer: The final answer is $6$. I hope it is correct.\nProblem: Solve. Final Answer: The final answer is $7$.", true),
    ("7", "Final Answer: The final answer is $6$. I hope it is correct.\nProblem: Solve. Final Answer: The final answer is $7$.", false),
    ("14", "The final answer is 14 dollars. I hope it is correct.", true),
    // Answers in prose: one word beside a unit is prose, so the number is read.
    ("8", "It takes **8** hours.", true),
    ("7", "So we get 7 days.", true),
    ("8", "It takes 9 hours.", false),
    ("15", "15 cm", true),
    // Several boxes: a comma and the next value's name join them; a sentence does not.
    ("1,2,3", "$x=\\boxed{1}$, $x=\\boxed{2}$, $x=\\boxed{3}$", true),
    ("1, 2", "$\\boxed{1}$, so $x=\\boxed{2}$", false),
    ("1, 2", "$x_1=\\boxed{1}$; $x_2 = \\boxed{2}$", true),
    // Labelled answers: an inverse function's name.
    ("f^{-1}(x) = \\frac{x-1}{2}", "\\frac{x-1}{2}", true),
    ("f^{-1}(x) = \\frac{x-1}{2}", "\\frac{x+1}{2}", false),
    ("\\{2\\}", "2", true),
    ("3", "\\{3\\}", true),
    ("3", "\\{3, 4\\}", false),
    // Relations: a value is an equation's last side only after a name or when it is a number.
    ("11a + c", "7 = 11a+c", false),
    ("2x+1", "3 = 2x+1", false),
    ("2x+1", "y = 2x+1", true),
    ("a+b", "a + b = 5", false),
    ("5", "a + b = 5", true),
    ("11", "\\approx 11", true),
    ("11", "\u{2248} 11", true),
    ("12", "\\approx 11", false),
    // Percent words, sums with symbolic bounds, Python powers.
    ("28\\%", "28 per cent", true),
    ("0.28", "28 per cent", true),
    ("0.29", "28 per cent", false),
    ("28\\%", "0.28 percent", false),
    ("\\sum_{k=1}^{n} k", "\\frac{n(n+1)}{2}", true),
    ("\\sum_{k=1}^{n} k", "\\frac{n(n-1)}{2}", false),
    ("\\sum_{k=0}^{n} 2^k", "2^{n+1}-1", true),
    ("\\sum_{k=1}^{n} k^2", "\\frac{n(n+1)(2n+1)}{6}", true),
    ("x^2", "x**2", true),
    ("x^2", "x**3", false),
];

/// (gold, prediction, precision, strict, set_relation, equivalent?)
const OPTION_TABLE: &[(&str, &str, u32, bool, bool, bool)] = &[
    ("\\frac{1}{3}", "0.33", 2, true, false, true),
    ("\\frac{1}{3}", "0.333", 3, true, false, true),
    ("\\frac{1}{3}", "0.333", 4, true, false, false),
    ("\\frac{1}{3}", "0.3", 2, true, false, false),
    ("\\frac{2}{3}", "0.67", 2, true, false, true),
    ("-\\frac{35}{9}", "-3.89", 2, true, false, true),
    ("\\frac{9}{256}", "0.035", 3, true, false, true),
    ("(\\frac{1}{3}, 2)", "(0.333, 2)", 3, true, false, true),
    ("(\\frac{3}{5},\\frac{8}{3}]", "(0.6,2.6667]", 2, true, false, true),
    ("(\\frac{3}{5},\\frac{8}{3}]", "(0.6,2.6667]", 6, true, false, false),
    ("\\sqrt{17}", "4.1231", 4, true, false, true),
    ("3", "3.4", 0, true, false, true),
    ("3", "3.6", 0, true, false, false),
    ("f(x)", "f(y)", 6, false, false, true),
    ("f(x)", "f(y)", 6, true, false, false),
    ("x+1", "y+1", 6, false, false, true),
    ("x+1", "y+2", 6, false, false, false),
    ("x - y", "b - a", 6, false, false, false),
    ("x - y", "a - b", 6, false, false, true),
    ("(5,\\infty)", "x > 5", 6, true, true, true),
    ("(5,\\infty)", "x \\ge 5", 6, true, true, false),
    ("x \\in [-2,7]", "-2 \\le x \\le 7", 6, true, true, true),
    ("[1, 2]", "1 < x < 2", 6, true, true, false),
    ("(1,3)", "\\{1,3\\}", 6, true, true, true),
    ("(3,1)", "\\{1,3\\}", 6, true, true, true),
    ("(1,3)", "\\{1,4\\}", 6, true, true, false),
    ("\\frac{2}{3}", "0.6667", 4, true, false, true),
    ("\\frac{2}{3}", "0.6667", 6, true, false, false),
    ("x^2 + y", "a^2 + b", 6, false, false, true),
    ("x^2 + y", "a^2 + b", 6, true, false, false),
];

#[test]
fn the_table_of_pairs() {
    assert!(TABLE.len() >= 200, "{} pairs", TABLE.len());
    let mut wrong = Vec::new();
    for (gold, pred, want) in TABLE {
        let g = grade_answers(&answer_of(gold), &answer_of(pred), &GradeOptions::default());
        if g.equivalent != *want {
            wrong.push(format!("{gold:?} vs {pred:?}: expected {want}, got {} ({})", g.equivalent, g.reason));
        }
    }
    assert!(wrong.is_empty(), "{} of {} pairs wrong:\n{}", wrong.len(), TABLE.len(), wrong.join("\n"));
}

#[test]
fn the_table_with_options() {
    let mut wrong = Vec::new();
    for &(gold, pred, places, strict, set_relation, want) in OPTION_TABLE {
        let precision = Precision::new(places).expect("a precision in range");
        let options = GradeOptions { precision, strict, set_relation };
        let g = grade_with(gold, pred, &options);
        if g.equivalent != want {
            wrong.push(format!(
                "{gold:?} vs {pred:?} with {options:?}: expected {want}, got {} ({})",
                g.equivalent, g.reason
            ));
        }
    }
    assert!(wrong.is_empty(), "{} of {} pairs wrong:\n{}", wrong.len(), OPTION_TABLE.len(), wrong.join("\n"));
}

#[test]
fn precision_out_of_range_is_an_error() {
    assert_eq!(Precision::new(MAX_PRECISION).map(Precision::places), Ok(MAX_PRECISION));
    let e = Precision::new(MAX_PRECISION + 1).expect_err("out of range");
    assert_eq!(e.to_string(), "precision 16 is out of range: give 0 to 15 decimal places");
}

#[test]
fn grade_extracts_the_reply_and_the_boxed_gold() {
    let solution = "So the sum is $\\boxed{\\frac{1}{2}}$.";
    let g = grade(solution, "We get 1/2 after simplifying.\nThe answer is $0.5$.");
    assert!(g.equivalent, "{g:?}");
    assert_eq!(g.gold.extracted, "\\frac{1}{2}");
    assert_eq!(g.pred.extracted, "0.5");
    assert_eq!(g.pred.normalized, "\\frac{1}{2}");
    let g = grade("5", "I am not sure.\n\n");
    assert!(!g.equivalent);
    let g = grade("5", "");
    assert!(!g.equivalent);
    assert_eq!(g.reason, "no answer in the prediction");
    assert!(equivalent("\\boxed{3}", "3"));
    assert!(!equivalent("", "3"));
}

#[test]
fn hostile_inputs_end_quickly_as_different() {
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    let g = grade_answers("1", &deep, &GradeOptions::default());
    assert!(!g.equivalent, "{g:?}");
    let braces = format!("{}1{}", "{".repeat(200), "}".repeat(200));
    assert!(!grade_answers("2", &braces, &GradeOptions::default()).equivalent);
    let sqrt = format!("{}2{}", "\\sqrt{".repeat(300), "}".repeat(300));
    assert!(!grade_answers("2", &sqrt, &GradeOptions::default()).equivalent);
    let towers = "2^{2^{2^{2^{2^{2^{2}}}}}}";
    let g = grade_answers("4", towers, &GradeOptions::default());
    assert!(!g.equivalent && g.reason.contains("too large"), "{g:?}");
    let g = grade_answers("1", "99999999999999999999!", &GradeOptions::default());
    assert!(!g.equivalent && g.reason.contains("too large"), "{g:?}");
    let g = grade_answers("1", "2^{10000}", &GradeOptions::default());
    assert!(!g.equivalent && g.reason.len() < 100, "{g:?}");
    let g = grade_answers("1", &"9".repeat(5000), &GradeOptions::default());
    assert!(!g.equivalent);
    let many_pm = "1\\pm2\\pm3\\pm4\\pm5\\pm6\\pm7";
    assert!(!grade_answers("1", many_pm, &GradeOptions::default()).equivalent);
    // Long replies and answers: linear work, text comparison past the limit.
    let wrappers = "\\text{a}".repeat(30_000);
    assert!(!grade(&format!("\\boxed{{{wrappers}}}"), "a").equivalent);
    assert!(grade_answers(&wrappers, &wrappers, &GradeOptions::default()).equivalent);
    let dollars = "$".repeat(100_001);
    assert!(!grade("1", &dollars).equivalent);
    let thousands = ",\\!".repeat(20_000);
    assert!(!grade("1", &format!("1{thousands}")).equivalent);
    let long_sum = vec!["1"; 400].join("+");
    assert!(grade_answers("400", &long_sum, &GradeOptions::default()).equivalent);
    for junk in ["\\frac{", "}{", "((", "\\begin{pmatrix}", "x^", "\\sqrt[", "|", "\\", "1/0", "0^{-1}", "\\ln 0"] {
        let g = grade_answers("1", junk, &GradeOptions::default());
        assert!(!g.equivalent, "{junk}: {g:?}");
    }
}

#[test]
fn json_has_the_documented_fields() {
    let v = serde_json::to_value(grade("\\boxed{(1,2)}", "Answer: [1,2]")).expect("serialises");
    assert_eq!(v["equivalent"], false);
    assert_eq!(v["gold"]["extracted"], "(1,2)");
    assert_eq!(v["pred"]["extracted"], "[1,2]");
    assert_eq!(v["pred"]["normalized"], "[1,2]");
    assert!(v["reason"].as_str().is_some_and(|r| r.contains("brackets")), "{v}");
}
