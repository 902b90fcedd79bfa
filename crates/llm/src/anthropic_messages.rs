//! elroy's messages and tool schemas in Anthropic Messages form (`docs/behaviour.md#requests`,
//! `docs/behaviour.md#message-conversion`), as a genai [`ChatRequest`](genai::chat::ChatRequest).
//!
//! The conversion is ours, not genai's: genai 0.7.2 joins every system message into the top-level
//! `system`, never merges consecutive messages of one role, and its `ToolResponse` has no
//! `is_error`. So the turns are built here (rules 1–5 of `docs/behaviour.md#message-conversion`)
//! and the blocks genai cannot express (`tool_result` with `is_error`, several text blocks in one
//! user message) are handed to it as custom parts, which its Anthropic adapter sends unchanged.
//!
//! Tools go in genai's `extra_body` (merged into the top level of the request body), not as genai
//! `Tool`s: genai 0.7.2 turns any tool *named* `web_search` into Anthropic's server-side web search
//! tool (`"type": "web_search_20250305"`, description and schema dropped), and elroy has a
//! `web_search` tool of its own.

use elroy_core::{Message, Role};
use genai::chat::{
    CacheControl, ChatMessage, ChatRequest as GenaiRequest, ContentPart, MessageContent,
    MessageOptions, ToolCall as GenaiToolCall,
};
use serde_json::{Map, Value, json};

/// The prefix of a later system message sent as a user message
/// (`docs/behaviour.md#message-conversion` rule 1), followed by a space.
pub const LATER_SYSTEM_PREFIX: &str =
    "[This is a system message, representing internal thought process of the assistant]";

/// The placeholder tool sent when the messages use tools but none are offered
/// (`docs/behaviour.md#message-conversion` rule 5).
pub const PLACEHOLDER_TOOL: &str = "do_not_use";
/// The placeholder tool's description (ours).
pub const PLACEHOLDER_DESCRIPTION: &str =
    "Placeholder that exists for technical reasons. Never call it.";

/// One Anthropic content block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// `{"type":"text","text"}`.
    Text(String),
    /// `{"type":"tool_use","id","name","input"}`.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// `{"type":"tool_result","tool_use_id","content","is_error"?}`.
    ToolResult {
        id: String,
        content: String,
        is_error: bool,
    },
}

impl Block {
    /// The block as Anthropic JSON (`is_error` only when the result was an error).
    pub(crate) fn to_json(&self) -> Value {
        match self {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::ToolUse { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            Block::ToolResult {
                id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": id, "content": content});
                if *is_error {
                    block["is_error"] = Value::Bool(true);
                }
                block
            }
        }
    }
}

/// One Anthropic message: `assistant` or `user`, with its blocks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    pub(crate) assistant: bool,
    pub(crate) blocks: Vec<Block>,
}

/// The top-level `system` text and the turns of `messages` (`docs/behaviour.md#message-conversion`
/// rules 1–4): the first system message is the system text; later ones become prefixed user text;
/// an assistant message becomes a text block (non-empty content) and one `tool_use` per call
/// (`input` = the parsed arguments, `{}` when empty, invalid or not an object); tool messages
/// become `tool_result` blocks; turns of the same role are merged. Messages that produce no block
/// are left out.
pub(crate) fn turns(messages: &[Message]) -> (Option<String>, Vec<Turn>) {
    let mut system: Option<String> = None;
    let mut turns: Vec<Turn> = Vec::new();
    for message in messages {
        let text = message.content.clone().unwrap_or_default();
        let (assistant, blocks) = match message.role {
            Role::System if system.is_none() => {
                system = Some(text);
                continue;
            }
            Role::System => (
                false,
                vec![Block::Text(format!("{LATER_SYSTEM_PREFIX} {text}"))],
            ),
            Role::User => (false, vec![Block::Text(text)]),
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(Block::Text(text));
                }
                blocks.extend(message.tool_calls.iter().map(|call| Block::ToolUse {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(Value::Object(map)) => Value::Object(map),
                        _ => Value::Object(Map::new()),
                    },
                }));
                (true, blocks)
            }
            Role::Tool => (
                false,
                vec![Block::ToolResult {
                    id: message.tool_call_id.clone().unwrap_or_default(),
                    content: text,
                    is_error: message.is_error,
                }],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.assistant == assistant => last.blocks.extend(blocks),
            _ => turns.push(Turn { assistant, blocks }),
        }
    }
    (system, turns)
}

/// One tool in Anthropic form, from the OpenAI form `{"type":"function","function":{name,
/// description, parameters}}` (`docs/behaviour.md#requests`):
/// `{"name","description","input_schema"}`, `input_schema` = `parameters` or
/// `{"type":"object","properties":{}}`. `None` for a schema without a name.
pub(crate) fn tool(openai: &Value) -> Option<Value> {
    let function = openai.get("function").unwrap_or(openai);
    let name = function.get("name")?.as_str()?;
    let schema = function
        .get("parameters")
        .filter(|p| p.is_object())
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    let mut tool = Map::new();
    tool.insert("name".into(), json!(name));
    if let Some(description) = function.get("description").and_then(Value::as_str) {
        tool.insert("description".into(), json!(description));
    }
    tool.insert("input_schema".into(), schema);
    Some(Value::Object(tool))
}

/// A request in genai's terms: the messages, and the top-level keys genai is not given
/// (`tools`, `tool_choice`) for its `extra_body`.
pub(crate) struct AnthropicRequest {
    /// System and turns.
    pub(crate) request: GenaiRequest,
    /// `{"tools"?, "tool_choice"?}`, `None` when empty.
    pub(crate) extra_body: Option<Value>,
}

/// The request for `messages`, `tools` (OpenAI form) and a forced tool. With `caching`, the system
/// prompt and the last tool carry `cache_control: {"type":"ephemeral"}`
/// (`docs/behaviour.md#requests`). `schema_instruction`, when given, is appended to the system text
/// (structured output, `docs/behaviour.md#non-streaming-calls`).
pub(crate) fn request(
    messages: &[Message],
    tools: &[Value],
    forced_tool: Option<&str>,
    caching: bool,
    schema_instruction: Option<&str>,
) -> AnthropicRequest {
    let (mut system, turns) = turns(messages);
    if let Some(instruction) = schema_instruction {
        system = Some(match system {
            Some(s) if !s.is_empty() => format!("{s}\n\n{instruction}"),
            _ => instruction.to_owned(),
        });
    }
    let mut out: Vec<ChatMessage> = Vec::new();
    if let Some(system) = system {
        let mut message = ChatMessage::system(system);
        if caching {
            message = message.with_options(
                MessageOptions::default().with_cache_control(CacheControl::Ephemeral),
            );
        }
        out.push(message);
    }
    let mut uses_tools = false;
    for turn in turns {
        uses_tools |= turn.blocks.iter().any(|b| !matches!(b, Block::Text(_)));
        out.push(if turn.assistant {
            assistant_message(turn.blocks)
        } else {
            user_message(turn.blocks)
        });
    }
    let mut wire_tools: Vec<Value> = tools.iter().filter_map(tool).collect();
    if wire_tools.is_empty() && uses_tools {
        wire_tools.push(json!({
            "name": PLACEHOLDER_TOOL,
            "description": PLACEHOLDER_DESCRIPTION,
            "input_schema": {"type": "object", "properties": {}},
        }));
    }
    if caching && let Some(last) = wire_tools.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    let mut extra = Map::new();
    if !wire_tools.is_empty() {
        if let Some(name) = forced_tool {
            extra.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
        }
        extra.insert("tools".into(), Value::Array(wire_tools));
    }
    AnthropicRequest {
        request: GenaiRequest::from_messages(out),
        extra_body: (!extra.is_empty()).then_some(Value::Object(extra)),
    }
}

/// An assistant turn: text blocks as genai text parts, `tool_use` blocks as genai tool calls.
fn assistant_message(blocks: Vec<Block>) -> ChatMessage {
    let parts: Vec<ContentPart> = blocks
        .into_iter()
        .map(|block| match block {
            Block::Text(text) => ContentPart::Text(text),
            Block::ToolUse { id, name, input } => ContentPart::ToolCall(GenaiToolCall {
                call_id: id,
                fn_name: name,
                fn_arguments: input,
                thought_signatures: None,
            }),
            other => ContentPart::from_custom(other.to_json(), None),
        })
        .collect();
    ChatMessage::assistant(MessageContent::from_parts(parts))
}

/// A user turn: one text block is plain text; anything else goes block by block as custom parts
/// (genai would join several texts into one and has no `is_error` on tool results).
fn user_message(blocks: Vec<Block>) -> ChatMessage {
    if let [Block::Text(text)] = blocks.as_slice() {
        return ChatMessage::user(text.clone());
    }
    let parts: Vec<ContentPart> = blocks
        .iter()
        .map(|block| ContentPart::from_custom(block.to_json(), None))
        .collect();
    ChatMessage::user(MessageContent::from_parts(parts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::ToolCall;

    #[test]
    fn first_system_is_top_level_later_ones_are_prefixed_user_text() {
        let (system, turns) = turns(&[
            Message::system("persona"),
            Message::user("hi"),
            Message::system("note"),
        ]);
        assert_eq!(system.as_deref(), Some("persona"));
        assert_eq!(
            turns,
            [Turn {
                assistant: false,
                blocks: vec![
                    Block::Text("hi".into()),
                    Block::Text(format!("{LATER_SYSTEM_PREFIX} note")),
                ],
            }]
        );
    }

    #[test]
    fn assistant_calls_become_tool_use_and_results_merge_into_one_user_turn() {
        let call = |id: &str, args: &str| ToolCall {
            id: id.into(),
            name: "ls".into(),
            arguments: args.into(),
        };
        let (_, turns) = turns(&[
            Message::user("list"),
            Message::assistant(
                Some(String::new()),
                vec![
                    call("a", r#"{"path":"."}"#),
                    call("b", ""),
                    call("c", "{\"pa"),
                    call("d", "[1]"),
                ],
            ),
            Message::tool("a", "x", false),
            Message::tool("b", "Error invoking tool ls: no", true),
        ]);
        assert_eq!(turns.len(), 3);
        let inputs: Vec<Value> = turns[1]
            .blocks
            .iter()
            .map(|b| b.to_json()["input"].clone())
            .collect();
        assert_eq!(
            inputs,
            [json!({"path":"."}), json!({}), json!({}), json!({})]
        );
        assert_eq!(
            turns[2]
                .blocks
                .iter()
                .map(Block::to_json)
                .collect::<Vec<_>>(),
            [
                json!({"type":"tool_result","tool_use_id":"a","content":"x"}),
                json!({"type":"tool_result","tool_use_id":"b","content":"Error invoking tool ls: no","is_error":true}),
            ]
        );
    }

    #[test]
    fn assistant_text_comes_before_its_calls_and_empty_assistants_are_dropped() {
        let (_, turns) = turns(&[
            Message::user("a"),
            Message::assistant(Some(String::new()), vec![]),
            Message::user("b"),
            Message::assistant(
                Some("looking".into()),
                vec![ToolCall {
                    id: "x".into(),
                    name: "pwd".into(),
                    arguments: "{}".into(),
                }],
            ),
        ]);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].blocks.len(), 2);
        assert_eq!(turns[1].blocks[0], Block::Text("looking".into()));
    }

    #[test]
    fn tools_take_the_openai_form() {
        assert_eq!(
            tool(&json!({"type":"function","function":{"name":"pwd","description":"Where"}})),
            Some(
                json!({"name":"pwd","description":"Where","input_schema":{"type":"object","properties":{}}})
            )
        );
        assert!(tool(&json!({"type":"function"})).is_none());
    }
}
