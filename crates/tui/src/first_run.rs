//! The first-run panel: shown at the top of the conversation pane while no chat model is usable.
//! It lists the local model servers the shared search found (`elroy_llm::probe::search`), the
//! three ways to get a model, and takes the person's choice in the input line: a number picks a
//! found server, `k` asks for a provider key (typed or pasted masked, never kept in the input
//! history). The choice starts the session and is saved to elroy.conf.yaml
//! (`elroy_commands::adopt_and_save`); the panel then closes and the conversation goes on without
//! a restart. Meanwhile the sidebar, the palette, `/…` commands and every tool work as usual.

use elroy_commands::{FirstRunError, LocalServer, ModelChoice};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::app::{Action, App};
use crate::conversation::NoticeKind;

/// The character shown for each character of a key being typed.
pub const MASK: char = '•';

/// The panel's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstRun {
    /// The servers found; `None` while the search runs.
    pub servers: Option<Vec<LocalServer>>,
    /// The input line takes a key (masked).
    pub typing_key: bool,
    /// A choice is being started and saved.
    pub busy: bool,
    /// Why the last choice did not work.
    pub error: Option<String>,
}

impl FirstRun {
    /// The panel while the search runs.
    pub fn searching() -> Self {
        FirstRun::default()
    }

    /// The panel's text, one entry per line (wrapped when drawn).
    pub fn lines(&self) -> Vec<(Kind, String)> {
        let mut lines = vec![(
            Kind::Title,
            "No chat model yet. Everything else works now: the sidebar, Ctrl+P for every tool, /help for the commands.".to_owned(),
        )];
        match &self.servers {
            None => lines.push((Kind::Text, "Looking for a local model server…".to_owned())),
            Some(servers) if servers.is_empty() => lines.push((
                Kind::Text,
                "No local model server answered (Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM 8000).".to_owned(),
            )),
            Some(servers) => {
                for (i, server) in servers.iter().enumerate() {
                    let models = match server.models.first() {
                        Some(first) => format!("model {first}"),
                        None => "lists no model".to_owned(),
                    };
                    lines.push((
                        Kind::Choice,
                        format!(
                            "{}  {} at {} ({models})",
                            i + 1,
                            server.name,
                            server.base_url
                        ),
                    ));
                }
            }
        }
        lines.push((
            Kind::Choice,
            "k  paste a provider key (Anthropic, OpenAI or Gemini): shown masked, saved for you only".to_owned(),
        ));
        lines.push((
            Kind::Text,
            "Or start a local server (docs/models.md; the repository's scripts/local-model.sh needs no key), or use elroy without a model.".to_owned(),
        ));
        let prompt = if self.busy {
            "Starting the model and saving the choice…".to_owned()
        } else if self.typing_key {
            "Paste the key and press Enter (Esc: back).".to_owned()
        } else {
            match &self.servers {
                Some(s) if !s.is_empty() => {
                    "Type a number or k and press Enter; the choice is saved in elroy.conf.yaml."
                        .to_owned()
                }
                _ => "Type k and press Enter; the choice is saved in elroy.conf.yaml.".to_owned(),
            }
        };
        lines.push((Kind::Prompt, prompt));
        if let Some(error) = &self.error {
            lines.push((Kind::Error, error.clone()));
        }
        lines
    }
}

/// How a panel line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The first line.
    Title,
    /// A choice.
    Choice,
    /// Explanations.
    Text,
    /// What to type.
    Prompt,
    /// Why the last choice failed.
    Error,
}

/// A submitted line while the panel is shown: `Some(actions)` when the panel took it (a choice,
/// `k`, a key, or a message that cannot be sent yet), `None` for a `/…` command, which runs as
/// usual. The input is cleared without entering the history.
pub fn submit(app: &mut App) -> Option<Vec<Action>> {
    let panel = app.first_run.as_mut()?;
    let text = app.input.text();
    if !panel.typing_key && text.trim_start().starts_with('/') {
        return None;
    }
    app.input.clear();
    let answer = text.trim();
    if panel.busy {
        return Some(Vec::new());
    }
    panel.error = None;
    if panel.typing_key {
        return Some(match ModelChoice::key(answer) {
            Ok(choice) => {
                panel.typing_key = false;
                panel.busy = true;
                vec![Action::UseModel(choice)]
            }
            Err(e) => {
                panel.error = Some(e.to_string());
                mask(app);
                Vec::new()
            }
        });
    }
    if answer.eq_ignore_ascii_case("k") {
        panel.typing_key = true;
        mask(app);
        return Some(Vec::new());
    }
    let servers = panel.servers.clone().unwrap_or_default();
    if let Ok(n) = answer.parse::<usize>() {
        let chosen = n.checked_sub(1).and_then(|i| servers.get(i));
        return Some(match chosen.map(ModelChoice::local) {
            Some(Ok(choice)) => {
                panel.busy = true;
                vec![Action::UseModel(choice)]
            }
            Some(Err(e)) => {
                panel.error = Some(e.to_string());
                Vec::new()
            }
            None => {
                panel.error = Some(format!("There is no choice {n}."));
                Vec::new()
            }
        });
    }
    app.notice(
        NoticeKind::Warning,
        "Not sent: there is no chat model yet. Choose one above, or use a /command or Ctrl+P.",
    );
    Some(Vec::new())
}

/// Esc while a key is typed goes back to the choices (and forgets what was typed).
pub fn on_key(app: &mut App, key: &KeyEvent) -> Option<Vec<Action>> {
    let panel = app.first_run.as_mut()?;
    if panel.typing_key && key.code == KeyCode::Esc && app.overlay.is_none() {
        panel.typing_key = false;
        app.input.clear();
        return Some(Vec::new());
    }
    None
}

/// The input shows [`MASK`] for every character while a key is typed.
fn mask(app: &mut App) {
    app.input.area.set_mask_char(MASK);
    app.input
        .area
        .set_placeholder_text("Paste the key and press Enter (Esc: back)");
}

/// The search's result.
pub fn on_servers(app: &mut App, servers: Vec<LocalServer>) {
    if let Some(panel) = &mut app.first_run {
        panel.servers = Some(servers);
    }
}

/// The chosen model started (`Ok`: the lines to show and the model's name) or not (`Err`: why;
/// the panel stays).
pub fn on_adopted(app: &mut App, result: Result<(Vec<String>, String), FirstRunError>) {
    match result {
        Ok((lines, model)) => {
            app.first_run = None;
            app.status.model = model;
            // One paragraph each.
            app.on_command_output(&[lines.join("\n\n")], false);
        }
        Err(e) => {
            if let Some(panel) = &mut app.first_run {
                panel.busy = false;
                panel.error = Some(e.to_string());
            }
        }
    }
}

/// Draws the panel at the top of `area` (the conversation pane) when it is shown; returns the
/// part of `area` left for the conversation (all of it when there is no panel).
pub fn draw(app: &App, frame: &mut Frame<'_>, area: Rect) -> Rect {
    let Some(panel) = &app.first_run else {
        return area;
    };
    let theme = &app.theme;
    let lines: Vec<Line<'static>> = panel
        .lines()
        .into_iter()
        .map(|(kind, text)| {
            let style = match kind {
                Kind::Title => theme.system.add_modifier(Modifier::BOLD),
                Kind::Choice => theme.user,
                Kind::Text => theme.dim,
                Kind::Prompt => theme.system,
                Kind::Error => theme.warning,
            };
            Line::from(Span::styled(text, style))
        })
        .collect();
    // One column of space on the right, so the box never touches the sidebar's border.
    let box_width = area.width.saturating_sub(1).max(3);
    let width = box_width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
    // The conversation keeps at least three rows.
    let height = (rows as u16 + 2).min(area.height.saturating_sub(3)).max(3);
    let (top, rest) = (
        Rect {
            height,
            width: box_width.min(area.width),
            ..area
        },
        Rect {
            y: area.y + height,
            height: area.height - height,
            ..area
        },
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.dim)
        .title(Span::styled(" Get a model ", theme.system));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        top,
    );
    rest
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::theme::Theme;
    use ratatui::crossterm::event::KeyModifiers;

    fn app_without_model() -> App {
        let mut app = App::new(Theme::plain(), None, &[]);
        app.first_run = Some(FirstRun::searching());
        app
    }

    fn type_line(app: &mut App, text: &str) -> Vec<Action> {
        app.on_paste(text);
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
    }

    fn server(models: &[&str]) -> LocalServer {
        LocalServer {
            name: "llama.cpp",
            base_url: "http://127.0.0.1:8080/v1".into(),
            models: models.iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    #[test]
    fn a_number_picks_a_found_server() {
        let mut app = app_without_model();
        on_servers(&mut app, vec![server(&[]), server(&["smollm2"])]);
        assert!(type_line(&mut app, "1").is_empty());
        let error = app.first_run.as_ref().unwrap().error.clone().unwrap();
        assert!(error.contains("lists no model"), "{error}");
        assert!(type_line(&mut app, "3").is_empty());
        assert_eq!(
            app.first_run.as_ref().unwrap().error.as_deref(),
            Some("There is no choice 3.")
        );
        let actions = type_line(&mut app, "2");
        assert_eq!(
            actions,
            [Action::UseModel(ModelChoice::Local {
                server: "llama.cpp".into(),
                base_url: "http://127.0.0.1:8080/v1".into(),
                model: "smollm2".into(),
            })]
        );
        assert!(app.first_run.as_ref().unwrap().busy);
        assert!(app.input.history.is_empty(), "{:?}", app.input.history);
    }

    #[test]
    fn a_key_is_masked_and_kept_out_of_the_history() {
        let mut app = app_without_model();
        on_servers(&mut app, Vec::new());
        assert!(type_line(&mut app, "k").is_empty());
        assert!(app.first_run.as_ref().unwrap().typing_key);
        app.on_paste("sk-ant-api03-secretsecret");
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 30)).unwrap();
        terminal.draw(|f| crate::ui::render(&app, f)).unwrap();
        let screen = format!("{:?}", terminal.backend().buffer());
        assert!(!screen.contains("secret"), "{screen}");
        assert!(screen.contains("•••"), "{screen}");
        let actions = app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert!(
            matches!(&actions[..], [Action::UseModel(ModelChoice::Key { model, .. })] if model == "claude-sonnet-4-5-20250929")
        );
        assert!(app.input.history.is_empty());
        // A key of an unknown form is refused, still masked; Esc goes back.
        let mut app = app_without_model();
        type_line(&mut app, "k");
        assert!(type_line(&mut app, "not-a-known-key-123456").is_empty());
        assert!(app.first_run.as_ref().unwrap().error.is_some());
        assert!(app.first_run.as_ref().unwrap().typing_key);
        app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        assert!(!app.first_run.as_ref().unwrap().typing_key);
        assert!(app.input.is_empty());
    }

    #[test]
    fn commands_run_and_messages_wait_while_the_panel_is_shown() {
        let mut app = app_without_model();
        assert_eq!(
            type_line(&mut app, "/agenda"),
            [Action::Command("/agenda".into())]
        );
        assert!(type_line(&mut app, "hello there").is_empty());
        assert!(!app.turn_running);
        let refused = elroy_runtime::RuntimeError::Store(elroy_core::ServiceError::new(
            std::io::Error::other("refused"),
        ));
        on_adopted(
            &mut app,
            Err(FirstRunError::CannotUse {
                model: "m".into(),
                source: refused,
            }),
        );
        assert_eq!(
            app.first_run.as_ref().unwrap().error.as_deref(),
            Some("cannot use m: refused")
        );
        on_adopted(&mut app, Ok((vec!["Using `m`.".into()], "m".into())));
        assert!(app.first_run.is_none());
        assert_eq!(app.status.model, "m");
        assert_eq!(type_line(&mut app, "hello"), [Action::Send("hello".into())]);
    }
}
