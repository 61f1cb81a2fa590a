//! The quality–cost chart of `bench compare`: success against tokens per problem, with
//! the methods on the frontier (those no other method beats on both) joined up. Drawn
//! as text for the terminal, and as SVG (plotters' SVG backend) for a file.

use plotters::prelude::*;

/// One method on the chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    pub(crate) label: String,
    /// Tokens (prompt and completion) per problem.
    pub(crate) tokens: f64,
    /// Share of problems solved, 0 to 1.
    pub(crate) success: f64,
}

/// The indices of the Pareto-optimal points — no other point has at most as many tokens
/// and at least as much success with one of them strictly better — cheapest first.
pub(crate) fn frontier(points: &[Point]) -> Vec<usize> {
    let dominated = |p: &Point| {
        points
            .iter()
            .any(|q| q.tokens <= p.tokens && q.success >= p.success && (q.tokens < p.tokens || q.success > p.success))
    };
    let mut on: Vec<usize> = (0..points.len()).filter(|&i| !dominated(&points[i])).collect();
    on.sort_by(|&a, &b| {
        points[a].tokens.total_cmp(&points[b].tokens).then(points[b].success.total_cmp(&points[a].success))
    });
    on
}

/// The marker of the `i`th point in the text chart: 1–9, then a–z.
pub(crate) fn marker(i: usize) -> char {
    match i {
        0..=8 => char::from(b'1' + i as u8),
        9..=34 => char::from(b'a' + (i - 9) as u8),
        _ => '?',
    }
}

/// Tokens spread over a decade or more are drawn on a log scale.
fn log_scale(points: &[Point]) -> bool {
    let (lo, hi) = token_range(points);
    lo > 0.0 && hi / lo >= 10.0
}

fn token_range(points: &[Point]) -> (f64, f64) {
    let lo = points.iter().map(|p| p.tokens).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.tokens).fold(f64::NEG_INFINITY, f64::max);
    if points.is_empty() {
        (0.0, 1.0)
    } else {
        (lo, hi)
    }
}

/// `1234` as `1.2k`, `56789` as `57k`.
pub(crate) fn short(x: f64) -> String {
    match x {
        x if x >= 1e6 => format!("{:.1}M", x / 1e6),
        x if x >= 1e4 => format!("{:.0}k", x / 1e3),
        x if x >= 1e3 => format!("{:.1}k", x / 1e3),
        x => format!("{x:.0}"),
    }
}

const WIDTH: usize = 60;
/// Rows of the plot: 5 percentage points a row.
const HEIGHT: usize = 21;

/// The chart as lines of text: a plot of markers (joined by dots along the frontier),
/// its axes, and a legend naming each marker.
pub(crate) fn text_chart(points: &[Point]) -> String {
    let log = log_scale(points);
    let (lo, hi) = token_range(points);
    let f = |x: f64| if log { x.log10() } else { x };
    // A little room on each side, so no marker sits on an axis.
    let (a, b) = (f(lo), f(hi));
    let pad = if b > a { (b - a) * 0.05 } else { 1.0 };
    let (a, b) = (a - pad, b + pad);
    let col = |x: f64| (((f(x) - a) / (b - a)) * (WIDTH - 1) as f64).round().clamp(0.0, (WIDTH - 1) as f64) as usize;
    let row = |y: f64| ((1.0 - y.clamp(0.0, 1.0)) * (HEIGHT - 1) as f64).round() as usize;
    let mut grid = vec![vec![' '; WIDTH]; HEIGHT];
    let on = frontier(points);
    for pair in on.windows(2) {
        let (p, q) = (&points[pair[0]], &points[pair[1]]);
        let (c0, r0, c1, r1) =
            (col(p.tokens) as f64, row(p.success) as f64, col(q.tokens) as f64, row(q.success) as f64);
        let steps = (c1 - c0).abs().max((r1 - r0).abs()).max(1.0) as usize;
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (c, r) = ((c0 + t * (c1 - c0)).round() as usize, (r0 + t * (r1 - r0)).round() as usize);
            grid[r][c] = '.';
        }
    }
    for (i, p) in points.iter().enumerate() {
        let cell = &mut grid[row(p.success)][col(p.tokens)];
        // Two methods in one cell: the legend tells them apart.
        *cell = if cell.is_ascii_alphanumeric() { '*' } else { marker(i) };
    }
    let mut out = String::new();
    out.push_str("success\n");
    for (r, line) in grid.iter().enumerate() {
        // A label every quarter: 100%, 75%, 50%, 25%, 0%.
        let label =
            if (4 * r) % (HEIGHT - 1) == 0 { format!("{}%", 100 - 100 * r / (HEIGHT - 1)) } else { String::new() };
        let text: String = line.iter().collect();
        out.push_str(&format!("{label:>5} |{}\n", text.trim_end()));
    }
    out.push_str(&format!("{:>5} +{}\n", "", "-".repeat(WIDTH)));
    // Tick labels at both ends of the data and halfway (geometric on a log scale).
    let mid = if log { (lo * hi).sqrt() } else { (lo + hi) / 2.0 };
    let mut ticks = vec![' '; WIDTH + 12];
    for x in [lo, mid, hi] {
        let text = short(x);
        let start = (col(x) + 7).saturating_sub(text.len() / 2).min(ticks.len() - text.len());
        for (k, ch) in text.chars().enumerate() {
            ticks[start + k] = ch;
        }
    }
    out.push_str(ticks.iter().collect::<String>().trim_end());
    out.push('\n');
    let scale = if log { " (log scale)" } else { "" };
    out.push_str(&format!("{:>7}tokens per problem{scale}; dots join the frontier\n", ""));
    let width = points.iter().map(|p| p.label.chars().count()).max().unwrap_or(0);
    for (i, p) in points.iter().enumerate() {
        let mark = if on.contains(&i) { "  on the frontier" } else { "" };
        out.push_str(&format!(
            "{:>7} {:<width$}  {:>6.1}%  {:>6} tokens/problem{mark}\n",
            marker(i),
            p.label,
            100.0 * p.success,
            short(p.tokens)
        ));
    }
    out
}

/// The chart as an SVG document: a filled circle and a label per method, the frontier
/// as a line through its methods.
pub(crate) fn svg_chart(points: &[Point], title: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 480)).into_drawing_area();
        draw(&root, points, title).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The label beside point `i`: its name and success, or, where several methods share the
/// spot, all their names on the first of them (and nothing on the others).
fn svg_label(points: &[Point], i: usize) -> String {
    let same = |q: &Point| q.tokens == points[i].tokens && q.success == points[i].success;
    if points[..i].iter().any(same) {
        return String::new();
    }
    let names: Vec<&str> = points.iter().filter(|q| same(q)).map(|q| q.label.as_str()).collect();
    format!("{} ({:.0}%)", names.join(", "), 100.0 * points[i].success)
}

/// plotters' SVG backend fails with I/O errors.
/// Each method's mark: a circle (blue on the frontier, grey off it) and its name beside it.
/// (A macro, as the log and linear charts are of different types.)
macro_rules! draw_points {
    ($chart:expr, $points:expr, $on:expr) => {
        $chart.draw_series($points.iter().enumerate().map(|(i, p)| {
            let colour = if $on.contains(&i) { BLUE } else { RGBColor(120, 120, 120) };
            EmptyElement::at((p.tokens, p.success))
                + Circle::new((0, 0), 5, colour.filled())
                + Text::new(svg_label($points, i), (8, -14), ("sans-serif", 13))
        }))?
    };
}

type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

fn draw(root: &DrawingArea<SVGBackend, plotters::coord::Shift>, points: &[Point], title: &str) -> DrawResult {
    root.fill(&WHITE)?;
    let (lo, hi) = token_range(points);
    let y = -0.05f64..1.08f64;
    let on = frontier(points);
    let line: Vec<(f64, f64)> = on.iter().map(|&i| (points[i].tokens, points[i].success)).collect();
    let mut builder = ChartBuilder::on(root);
    builder.caption(title, ("sans-serif", 18)).margin(16).x_label_area_size(44).y_label_area_size(56);
    let percent = |v: &f64| if (0.0..=1.0).contains(v) { format!("{:.0}%", 100.0 * v) } else { String::new() };
    let frontier_style = ShapeStyle::from(&BLUE).stroke_width(2);
    // The axes, the frontier and the points, on either scale (the charts' types differ).
    macro_rules! draw_on {
        ($chart:expr, $x_desc:expr) => {
            $chart
                .configure_mesh()
                .x_desc($x_desc)
                .y_desc("success")
                .x_label_formatter(&|v| short(*v))
                .y_label_formatter(&percent)
                .draw()?;
            $chart.draw_series(LineSeries::new(line, frontier_style))?;
            draw_points!($chart, points, on);
        };
    }
    if log_scale(points) {
        let mut chart = builder.build_cartesian_2d((lo / 1.6..hi * 2.5).log_scale(), y)?;
        draw_on!(chart, "tokens per problem (log scale)");
    } else {
        let hi = if hi > 0.0 { hi * 1.35 } else { 1.0 };
        let mut chart = builder.build_cartesian_2d(0f64..hi, y)?;
        draw_on!(chart, "tokens per problem");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(label: &str, tokens: f64, success: f64) -> Point {
        Point { label: label.into(), tokens, success }
    }

    #[test]
    fn the_frontier_keeps_the_methods_no_other_beats_on_both_cheapest_first() {
        let points = [
            p("tot", 9000.0, 0.7),
            p("io", 100.0, 0.05),
            p("cot", 300.0, 0.04), // dearer and worse than io
            p("cot-sc", 2000.0, 0.1),
            p("dfs", 9000.0, 0.6),   // as dear as tot, worse
            p("mcts", 20000.0, 0.7), // as good as tot, dearer
        ];
        assert_eq!(frontier(&points), [1, 3, 0]);
        // Two identical points are both optimal; an empty set has no frontier.
        assert_eq!(frontier(&[p("a", 1.0, 0.5), p("b", 1.0, 0.5)]), [0, 1]);
        assert!(frontier(&[]).is_empty());
    }

    #[test]
    fn the_text_chart_marks_every_method_and_names_the_frontier() {
        let points = [p("io", 100.0, 0.0), p("cot", 300.0, 0.5), p("tot", 30000.0, 1.0), p("bad", 40000.0, 0.2)];
        let text = text_chart(&points);
        let plot: Vec<&str> = text.lines().skip(1).take(HEIGHT).collect();
        // The plotting area, right of the axis and its labels.
        let area: Vec<&str> = plot.iter().map(|l| l.split_once('|').map_or("", |(_, r)| r)).collect();
        for m in ['1', '2', '3', '4'] {
            assert_eq!(area.iter().map(|l| l.matches(m).count()).sum::<usize>(), 1, "{m} once in\n{text}");
        }
        // 100% on the top row, 0% on the bottom one; the cheapest left, the dearest right.
        assert!(plot[0].starts_with(" 100% |") && plot[0].contains('3'), "{text}");
        assert!(plot[HEIGHT - 1].contains('1') && plot[HEIGHT - 1].find('1') < plot[0].find('3'), "{text}");
        assert!(text.contains("(log scale)"), "{text}");
        assert!(text.contains('.'), "the frontier is joined:\n{text}");
        assert!(text.contains("tot") && text.lines().any(|l| l.contains("bad") && !l.contains("frontier")), "{text}");
        assert_eq!(text.lines().filter(|l| l.ends_with("on the frontier")).count(), 3, "{text}");
    }

    #[test]
    fn one_point_or_equal_tokens_still_draw() {
        let text = text_chart(&[p("io", 0.0, 0.3)]);
        assert!(text.contains('1'), "{text}");
        let text = text_chart(&[p("io", 50.0, 0.3), p("cot", 50.0, 0.3)]);
        assert!(text.contains('*'), "{text}");
        assert!(svg_chart(&[p("io", 0.0, 0.3)], "t").unwrap().contains("<circle"));
    }
}
