//! The rows of a task file's problem list: JSON Lines, a JSON array of objects, or CSV
//! with a header line. Each row comes with where it was (`line 3`, `item 2`).

use serde_json::{Map, Value};

type Rows = Vec<(String, Map<String, Value>)>;

/// One JSON object a line; blank lines are skipped.
pub fn jsonl(text: &str) -> Result<Rows, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => rows.push((format!("{}", i + 1), map)),
            Ok(_) => return Err(format!("line {}: a problem is a JSON object", i + 1)),
            Err(e) => return Err(format!("line {}: not valid JSON ({e})", i + 1)),
        }
    }
    Ok(rows)
}

/// A JSON array of objects.
pub fn json(text: &str) -> Result<Rows, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Array(items) = value else { return Err("the problems are a JSON array of objects".into()) };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(map) => Ok((format!("item {i}"), map)),
            _ => Err(format!("item {i}: a problem is a JSON object")),
        })
        .collect()
}

/// CSV (RFC 4180: fields in double quotes may hold commas, quotes doubled and line
/// breaks); the first record names the fields. Every value is text.
pub fn csv(text: &str) -> Result<Rows, String> {
    let records = csv_records(text)?;
    let mut records = records.into_iter();
    let Some((_, header)) = records.next() else { return Err("the CSV file is empty".into()) };
    let header: Vec<String> = header.into_iter().map(|h| h.trim().to_string()).collect();
    if let Some(dup) = header.iter().enumerate().find(|(i, h)| header[..*i].contains(h)).map(|(_, h)| h) {
        return Err(format!("line 1: the column {dup:?} is named twice"));
    }
    let mut rows = Vec::new();
    for (line, fields) in records {
        if fields.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        if fields.len() != header.len() {
            return Err(format!("line {line}: {} fields; the header names {}", fields.len(), header.len()));
        }
        let map = header.iter().cloned().zip(fields.into_iter().map(Value::String)).collect();
        rows.push((format!("{line}"), map));
    }
    Ok(rows)
}

/// The records of a CSV text, each with the line it starts on.
fn csv_records(text: &str) -> Result<Vec<(usize, Vec<String>)>, String> {
    let mut records = Vec::new();
    let (mut fields, mut field) = (Vec::new(), String::new());
    let (mut line, mut start) = (1, 1);
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    field.push('\n');
                }
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                records.push((start, std::mem::take(&mut fields)));
                line += 1;
                start = line;
                at_field_start = true;
            }
            c => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err(format!("line {start}: a quoted field is not closed"));
    }
    if !field.is_empty() || !fields.is_empty() {
        fields.push(field);
        records.push((start, fields));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_quotes_commas_and_line_breaks() {
        let rows = csv("input,answer\n\"a, b\",1\n\"say \"\"hi\"\"\nnow\",2\r\n\nc,3").unwrap();
        let inputs: Vec<&str> = rows.iter().map(|(_, r)| r["input"].as_str().unwrap()).collect();
        assert_eq!(inputs, ["a, b", "say \"hi\"\nnow", "c"]);
        assert_eq!(rows.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>(), ["2", "3", "6"]);
        assert!(csv("input,answer\nx").unwrap_err().starts_with("line 2: 1 fields"));
        assert!(csv("input\n\"open").unwrap_err().contains("not closed"));
        assert!(csv("a,a\n1,2").unwrap_err().contains("named twice"));
    }

    #[test]
    fn json_forms_name_the_bad_row() {
        assert_eq!(jsonl("{\"input\": \"x\"}\n\n{\"input\": \"y\"}").unwrap().len(), 2);
        assert!(jsonl("{\"input\": \"x\"}\n[1]").unwrap_err().starts_with("line 2"));
        assert!(jsonl("{oops").unwrap_err().starts_with("line 1: not valid JSON"));
        assert_eq!(json("[{\"input\": \"x\"}]").unwrap()[0].0, "item 0");
        assert!(json("{}").is_err() && json("[1]").unwrap_err().starts_with("item 0"));
    }
}
