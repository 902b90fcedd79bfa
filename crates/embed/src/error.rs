//! The embedder's errors: [`LoadError`] (a model directory that cannot be loaded),
//! [`WeightsError`] (a safetensors file that does not hold what the model needs) and
//! [`EmbedTextError`] (one text that cannot be embedded). Each keeps its source.

use std::path::{Path, PathBuf};

/// Why a model directory could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The directory or one of [`crate::MODEL_FILES`] does not exist.
    #[error("no embedding model at {}: {missing} is missing", dir.display())]
    Missing {
        /// The model directory.
        dir: PathBuf,
        /// The first missing file.
        missing: String,
    },
    /// The directory or one of its files exists but cannot be read (permission denied, or
    /// whatever else the system says): `path` is what failed, the directory itself when it
    /// cannot be entered.
    #[error("the embedding model at {} cannot be read: {}: {source}", dir.display(), path.display())]
    Unreadable {
        /// The model directory.
        dir: PathBuf,
        /// The file or directory that cannot be read.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// One of [`crate::MODEL_FILES`] exists but is not a file.
    #[error("the embedding model at {} cannot be used: {file} is not a file", dir.display())]
    NotAFile {
        /// The model directory.
        dir: PathBuf,
        /// The file's name.
        file: &'static str,
    },
    /// A file exists but cannot be used (truncated weights, invalid JSON, a model that is not
    /// BERT-shaped).
    #[error("the embedding model at {} cannot be used: {file}: {source}", dir.display())]
    Corrupt {
        /// The model directory.
        dir: PathBuf,
        /// The file's name.
        file: &'static str,
        /// What is wrong with it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The directory's files changed after [`crate::LazyEmbedder`] took the model's name from them:
    /// loading them now would store vectors of one model under the name of another.
    #[error(
        "the embedding model at {} changed while elroy was running (it is now {now}, not {was}); restart elroy to use it",
        dir.display()
    )]
    Changed {
        /// The model directory.
        dir: PathBuf,
        /// The name taken when the process started.
        was: String,
        /// The name of the files there now.
        now: String,
    },
}

impl LoadError {
    /// An I/O error on `file` of `dir`: [`LoadError::Missing`] when it does not exist,
    /// [`LoadError::Unreadable`] otherwise.
    pub(crate) fn io(dir: &Path, file: &str, e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::NotFound {
            LoadError::Missing {
                dir: dir.to_path_buf(),
                missing: file.to_owned(),
            }
        } else {
            LoadError::Unreadable {
                dir: dir.to_path_buf(),
                path: dir.join(file),
                source: e,
            }
        }
    }

    /// [`LoadError::Corrupt`]: `file` of `dir` cannot be used because of `source`.
    pub(crate) fn corrupt(
        dir: &Path,
        file: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        LoadError::Corrupt {
            dir: dir.to_path_buf(),
            file,
            source: source.into(),
        }
    }
}

/// What is wrong with a safetensors file (shown after `model.safetensors: `).
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// Reading the file failed; `context` says what was being read (`no header`, `reading
    /// model.safetensors`, `reading the tensors`), empty when the system's words suffice.
    #[error("{}{source}", if context.is_empty() { String::new() } else { format!("{context}: ") })]
    Io {
        /// What was being read.
        context: &'static str,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The header, or one tensor's entry (`name`), is not the JSON safetensors writes.
    #[error("{name}: {source}")]
    Json {
        /// `header` or the tensor's name.
        name: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The header's length runs past the end of the file.
    #[error("the header is longer than the file")]
    HeaderTooLong,
    /// A tensor's byte range runs past the end of the file.
    #[error("{0} lies outside the file (truncated?)")]
    OutsideFile(String),
    /// A tensor's byte range does not fit its shape.
    #[error("{name}: {bytes} bytes for shape {shape:?}")]
    SizeMismatch {
        /// The tensor.
        name: String,
        /// Its byte length.
        bytes: u64,
        /// Its declared shape.
        shape: Vec<usize>,
    },
    /// A tensor the model needs is absent (or not F32).
    #[error("{0} is missing")]
    Missing(String),
    /// A tensor has another shape than the configuration asks for.
    #[error("{name} has shape {have:?}, not {want:?}")]
    Shape {
        /// The tensor.
        name: String,
        /// Its shape in the file.
        have: Vec<usize>,
        /// The shape the configuration asks for.
        want: Vec<usize>,
    },
    /// A token id past the word-embedding table.
    #[error("token id {id} is outside the vocabulary ({vocab})")]
    OutsideVocabulary {
        /// The token id.
        id: usize,
        /// The table's rows.
        vocab: usize,
    },
    /// candle refused a tensor.
    #[error("{0}")]
    Tensor(#[from] candle_core::Error),
}

/// Why one text could not be embedded ([`crate::BuiltinEmbedder::embed_text`]).
#[derive(Debug, thiserror::Error)]
pub enum EmbedTextError {
    /// The tokenizer failed.
    #[error("tokenizing failed: {0}")]
    Tokenize(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The text gives no tokens.
    #[error("the text has no tokens")]
    NoTokens,
    /// Reading the text's word rows failed.
    #[error("{0}")]
    Weights(#[from] WeightsError),
    /// The model's forward pass failed.
    #[error("the forward pass failed: {0}")]
    Forward(#[source] candle_core::Error),
}

impl From<EmbedTextError> for elroy_core::EmbedError {
    fn from(e: EmbedTextError) -> Self {
        elroy_core::EmbedError(e.to_string())
    }
}
