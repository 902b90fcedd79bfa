//! [`Reply`]: one scripted answer of the mock server.

use serde_json::{Value, json};

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    /// The call id (`None` sends no id, to test generated ids).
    pub id: Option<String>,
    /// The tool name.
    pub name: String,
    /// The raw arguments text (may be invalid JSON on purpose).
    pub arguments: String,
}

/// What the server answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// An assistant answer: text and/or tool calls. Streamed as SSE when the request asked for
    /// `"stream": true` (text in `chunk_chars`-sized pieces, each call's arguments likewise, then a
    /// `finish_reason` chunk and `data: [DONE]`); otherwise one JSON completion.
    Answer {
        /// The text (`""` for none).
        content: String,
        /// The tool calls.
        calls: Vec<ScriptedCall>,
        /// Size of the streamed pieces in characters (at least 1).
        chunk_chars: usize,
        /// `finish_reason` to send (default `stop`, or `tool_calls` when there are calls).
        finish_reason: Option<String>,
    },
    /// Raw SSE chunks (each a JSON value sent as one `data:` line), then `data: [DONE]` unless
    /// `done` is false. For a non-streaming request the server answers HTTP 400.
    Chunks {
        /// The chunks.
        chunks: Vec<Value>,
        /// Whether to end with `data: [DONE]`.
        done: bool,
    },
    /// HTTP 200 with an empty SSE stream (just `data: [DONE]`) when streaming is asked for, like
    /// llama.cpp's Python server with tools; a normal answer with this text otherwise.
    EmptyStreamUnlessNonStreaming(String),
    /// An HTTP error status with an OpenAI-style error body.
    Status {
        /// The status code.
        status: u16,
        /// The error message.
        message: String,
        /// A `Retry-After` header value in seconds.
        retry_after: Option<u64>,
    },
    /// An embeddings response with this vector.
    Embedding(Vec<f32>),
    /// HTTP 200 with this JSON body, whatever was asked (a model list for `GET /v1/models`).
    Json(Value),
    /// Raw Anthropic SSE events for a streamed `/v1/messages` request: each value is sent as
    /// `event: {its "type"}` and `data: {the value}` (to test a stream split any way, an `error`
    /// event, or a stream that ends without `message_stop`). Other requests get HTTP 400.
    AnthropicEvents(Vec<Value>),
    /// A streamed text answer held in the middle: `first` is sent at once, the rest of the
    /// stream (`rest`, the finish chunk, `[DONE]`) only after [`Release::release`] — to see what
    /// a front end shows while the server still holds the rest. Streaming OpenAI requests only
    /// (others get HTTP 400). Built by [`Reply::held`].
    Held {
        /// The text sent at once.
        first: String,
        /// The text sent after the release.
        rest: String,
        /// Lets the rest go.
        release: Release,
    },
}

/// Lets the rest of a [`Reply::Held`] stream go (once released, it stays released).
#[derive(Debug, Clone)]
pub struct Release(pub(crate) std::sync::Arc<tokio::sync::Semaphore>);

impl Release {
    /// Sends the rest of the held answer.
    pub fn release(&self) {
        self.0.add_permits(1);
    }
}

impl PartialEq for Release {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Reply {
    /// A streamed text answer whose `rest` waits for the returned [`Release`] ([`Reply::Held`]).
    pub fn held(first: impl Into<String>, rest: impl Into<String>) -> (Self, Release) {
        let release = Release(std::sync::Arc::new(tokio::sync::Semaphore::new(0)));
        (
            Reply::Held {
                first: first.into(),
                rest: rest.into(),
                release: release.clone(),
            },
            release,
        )
    }

    /// A text answer.
    pub fn text(content: impl Into<String>) -> Self {
        Reply::Answer {
            content: content.into(),
            calls: Vec::new(),
            chunk_chars: 4,
            finish_reason: None,
        }
    }

    /// An answer with one tool call (id `call_{name}_{n}` where n counts calls in the reply).
    pub fn tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Reply::tool_calls(vec![(name.into(), arguments.into())])
    }

    /// An answer with several tool calls, ids `call_1`, `call_2`, … prefixed by the tool name.
    pub fn tool_calls(calls: Vec<(String, String)>) -> Self {
        Reply::Answer {
            content: String::new(),
            calls: calls
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| ScriptedCall {
                    id: Some(format!("call_{name}_{}", i + 1)),
                    name,
                    arguments,
                })
                .collect(),
            chunk_chars: 4,
            finish_reason: None,
        }
    }

    /// Sets the streamed piece size (1 = one character per chunk).
    pub fn chunked(mut self, chars: usize) -> Self {
        if let Reply::Answer { chunk_chars, .. } = &mut self {
            *chunk_chars = chars.max(1);
        }
        self
    }

    /// Adds text to an answer.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        if let Reply::Answer { content, .. } = &mut self {
            *content = text.into();
        }
        self
    }

    /// Sets the `finish_reason`.
    pub fn finish(mut self, reason: impl Into<String>) -> Self {
        if let Reply::Answer { finish_reason, .. } = &mut self {
            *finish_reason = Some(reason.into());
        }
        self
    }

    /// An HTTP error.
    pub fn status(status: u16, message: impl Into<String>) -> Self {
        Reply::Status {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// Adds a `Retry-After` header to a [`Reply::Status`].
    pub fn retry_after(mut self, seconds: u64) -> Self {
        if let Reply::Status { retry_after, .. } = &mut self {
            *retry_after = Some(seconds);
        }
        self
    }

    /// Raw SSE chunks ending with `data: [DONE]`.
    pub fn chunks(chunks: Vec<Value>) -> Self {
        Reply::Chunks { chunks, done: true }
    }
}

pub(crate) fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-testkit",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "testkit",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// The SSE chunks of an answer.
pub(crate) fn answer_chunks(
    content: &str,
    calls: &[ScriptedCall],
    chunk_chars: usize,
    finish_reason: &str,
) -> Vec<Value> {
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for piece in pieces(content, chunk_chars) {
        out.push(chunk(json!({"content": piece}), None));
    }
    for (index, call) in calls.iter().enumerate() {
        let mut first = json!({"index": index, "type": "function",
            "function": {"name": call.name, "arguments": ""}});
        if let Some(id) = &call.id {
            first["id"] = json!(id);
        }
        out.push(chunk(json!({"tool_calls": [first]}), None));
        for piece in pieces(&call.arguments, chunk_chars) {
            out.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    out.push(chunk(json!({}), Some(finish_reason)));
    out
}

/// The non-streamed completion of an answer.
pub(crate) fn answer_completion(
    content: &str,
    calls: &[ScriptedCall],
    finish_reason: &str,
) -> Value {
    let mut message = json!({"role": "assistant",
        "content": if content.is_empty() && !calls.is_empty() { Value::Null } else { json!(content) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({"id": c.id.clone().unwrap_or_else(|| format!("call_{i}")),
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect(),
        );
    }
    json!({
        "id": "chatcmpl-testkit",
        "object": "chat.completion",
        "created": 0,
        "model": "testkit",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })
}
