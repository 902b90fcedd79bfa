//! What a tool call produces: [`ToolOutput`] from the tool, [`ToolResult`] after the registry.

use crate::RecallItem;
use crate::ToolError;

/// A change to the conversation context that a tool asks for (`docs/tool-rules.md#effects`,
/// decision D13). Tools never edit the conversation; whoever ran the tool applies its effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Make sure the item is in the active context (adds a `get_fast_recall` pair if needed).
    Pin(RecallItem),
    /// Remove every recall message carrying the item, with its synthetic assistant message.
    Unpin(RecallItem),
    /// Restart the session after the current response and send this as a hidden user message.
    Restart {
        /// The hidden message sent after the restart.
        resume_message: String,
    },
}

/// A successful tool call: the text the model sees and the effects to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The result text: `Success`, compact JSON, or a text verbatim (`docs/tool-rules.md#results`).
    pub content: String,
    /// Context changes, applied in order after the round.
    pub effects: Vec<Effect>,
}

impl ToolOutput {
    /// A text result with no effects.
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            effects: Vec::new(),
        }
    }

    /// The unit result, `Success`.
    pub fn success() -> Self {
        ToolOutput::text("Success")
    }

    /// A structured result as compact JSON (keys in insertion order, non-ASCII raw).
    pub fn json(value: &serde_json::Value) -> Self {
        ToolOutput::text(value.to_string())
    }

    /// Adds an effect.
    pub fn with_effect(mut self, effect: Effect) -> Self {
        self.effects.push(effect);
        self
    }
}

/// The outcome of one tool call as the model sees it (`docs/tool-rules.md#results`): the content,
/// whether it is an error (`Error invoking tool {name}: …`, never with effects) and the effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// What goes into the tool message.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// Effects to apply (empty for errors).
    pub effects: Vec<Effect>,
    /// For a failure: the kind of the I/O failure that caused it ([`ToolError::io_kind`]).
    pub io_kind: Option<std::io::ErrorKind>,
}

impl ToolResult {
    /// The result of a successful call.
    pub fn ok(output: ToolOutput) -> Self {
        ToolResult {
            content: output.content,
            is_error: false,
            effects: output.effects,
            io_kind: None,
        }
    }

    /// A failure rendered as `Error invoking tool {tool}: {message}`.
    pub fn error(tool: &str, message: &str) -> Self {
        ToolResult {
            content: format!("Error invoking tool {tool}: {message}"),
            is_error: true,
            effects: Vec::new(),
            io_kind: None,
        }
    }

    /// The failure `error` of `tool` ([`ToolResult::error`] with its I/O kind).
    pub fn failed(tool: &str, error: &ToolError) -> Self {
        ToolResult {
            io_kind: error.io_kind(),
            ..ToolResult::error(tool, error.message())
        }
    }
}
