//! `thoughtscope bench compare`: its rows are the runs they name, its table has one row
//! per method in each format, its SVG is well-formed with one point per method, and a
//! method or task it does not know is one plain line naming the ones it does.
//! (The frontier and the text chart are tested on made-up points in `src/cli/chart.rs`.)

use crate::support;

use std::path::Path;
use std::process::Output;

fn thoughtscope(dir: &Path, args: &[&str]) -> Output {
    support::sandboxed(dir).args(args).output().expect("the binary runs")
}

fn compare(dir: &Path, args: &[&str]) -> Output {
    let mut full = vec!["bench", "compare"];
    full.extend_from_slice(args);
    thoughtscope(dir, &full)
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).expect("one JSON object")
}

/// Each row holds what `thoughtscope run` of that method on the same problems and seed
/// reports, and the frontier is the rows no other row beats on both success and tokens.
#[test]
fn the_table_rows_are_the_runs_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let report = json(&compare(
        dir.path(),
        &["--methods", "io,cot,tot-dfs", "--range", "0..4", "--format", "json", "--", "--sim-noise", "2"],
    ));
    let rows = report["methods"].as_array().unwrap();
    assert_eq!(rows.iter().map(|r| r["method"].as_str().unwrap()).collect::<Vec<_>>(), ["io", "cot", "tot-dfs"]);
    for row in rows {
        let method = row["method"].as_str().unwrap();
        let by_hand = json(&thoughtscope(
            dir.path(),
            &[
                "run",
                "--task",
                "game24",
                "--method",
                method,
                "--range",
                "0..4",
                "--sim-noise",
                "2",
                "--seed",
                "0",
                "--json",
            ],
        ));
        for (mine, theirs) in [
            ("n", "n"),
            ("solved", "solved"),
            ("calls", "llm_calls"),
            ("cache_hits", "cache_hits"),
            ("prompt_tokens", "prompt_tokens"),
            ("completion_tokens", "completion_tokens"),
        ] {
            assert_eq!(row[mine], by_hand[theirs], "{method}: {mine}\n{row}\n{by_hand}");
        }
        let tokens = by_hand["prompt_tokens"].as_u64().unwrap() + by_hand["completion_tokens"].as_u64().unwrap();
        assert_eq!(row["tokens"], tokens);
        assert!((row["success_rate"].as_f64().unwrap() - by_hand["success_rate"].as_f64().unwrap()).abs() < 1e-12);
    }
    let beaten = |r: &serde_json::Value| {
        let (t, s) = (r["tokens"].as_u64().unwrap(), r["success_rate"].as_f64().unwrap());
        rows.iter().any(|q| {
            let (qt, qs) = (q["tokens"].as_u64().unwrap(), q["success_rate"].as_f64().unwrap());
            qt <= t && qs >= s && (qt < t || qs > s)
        })
    };
    for row in rows {
        assert_eq!(row["frontier"].as_bool().unwrap(), !beaten(row), "{row}");
    }
    assert!(!report["frontier"].as_array().unwrap().is_empty());
}

#[test]
fn csv_and_markdown_have_one_row_per_method() {
    let dir = tempfile::tempdir().unwrap();
    let csv = ok(&compare(dir.path(), &["--methods", "io,cot", "--range", "0..3", "--format", "csv"]));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "a header and a row per method, nothing else:\n{csv}");
    assert!(lines[0].starts_with("method,solved,n,success_rate,calls,"), "{csv}");
    let width = lines[0].split(',').count();
    for (line, method) in lines[1..].iter().zip(["io", "cot"]) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), width, "{line}");
        assert_eq!(fields[0], method);
        assert_eq!(fields[2], "3", "three problems: {line}");
    }

    let md = ok(&compare(dir.path(), &["--methods", "io,cot", "--range", "0..3"]));
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 4, "a header, a rule and a row per method:\n{md}");
    assert!(table[0].contains("success") && table[0].contains("tokens (prompt / completion)"), "{md}");
    let columns = table[0].matches('|').count();
    assert!(table.iter().all(|l| l.matches('|').count() == columns), "{md}");
    assert!(table[2].starts_with("| io | ") && table[3].starts_with("| cot | "), "{md}");
    // The chart follows: its axis, a legend line per method, and the frontier named.
    assert!(md.contains("tokens per problem"), "{md}");
    assert!(md.lines().any(|l| l.trim_start().starts_with("1 io")), "{md}");
    assert!(md.lines().any(|l| l.trim_start().starts_with("2 cot")), "{md}");
    assert!(md.contains("frontier (cheapest first): "), "{md}");
}

#[test]
fn the_svg_is_well_formed_with_one_point_per_method() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("chart.svg");
    let out = compare(
        dir.path(),
        &["--methods", "io,cot,tot-dfs", "--range", "0..3", "--format", "csv", "--svg", svg.to_str().unwrap()],
    );
    ok(&out);
    let text = std::fs::read_to_string(&svg).unwrap();
    let elements = well_formed(&text).unwrap_or_else(|e| panic!("not well-formed: {e}\n{text}"));
    assert_eq!(elements.first().map(String::as_str), Some("svg"));
    assert_eq!(elements.iter().filter(|e| *e == "circle").count(), 3, "one point per method");
    for method in ["io", "cot", "tot-dfs"] {
        assert!(text.contains(&format!("\n{method} (")), "{method} is labelled");
    }
    // A directory that does not exist is refused before anything runs.
    let out = compare(dir.path(), &["--methods", "io", "--svg", "no/such/dir/c.svg"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
}

/// One fresh cache for all the methods: the second method's requests that the first
/// already sent are answered from it, and the first method's run is unchanged.
#[test]
fn share_cache_lets_a_method_reuse_anothers_replies() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--methods", "tot-bfs,tot-dfs", "--range", "0..2", "--format", "json"];
    let own = json(&compare(dir.path(), &args));
    let mut shared_args = args.to_vec();
    shared_args.push("--share-cache");
    let shared = json(&compare(dir.path(), &shared_args));
    assert_eq!(shared["share_cache"], true);
    let (own, shared) = (own["methods"].as_array().unwrap(), shared["methods"].as_array().unwrap());
    assert_eq!(own[0]["calls"], shared[0]["calls"], "the first method runs as on its own");
    assert!(
        shared[1]["calls"].as_u64() < own[1]["calls"].as_u64(),
        "tot-dfs sends fewer calls when tot-bfs's replies are shared: {} vs {}",
        shared[1],
        own[1]
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("thoughtscope-compare-"))
        .collect();
    assert!(left.is_empty(), "the shared cache is removed afterwards");
}

#[test]
fn a_method_or_task_it_does_not_know_is_one_line_naming_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let one_line = |out: &Output, has: &[&str]| {
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout.is_empty(), "nothing ran");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for h in has {
            assert!(err.contains(h), "{h:?} in {err}");
        }
    };
    let out = compare(dir.path(), &["--methods", "io,bogus"]);
    one_line(&out, &["unknown method \"bogus\"", "tot-bfs", "react", "retreval"]);
    let out = compare(dir.path(), &["--task", "nope", "--methods", "io"]);
    one_line(&out, &["unknown task \"nope\"", "game24", "crosswords"]);
    let out = compare(dir.path(), &["--methods", "io,io"]);
    one_line(&out, &["names io twice"]);
    let out = compare(dir.path(), &["--methods", "io", "--", "--method", "cot"]);
    one_line(&out, &["--method is the comparison's to set"]);
    // A method the task cannot take is refused before any method runs.
    let out = compare(dir.path(), &["--methods", "io,react"]);
    one_line(&out, &["react"]);
}

/// The names of the elements of `text`, in document order, if it is well-formed XML:
/// tags nest and close, attributes are quoted, text and values escape `<` and `&`.
fn well_formed(text: &str) -> Result<Vec<String>, String> {
    let mut open: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = text;
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        check_text(&rest[..start])?;
        if open.is_empty() && !rest[..start].trim().is_empty() {
            return Err("text outside the root element".into());
        }
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix("<?") {
            rest = &after[after.find("?>").ok_or("an unclosed <?")? + 2..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = &after[after.find("-->").ok_or("an unclosed comment")? + 3..];
            continue;
        }
        let end = rest.find('>').ok_or("an unclosed tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name.trim() => continue,
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        }
        let (body, empty) = match tag.strip_suffix('/') {
            Some(b) => (b, true),
            None => (tag, false),
        };
        let name: String = body.chars().take_while(|c| !c.is_whitespace()).collect();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || "-_:.".contains(c)) {
            return Err(format!("a bad element name in <{tag}>"));
        }
        check_attributes(&body[name.len()..])?;
        if open.is_empty() {
            roots += 1;
        }
        names.push(name.clone());
        if !empty {
            open.push(name);
        }
    }
    check_text(rest)?;
    match (open.last(), roots) {
        (Some(o), _) => Err(format!("<{o}> is never closed")),
        (None, 1) if rest.trim().is_empty() => Ok(names),
        _ => Err(format!("{roots} root elements, or text after the root")),
    }
}

fn check_text(text: &str) -> Result<(), String> {
    for (i, _) in text.match_indices('&') {
        let entity = &text[i..text[i..].find(';').map_or(text.len(), |e| i + e + 1)];
        let named = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity);
        let numeric = entity.starts_with("&#") && entity.ends_with(';');
        if !(named || numeric) {
            return Err(format!("an unescaped & in {text:?}"));
        }
    }
    Ok(())
}

fn check_attributes(mut attrs: &str) -> Result<(), String> {
    loop {
        attrs = attrs.trim_start();
        if attrs.is_empty() {
            return Ok(());
        }
        let eq = attrs.find('=').ok_or_else(|| format!("an attribute without a value: {attrs:?}"))?;
        let name = attrs[..eq].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!("a bad attribute name {name:?}"));
        }
        let value = attrs[eq + 1..].trim_start();
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'').ok_or("an unquoted attribute value")?;
        let close = value[1..].find(quote).ok_or("an unclosed attribute value")?;
        let inner = &value[1..1 + close];
        if inner.contains('<') {
            return Err(format!("a < in the attribute {name}"));
        }
        check_text(inner)?;
        attrs = &value[close + 2..];
    }
}

/// A provider that answers nothing is an error naming it, not a table of zeros.
#[test]
fn a_method_whose_every_call_failed_stops_the_comparison() {
    let dir = tempfile::tempdir().unwrap();
    // A port that was free a moment ago: connections to it are refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = compare(
        dir.path(),
        &["--methods", "io,cot", "--range", "0..1", "--", "--provider", "ollama", "--base-url", &url, "--model", "m"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "no table");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("every call of io to ollama failed"), "{err}");
    assert!(!err.contains("running cot"), "the comparison stops at the first such method: {err}");
}

/// retreval keeps a memory: in a comparison it starts on a fresh one, removed afterwards,
/// and the user's own memory of the task (`retreval-math-demo`) is neither made nor read.
#[test]
fn a_memory_keeping_method_runs_on_a_fresh_memory_removed_afterwards() {
    let dir = tempfile::tempdir().unwrap();
    let report = json(&compare(
        dir.path(),
        &["--task", "math-demo", "--methods", "cot,retreval", "--range", "0..2", "--format", "json"],
    ));
    assert_eq!(report["methods"][1]["n"], 2, "{report}");
    let left = std::fs::read_dir(dir.path().join("data/memory")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "no memory is left behind");
}
