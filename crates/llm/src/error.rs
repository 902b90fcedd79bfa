//! [`LlmError`]: why a model request failed. Every variant's message is one line a user can act on.

/// A failed model request or an unusable model configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// No chat model is configured and none can be inferred
    /// (`docs/behaviour.md#choosing-the-chat-model` step 3), or a role's model is empty.
    #[error("{0}")]
    NoModel(String),
    /// No key was found for the model and no base URL is configured.
    #[error("no API key for model {model}: {hint}")]
    MissingKey {
        /// The configured model name.
        model: String,
        /// What to set.
        hint: String,
    },
    /// The server refused the key (HTTP 401 or 403).
    #[error(
        "the model server rejected the API key for {model} (HTTP {status}): {message}; check the key configured for it"
    )]
    BadKey {
        /// The configured model name.
        model: String,
        /// 401 or 403.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// Any other HTTP error status (after retries for 429 and 5xx).
    #[error("model request to {url} failed with HTTP {status}: {message}")]
    Status {
        /// The request URL.
        url: String,
        /// The status code.
        status: u16,
        /// The server's message (the `error.message` field when the body is OpenAI-style JSON).
        message: String,
    },
    /// The server could not be reached (after retries).
    #[error("cannot reach the model server at {url}: {message}")]
    Connect {
        /// The request URL.
        url: String,
        /// The transport's message.
        message: String,
    },
    /// A stream delivered no data for `llm_timeout_seconds`.
    #[error("the model stream delivered no data for {0} s (llm_timeout_seconds)")]
    Timeout(u64),
    /// The stream carried an `error` object or broke off.
    #[error("the model stream failed: {0}")]
    Stream(String),
    /// The response could not be understood.
    #[error("unexpected response from the model server: {0}")]
    Protocol(String),
    /// The configured model uses a protocol this build cannot speak.
    #[error("{0}")]
    Unsupported(String),
}

impl LlmError {
    /// Whether a request that failed this way, before any response data, may be retried
    /// (HTTP 429, HTTP 5xx, connection failures; `docs/behaviour.md#requests`).
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status == 429 || (500..600).contains(status),
            LlmError::Connect { .. } => true,
            _ => false,
        }
    }
}
