//! The orchestrator's trait boundaries (ports): what it needs from stores and services that the
//! composition root (`elroy-runtime`) builds. Each is a small trait so a turn runs with whatever
//! stores a home has, and tests stand in with fakes.
//!
//! | port | what for | implemented in the root by |
//! |---|---|---|
//! | [`elroy_llm::ChatModel`] | the chat model and the fast model | the provider clients of elroy-llm |
//! | [`RecallSource`] | recall before the model (`docs/behaviour.md#recall`) | memories and agenda items from their stores |
//! | [`DueSource`] | due items (`docs/behaviour.md#due-items-in-a-turn`) | the agenda store |
//! | [`PinResolver`] | what a `Pin` effect adds (`docs/behaviour.md#applying-effects`) | memory and agenda renderings |
//! | [`ChangeRecorder`] | one versioned-home commit per background change | elroy-history's `VersionedHome` |
//! | [`ReflectionSink`] | self-reflection's feature request (`docs/behaviour.md#self-reflection`) | the feature-request store |
//!
//! The embedder (`elroy_core::Embedder`) reaches the orchestrator inside the memory store, which
//! the root opens with it. Every port returns a typed [`PortError`] that keeps the store's error as
//! its source; text is made only by the front end.

use elroy_core::{Message, RecallItem, RecallPayload, TimeContext};
use elroy_transcript::PinContent;

/// An error returned by a port implementation: the store's (or service's) own error, kept as the
/// source so a front end can tell a store failure from a model failure without parsing text.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct PortError(#[from] pub Box<dyn std::error::Error + Send + Sync + 'static>);

impl PortError {
    /// Wraps the error `source` of a store or service.
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        PortError(Box::new(source))
    }
}

/// What recall gets for one turn (`docs/behaviour.md#recall`).
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

/// Finds the recall items relevant to a user message (`docs/behaviour.md#recall`).
pub trait RecallSource: Send + Sync {
    /// The payload of the `get_fast_recall` pair to inject, or `None` when nothing relevant is
    /// missing from the context. Items already carried by a recall message in
    /// `query.conversation` must be left out.
    ///
    /// # Errors
    /// [`PortError`] from a store; the turn logs it and continues without recall.
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, PortError>;
}

/// The active due items whose time has come (`docs/behaviour.md#due-items-in-a-turn`).
pub trait DueSource: Send + Sync {
    /// The `get_due_items` text (one `⏰ DUE ITEM` block per item, joined by `\n`), or `None` when
    /// nothing is due.
    ///
    /// # Errors
    /// [`PortError`] from the store; the turn logs it and continues without the pair.
    fn due_text(&self, time: &TimeContext) -> Result<Option<String>, PortError>;
}

/// Looks up what a `Pin` effect adds (`docs/behaviour.md#applying-effects`).
pub trait PinResolver: Send + Sync {
    /// The item's metadata and rendering, or `None` when it no longer exists.
    fn resolve(&self, item: RecallItem, time: &TimeContext) -> Option<PinContent>;
}

/// Records a change to the markdown stores that is not a tool call (automatic memory,
/// consolidation, self-reflection) as one versioned-home commit `{label}: {paths}`, so it can be
/// undone like a tool call and never shows up later as an `external edit`.
pub trait ChangeRecorder: Send + Sync {
    /// Runs `work` (which writes the store files) and commits what it changed under `label` at
    /// `now`. A failed commit is the recorder's to log; `work` runs exactly once either way.
    fn record(&self, now: jiff::Timestamp, label: &str, work: &mut dyn FnMut());
}

/// Self-reflection's proposal (`docs/behaviour.md#self-reflection` step 3): a feature request about
/// how the assistant handles corrections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reflection {
    /// The request's title.
    pub title: String,
    /// What should change.
    pub summary: String,
    /// Why.
    pub rationale: String,
    /// The correction phrase that triggered it.
    pub phrase: String,
    /// The user message's excerpt (at most 240 characters).
    pub excerpt: String,
}

/// Where self-reflection's feature request goes (`docs/behaviour.md#self-reflection`): the
/// feature-request backlog, merged with an existing request of the same title.
pub trait ReflectionSink: Send + Sync {
    /// Records `reflection` at `now`.
    ///
    /// # Errors
    /// [`PortError`] from the store.
    fn record_reflection(
        &self,
        now: jiff::Timestamp,
        reflection: &Reflection,
    ) -> Result<(), PortError>;
}

/// Runs `work` through `recorder` when there is one (one versioned-home commit), else directly;
/// returns what `work` returned.
///
/// # Errors
/// [`BackgroundError::Recorder`](crate::BackgroundError::Recorder) when the recorder took the work
/// and returned without finishing it (a broken recorder; the change state is then unknown).
pub(crate) fn recorded<R>(
    recorder: Option<&dyn ChangeRecorder>,
    now: jiff::Timestamp,
    label: &str,
    work: impl FnOnce() -> R,
) -> Result<R, crate::BackgroundError> {
    enum Slot<F, R> {
        Pending(F),
        Running,
        Done(R),
    }
    let Some(recorder) = recorder else {
        return Ok(work());
    };
    let mut slot = Slot::Pending(work);
    recorder.record(now, label, &mut || {
        if let Slot::Pending(work) = std::mem::replace(&mut slot, Slot::Running) {
            slot = Slot::Done(work());
        }
    });
    match slot {
        Slot::Done(out) => Ok(out),
        // A recorder that did not run the work: run it now so the change is never lost.
        Slot::Pending(work) => Ok(work()),
        Slot::Running => Err(crate::BackgroundError::Recorder(label.to_owned())),
    }
}
