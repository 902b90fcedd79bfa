//! What the orchestrator needs from stores that are built separately: recall (elroy-memory),
//! due items (elroy-agenda), pin resolution (memory and agenda renderings) and automatic memory
//! creation. Each is a small trait so a turn runs with whatever stores a runtime has, and tests can
//! stand in.

use elroy_core::{Message, RecallItem, RecallPayload, TimeContext};
use elroy_transcript::PinContent;

/// What recall gets for one turn (`orchestrator.md` §4).
#[derive(Debug, Clone, Copy)]
pub struct RecallQuery<'a> {
    /// The current user message.
    pub message: &'a str,
    /// The active context plus the turn's new messages so far (previous user message, items
    /// already in context, the embedding query text).
    pub conversation: &'a [Message],
    /// Now and the zone.
    pub time: &'a TimeContext,
}

/// Finds the recall items relevant to a user message (§4.2–§4.6).
pub trait RecallSource: Send + Sync {
    /// The payload of the `get_fast_recall` pair to inject, or `None` when nothing relevant is
    /// missing from the context. Items already carried by a recall message in
    /// `query.conversation` must be left out.
    ///
    /// # Errors
    /// A message; the turn logs it and continues without recall.
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, String>;
}

/// The active due items whose time has come (§5).
pub trait DueSource: Send + Sync {
    /// The `get_due_items` text (one `⏰ DUE ITEM` block per item, joined by `\n`), or `None` when
    /// nothing is due.
    ///
    /// # Errors
    /// A message; the turn logs it and continues without the pair.
    fn due_text(&self, time: &TimeContext) -> Result<Option<String>, String>;
}

/// Looks up what a `Pin` effect adds (§7.4).
pub trait PinResolver: Send + Sync {
    /// The item's metadata and rendering, or `None` when it no longer exists.
    fn resolve(&self, item: RecallItem, time: &TimeContext) -> Option<PinContent>;
}
