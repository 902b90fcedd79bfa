//! The conversation pane's model: entries (user messages, replies that stream, tool calls with
//! their results, notices and reminders) and their rendering into wrapped lines.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::markdown;
use crate::theme::Theme;
use crate::wrap::wrap_spans;

/// Results longer than this (characters) are shown as their first lines plus `< N char tool result >`.
pub const TOOL_RESULT_PREVIEW_CHARS: usize = 500;
/// Lines of a tool result shown when it is not expanded.
const TOOL_RESULT_PREVIEW_LINES: usize = 3;

/// What a notice is about (its colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Information from the interface (command output, queued messages).
    Info,
    /// Errors and warnings.
    Warning,
    /// A due item that came due while the interface was open.
    Reminder,
}

/// One block of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// What the user sent.
    User(String),
    /// The assistant's reply: markdown text (code blocks fenced), thoughts, and its state.
    Assistant {
        /// Reply markdown so far.
        text: String,
        /// Thought text (shown only with `show_internal_thought`).
        thought: String,
        /// Still streaming.
        streaming: bool,
        /// Cancelled by the user (the partial text is kept).
        cancelled: bool,
    },
    /// A tool call and, once it ran, its result.
    Tool {
        /// The tool name.
        name: String,
        /// The arguments as sent.
        arguments: String,
        /// `(content, is_error)` once the tool ran.
        result: Option<(String, bool)>,
        /// Whether the whole result is shown (browse mode, Enter).
        expanded: bool,
    },
    /// A line from the interface.
    Notice(NoticeKind, String),
    /// An interface command's output (markdown).
    Output {
        /// The markdown text.
        text: String,
        /// Shown in the warning colour.
        is_error: bool,
    },
}

impl Entry {
    /// A new, streaming reply.
    pub fn streaming_reply() -> Self {
        Entry::Assistant {
            text: String::new(),
            thought: String::new(),
            streaming: true,
            cancelled: false,
        }
    }

    /// The entry rendered for a pane `width` cells wide.
    pub fn lines(&self, width: usize, theme: &Theme, show_thoughts: bool) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        match self {
            Entry::User(text) => {
                let spans = vec![Span::styled(text.clone(), theme.user)];
                let prefix = [Span::styled("› ", theme.user.add_modifier(Modifier::BOLD))];
                out.extend(wrap_spans(&spans, width, &prefix, &[Span::raw("  ")]));
            }
            Entry::Assistant {
                text,
                thought,
                streaming,
                cancelled,
            } => {
                if show_thoughts && !thought.trim().is_empty() {
                    let style = theme.thought.add_modifier(Modifier::ITALIC);
                    out.extend(wrap_spans(
                        &[Span::styled(thought.trim().to_owned(), style)],
                        width,
                        &[],
                        &[],
                    ));
                }
                if !text.trim().is_empty() {
                    out.extend(markdown::render(
                        text,
                        width,
                        theme.assistant,
                        theme.dim,
                        theme.color,
                    ));
                }
                if *streaming && text.is_empty() && thought.is_empty() {
                    out.push(Line::from(Span::styled("…", theme.dim)));
                }
                if *cancelled {
                    out.push(Line::from(Span::styled(
                        "(cancelled)",
                        theme.warning.add_modifier(Modifier::ITALIC),
                    )));
                }
            }
            Entry::Tool {
                name,
                arguments,
                result,
                expanded,
            } => {
                let head = vec![
                    Span::styled(
                        format!("⚙ {name}"),
                        theme.system.add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(format!(" {}", compact_arguments(arguments)), theme.system),
                ];
                out.extend(wrap_spans(&head, width, &[], &[Span::raw("  ")]));
                match result {
                    None => out.push(Line::from(Span::styled("  │ running…", theme.dim))),
                    Some((content, is_error)) => {
                        let style = if *is_error {
                            theme.warning
                        } else {
                            theme.thought
                        };
                        let bar = [Span::styled("  │ ", theme.dim)];
                        let chars = content.chars().count();
                        let shown: Vec<&str> = if *expanded {
                            content.lines().collect()
                        } else {
                            content.lines().take(TOOL_RESULT_PREVIEW_LINES).collect()
                        };
                        for line in &shown {
                            let mut line = (*line).to_owned();
                            if !*expanded && line.chars().count() > TOOL_RESULT_PREVIEW_CHARS {
                                line = line.chars().take(TOOL_RESULT_PREVIEW_CHARS).collect();
                            }
                            out.extend(wrap_spans(&[Span::styled(line, style)], width, &bar, &bar));
                        }
                        if !*expanded
                            && (chars > TOOL_RESULT_PREVIEW_CHARS
                                || content.lines().count() > TOOL_RESULT_PREVIEW_LINES)
                        {
                            out.push(Line::from(vec![
                                bar[0].clone(),
                                Span::styled(format!("< {chars} char tool result >"), theme.dim),
                            ]));
                        }
                    }
                }
            }
            Entry::Output { text, is_error } => {
                let style = if *is_error {
                    theme.warning
                } else {
                    theme.system
                };
                out.extend(markdown::render(text, width, style, theme.dim, theme.color));
            }
            Entry::Notice(kind, text) => {
                let (style, prefix) = match kind {
                    NoticeKind::Info => (theme.system, ""),
                    NoticeKind::Warning => (theme.warning, ""),
                    NoticeKind::Reminder => (theme.reminder, "⏰ "),
                };
                let spans = vec![Span::styled(format!("{prefix}{text}"), style)];
                out.extend(wrap_spans(&spans, width, &[], &[]));
            }
        }
        out
    }
}

/// Tool arguments on one line: JSON re-serialised compactly, anything else as sent; at most 200
/// characters.
fn compact_arguments(arguments: &str) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(value) => value.to_string(),
        Err(_) => arguments.replace('\n', " "),
    };
    if text.chars().count() > 200 {
        let cut: String = text.chars().take(200).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Every entry rendered, a blank line between entries.
pub fn all_lines(
    entries: &[Entry],
    width: usize,
    theme: &Theme,
    show_thoughts: bool,
) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    for entry in entries {
        if !out.is_empty() {
            out.push(Line::default());
        }
        out.extend(entry.lines(width, theme, show_thoughts));
    }
    out
}

/// A style with the italic modifier (thoughts).
pub fn italic(style: Style) -> Style {
    style.add_modifier(Modifier::ITALIC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::plain;

    #[test]
    fn long_tool_results_are_summarised_and_errors_kept() {
        let long = "x".repeat(600);
        let entry = Entry::Tool {
            name: "read_file".into(),
            arguments: "{\"path\": \"a\"}".into(),
            result: Some((long, false)),
            expanded: false,
        };
        let text = plain(&entry.lines(80, &Theme::plain(), true));
        assert!(text.starts_with("⚙ read_file {\"path\":\"a\"}"), "{text}");
        assert!(text.contains("< 600 char tool result >"), "{text}");
        let short = Entry::Tool {
            name: "x".into(),
            arguments: "{}".into(),
            result: Some(("Error invoking tool x: boom".into(), true)),
            expanded: false,
        };
        let text = plain(&short.lines(80, &Theme::plain(), true));
        assert!(!text.contains("char tool result"), "{text}");
        assert!(text.contains("│ Error invoking tool x: boom"), "{text}");
    }

    #[test]
    fn a_cancelled_reply_keeps_its_text() {
        let entry = Entry::Assistant {
            text: "Half a sent".into(),
            thought: String::new(),
            streaming: false,
            cancelled: true,
        };
        assert_eq!(
            plain(&entry.lines(40, &Theme::plain(), true)),
            "Half a sent\n(cancelled)"
        );
    }
}
