//! The OpenAI-compatible chat client (`docs/behaviour.md#openai-compatible-streams`,
//! `docs/behaviour.md#model-providers`): streamed and non-streamed chat completions with tool
//! calls, retries, and the non-streaming fallback for servers that answer an empty stream when
//! tools are offered.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use elroy_core::{BoxFuture, ToolCall};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use crate::accumulate::{ToolCallAccumulator, ToolCallDelta, generated_call_id};
use crate::retry::{RetryPolicy, Timeouts, error_chain, error_message, retry_after};
use crate::{ChatModel, ChatRequest, ChatResponse, LlmError, ModelEndpoint, StreamDelta};

/// Base URLs that answered an empty stream while tools were offered; later requests to them go
/// non-streaming at once (`docs/behaviour.md#requests`, "Servers that cannot stream with tools").
fn non_streaming_bases() -> &'static Mutex<HashSet<String>> {
    static BASES: std::sync::OnceLock<Mutex<HashSet<String>>> = std::sync::OnceLock::new();
    BASES.get_or_init(|| Mutex::new(HashSet::new()))
}

/// A chat client for one OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiChat {
    http: reqwest::Client,
    endpoint: Arc<ModelEndpoint>,
    retry: RetryPolicy,
    timeouts: Timeouts,
}

impl OpenAiChat {
    /// A client for `endpoint`.
    ///
    /// # Errors
    /// [`LlmError::Connect`] when the HTTP client cannot be built (TLS set-up).
    pub fn new(
        endpoint: ModelEndpoint,
        retry: RetryPolicy,
        timeouts: Timeouts,
    ) -> Result<Self, LlmError> {
        crate::install_tls();
        let http = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .build()
            .map_err(|e| LlmError::Connect {
                url: endpoint.base_url.clone(),
                message: e.to_string(),
            })?;
        Ok(OpenAiChat {
            http,
            endpoint: Arc::new(endpoint),
            retry,
            timeouts,
        })
    }

    /// The endpoint this client talks to.
    pub fn endpoint(&self) -> &ModelEndpoint {
        &self.endpoint
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.endpoint.base_url)
    }

    /// The JSON body of a request (`docs/behaviour.md#requests`).
    ///
    /// Messages whose content is absent (synthetic assistant messages that only call a tool) go out
    /// with `"content": ""`: OpenAI accepts both, and llama-cpp-python's server rejects `null` with
    /// HTTP 500.
    pub fn request_body(&self, request: &ChatRequest, stream: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), Value::String(self.endpoint.model.clone()));
        body.insert(
            "messages".into(),
            Value::Array(request.messages.iter().map(wire_message).collect()),
        );
        body.insert("stream".into(), Value::Bool(stream));
        if !request.tools.is_empty() {
            body.insert(
                "tools".into(),
                Value::Array(request.tools.iter().map(wire_tool).collect()),
            );
            // `auto` is OpenAI's default; sent explicitly because some servers (llama-cpp-python's
            // chatml-function-calling) ignore the tools entirely without a `tool_choice`.
            let choice = match &request.forced_tool {
                Some(name) => json!({"type": "function", "function": {"name": name}}),
                None => json!("auto"),
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(schema) = &request.json_schema {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "result", "schema": schema}}),
            );
        }
        Value::Object(body)
    }

    /// Sends `body`, retrying 429, 5xx and connection failures before any response data.
    async fn send(&self, body: &Value) -> Result<reqwest::Response, LlmError> {
        let url = self.url();
        let mut attempt = 0usize;
        loop {
            let mut builder = self.http.post(&url).json(body);
            if let Some(key) = &self.endpoint.api_key {
                builder = builder.bearer_auth(key);
            }
            if let Some(org) = &self.endpoint.organization {
                builder = builder.header("OpenAI-Organization", org);
            }
            let sent = tokio::time::timeout(self.timeouts.idle, builder.send()).await;
            let (error, retry_after) = match sent {
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => self.status_error(&url, response).await,
                Ok(Err(e)) => (
                    LlmError::Connect {
                        url: url.clone(),
                        message: error_chain(&e),
                    },
                    None,
                ),
                Err(_) => (
                    LlmError::Connect {
                        url: url.clone(),
                        message: format!("no response within {} s", self.timeouts.idle.as_secs()),
                    },
                    None,
                ),
            };
            let Some(wait) = self.retry.wait_before_retry(attempt, &error, retry_after) else {
                return Err(error);
            };
            tracing::warn!(%error, wait_ms = wait.as_millis() as u64, "retrying model request");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn status_error(
        &self,
        url: &str,
        response: reqwest::Response,
    ) -> (LlmError, Option<Duration>) {
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let body = response.text().await.unwrap_or_default();
        let message = error_message(&body);
        let error = if status == 401 || status == 403 {
            LlmError::BadKey {
                model: self.endpoint.name.clone(),
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
        (error, retry_after)
    }

    async fn complete_inner(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let body = self.request_body(request, false);
        let response = self.send(&body).await?;
        let text = tokio::time::timeout(self.timeouts.idle, response.text())
            .await
            .map_err(|_| LlmError::Timeout(self.timeouts.idle.as_secs()))?
            .map_err(|e| LlmError::Stream(error_chain(&e)))?;
        parse_completion(&text)
    }

    async fn stream_inner(
        &self,
        request: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let offers_tools = !request.tools.is_empty();
        if offers_tools && self.base_is_non_streaming() {
            return self.fallback(request, on_delta).await;
        }
        let body = self.request_body(request, true);
        let response = self.send(&body).await?;
        let mut events = response.bytes_stream().eventsource();
        let mut state = StreamState::default();
        loop {
            let next = tokio::time::timeout(self.timeouts.idle, events.next())
                .await
                .map_err(|_| LlmError::Timeout(self.timeouts.idle.as_secs()))?;
            let Some(event) = next else { break };
            let event = event.map_err(|e| LlmError::Stream(e.to_string()))?;
            if event.data.trim() == "[DONE]" {
                break;
            }
            if event.data.trim().is_empty() {
                continue;
            }
            let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                LlmError::Protocol(format!("stream chunk is not JSON ({e}): {}", event.data))
            })?;
            state.apply(&chunk, on_delta)?;
        }
        if offers_tools && !state.saw_delta {
            tracing::warn!(
                base = %self.endpoint.base_url,
                "the server answered an empty stream while tools were offered; retrying without streaming and using non-streaming requests for this server from now on"
            );
            if let Ok(mut bases) = non_streaming_bases().lock() {
                bases.insert(self.endpoint.base_url.clone());
            }
            return self.fallback(request, on_delta).await;
        }
        Ok(state.finish())
    }

    fn base_is_non_streaming(&self) -> bool {
        non_streaming_bases()
            .lock()
            .map(|b| b.contains(&self.endpoint.base_url))
            .unwrap_or(false)
    }

    /// A non-streamed request whose answer is delivered as if it had streamed.
    async fn fallback(
        &self,
        request: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let response = self.complete_inner(request).await?;
        if !response.reasoning.is_empty() {
            on_delta(StreamDelta::Reasoning(response.reasoning.clone()));
        }
        if !response.content.is_empty() {
            on_delta(StreamDelta::Text(response.content.clone()));
        }
        Ok(response)
    }
}

impl ChatModel for OpenAiChat {
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

/// What a stream has delivered so far.
#[derive(Default)]
struct StreamState {
    content: String,
    reasoning: String,
    calls: ToolCallAccumulator,
    finish_reason: Option<String>,
    saw_delta: bool,
}

impl StreamState {
    fn apply(
        &mut self,
        chunk: &Value,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), LlmError> {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(LlmError::Stream(message));
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(key).and_then(Value::as_str)
                && !text.is_empty()
            {
                self.saw_delta = true;
                self.reasoning.push_str(text);
                on_delta(StreamDelta::Reasoning(text.to_owned()));
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.saw_delta = true;
            self.content.push_str(text);
            on_delta(StreamDelta::Text(text.to_owned()));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for entry in calls {
                if let Some(d) = ToolCallDelta::from_openai_json(entry) {
                    self.saw_delta = true;
                    if let Some(name) = &d.name {
                        on_delta(StreamDelta::ToolCallStarted(name.clone()));
                    }
                    self.calls.push(d);
                }
            }
        }
        Ok(())
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

/// A tool schema as sent on the wire: a function without `parameters` (tools that take no
/// arguments, K1) gets `{"type":"object","properties":{}}`, because some OpenAI-compatible
/// servers (llama-cpp-python) reject a function without it. The registry's schema is unchanged.
fn wire_tool(tool: &Value) -> Value {
    let mut tool = tool.clone();
    if let Some(function) = tool.get_mut("function").and_then(Value::as_object_mut)
        && !function.contains_key("parameters")
    {
        function.insert(
            "parameters".into(),
            json!({"type": "object", "properties": {}}),
        );
    }
    tool
}

/// Parses a non-streamed chat completion (`choices[0].message`).
///
/// # Errors
/// [`LlmError::Protocol`] when the body is not a completion; [`LlmError::Stream`] when it carries an
/// `error` object.
pub fn parse_completion(body: &str) -> Result<ChatResponse, LlmError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| LlmError::Protocol(format!("response is not JSON ({e})")))?;
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        return Err(LlmError::Stream(error_message(&error.to_string())));
    }
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| LlmError::Protocol("response has no choices".into()))?;
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let text = |key: &str| {
        message
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let reasoning = match text("reasoning_content") {
        r if r.is_empty() => text("reasoning"),
        r => r,
    };
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let function = c.get("function")?;
                    let name = function.get("name")?.as_str()?.to_owned();
                    let arguments = match function.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        None | Some(Value::Null) => String::new(),
                        Some(other) => other.to_string(),
                    };
                    let id = c
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map_or_else(generated_call_id, str::to_owned);
                    Some(ToolCall {
                        id,
                        name,
                        arguments,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ChatResponse {
        content: text("content"),
        reasoning,
        tool_calls,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// One message in OpenAI form, with an absent content sent as `""` (see
/// [`OpenAiChat::request_body`]).
fn wire_message(message: &elroy_core::Message) -> Value {
    let mut value = message.to_openai_json();
    if let Some(content) = value.get_mut("content").filter(|c| c.is_null()) {
        *content = Value::String(String::new());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_content_goes_out_as_an_empty_string() {
        // llama-cpp-python answers HTTP 500 to `"content": null` (a synthetic recall call).
        let [call, result] = elroy_core::Message::synthetic_pair("id-1", "get_fast_recall", "{}");
        assert_eq!(wire_message(&call)["content"], json!(""));
        assert_eq!(wire_message(&call)["tool_calls"][0]["id"], json!("id-1"));
        assert_eq!(wire_message(&result)["content"], json!("{}"));
    }

    #[test]
    fn stream_state_assembles_text_reasoning_and_calls() {
        let mut state = StreamState::default();
        let mut seen = Vec::new();
        let mut sink = |d: StreamDelta| seen.push(d);
        for chunk in [
            json!({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}),
            json!({"choices":[{"delta":{"reasoning_content":"hm"}}]}),
            json!({"choices":[{"delta":{"content":"Hi"}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"ls","arguments":"{\"pa"}},{"index":0,"function":{"arguments":"th\":\".\"}"}}]}}]}),
            json!({"choices":[{"delta":{},"finish_reason":"tool_calls"}]}),
        ] {
            state.apply(&chunk, &mut sink).unwrap();
        }
        let r = state.finish();
        assert_eq!(r.content, "Hi");
        assert_eq!(r.reasoning, "hm");
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            r.tool_calls,
            [ToolCall {
                id: "c1".into(),
                name: "ls".into(),
                arguments: "{\"path\":\".\"}".into()
            }]
        );
        assert_eq!(
            seen,
            [
                StreamDelta::Reasoning("hm".into()),
                StreamDelta::Text("Hi".into()),
                StreamDelta::ToolCallStarted("ls".into())
            ]
        );
    }

    #[test]
    fn stream_error_object_fails() {
        let mut state = StreamState::default();
        let err = state
            .apply(&json!({"error":{"message":"overloaded"}}), &mut |_| {})
            .unwrap_err();
        assert_eq!(err.to_string(), "the model stream failed: overloaded");
    }

    #[test]
    fn parses_non_streamed_completion() {
        let r = parse_completion(
            r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"pwd","arguments":{}}}]},"finish_reason":"tool_calls"}]}"#,
        )
        .unwrap();
        assert_eq!(r.content, "");
        assert_eq!(r.tool_calls[0].name, "pwd");
        assert_eq!(r.tool_calls[0].arguments, "{}");
        assert!(r.tool_calls[0].id.starts_with("call_"));
        assert!(parse_completion("{}").is_err());
    }

    #[test]
    fn tools_without_parameters_get_an_empty_object_on_the_wire() {
        let with = json!({"type":"function","function":{"name":"ls","description":"d","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":[]}}});
        assert_eq!(wire_tool(&with), with);
        assert_eq!(
            wire_tool(&json!({"type":"function","function":{"name":"pwd","description":"d"}})),
            json!({"type":"function","function":{"name":"pwd","description":"d","parameters":{"type":"object","properties":{}}}})
        );
    }
}
