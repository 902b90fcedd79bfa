//! [`MockServer`]: a loopback OpenAI-compatible server that replays a script and records every
//! request.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::anthropic;
use crate::reply::{Reply, answer_chunks, answer_completion};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// The path, for example `/v1/chat/completions`.
    pub path: String,
    /// Header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// Whether this is a chat request: OpenAI chat completions or Anthropic messages.
    pub fn is_chat(&self) -> bool {
        self.path.ends_with("/chat/completions") || self.is_anthropic()
    }

    /// Whether this is an Anthropic Messages request (`POST /v1/messages`).
    pub fn is_anthropic(&self) -> bool {
        self.path.ends_with("/v1/messages")
    }

    /// Whether this is an embeddings request.
    pub fn is_embeddings(&self) -> bool {
        self.path.ends_with("/embeddings")
    }

    /// `"stream": true` was asked for.
    pub fn is_stream(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// The `messages` array (empty when absent).
    pub fn messages(&self) -> Vec<Value> {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// The system prompt: the content of the first message when it is a system message, or
    /// Anthropic's top-level `system` (a string, or text blocks joined).
    pub fn system_prompt(&self) -> Option<String> {
        if let Some(system) = self.body.get("system") {
            return Some(text_of(system));
        }
        let messages = self.messages();
        let first = messages.first()?;
        (first.get("role")? == "system")
            .then(|| first.get("content")?.as_str().map(str::to_owned))
            .flatten()
    }

    /// Names of the offered tools, in order (empty when no `tools` key).
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| {
                        t.pointer("/function/name")
                            .or_else(|| t.get("name"))?
                            .as_str()
                            .map(str::to_owned)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether `tools` were offered.
    pub fn has_tools(&self) -> bool {
        self.body.get("tools").is_some()
    }

    /// The content of the last `user` message.
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .find(|m| {
                m.get("role").and_then(Value::as_str) == Some("user")
                    // Anthropic user messages that only carry tool results are skipped.
                    && (!self.is_anthropic()
                        || m.get("content").is_some_and(|c| !text_of(c).is_empty()))
            })
            .and_then(|m| match m.get("content")? {
                Value::String(s) => Some(s.clone()),
                blocks if self.is_anthropic() => Some(text_of(blocks)),
                _ => None,
            })
    }

    /// Anthropic `tool_result` blocks in the messages, in order: `(tool_use_id, content,
    /// is_error)` (`is_error` false when absent).
    pub fn anthropic_tool_results(&self) -> Vec<(String, String, bool)> {
        self.messages()
            .iter()
            .filter_map(|m| m.get("content")?.as_array().cloned())
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|b| {
                (
                    b.get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    b.get("content").map(text_of).unwrap_or_default(),
                    b.get("is_error").and_then(Value::as_bool) == Some(true),
                )
            })
            .collect()
    }

    /// `(tool_call_id, content)` of every `tool` message (for an Anthropic request, of every
    /// `tool_result` block), in order.
    pub fn tool_results(&self) -> Vec<(String, String)> {
        if self.is_anthropic() {
            return self
                .anthropic_tool_results()
                .into_iter()
                .map(|(id, content, _)| (id, content))
                .collect();
        }
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(|m| {
                let text = |k: &str| {
                    m.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                (text("tool_call_id"), text("content"))
            })
            .collect()
    }

    /// The name of the tool each synthetic or model call in the messages called, with the content
    /// of the tool message answering it: `(tool name, result content)` in order.
    pub fn tool_exchanges(&self) -> Vec<(String, String)> {
        let messages = self.messages();
        let results = self.tool_results();
        let mut out = Vec::new();
        for m in &messages {
            let Some(calls) = m.get("tool_calls").and_then(Value::as_array) else {
                continue;
            };
            for call in calls {
                let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some((_, content)) = results.iter().find(|(rid, _)| rid == id) {
                    out.push((name.to_owned(), content.clone()));
                }
            }
        }
        out
    }

    /// The value of a header (name in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A string, or the texts of an array of text blocks joined with `\n`.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text")?.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

type Predicate = Box<dyn Fn(&RecordedRequest) -> bool + Send + Sync>;

struct Rule {
    predicate: Predicate,
    reply: Reply,
    remaining: Option<usize>,
}

#[derive(Default)]
struct Script {
    rules: Vec<Rule>,
    queue: VecDeque<Reply>,
    fallback: Option<Reply>,
    requests: Vec<RecordedRequest>,
    delay: Option<Duration>,
}

type Shared = Arc<Mutex<Script>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Script> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A loopback OpenAI-compatible server on `127.0.0.1` (a random port), running on its own thread.
///
/// Each request is recorded, then answered by the first matching predicate rule
/// ([`when`](Self::when)), else by the next queued reply ([`push`](Self::push), one per request, in
/// order), else by the fallback reply, else with HTTP 500 `script exhausted`. Embedding requests
/// that no rule matches get a deterministic bag-of-words vector. Dropping the server stops it.
pub struct MockServer {
    addr: SocketAddr,
    shared: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl MockServer {
    /// Starts a server.
    ///
    /// # Panics
    /// When no loopback port can be bound (test set-up failure).
    #[allow(clippy::expect_used)]
    pub fn start() -> Self {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port for testkit");
        listener
            .set_nonblocking(true)
            .expect("set the testkit listener non-blocking");
        let addr = listener.local_addr().expect("testkit listener address");
        let shared: Shared = Arc::default();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::clone(&shared);
        std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let app = Router::new().fallback(handle).with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        MockServer {
            addr,
            shared,
            stop: Some(stop),
        }
    }

    /// The base URL to configure as `chat_model_api_base`: `http://127.0.0.1:{port}/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The server's root URL, `http://127.0.0.1:{port}`: the base URL of an Anthropic model
    /// (requests go to `{root}/v1/messages`).
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply for the next request no rule matches.
    pub fn push(&self, reply: Reply) -> &Self {
        lock(&self.shared).queue.push_back(reply);
        self
    }

    /// Answers every request matching `predicate` with `reply` (rules are tried in the order added).
    pub fn when(
        &self,
        predicate: impl Fn(&RecordedRequest) -> bool + Send + Sync + 'static,
        reply: Reply,
    ) -> &Self {
        lock(&self.shared).rules.push(Rule {
            predicate: Box::new(predicate),
            reply,
            remaining: None,
        });
        self
    }

    /// Like [`when`](Self::when), for at most `times` requests.
    pub fn when_times(
        &self,
        predicate: impl Fn(&RecordedRequest) -> bool + Send + Sync + 'static,
        times: usize,
        reply: Reply,
    ) -> &Self {
        lock(&self.shared).rules.push(Rule {
            predicate: Box::new(predicate),
            reply,
            remaining: Some(times),
        });
        self
    }

    /// The reply when no rule matches and the queue is empty.
    pub fn fallback(&self, reply: Reply) -> &Self {
        lock(&self.shared).fallback = Some(reply);
        self
    }

    /// Waits this long before answering each request (to test cancellation and timeouts).
    pub fn delay(&self, delay: Duration) -> &Self {
        lock(&self.shared).delay = Some(delay);
        self
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// The chat-completions requests received so far, in order.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_chat)
            .collect()
    }

    /// How many queued replies are left.
    pub fn pending(&self) -> usize {
        lock(&self.shared).queue.len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn handle(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let (reply, delay) = {
        let mut script = lock(&shared);
        script.requests.push(request.clone());
        let mut chosen = None;
        for rule in &mut script.rules {
            if rule.remaining != Some(0) && (rule.predicate)(&request) {
                if let Some(n) = &mut rule.remaining {
                    *n -= 1;
                }
                chosen = Some(rule.reply.clone());
                break;
            }
        }
        if chosen.is_none() && request.is_embeddings() {
            chosen = Some(Reply::Embedding(bag_of_words(&request.body)));
        }
        let chosen = chosen
            .or_else(|| script.queue.pop_front())
            .or_else(|| script.fallback.clone());
        (chosen, script.delay)
    };
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    match reply {
        Some(reply) => respond(&request, reply),
        None => error_response(500, "testkit: script exhausted", None),
    }
}

fn respond(request: &RecordedRequest, reply: Reply) -> Response {
    if request.is_anthropic() {
        return respond_anthropic(request, reply);
    }
    match reply {
        Reply::Answer {
            content,
            calls,
            chunk_chars,
            finish_reason,
        } => {
            let finish = finish_reason.unwrap_or_else(|| {
                if calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                }
                .to_owned()
            });
            if request.is_stream() {
                sse(&answer_chunks(&content, &calls, chunk_chars, &finish), true)
            } else {
                json_response(&answer_completion(&content, &calls, &finish))
            }
        }
        Reply::Chunks { chunks, done } => {
            if request.is_stream() {
                sse(&chunks, done)
            } else {
                error_response(400, "testkit: raw chunks need a streaming request", None)
            }
        }
        Reply::EmptyStreamUnlessNonStreaming(text) => {
            if request.is_stream() {
                sse(&[], true)
            } else {
                json_response(&answer_completion(&text, &[], "stop"))
            }
        }
        Reply::Status {
            status,
            message,
            retry_after,
        } => error_response(status, &message, retry_after),
        Reply::Embedding(vector) => json_response(&json!({
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": vector}],
            "model": "testkit",
        })),
        Reply::Json(body) => json_response(&body),
        Reply::AnthropicEvents(_) => error_response(
            400,
            "testkit: Anthropic events need a /v1/messages request",
            None,
        ),
        Reply::Held {
            first,
            rest,
            release,
        } => {
            if !request.is_stream() {
                return error_response(
                    400,
                    "testkit: a held answer needs a streaming request",
                    None,
                );
            }
            held_sse(first, rest, release)
        }
    }
}

/// The SSE stream of a held answer: the role chunk and `first` at once, then, after the
/// release, `rest`, the finish chunk and `[DONE]`.
fn held_sse(first: String, rest: String, release: crate::reply::Release) -> Response {
    let all = answer_chunks(&first, &[], usize::MAX, "stop");
    let frame = |chunk: &Value| format!("data: {chunk}\n\n");
    let now: String = all[..all.len() - 1].iter().map(frame).collect();
    let mut later = answer_chunks(&rest, &[], usize::MAX, "stop");
    later.remove(0);
    let later: String = later.iter().map(frame).collect::<String>() + "data: [DONE]\n\n";
    let parts: Vec<(Option<crate::reply::Release>, String)> =
        vec![(None, now), (Some(release), later)];
    let stream = futures_util::stream::unfold(parts.into_iter(), |mut parts| async move {
        let (gate, text) = parts.next()?;
        if let Some(gate) = gate {
            // Closed only when the semaphore is dropped, which the release handle prevents.
            let _ = gate.0.acquire().await.map(|permit| permit.forget());
            gate.0.add_permits(1);
        }
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(text)), parts))
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

/// The answer to an Anthropic Messages request.
fn respond_anthropic(request: &RecordedRequest, reply: Reply) -> Response {
    let refuse = |message: &str| {
        raw_response(
            400,
            "application/json",
            anthropic::error_body(400, message).to_string(),
            None,
        )
    };
    match reply {
        Reply::Answer {
            content,
            calls,
            chunk_chars,
            finish_reason,
        } => {
            let stop = anthropic::stop_reason(finish_reason.as_deref(), !calls.is_empty());
            if request.is_stream() {
                let events = anthropic::answer_events(&content, &calls, chunk_chars, &stop);
                raw_response(200, "text/event-stream", anthropic::sse_body(&events), None)
            } else {
                json_response(&anthropic::answer_message(&content, &calls, &stop))
            }
        }
        Reply::AnthropicEvents(events) if request.is_stream() => {
            raw_response(200, "text/event-stream", anthropic::sse_body(&events), None)
        }
        Reply::EmptyStreamUnlessNonStreaming(text) => {
            if request.is_stream() {
                let events = anthropic::answer_events("", &[], 1, "end_turn");
                raw_response(200, "text/event-stream", anthropic::sse_body(&events), None)
            } else {
                json_response(&anthropic::answer_message(&text, &[], "end_turn"))
            }
        }
        Reply::Status {
            status,
            message,
            retry_after,
        } => raw_response(
            status,
            "application/json",
            anthropic::error_body(status, &message).to_string(),
            retry_after,
        ),
        Reply::AnthropicEvents(_) => refuse("testkit: raw events need a streaming request"),
        Reply::Chunks { .. } => refuse("testkit: OpenAI chunks cannot answer /v1/messages"),
        Reply::Embedding(_) => refuse("testkit: an embedding cannot answer /v1/messages"),
        Reply::Json(body) => json_response(&body),
        Reply::Held { .. } => refuse("testkit: a held answer cannot answer /v1/messages"),
    }
}

fn raw_response(
    status: u16,
    content_type: &'static str,
    body: String,
    retry_after: Option<u64>,
) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (code, [(header::CONTENT_TYPE, content_type)], body).into_response();
    if let Some(seconds) = retry_after
        && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn sse(chunks: &[Value], done: bool) -> Response {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str("data: ");
        body.push_str(&chunk.to_string());
        body.push_str("\n\n");
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/event-stream")],
        body,
    )
        .into_response()
}

fn json_response(value: &Value) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn error_response(status: u16, message: &str, retry_after: Option<u64>) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({"error": {"message": message, "type": "testkit_error"}}).to_string();
    let mut response = (code, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(seconds) = retry_after
        && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// A deterministic 64-dimension bag-of-words vector of the request's first input, L2-normalised
/// (texts sharing words are similar).
fn bag_of_words(body: &Value) -> Vec<f32> {
    let text = match body.get("input") {
        Some(Value::Array(items)) => items
            .first()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let mut v = vec![0f32; 64];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let hash = word.bytes().fold(1469598103934665603u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(1099511628211)
        });
        v[(hash % 64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}
