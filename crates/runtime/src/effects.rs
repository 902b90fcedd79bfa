//! Effects of direct tool calls, applied to the active context window (`orchestrator.md` §7.4).

use elroy_core::{Effect, Message, RecallKind, RecallMetadata, Services, TimeContext, UserInfo};
use elroy_memory::MemoryStore;
use elroy_transcript::{PinContent, ResolvedEffect, TranscriptStore};

/// The active context window plus nothing else (a direct call has no turn), for
/// `ToolContext::conversation`. Empty when no transcript store is open or it cannot be read.
pub(crate) fn active_conversation(services: &Services, user: &UserInfo) -> Vec<Message> {
    match (services.get::<TranscriptStore>(), user.id) {
        (Some(transcript), Some(id)) => transcript
            .active_context(id)
            .map(|ctx| ctx.into_iter().map(|s| s.message).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Resolves one `Pin` to the item's recall metadata and rendering; `None` when the item no longer
/// exists (or its store is not open).
fn resolve_pin(
    services: &Services,
    time: &TimeContext,
    item: elroy_core::RecallItem,
) -> Result<Option<PinContent>, String> {
    match item.memory_type {
        RecallKind::Memory => {
            let Some(store) = services.get::<MemoryStore>() else {
                return Ok(None);
            };
            Ok(store
                .recall_entry(item.memory_id)
                .map_err(|e| e.to_string())?
                .map(|(metadata, rendering)| PinContent {
                    metadata,
                    rendering,
                }))
        }
        RecallKind::AgendaItem => {
            let Some(store) = services.get::<elroy_agenda::AgendaStore>() else {
                return Ok(None);
            };
            let Some(entry) = store
                .item_by_id(item.memory_id)
                .map_err(|e| e.to_string())?
            else {
                return Ok(None);
            };
            let rendering = store
                .fact_by_id(item.memory_id, &time.tz)
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            Ok(Some(PinContent {
                metadata: RecallMetadata {
                    memory_type: RecallKind::AgendaItem,
                    memory_id: item.memory_id,
                    name: entry.name().to_owned(),
                },
                rendering,
            }))
        }
    }
}

/// Applies the `Pin`/`Unpin` effects of a direct call to the active context as one version
/// (reason `pin` when a pair was added, else `unpin`). `Restart` is not applied here.
///
/// # Errors
/// A message when no transcript store or user is open, or a store fails.
pub(crate) fn apply_direct(
    services: &Services,
    user: &UserInfo,
    time: &TimeContext,
    effects: &[Effect],
) -> Result<(), String> {
    let (Some(transcript), Some(user_id)) = (services.get::<TranscriptStore>(), user.id) else {
        return Err(format!(
            "no transcript store is open; {} effect(s) left unapplied",
            effects.len()
        ));
    };
    let mut resolved = Vec::new();
    for effect in effects {
        match effect {
            Effect::Pin(item) => {
                if let Some(pin) = resolve_pin(services, time, *item)? {
                    resolved.push(ResolvedEffect::Pin(pin));
                }
            }
            Effect::Unpin(item) => resolved.push(ResolvedEffect::Unpin(*item)),
            Effect::Restart { .. } => {}
        }
    }
    transcript
        .apply_effects(user_id, time.now(), &resolved)
        .map(|_| ())
        .map_err(|e| e.to_string())
}
