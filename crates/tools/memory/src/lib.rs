//! # elroy-tools-memory
//!
//! The memory and context tools of `docs/tools.md#memories`: `create_memory`, `print_memory`,
//! `update_outdated_or_incorrect_memory`, `examine_memories` (D10), `get_source_content_for_memory`,
//! `add_memory_to_current_context`, `drop_memory_from_current_context`. (`get_fast_recall` is in
//! elroy-tools-session.)
//!
//! Tools find their stores in `ctx.services`: [`MemoryStore`] (for the
//! session user), [`TranscriptStore`](elroy_transcript::TranscriptStore) and
//! [`Db`](elroy_db::Db). Pins and unpins are returned as [`elroy_core::Effect`]s; whoever ran the
//! tool applies them (D13). Strings are Elroy's (K3) except where a decision says otherwise.

mod agenda_rows;
mod context_tools;
mod create;
mod examine;
mod source;

use std::sync::Arc;

use elroy_core::{
    RecallItem, RecallKind, ToolContext, ToolError, ToolFamily, ToolRegistry, sync_tool,
};
use elroy_memory::MemoryStore;

pub use agenda_rows::{RecallRowsError, refresh_agenda_recall_rows};
pub use context_tools::{AddMemoryToCurrentContext, DropMemoryFromCurrentContext, PrintMemory};
pub use create::{CreateMemory, UpdateOutdatedOrIncorrectMemory};
pub use elroy_transcript::render_snapshot;
pub use examine::{ExamineMemories, MAX_MEMORIES};
pub use source::GetSourceContentForMemory;

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Memories",
    guide: "Long-term memories: one markdown file each in `memories/`, indexed in `state.db` \
            for recall (keyword search, plus embeddings when an embedding model is \
            configured). Relevant memories are recalled into the conversation automatically; \
            these tools let the model (or you) create, read, search and correct them, and pin \
            or unpin one in the current context window.",
};

/// Registers the seven memory tools.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(CreateMemory))
        .register(sync_tool(PrintMemory))
        .register(sync_tool(ExamineMemories))
        .register(sync_tool(UpdateOutdatedOrIncorrectMemory))
        .register(sync_tool(AddMemoryToCurrentContext))
        .register(sync_tool(DropMemoryFromCurrentContext))
        .register(sync_tool(GetSourceContentForMemory));
}

pub(crate) fn store(ctx: &ToolContext) -> Result<Arc<MemoryStore>, ToolError> {
    ctx.services.require::<MemoryStore>()
}

pub(crate) fn user_id(ctx: &ToolContext) -> Result<i64, ToolError> {
    ctx.user_id()
        .ok_or_else(|| ToolError::new("no user is open in this runtime"))
}

/// A store failure as a tool error with the same message; a memory, agenda or database failure
/// keeps the I/O kind of the write behind it (a full disk, a read-only home).
pub(crate) fn err<E: std::fmt::Display + 'static>(e: E) -> ToolError {
    let any: &dyn std::any::Any = &e;
    let kind = if let Some(e) = any.downcast_ref::<elroy_memory::MemoryError>() {
        e.io_kind()
    } else if let Some(e) = any.downcast_ref::<elroy_agenda::AgendaError>() {
        e.io_kind()
    } else if let Some(e) = any.downcast_ref::<elroy_db::DbError>() {
        e.io_kind()
    } else {
        None
    };
    ToolError::new(e.to_string()).with_io_kind(kind)
}

pub(crate) fn memory_item(id: i64) -> RecallItem {
    RecallItem {
        memory_type: RecallKind::Memory,
        memory_id: id,
    }
}

/// Resolves the `Pin`/`Unpin` effects of tool results against the memory store, for
/// [`elroy_transcript::effects::apply`] or
/// [`TranscriptStore::apply_effects`](elroy_transcript::TranscriptStore::apply_effects): a memory
/// pin becomes its recall metadata and rendering; a pin of an item that no longer exists, of an
/// agenda item (resolved by the agenda store, not here) and `Restart` are left out.
///
/// # Errors
/// [`ToolError`] when the store fails.
pub fn resolve_effects(
    store: &MemoryStore,
    effects: &[elroy_core::Effect],
) -> Result<Vec<elroy_transcript::ResolvedEffect>, ToolError> {
    use elroy_core::Effect;
    use elroy_transcript::{PinContent, ResolvedEffect};
    let mut out = Vec::new();
    for effect in effects {
        match effect {
            Effect::Pin(item) if item.memory_type == RecallKind::Memory => {
                if let Some((metadata, rendering)) =
                    store.recall_entry(item.memory_id).map_err(err)?
                {
                    out.push(ResolvedEffect::Pin(PinContent {
                        metadata,
                        rendering,
                    }));
                }
            }
            Effect::Unpin(item) => out.push(ResolvedEffect::Unpin(*item)),
            _ => {}
        }
    }
    Ok(out)
}
