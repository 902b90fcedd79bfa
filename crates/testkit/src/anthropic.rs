//! Anthropic Messages answers (`POST /v1/messages`) of the mock server: the same scripted
//! [`Reply`]s, sent as Anthropic's SSE events (`message_start`, `content_block_start` (text /
//! tool_use), `content_block_delta` (`text_delta` / `input_json_delta`), `content_block_stop`,
//! `message_delta`, `message_stop`) or as one non-streamed message.

use serde_json::{Value, json};

use crate::reply::{ScriptedCall, pieces};

/// Anthropic's `stop_reason` for a scripted `finish_reason` (OpenAI names are translated:
/// `stop` → `end_turn`, `tool_calls` → `tool_use`, `length` → `max_tokens`).
pub(crate) fn stop_reason(finish_reason: Option<&str>, has_calls: bool) -> String {
    match finish_reason {
        Some("stop") => "end_turn",
        Some("tool_calls") => "tool_use",
        Some("length") => "max_tokens",
        Some(other) => other,
        None if has_calls => "tool_use",
        None => "end_turn",
    }
    .to_owned()
}

fn call_id(call: &ScriptedCall, index: usize) -> String {
    call.id
        .clone()
        .unwrap_or_else(|| format!("toolu_testkit_{index}"))
}

/// The SSE events of an answer; each value's `type` is its `event:` name.
pub(crate) fn answer_events(
    content: &str,
    calls: &[ScriptedCall],
    chunk_chars: usize,
    stop_reason: &str,
) -> Vec<Value> {
    let mut out = vec![
        json!({"type": "message_start", "message": {
            "id": "msg_testkit", "type": "message", "role": "assistant", "model": "testkit",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 0, "output_tokens": 0}}}),
        json!({"type": "ping"}),
    ];
    let mut index = 0usize;
    if !content.is_empty() {
        out.push(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}}));
        for piece in pieces(content, chunk_chars) {
            out.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece}}));
        }
        out.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    for (n, call) in calls.iter().enumerate() {
        out.push(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call_id(call, n), "name": call.name, "input": {}}}));
        out.push(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": ""}}));
        for piece in pieces(&call.arguments, chunk_chars) {
            out.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        out.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    out.push(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": 0}}));
    out.push(json!({"type": "message_stop"}));
    out
}

/// The non-streamed message of an answer. A call's `input` is its arguments parsed, or the raw
/// text when they do not parse.
pub(crate) fn answer_message(content: &str, calls: &[ScriptedCall], stop_reason: &str) -> Value {
    let mut blocks = Vec::new();
    if !content.is_empty() {
        blocks.push(json!({"type": "text", "text": content}));
    }
    for (n, call) in calls.iter().enumerate() {
        let input = if call.arguments.is_empty() {
            json!({})
        } else {
            serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!(call.arguments))
        };
        blocks.push(
            json!({"type": "tool_use", "id": call_id(call, n), "name": call.name, "input": input}),
        );
    }
    json!({
        "id": "msg_testkit", "type": "message", "role": "assistant", "model": "testkit",
        "content": blocks, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    })
}

/// Anthropic's error body for an HTTP status.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// SSE text of Anthropic events: `event: {type}` and `data: {json}` per event.
pub(crate) fn sse_body(events: &[Value]) -> String {
    let mut body = String::new();
    for event in events {
        let name = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        body.push_str("event: ");
        body.push_str(name);
        body.push_str("\ndata: ");
        body.push_str(&event.to_string());
        body.push_str("\n\n");
    }
    body
}
