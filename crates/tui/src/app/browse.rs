//! Browse mode (Esc): moving through the conversation's tool blocks or the sidebar's tabs, and
//! the detail view of a sidebar item with its complete, delete, edit and raw keys.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::{Action, App, Mode, Overlay, Pane};
use crate::conversation::Entry;
use crate::keys::{Context, KeyAction, lookup};

impl App {
    pub(super) fn browse_key(&mut self, key: KeyEvent, asked: bool) -> Vec<Action> {
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

    pub(super) fn detail_key(
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
