//! # elroy-memory
//!
//! Long-term memories (`docs/formats.md#memories`, `docs/formats.md#memory-index`,
//! `docs/formats.md#search-index-and-embeddings`; `docs/tools.md#memories`): each memory is a
//! markdown file `memories/<name>.md` whose front matter holds its `id`; its name, active flag and
//! sources live in the `memories` table of `state.db`.
//!
//! - [`MemoryStore`]: create, look up, render, update (a new version; the old file moves to
//!   `memories/archive/`, D8), archive; the index sync that picks up files Elroy or a person wrote
//!   ([`MemoryStore::sync`], names from Elroy's database per
//!   `docs/formats.md#names-from-elroys-database`).
//! - Recall (D9): SQLite FTS5 `bm25()` always ([`recall::keyword_leg`]), cosine similarity with
//!   an explicit threshold when an [`elroy_core::Embedder`] is configured, fused by score
//!   ([`recall::fuse_scores`], [`MemoryStore::search`]); the period a question names
//!   ([`period`]) ranks its memories first, and a memory gains from its neighbours (the memories
//!   written just before and after it).
//! - [`consolidate`]: the pure part of consolidation (`docs/behaviour.md#consolidation`: TF-IDF,
//!   DBSCAN, trimming, ordering); [`MemoryStore::record_op_tracked`] and
//!   [`MemoryStore::take_consolidation_due`] carry its trigger to the orchestrator.
//! - [`vectors`]: the embedding leg at scale: sign-bit codes of the memory vectors in
//!   `state.db`, kept in step with `embeddings` by triggers, scanned first, the best few hundred
//!   rescored with their exact vectors.
//! - [`HashEmbedder`]: the deterministic embedder of the Elroy fixture, for tests.
//!
//! The store does no async work and depends on no tool or LLM crate.

mod bounded;
pub mod consolidate;
mod error;
mod fusion;
mod hash_embedder;
mod index;
mod model;
mod op_tracked;
mod pending;
pub mod period;
pub mod recall;
mod relative_period;
mod search;
mod store;
mod stranded;
mod update;
pub mod vectors;

pub use bounded::{MAX_MEMORY_TEXT_CHARS, bounded_text};
pub use error::MemoryError;
pub use hash_embedder::HashEmbedder;
pub use index::{
    DUPLICATE_ARCHIVED_ID, DUPLICATE_MEMORY_ID, NO_MEMORY_ID, SyncReport, UNREADABLE_MEMORY_FILES,
    unreadable_memory_files,
};
pub use model::{Memory, MemorySource, sources_from_json, sources_to_json};
pub use search::{EMBEDDING_CANDIDATES, MemoryQuery, ReadableHits};
pub use store::{INLINE_PENDING, KIND, MemoryStore, MemoryStoreOptions, md5_hex, render_memory};
