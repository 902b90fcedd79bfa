//! Applying `Pin`/`Unpin` effects to a message list (`docs/tool-rules.md#effects`,
//! `docs/behaviour.md#applying-effects`), in the exact synthetic format of K5
//! (`docs/behaviour.md#synthetic-pairs`).
//!
//! Tools return [`elroy_core::Effect`]s naming items; the caller resolves each `Pin` to the
//! item's recall metadata and rendering ([`PinContent`]) — an item that no longer exists is
//! simply not resolved — and hands the [`ResolvedEffect`]s to [`apply`].

use std::collections::HashSet;

use elroy_core::{Message, RecallItem, RecallMetadata, RecallPayload, Role};

/// The synthetic tool name of recall pairs.
pub const FAST_RECALL: &str = "get_fast_recall";

/// What a `Pin` adds: the item's metadata and its rendering (`docs/formats.md#renderings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinContent {
    /// `memory_type`, `memory_id`, `name`.
    pub metadata: RecallMetadata,
    /// The rendering, e.g. `#{name}\n\n{text}` for a memory.
    pub rendering: String,
}

/// An effect whose item has been looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedEffect {
    /// Make sure the item is in context.
    Pin(PinContent),
    /// Remove every recall message carrying the item.
    Unpin(RecallItem),
}

/// The change [`apply`] computed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EffectOutcome {
    /// Indices (into the input list) of the messages to remove, ascending.
    pub removed: Vec<usize>,
    /// Messages to append after the remaining ones, in order (whole synthetic pairs).
    pub added: Vec<Message>,
    /// Whether a pin added a pair.
    pub pinned: bool,
}

impl EffectOutcome {
    /// Whether anything changes.
    pub fn changed(&self) -> bool {
        !self.removed.is_empty() || !self.added.is_empty()
    }
}

/// A `get_fast_recall` synthetic pair carrying one item (fresh UUID v4 call id): the assistant
/// message calls `get_fast_recall` with `{}`; the tool message's content is the recall payload
/// `{"content":…,"recall_metadata":[…]}` (`docs/formats.md#the-recall-payload`).
pub fn pin_pair(pin: &PinContent) -> [Message; 2] {
    let payload = RecallPayload {
        content: pin.rendering.clone(),
        recall_metadata: vec![pin.metadata.clone()],
    };
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    Message::synthetic_pair(&id, FAST_RECALL, payload.to_json_string())
}

/// Whether `message` is a recall tool message carrying `item`.
pub fn carries(message: &Message, item: RecallItem) -> bool {
    message
        .recall_metadata()
        .is_some_and(|meta| meta.iter().any(|m| m.item() == item))
}

/// Applies `effects` in order to `messages` (the active context plus the turn's new messages):
///
/// - `Pin`: nothing when a recall message (in `messages` or added earlier) already carries the
///   item; otherwise a [`pin_pair`] is appended.
/// - `Unpin`: every recall tool message carrying the item is removed, with the assistant message
///   that called it when all of that message's calls are removed (synthetic recall calls have
///   one). Other items carried by the same message leave with it.
pub fn apply(messages: &[Message], effects: &[ResolvedEffect]) -> EffectOutcome {
    // Working list: Ok(index into messages) or Err(added message).
    let mut work: Vec<Result<usize, Message>> = (0..messages.len()).map(Ok).collect();
    let mut pinned = false;
    for effect in effects {
        match effect {
            ResolvedEffect::Pin(pin) => {
                let item = pin.metadata.item();
                let present = work.iter().any(|w| match w {
                    Ok(i) => carries(&messages[*i], item),
                    Err(m) => carries(m, item),
                });
                if !present {
                    work.extend(pin_pair(pin).into_iter().map(Err));
                    pinned = true;
                }
            }
            ResolvedEffect::Unpin(item) => {
                let view: Vec<&Message> = work
                    .iter()
                    .map(|w| match w {
                        Ok(i) => &messages[*i],
                        Err(m) => m,
                    })
                    .collect();
                let drop = unpin_positions(&view, *item);
                if !drop.is_empty() {
                    let mut k = 0;
                    work.retain(|_| {
                        let keep = !drop.contains(&k);
                        k += 1;
                        keep
                    });
                }
            }
        }
    }
    let kept: HashSet<usize> = work
        .iter()
        .filter_map(|w| w.as_ref().ok().copied())
        .collect();
    EffectOutcome {
        removed: (0..messages.len()).filter(|i| !kept.contains(i)).collect(),
        added: work.into_iter().filter_map(Result::err).collect(),
        pinned,
    }
}

/// Positions in `messages` an `Unpin(item)` removes.
fn unpin_positions(messages: &[&Message], item: RecallItem) -> HashSet<usize> {
    let mut drop = HashSet::new();
    let mut dropped_ids = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        if carries(m, item) {
            drop.insert(i);
            if let Some(id) = &m.tool_call_id {
                dropped_ids.insert(id.clone());
            }
        }
    }
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Assistant
            && !m.tool_calls.is_empty()
            && m.tool_calls.iter().all(|c| dropped_ids.contains(&c.id))
        {
            drop.insert(i);
        }
    }
    drop
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::RecallKind;

    fn pin(id: i64, name: &str) -> PinContent {
        PinContent {
            metadata: RecallMetadata {
                memory_type: RecallKind::Memory,
                memory_id: id,
                name: name.into(),
            },
            rendering: format!("#{name}\n\ntext {id}"),
        }
    }

    fn item(id: i64) -> RecallItem {
        RecallItem {
            memory_type: RecallKind::Memory,
            memory_id: id,
        }
    }

    #[test]
    fn pin_pair_exact_format() {
        let [call, result] = pin_pair(&pin(2, "Priya's coffee preference"));
        assert_eq!(call.role, Role::Assistant);
        assert_eq!(call.content, None);
        assert_eq!(call.model.as_deref(), Some("elroy"));
        assert_eq!(call.tool_calls.len(), 1);
        assert_eq!(call.tool_calls[0].name, "get_fast_recall");
        assert_eq!(call.tool_calls[0].arguments, "{}");
        let id = &call.tool_calls[0].id;
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert_eq!(result.tool_call_id.as_ref(), Some(id));
        assert_eq!(result.model.as_deref(), Some("elroy"));
        assert_eq!(
            result.content.as_deref(),
            Some(
                r##"{"content":"#Priya's coffee preference\n\ntext 2","recall_metadata":[{"memory_type":"Memory","memory_id":2,"name":"Priya's coffee preference"}]}"##
            )
        );
    }

    #[test]
    fn pin_is_idempotent_and_unpin_removes_pairs() {
        let base = vec![
            Message::system("<system_instruction>x"),
            Message::user("hi"),
        ];
        let out = apply(&base, &[ResolvedEffect::Pin(pin(1, "a"))]);
        assert!(out.pinned && out.removed.is_empty() && out.added.len() == 2);
        let mut ctx = base.clone();
        ctx.extend(out.added);
        // Pinning again changes nothing.
        let again = apply(&ctx, &[ResolvedEffect::Pin(pin(1, "a"))]);
        assert!(!again.changed());
        // Unpin removes both messages of the pair.
        let un = apply(&ctx, &[ResolvedEffect::Unpin(item(1))]);
        assert_eq!(un.removed, vec![2, 3]);
        assert!(un.added.is_empty() && !un.pinned);
        // Unpin then pin of another item in one batch (an update): swap.
        let swap = apply(
            &ctx,
            &[
                ResolvedEffect::Unpin(item(1)),
                ResolvedEffect::Pin(pin(3, "a")),
            ],
        );
        assert_eq!(swap.removed, vec![2, 3]);
        assert!(carries(&swap.added[1], item(3)));
        // Pin then unpin of the same item inside one batch leaves nothing behind.
        let both = apply(
            &base,
            &[
                ResolvedEffect::Pin(pin(5, "b")),
                ResolvedEffect::Unpin(item(5)),
            ],
        );
        assert!(!both.changed());
    }
}
