//! The command palette (Ctrl+P) and the tool forms it opens: filtering, moving, typing into
//! fields, and the tool call a form submits.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Action, App, Mode, Overlay};
use crate::palette::{Form, Palette, PaletteAction, PaletteEntry};
use crate::sidebar::TabKind;

impl App {
    pub(super) fn open_palette(&mut self) {
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

    pub(super) fn palette_key(&mut self, mut p: Palette, key: KeyEvent) -> Vec<Action> {
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

    pub(super) fn form_key(&mut self, mut f: Form, key: KeyEvent) -> Vec<Action> {
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
}
