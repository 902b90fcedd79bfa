//! The input editor: a multi-line [`TextArea`] with the history of the plain REPL
//! (`$ELROY_HOME/cache/history`, rustyline's `#V2` format: one entry per line, `\n` and `\\`
//! escaped), walked with Up/Down when the cursor is on the first/last line.

use std::path::{Path, PathBuf};

use ratatui::style::{Modifier, Style};
use ratatui_textarea::{CursorMove, TextArea};
use unicode_segmentation::UnicodeSegmentation;

/// Entries kept in the history file.
const HISTORY_MAX: usize = 1000;

/// The editor and its history.
#[derive(Debug)]
pub struct Input {
    /// The text being typed.
    pub area: TextArea<'static>,
    /// Earlier entries, oldest first.
    pub history: Vec<String>,
    /// Where Up/Down is in `history` (`None`: editing a new entry).
    pos: Option<usize>,
    /// The text typed before walking the history.
    draft: String,
    file: Option<PathBuf>,
}

/// A fresh text area with the interface's styles.
fn new_area(text: &str) -> TextArea<'static> {
    let lines: Vec<String> = if text.is_empty() {
        vec![String::new()]
    } else {
        text.split('\n').map(str::to_owned).collect()
    };
    let mut area = TextArea::new(lines);
    area.set_cursor_line_style(Style::default());
    area.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
    area.set_placeholder_text(
        "Message Elroy — Enter sends, Alt+Enter newline, Ctrl+P palette, Esc browse",
    );
    area.move_cursor(CursorMove::Bottom);
    area.move_cursor(CursorMove::End);
    area
}

impl Input {
    /// An empty editor with the history read from `file` (missing or unreadable: empty history).
    pub fn new(file: Option<PathBuf>) -> Self {
        let history = file.as_deref().map(read_history).unwrap_or_default();
        Input {
            area: new_area(""),
            history,
            pos: None,
            draft: String::new(),
            file,
        }
    }

    /// The text (lines joined with `\n`).
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(String::is_empty)
    }

    /// Replaces the text (cursor at the end).
    pub fn set_text(&mut self, text: &str) {
        self.area = new_area(text);
    }

    /// Clears the text and leaves the history walk.
    pub fn clear(&mut self) {
        self.set_text("");
        self.pos = None;
    }

    /// Takes the text for sending: adds it to the history (and the file), clears the editor.
    pub fn take(&mut self) -> String {
        let text = self.text();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if let Some(file) = &self.file {
                // The history is a convenience: a file that cannot be written is not an error.
                let _ = write_history(file, &self.history);
            }
        }
        self.clear();
        text
    }

    /// Up: the previous history entry, when the cursor is on the first line. Returns whether it
    /// moved through the history (else the key moves the cursor).
    pub fn history_up(&mut self) -> bool {
        if self.area.cursor().0 != 0 || self.history.is_empty() {
            return false;
        }
        let next = match self.pos {
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return true,
            Some(i) => i - 1,
        };
        self.pos = Some(next);
        let entry = self.history[next].clone();
        self.area = new_area(&entry);
        true
    }

    /// Down: the next history entry (or the draft), when the cursor is on the last line.
    pub fn history_down(&mut self) -> bool {
        let Some(i) = self.pos else { return false };
        if self.area.cursor().0 + 1 < self.area.lines().len() {
            return false;
        }
        if i + 1 < self.history.len() {
            self.pos = Some(i + 1);
            let entry = self.history[i + 1].clone();
            self.area = new_area(&entry);
        } else {
            self.pos = None;
            let draft = std::mem::take(&mut self.draft);
            self.area = new_area(&draft);
        }
        true
    }

    /// Ctrl+R: the newest history entry containing the current text (or the one before the entry
    /// shown), put in the editor. Returns whether one was found.
    pub fn search_history(&mut self) -> bool {
        let needle = match self.pos {
            Some(_) => self.draft.clone(),
            None => self.text(),
        };
        let before = self.pos.unwrap_or(self.history.len());
        let found = self.history[..before]
            .iter()
            .rposition(|h| h.contains(&needle));
        if let Some(i) = found {
            if self.pos.is_none() {
                self.draft = needle;
            }
            self.pos = Some(i);
            let entry = self.history[i].clone();
            self.area = new_area(&entry);
            true
        } else {
            false
        }
    }

    /// Rebuilds the editor's view with the same text and cursor: after a resize the text area
    /// would keep the scroll offset it took at the old size (after a shrink to a few rows and
    /// back, the typed text stayed hidden until Home).
    pub fn reset_view(&mut self) {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let text = self.text();
        self.area = new_area(&text);
        self.area.move_cursor(CursorMove::Jump(
            u16::try_from(row).unwrap_or(u16::MAX),
            u16::try_from(col).unwrap_or(u16::MAX),
        ));
    }

    /// Backspace: deletes the user-perceived character (grapheme cluster: a ZWJ sequence, a flag,
    /// a letter with its combining marks) before the cursor, or joins the line with the one
    /// above at its start. The text area itself deletes one code point, which leaves a
    /// half-character (`👩\u{200d}`) that the model would receive.
    pub fn backspace(&mut self) {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let n = self
            .area
            .lines()
            .get(row)
            .map_or(1, |line| cluster_before(line, col));
        for _ in 0..n.max(1) {
            self.area.delete_char();
        }
    }

    /// Delete: deletes the grapheme cluster after the cursor (at the end of a line, the newline).
    pub fn delete(&mut self) {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let n = self
            .area
            .lines()
            .get(row)
            .map_or(1, |line| cluster_after(line, col));
        for _ in 0..n.max(1) {
            self.area.delete_next_char();
        }
    }

    /// Left / Right: moves the cursor over one grapheme cluster (`forward`: right).
    pub fn step(&mut self, forward: bool) {
        let (row, col) = (self.area.cursor().0, self.area.cursor().1);
        let n = self.area.lines().get(row).map_or(1, |line| {
            if forward {
                cluster_after(line, col)
            } else {
                cluster_before(line, col)
            }
        });
        let step = if forward {
            CursorMove::Forward
        } else {
            CursorMove::Back
        };
        for _ in 0..n.max(1) {
            self.area.move_cursor(step);
        }
    }

    /// The number of text lines (the editor's height).
    pub fn line_count(&self) -> usize {
        self.area.lines().len()
    }
}

/// The number of chars (the text area's cursor unit) of the grapheme cluster that ends at char
/// column `col` of `line` (0 at the start of the line).
fn cluster_before(line: &str, col: usize) -> usize {
    let end = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    line[..end]
        .graphemes(true)
        .next_back()
        .map_or(0, |g| g.chars().count())
}

/// The number of chars of the grapheme cluster that starts at char column `col` of `line`
/// (0 at its end).
fn cluster_after(line: &str, col: usize) -> usize {
    let start = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    line[start..]
        .graphemes(true)
        .next()
        .map_or(0, |g| g.chars().count())
}

/// Reads a rustyline history file (`#V2` escaped, or the older unescaped one-entry-per-line form).
pub fn read_history(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    let v2 = text.starts_with("#V2");
    if v2 {
        lines.next();
    }
    lines
        .filter(|l| !l.is_empty())
        .map(|l| if v2 { unescape(l) } else { l.to_owned() })
        .collect()
}

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes the history in rustyline's `#V2` format (the newest [`HISTORY_MAX`] entries),
/// replacing the file atomically.
pub fn write_history(path: &Path, history: &[String]) -> std::io::Result<()> {
    let mut text = String::from("#V2\n");
    let start = history.len().saturating_sub(HISTORY_MAX);
    for entry in &history[start..] {
        text.push_str(&entry.replace('\\', "\\\\").replace('\n', "\\n"));
        text.push('\n');
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_round_trips_multi_line_entries_in_rustyline_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("cache").join("history");
        let mut input = Input::new(Some(file.clone()));
        input.set_text("first");
        input.take();
        input.set_text("two\nlines \\ here");
        assert_eq!(input.take(), "two\nlines \\ here");
        let raw = std::fs::read_to_string(&file).expect("written");
        assert_eq!(raw, "#V2\nfirst\ntwo\\nlines \\\\ here\n");
        let again = Input::new(Some(file));
        assert_eq!(again.history, ["first", "two\nlines \\ here"]);
    }

    /// Backspace, Delete and the arrows work on what a person sees as one character. Cases: the
    /// ZWJ sequence (`👩‍🔬x`, Backspace twice, `ok` gave `👩\u{200d}ok`), a flag
    /// (two regional indicators), a letter with a combining mark, and CJK (one char, two cells).
    #[test]
    fn editing_works_on_grapheme_clusters() {
        let mut input = Input::new(None);
        input.set_text("👩\u{200d}🔬x");
        input.backspace();
        input.backspace();
        input.area.insert_str("ok");
        assert_eq!(input.text(), "ok");

        input.set_text("go 🇵🇹!");
        input.step(false);
        input.step(false);
        input.area.insert_str("to ");
        assert_eq!(input.text(), "go to 🇵🇹!");
        input.delete();
        assert_eq!(input.text(), "go to !");

        input.set_text("cafe\u{301}s");
        input.step(false);
        input.backspace();
        assert_eq!(input.text(), "cafs");
        input.step(false);
        input.step(true);
        input.delete();
        assert_eq!(input.text(), "caf");

        input.set_text("東京x");
        input.backspace();
        input.backspace();
        assert_eq!(input.text(), "東");
        input.backspace();
        input.backspace();
        assert_eq!(input.text(), "");
    }

    #[test]
    fn up_and_down_walk_the_history_and_restore_the_draft() {
        let mut input = Input::new(None);
        input.history = vec!["one".into(), "two".into()];
        input.set_text("draft");
        assert!(input.history_up());
        assert_eq!(input.text(), "two");
        assert!(input.history_up());
        assert_eq!(input.text(), "one");
        assert!(input.history_down());
        assert!(input.history_down());
        assert_eq!(input.text(), "draft");
        input.set_text("on");
        assert!(input.search_history());
        assert_eq!(input.text(), "one");
    }
}
