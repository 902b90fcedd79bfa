//! # elroy-llm
//!
//! elroy's model clients behind its own traits, so the orchestrator, tests and other backends
//! never depend on a client library:
//!
//! - [`ChatModel`]: streamed and non-streamed chat with tool calls; [`Embedder`]: embeddings.
//! - [`select`]: choosing the model, protocol, base URL and key from the configuration
//!   (`docs/behaviour.md#model-providers`, `docs/behaviour.md#embeddings`), with clear errors when
//!   nothing is configured.
//! - [`OpenAiChat`]: any OpenAI-compatible server (OpenAI, Gemini's compatible endpoint, Ollama,
//!   vLLM, llama.cpp, LM Studio, elroy-testkit). It reads the SSE stream itself
//!   (`docs/behaviour.md#openai-compatible-streams`) because the tool-call assembly rules of
//!   `docs/behaviour.md#assembling-tool-calls` are elroy's (genai 0.7.2 opens a call for every new
//!   index and names id-less calls `call_{index}`); retries 429, 5xx and connection failures before
//!   any data (1 s, then 4 s; `Retry-After` up to 30 s honoured); and, when a server answers an
//!   **empty stream while tools are offered** (llama.cpp's Python server does), repeats the request
//!   once without streaming and sends later requests to that base URL non-streaming
//!   (`docs/behaviour.md#requests`).
//! - [`ToolCallAccumulator`] (`docs/behaviour.md#assembling-tool-calls`, R15, R16) and
//!   [`TextProcessor`] (`docs/behaviour.md#tags-thoughts-and-code`): pure, unit-tested stream
//!   processing.
//!
//! - [`GenaiAnthropicChat`]: Anthropic models (`claude*`, `anthropic/…`) through Anthropic's
//!   native Messages API (`POST {base}/v1/messages`), on **genai** 0.7.2: `tool_result` blocks with
//!   `is_error`, `cache_control` on the system prompt and the last tool with `enable_caching`, the
//!   same retries and idle timeout. genai carries the HTTP request and Anthropic's SSE events;
//!   elroy keeps the `docs/behaviour.md#message-conversion` message conversion and the
//!   `docs/behaviour.md#assembling-tool-calls` tool-call assembly at the boundary (see the module
//!   docs of `genai_chat.rs` for what genai 0.7.2 gets wrong and how it is avoided). genai is not
//!   used for OpenAI-compatible servers: its stream capture fails the
//!   `docs/behaviour.md#assembling-tool-calls` vectors (`docs/behaviour.md#assembling-tool-calls` B
//!   and G), which `docs/behaviour.md#assembling-tool-calls` does not allow.
//!
//! Gemini (`gemini/…`) stays on Google's OpenAI-compatible endpoint.

mod accumulate;
mod anthropic_messages;
mod embed;
mod error;
mod genai_chat;
pub mod model_files;
mod openai;
pub mod probe;
mod retry;
pub mod select;
mod text;

use std::sync::Arc;
use std::time::Duration;

use elroy_config::Config;
use elroy_core::{BoxFuture, Message, ToolCall};

pub use accumulate::{ToolCallAccumulator, ToolCallDelta, generated_call_id};
pub use anthropic_messages::{LATER_SYSTEM_PREFIX, PLACEHOLDER_DESCRIPTION, PLACEHOLDER_TOOL};
pub use embed::{BlockingEmbedder, OpenAiEmbedder, parse_embedding};
pub use error::LlmError;
pub use genai_chat::{ANTHROPIC_MAX_TOKENS, GenaiAnthropicChat};
pub use openai::{OpenAiChat, parse_completion};
pub use retry::{RetryPolicy, Timeouts};
pub use select::{ModelEndpoint, ModelRole, Protocol};
pub use text::{TextEvent, TextProcessor, parse_inline_call};

/// One chat request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    /// The context to send, system prompt first.
    pub messages: Vec<Message>,
    /// Tool schemas in OpenAI form (`ToolSpec::to_json`); empty sends no `tools` key.
    pub tools: Vec<serde_json::Value>,
    /// Force a call of this tool (`tool_choice`), only when `tools` is non-empty.
    pub forced_tool: Option<String>,
    /// Ask for a JSON object matching this schema (`response_format`,
    /// `docs/behaviour.md#non-streaming-calls`).
    pub json_schema: Option<serde_json::Value>,
}

/// A complete model answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatResponse {
    /// The raw concatenated text (tags included), `""` if none.
    pub content: String,
    /// Provider reasoning (`reasoning_content`); never stored.
    pub reasoning: String,
    /// The tool calls, assembled by the `docs/behaviour.md#assembling-tool-calls` rules, arguments
    /// as received.
    pub tool_calls: Vec<ToolCall>,
    /// `finish_reason`, if the server sent one.
    pub finish_reason: Option<String>,
}

/// A piece of a streamed answer, delivered as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamDelta {
    /// Reply text (raw, before tag processing).
    Text(String),
    /// Provider reasoning text.
    Reasoning(String),
    /// A tool call with this name was opened.
    ToolCallStarted(String),
}

/// A chat model.
pub trait ChatModel: Send + Sync {
    /// The configured model name (stored as the assistant messages' `model`).
    fn model_name(&self) -> &str;

    /// A streamed request: `on_delta` receives the answer as it arrives; the result is the whole
    /// answer.
    ///
    /// # Errors
    /// [`LlmError`] when the request fails after retries, the stream breaks off or times out.
    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;

    /// A non-streamed request.
    ///
    /// # Errors
    /// As [`ChatModel::chat_stream`].
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;
}

/// An embedding model.
pub trait Embedder: Send + Sync {
    /// The configured model name (stored with each vector).
    fn model_name(&self) -> &str;

    /// The L2-normalised embedding of `text` (never called with empty text).
    ///
    /// # Errors
    /// [`LlmError`] after the retries of `docs/behaviour.md#embeddings`.
    fn embed<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, LlmError>>;
}

/// Installs rustls' `ring` crypto provider as the process default (idempotent). Every client of
/// this crate calls it; reqwest is built with `rustls-no-provider`.
pub fn install_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error means another provider is installed already, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The chat client for `role` from the configuration and the process environment
/// (`llm_timeout_seconds`, `enable_caching`).
///
/// # Errors
/// [`LlmError::NoModel`] / [`LlmError::MissingKey`] when no usable model is configured.
pub fn connect_chat(config: &Config, role: ModelRole) -> Result<Arc<dyn ChatModel>, LlmError> {
    let endpoint = select::endpoint(config, role, &select::process_env)?;
    let idle = Duration::from_secs(config.settings.llm_timeout_seconds.max(1));
    chat_client_with_caching(
        endpoint,
        RetryPolicy::default(),
        Timeouts {
            idle,
            ..Timeouts::default()
        },
        config.settings.enable_caching,
    )
}

/// A chat client for `endpoint`, with `enable_caching` at its default (`true`); see
/// [`chat_client_with_caching`].
///
/// # Errors
/// [`LlmError::Connect`] when the HTTP client cannot be built.
pub fn chat_client(
    endpoint: ModelEndpoint,
    retry: RetryPolicy,
    timeouts: Timeouts,
) -> Result<Arc<dyn ChatModel>, LlmError> {
    chat_client_with_caching(endpoint, retry, timeouts, true)
}

/// A chat client for `endpoint` by its protocol: [`Protocol::Anthropic`] →
/// [`GenaiAnthropicChat`] (native Messages API; `caching` is `enable_caching`), [`Protocol::OpenAi`]
/// → [`OpenAiChat`] (`caching` has no effect there).
///
/// # Errors
/// [`LlmError::Connect`] when the HTTP client cannot be built.
pub fn chat_client_with_caching(
    endpoint: ModelEndpoint,
    retry: RetryPolicy,
    timeouts: Timeouts,
    caching: bool,
) -> Result<Arc<dyn ChatModel>, LlmError> {
    Ok(match endpoint.protocol {
        Protocol::Anthropic => {
            Arc::new(GenaiAnthropicChat::new(endpoint, caching, retry, timeouts)?)
        }
        Protocol::OpenAi => Arc::new(OpenAiChat::new(endpoint, retry, timeouts)?),
    })
}

/// The embedding client, when embeddings are available (`docs/behaviour.md#embeddings`); `None`
/// otherwise.
pub fn connect_embedder(config: &Config) -> Option<Arc<dyn Embedder>> {
    let endpoint = select::endpoint(config, ModelRole::Embedding, &select::process_env).ok()?;
    if endpoint.protocol != Protocol::OpenAi {
        return None;
    }
    OpenAiEmbedder::new(endpoint, Duration::from_secs(60))
        .ok()
        .map(|e| Arc::new(e) as Arc<dyn Embedder>)
}

/// The embedding model as elroy-core's synchronous [`elroy_core::Embedder`] (for
/// `MemoryStoreOptions::embedder`), when embeddings are available (`docs/behaviour.md#embeddings`);
/// `None` otherwise.
pub fn connect_blocking_embedder(config: &Config) -> Option<Arc<dyn elroy_core::Embedder>> {
    let endpoint = select::endpoint(config, ModelRole::Embedding, &select::process_env).ok()?;
    if endpoint.protocol != Protocol::OpenAi {
        return None;
    }
    OpenAiEmbedder::new(endpoint, Duration::from_secs(60))
        .ok()
        .map(|e| Arc::new(BlockingEmbedder(e)) as Arc<dyn elroy_core::Embedder>)
}

#[cfg(test)]
extern crate self as elroy_llm;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
