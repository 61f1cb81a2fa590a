use super::*;

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let status = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
    path
}

#[test]
fn a_regular_file_is_read_up_to_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "theme = \"dark\"\n").unwrap();
    assert_eq!(read_text(&path, &CONFIG).unwrap(), "theme = \"dark\"\n");
    let small = Kind { what: "test file", max_bytes: 8, pipes: false };
    let err = read_text(&path, &small).unwrap_err().to_string();
    assert_eq!(err, format!("{} is larger than 8 bytes, the limit for a test file", path.display()));
    assert_eq!(size_text(CONFIG.max_bytes), "1 MiB");
    assert_eq!(size_text(THEME.max_bytes), "64 KiB");
}

#[test]
fn directories_devices_and_fifos_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let err = read_text(dir.path(), &CONFIG).unwrap_err().to_string();
    assert!(err.ends_with("is a directory, not a file: name a regular config file"), "{err}");
    let err = read_text(Path::new("/dev/zero"), &CONFIG).unwrap_err().to_string();
    assert_eq!(err, "/dev/zero is a device, not a file: name a regular config file");
    // A FIFO nobody writes to: opening it would block forever without O_NONBLOCK.
    let pipe = fifo(dir.path(), "no-writer");
    let err = read_text(&pipe, &TEMPLATE).unwrap_err().to_string();
    assert!(err.ends_with("is a FIFO (named pipe), not a file: name a regular prompt template"), "{err}");
    assert!(open_regular(&pipe).is_err_and(|(_, is)| is == Some("a FIFO (named pipe)")));
    assert!(started.elapsed() < Duration::from_secs(5), "nothing blocked: {:?}", started.elapsed());
    let missing = read_text(&dir.path().join("missing.toml"), &CONFIG).unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
}

#[test]
fn pipes_are_read_where_answers_are_piped_in() {
    let dir = tempfile::tempdir().unwrap();
    // A writer that holds the pipe open from the start, as the shell's `<(...)` does, and
    // writes in two pieces: the reader waits for data, then for the writer to close.
    let pipe = fifo(dir.path(), "answer");
    // Read-write: opening never blocks, and the pipe has a writer until this is dropped.
    let mut keeper = std::fs::OpenOptions::new().read(true).write(true).open(&pipe).unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        std::thread::sleep(Duration::from_millis(100));
        keeper.write_all(b"4").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        keeper.write_all(b"2\n").unwrap();
    });
    let text = read_text(&pipe, &ANSWER).unwrap();
    writer.join().unwrap();
    assert_eq!(text, "42\n");
    // With no writer at all it reads as empty, at once.
    let lonely = fifo(dir.path(), "lonely");
    assert_eq!(read_text(&lonely, &ANSWER).unwrap(), "");
    // A device is still refused, pipes or not.
    assert!(read_text(Path::new("/dev/zero"), &ANSWER).is_err());
}

#[test]
fn text_must_be_utf8_and_quoted_values_are_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.txt");
    std::fs::write(&path, b"ok \xff").unwrap();
    let err = read_text(&path, &TEMPLATE).unwrap_err().to_string();
    assert_eq!(err, format!("{}: not UTF-8 text (at byte 3)", path.display()));
    assert_eq!(clip("short", 10), "short");
    assert_eq!(clip(&"x".repeat(50), 4), "xxxx… (50 characters)");
}
