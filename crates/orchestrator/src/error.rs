//! The orchestrator's typed errors. Each keeps its source (`#[source]`/`#[from]`) so a front end
//! can tell a provider failure from a store failure without parsing text; the text is made only at
//! the edge (the CLI prints `to_string()`).

use elroy_db::DbError;
use elroy_llm::LlmError;
use elroy_memory::MemoryError;
use elroy_transcript::TranscriptError;

use crate::ports::PortError;

/// Why a session could not start ([`crate::Session::start`]) or its context could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The transcript (context window) failed.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The database (preferences, users) failed.
    #[error(transparent)]
    Database(#[from] DbError),
}

/// Why the background work after a turn ([`crate::Session::after_turn`],
/// [`crate::Session::consolidate`]) stopped. The turn itself is already persisted.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    /// The fast model (or the chat model standing in for it) failed.
    #[error("the model failed: {0}")]
    Model(#[from] LlmError),
    /// The transcript failed.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The database failed.
    #[error(transparent)]
    Database(#[from] DbError),
    /// The memory store failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A port (feature requests, history) failed; the port's error is the source.
    #[error("{0}")]
    Port(#[from] PortError),
    /// The model's consolidation reply did not match the schema, twice.
    #[error("the reply did not match the consolidation schema")]
    ConsolidationSchema,
    /// A [`crate::ChangeRecorder`] took a change and returned without finishing it.
    #[error("the change recorder did not finish the change `{0}`")]
    Recorder(String),
}
