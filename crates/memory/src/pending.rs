//! What a process knows about the memory vectors it left to others: whether searches compute
//! missing vectors inline, and whether this process wrote or met memories without a current
//! vector (so the composition root can hand them to a background worker when it ends).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::MemoryStore;

/// Shared by every clone of a [`MemoryStore`].
#[derive(Debug)]
pub(crate) struct PendingState {
    /// Whether searches compute a few missing vectors themselves ([`crate::INLINE_PENDING`]).
    inline: AtomicBool,
    /// Set when this process created a memory without computing its vector, or a search found
    /// that some active memory may lack one.
    left: AtomicBool,
}

impl Default for PendingState {
    fn default() -> Self {
        PendingState {
            inline: AtomicBool::new(true),
            left: AtomicBool::new(false),
        }
    }
}

impl MemoryStore {
    /// Whether searches compute up to [`crate::INLINE_PENDING`] missing vectors before ranking
    /// (the default). A process whose missing vectors a background worker computes turns it
    /// off: a question then costs only its own embedding, and memories without a vector rank
    /// by their keyword relevance (`docs/behaviour.md#fusion-and-selection`).
    pub fn set_inline_embedding(&self, on: bool) {
        self.pending.inline.store(on, Ordering::SeqCst);
    }

    /// See [`MemoryStore::set_inline_embedding`].
    pub fn inline_embedding(&self) -> bool {
        self.pending.inline.load(Ordering::SeqCst)
    }

    /// Whether this process created a memory without computing its vector, or a search found
    /// that some active memory may lack a current one (always `false` without an embedder).
    pub fn vectors_left_pending(&self) -> bool {
        self.pending.left.load(Ordering::SeqCst)
    }

    /// Records that vectors may be missing (see [`MemoryStore::vectors_left_pending`]).
    pub(crate) fn note_vectors_pending(&self) {
        if self.opts.embedder.is_some() {
            self.pending.left.store(true, Ordering::SeqCst);
        }
    }

    /// Forgets [`MemoryStore::vectors_left_pending`] (a worker that computed them all).
    pub fn clear_vectors_pending(&self) {
        self.pending.left.store(false, Ordering::SeqCst);
    }
}
