//! [`GenaiAnthropicChat`]: Anthropic's native Messages API through genai 0.7.2
//! (`docs/behaviour.md#anthropic-streams`, `docs/behaviour.md#model-providers`).
//!
//! What genai does here: the HTTP request (`POST {base}/v1/messages`, `x-api-key`,
//! `anthropic-version: 2023-06-01`, `max_tokens`, `system` with `cache_control`, messages with
//! `tool_use` blocks) and the SSE reading of Anthropic's events. What stays elroy's, at the
//! boundary:
//!
//! - the message conversion of `docs/behaviour.md#message-conversion`
//!   ([`crate::anthropic_messages`]): `tool_result` blocks with `is_error`, later system messages,
//!   merged turns, the placeholder tool, and the tools themselves (genai would turn a tool named
//!   `web_search` into Anthropic's server tool);
//! - tool-call assembly (`docs/behaviour.md#anthropic-streams`,
//!   `docs/behaviour.md#assembling-tool-calls`): genai reports a `tool_use` block as a tool-call
//!   chunk carrying the call's id, name and **the arguments received so far**; each chunk's new
//!   suffix is fed to elroy's [`ToolCallAccumulator`] as one delta at the call's index, so
//!   arguments are the plain concatenation of the `input_json_delta.partial_json` fragments,
//!   exactly as received (genai's own captured calls re-serialise parsed JSON and are not used);
//! - retries ([`RetryPolicy`], shared with the OpenAI-compatible client), the idle timeout
//!   (`llm_timeout_seconds`) and the error messages ([`LlmError`]).

use std::collections::HashMap;
use std::sync::Arc;

use elroy_core::{BoxFuture, ToolCall};
use futures_util::StreamExt;
use genai::adapter::AdapterKind;
use genai::chat::{ChatOptions, ChatStreamEvent, ContentPart, StopReason};
use genai::resolver::{AuthData, Endpoint};
use genai::{ModelIden, ServiceTarget};
use serde_json::Value;

use crate::accumulate::{ToolCallAccumulator, ToolCallDelta, generated_call_id};
use crate::anthropic_messages::{self, AnthropicRequest};
use crate::retry::{RetryPolicy, Timeouts, error_chain, error_message, retry_after};
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError, ModelEndpoint, StreamDelta};

/// `max_tokens` of every Anthropic request (`docs/behaviour.md#requests`).
pub const ANTHROPIC_MAX_TOKENS: u32 = 8192;

/// The key sent when none is configured but a base URL is (a local proxy without authentication):
/// genai requires one (`docs/behaviour.md#provider-endpoint-and-key` allows a placeholder).
const PLACEHOLDER_KEY: &str = "elroy-no-key";

/// A chat client for one Anthropic Messages endpoint (`POST {base}/v1/messages`), through genai
/// 0.7.2.
///
/// Requests carry `x-api-key`, `anthropic-version: 2023-06-01`, `max_tokens` = [`ANTHROPIC_MAX_TOKENS`],
/// the first system message as `system`, tools as `{name, description, input_schema}` and tool
/// results as `tool_result` blocks with `is_error` (`docs/behaviour.md#requests`,
/// `docs/behaviour.md#message-conversion`); with `enable_caching` the system prompt and the last
/// tool carry `cache_control: {"type":"ephemeral"}`. Streamed `tool_use` blocks are assembled by
/// [`ToolCallAccumulator`] (arguments = the `input_json_delta` fragments concatenated as received);
/// `thinking_delta` is [`StreamDelta::Reasoning`]; an `error` event fails the request
/// ([`LlmError::Stream`]). Failures before any answer data (HTTP 429, 5xx, connection errors) are
/// retried by [`RetryPolicy`]; [`Timeouts::idle`] bounds every wait for data.
#[derive(Debug, Clone)]
pub struct GenaiAnthropicChat {
    client: genai::Client,
    endpoint: Arc<ModelEndpoint>,
    caching: bool,
    retry: RetryPolicy,
    timeouts: Timeouts,
}

impl GenaiAnthropicChat {
    /// A client for `endpoint` (protocol Anthropic; `base_url` without `/v1`, as
    /// `docs/behaviour.md#provider-endpoint-and-key` configures it; a base already ending in `/v1`
    /// is used as is). `caching` is `enable_caching`: the system prompt and the last tool get
    /// `cache_control: {"type":"ephemeral"}`.
    ///
    /// # Errors
    /// [`LlmError::Connect`] when the HTTP client cannot be built (TLS set-up).
    pub fn new(
        endpoint: ModelEndpoint,
        caching: bool,
        retry: RetryPolicy,
        timeouts: Timeouts,
    ) -> Result<Self, LlmError> {
        crate::install_tls();
        let connect_error = |message: String| LlmError::Connect {
            url: endpoint.base_url.clone(),
            message,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .build()
            .map_err(|e| connect_error(error_chain(&e)))?;
        let client = genai::Client::builder()
            .with_reqwest(http)
            .build()
            .map_err(|e| connect_error(one_line(&e.to_string())))?;
        Ok(GenaiAnthropicChat {
            client,
            endpoint: Arc::new(endpoint),
            caching,
            retry,
            timeouts,
        })
    }

    /// The endpoint this client talks to.
    pub fn endpoint(&self) -> &ModelEndpoint {
        &self.endpoint
    }

    /// `{base}/v1/`: genai appends `messages`.
    fn api_root(&self) -> String {
        let base = self.endpoint.base_url.trim_end_matches('/');
        if base.ends_with("/v1") {
            format!("{base}/")
        } else {
            format!("{base}/v1/")
        }
    }

    fn url(&self) -> String {
        format!("{}messages", self.api_root())
    }

    /// Where and how genai sends the request: given directly, so genai resolves nothing from the
    /// model name or the environment.
    fn target(&self) -> ServiceTarget {
        let key = self
            .endpoint
            .api_key
            .clone()
            .unwrap_or_else(|| PLACEHOLDER_KEY.to_owned());
        ServiceTarget {
            endpoint: Endpoint::from_owned(self.api_root()),
            auth: AuthData::from_single(key),
            model: ModelIden::new(AdapterKind::Anthropic, self.endpoint.model.as_str()),
        }
    }

    fn prepare(&self, request: &ChatRequest) -> (genai::chat::ChatRequest, ChatOptions) {
        let instruction = request.json_schema.as_ref().map(|schema| {
            format!("Answer with one JSON object that matches this JSON schema, and nothing else:\n{schema}")
        });
        let AnthropicRequest {
            request: genai_request,
            extra_body,
        } = anthropic_messages::request(
            &request.messages,
            &request.tools,
            request.forced_tool.as_deref(),
            self.caching,
            instruction.as_deref(),
        );
        let mut options = ChatOptions::default().with_max_tokens(ANTHROPIC_MAX_TOKENS);
        if let Some(extra) = extra_body {
            options = options.with_extra_body(extra);
        }
        (genai_request, options)
    }

    /// After failed attempt number `attempt`: waits as the retry policy says and returns `Ok`, or
    /// returns the error when the request must not be retried (answer data had arrived, the error
    /// is not retryable, or the retries are used up).
    async fn pause_before_retry(&self, attempt: usize, failure: Failure) -> Result<(), LlmError> {
        if failure.after_data {
            return Err(failure.error);
        }
        let Some(wait) = self
            .retry
            .wait_before_retry(attempt, &failure.error, failure.retry_after)
        else {
            return Err(failure.error);
        };
        tracing::warn!(error = %failure.error, wait_ms = wait.as_millis() as u64, "retrying model request");
        tokio::time::sleep(wait).await;
        Ok(())
    }

    async fn complete_inner(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let (genai_request, options) = self.prepare(request);
        let mut attempt = 0;
        loop {
            match self.complete_once(genai_request.clone(), &options).await {
                Ok(response) => return Ok(response),
                Err(failure) => self.pause_before_retry(attempt, failure).await?,
            }
            attempt += 1;
        }
    }

    async fn complete_once(
        &self,
        genai_request: genai::chat::ChatRequest,
        options: &ChatOptions,
    ) -> Result<ChatResponse, Failure> {
        let call = self
            .client
            .exec_chat(self.target(), genai_request, Some(options));
        let response = tokio::time::timeout(self.timeouts.idle, call)
            .await
            .map_err(|_| Failure::before_data(self.timeout_error()))?
            .map_err(|e| self.failure(&e, false))?;
        Ok(convert_response(response))
    }

    async fn stream_inner(
        &self,
        request: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let (genai_request, options) = self.prepare(request);
        let mut attempt = 0;
        loop {
            match self
                .stream_once(genai_request.clone(), &options, on_delta)
                .await
            {
                Ok(response) => return Ok(response),
                Err(failure) => self.pause_before_retry(attempt, failure).await?,
            }
            attempt += 1;
        }
    }

    async fn stream_once(
        &self,
        genai_request: genai::chat::ChatRequest,
        options: &ChatOptions,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, Failure> {
        let response = self
            .client
            .exec_chat_stream(self.target(), genai_request, Some(options))
            .await
            .map_err(|e| self.failure(&e, false))?;
        let mut stream = response.stream;
        let mut state = StreamState::default();
        loop {
            let next = tokio::time::timeout(self.timeouts.idle, stream.next())
                .await
                .map_err(|_| Failure {
                    error: self.timeout_error(),
                    retry_after: None,
                    after_data: state.saw_data,
                })?;
            let Some(event) = next else { break };
            let event = event.map_err(|e| self.failure(&e, state.saw_data))?;
            if state.apply(event, on_delta) {
                break;
            }
        }
        Ok(state.finish())
    }

    fn timeout_error(&self) -> LlmError {
        LlmError::Timeout(self.timeouts.idle.as_secs())
    }

    /// A genai error as elroy's error, with the server's `Retry-After`.
    fn failure(&self, error: &genai::Error, after_data: bool) -> Failure {
        let (error, retry_after) = map_error(error, &self.endpoint.name, &self.url());
        Failure {
            error,
            retry_after,
            after_data,
        }
    }
}

impl ChatModel for GenaiAnthropicChat {
    fn model_name(&self) -> &str {
        &self.endpoint.name
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.stream_inner(request, on_delta))
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.complete_inner(request))
    }
}

/// A failed attempt: the error, the server's `Retry-After`, and whether answer data had arrived
/// (then it is never retried).
struct Failure {
    error: LlmError,
    retry_after: Option<std::time::Duration>,
    after_data: bool,
}

impl Failure {
    fn before_data(error: LlmError) -> Self {
        Failure {
            error,
            retry_after: None,
            after_data: false,
        }
    }
}

/// What a stream has delivered so far.
#[derive(Default)]
struct StreamState {
    content: String,
    reasoning: String,
    calls: ToolCallAccumulator,
    /// Call id → (index, bytes of arguments seen).
    open: HashMap<String, (u64, usize)>,
    finish_reason: Option<String>,
    saw_data: bool,
}

impl StreamState {
    /// Applies one genai event; `true` at the end of the stream (`message_stop`).
    fn apply(
        &mut self,
        event: ChatStreamEvent,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> bool {
        match event {
            ChatStreamEvent::Start
            | ChatStreamEvent::Heartbeat
            | ChatStreamEvent::ThoughtSignatureChunk(_) => {}
            ChatStreamEvent::Chunk(chunk) => {
                if !chunk.content.is_empty() {
                    self.saw_data = true;
                    self.content.push_str(&chunk.content);
                    on_delta(StreamDelta::Text(chunk.content));
                }
            }
            ChatStreamEvent::ReasoningChunk(chunk) => {
                if !chunk.content.is_empty() {
                    self.saw_data = true;
                    self.reasoning.push_str(&chunk.content);
                    on_delta(StreamDelta::Reasoning(chunk.content));
                }
            }
            ChatStreamEvent::ToolCallChunk(chunk) => {
                self.saw_data = true;
                self.tool_chunk(chunk.tool_call, on_delta);
            }
            ChatStreamEvent::End(end) => {
                self.finish_reason = end.captured_stop_reason.map(stop_reason_text);
                return true;
            }
        }
        false
    }

    /// One genai tool-call chunk (id, name, arguments so far) as one
    /// `docs/behaviour.md#assembling-tool-calls` delta: the first chunk of an id opens a call at
    /// the next index; later chunks append what is new since the last one.
    fn tool_chunk(
        &mut self,
        call: genai::chat::ToolCall,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) {
        let so_far = match &call.fn_arguments {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let next_index = self.open.len() as u64;
        let (index, seen) = self
            .open
            .get(&call.call_id)
            .copied()
            .unwrap_or((next_index, 0));
        let opening = seen == 0 && !self.open.contains_key(&call.call_id);
        let fragment = match so_far.get(seen..) {
            Some(new) if so_far.len() >= seen => new.to_owned(),
            _ => {
                tracing::warn!(call = %call.call_id, "tool-call arguments did not grow by appending; using the whole text");
                so_far.clone()
            }
        };
        self.open
            .insert(call.call_id.clone(), (index, so_far.len().max(seen)));
        if opening {
            on_delta(StreamDelta::ToolCallStarted(call.fn_name.clone()));
        }
        self.calls.push(ToolCallDelta {
            index,
            id: (!call.call_id.is_empty()).then(|| call.call_id.clone()),
            name: (opening && !call.fn_name.is_empty()).then(|| call.fn_name.clone()),
            arguments: fragment,
        });
    }

    fn finish(self) -> ChatResponse {
        ChatResponse {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls: self.calls.finish(),
            finish_reason: self.finish_reason,
        }
    }
}

/// Anthropic's `stop_reason` text (`end_turn`, `tool_use`, `max_tokens`, …).
fn stop_reason_text(reason: StopReason) -> String {
    match reason {
        StopReason::Completed(s)
        | StopReason::MaxTokens(s)
        | StopReason::ToolCall(s)
        | StopReason::ContentFilter(s)
        | StopReason::StopSequence(s)
        | StopReason::Other(s) => s,
    }
}

/// A non-streamed genai answer as elroy's: text blocks concatenated, `tool_use` blocks as calls
/// with their `input` as compact JSON (`""` when absent).
fn convert_response(response: genai::chat::ChatResponse) -> ChatResponse {
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for part in response.content.into_parts() {
        match part {
            ContentPart::Text(text) => content.push_str(&text),
            ContentPart::ToolCall(call) => tool_calls.push(ToolCall {
                id: if call.call_id.is_empty() {
                    generated_call_id()
                } else {
                    call.call_id
                },
                name: call.fn_name,
                arguments: match call.fn_arguments {
                    Value::Null => String::new(),
                    Value::String(s) => s,
                    other => other.to_string(),
                },
            }),
            _ => {}
        }
    }
    ChatResponse {
        content,
        reasoning: response.reasoning_content.unwrap_or_default(),
        tool_calls,
        finish_reason: response.stop_reason.map(stop_reason_text),
    }
}

/// genai's error as elroy's (one line), with the `Retry-After` of an HTTP error response.
fn map_error(
    error: &genai::Error,
    model: &str,
    url: &str,
) -> (LlmError, Option<std::time::Duration>) {
    if let Some(status) = error.status() {
        let status = status.as_u16();
        let message = error_message(&error_body(error).unwrap_or_default());
        let retry = error.headers().and_then(retry_after);
        let mapped = if status == 401 || status == 403 {
            LlmError::BadKey {
                model: model.to_owned(),
                status,
                message,
            }
        } else {
            LlmError::Status {
                url: url.to_owned(),
                status,
                message,
            }
        };
        return (mapped, retry);
    }
    let mapped = match error {
        genai::Error::WebStream { error: inner, .. } => {
            if let Some(genai_error) = inner.downcast_ref::<genai::Error>() {
                return map_error(genai_error, model, url);
            }
            match inner.downcast_ref::<reqwest::Error>() {
                Some(e) if e.is_connect() || e.is_request() || e.is_timeout() => {
                    LlmError::Connect {
                        url: url.to_owned(),
                        message: error_chain(e),
                    }
                }
                _ => LlmError::Stream(one_line(&inner.to_string())),
            }
        }
        genai::Error::WebModelCall {
            webc_error: genai::webc::Error::Reqwest(e),
            ..
        } => LlmError::Connect {
            url: url.to_owned(),
            message: error_chain(e),
        },
        // An `error` event in the stream (`overloaded_error`, …): the turn fails
        // (`docs/behaviour.md#anthropic-streams`).
        genai::Error::ChatResponse { body, .. } => {
            LlmError::Stream(error_message(&body.to_string()))
        }
        other => LlmError::Protocol(one_line(&other.to_string())),
    };
    (mapped, None)
}

/// The response body of an HTTP error, when genai kept it.
fn error_body(error: &genai::Error) -> Option<String> {
    match error {
        genai::Error::HttpError { body, .. } => Some(body.clone()),
        genai::Error::WebModelCall {
            webc_error: genai::webc::Error::ResponseFailedStatus { body, .. },
            ..
        } => Some(body.clone()),
        genai::Error::WebStream { error, .. } => {
            error.downcast_ref::<genai::Error>().and_then(error_body)
        }
        _ => None,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
