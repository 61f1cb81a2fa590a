//! `thoughtscope export`: the JSON shape scripts rely on, Graphviz DOT that a real
//! `dot` draws (skipped with a reason when Graphviz is not installed), Mermaid's
//! shape and escaping, OTLP JSON read back through a typed model of the OTLP JSON
//! mapping that rejects unknown fields, and no secret in any export.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use serde_json::Value;

use thoughtscope::engine::{Command as EngineCommand, Input, NodeId};
use thoughtscope::session::{apply_input, replay, Session, SessionWriter, Totals};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn export(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope")).arg("export").args(args).output().expect("the binary runs")
}

fn export_ok(file: &Path, format: &str) -> String {
    let out = export(&[file.to_str().unwrap(), "--format", format]);
    assert!(out.status.success(), "export {format} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A session forked from `parent` after `inputs` inputs, where a person then edits
/// node #1 into `text`.
fn edited_fork(dir: &Path, parent: &Path, inputs: usize, text: &str) -> PathBuf {
    let parent = Session::load(parent).expect("the demo session loads");
    let path = dir.join("edited.jsonl");
    let mut writer = SessionWriter::fork(&path, &parent, inputs).expect("fork");
    let mut rebuilt = replay::rebuild(&parent, None, Some(inputs)).expect("rebuilds");
    let input = Input::command(EngineCommand::Edit { node: NodeId(1), text: text.into() });
    let mut totals = Totals::default();
    let applied = apply_input(&mut rebuilt.engine, &mut totals, &input);
    writer.input(&input, None, &applied.events).expect("write");
    path
}

const TRICKY: &str = "say \"hi\" \\l [x] {y} <z> #1; `q` ✓ é 漢字\nsecond line";

#[test]
fn json_has_the_documented_shape_and_the_solution_path() {
    let text = export_ok(&repo("sessions/bfs-solved.jsonl"), "json");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["format"], "thoughtscope-tree");
    assert_eq!(v["version"], 1);
    assert_eq!(v["task"], "game24");
    assert_eq!(v["method"], "tot-bfs");
    let nodes = v["nodes"].as_array().expect("nodes");
    assert!(nodes.len() > 10, "{}", nodes.len());
    let statuses = ["candidate", "frontier", "expanded", "dropped", "pruned", "invalid", "final", "solution"];
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["id"], i);
        assert!(statuses.contains(&n["status"].as_str().unwrap()), "{n}");
        for c in n["children"].as_array().unwrap() {
            assert_eq!(nodes[c.as_u64().unwrap() as usize]["parent"], i, "child's parent");
        }
        if n["status"] == "dropped" {
            assert!(n["reason"].is_string(), "dropped nodes say why: {n}");
        }
    }
    let path: Vec<u64> = v["solution_path"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
    assert_eq!(path.first(), Some(&0));
    let last = &nodes[*path.last().unwrap() as usize];
    assert_eq!(last["status"], "solution", "{last}");
    assert_eq!(v["outcome"]["solved"], true);
    for w in path.windows(2) {
        assert_eq!(nodes[w[1] as usize]["parent"], w[0]);
    }
    let marked = nodes.iter().filter(|n| n["on_solution_path"] == true).count();
    assert_eq!(marked, path.len());
    assert!(nodes.iter().any(|n| n["value"].is_number()), "scores are exported");
}

/// Graphviz reads the DOT (thoughts with quotes, backslashes, brackets and unicode
/// included) and draws it.
#[test]
fn dot_is_drawn_by_graphviz() {
    let dir = tempfile::tempdir().unwrap();
    let edited = edited_fork(dir.path(), &repo("sessions/bfs-solved.jsonl"), 2, TRICKY);
    for file in [repo("sessions/bfs-solved.jsonl"), repo("sessions/react-edit.jsonl"), edited.clone()] {
        let text = export_ok(&file, "dot");
        assert!(text.starts_with("digraph thoughtscope {"), "{text}");
        if file.ends_with("bfs-solved.jsonl") {
            assert!(text.contains("color=\"#d32f2f\""), "the solution path is highlighted");
        }
        if file == edited {
            // Wrapped at a space: the second line starts a new `\n` line of the label.
            assert!(text.contains(r#"say \"hi\" \\l [x] {y} <z> #1; `q` ✓ é\n漢字"#), "{text}");
        }
        let out_file = dir.path().join("tree.dot");
        std::fs::write(&out_file, &text).unwrap();
        if Command::new("dot").arg("-V").output().is_err() {
            eprintln!("skipped the Graphviz check: `dot` is not installed (Debian: apt-get install graphviz)");
            continue;
        }
        let svg = Command::new("dot").arg("-Tsvg").arg(&out_file).output().expect("dot runs");
        assert!(svg.status.success(), "dot rejected {}:\n{}", file.display(), String::from_utf8_lossy(&svg.stderr));
        let svg = String::from_utf8_lossy(&svg.stdout);
        assert!(svg.contains("<svg"), "no SVG");
        if file == edited {
            // Graphviz shows the quotes and the backslash as written.
            assert!(svg.contains("say &quot;hi&quot; \\l [x] {y} &lt;z&gt;"), "{svg}");
        }
    }
}

#[test]
fn mermaid_has_one_line_per_node_and_edge_and_escapes_labels() {
    let text = export_ok(&repo("sessions/bfs-solved.jsonl"), "mermaid");
    let json: Value = serde_json::from_str(&export_ok(&repo("sessions/bfs-solved.jsonl"), "json")).unwrap();
    let n = json["nodes"].as_array().unwrap().len();
    let path = json["solution_path"].as_array().unwrap().len();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "---");
    assert!(lines[1].starts_with("title: \"game24"), "{}", lines[1]);
    assert!(lines.contains(&"flowchart TD"));
    let node_lines = lines.iter().filter(|l| l.starts_with("  n") && l.contains("[\"")).count();
    let edge_lines = lines.iter().filter(|l| l.contains(" --> ")).count();
    assert_eq!(node_lines, n);
    assert_eq!(edge_lines, n - 1);
    let link = lines.iter().find(|l| l.trim_start().starts_with("linkStyle")).expect("the path's edges are styled");
    assert_eq!(link.split_whitespace().nth(1).unwrap().split(',').count(), path - 1, "{link}");
    assert!(lines.iter().any(|l| l.trim_start().starts_with("class ") && l.ends_with(" solution")));

    let dir = tempfile::tempdir().unwrap();
    let edited = edited_fork(dir.path(), &repo("sessions/bfs-solved.jsonl"), 2, TRICKY);
    let text = export_ok(&edited, "mermaid");
    let label = text.lines().find(|l| l.contains("say ")).expect("the edited node");
    assert!(label.contains("say #quot;hi#quot; \\l [x] {y} #lt;z#gt; #35;1; #96;q#96; ✓ é<br/>漢字"), "{label}");
    // Inside the brackets' quotes there is no raw quote and no line break.
    let inner = label.split_once("[\"").unwrap().1.strip_suffix("\"]").expect("label closes the line");
    assert!(!inner.contains('"'), "{inner}");
}

// A typed model of the OTLP JSON mapping (opentelemetry-proto `trace/v1/trace.proto`,
// `common/v1/common.proto`, `resource/v1/resource.proto` with the JSON rules: lowerCamelCase
// fields, 64-bit integers as strings, ids as hex, enums as numbers). Unknown fields are errors.

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TracesData {
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ResourceSpans {
    resource: Resource,
    scope_spans: Vec<ScopeSpans>,
    #[serde(default)]
    #[allow(dead_code)]
    schema_url: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Resource {
    attributes: Vec<KeyValue>,
    #[serde(default)]
    #[allow(dead_code)]
    dropped_attributes_count: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScopeSpans {
    scope: Scope,
    spans: Vec<Span>,
    #[serde(default)]
    #[allow(dead_code)]
    schema_url: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Scope {
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    version: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Span {
    trace_id: String,
    span_id: String,
    #[serde(default)]
    parent_span_id: Option<String>,
    name: String,
    kind: u8,
    start_time_unix_nano: String,
    end_time_unix_nano: String,
    attributes: Vec<KeyValue>,
    events: Vec<SpanEvent>,
    status: Status,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SpanEvent {
    time_unix_nano: String,
    name: String,
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Status {
    code: u8,
    #[serde(default)]
    #[allow(dead_code)]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyValue {
    key: String,
    value: AnyValue,
}

// Every variant's value is checked by parsing it; only some are read back.
#[allow(clippy::enum_variant_names)] // named as the OTLP JSON fields are
#[allow(dead_code)]
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
enum AnyValue {
    StringValue(String),
    BoolValue(bool),
    IntValue(String),
    DoubleValue(f64),
    ArrayValue(ArrayValue),
}

#[allow(dead_code)]
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
struct ArrayValue {
    values: Vec<AnyValue>,
}

fn attrs(list: &[KeyValue]) -> HashMap<&str, AnyValue> {
    list.iter().map(|kv| (kv.key.as_str(), kv.value.clone())).collect()
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) && s.chars().any(|c| c != '0')
}

fn check_otlp(file: &Path) -> Vec<Span> {
    let text = export_ok(file, "otel");
    let data: TracesData = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not OTLP JSON ({e})"));
    assert_eq!(data.resource_spans.len(), 1);
    let rs = data.resource_spans.into_iter().next().unwrap();
    assert!(
        matches!(attrs(&rs.resource.attributes).get("service.name"), Some(AnyValue::StringValue(s)) if s == "thoughtscope")
    );
    let scope = rs.scope_spans.into_iter().next().expect("a scope");
    assert_eq!(scope.scope.name, "thoughtscope");
    let spans = scope.spans;
    let ids: HashSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    assert_eq!(ids.len(), spans.len(), "span ids are unique");
    let trace = &spans[0].trace_id;
    assert!(is_hex(trace, 32), "{trace}");
    let roots = spans.iter().filter(|s| s.parent_span_id.is_none()).count();
    assert_eq!(roots, 1, "one root span per session");
    for s in &spans {
        assert_eq!(&s.trace_id, trace);
        assert!(is_hex(&s.span_id, 16), "{}", s.span_id);
        if let Some(p) = &s.parent_span_id {
            assert!(ids.contains(p.as_str()), "{} has an unknown parent", s.name);
        }
        let (start, end): (u64, u64) =
            (s.start_time_unix_nano.parse().expect("nanos"), s.end_time_unix_nano.parse().expect("nanos"));
        assert!(end >= start);
        assert!([1, 2, 3, 4, 5].contains(&s.kind));
        assert!(s.status.code <= 2);
        for e in &s.events {
            let t: u64 = e.time_unix_nano.parse().expect("event nanos");
            assert!(t >= start && t <= end, "event inside its span");
        }
    }
    spans
}

#[test]
fn otel_spans_follow_the_otlp_json_mapping_and_the_genai_conventions() {
    let file = repo("sessions/bfs-solved.jsonl");
    let spans = check_otlp(&file);
    let session = Session::load(&file).unwrap();
    let replies = session.inputs().filter(|(i, _)| matches!(i, Input::LlmReply(_))).count();
    let calls: Vec<&Span> = spans.iter().filter(|s| s.name.starts_with("chat ")).collect();
    assert_eq!(calls.len(), replies, "one span per model call");
    for c in &calls {
        assert_eq!(c.kind, 3, "client spans");
        let a = attrs(&c.attributes);
        assert!(matches!(a.get("gen_ai.operation.name"), Some(AnyValue::StringValue(s)) if s == "chat"));
        assert!(matches!(a.get("gen_ai.provider.name"), Some(AnyValue::StringValue(s)) if s == "sim"));
        assert!(matches!(a.get("gen_ai.request.model"), Some(AnyValue::StringValue(s)) if s.contains("sim")));
        for key in ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"] {
            assert!(matches!(a.get(key), Some(AnyValue::IntValue(n)) if n.parse::<u64>().is_ok()), "{key}");
        }
        let names: Vec<&str> = c.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["gen_ai.content.prompt", "gen_ai.content.completion"]);
        let prompt = attrs(&c.events[0].attributes);
        let Some(AnyValue::StringValue(messages)) = prompt.get("gen_ai.prompt") else { panic!("prompt text") };
        let messages: Value = serde_json::from_str(messages).expect("messages as JSON");
        assert!(messages[0]["content"].is_string());
        // Calls sit under the node they were made for, not at the root.
        let parent = spans.iter().find(|s| Some(&s.span_id) == c.parent_span_id.as_ref()).unwrap();
        assert!(parent.name.starts_with("node #"), "{}", parent.name);
    }
    let tokens: u64 = calls
        .iter()
        .map(|c| match attrs(&c.attributes).get("gen_ai.usage.input_tokens") {
            Some(AnyValue::IntValue(n)) => n.parse::<u64>().unwrap(),
            _ => 0,
        })
        .sum();
    let (totals, _) = session.end().unwrap();
    assert!(tokens >= totals.prompt_tokens, "every call's tokens are there");

    // Tool calls of a ReAct run are spans too.
    let file = repo("sessions/react-edit.jsonl");
    let spans = check_otlp(&file);
    let session = Session::load(&file).unwrap();
    let tool_replies = session.inputs().filter(|(i, _)| matches!(i, Input::ToolReply(_))).count();
    let tools: Vec<&Span> = spans.iter().filter(|s| s.name.starts_with("execute_tool ")).collect();
    assert_eq!(tools.len(), tool_replies);
    for t in tools {
        let a = attrs(&t.attributes);
        assert!(matches!(a.get("gen_ai.operation.name"), Some(AnyValue::StringValue(s)) if s == "execute_tool"));
        assert!(matches!(a.get("gen_ai.tool.name"), Some(AnyValue::StringValue(s)) if s != "tool"), "named");
    }
}

#[test]
fn no_export_carries_a_known_secret() {
    const KEY: &str = "sk-proj-EXPORT-canary-4411";
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("sessions/bfs-solved.jsonl")).unwrap();
    let leaked = text.replacen("10 - 4 = 6 (left: 5 6 6)", &format!("10 - 4 = 6 (left: 5 6 6) {KEY}"), 1);
    assert_ne!(leaked, text);
    let file = dir.path().join("leaked.jsonl");
    std::fs::write(&file, leaked).unwrap();
    for format in ["json", "dot", "mermaid", "otel"] {
        let out_file = dir.path().join(format!("out.{format}"));
        let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
            .args(["export", file.to_str().unwrap(), "--format", format, "--out", out_file.to_str().unwrap()])
            .env("OPENAI_API_KEY", KEY)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let written = std::fs::read_to_string(&out_file).unwrap();
        assert!(!written.contains(KEY), "{format} export leaks the key");
        assert!(!String::from_utf8_lossy(&out.stderr).contains(KEY));
        if format == "otel" {
            assert!(written.contains("[redacted]"), "the reply is there, redacted");
        }
    }
}

#[test]
fn bad_input_is_one_plain_line() {
    let out = export(&[repo("sessions/bfs-solved.jsonl").to_str().unwrap(), "--format", "svg"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("json, dot, mermaid, otel"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "not a session\n").unwrap();
    let out = export(&[bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.jsonl:1"), "{err}");
}

/// A reasoning model's thinking is carried: by call, each piece with its sample, kind,
/// text and size; a node's `made_by` finds the thinking that came before it, and the
/// totals count reasoning tokens apart. A session without thinking has none.
#[test]
fn json_carries_each_calls_thinking() {
    let v: Value = serde_json::from_str(&export_ok(&repo("sessions/thinking-bfs.jsonl"), "json")).expect("JSON");
    let thinking = v["thinking"].as_object().expect("a thinking map");
    assert!(!thinking.is_empty(), "{v}");
    for pieces in thinking.values() {
        for p in pieces.as_array().unwrap() {
            assert_eq!(p["kind"], "simulated", "{p}");
            assert!(p["text"].as_str().is_some_and(|t| !t.is_empty()) && p["tokens"].as_u64() > Some(0), "{p}");
            assert!(p["sample"].as_u64().is_some(), "{p}");
        }
    }
    let first = v["nodes"].as_array().unwrap().iter().find(|n| !n["made_by"].is_null()).expect("a model-made node");
    let by = first["made_by"].to_string();
    assert!(thinking[&by][0]["text"].as_str().unwrap().contains("So I will start with"), "{}", thinking[&by]);
    assert!(v["totals"]["reasoning_tokens"].as_u64() > Some(0), "{}", v["totals"]);
    let plain: Value = serde_json::from_str(&export_ok(&repo("sessions/bfs-solved.jsonl"), "json")).unwrap();
    assert_eq!(plain["thinking"], serde_json::json!({}));
    // The OpenTelemetry spans carry it in each completion, apart from its text.
    let otel = export_ok(&repo("sessions/thinking-bfs.jsonl"), "otel");
    assert!(
        otel.contains("So I will start with") && otel.contains(r#"\"thinking\":[{\"kind\":\"simulated\""#),
        "{otel:.2000}"
    );
}
