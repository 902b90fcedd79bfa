//! The retry policy and timeouts every chat client shares (`docs/behaviour.md#requests`), and the
//! one-line error helpers used when a request fails.

use std::time::Duration;

use crate::LlmError;

/// When and how often a failed request is retried (`docs/behaviour.md#requests`): a chat request
/// that fails **before any response data arrives** with HTTP 429, HTTP 5xx or a connection error is
/// retried (see [`LlmError::is_retryable`]); a failure once streaming has started is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The waits before each retry; its length is the number of retries. Default: 1 s, then 4 s.
    pub delays: Vec<Duration>,
    /// A `Retry-After` header up to this long is honoured instead of the delay. Default 30 s.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            delays: vec![Duration::from_secs(1), Duration::from_secs(4)],
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// How long to wait before retrying after failed attempt number `attempt` (0 for the first
    /// request), or `None` when the request must not be retried: `error` is not retryable or the
    /// retries are used up. A `retry_after` (the server's `Retry-After`) up to
    /// [`max_retry_after`](Self::max_retry_after) replaces the policy's delay.
    pub fn wait_before_retry(
        &self,
        attempt: usize,
        error: &LlmError,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let delay = self.delays.get(attempt)?;
        if !error.is_retryable() {
            return None;
        }
        Some(
            retry_after
                .filter(|d| *d <= self.max_retry_after)
                .unwrap_or(*delay),
        )
    }
}

/// Timeouts of a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting. Default 30 s.
    pub connect: Duration,
    /// A stream (or a non-streamed response) that delivers no data this long fails the request.
    /// Default 120 s (`llm_timeout_seconds`).
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(30),
            idle: Duration::from_secs(120),
        }
    }
}

/// A `Retry-After` header in whole seconds, if present and numeric.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// The `error.message` of an OpenAI- or Anthropic-style error body, else the body (cut to 300
/// characters), on one line.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v.get("error")
            .and_then(|e| e.get("message").or(Some(e)))
            .or_else(|| v.get("message"))
            .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned))
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    let text = text.replace('\n', " ");
    if text.chars().count() > 300 {
        text.chars().take(300).collect::<String>() + "…"
    } else if text.is_empty() {
        "(empty response body)".into()
    } else {
        text
    }
}

/// An error and its sources on one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> LlmError {
        LlmError::Status {
            url: "u".into(),
            status: code,
            message: "m".into(),
        }
    }

    #[test]
    fn retries_429_5xx_and_connection_failures_twice() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.wait_before_retry(0, &status(429), None),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            p.wait_before_retry(1, &status(503), None),
            Some(Duration::from_secs(4))
        );
        assert_eq!(p.wait_before_retry(2, &status(503), None), None);
        assert_eq!(p.wait_before_retry(0, &status(400), None), None);
        let connect = LlmError::Connect {
            url: "u".into(),
            message: "refused".into(),
        };
        assert!(p.wait_before_retry(0, &connect, None).is_some());
        assert_eq!(
            p.wait_before_retry(0, &LlmError::Stream("x".into()), None),
            None
        );
    }

    #[test]
    fn retry_after_up_to_30_s_replaces_the_delay() {
        let p = RetryPolicy::default();
        let e = status(429);
        assert_eq!(
            p.wait_before_retry(0, &e, Some(Duration::from_secs(7))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            p.wait_before_retry(0, &e, Some(Duration::from_secs(31))),
            Some(Duration::from_secs(1))
        );
    }

    #[test]
    fn error_messages_are_one_line() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Incorrect API key","type":"x"}}"#),
            "Incorrect API key"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
            ),
            "slow down"
        );
        assert_eq!(error_message("bad\ngateway"), "bad gateway");
        assert_eq!(error_message(""), "(empty response body)");
    }
}
