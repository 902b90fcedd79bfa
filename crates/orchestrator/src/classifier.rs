//! The recall classifier (`docs/behaviour.md#whether-to-recall` step 3): with
//! `memory_recall_classifier_enabled`, one structured fast-model call decides whether recall runs
//! for a user message, from the last `memory_recall_classifier_window` context messages. Elroy
//! makes this call before every substantive message; we (D9) make it only when it is enabled
//! (default off).

use elroy_core::{Message, Role};
use serde_json::{Value, json};

use crate::Session;
use crate::structured::{json_object, structured_call};

/// The classifier's system text (`docs/behaviour.md#whether-to-recall` step 3, ours).
pub const CLASSIFIER_PROMPT: &str = "Decide whether answering the user's latest message could benefit from the assistant's long-term memories or reminders. Answer needs_recall=false only for messages that are pure small talk or acknowledgements. When unsure, answer true.";

/// The classifier's response schema: `{"needs_recall": boolean, "reasoning": string}`.
pub fn classifier_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "needs_recall": {"type": "boolean"},
            "reasoning": {"type": "string"}
        },
        "required": ["needs_recall", "reasoning"],
        "additionalProperties": false
    })
}

/// The last `window` messages of `messages` that a person would read, one `{role}: {content}`
/// line each (`user: …`, `assistant: …`), oldest first. System and tool messages are left out, and
/// so are messages without content (the synthetic assistant calls of recall and due-item pairs),
/// so the window counts only conversation.
pub fn conversation_lines(messages: &[Message], window: usize) -> Vec<String> {
    let lines: Vec<String> = messages
        .iter()
        .filter(|m| !matches!(m.role, Role::System | Role::Tool))
        .filter_map(|m| {
            let content = m.content.as_deref()?;
            (!content.trim().is_empty()).then(|| format!("{}: {content}", m.role.as_str()))
        })
        .collect();
    lines[lines.len().saturating_sub(window)..].to_vec()
}

/// The classifier's user text (`docs/behaviour.md#whether-to-recall` step 3): the last `window`
/// context messages as
/// [`conversation_lines`] (the current message not among them), then `Latest message: {message}`,
/// joined by `\n`.
pub fn classifier_prompt(context: &[Message], window: usize, message: &str) -> String {
    let mut lines = conversation_lines(context, window);
    lines.push(format!("Latest message: {message}"));
    lines.join("\n")
}

/// Reads a classifier reply: a JSON object (possibly inside prose or a fence) whose `needs_recall`
/// is a boolean. `None` when it does not validate.
pub fn parse_classifier(reply: &str) -> Option<bool> {
    json_object(reply)?.get("needs_recall")?.as_bool()
}

impl Session {
    /// Whether the classifier lets recall run for `message`, given the turn's loaded `context`
    /// (without the current message). `true` without asking when the classifier is disabled; when
    /// the call fails or its reply does not validate twice, the failure is logged and recall runs
    /// (`docs/behaviour.md#whether-to-recall` step 3).
    pub(crate) async fn classifier_allows_recall(
        &self,
        context: &[Message],
        message: &str,
    ) -> bool {
        let p = &self.parts;
        if !p.settings.memory_recall_classifier_enabled {
            return true;
        }
        let model = p.fast_model.as_ref().unwrap_or(&p.model);
        let user = classifier_prompt(context, p.settings.memory_recall_classifier_window, message);
        match structured_call(
            &**model,
            CLASSIFIER_PROMPT.to_owned(),
            user,
            classifier_schema(),
            "recall classifier",
            parse_classifier,
        )
        .await
        {
            Ok(needs_recall) => {
                tracing::debug!(needs_recall, "recall classifier answered");
                needs_recall
            }
            Err(e) => {
                tracing::warn!("recall classifier failed, recalling anyway: {e}");
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::ToolCall;

    #[test]
    fn prompt_keeps_the_last_window_conversation_messages() {
        let context = vec![
            Message::system("prompt"),
            Message::user("first"),
            Message::assistant(Some("one".into()), Vec::new()),
            Message::assistant(
                None,
                vec![ToolCall {
                    id: "c".into(),
                    name: "get_fast_recall".into(),
                    arguments: "{}".into(),
                }],
            ),
            Message::tool("c", "{\"content\": \"x\"}", false),
            Message::user("second"),
            Message::assistant(Some("two".into()), Vec::new()),
        ];
        assert_eq!(
            classifier_prompt(&context, 3, "third?"),
            "assistant: one\nuser: second\nassistant: two\nLatest message: third?"
        );
        assert_eq!(classifier_prompt(&context, 0, "hi"), "Latest message: hi");
        // A window larger than the conversation takes all of it.
        assert_eq!(conversation_lines(&context, 50).len(), 4);
    }

    #[test]
    fn replies_are_validated() {
        assert_eq!(
            parse_classifier(r#"{"needs_recall": false, "reasoning": "small talk"}"#),
            Some(false)
        );
        assert_eq!(
            parse_classifier("```json\n{\"needs_recall\": true}\n```"),
            Some(true)
        );
        assert_eq!(parse_classifier(r#"{"needs_recall": "no"}"#), None);
        assert_eq!(parse_classifier("no"), None);
    }
}
