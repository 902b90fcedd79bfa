//! Codex's session logs: `~/.codex/sessions/YYYY/MM/DD/rollout-{time}-{id}.jsonl`. Each line is
//! `{timestamp, type, payload}`: `session_meta` (`payload.id`, `payload.cwd`), `response_item`
//! (what the model saw and said), `event_msg` (the interface's events, which repeat the
//! messages) and `turn_context`. Older logs begin with a bare `{id, timestamp, instructions}` line
//! and hold bare response items. Kept: the `response_item` messages of the person (`role: user`,
//! `input_text`) and of Codex (`role: assistant`, `output_text`), without the context Codex
//! injects (`<environment_context>`, `<user_instructions>`, AGENTS.md); tool calls, their output,
//! reasoning and developer messages are dropped.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ImportError;
use crate::chats::Sink;
use crate::convo::{Conversation, Message, Role, str_at, time_of};
use crate::files::{session_lines, stem};

/// Reads one rollout file into `sink`.
///
/// # Errors
/// [`ImportError`] from the sink.
pub(crate) fn read(file: &Path, sink: &mut Sink<'_>) -> Result<(), ImportError> {
    let Some(lines) = session_lines(file, sink) else {
        return Ok(());
    };
    let mut session = None;
    let mut project = None;
    let mut started = None;
    let mut messages = Vec::new();
    for (n, line) in &lines {
        let at = time_of(line.get("timestamp"));
        let (kind, payload) = match (str_at(line, "type"), line.get("payload")) {
            (Some(kind), Some(payload)) => (kind, payload),
            // The older layout: a bare meta line, then bare response items.
            (None, None) if str_at(line, "id").is_some() => ("session_meta", line),
            (Some(_), None) => ("response_item", line),
            _ => continue,
        };
        match kind {
            "session_meta" => {
                session = session.or_else(|| str_at(payload, "id").map(str::to_owned));
                project = project.or_else(|| str_at(payload, "cwd").map(PathBuf::from));
                started = started.or_else(|| time_of(payload.get("timestamp"))).or(at);
            }
            "response_item" if str_at(payload, "type") == Some("message") => {
                let role = match str_at(payload, "role") {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    _ => continue,
                };
                let text = payload
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| str_at(p, "text"))
                            .map(str::trim)
                            .filter(|t| !t.is_empty() && !injected(t))
                            .collect::<Vec<_>>()
                            .join("\n\n")
                    })
                    .unwrap_or_default();
                if text.is_empty() {
                    continue;
                }
                started = started.or(at);
                messages.push(Message {
                    id: format!("L{n}"),
                    role,
                    text,
                    at,
                });
            }
            _ => {}
        }
    }
    if messages.is_empty() {
        return Ok(());
    }
    sink.conversation(Conversation {
        id: session.unwrap_or_else(|| stem(file)),
        title: None,
        file: file.to_path_buf(),
        project: project.map(crate::convo::Project::Dir),
        started,
        messages,
        ids_unique: false,
    })
}

/// Context Codex adds to the person's turn, not said by them.
fn injected(text: &str) -> bool {
    [
        "<environment_context>",
        "<user_instructions>",
        "<permissions instructions>",
        "# AGENTS.md instructions",
        "<user_shell_command>",
    ]
    .iter()
    .any(|p| text.starts_with(p))
}
