//! Issue 28, the demos' captions at 80×24 and 160×45: every word of every caption can
//! be read (in the caption box, or in full with `C`), and `P` stops at each caption
//! until the person goes on (`N` plays through).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::tui::app::Popup;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

/// The screen, cell by cell.
fn screen(app: &mut App, width: u16, height: u16) -> Vec<Vec<String>> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            ui::draw_app(f, app);
        })
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..height).map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_string()).collect()).collect()
}

/// The text rows inside the box whose top border holds `marker` (the caption's " · i/n "),
/// or `None` when no box on screen has that title.
fn boxed_rows(cells: &[Vec<String>], marker: &str) -> Option<Vec<String>> {
    let rows: Vec<String> = cells.iter().map(|r| r.concat()).collect();
    let top = rows.iter().position(|r| r.contains(marker))?;
    let at = rows[top].find(marker)?;
    let x0 = rows[top][..at].chars().count() - rows[top][..at].chars().rev().position(|c| c == '┌')? - 1;
    let mut inside = Vec::new();
    for row in &cells[top + 1..] {
        if row[x0] == "└" {
            return Some(inside);
        }
        inside.push(row[x0 + 1..].iter().take_while(|c| c.as_str() != "│").map(String::as_str).collect());
    }
    None
}

fn words(rows: &[String]) -> Vec<String> {
    rows.iter().flat_map(|r| r.split_whitespace().map(str::to_string).collect::<Vec<_>>()).collect()
}

fn press(app: &mut App, c: char) {
    let effects = app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    assert!(effects.is_empty());
}

#[test]
fn every_word_of_every_demo_caption_can_be_read_at_80x24_and_160x45() {
    let dir = tempfile::tempdir().unwrap();
    for (d, demo) in crate::demos::DEMOS.iter().enumerate() {
        let mut app = demo_opened(dir.path(), d);
        let captions = app.session.replay.as_ref().unwrap().captions.clone();
        // The shipped captions are today's narration of the run.
        let session = crate::demos::load(demo).unwrap();
        let narrated = crate::demos::narrate(&session).unwrap();
        let shipped: Vec<(usize, String)> = captions.iter().map(|c| (c.at, c.text.clone())).collect();
        assert_eq!(shipped, narrated, "{}", demo.file);
        let mut cut_somewhere = false;
        for (k, caption) in captions.iter().enumerate() {
            app.seek(caption.at);
            let (shown, i, n) = app.caption().expect("a caption at its position");
            assert_eq!(
                (shown.text.as_str(), i),
                (caption.text.as_str(), k + 1),
                "{}: captions share a position",
                demo.file
            );
            let marker = format!(" {i}/{n} · ");
            let expected: Vec<String> = caption.text.split_whitespace().map(str::to_string).collect();
            for (w, h) in SIZES {
                let cells = screen(&mut app, w, h);
                let in_box =
                    boxed_rows(&cells, &marker).unwrap_or_else(|| panic!("{} {w}x{h}: no caption box", demo.file));
                let in_box = words(&in_box);
                let bottom: String =
                    cells.iter().map(|r| r.concat()).find(|r| r.contains("read all")).unwrap_or_default();
                if in_box == expected {
                    assert!(bottom.is_empty(), "{} {w}x{h}: whole, yet 'read all': {bottom}", demo.file);
                    continue;
                }
                // Cut: the box says so, it shows the start, and `C` shows the whole caption.
                cut_somewhere = true;
                assert!(bottom.contains("C read all"), "{} {w}x{h} caption {i}: cut without saying so", demo.file);
                assert_eq!(in_box.last().map(|l| l.ends_with('…')), Some(true), "{} {w}x{h}", demo.file);
                assert_eq!(in_box[..in_box.len() - 1], expected[..in_box.len() - 1], "{} {w}x{h}", demo.file);
                press(&mut app, 'C');
                assert!(matches!(app.popup, Some(Popup::Caption { .. })));
                // Its lines by number, page by page (pages overlap by a line).
                let mut seen = std::collections::BTreeMap::new();
                loop {
                    let cells = screen(&mut app, w, h);
                    let rows = boxed_rows(&cells, &marker).expect("the caption popup");
                    let (_, limit) = app.help.get();
                    let Some(Popup::Caption { scroll }) = app.popup else { panic!("the popup stays open") };
                    for (r, row) in rows.into_iter().enumerate() {
                        seen.insert(usize::from(scroll) + r, row);
                    }
                    if scroll >= limit {
                        break;
                    }
                    app.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
                }
                let seen = words(&seen.into_values().collect::<Vec<_>>());
                assert_eq!(seen, expected, "{} {w}x{h} caption {i}: the popup shows it whole", demo.file);
                press(&mut app, 'q');
                assert!(app.popup.is_none() && !app.quit, "any other key closes the popup");
            }
        }
        // At 80×24 the long captions are the ones cut (200–431 characters).
        let longest = captions.iter().map(|c| c.text.chars().count()).max().unwrap_or(0);
        assert_eq!(cut_somewhere, longest > 200, "{}: longest caption {longest}", demo.file);
    }
}

#[test]
fn play_stops_at_each_caption_until_the_person_goes_on_and_n_plays_through() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_opened(dir.path(), 0);
    let captions = app.session.replay.as_ref().unwrap().captions.clone();
    let total = app.session.replay.as_ref().unwrap().total;
    assert!(captions.len() >= 3);
    assert_eq!(app.caption().unwrap().1, 1);
    for (k, caption) in captions.iter().enumerate().skip(1) {
        press(&mut app, 'P');
        assert!(app.session.replay.as_ref().unwrap().playing);
        // However long the frame, playing stops at the next caption.
        app.play_tick(1000.0);
        let r = app.session.replay.as_ref().unwrap();
        assert_eq!(r.cursor, caption.at, "caption {}", k + 1);
        assert!(!r.playing, "stopped at caption {}", k + 1);
        let message = app.message.clone().unwrap_or_default();
        assert!(message.contains(&format!("caption {}/{}", k + 1, captions.len())), "{message}");
        assert!(message.contains("P plays on") && message.contains("N plays without stopping"), "{message}");
        // While stopped, nothing plays.
        app.play_tick(1000.0);
        assert_eq!(app.session.replay.as_ref().unwrap().cursor, caption.at);
    }
    // Demo 1's last caption is at its end; from the end, `P` starts again and stops at caption 2.
    if captions.last().unwrap().at < total {
        press(&mut app, 'P');
        app.play_tick(1000.0);
    }
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, total, "after the last caption, to the end");
    press(&mut app, 'P');
    app.play_tick(1000.0);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, captions[1].at, "from the end P starts again");

    // `N` from the start plays through every caption to the end.
    app.seek(0);
    press(&mut app, 'N');
    assert!(app.session.replay.as_ref().unwrap().playing);
    app.play_tick(1000.0);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, total);
    // `--nonstop` sets the same for `P`.
    app.seek(0);
    app.session.play_nonstop = true;
    press(&mut app, 'P');
    app.play_tick(1000.0);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, total);

    // The help and the README name both ways to play.
    let lines: Vec<String> = app.keymap.help().into_iter().map(|(keys, _, desc)| format!("{keys} {desc}")).collect();
    assert!(lines.iter().any(|l| l.contains("stopping at each caption")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("without stopping at captions")), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("the caption in full")), "{lines:#?}");
    let readme = include_str!("../../../README.md");
    assert!(readme.contains("`N` plays through") && readme.contains("--nonstop"), "README key table");
}

/// Demo 5 ends in a tie: at 80×24 the scores pane's title says how it was broken, whole
/// (it was cut to "tie: firs"), giving way to the shorter forms of its other parts.
#[test]
fn a_tied_votes_title_says_how_it_was_broken_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = crate::demos::DEMOS.iter().position(|d| d.file.contains("cot-sc-vote")).expect("demo 5");
    let mut app = demo_replay(dir.path(), d);
    for (w, h) in SIZES {
        let rows: Vec<String> = screen(&mut app, w, h).into_iter().map(|r| r.concat()).collect();
        let title = rows.iter().find(|r| r.contains(" Scores ")).unwrap_or_else(|| panic!("{rows:#?}"));
        assert!(title.contains("tie: first given"), "{w}×{h}: {title}");
        if w == 160 {
            assert!(title.contains("tie: first given wins") && title.contains("samples"), "{title}");
        }
    }
    for (room, want) in [
        (70, "vote of 10 samples · tie: first given wins · 1–3 of 3 answers"),
        (30, "tie: first given wins"),
        (14, "tie: 1st"),
    ] {
        let title = crate::tui::ui::scores::vote_title("vote of 10 samples", true, Some("1–3 of 3 answers"), room);
        assert_eq!(title, want);
        assert!(title.chars().count() <= room);
    }
}
