//! The context validator (`docs/behaviour.md#context-repair`): pure repair rules over a message
//! list.
//!
//! [`validate`] returns the repaired list as [`ValidatedItem`]s that point back at the input, so
//! the caller can persist only the change (kept messages keep their rows; a message whose tool
//! calls were stripped becomes a new row in the same position; inserted messages are new).

use std::collections::HashSet;

use elroy_core::{Message, Role};

/// The prefix that makes a system message a system instruction
/// (`docs/behaviour.md#the-system-prompt`).
pub const SYSTEM_INSTRUCTION_PREFIX: &str = "<system_instruction>";

/// The user message rule 4 inserts for Anthropic (`docs/behaviour.md#context-repair`).
pub const CONVERSATION_START_TEXT: &str = "The user has begun the conversation";

/// The provider family the context is sent to; only Anthropic has an extra rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic: the first non-system message must be a user message.
    Anthropic,
    /// Every other provider (OpenAI-compatible, Gemini, Ollama, …).
    Other,
}

/// One message of the repaired list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidatedItem {
    /// The input message at this index, unchanged.
    Original(usize),
    /// A changed copy of the input message at `from` (tool calls removed), same position.
    Modified {
        /// The input index.
        from: usize,
        /// The changed message.
        message: Message,
    },
    /// A message the validator added (the system prompt, Anthropic's first user message).
    Inserted(Message),
}

/// The validator's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// The repaired list.
    pub items: Vec<ValidatedItem>,
    /// One line per repair (logged at INFO); empty when the context needed none.
    pub repairs: Vec<String>,
}

impl Validation {
    /// Whether anything was repaired (the repaired list must then be stored as one version,
    /// reason `repair`).
    pub fn changed(&self) -> bool {
        !self.repairs.is_empty()
    }

    /// The repaired messages, resolved against the input.
    pub fn messages(&self, input: &[Message]) -> Vec<Message> {
        self.items
            .iter()
            .filter_map(|item| match item {
                ValidatedItem::Original(i) => input.get(*i).cloned(),
                ValidatedItem::Modified { message, .. } | ValidatedItem::Inserted(message) => {
                    Some(message.clone())
                }
            })
            .collect()
    }
}

/// Whether `m` is a system instruction: role `system` and content starting with
/// `<system_instruction>`.
pub fn is_system_instruction(m: &Message) -> bool {
    m.role == Role::System
        && m.content
            .as_deref()
            .is_some_and(|c| c.starts_with(SYSTEM_INSTRUCTION_PREFIX))
}

/// Applies the repair rules of `docs/behaviour.md#context-repair` in order:
///
/// 1. the first message must be a system instruction (else `new_system()` is inserted first);
///    later system instructions are dropped; other system messages stay;
/// 2. every tool call must be answered by a tool message in the run directly after its
///    assistant message (unanswered calls are removed; an assistant message left with no calls
///    and no content is dropped);
/// 3. a tool message whose `tool_call_id` is not a call of the most recent assistant message
///    before it is dropped;
/// 4. Anthropic only: a first non-system message from the assistant gets the user message
///    `The user has begun the conversation` inserted before it.
pub fn validate(
    messages: &[Message],
    provider: Provider,
    new_system: impl FnOnce() -> Message,
) -> Validation {
    let mut repairs = Vec::new();
    let mut work: Vec<(ValidatedItem, Message)> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| (ValidatedItem::Original(i), m.clone()))
        .collect();

    // Rule 1.
    if !work.first().is_some_and(|(_, m)| is_system_instruction(m)) {
        let system = new_system();
        work.insert(0, (ValidatedItem::Inserted(system.clone()), system));
        repairs.push("inserted the system instruction at the start of the context".to_owned());
    }
    let before = work.len();
    let mut first = true;
    work.retain(|(_, m)| {
        let keep = first || !is_system_instruction(m);
        first = false;
        keep
    });
    if work.len() < before {
        repairs.push(format!(
            "dropped {} system instruction(s) after the first message",
            before - work.len()
        ));
    }

    // Rule 2.
    let mut i = 0;
    while i < work.len() {
        let msg = &work[i].1;
        if msg.role != Role::Assistant || msg.tool_calls.is_empty() {
            i += 1;
            continue;
        }
        let answered: HashSet<&str> = work[i + 1..]
            .iter()
            .take_while(|(_, m)| m.role == Role::Tool)
            .filter_map(|(_, m)| m.tool_call_id.as_deref())
            .collect();
        let keep: Vec<_> = msg
            .tool_calls
            .iter()
            .filter(|c| answered.contains(c.id.as_str()))
            .cloned()
            .collect();
        if keep.len() == msg.tool_calls.len() {
            i += 1;
            continue;
        }
        let removed: Vec<String> = msg
            .tool_calls
            .iter()
            .filter(|c| !answered.contains(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect();
        repairs.push(format!(
            "removed unanswered tool call(s) {}",
            removed.join(", ")
        ));
        let mut changed = msg.clone();
        changed.tool_calls = keep;
        if changed.tool_calls.is_empty() && changed.content.as_deref().is_none_or(str::is_empty) {
            work.remove(i);
            continue;
        }
        let from = match &work[i].0 {
            ValidatedItem::Original(f) | ValidatedItem::Modified { from: f, .. } => Some(*f),
            ValidatedItem::Inserted(_) => None,
        };
        work[i].0 = match from {
            Some(from) => ValidatedItem::Modified {
                from,
                message: changed.clone(),
            },
            None => ValidatedItem::Inserted(changed.clone()),
        };
        work[i].1 = changed;
        i += 1;
    }

    // Rule 3.
    let mut last_calls: Option<HashSet<String>> = None;
    let mut orphans = Vec::new();
    let mut k = 0;
    work.retain(|(_, m)| {
        let idx = k;
        k += 1;
        match m.role {
            Role::Assistant => {
                last_calls = Some(m.tool_calls.iter().map(|c| c.id.clone()).collect());
                true
            }
            Role::Tool => {
                let ok = match (&last_calls, &m.tool_call_id) {
                    (Some(calls), Some(id)) => calls.contains(id),
                    _ => false,
                };
                if !ok {
                    orphans.push((idx, m.tool_call_id.clone().unwrap_or_default()));
                }
                ok
            }
            _ => true,
        }
    });
    for (_, id) in orphans {
        repairs.push(format!("dropped orphan tool result {id}"));
    }

    // Rule 4.
    if provider == Provider::Anthropic
        && let Some(pos) = work.iter().position(|(_, m)| m.role != Role::System)
        && work[pos].1.role == Role::Assistant
    {
        let user = Message::user(CONVERSATION_START_TEXT);
        work.insert(pos, (ValidatedItem::Inserted(user.clone()), user));
        repairs.push("inserted a user message before the first assistant message".to_owned());
    }

    Validation {
        items: work.into_iter().map(|(item, _)| item).collect(),
        repairs,
    }
}
