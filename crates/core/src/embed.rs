//! [`Embedder`]: turns text into an embedding vector (`docs/behaviour.md#embedding-leg`,
//! `docs/behaviour.md#embeddings`; decision D9).
//!
//! Stores use it for the embedding leg of recall; when none is configured, recall is keyword-only.
//! The trait is synchronous so stores stay free of async runtimes; an HTTP implementation blocks
//! on its request.

use std::fmt;

/// Why an embedding could not be computed. Recall logs it and falls back to keywords.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedError(pub String);

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EmbedError {}

/// An embedding model.
pub trait Embedder: Send + Sync + fmt::Debug {
    /// The model name stored with each vector (`embeddings.model`); vectors of another model are
    /// never compared.
    fn model(&self) -> &str;

    /// The embedding of `text` (any length of `f32`s; callers L2-normalise before storing).
    /// Callers never pass empty text.
    ///
    /// # Errors
    /// [`EmbedError`] when the model cannot be reached or answers badly.
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError>;

    /// Whether an embedding now costs only the embedding: `false` for a model loaded on its first
    /// use and not loaded yet (the built-in embedder in a process that has not embedded). A new
    /// memory's vector is then left to the next search or session (`docs/behaviour.md#embeddings`),
    /// so `create_memory` does not load a model. `true` by default.
    fn is_loaded(&self) -> bool {
        true
    }
}
