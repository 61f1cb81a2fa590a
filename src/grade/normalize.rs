//! Normal forms of answers: [`clean`] (the MATH benchmark's `strip_string` rules that
//! keep spaces, so the parser can still tell `\cot x` from `\cotx`) and [`normalize`]
//! (all of `strip_string`, spaces removed: display and majority-voting keys).

/// Longer answers are left as they are (their spaces removed, by `normalize`): the
/// rules are quadratic in the worst case.
pub(crate) const MAX_NORMALIZED: usize = 10_000;

/// `\text{...}`-like wrappers whose contents are kept.
const WRAPPERS: [&str; 8] =
    ["\\textbf{", "\\textit{", "\\textrm{", "\\textnormal{", "\\text{", "\\mbox{", "\\mathrm{", "\\mathbf{"];

/// The answer with presentation removed but spaces kept: linebreaks, `\!`, `\left`/
/// `\right`, `\dfrac`/`\tfrac`, degrees, dollars, units after `\text{ `, percents,
/// `\,`/`\;`/`\quad`, `\displaystyle`, text wrappers, thousands separators and a
/// trailing period.
pub(crate) fn clean(answer: &str) -> String {
    if answer.len() > MAX_NORMALIZED {
        return answer.trim().to_string();
    }
    let mut s = answer.replace(['\n', '\r'], " ").replace("per cent", "percent");
    s = unescape_commands(&s);
    s = braced_commas(&s);
    // `10,\!080` and `11,\! 111`: a thousands separator, whatever spacing follows.
    while let Some(i) = s.find(",\\!") {
        let rest = s[i + 3..].trim_start().to_string();
        s = format!("{},{rest}", &s[..i]);
    }
    for (from, to) in [
        ("\\!", ""),
        ("\\displaystyle", ""),
        ("\\left", ""),
        ("\\right", ""),
        ("\\dfrac", "\\frac"),
        ("\\tfrac", "\\frac"),
        ("\\cfrac", "\\frac"),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("{}^\\circ", ""),
        ("\\circ", ""),
        ("\\degree", ""),
        ("°", ""),
        ("\\$", ""),
        ("$", ""),
        ("\\%", ""),
        ("%", ""),
        ("\\qquad", " "),
        ("\\quad", " "),
        ("\\,", " "),
        ("\\;", " "),
        ("\\:", " "),
        ("~", " "),
    ] {
        s = s.replace(from, to);
    }
    // "x = 1 \text{ or } x = 2": a separator of answers, not a unit.
    for (from, to) in
        [("\\text{ or }", " or "), ("\\text{or}", " or "), ("\\text{ and }", " and "), ("\\text{and}", " and ")]
    {
        s = s.replace(from, to);
    }
    // Units: everything from `\text{ ` / `\mbox{ ` (a space first) on, as MATH does.
    for unit in ["\\text{ ", "\\mbox{ "] {
        if let Some(i) = s.find(unit) {
            // Keep it when nothing precedes it (the whole answer is text).
            if !s[..i].trim().is_empty() {
                s.truncate(i);
            }
        }
    }
    s = unwrap_text(&s);
    let mut t = s.trim();
    // `\approx 11`, `≈ 11`: an approximate value stated alone is the value.
    for approx in ["\\approx", "≈"] {
        if let Some(x) = t.strip_prefix(approx).filter(|x| !x.starts_with(|c: char| c.is_ascii_alphabetic())) {
            t = x.trim_start();
        }
    }
    while let Some(x) = t.strip_suffix('.') {
        t = x.trim_end();
    }
    let t = without_unit_words(t.trim());
    match without_thousands(t) {
        Some(n) => n,
        None => t.to_string(),
    }
}

/// `\\frac{1}{2}` -> `\frac{1}{2}`: a doubled backslash before a command name of two
/// letters or more is an escaping slip (a row break before a word means nothing in an
/// answer); `\\ 3` and `\\x` stay row breaks.
fn unescape_commands(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("\\\\") {
        let after = &rest[i + 2..];
        let letters = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        out.push_str(&rest[..i]);
        out.push_str(if letters >= 2 { "\\" } else { "\\\\" });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `14{,}916` and `14 {, }916` -> `14,916`: a comma in braces is a thousands separator.
fn braced_commas(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        let inner = rest[i + 1..].trim_start();
        let Some(after) = inner.strip_prefix(',').map(str::trim_start).and_then(|x| x.strip_prefix('}')) else {
            out.push_str(&rest[..=i]);
            rest = &rest[i + 1..];
            continue;
        };
        out.push_str(rest[..i].trim_end());
        out.push(',');
        rest = after.trim_start();
    }
    out.push_str(rest);
    out
}

/// Unit words written without `\text{ }` after a number: `15 cm^2`, `864 square inches`.
pub(crate) const UNIT_WORDS: [&str; 51] = [
    "cm",
    "mm",
    "km",
    "meter",
    "meters",
    "metres",
    "in",
    "inch",
    "inches",
    "ft",
    "foot",
    "feet",
    "yd",
    "yard",
    "yards",
    "mile",
    "miles",
    "square",
    "sq",
    "cubic",
    "units",
    "unit",
    "degrees",
    "degree",
    "deg",
    "cents",
    "cent",
    "dollars",
    "dollar",
    "hours",
    "hour",
    "hrs",
    "minutes",
    "minute",
    "seconds",
    "second",
    "days",
    "day",
    "weeks",
    "years",
    "mph",
    "pounds",
    "lbs",
    "kg",
    "grams",
    "liters",
    "ways",
    "people",
    "percent",
    "percentage",
    "pct",
];

/// `15 cm^2` -> `15`: trailing unit words after a number (or a closing brace).
fn without_unit_words(s: &str) -> &str {
    let mut t = s;
    // Each round removes one word, so this ends.
    loop {
        let Some(space) = t.rfind(' ') else { return t };
        let (head, word) = (t[..space].trim_end(), &t[space + 1..]);
        let word = word.split_once('^').map_or(word, |(w, power)| {
            if power.bytes().all(|b| b.is_ascii_digit() || b == b'{' || b == b'}') {
                w
            } else {
                ""
            }
        });
        let after_number = head.ends_with(|c: char| c.is_ascii_digit() || c == '}' || c == ')');
        let head_is_unit = head.rsplit(' ').next().is_some_and(|w| UNIT_WORDS.contains(&w));
        if !(UNIT_WORDS.contains(&word.to_ascii_lowercase().as_str()) && (after_number || head_is_unit)) {
            return t;
        }
        t = head;
    }
}

/// `\text{abc}` -> `abc` for every wrapper, braces matched.
fn unwrap_text(s: &str) -> String {
    let mut s = s.to_string();
    // Each round removes one wrapper, so this ends.
    while let Some((at, cmd)) = WRAPPERS.iter().filter_map(|w| s.find(w).map(|i| (i, *w))).min() {
        let body_start = at + cmd.len();
        let Some(len) = group_len(&s[body_start..]) else {
            s.replace_range(at..body_start, "");
            continue;
        };
        let body = s[body_start..body_start + len].to_string();
        s.replace_range(at..body_start + len + 1, &body);
    }
    s
}

/// The length of a brace group's body, `text` starting just after its `{`.
pub(crate) fn group_len(text: &str) -> Option<usize> {
    let mut depth = 1usize;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `1,000`, `-12,345.5` or `1 000` without the separators; `None` for anything else
/// (`1,2`, `1, 234`, `(1,000)`).
fn without_thousands(s: &str) -> Option<String> {
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let sep = if int.contains(',') { ',' } else { ' ' };
    let groups: Vec<&str> = int.split(sep).collect();
    let ok = groups.len() >= 2
        && (1..=3).contains(&groups[0].len())
        && !groups[0].starts_with('0')
        && groups.iter().all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
        && groups[1..].iter().all(|g| g.len() == 3)
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    ok.then(|| s.replace(sep, ""))
}

/// The MATH benchmark's normal form (`strip_string` from hendrycks/math) with the
/// extra rules of [`clean`]: for display and as majority-voting keys.
pub fn normalize(answer: &str) -> String {
    normal_form(answer, true)
}

/// [`normalize`], with or without MATH's rule that drops a short name before `=`
/// (without it, `x = 5` and `y = 5` differ).
pub(crate) fn normal_form(answer: &str, drop_name: bool) -> String {
    if answer.len() > MAX_NORMALIZED {
        return answer.split_whitespace().collect();
    }
    let mut s = clean(answer);
    s = s.replace("\\\\", "\\");
    s = s.replace(" .", " 0.").replace("{.", "{0.");
    if s.starts_with('.') {
        s.insert(0, '0');
    }
    if s.starts_with("-.") {
        s.insert(1, '0');
    }
    // `x = 5` -> `5` when the left side is a name of one or two letters (MATH drops any
    // left side of two characters, which makes `7 = 11a+c` the same as `11a+c`).
    let parts: Vec<&str> = s.split('=').collect();
    let name = parts[0].trim();
    if drop_name && parts.len() == 2 && (1..=2).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphabetic()) {
        s = parts[1].to_string();
    }
    s = fix_single_arg(&s, "\\sqrt", 1);
    s.retain(|c| !c.is_whitespace());
    s = fix_single_arg(&s, "\\frac", 2);
    s = strip_trailing_zero_decimals(&s);
    s = unbrace_single(&s, "_{");
    s = unbrace_single(&s, "^{");
    if s == "0.5" {
        s = "\\frac{1}{2}".to_string();
    }
    if let Some((a, b)) = s.split_once('/') {
        let int = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
        if int(a) && int(b) {
            s = format!("\\frac{{{a}}}{{{b}}}");
        }
    }
    s
}

/// `\frac12` -> `\frac{1}{2}`, `\sqrt2` -> `\sqrt{2}`: each of the first `args`
/// arguments given as one character gets braces.
fn fix_single_arg(s: &str, cmd: &str, args: usize) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(i) = rest.find(cmd) {
        out.push_str(&rest[..i + cmd.len()]);
        rest = &rest[i + cmd.len()..];
        if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue; // another command (`\sqrtx` is not one)
        }
        for _ in 0..args {
            let trimmed = rest.trim_start();
            if let Some(body) = trimmed.strip_prefix('{') {
                match group_len(body) {
                    Some(len) => {
                        out.push_str(&trimmed[..len + 2]);
                        rest = &trimmed[len + 2..];
                    }
                    None => break,
                }
            } else if trimmed.starts_with('[') && cmd == "\\sqrt" {
                break;
            } else if let Some(c) = trimmed.chars().next().filter(|c| c.is_ascii_alphanumeric()) {
                out.push('{');
                out.push(c);
                out.push('}');
                rest = &trimmed[c.len_utf8()..];
            } else {
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `x_{1}` -> `x_1`, `2^{3}` -> `2^3`: braces around one character dropped.
fn unbrace_single(s: &str, open: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i]);
        let after = &rest[i + open.len()..];
        let mut chars = after.chars();
        match (chars.next(), chars.next()) {
            (Some(c), Some('}')) if c.is_ascii_alphanumeric() => {
                out.push_str(&open[..1]);
                out.push(c);
                rest = &after[2..];
            }
            _ => {
                out.push_str(open);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `5.0` -> `5`, `2.500` -> `2.5` for every decimal number in the string.
fn strip_trailing_zero_decimals(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !(chars[i - 1].is_ascii_digit() || chars[i - 1] == '.'));
        if !starts_number {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        let int: String = chars[i..j].iter().collect();
        if j + 1 < chars.len() && chars[j] == '.' && chars[j + 1].is_ascii_digit() {
            let mut k = j + 1;
            while k < chars.len() && chars[k].is_ascii_digit() {
                k += 1;
            }
            let frac: String = chars[j + 1..k].iter().collect();
            let frac = frac.trim_end_matches('0');
            out.push_str(&int);
            if !frac.is_empty() {
                out.push('.');
                out.push_str(frac);
            }
            i = k;
        } else {
            out.push_str(&int);
            i = j;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_math_benchmark_rules() {
        for (raw, want) in [
            ("\\dfrac{1}{2}", "\\frac{1}{2}"),
            ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})"),
            ("90^\\circ", "90"),
            ("\\$18.90", "18.9"),
            ("15\\mbox{ cm}^2", "15"),
            ("5.4 \\text{ cents}", "5.4"),
            ("50\\%", "50"),
            (".0000672", "0.0000672"),
            ("\\frac12", "\\frac{1}{2}"),
            ("\\frac 34", "\\frac{3}{4}"),
            ("\\frac9{19}", "\\frac{9}{19}"),
            ("11\\sqrt2", "11\\sqrt{2}"),
            ("3/4", "\\frac{3}{4}"),
            ("x = 5", "5"),
            ("0.5", "\\frac{1}{2}"),
            ("5.0", "5"),
            ("10,\\!080", "10080"),
            ("11,\\! 111,\\! 111,\\! 100", "11111111100"),
            ("\\$32,\\!348", "32348"),
            ("58,500", "58500"),
            ("1, 2", "1,2"),
            ("(1,000)", "(1,000)"),
            ("\\text{(B)}", "(B)"),
            ("\\text{Evelyn}", "Evelyn"),
            ("3\\,\\displaystyle\\frac{1}{2}", "3\\frac{1}{2}"),
            ("5.", "5"),
        ] {
            assert_eq!(normalize(raw), want, "normalize({raw:?})");
        }
    }
}
