//! Reflective recall (`docs/behaviour.md#injection-and-reflective-recall`, `reflect: true`):
//! instead of injecting the recalled renderings as they are, the **chat** model reads them with the
//! last 3 conversation messages and writes a short first-person note of what matters for the reply;
//! that note is injected as a `get_reflective_recall` pair carrying the same `recall_metadata`.

use elroy_core::{Message, RecallPayload};
use serde_json::{Value, json};

use crate::Session;
use crate::classifier::conversation_lines;
use crate::structured::{json_object, structured_call};

/// The tool name of a reflective recall pair (`docs/behaviour.md#synthetic-pairs`).
pub const REFLECTIVE_RECALL_TOOL: &str = "get_reflective_recall";

/// How many conversation messages the reflection reads
/// (`docs/behaviour.md#injection-and-reflective-recall`).
pub const REFLECTION_WINDOW: usize = 3;

/// The system text of a reflective recall call
/// (`docs/behaviour.md#injection-and-reflective-recall`, ours).
pub const REFLECTIVE_RECALL_PROMPT: &str = "Here are memories and reminders that may bear on the conversation. In at most 100 words, in the first person, note what in them matters for replying to the latest message. Set is_relevant to false if nothing does.";

/// The response schema of a reflective recall call: `{"content": string, "is_relevant": boolean}`.
pub fn reflective_recall_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "string"},
            "is_relevant": {"type": "boolean"}
        },
        "required": ["content", "is_relevant"],
        "additionalProperties": false
    })
}

/// The user text of a reflective recall call: `Memories and reminders:` and the renderings
/// (`payload.content`), a blank line, then `Recent conversation:` and the last
/// [`REFLECTION_WINDOW`] messages of `conversation` (which ends with the current user message) as
/// `{role}: {content}` lines, system, tool and empty messages left out.
pub fn reflective_recall_prompt(renderings: &str, conversation: &[Message]) -> String {
    let lines = conversation_lines(conversation, REFLECTION_WINDOW);
    format!(
        "Memories and reminders:\n{renderings}\n\nRecent conversation:\n{}",
        lines.join("\n")
    )
}

/// What a reflective recall call decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecallReflection {
    /// `is_relevant: true`: the note (trimmed, non-empty) to inject.
    Relevant(String),
    /// `is_relevant: false`: nothing is injected.
    NotRelevant,
}

/// Reads a reflective recall reply: a JSON object (possibly inside prose or a fence) with a boolean
/// `is_relevant` and a string `content`. `None` when it does not validate, including
/// `is_relevant: true` with blank content (nothing to inject).
pub fn parse_reflection(reply: &str) -> Option<RecallReflection> {
    let value = json_object(reply)?;
    let relevant = value.get("is_relevant")?.as_bool()?;
    let content = value.get("content")?.as_str()?.trim();
    match (relevant, content.is_empty()) {
        (false, _) => Some(RecallReflection::NotRelevant),
        (true, true) => None,
        (true, false) => Some(RecallReflection::Relevant(content.to_owned())),
    }
}

impl Session {
    /// The recall pair to inject for `payload`
    /// (`docs/behaviour.md#injection-and-reflective-recall`): `(tool name, payload)`. Without
    /// `reflect`, `get_fast_recall` with `payload` itself. With `reflect`, one structured
    /// chat-model call: when relevant, `get_reflective_recall` with the reflection as `content` and
    /// the same `recall_metadata`; when not relevant, `None` (no pair); when the call fails or its
    /// reply does not validate twice, the failure is logged and the plain `get_fast_recall` pair is
    /// used.
    pub(crate) async fn recall_pair(
        &self,
        payload: RecallPayload,
        conversation: &[Message],
    ) -> Option<(&'static str, RecallPayload)> {
        let p = &self.parts;
        if !p.settings.reflect {
            return Some((crate::FAST_RECALL_TOOL, payload));
        }
        let user = reflective_recall_prompt(&payload.content, conversation);
        match structured_call(
            &*p.model,
            REFLECTIVE_RECALL_PROMPT.to_owned(),
            user,
            reflective_recall_schema(),
            "reflective recall",
            parse_reflection,
        )
        .await
        {
            Ok(RecallReflection::Relevant(content)) => Some((
                REFLECTIVE_RECALL_TOOL,
                RecallPayload {
                    content,
                    recall_metadata: payload.recall_metadata,
                },
            )),
            Ok(RecallReflection::NotRelevant) => None,
            Err(e) => {
                tracing::warn!("reflective recall failed, injecting the plain recall: {e}");
                Some((crate::FAST_RECALL_TOOL, payload))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_has_the_renderings_and_the_last_three_messages() {
        let conversation = vec![
            Message::system("prompt"),
            Message::user("one"),
            Message::assistant(Some("two".into()), Vec::new()),
            Message::user("three"),
            Message::assistant(Some("four".into()), Vec::new()),
            Message::user("What is my dog called?"),
        ];
        assert_eq!(
            reflective_recall_prompt("# Dog\n\nBiscuit.", &conversation),
            "Memories and reminders:\n# Dog\n\nBiscuit.\n\nRecent conversation:\nuser: three\nassistant: four\nuser: What is my dog called?"
        );
    }

    #[test]
    fn replies_are_validated() {
        assert_eq!(
            parse_reflection(r#"{"content": " The dog is Biscuit. ", "is_relevant": true}"#),
            Some(RecallReflection::Relevant("The dog is Biscuit.".into()))
        );
        assert_eq!(
            parse_reflection(r#"{"content": "", "is_relevant": false}"#),
            Some(RecallReflection::NotRelevant)
        );
        assert_eq!(
            parse_reflection(r#"{"content": "  ", "is_relevant": true}"#),
            None
        );
        assert_eq!(parse_reflection(r#"{"content": "x"}"#), None);
        assert_eq!(
            parse_reflection(r#"{"content": 3, "is_relevant": true}"#),
            None
        );
        assert_eq!(parse_reflection("Biscuit"), None);
    }
}
