//! Structured non-streaming calls (`docs/behaviour.md#non-streaming-calls` `complete_structured`):
//! a system text, a user text and a JSON schema; the reply is validated by the caller's parser, a
//! reply that does not validate is retried once, then it is an error.

use elroy_core::Message;
use elroy_llm::{ChatModel, ChatRequest, LlmError};
use serde_json::Value;

/// Why a structured call gave no value ([`structured_call`]); logged by the caller, which goes
/// on without it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StructuredError {
    /// A request failed (after the client's own retries).
    #[error(transparent)]
    Model(#[from] LlmError),
    /// Both replies were rejected by the parser: `the reply did not match the NAME schema`.
    #[error("the reply did not match the {0} schema")]
    Mismatch(String),
}

/// The JSON object of a structured reply: the whole reply, or its first `{` … last `}` when the
/// model wrapped it in prose or a code fence (Anthropic models describe the schema in text). `None`
/// when neither parses as a JSON object.
pub(crate) fn json_object(reply: &str) -> Option<Value> {
    let trimmed = reply.trim();
    let parsed: Value = serde_json::from_str(trimmed).ok().or_else(|| {
        let start = trimmed.find('{')?;
        let end = trimmed.rfind('}')?;
        serde_json::from_str(trimmed.get(start..=end)?).ok()
    })?;
    parsed.is_object().then_some(parsed)
}

/// One structured call to `model`: `[system, user]` with `schema` as the response format. The
/// reply text goes through `parse`; a reply it rejects (`None`) is asked once more, then the call
/// fails.
///
/// # Errors
/// [`StructuredError::Model`] when a request fails (after the client's own retries),
/// [`StructuredError::Mismatch`] when both replies were rejected.
pub(crate) async fn structured_call<T>(
    model: &dyn ChatModel,
    system: String,
    user: String,
    schema: Value,
    schema_name: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, StructuredError> {
    let request = ChatRequest {
        messages: vec![Message::system(system), Message::user(user)],
        json_schema: Some(schema),
        ..ChatRequest::default()
    };
    for _attempt in 0..2 {
        let reply = model.chat(&request).await?;
        if let Some(value) = parse(&reply.content) {
            return Ok(value);
        }
    }
    Err(StructuredError::Mismatch(schema_name.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_objects_are_found_inside_prose_and_fences() {
        assert_eq!(
            json_object(r#"{"a": 1}"#),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            json_object("Sure:\n```json\n{\"a\": true}\n```"),
            Some(serde_json::json!({"a": true}))
        );
        assert_eq!(json_object("[1, 2]"), None);
        assert_eq!(json_object("no json here"), None);
        assert_eq!(json_object(""), None);
    }
}
