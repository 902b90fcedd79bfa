//! `GET /v1/models` and `POST /v1/chat/completions`.
//!
//! A completion request runs one elroy turn with the text of its last message (which must be the
//! user's): the history the client resends only finds the session ([`crate::sessions`]); elroy's
//! own context window, recall and due items are what the model sees. The turn runs in its own
//! task; the response waits for it (or streams its text). When the client goes away (the
//! connection closes, the stream is dropped) the task is aborted, which cancels the turn: the
//! user message stays stored, as with Ctrl+C in the interface. After a reply, the turn's
//! background work (memory formation, context refresh) runs while the session stays locked, so
//! the session's next turn sees its result.
//!
//! Tools a client sends (`tools`, non-empty) are refused with `400` (`tools_not_supported`):
//! elroy runs its own tools server-side and never hands `tool_calls` to a client.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use elroy_core::Capabilities;
use elroy_orchestrator::{Session, TurnEvent, TurnInput};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::sessions::{HistoryMessage, SessionId};
use crate::settings::ToolActivity;
use crate::users::UserState;
use crate::{AppState, AuthedUser, LogNote, openai_error};

/// The one model elroy serves.
pub const MODEL_ID: &str = "elroy";

/// The header naming a request's session.
pub const SESSION_HEADER: &str = "x-elroy-session";

/// `GET /v1/models`: `elroy`, with the chat model behind it as `elroy_chat_model`.
pub(crate) async fn models(Extension(user): Extension<AuthedUser>) -> Response {
    let chat_model = user.0.runtime.config.settings.chat_model.clone();
    axum::Json(json!({
        "object": "list",
        "data": [{
            "id": MODEL_ID,
            "object": "model",
            "created": 0,
            "owned_by": "elroy",
            "elroy_chat_model": chat_model,
        }]
    }))
    .into_response()
}

/// What the turn task tells the response.
enum Out {
    /// Reply text as it comes.
    Text(String),
    /// The turn ended: the whole reply, or why it failed.
    Done(Result<String, TurnFailure>),
}

/// Why a request's turn gave no reply; the text is the `502` error's message.
#[derive(Debug, thiserror::Error)]
enum TurnFailure {
    /// The session could not be started.
    #[error("the session could not start: {0}")]
    Start(#[source] StartError),
    /// The turn failed.
    #[error(transparent)]
    Turn(#[from] elroy_orchestrator::TurnError),
}

/// Why a session could not be started ([`start_session`]).
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// The chat model could not be set up.
    #[error(transparent)]
    Models(#[from] elroy_llm::LlmError),
    /// The session's parts could not be built.
    #[error(transparent)]
    Runtime(#[from] elroy_runtime::RuntimeError),
    /// The session's user row could not be made.
    #[error(transparent)]
    Database(#[from] elroy_db::DbError),
    /// The orchestrator session could not start.
    #[error(transparent)]
    Session(#[from] elroy_orchestrator::SessionError),
}

/// A message `content` elroy does not read; the text follows `messages[i]: `.
#[derive(Debug, thiserror::Error)]
enum ContentError {
    /// A part of another type than `text`.
    #[error("content parts of type '{0}' are not supported (text only)")]
    UnsupportedPart(String),
    /// A part without a type.
    #[error("a content part needs a type")]
    UntypedPart,
    /// Neither a string nor a list (the value as JSON).
    #[error("content must be a string or a list of parts, not {0}")]
    NotText(Value),
}

/// A request, checked.
struct Parsed {
    history: Vec<HistoryMessage>,
    stream: bool,
    client_user: String,
}

/// A `400`: the parameter at fault, OpenAI's error code, the message.
struct BadRequest {
    param: Option<&'static str>,
    code: &'static str,
    message: String,
}

fn bad_request(
    param: Option<&'static str>,
    code: &'static str,
    message: impl Into<String>,
) -> BadRequest {
    BadRequest {
        param,
        code,
        message: message.into(),
    }
}

impl IntoResponse for BadRequest {
    fn into_response(self) -> Response {
        openai_error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            Some(self.code),
            self.param,
            self.message,
        )
    }
}

/// The text of a message's `content`: a string, or the `text` of its text parts.
fn content_text(content: Option<&Value>) -> Result<String, ContentError> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.trim().to_owned()),
        Some(Value::Array(parts)) => {
            let mut text = Vec::new();
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text")) {
                    (Some("text"), Some(Value::String(t))) => text.push(t.as_str()),
                    (Some(kind), _) => return Err(ContentError::UnsupportedPart(kind.to_owned())),
                    _ => return Err(ContentError::UntypedPart),
                }
            }
            Ok(text.join("\n").trim().to_owned())
        }
        Some(other) => Err(ContentError::NotText(other.clone())),
    }
}

fn parse(body: &[u8]) -> Result<Parsed, BadRequest> {
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| bad_request(None, "invalid_json", format!("The body is not JSON: {e}")))?;
    if request
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| !tools.is_empty())
    {
        return Err(bad_request(
            Some("tools"),
            "tools_not_supported",
            "elroy runs its own tools on the server and never returns tool_calls; send the request without `tools`.",
        ));
    }
    let Some(messages) = request.get("messages").and_then(Value::as_array) else {
        return Err(bad_request(
            Some("messages"),
            "missing_messages",
            "`messages` must be a list of {role, content}.",
        ));
    };
    let mut history = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).ok_or_else(|| {
            bad_request(
                Some("messages"),
                "invalid_message",
                format!("messages[{i}] has no role"),
            )
        })?;
        let text = content_text(message.get("content")).map_err(|e| {
            bad_request(
                Some("messages"),
                "invalid_message",
                format!("messages[{i}]: {e}"),
            )
        })?;
        history.push(HistoryMessage {
            role: role.to_owned(),
            text,
        });
    }
    match history.last() {
        Some(last) if last.role == "user" && !last.text.is_empty() => {}
        _ => {
            return Err(bad_request(
                Some("messages"),
                "last_message_not_user",
                "The last message must be the user's, with text: elroy answers it with one turn.",
            ));
        }
    }
    Ok(Parsed {
        history,
        stream: request
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        client_user: request
            .get("user")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    })
}

/// The session a request names (`X-Elroy-Session`), else the one its history continues, else a
/// new one. `Err` for a header that is not a usable name.
fn session_of(
    user: &UserState,
    headers: &HeaderMap,
    parsed: &Parsed,
) -> Result<(SessionId, bool), BadRequest> {
    if let Some(value) = headers.get(SESSION_HEADER) {
        let name = value.to_str().unwrap_or_default().trim();
        if name.is_empty() || name.len() > 200 {
            return Err(bad_request(
                None,
                "invalid_session",
                "X-Elroy-Session must be 1-200 visible ASCII characters.",
            ));
        }
        return Ok((SessionId::new(&user.token, name), true));
    }
    let earlier = &parsed.history[..parsed.history.len() - 1];
    let name = user
        .sessions
        .histories
        .find(&parsed.client_user, earlier)
        .unwrap_or_else(|| format!("c-{}", uuid::Uuid::new_v4().simple()));
    Ok((SessionId::new(&user.token, &name), false))
}

/// Aborts the turn's task when the response is dropped before the turn ended (the client went
/// away).
struct CancelOnDrop {
    task: tokio::task::AbortHandle,
    session: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.task.is_finished() {
            self.task.abort();
            let line = format!(
                "turn cancelled: session={} (the client went away)",
                self.session
            );
            tracing::info!("{line}");
            elroy_runtime::output::eprintln(&line);
        }
    }
}

/// `POST /v1/chat/completions`.
pub(crate) async fn completions(
    State(state): State<Arc<AppState>>,
    Extension(user): Extension<AuthedUser>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let user = user.0;
    let parsed = match parse(&body) {
        Ok(parsed) => parsed,
        Err(bad) => return bad.into_response(),
    };
    let (id, named) = match session_of(&user, &headers, &parsed) {
        Ok(found) => found,
        Err(bad) => return bad.into_response(),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let stream = parsed.stream;
    let session_name = id.name.clone();
    let note = LogNote(format!("user={} session={}", user.token, id.name));
    let task = tokio::spawn(run_turn(
        Arc::clone(&state),
        Arc::clone(&user),
        id,
        named,
        parsed,
        tx,
    ));
    let guard = CancelOnDrop {
        task: task.abort_handle(),
        session: session_name.clone(),
    };
    let mut response = if stream {
        streamed(rx, guard, state.settings.keep_alive).into_response()
    } else {
        whole(rx, guard).await
    };
    if let Ok(value) = HeaderValue::from_str(&session_name) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response.extensions_mut().insert(note);
    response
}

fn completion_id() -> String {
    format!("chatcmpl-{}", uuid::Uuid::new_v4().simple())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn upstream_error(message: &str) -> Value {
    json!({"error": {
        "message": format!("the turn failed: {message}"),
        "type": "server_error",
        "param": null,
        "code": "turn_failed",
    }})
}

/// The non-streaming answer: `chat.completion` with the whole reply, `502` when the turn failed.
async fn whole(mut rx: mpsc::UnboundedReceiver<Out>, guard: CancelOnDrop) -> Response {
    let mut done = None;
    while let Some(out) = rx.recv().await {
        if let Out::Done(result) = out {
            done = Some(result);
            break;
        }
    }
    drop(guard);
    match done {
        Some(Ok(reply)) => axum::Json(json!({
            "id": completion_id(),
            "object": "chat.completion",
            "created": unix_now(),
            "model": MODEL_ID,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }))
        .into_response(),
        Some(Err(failure)) => (
            StatusCode::BAD_GATEWAY,
            axum::Json(upstream_error(&failure.to_string())),
        )
            .into_response(),
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(upstream_error("the turn stopped without an answer")),
        )
            .into_response(),
    }
}

/// The streaming answer: a role chunk, content chunks as the reply comes, a `stop` chunk and
/// `data: [DONE]`; a failed turn is an `error` event before `[DONE]`. Keep-alive comments flow
/// while nothing else does.
fn streamed(
    rx: mpsc::UnboundedReceiver<Out>,
    guard: CancelOnDrop,
    keep_alive: std::time::Duration,
) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let id = completion_id();
    let created = unix_now();
    let chunk = move |delta: Value, finish: Option<&str>| {
        Event::default().data(
            json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            })
            .to_string(),
        )
    };
    let mut queue = VecDeque::new();
    queue.push_back(chunk(json!({"role": "assistant", "content": ""}), None));
    let state = (rx, Some(guard), queue, false);
    let events =
        futures_util::stream::unfold(state, move |(mut rx, mut guard, mut queue, mut ended)| {
            let chunk = chunk.clone();
            async move {
                loop {
                    if let Some(event) = queue.pop_front() {
                        return Some((Ok(event), (rx, guard, queue, ended)));
                    }
                    if ended {
                        return None;
                    }
                    match rx.recv().await {
                        Some(Out::Text(text)) => {
                            queue.push_back(chunk(json!({"content": text}), None))
                        }
                        Some(Out::Done(result)) => {
                            guard.take();
                            ended = true;
                            match result {
                                Ok(_) => queue.push_back(chunk(json!({}), Some("stop"))),
                                Err(failure) => queue.push_back(
                                    Event::default()
                                        .data(upstream_error(&failure.to_string()).to_string()),
                                ),
                            }
                            queue.push_back(Event::default().data("[DONE]"));
                        }
                        None => {
                            guard.take();
                            ended = true;
                            queue.push_back(Event::default().data(
                                upstream_error("the turn stopped without an answer").to_string(),
                            ));
                            queue.push_back(Event::default().data("[DONE]"));
                        }
                    }
                }
            }
        });
    Sse::new(events).keep_alive(KeepAlive::new().interval(keep_alive).text("keep-alive"))
}

/// Starts the orchestrator session of `id`: the user's runtime with the session's own context
/// window (the transcript row of `id.transcript_token`); memories, agenda and notes stay the
/// user's.
fn start_session(user: &UserState, id: &SessionId) -> Result<Session, StartError> {
    let runtime = &user.runtime;
    let warn = |message: &str| runtime.warn(message);
    let models = elroy_runtime::models::Models::build(
        &runtime.config,
        &elroy_llm::select::process_env,
        &warn,
    )?;
    runtime.start_mcp_servers();
    let mut parts = elroy_runtime::adapters::session_parts(
        runtime,
        models,
        Capabilities { can_restart: false },
    )?;
    parts.user_id = parts
        .db
        .ensure_user(&id.transcript_token, runtime.time.now())?;
    Ok(Session::start(parts)?)
}

/// Runs one turn of session `id` (waiting for its previous turn and background work), sending
/// the reply's text and the outcome to `tx`.
async fn run_turn(
    state: Arc<AppState>,
    user: Arc<UserState>,
    id: SessionId,
    named: bool,
    parsed: Parsed,
    tx: mpsc::UnboundedSender<Out>,
) {
    let slot = user.sessions.slot(&id.name);
    let mut lock = slot.lock_owned().await;
    if lock.is_none() {
        match tokio::task::block_in_place(|| start_session(&user, &id)) {
            Ok(session) => *lock = Some(session),
            Err(e) => {
                let _ = tx.send(Out::Done(Err(TurnFailure::Start(e))));
                return;
            }
        }
    }
    let Some(session) = lock.as_ref() else {
        return;
    };
    let summary = state.settings.tool_activity == ToolActivity::Summary;
    let mut sent = String::new();
    let outcome = {
        let mut sink = |event: TurnEvent| {
            let text = match event {
                TurnEvent::TextDelta(text) => text,
                TurnEvent::CodeBlock { language, content } => {
                    format!("```{language}\n{content}```\n")
                }
                TurnEvent::ToolCall { name, .. } if summary => format!("[elroy used {name}]\n\n"),
                _ => return,
            };
            sent.push_str(&text);
            let _ = tx.send(Out::Text(text));
        };
        let text = parsed
            .history
            .last()
            .map(|m| m.text.clone())
            .unwrap_or_default();
        session.turn(&TurnInput::new(text), &mut sink).await
    };
    match outcome {
        Ok(outcome) => {
            let reply = if parsed.stream || summary {
                sent.trim().to_owned()
            } else {
                outcome.reply.trim().to_owned()
            };
            if !named {
                let mut history = parsed.history.clone();
                history.push(HistoryMessage {
                    role: "assistant".into(),
                    text: reply.clone(),
                });
                user.sessions
                    .histories
                    .remember(&parsed.client_user, &history, &id.name);
            }
            let _ = tx.send(Out::Done(Ok(reply)));
            // Background work after the reply; the session stays locked until it is done.
            let name = id.name.clone();
            let background = tokio::spawn(async move {
                if let Some(session) = lock.as_ref() {
                    let report = session.after_turn().await;
                    for failure in &report.failures {
                        let line = format!(
                            "warning: background work after the turn (session={name}): {failure}"
                        );
                        tracing::warn!("{line}");
                        elroy_runtime::output::eprintln(&line);
                    }
                }
                drop(lock);
            });
            state.keep(background);
        }
        Err(e) => {
            let _ = tx.send(Out::Done(Err(TurnFailure::Turn(e))));
        }
    }
}
