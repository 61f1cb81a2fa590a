use std::io::Write;

use super::*;
use crate::engine::Command;

fn header() -> Header {
    Header {
        format: FORMAT.into(),
        version: VERSION,
        task: "game24".into(),
        input: "4 5 6 10".into(),
        index: Some(900),
        params: Params { method: crate::engine::methods::tot_bfs::KIND, ..Params::default() },
        provider: "sim".into(),
        model: "sim-1".into(),
        simulated: true,
        sim: None,
        price: None,
        source: None,
        parent: None,
        note: None,
        gold: None,
        actions: None,
    }
}

fn write_session(path: &Path, n: usize) {
    let mut w = SessionWriter::create(path, &header()).unwrap();
    for _ in 0..n {
        let input = Input::command(Command::Step { n: 1 });
        w.input(&input, None, &[Event::Log { text: "stepped".into() }]).unwrap();
    }
    w.end(Totals::default(), 5).unwrap();
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let s = Session::load(&path).unwrap();
    assert_eq!(s.header, header());
    assert_eq!(s.inputs().count(), 3);
    assert_eq!(s.events().count(), 3);
    assert_eq!(s.end(), Some((Totals::default(), 5)));
    assert!(s.warnings.is_empty());
}

#[test]
fn torn_last_line_is_reported_with_its_line_number_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"kind\":\"input\",\"seq\":3,\"inp").unwrap();
    drop(f);
    let s = Session::load(&path).unwrap();
    assert_eq!(s.inputs().count(), 3);
    assert_eq!(s.warnings.len(), 1);
    // header + 3 inputs + 3 events + end = 8 lines; the torn one is line 9.
    assert!(s.warnings[0].contains("s.jsonl:9: torn last line"), "{}", s.warnings[0]);
}

#[test]
fn malformed_middle_line_stops_there_and_keeps_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "{not json";
    std::fs::write(&path, lines.join("\n")).unwrap();
    let s = Session::load(&path).unwrap();
    assert_eq!(s.records.len(), 3, "lines 2-4 kept");
    assert!(s.warnings[0].contains(":5: malformed line"), "{}", s.warnings[0]);
}

#[test]
fn not_a_session_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let err = Session::load(&path).unwrap_err().to_string();
    assert!(err.contains("x.jsonl:1") && err.contains("header"), "{err}");
    std::fs::write(&path, "").unwrap();
    assert!(Session::load(&path).unwrap_err().to_string().contains("empty"));
    let missing = dir.path().join("missing.jsonl");
    assert!(Session::load(&missing).unwrap_err().to_string().contains("missing.jsonl"));
    let mut h = header();
    h.version = VERSION + 1;
    let mut w = SessionWriter::create(&path, &h).unwrap();
    w.end(Totals::default(), 0).unwrap();
    assert!(Session::load(&path).unwrap_err().to_string().contains("newer"));
}

#[test]
fn a_header_with_parameters_out_of_range_is_an_error_naming_the_parameter() {
    let mut h = header();
    h.params.n_evaluate = 4_294_967_295;
    let text = serde_json::to_string(&Record::Header(Box::new(h))).unwrap();
    let Err(err) = Session::parse(&text, Path::new("big.jsonl")) else { panic!("loaded") };
    let message = err.to_string();
    assert!(message.contains("big.jsonl") && message.contains("n_evaluate"), "{message}");
    // The same header in range loads.
    let text = serde_json::to_string(&Record::Header(Box::new(header()))).unwrap();
    assert!(Session::parse(&text, Path::new("ok.jsonl")).is_ok());
}
