//! Effects of direct tool calls, applied to the active context window
//! (`docs/behaviour.md#applying-effects`).

use elroy_core::{
    Effect, Message, RecallKind, RecallMetadata, ServiceError, Services, TimeContext, UserId,
};
use elroy_memory::MemoryStore;
use elroy_transcript::{PinContent, ResolvedEffect, TranscriptStore};

/// Why the effects of a direct call could not be applied (the call itself succeeded).
#[derive(Debug, thiserror::Error)]
pub(crate) enum EffectsError {
    /// The database, transcript or a store could not be opened.
    #[error(transparent)]
    Open(#[from] ServiceError),
    /// This runtime has no transcript.
    #[error("no transcript store is open; {0} effect(s) left unapplied")]
    NoTranscript(usize),
    /// The transcript failed.
    #[error(transparent)]
    Transcript(#[from] elroy_transcript::TranscriptError),
    /// The memory store failed.
    #[error(transparent)]
    Memory(#[from] elroy_memory::MemoryError),
    /// The agenda store failed.
    #[error(transparent)]
    Agenda(#[from] elroy_agenda::AgendaError),
}

/// The active context window plus nothing else (a direct call has no turn), for
/// `ToolContext::conversation` (read only when a tool looks at it). Empty when no transcript
/// store can be opened or it cannot be read.
pub(crate) fn active_conversation(services: &Services) -> Vec<Message> {
    match (services.get::<TranscriptStore>(), services.get::<UserId>()) {
        (Some(transcript), Some(id)) => transcript
            .active_context(id.0)
            .map(|ctx| ctx.into_iter().map(|s| s.message).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Resolves one `Pin` to the item's recall metadata and rendering; `None` when the item no longer
/// exists (or its store is not in this runtime).
fn resolve_pin(
    services: &Services,
    time: &TimeContext,
    item: elroy_core::RecallItem,
) -> Result<Option<PinContent>, EffectsError> {
    match item.memory_type {
        RecallKind::Memory => {
            let Some(store) = services.try_get::<MemoryStore>()? else {
                return Ok(None);
            };
            Ok(store
                .recall_entry(item.memory_id)?
                .map(|(metadata, rendering)| PinContent {
                    metadata,
                    rendering,
                }))
        }
        RecallKind::AgendaItem => {
            let Some(store) = services.try_get::<elroy_agenda::AgendaStore>()? else {
                return Ok(None);
            };
            let Some(entry) = store.item_by_id(item.memory_id)? else {
                return Ok(None);
            };
            let rendering = store
                .fact_by_id(item.memory_id, &time.tz)?
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
/// [`EffectsError`] when no transcript store is available, or a store fails.
pub(crate) fn apply_direct(
    services: &Services,
    time: &TimeContext,
    effects: &[Effect],
) -> Result<(), EffectsError> {
    let (Some(transcript), Some(user_id)) = (
        services.try_get::<TranscriptStore>()?,
        services.try_get::<UserId>()?,
    ) else {
        return Err(EffectsError::NoTranscript(effects.len()));
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
    transcript.apply_effects(user_id.0, time.now(), &resolved)?;
    Ok(())
}
