//! Keys, pasted text and the mouse: a key is looked up in the key table ([`crate::keys`]) for
//! the window or mode it reaches and handed to the overlay, insert mode or browse mode.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use super::{Action, App, Mode, Overlay, Pane};
use crate::conversation::NoticeKind;
use crate::keys::{Context, KeyAction, lookup};

impl App {
    /// Text pasted into the terminal (newlines kept).
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.overlay {
            Some(Overlay::Palette(p)) => {
                let q = format!("{}{}", p.query, text.replace('\n', " "));
                p.set_query(q);
            }
            Some(Overlay::Form(f)) => {
                if let Some(field) = f.field_mut() {
                    field.value.push_str(text);
                }
            }
            Some(Overlay::Detail { .. }) => {}
            None => {
                self.mode = Mode::Insert;
                self.input
                    .area
                    .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
            }
        }
    }

    /// The terminal was resized: the input's scroll is computed again for the new size.
    pub fn on_resize(&mut self) {
        self.input.reset_view();
    }

    /// The mouse: the wheel scrolls the conversation.
    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll_by(-3),
            MouseEventKind::ScrollDown => self.scroll_by(3),
            _ => {}
        }
    }

    /// Scrolls the conversation by `delta` lines (negative: up). Reaching the end follows it again.
    pub fn scroll_by(&mut self, delta: isize) {
        let (total, height) = self.geometry.get();
        let bottom = total.saturating_sub(height);
        let top = self.scroll_top.unwrap_or(bottom);
        let next = top.saturating_add_signed(delta).min(bottom);
        self.scroll_top = if next >= bottom { None } else { Some(next) };
    }

    fn page(&self) -> isize {
        isize::try_from(self.geometry.get().1.saturating_sub(2).max(1)).unwrap_or(1)
    }

    /// A key press: looked up in the key table ([`crate::keys`]) for the window or mode it
    /// reaches; what the table does not list is typing.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if let Some(actions) = crate::first_run::on_key(self, &key) {
            return actions;
        }
        // A question waits for one key: any other answer drops it.
        let asked = self.status.ask.take();
        match lookup(Context::Everywhere, &key) {
            Some(KeyAction::Interrupt) => return self.ctrl_c(),
            Some(KeyAction::Suspend) => return vec![Action::Suspend],
            Some(KeyAction::Palette) => {
                self.open_palette();
                return Vec::new();
            }
            Some(KeyAction::ToggleSidebar) => {
                let shown = self.sidebar_shown(self.last_width.get());
                self.sidebar_toggle = Some(!shown);
                return Vec::new();
            }
            Some(KeyAction::PageUp) => {
                self.scroll_by(-self.page());
                return Vec::new();
            }
            Some(KeyAction::PageDown) => {
                self.scroll_by(self.page());
                return Vec::new();
            }
            _ => {}
        }
        match self.overlay.take() {
            Some(Overlay::Palette(p)) => self.palette_key(p, key),
            Some(Overlay::Form(f)) => self.form_key(f, key),
            Some(Overlay::Detail {
                tab,
                item,
                pending,
                raw,
            }) => self.detail_key(tab, item, pending, raw, key),
            None => match self.mode {
                Mode::Insert => self.insert_key(key),
                Mode::Browse => self.browse_key(key, asked.is_some()),
            },
        }
    }

    fn ctrl_c(&mut self) -> Vec<Action> {
        if self.overlay.take().is_some() {
            return Vec::new();
        }
        if self.turn_running {
            return vec![Action::Cancel];
        }
        if !self.input.is_empty() {
            self.input.clear();
        } else {
            self.hint("Ctrl+D on an empty input (or /exit) leaves elroy.");
        }
        Vec::new()
    }

    fn insert_key(&mut self, key: KeyEvent) -> Vec<Action> {
        match lookup(Context::Insert, &key) {
            Some(KeyAction::Newline) => self.input.area.insert_newline(),
            Some(KeyAction::Send) => return self.submit(),
            Some(KeyAction::Leave) if self.input.is_empty() => {
                self.quitting = true;
                return vec![Action::Quit];
            }
            Some(KeyAction::HistorySearch) => {
                if !self.input.search_history() {
                    self.hint("No earlier entry in the history matches.");
                }
            }
            Some(KeyAction::Browse) => {
                self.mode = Mode::Browse;
                self.pane = if self.tabs.is_empty() {
                    Pane::Conversation
                } else {
                    Pane::Sidebar
                };
            }
            Some(KeyAction::HistoryPrevious) => {
                if !self.input.history_up() {
                    self.input.area.input(key);
                }
            }
            Some(KeyAction::HistoryNext) => {
                if !self.input.history_down() {
                    self.input.area.input(key);
                }
            }
            Some(KeyAction::CompleteCommand) => self.complete_command(),
            _ => self.edit_key(key),
        }
        Vec::new()
    }

    /// A key the table does not list, in the input: the text editor's, except that Backspace,
    /// Delete and the arrows move over whole user-perceived characters (the editor's unit is a
    /// code point).
    fn edit_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Backspace if key.modifiers.is_empty() => self.input.backspace(),
            KeyCode::Delete if key.modifiers.is_empty() => self.input.delete(),
            KeyCode::Left if key.modifiers.is_empty() => self.input.step(false),
            KeyCode::Right if key.modifiers.is_empty() => self.input.step(true),
            _ => {
                self.input.area.input(key);
            }
        }
    }

    /// Tab in the input: completes a command name or argument (elroy-commands); several
    /// candidates are listed, one replaces the word.
    fn complete_command(&mut self) {
        let text = self.input.text();
        if text.contains('\n') {
            return;
        }
        let candidates = elroy_commands::complete(&text, text.len(), &self.completion);
        match candidates.as_slice() {
            [one] => {
                let mut line = text[..one.start.min(text.len())].to_owned();
                line.push_str(&one.replacement);
                line.push(' ');
                self.input.set_text(&line);
            }
            [] => {}
            many => {
                let list: Vec<&str> = many.iter().map(|c| c.replacement.as_str()).collect();
                self.notice(NoticeKind::Info, list.join("  "));
            }
        }
    }
}
