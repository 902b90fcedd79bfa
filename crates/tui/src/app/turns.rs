//! Text and turns: what the input submits (commands, messages, the queue), the orchestrator's
//! turn events streamed into the conversation, tool results, sidebar loads and reminders.

use elroy_commands::Input as Typed;
use elroy_orchestrator::TurnEvent;

use super::{Action, App, Overlay, Reminder};
use crate::conversation::{Entry, NoticeKind};
use crate::sidebar::{Tab, TabKind};

impl App {
    /// Submits what the input holds (parsed by elroy-commands): a command runs at once without
    /// the model, an unknown `/word` lists the commands, a message starts a turn or is queued
    /// while one runs (`//text` sends `/text`).
    pub(super) fn submit(&mut self) -> Vec<Action> {
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
