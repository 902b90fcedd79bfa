//! The message model shared by the transcript store, the LLM clients and the orchestrator
//! (`docs/behaviour.md#synthetic-pairs`, `docs/formats.md#transcript-and-context-versions`), and
//! the recall payload (`docs/formats.md#the-recall-payload`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt (always the first message of a context).
    System,
    /// The person.
    User,
    /// The model (or elroy, for synthetic pairs).
    Assistant,
    /// A tool result.
    Tool,
}

impl Role {
    /// `system`, `user`, `assistant` or `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Parses the lower-case role name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return None,
        })
    }
}

/// One tool call made by an assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id the tool message answers (`tool_call_id`).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments exactly as the model sent them: a JSON text, possibly invalid or empty.
    pub arguments: String,
}

impl ToolCall {
    /// OpenAI form: `{"id","type":"function","function":{"name","arguments"}}`.
    pub fn to_openai_json(&self) -> Value {
        json!({"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}})
    }

    /// Reads the OpenAI form; `None` when `id` or `function.name` is missing. Non-string
    /// `arguments` are kept as their compact JSON.
    pub fn from_openai_json(value: &Value) -> Option<Self> {
        let function = value.get("function")?;
        let arguments = match function.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        Some(ToolCall {
            id: value.get("id")?.as_str()?.to_owned(),
            name: function.get("name")?.as_str()?.to_owned(),
            arguments,
        })
    }
}

/// A message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text; `None` is distinct from `""` (synthetic assistant messages have `None`).
    pub content: Option<String>,
    /// Tool calls of an assistant message, in order; empty otherwise.
    pub tool_calls: Vec<ToolCall>,
    /// For tool messages: the id of the call answered.
    pub tool_call_id: Option<String>,
    /// For tool messages: whether the result was an error.
    pub is_error: bool,
    /// The chat model of an assistant reply, `elroy` for synthetic messages, else `None`.
    pub model: Option<String>,
}

/// The `model` value of messages elroy itself writes (synthetic pairs).
pub const SYNTHETIC_MODEL: &str = "elroy";

impl Message {
    fn base(role: Role, content: Option<String>) -> Self {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            model: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::base(Role::System, Some(content.into()))
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::base(Role::User, Some(content.into()))
    }

    /// An assistant message with text and tool calls.
    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls,
            ..Message::base(Role::Assistant, content)
        }
    }

    /// A tool message answering `tool_call_id`.
    pub fn tool(
        tool_call_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            is_error,
            ..Message::base(Role::Tool, Some(content.into()))
        }
    }

    /// A synthetic pair (`docs/behaviour.md#synthetic-pairs`): an assistant message calling `tool`
    /// with `{}` and its tool result, both with model `elroy`. `call_id` should be a fresh UUID v4.
    pub fn synthetic_pair(call_id: &str, tool: &str, content: impl Into<String>) -> [Message; 2] {
        let call = ToolCall {
            id: call_id.to_owned(),
            name: tool.to_owned(),
            arguments: "{}".to_owned(),
        };
        let mut assistant = Message::assistant(None, vec![call]);
        assistant.model = Some(SYNTHETIC_MODEL.to_owned());
        let mut result = Message::tool(call_id, content, false);
        result.model = Some(SYNTHETIC_MODEL.to_owned());
        [assistant, result]
    }

    /// The tool calls as the OpenAI JSON array, or `None` when there are none.
    pub fn tool_calls_json(&self) -> Option<Value> {
        (!self.tool_calls.is_empty()).then(|| {
            Value::Array(
                self.tool_calls
                    .iter()
                    .map(ToolCall::to_openai_json)
                    .collect(),
            )
        })
    }

    /// The OpenAI chat-completions form of the message.
    pub fn to_openai_json(&self) -> Value {
        let mut obj = serde_json::Map::new();
        obj.insert("role".into(), Value::String(self.role.as_str().into()));
        obj.insert(
            "content".into(),
            self.content.clone().map_or(Value::Null, Value::String),
        );
        if let Some(calls) = self.tool_calls_json() {
            obj.insert("tool_calls".into(), calls);
        }
        if let Some(id) = &self.tool_call_id {
            obj.insert("tool_call_id".into(), Value::String(id.clone()));
        }
        Value::Object(obj)
    }

    /// For a tool message whose content is a recall payload (`docs/formats.md#the-recall-payload`):
    /// its metadata.
    pub fn recall_metadata(&self) -> Option<Vec<RecallMetadata>> {
        if self.role != Role::Tool {
            return None;
        }
        let content = self.content.as_deref()?;
        if !content.starts_with('{') {
            return None;
        }
        serde_json::from_str::<RecallPayload>(content)
            .ok()
            .map(|p| p.recall_metadata)
    }
}

/// The kind of a recall item: `Memory` or `AgendaItem` (due items are agenda items).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum RecallKind {
    /// A long-term memory (`memories/*.md`).
    Memory,
    /// An agenda item or due item (`agenda/*.md`).
    AgendaItem,
}

/// A recall item: `(memory_type, memory_id)` (`docs/behaviour.md#vocabulary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecallItem {
    /// Memory or agenda item.
    pub memory_type: RecallKind,
    /// The item's database id (`docs/formats.md#memory-index`, `docs/formats.md#agenda-index`).
    pub memory_id: i64,
}

/// One entry of a recall payload's `recall_metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecallMetadata {
    /// Memory or agenda item.
    pub memory_type: RecallKind,
    /// The item's database id.
    pub memory_id: i64,
    /// The item's name.
    pub name: String,
}

impl RecallMetadata {
    /// The item this entry names.
    pub fn item(&self) -> RecallItem {
        RecallItem {
            memory_type: self.memory_type,
            memory_id: self.memory_id,
        }
    }
}

/// The content of a recall tool message (`docs/formats.md#the-recall-payload`): compact JSON with
/// keys `content`, `recall_metadata` in that order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecallPayload {
    /// The items' renderings joined by `\n`.
    pub content: String,
    /// One entry per item, same order.
    pub recall_metadata: Vec<RecallMetadata>,
}

impl RecallPayload {
    /// Compact JSON, non-ASCII raw.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_payload_json_shape() {
        let payload = RecallPayload {
            content: "#Pay rent (Timed: 2026-12-02 09:00:00+05:30)\nTransfer rent to the landlord"
                .into(),
            recall_metadata: vec![RecallMetadata {
                memory_type: RecallKind::AgendaItem,
                memory_id: 3,
                name: "Pay rent".into(),
            }],
        };
        let text = payload.to_json_string();
        assert_eq!(
            text,
            r##"{"content":"#Pay rent (Timed: 2026-12-02 09:00:00+05:30)\nTransfer rent to the landlord","recall_metadata":[{"memory_type":"AgendaItem","memory_id":3,"name":"Pay rent"}]}"##
        );
        let [call, result] = Message::synthetic_pair("id-1", "get_fast_recall", text);
        assert_eq!(call.model.as_deref(), Some("elroy"));
        assert_eq!(call.content, None);
        assert_eq!(result.recall_metadata().unwrap()[0].item().memory_id, 3);
        assert_eq!(Message::tool("x", "OK", false).recall_metadata(), None);
    }

    #[test]
    fn tool_call_round_trip() {
        let call = ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            arguments: "{\"path\":\".\"}".into(),
        };
        assert_eq!(
            ToolCall::from_openai_json(&call.to_openai_json()),
            Some(call)
        );
    }
}
