//! The full-screen interface after a long session: what one keystroke, one
//! PageUp and one resize cost in elroy's own code — state change plus a whole frame drawn into
//! ratatui's `TestBackend` at 120x40 (no terminal IO) — in an empty session and after 300 turns
//! whose replies are 120 lines of markdown (headings, paragraphs, lists, a highlighted code
//! block). The turns are laid out once before measuring, as the interface did while they
//! streamed.
//!
//! Run: `cargo bench -p elroy-tui --bench long_session` (release build). Figures are in
//! docs/performance.md.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;

use elroy_orchestrator::TurnEvent;
use elroy_tui::app::App;
use elroy_tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

const TURNS: usize = 300;

fn main() {
    divan::main();
}

/// A 120-line markdown reply (turn `n`).
fn reply(n: usize) -> String {
    let mut text = format!("## Plan number {n}\n\n");
    for p in 0..6 {
        text.push_str(&format!(
            "Paragraph {p} of reply {n}: the trip needs a passport, a booking and **a plan** for \
             every day, with *some* room for rain and a `checklist` that says what is done.\n\n"
        ));
    }
    for i in 0..40 {
        text.push_str(&format!("- step {i}: pack item {i} and check it twice\n"));
    }
    text.push_str("\n```rust\n");
    for i in 0..40 {
        text.push_str(&format!("let value_{i} = compute({i}, \"label {i}\");\n"));
    }
    text.push_str("```\n\n");
    for i in 0..20 {
        text.push_str(&format!("{i}. A numbered remark about day {i}.\n"));
    }
    text
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

struct Session {
    app: App,
    terminal: Terminal<TestBackend>,
}

impl Session {
    fn new(turns: usize) -> Session {
        let mut app = App::new(Theme::plain(), None, &[]);
        app.status.model = "bench-model".into();
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        for n in 0..turns {
            for c in format!("question {n}").chars() {
                app.on_key(key(KeyCode::Char(c)));
            }
            app.on_key(key(KeyCode::Enter));
            app.on_turn_event(TurnEvent::TextDelta(reply(n)));
            app.on_turn_end();
            // Drawn as it streamed in: its lines are laid out at this width.
            terminal.draw(|f| elroy_tui::ui::render(&app, f)).unwrap();
        }
        Session { app, terminal }
    }

    fn draw(&mut self) {
        let app = &self.app;
        self.terminal
            .draw(|f| elroy_tui::ui::render(app, f))
            .unwrap();
    }
}

thread_local! {
    static EMPTY: RefCell<Session> = RefCell::new(Session::new(0));
    static LONG: RefCell<Session> = RefCell::new(Session::new(TURNS));
}

fn with_session(turns: usize, f: impl FnOnce(&mut Session)) {
    let cell = if turns == 0 { &EMPTY } else { &LONG };
    cell.with(|s| f(&mut s.borrow_mut()));
}

/// One character typed, then the frame.
#[divan::bench(args = [0, TURNS])]
fn keystroke(bencher: divan::Bencher, turns: usize) {
    with_session(turns, |s| s.draw());
    bencher.bench_local(|| {
        with_session(turns, |s| {
            s.app.on_key(key(KeyCode::Char('x')));
            s.draw();
        });
    });
}

/// PageUp then PageDown (so the position stays), each with its frame; the figure is per key.
#[divan::bench(args = [0, TURNS])]
fn page_up(bencher: divan::Bencher, turns: usize) {
    with_session(turns, |s| s.draw());
    bencher.bench_local(|| {
        with_session(turns, |s| {
            s.app.on_key(key(KeyCode::PageUp));
            s.draw();
        });
    });
    with_session(turns, |s| {
        for _ in 0..10_000 {
            s.app.on_key(key(KeyCode::PageDown));
        }
    });
}

/// The terminal resized between 120 and 100 columns, then the frame (every resize changes the
/// conversation's width, so the entries in view are laid out again).
#[divan::bench(args = [0, TURNS])]
fn resize(bencher: divan::Bencher, turns: usize) {
    let mut wide = false;
    bencher.bench_local(|| {
        with_session(turns, |s| {
            wide = !wide;
            let width = if wide { 120 } else { 100 };
            s.terminal.backend_mut().resize(width, 40);
            s.app.on_resize();
            s.draw();
        });
    });
}
