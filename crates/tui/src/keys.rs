//! The key table: every key the interface answers, where it works and what it does. The event
//! handlers in [`crate::app`] look keys up here ([`lookup`]) and `/help` lists this same table
//! ([`help_lines`]), so the help cannot drift from what the keys do. Editing keys inside the
//! input (letters, Backspace, arrows, Home/End) belong to the text editor and are not listed.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::sidebar::Tab;

/// Where a key works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Everywhere, over any window.
    Everywhere,
    /// Typing a message.
    Insert,
    /// Browse mode (after Esc).
    Browse,
    /// An item's detail view.
    Detail,
}

impl Context {
    fn heading(self) -> &'static str {
        match self {
            Context::Everywhere => "Everywhere",
            Context::Insert => "Typing",
            Context::Browse => "Browse mode (Esc)",
            Context::Detail => "An item's detail (Enter in browse mode)",
        }
    }
}

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
    /// Cancel the streaming reply, else clear the input, else close the window over the screen.
    Interrupt,
    /// Open the command palette.
    Palette,
    /// Show or hide the sidebar.
    ToggleSidebar,
    /// Scroll the conversation up a page.
    PageUp,
    /// Scroll the conversation down a page.
    PageDown,
    /// Suspend elroy like a shell job.
    Suspend,
    /// A new line in the input.
    Newline,
    /// Send the input.
    Send,
    /// Leave elroy (on an empty input).
    Leave,
    /// The newest earlier message containing what is typed.
    HistorySearch,
    /// Browse mode.
    Browse,
    /// The previous message from the history (on the first line).
    HistoryPrevious,
    /// The next message from the history (on the last line).
    HistoryNext,
    /// Complete a `/command` name or argument.
    CompleteCommand,
    /// Back to typing.
    Insert,
    /// Switch between the sidebar and the conversation.
    SwitchPane,
    /// Move down.
    Down,
    /// Move up.
    Up,
    /// The previous sidebar tab.
    PreviousTab,
    /// The next sidebar tab.
    NextTab,
    /// Open the selected item's detail, or expand the selected tool block.
    Open,
    /// Complete the selected item (asks for the key again to confirm).
    CompleteItem,
    /// Delete the item (asks for the key again to confirm).
    DeleteItem,
    /// Open the item's file in the editor.
    EditItem,
    /// Show the item's file as stored, or the rendered item again.
    ToggleRaw,
    /// Close the detail view.
    Close,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// Where it works.
    pub context: Context,
    /// The keys (code and exact modifiers; a letter's Shift is ignored).
    pub keys: &'static [(KeyCode, KeyModifiers)],
    /// How `/help` writes the keys.
    pub label: &'static str,
    /// What it asks for.
    pub action: KeyAction,
    /// What `/help` says it does.
    pub does: &'static str,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;

/// Every key, in the order `/help` lists them. Within a context the first match wins (Alt+Enter
/// before Enter).
pub const BINDINGS: &[Binding] = &[
    Binding {
        context: Context::Everywhere,
        keys: &[(KeyCode::Char('c'), CTRL)],
        label: "Ctrl+C",
        action: KeyAction::Interrupt,
        does: "cancel the streaming reply (its text is kept); else clear the input or close the window",
    },
    Binding {
        context: Context::Everywhere,
        keys: &[(KeyCode::Char('p'), CTRL)],
        label: "Ctrl+P",
        action: KeyAction::Palette,
        does: "the command palette: every tool and command, fuzzy-filtered",
    },
    Binding {
        context: Context::Everywhere,
        keys: &[(KeyCode::F(2), NONE)],
        label: "F2",
        action: KeyAction::ToggleSidebar,
        does: "show or hide the sidebar",
    },
    Binding {
        context: Context::Everywhere,
        keys: &[(KeyCode::PageUp, NONE)],
        label: "PageUp",
        action: KeyAction::PageUp,
        does: "scroll the conversation up (the mouse wheel too)",
    },
    Binding {
        context: Context::Everywhere,
        keys: &[(KeyCode::PageDown, NONE)],
        label: "PageDown",
        action: KeyAction::PageDown,
        does: "scroll the conversation down",
    },
    Binding {
        context: Context::Everywhere,
        keys: &[(KeyCode::Char('z'), CTRL)],
        label: "Ctrl+Z",
        action: KeyAction::Suspend,
        does: "suspend elroy (the shell's `fg` brings it back)",
    },
    Binding {
        context: Context::Insert,
        keys: &[
            (KeyCode::Enter, KeyModifiers::ALT),
            (KeyCode::Enter, KeyModifiers::SHIFT),
            (KeyCode::Char('j'), CTRL),
        ],
        label: "Alt+Enter, Shift+Enter, Ctrl+J",
        action: KeyAction::Newline,
        does: "a new line",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Enter, NONE)],
        label: "Enter",
        action: KeyAction::Send,
        does: "send (while a reply streams, the message waits for it)",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Char('d'), CTRL)],
        label: "Ctrl+D",
        action: KeyAction::Leave,
        does: "leave elroy (on an empty input; `/exit` too)",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Char('r'), CTRL)],
        label: "Ctrl+R",
        action: KeyAction::HistorySearch,
        does: "the newest earlier message containing what is typed",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Up, NONE)],
        label: "Up",
        action: KeyAction::HistoryPrevious,
        does: "the previous message from the history (on the first line)",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Down, NONE)],
        label: "Down",
        action: KeyAction::HistoryNext,
        does: "the next message from the history (on the last line)",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Tab, NONE)],
        label: "Tab",
        action: KeyAction::CompleteCommand,
        does: "complete a `/command` name or argument",
    },
    Binding {
        context: Context::Insert,
        keys: &[(KeyCode::Esc, NONE)],
        label: "Esc",
        action: KeyAction::Browse,
        does: "browse mode: move through the sidebar and the conversation",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Esc, NONE), (KeyCode::Char('i'), NONE)],
        label: "Esc, i",
        action: KeyAction::Insert,
        does: "back to typing",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Tab, NONE)],
        label: "Tab",
        action: KeyAction::SwitchPane,
        does: "switch between the sidebar and the conversation",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Char('j'), NONE), (KeyCode::Down, NONE)],
        label: "j, Down",
        action: KeyAction::Down,
        does: "the next item or tool block",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Char('k'), NONE), (KeyCode::Up, NONE)],
        label: "k, Up",
        action: KeyAction::Up,
        does: "the previous item or tool block",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Left, NONE)],
        label: "Left",
        action: KeyAction::PreviousTab,
        does: "the previous sidebar tab",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Right, NONE)],
        label: "Right",
        action: KeyAction::NextTab,
        does: "the next sidebar tab",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Enter, NONE)],
        label: "Enter",
        action: KeyAction::Open,
        does: "the selected item's detail; on a tool block, its whole result",
    },
    Binding {
        context: Context::Browse,
        keys: &[(KeyCode::Char('c'), NONE)],
        label: "c c",
        action: KeyAction::CompleteItem,
        does: "complete the selected item (c twice: it asks first)",
    },
    Binding {
        context: Context::Detail,
        keys: &[(KeyCode::Char('c'), NONE)],
        label: "c c",
        action: KeyAction::CompleteItem,
        does: "complete the item (c twice)",
    },
    Binding {
        context: Context::Detail,
        keys: &[(KeyCode::Char('d'), NONE)],
        label: "d d",
        action: KeyAction::DeleteItem,
        does: "delete the item (d twice)",
    },
    Binding {
        context: Context::Detail,
        keys: &[(KeyCode::Char('e'), NONE)],
        label: "e",
        action: KeyAction::EditItem,
        does: "open its file in $VISUAL or $EDITOR, then show it again",
    },
    Binding {
        context: Context::Detail,
        keys: &[(KeyCode::Char('v'), NONE)],
        label: "v",
        action: KeyAction::ToggleRaw,
        does: "the file as stored (front matter included), or the item again",
    },
    Binding {
        context: Context::Detail,
        keys: &[(KeyCode::Esc, NONE), (KeyCode::Char('q'), NONE)],
        label: "Esc, q",
        action: KeyAction::Close,
        does: "back",
    },
];

/// What `key` asks for in `context` (the first binding of the table that has it).
pub fn lookup(context: Context, key: &KeyEvent) -> Option<KeyAction> {
    let mods = match key.code {
        // A letter's Shift is part of the letter.
        KeyCode::Char(_) => key.modifiers - KeyModifiers::SHIFT,
        _ => key.modifiers,
    };
    BINDINGS
        .iter()
        .filter(|b| b.context == context)
        .find(|b| {
            b.keys
                .iter()
                .any(|&(code, m)| code == key.code && m == mods)
        })
        .map(|b| b.action)
}

/// The key that selects the tab at `index` of `tabs` in browse mode: the tab's own letter
/// (Agenda `g`, Due `d`, …), else its number `1`–`9` (plugin panels).
pub fn tab_key(tabs: &[Tab], index: usize) -> Option<char> {
    let tab = tabs.get(index)?;
    tab.kind
        .key()
        .or_else(|| char::from_digit(u32::try_from(index + 1).ok()?, 10).filter(|_| index < 9))
}

/// The tab that key `c` selects in browse mode.
pub fn tab_for_key(tabs: &[Tab], c: char) -> Option<usize> {
    (0..tabs.len()).find(|&i| tab_key(tabs, i) == Some(c))
}

/// `/help`'s key section, as markdown lines: the table by context, then the sidebar's tabs with
/// their keys (the plugin panels' tabs included).
pub fn help_lines(tabs: &[Tab]) -> Vec<String> {
    let mut lines = Vec::new();
    for context in [
        Context::Everywhere,
        Context::Insert,
        Context::Browse,
        Context::Detail,
    ] {
        lines.push(String::new());
        lines.push(format!("{} keys:", context.heading()));
        lines.push(String::new());
        for b in BINDINGS.iter().filter(|b| b.context == context) {
            lines.push(format!("- `{}` — {}", b.label, b.does));
        }
        if context == Context::Browse && !tabs.is_empty() {
            let tabs: Vec<String> = (0..tabs.len())
                .map(|i| match tab_key(tabs, i) {
                    Some(k) => format!("`{k}` {}", tabs[i].title),
                    None => tabs[i].title.clone(),
                })
                .collect();
            lines.push(format!("- tabs: {}", tabs.join(", ")));
        }
    }
    lines
}
