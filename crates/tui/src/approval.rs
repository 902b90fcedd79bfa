//! The approval prompt (`docs/security.md`): a model's call that needs a person's approval stops
//! the turn (which runs in the background) until the person answers here. The prompt shows the
//! tool, its effect and what it reaches in full (the resolved path, the URL, the MCP server, the
//! arguments), and offers *allow once*, *allow for this session*, *always allow* (saves the
//! narrowest rule to `permissions.allow`), *deny* and *deny with a reason* the model reads.
//!
//! [`TuiApprover`] is the [`Approver`] the interface installs: it hands each request and a
//! one-shot reply channel to the event loop and waits. The event loop keeps the open
//! [`Prompt`]s, sends them the keys while one is up, and draws the first over the interface.

use std::sync::Arc;

use elroy_core::{Approval, ApprovalRequest, Approver, BoxFuture, EffectClass};
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use tokio::sync::oneshot;

use crate::theme::Theme;

/// Hands a request and its reply channel to the event loop; false when the loop is gone.
pub type SendRequest =
    Arc<dyn Fn(ApprovalRequest, oneshot::Sender<Approval>) -> bool + Send + Sync>;

/// The interface's [`Approver`]: asks through the event loop and waits for the answer. A loop
/// that is gone, or a prompt dropped unanswered (the turn was cancelled), denies.
pub struct TuiApprover {
    send: SendRequest,
}

impl TuiApprover {
    /// An approver that hands its requests to `send`.
    pub fn new(send: SendRequest) -> Self {
        TuiApprover { send }
    }
}

impl Approver for TuiApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            if !(self.send)(request.clone(), reply) {
                return Approval::Deny { reason: None };
            }
            answer.await.unwrap_or(Approval::Deny { reason: None })
        })
    }
}

/// The choices, in the order shown, with their keys.
const CHOICES: [(&str, char); 5] = [
    ("allow once", 'y'),
    ("allow for this session", 's'),
    ("always allow", 'a'),
    ("deny", 'n'),
    ("deny with a reason for the model", 'r'),
];
/// The choice selected when the prompt opens: an Enter pressed by habit does not allow.
const DENY: usize = 3;
const REASON: usize = 4;

/// What a key did to the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKey {
    /// The prompt is still up.
    Open,
    /// The person answered; the prompt is done.
    Answered,
    /// Ctrl+C: the turn is to be cancelled, then the prompt dropped (a denial).
    Interrupt,
}

/// One open approval prompt.
pub struct Prompt {
    /// What is asked.
    pub request: ApprovalRequest,
    reply: Option<oneshot::Sender<Approval>>,
    /// The highlighted choice (an index into the choices shown).
    pub selected: usize,
    /// The reason being typed, when *deny with a reason* was chosen.
    pub reason: Option<String>,
}

impl Prompt {
    /// A prompt for `request` answering on `reply`.
    pub fn new(request: ApprovalRequest, reply: oneshot::Sender<Approval>) -> Self {
        Prompt {
            request,
            reply: Some(reply),
            selected: DENY,
            reason: None,
        }
    }

    /// True when nobody waits for the answer any more (the turn ended or was cancelled).
    pub fn is_stale(&self) -> bool {
        self.reply.as_ref().is_none_or(oneshot::Sender::is_closed)
    }

    fn answer(&mut self, approval: Approval) -> PromptKey {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(approval);
        }
        PromptKey::Answered
    }

    fn choose(&mut self, index: usize) -> PromptKey {
        match index {
            0 => self.answer(Approval::Once),
            1 => self.answer(Approval::Session),
            2 => self.answer(Approval::Always),
            REASON => {
                self.selected = REASON;
                self.reason = Some(String::new());
                PromptKey::Open
            }
            _ => self.answer(Approval::Deny { reason: None }),
        }
    }

    /// Handles one key: a choice's letter or number chooses it, arrows move, Enter chooses the
    /// highlighted one, Esc denies; while a reason is typed, Enter sends it and Esc goes back.
    pub fn on_key(&mut self, key: KeyEvent) -> PromptKey {
        if key.kind == KeyEventKind::Release {
            return PromptKey::Open;
        }
        // Not answered here: the event loop cancels the turn first, then drops the prompt
        // (which the approver reads as a denial), so the turn cannot go on in between.
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return PromptKey::Interrupt;
        }
        if let Some(reason) = &mut self.reason {
            match key.code {
                KeyCode::Enter => {
                    let reason = reason.trim().to_owned();
                    let reason = (!reason.is_empty()).then_some(reason);
                    return self.answer(Approval::Deny { reason });
                }
                KeyCode::Esc => self.reason = None,
                KeyCode::Backspace => {
                    reason.pop();
                }
                KeyCode::Char(c) => reason.push(c),
                _ => {}
            }
            return PromptKey::Open;
        }
        match key.code {
            KeyCode::Up | KeyCode::BackTab => {
                self.selected = self.selected.checked_sub(1).unwrap_or(CHOICES.len() - 1);
            }
            KeyCode::Down | KeyCode::Tab => self.selected = (self.selected + 1) % CHOICES.len(),
            KeyCode::Enter => return self.choose(self.selected),
            KeyCode::Esc => return self.answer(Approval::Deny { reason: None }),
            KeyCode::Char(c) => {
                let c = c.to_ascii_lowercase();
                let by_letter = CHOICES.iter().position(|(_, key)| *key == c);
                let by_number = c
                    .to_digit(10)
                    .and_then(|d| usize::try_from(d).ok())
                    .filter(|d| (1..=CHOICES.len()).contains(d))
                    .map(|d| d - 1);
                if let Some(index) = by_letter.or(by_number) {
                    return self.choose(index);
                }
            }
            _ => {}
        }
        PromptKey::Open
    }

    /// Pasted text goes into the reason being typed.
    pub fn on_paste(&mut self, text: &str) {
        if let Some(reason) = &mut self.reason {
            reason.push_str(&text.replace(['\r', '\n'], " "));
        }
    }
}

/// What an effect class means, for the prompt's first line.
fn effect_words(class: EffectClass) -> &'static str {
    match class {
        EffectClass::Home => "reads or changes the home",
        EffectClass::Read => "reads outside the home",
        EffectClass::Network => "reaches other machines",
        EffectClass::Execute => "runs a program or writes outside the home",
    }
}

/// The prompt's lines: the tool and its effect, each detail in full, the choices.
pub fn lines(prompt: &Prompt, theme: &Theme) -> Vec<Line<'static>> {
    let request = &prompt.request;
    let mut lines = vec![
        Line::from(vec![
            Span::styled(
                request.tool.clone(),
                theme.warning.add_modifier(Modifier::BOLD),
            ),
            Span::raw(format!(
                " ({}: {}) needs your approval",
                request.class,
                effect_words(request.class)
            )),
        ]),
        Line::default(),
    ];
    for (name, value) in &request.details {
        lines.push(Line::from(vec![
            Span::styled(format!("{name}: "), theme.dim),
            Span::raw(value.clone()),
        ]));
    }
    lines.push(Line::default());
    for (i, (label, key)) in CHOICES.iter().enumerate() {
        let text = if i == 2 {
            format!(" {key}  {label} (saves {}) ", request.rule)
        } else {
            format!(" {key}  {label} ")
        };
        let style = if i == prompt.selected {
            theme.selected
        } else {
            theme.system
        };
        lines.push(Line::from(Span::styled(text, style)));
    }
    if let Some(reason) = &prompt.reason {
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("reason: ", theme.user),
            Span::raw(reason.clone()),
            Span::styled("▏", theme.dim),
        ]));
        lines.push(Line::from(Span::styled(
            "Enter sends it with the denial, Esc goes back",
            theme.dim,
        )));
    }
    lines
}

/// Draws `prompt` centred over `area`, wide enough to show long paths and arguments wrapped.
pub fn render(prompt: &Prompt, theme: &Theme, frame: &mut Frame<'_>, area: Rect) {
    let text = lines(prompt, theme);
    let width = (area.width.saturating_mul(4) / 5).max(40).min(area.width);
    let inner_width = usize::from(width.saturating_sub(2)).max(1);
    let rows: usize = text
        .iter()
        .map(|l| l.width().max(1).div_ceil(inner_width))
        .sum();
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let rect = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.warning)
        .title(Span::styled(
            " Approval needed ",
            theme.warning.add_modifier(Modifier::BOLD),
        ));
    frame.render_widget(
        Paragraph::new(text).block(block).wrap(Wrap { trim: false }),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            tool: "read_file".into(),
            class: EffectClass::Read,
            details: vec![("path".into(), "/etc/hostname".into())],
            rule: "read_file(/etc/hostname)".into(),
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn answered(keys: &[KeyEvent]) -> (Vec<PromptKey>, Option<Approval>) {
        let (reply, mut answer) = oneshot::channel();
        let mut prompt = Prompt::new(request(), reply);
        let results = keys.iter().map(|k| prompt.on_key(*k)).collect();
        (results, answer.try_recv().ok())
    }

    #[test]
    fn each_choice_answers_what_it_says() {
        let cases = [
            (vec![key(KeyCode::Char('y'))], Approval::Once),
            (vec![key(KeyCode::Char('2'))], Approval::Session),
            (vec![key(KeyCode::Char('A'))], Approval::Always),
            (vec![key(KeyCode::Enter)], Approval::Deny { reason: None }),
            (vec![key(KeyCode::Esc)], Approval::Deny { reason: None }),
            (
                vec![key(KeyCode::Up), key(KeyCode::Up), key(KeyCode::Enter)],
                Approval::Session,
            ),
            (
                "rnot that file\r"
                    .chars()
                    .map(|c| match c {
                        '\r' => key(KeyCode::Enter),
                        c => key(KeyCode::Char(c)),
                    })
                    .collect(),
                Approval::Deny {
                    reason: Some("not that file".into()),
                },
            ),
        ];
        for (keys, expected) in cases {
            let (results, answer) = answered(&keys);
            assert_eq!(results.last(), Some(&PromptKey::Answered), "{keys:?}");
            assert_eq!(answer, Some(expected), "{keys:?}");
        }
    }

    #[test]
    fn ctrl_c_interrupts_and_other_keys_wait() {
        let (results, answer) = answered(&[
            key(KeyCode::Char('x')),
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
        ]);
        assert_eq!(results, vec![PromptKey::Open, PromptKey::Interrupt]);
        assert_eq!(answer, None);
    }

    #[test]
    fn a_prompt_nobody_waits_for_is_stale() {
        let (reply, answer) = oneshot::channel();
        let prompt = Prompt::new(request(), reply);
        assert!(!prompt.is_stale());
        drop(answer);
        assert!(prompt.is_stale());
    }

    #[test]
    fn the_prompt_shows_the_tool_effect_details_and_rule() {
        let (reply, _answer) = oneshot::channel();
        let prompt = Prompt::new(request(), reply);
        let text: Vec<String> = lines(&prompt, &Theme::plain())
            .iter()
            .map(ToString::to_string)
            .collect();
        let all = text.join("\n");
        assert!(
            all.contains("read_file (read: reads outside the home)"),
            "{all}"
        );
        assert!(all.contains("path: /etc/hostname"), "{all}");
        assert!(all.contains("saves read_file(/etc/hostname)"), "{all}");
    }
}
