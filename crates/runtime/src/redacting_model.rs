//! A [`ChatModel`] that removes secret values from every request before it leaves: automatic
//! recall, the notes files (`MEMORY.md`, `USER.md`), the conversation and tool results all reach
//! the model through it, so a key a person stored in a memory or pasted in a message is not sent
//! (`docs/security.md#secrets`). The values and the replacement are the permission gate's
//! ([`elroy_permissions::Redactor`]), so results and requests are redacted alike.

use std::sync::Arc;

use elroy_core::BoxFuture;
use elroy_llm::{ChatModel, ChatRequest, ChatResponse, LlmError, StreamDelta};
use elroy_permissions::Redactor;

/// `inner` behind `redactor`; `inner` itself when there is nothing to redact.
pub(crate) fn redacting(inner: Arc<dyn ChatModel>, redactor: Redactor) -> Arc<dyn ChatModel> {
    if redactor.is_empty() {
        return inner;
    }
    Arc::new(RedactingModel { inner, redactor })
}

struct RedactingModel {
    inner: Arc<dyn ChatModel>,
    redactor: Redactor,
}

impl RedactingModel {
    /// A copy of `request` without secret values, `None` when it holds none (the common case:
    /// nothing is copied).
    fn redacted(&self, request: &ChatRequest) -> Option<ChatRequest> {
        let holds = request.messages.iter().any(|m| {
            m.content.as_deref().is_some_and(|c| self.redactor.finds(c))
                || m.tool_calls
                    .iter()
                    .any(|c| self.redactor.finds(&c.arguments))
        });
        if !holds {
            return None;
        }
        let mut copy = request.clone();
        for message in &mut copy.messages {
            if let Some(content) = &mut message.content {
                self.redactor.redact(content);
            }
            for call in &mut message.tool_calls {
                self.redactor.redact(&mut call.arguments);
            }
        }
        Some(copy)
    }
}

impl ChatModel for RedactingModel {
    fn model_name(&self) -> &str {
        self.inner.model_name()
    }

    fn chat_stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        match self.redacted(request) {
            None => self.inner.chat_stream(request, on_delta),
            Some(copy) => Box::pin(async move { self.inner.chat_stream(&copy, on_delta).await }),
        }
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        match self.redacted(request) {
            None => self.inner.chat(request),
            Some(copy) => Box::pin(async move { self.inner.chat(&copy).await }),
        }
    }
}
