//! The events a turn emits to its front-end (`docs/behaviour.md#turn-events`), and their NDJSON
//! form (`DESIGN.md`, `elroy message --json`).

use serde_json::{Value, json};

/// What was injected before the first round (`docs/behaviour.md#one-turn` step 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectedKind {
    /// A `get_fast_recall` pair.
    Recall,
    /// A `get_due_items` pair.
    Due,
}

/// One event of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEvent {
    /// Progress: `loading context...`, `fetching memories...`, `thinking...`, `running {tool}...`.
    Status(String),
    /// Context added before the first round (only with `show_internal_thought`).
    Injected {
        /// Recall or due items.
        kind: InjectedKind,
        /// The recall content or the due-item text.
        text: String,
    },
    /// Reply text after tag processing (`docs/behaviour.md#tags-thoughts-and-code`).
    TextDelta(String),
    /// Private thought text or provider reasoning.
    ThoughtDelta(String),
    /// A complete fenced code block.
    CodeBlock {
        /// The fence's info string.
        language: String,
        /// The code lines, each ending with `\n`.
        content: String,
    },
    /// A tool call about to run.
    ToolCall {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments as the model sent them.
        arguments: String,
    },
    /// A tool call's result.
    ToolResult {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The tool message content.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// The turn failed.
    Error(String),
    /// The user cancelled the turn.
    Cancelled,
    /// The turn finished.
    Done,
}

impl TurnEvent {
    /// The NDJSON object of `elroy message --json`, or `None` for events that format has no type
    /// for (status, injected context, done). Types: `text` (`delta`), `thought` (`delta`),
    /// `tool_call` (`id`, `name`, `arguments`), `tool_result` (`id`, `name`, `content`,
    /// `is_error`), `error` (`message`). A code block is a `text` delta holding the fenced block.
    /// (`final` is written by the front-end from the turn's outcome.)
    pub fn to_json(&self) -> Option<Value> {
        Some(match self {
            TurnEvent::TextDelta(t) => json!({"type": "text", "delta": t}),
            TurnEvent::ThoughtDelta(t) => json!({"type": "thought", "delta": t}),
            TurnEvent::CodeBlock { language, content } => {
                json!({"type": "text", "delta": fenced(language, content)})
            }
            TurnEvent::ToolCall {
                id,
                name,
                arguments,
            } => json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments}),
            TurnEvent::ToolResult {
                id,
                name,
                content,
                is_error,
            } => json!({"type": "tool_result", "id": id, "name": name, "content": content,
                "is_error": is_error}),
            TurnEvent::Error(message) => json!({"type": "error", "message": message}),
            TurnEvent::Cancelled => json!({"type": "error", "message": "cancelled"}),
            TurnEvent::Status(_) | TurnEvent::Injected { .. } | TurnEvent::Done => return None,
        })
    }
}

/// A code block as markdown: a fence with the language, the code, a closing fence, each on its own
/// line, with blank lines around it.
pub fn fenced(language: &str, content: &str) -> String {
    format!("\n\n```{language}\n{content}```\n\n")
}
