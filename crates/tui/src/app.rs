//! The interface's state ([`App`]) and how it changes: keys, pasted text, mouse wheel, turn
//! events, tool results, sidebar loads and reminders all go through [`App`]'s methods, which
//! return the [`Action`]s the event loop carries out (start a turn, run a tool, …). Nothing here
//! does IO, so the tests drive it directly and draw it with ratatui's `TestBackend`.
//!
//! This file holds the state and its small queries; the changes live beside it, one concern
//! each: `turns` (text, turns, tool results, sidebar loads, reminders), `keyboard` (keys,
//! paste, mouse, scrolling), `overlays` (palette and forms) and `browse` (browse mode and the
//! detail view).

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use crate::conversation::{Entry, NoticeKind};
use crate::input::Input;
use crate::keys::KeyAction;
use crate::palette::{Form, Palette, PaletteEntry};
use crate::sidebar::{Tab, initial_tabs};
use crate::theme::Theme;

mod browse;
mod keyboard;
mod overlays;
mod turns;

pub use turns::proactive_message;

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
}
