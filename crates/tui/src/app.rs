//! The interface's state ([`App`]) and how it changes: keys, pasted text, mouse wheel, turn
//! events, tool results, sidebar loads and reminders all go through [`App`]'s methods, which
//! return the [`Action`]s the event loop carries out (start a turn, run a tool, …). Nothing here
//! does IO, so the tests drive it directly and draw it with ratatui's `TestBackend`.

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use elroy_commands::Input as Typed;
use elroy_orchestrator::TurnEvent;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};

use crate::conversation::{Entry, NoticeKind};
use crate::input::Input;
use crate::keys::{Context, KeyAction, lookup};
use crate::palette::{Form, Palette, PaletteAction, PaletteEntry};
use crate::sidebar::{Tab, TabKind, initial_tabs};
use crate::theme::Theme;

/// Below this width the sidebar is hidden (F2 still shows it).
pub const SIDEBAR_MIN_WIDTH: u16 = 100;

/// What the event loop must do after a state change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Start a turn with this message.
    Send(String),
    /// Cancel the running turn.
    Cancel,
    /// Run a tool through the registry with these raw JSON arguments. `form`: the call came
    /// from a form (a validation error goes back to it).
    RunTool {
        /// The tool name.
        name: String,
        /// The arguments as a JSON object text.
        arguments: String,
        /// Whether a form is waiting for the result.
        form: bool,
    },
    /// Run an interface command (`/agenda`, …) without the model.
    Command(String),
    /// Load the sidebar again.
    Refresh,
    /// Open this file in `$EDITOR`, then refresh.
    Edit(PathBuf),
    /// Ring the terminal bell.
    Bell,
    /// Start a turn the assistant begins on its own (`proactive_reminders`): this text is sent
    /// to the model, never stored or shown.
    Proactive(String),
    /// Suspend like a shell job (Ctrl+Z): restore the terminal, stop, set it up again when
    /// continued.
    Suspend,
    /// Start the session with this chat model and save the choice (the first-run panel).
    UseModel(elroy_commands::ModelChoice),
    /// Leave (after waiting for background work).
    Quit,
}

/// Where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Typing a message.
    Insert,
    /// Browsing: keys move through the conversation or the sidebar.
    Browse,
}

/// Which pane browse mode moves in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// The conversation (Enter expands a tool result).
    Conversation,
    /// The sidebar tabs.
    Sidebar,
}

/// A window over the main screen.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// The command palette.
    Palette(Palette),
    /// A tool's form.
    Form(Form),
    /// The detail view of a sidebar item (`tab`, `item` indexes). `confirm_delete`: `d` was
    /// pressed once.
    Detail {
        /// The tab index.
        tab: usize,
        /// The item index.
        item: usize,
        /// `c` or `d` pressed once ([`KeyAction::CompleteItem`], [`KeyAction::DeleteItem`]):
        /// the same key again does it.
        pending: Option<KeyAction>,
        /// The file as stored instead of the rendered item (`v`).
        raw: bool,
    },
}

/// The status bar's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// The chat model's name.
    pub model: String,
    /// The home directory as shown.
    pub home: String,
    /// The context's token estimate.
    pub tokens: Option<usize>,
    /// The running turn's phase (`thinking…`, `running add_agenda_item…`).
    pub phase: Option<String>,
    /// Background work running after a reply.
    pub background: Option<String>,
    /// MCP servers still starting or failed (`MCP: 1 starting; github failed`).
    pub mcp: Option<String>,
    /// The background embedding's progress (`embedding memories 32/700`).
    pub embedding: Option<String>,
    /// Spinner frame.
    pub tick: usize,
    /// A question waiting for a key (`c again to complete …`), shown in the status bar.
    pub ask: Option<String>,
}

/// One entry's rendered lines and what they were rendered from.
#[derive(Debug, Clone)]
pub struct CachedLines {
    /// The pane width.
    pub width: usize,
    /// Whether thoughts were shown.
    pub thoughts: bool,
    /// The entry as rendered.
    pub entry: Entry,
    /// The lines.
    pub lines: Vec<ratatui::text::Line<'static>>,
}

/// A due item that came due while the interface was open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reminder {
    /// The due item's name.
    pub name: String,
    /// Its text.
    pub text: String,
    /// The trigger time as shown (`09:00`).
    pub time: String,
}

/// The whole interface state.
#[derive(Debug)]
pub struct App {
    /// Colours.
    pub theme: Theme,
    /// The conversation.
    pub entries: Vec<Entry>,
    /// The input editor.
    pub input: Input,
    /// Insert or browse.
    pub mode: Mode,
    /// The pane browse mode moves in.
    pub pane: Pane,
    /// The open overlay.
    pub overlay: Option<Overlay>,
    /// Sidebar tabs.
    pub tabs: Vec<Tab>,
    /// The shown tab.
    pub tab: usize,
    /// The selected row of the shown tab.
    pub row: usize,
    /// The selected conversation entry in browse mode.
    pub entry: Option<usize>,
    /// F2: `Some(shown)` overrides the width rule.
    pub sidebar_toggle: Option<bool>,
    /// The status bar.
    pub status: Status,
    /// A turn is running.
    pub turn_running: bool,
    /// Messages sent while a turn ran, in order.
    pub queue: VecDeque<String>,
    /// Show thoughts (`show_internal_thought`).
    pub show_thoughts: bool,
    /// `proactive_reminders`: a reminder that comes due while no turn runs starts one.
    pub proactive: bool,
    /// The first visible conversation line; `None` follows the end.
    pub scroll_top: Option<usize>,
    /// (total lines, visible height) of the last drawn conversation.
    pub geometry: Cell<(usize, usize)>,
    /// The terminal width of the last draw (F2 toggles from what was shown).
    pub last_width: Cell<u16>,
    /// Rendered lines of each entry, reused while the entry and the width are unchanged (a
    /// streaming reply re-renders only itself).
    pub line_cache: RefCell<Vec<Option<CachedLines>>>,
    /// The reply being streamed (index into `entries`).
    current: Option<usize>,
    /// Every tool for the palette.
    pub tools: Vec<PaletteEntry>,
    /// Interface commands for the palette (`/agenda`, …) with their descriptions.
    pub commands: Vec<(String, String)>,
    /// Names for Tab completion of command arguments (models, memories).
    pub completion: elroy_commands::CompletionNames,
    /// Due items named in reminders while open (highlighted in the Due tab).
    pub reminded: HashSet<String>,
    /// Set when the interface should end.
    pub quitting: bool,
    /// The first-run panel, while no chat model is usable ([`crate::first_run`]).
    pub first_run: Option<crate::first_run::FirstRun>,
}

impl App {
    /// A fresh interface: the given theme, history file and plugin panel titles.
    pub fn new(theme: Theme, history: Option<PathBuf>, panels: &[String]) -> Self {
        App {
            theme,
            entries: Vec::new(),
            input: Input::new(history),
            mode: Mode::Insert,
            pane: Pane::Sidebar,
            overlay: None,
            tabs: initial_tabs(panels),
            tab: 0,
            row: 0,
            entry: None,
            sidebar_toggle: None,
            status: Status::default(),
            turn_running: false,
            queue: VecDeque::new(),
            show_thoughts: true,
            proactive: false,
            scroll_top: None,
            geometry: Cell::new((0, 0)),
            last_width: Cell::new(SIDEBAR_MIN_WIDTH),
            line_cache: RefCell::new(Vec::new()),
            current: None,
            tools: Vec::new(),
            commands: elroy_commands::COMMANDS
                .iter()
                .map(|c| (format!("/{}", c.name), c.help.to_owned()))
                .collect(),
            completion: elroy_commands::CompletionNames::default(),
            reminded: HashSet::new(),
            quitting: false,
            first_run: None,
        }
    }

    /// The number of lines entry `index` takes at `width`: exact when it was laid out at that
    /// width, else estimated from its lines at another width (the cells scaled), so a resize
    /// lays out only the entries that come into view; an entry never laid out, or changed since,
    /// is laid out now.
    pub fn entry_height(&self, index: usize, width: usize) -> usize {
        {
            let cache = self.line_cache.borrow();
            if let (Some(Some(c)), Some(entry)) = (cache.get(index), self.entries.get(index))
                && c.thoughts == self.show_thoughts
                && c.entry == *entry
            {
                if c.width == width {
                    return c.lines.len();
                }
                let cells: usize = c.lines.iter().map(|l| l.width().max(1)).sum();
                return cells.div_ceil(width.max(1)).max(1);
            }
        }
        self.entry_lines(index, width).len()
    }

    /// The lines of entry `index` at `width`, from the cache when nothing changed.
    pub fn entry_lines(&self, index: usize, width: usize) -> Vec<ratatui::text::Line<'static>> {
        let Some(entry) = self.entries.get(index) else {
            return Vec::new();
        };
        let mut cache = self.line_cache.borrow_mut();
        if cache.len() != self.entries.len() {
            cache.resize(self.entries.len(), None);
        }
        if let Some(Some(c)) = cache.get(index)
            && c.width == width
            && c.thoughts == self.show_thoughts
            && c.entry == *entry
        {
            return c.lines.clone();
        }
        let lines = entry.lines(width, &self.theme, self.show_thoughts);
        cache[index] = Some(CachedLines {
            width,
            thoughts: self.show_thoughts,
            entry: entry.clone(),
            lines: lines.clone(),
        });
        lines
    }

    /// Whether the sidebar is drawn at `width` columns.
    pub fn sidebar_shown(&self, width: u16) -> bool {
        self.sidebar_toggle.unwrap_or(width >= SIDEBAR_MIN_WIDTH)
    }

    /// Adds a line from the interface to the conversation.
    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.entries.push(Entry::Notice(kind, text.into()));
    }

    /// Adds a hint unless it is already the conversation's last line (Ctrl+C pressed again on an
    /// empty input added the same sentence each time).
    pub fn hint(&mut self, text: &str) {
        if matches!(self.entries.last(), Some(Entry::Notice(NoticeKind::Info, last)) if last == text)
        {
            return;
        }
        self.notice(NoticeKind::Info, text);
    }

    // ----- text and turns -----

    /// Submits what the input holds (parsed by elroy-commands): a command runs at once without
    /// the model, an unknown `/word` lists the commands, a message starts a turn or is queued
    /// while one runs (`//text` sends `/text`).
    fn submit(&mut self) -> Vec<Action> {
        if self.input.is_empty() {
            return Vec::new();
        }
        if let Some(actions) = crate::first_run::submit(self) {
            return actions;
        }
        let text = self.input.take();
        match elroy_commands::parse(&text) {
            Typed::Empty => Vec::new(),
            Typed::NotCommand(message) => self.send(message),
            Typed::Command(elroy_commands::Command::Exit) => {
                self.quitting = true;
                vec![Action::Quit]
            }
            Typed::Command(_) => {
                self.entries.push(Entry::User(text.trim().to_owned()));
                self.scroll_top = None;
                vec![Action::Command(text.trim().to_owned())]
            }
            Typed::Unknown { word } => {
                self.entries.push(Entry::User(text.trim().to_owned()));
                self.entries.push(Entry::Output {
                    text: elroy_commands::unknown_message(&word).join("\n"),
                    is_error: true,
                });
                self.scroll_top = None;
                Vec::new()
            }
            Typed::Invalid { message } => {
                self.entries.push(Entry::User(text.trim().to_owned()));
                self.entries.push(Entry::Output {
                    text: message,
                    is_error: true,
                });
                self.scroll_top = None;
                Vec::new()
            }
        }
    }

    /// A command's output (markdown lines) in the conversation.
    pub fn on_command_output(&mut self, lines: &[String], is_error: bool) {
        if !lines.is_empty() {
            self.entries.push(Entry::Output {
                text: lines.join("\n"),
                is_error,
            });
        }
        self.scroll_top = None;
    }

    fn send(&mut self, text: String) -> Vec<Action> {
        if self.turn_running {
            self.queue.push_back(text);
            let n = self.queue.len();
            self.notice(
                NoticeKind::Info,
                format!("Queued ({n} waiting): it is sent when the current reply ends."),
            );
            return Vec::new();
        }
        self.start_turn(text)
    }

    fn start_turn(&mut self, text: String) -> Vec<Action> {
        self.entries.push(Entry::User(text.clone()));
        self.entries.push(Entry::streaming_reply());
        self.current = Some(self.entries.len() - 1);
        self.turn_running = true;
        self.status.phase = Some("thinking…".into());
        self.scroll_top = None;
        vec![Action::Send(text)]
    }

    fn reply_mut(&mut self) -> &mut Entry {
        let fresh = match self.current {
            Some(i) => !matches!(self.entries.get(i), Some(Entry::Assistant { .. })),
            None => true,
        };
        if fresh {
            self.entries.push(Entry::streaming_reply());
            self.current = Some(self.entries.len() - 1);
        }
        let i = self.current.unwrap_or(self.entries.len() - 1);
        &mut self.entries[i]
    }

    /// A turn event from the orchestrator.
    pub fn on_turn_event(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::Status(text) => {
                self.status.phase = Some(text.replace("...", "…"));
            }
            TurnEvent::Injected { text, .. } => {
                if self.show_thoughts
                    && let Entry::Assistant { thought, .. } = self.reply_mut()
                {
                    thought.push_str(&text);
                    thought.push('\n');
                }
            }
            TurnEvent::ThoughtDelta(delta) => {
                if let Entry::Assistant { thought, .. } = self.reply_mut() {
                    thought.push_str(&delta);
                }
            }
            TurnEvent::TextDelta(delta) => {
                if let Entry::Assistant { text, .. } = self.reply_mut() {
                    text.push_str(&delta);
                }
            }
            TurnEvent::CodeBlock { language, content } => {
                if let Entry::Assistant { text, .. } = self.reply_mut() {
                    text.push_str(&elroy_orchestrator::fenced(&language, &content));
                }
            }
            TurnEvent::ToolCall {
                name, arguments, ..
            } => {
                self.finish_reply(false);
                self.status.phase = Some(format!("running {name}…"));
                self.entries.push(Entry::Tool {
                    name,
                    arguments,
                    result: None,
                    expanded: false,
                });
            }
            TurnEvent::ToolResult {
                name,
                content,
                is_error,
                ..
            } => {
                let slot = self.entries.iter_mut().rev().find_map(|e| match e {
                    Entry::Tool {
                        name: n, result, ..
                    } if *n == name && result.is_none() => Some(result),
                    _ => None,
                });
                if let Some(result) = slot {
                    *result = Some((content, is_error));
                }
            }
            TurnEvent::Error(message) => {
                self.finish_reply(false);
                self.notice(NoticeKind::Warning, format!("error: {message}"));
            }
            TurnEvent::Cancelled => self.finish_reply(true),
            TurnEvent::Done => self.finish_reply(false),
        }
    }

    /// Ends the streaming reply; drops it when nothing was streamed and it was not cancelled.
    fn finish_reply(&mut self, cancelled: bool) {
        if let Some(i) = self.current.take()
            && let Some(Entry::Assistant {
                text,
                thought,
                streaming,
                cancelled: c,
            }) = self.entries.get_mut(i)
        {
            *streaming = false;
            *c = cancelled;
            if text.is_empty() && thought.is_empty() && !cancelled {
                self.entries.remove(i);
            }
        }
    }

    /// The running turn ended (finished, failed or cancelled). Starts the next queued message.
    pub fn on_turn_end(&mut self) -> Vec<Action> {
        self.finish_reply(false);
        self.turn_running = false;
        self.status.phase = None;
        let mut actions = vec![Action::Refresh];
        if let Some(next) = self.queue.pop_front() {
            actions.extend(self.start_turn(next));
        }
        actions
    }

    /// A tool run from the palette or browse mode finished.
    pub fn on_tool_result(
        &mut self,
        name: &str,
        arguments: &str,
        content: String,
        is_error: bool,
        form: bool,
    ) -> Vec<Action> {
        if form
            && is_error
            && let Some(Overlay::Form(f)) = &mut self.overlay
        {
            f.error = Some(content);
            return Vec::new();
        }
        if form {
            self.overlay = None;
        }
        self.entries.push(Entry::Tool {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            result: Some((content, is_error)),
            expanded: false,
        });
        self.scroll_top = None;
        vec![Action::Refresh]
    }

    /// New sidebar contents (the selection is kept when it still exists).
    pub fn on_sidebar(&mut self, mut tabs: Vec<Tab>) {
        for tab in &mut tabs {
            if tab.kind == TabKind::Due {
                for item in &mut tab.items {
                    item.highlight = self.reminded.contains(&item.name);
                }
            }
        }
        if let Some(memories) = tabs.iter().find(|t| t.kind == TabKind::Memories) {
            self.completion.memories = memories.items.iter().map(|i| i.name.clone()).collect();
        }
        self.tabs = tabs;
        self.tab = self.tab.min(self.tabs.len().saturating_sub(1));
        let len = self.tabs.get(self.tab).map_or(0, |t| t.items.len());
        self.row = self.row.min(len.saturating_sub(1));
    }

    /// Due items that came due: reminder lines, highlighted in the Due tab, a bell.
    pub fn on_reminders(&mut self, reminders: Vec<Reminder>) -> Vec<Action> {
        if reminders.is_empty() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for r in reminders {
            let body = if r.text.trim().is_empty() || r.text.trim() == r.name {
                String::new()
            } else {
                format!(" — {}", r.text.trim())
            };
            let line = format!("{} {}{body}", r.time, r.name);
            lines.push(line.clone());
            self.notice(NoticeKind::Reminder, line);
            self.reminded.insert(r.name.clone());
            for tab in &mut self.tabs {
                if tab.kind == TabKind::Due {
                    for item in &mut tab.items {
                        if item.name == r.name {
                            item.highlight = true;
                        }
                    }
                }
            }
        }
        self.scroll_top = None;
        let mut actions = vec![Action::Bell, Action::Refresh];
        if self.proactive && !self.turn_running && self.queue.is_empty() && self.first_run.is_none()
        {
            self.entries.push(Entry::streaming_reply());
            self.current = Some(self.entries.len() - 1);
            self.turn_running = true;
            self.status.phase = Some("thinking…".into());
            actions.push(Action::Proactive(proactive_message(&lines)));
        }
        actions
    }

    // ----- keys -----

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

    fn open_palette(&mut self) {
        let mut entries: Vec<PaletteEntry> = self
            .tools
            .iter()
            .filter(|e| crate::palette::shown_in_palette(&e.name))
            .cloned()
            .collect();
        entries.extend(
            self.commands
                .iter()
                .map(|(name, description)| PaletteEntry {
                    name: name.clone(),
                    description: description.clone(),
                    action: PaletteAction::Command(name.clone()),
                }),
        );
        self.overlay = Some(Overlay::Palette(Palette::new(entries)));
    }

    fn palette_key(&mut self, mut p: Palette, key: KeyEvent) -> Vec<Action> {
        match key.code {
            KeyCode::Esc => return Vec::new(),
            KeyCode::Up => p.step(-1),
            KeyCode::Down | KeyCode::Tab => p.step(1),
            KeyCode::Backspace => {
                let mut q = p.query.clone();
                q.pop();
                p.set_query(q);
            }
            KeyCode::Enter => {
                let Some(entry) = p.current().cloned() else {
                    self.overlay = Some(Overlay::Palette(p));
                    return Vec::new();
                };
                return match entry.action {
                    PaletteAction::Command(command) => {
                        self.input.set_text(&format!("{command} "));
                        self.mode = Mode::Insert;
                        Vec::new()
                    }
                    PaletteAction::Tool(spec) => match Form::for_spec(&spec) {
                        Some(mut form) => {
                            self.fill_names(&mut form);
                            self.overlay = Some(Overlay::Form(form));
                            Vec::new()
                        }
                        None => vec![Action::RunTool {
                            name: spec.name,
                            arguments: "{}".into(),
                            form: false,
                        }],
                    },
                };
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                let q = format!("{}{c}", p.query);
                p.set_query(q);
            }
            _ => {}
        }
        self.overlay = Some(Overlay::Palette(p));
        Vec::new()
    }

    /// Gives each `*name` field of `form` the names it can take, from the sidebar's tabs.
    fn fill_names(&self, form: &mut Form) {
        for field in &mut form.fields {
            let kind = match field.name.as_str() {
                "item_name" => Some(TabKind::Agenda),
                "name" | "old_name" if form.tool.contains("due") => Some(TabKind::Due),
                "memory_name" => Some(TabKind::Memories),
                "identifier" if form.tool.contains("feature_request") => Some(TabKind::Requests),
                _ => None,
            };
            if let Some(kind) = kind
                && let Some(tab) = self.tabs.iter().find(|t| t.kind == kind)
            {
                field.names = tab.items.iter().map(|i| i.name.clone()).collect();
            }
        }
    }

    fn form_key(&mut self, mut f: Form, key: KeyEvent) -> Vec<Action> {
        match key.code {
            KeyCode::Esc => return Vec::new(),
            KeyCode::Tab | KeyCode::Down => f.focus = (f.focus + 1) % f.fields.len().max(1),
            KeyCode::BackTab | KeyCode::Up => {
                f.focus = (f.focus + f.fields.len().max(1) - 1) % f.fields.len().max(1)
            }
            KeyCode::Left => f.cycle(-1),
            KeyCode::Right => f.cycle(1),
            KeyCode::Backspace => {
                if let Some(field) = f.field_mut() {
                    field.value.pop();
                }
            }
            KeyCode::Enter
                if key
                    .modifiers
                    .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT) =>
            {
                if let Some(field) = f.field_mut() {
                    field.value.push('\n');
                }
            }
            KeyCode::Enter => {
                let action = Action::RunTool {
                    name: f.tool.clone(),
                    arguments: f.arguments(),
                    form: true,
                };
                f.error = None;
                self.overlay = Some(Overlay::Form(f));
                return vec![action];
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                if let Some(field) = f.field_mut() {
                    if field.choices.is_some() {
                        // Enum fields take only their choices (Left/Right); typing picks the
                        // first choice starting with what is typed.
                        let typed = format!("{}{c}", field.value);
                        if let Some(choice) = field.choices.as_ref().and_then(|cs| {
                            cs.iter()
                                .find(|x| x.starts_with(&typed) || x.starts_with(c))
                        }) {
                            field.value = choice.clone();
                        }
                    } else {
                        field.value.push(c);
                    }
                }
            }
            _ => {}
        }
        self.overlay = Some(Overlay::Form(f));
        Vec::new()
    }

    fn browse_key(&mut self, key: KeyEvent, asked: bool) -> Vec<Action> {
        match lookup(Context::Browse, &key) {
            Some(KeyAction::Insert) => {
                self.mode = Mode::Insert;
                self.entry = None;
            }
            Some(KeyAction::SwitchPane) => {
                self.pane = match self.pane {
                    Pane::Conversation => Pane::Sidebar,
                    Pane::Sidebar => Pane::Conversation,
                };
            }
            Some(KeyAction::Down) => self.browse_move(1),
            Some(KeyAction::Up) => self.browse_move(-1),
            Some(KeyAction::PreviousTab) => self.pick_tab(
                self.tab
                    .checked_sub(1)
                    .unwrap_or(self.tabs.len().saturating_sub(1)),
            ),
            Some(KeyAction::NextTab) => self.pick_tab((self.tab + 1) % self.tabs.len().max(1)),
            Some(KeyAction::Open) => match self.pane {
                Pane::Sidebar => {
                    if self
                        .tabs
                        .get(self.tab)
                        .is_some_and(|t| self.row < t.items.len())
                    {
                        self.overlay = Some(Overlay::Detail {
                            tab: self.tab,
                            item: self.row,
                            pending: None,
                            raw: false,
                        });
                    }
                }
                Pane::Conversation => {
                    if let Some(Entry::Tool { expanded, .. }) =
                        self.entry.and_then(|i| self.entries.get_mut(i))
                    {
                        *expanded = !*expanded;
                    }
                }
            },
            Some(KeyAction::CompleteItem) if self.pane == Pane::Sidebar => {
                if asked {
                    return self.complete_selected(self.tab, self.row);
                }
                self.ask_complete(self.tab, self.row);
            }
            _ => {
                if let KeyCode::Char(c) = key.code
                    && let Some(i) = crate::keys::tab_for_key(&self.tabs, c)
                {
                    self.pick_tab(i);
                }
            }
        }
        Vec::new()
    }

    /// The first `c` on an item: asks for the second (as delete asks for `d d`).
    fn ask_complete(&mut self, tab: usize, item: usize) {
        let Some(t) = self.tabs.get(tab) else { return };
        let Some(it) = t.items.get(item) else { return };
        if t.kind.complete_tool().is_none() {
            self.hint("Items of this tab cannot be completed.");
            return;
        }
        self.status.ask = Some(format!("c again to complete '{}'", it.label));
    }

    fn pick_tab(&mut self, i: usize) {
        if i < self.tabs.len() {
            self.tab = i;
            self.row = 0;
            self.pane = Pane::Sidebar;
        }
    }

    fn browse_move(&mut self, delta: isize) {
        match self.pane {
            Pane::Sidebar => {
                let len = self.tabs.get(self.tab).map_or(0, |t| t.items.len());
                if len > 0 {
                    self.row = self.row.saturating_add_signed(delta).min(len - 1);
                }
            }
            Pane::Conversation => {
                // Moves between tool blocks (Enter expands one); scrolls when there are none.
                let tools: Vec<usize> = self
                    .entries
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| matches!(e, Entry::Tool { .. }))
                    .map(|(i, _)| i)
                    .collect();
                if tools.is_empty() {
                    self.scroll_by(delta * 3);
                    return;
                }
                let at = self
                    .entry
                    .and_then(|e| tools.iter().position(|&t| t == e))
                    .unwrap_or(tools.len());
                let next = at.saturating_add_signed(delta).min(tools.len() - 1);
                self.entry = Some(tools[next]);
            }
        }
    }

    fn item_tool(&self, tab: usize, item: usize, delete: bool) -> Option<Action> {
        let t = self.tabs.get(tab)?;
        let it = t.items.get(item)?;
        let (tool, arg) = if delete {
            t.kind.delete_tool()?
        } else {
            t.kind.complete_tool()?
        };
        let mut args = serde_json::Map::new();
        args.insert(arg.to_owned(), it.name.clone().into());
        if tool == "edit_feature_request" {
            args.insert("status".into(), "done".into());
        }
        Some(Action::RunTool {
            name: tool.to_owned(),
            arguments: serde_json::Value::Object(args).to_string(),
            form: false,
        })
    }

    fn complete_selected(&mut self, tab: usize, item: usize) -> Vec<Action> {
        match self.item_tool(tab, item, false) {
            Some(action) => vec![action],
            None => {
                self.hint("Items of this tab cannot be completed.");
                Vec::new()
            }
        }
    }

    fn detail_key(
        &mut self,
        tab: usize,
        item: usize,
        pending: Option<KeyAction>,
        raw: bool,
        key: KeyEvent,
    ) -> Vec<Action> {
        let keep = |app: &mut App, pending: Option<KeyAction>, raw: bool| {
            app.overlay = Some(Overlay::Detail {
                tab,
                item,
                pending,
                raw,
            });
        };
        let action = lookup(Context::Detail, &key);
        match action {
            Some(KeyAction::Close) => Vec::new(),
            Some(KeyAction::CompleteItem) if pending == action => self.complete_selected(tab, item),
            Some(KeyAction::DeleteItem) if pending == action => {
                self.item_tool(tab, item, true).into_iter().collect()
            }
            Some(KeyAction::CompleteItem | KeyAction::DeleteItem) => {
                let kind = self.tabs.get(tab).map(|t| t.kind.clone());
                let possible = kind.is_some_and(|k| {
                    if action == Some(KeyAction::DeleteItem) {
                        k.delete_tool().is_some()
                    } else {
                        k.complete_tool().is_some()
                    }
                });
                if possible {
                    keep(self, action, raw);
                } else {
                    keep(self, None, raw);
                    self.hint(if action == Some(KeyAction::DeleteItem) {
                        "Items of this tab cannot be deleted here."
                    } else {
                        "Items of this tab cannot be completed."
                    });
                }
                Vec::new()
            }
            Some(KeyAction::EditItem) => {
                let path = self
                    .tabs
                    .get(tab)
                    .and_then(|t| t.items.get(item))
                    .and_then(|i| i.path.clone());
                keep(self, None, raw);
                path.map(Action::Edit).into_iter().collect()
            }
            Some(KeyAction::ToggleRaw) => {
                keep(self, None, !raw);
                Vec::new()
            }
            _ => {
                keep(self, None, raw);
                Vec::new()
            }
        }
    }
}

/// What a proactive turn tells the model (sent, never stored): the user said nothing; these due
/// items just came due (they are also injected as due items, K5).
pub fn proactive_message(lines: &[String]) -> String {
    format!(
        "[No message from the user: this turn was started by elroy because a reminder came due \
         while the conversation was open: {}. Speak first: remind the user briefly, and act on \
         it if it asks for something you can do with your tools.]",
        lines.join("; ")
    )
}
