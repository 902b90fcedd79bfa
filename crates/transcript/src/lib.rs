//! # elroy-transcript
//!
//! The conversation transcript of `docs/formats.md#transcript-and-context-versions` (decision D11)
//! and the context machinery of `docs/behaviour.md#synthetic-pairs`,
//! `docs/behaviour.md#applying-effects`, `docs/behaviour.md#context-repair`,
//! `docs/behaviour.md#persisting-a-turn` and `docs/behaviour.md#context-refresh-and-compression`:
//!
//! - [`TranscriptStore`]: append-only messages, the active context as ordered entries, one
//!   **version** per change ([`TranscriptStore::set_context`], [`TranscriptStore::append`]);
//!   every version stays addressable ([`TranscriptStore::context_at`]) so a memory can name it as
//!   its source (`ContextMessageSet`).
//! - [`validate()`]: the validator's repair rules (`docs/behaviour.md#context-repair`), pure.
//! - [`effects`]: `Pin`/`Unpin` applied to a message list in the exact synthetic format (K5),
//!   pure; [`TranscriptStore::apply_effects`] applies them to the stored active context as one
//!   version (direct tool calls, `docs/behaviour.md#applying-effects`).
//! - [`compress()`]: the compression helper of `docs/behaviour.md#context-refresh-and-compression`
//!   (keep the system message, keep tool pairs whole, stay under a token target), pure.
//!
//! Stores never depend on tools, llm or tokio; this crate uses only elroy-core and elroy-db.

pub mod compress;
pub mod effects;
mod error;
mod snapshot;
mod store;
pub mod validate;

pub use compress::{compress, estimate_tokens};
pub use effects::{PinContent, ResolvedEffect};
pub use error::TranscriptError;
pub use snapshot::render_snapshot;
pub use store::{ContextItem, StoredMessage, TranscriptStore};
pub use validate::{Provider, ValidatedItem, Validation, is_system_instruction, validate};

// The integration tests (`tests/*.rs`) run in this crate's unit-test executable, so the package
// builds one test executable (docs/development.md, "Test layout"); they use the crate by its name.
#[cfg(test)]
extern crate self as elroy_transcript;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
