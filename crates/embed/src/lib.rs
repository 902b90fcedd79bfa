//! # elroy-embed
//!
//! The built-in embedder: a sentence-transformers model directory (BERT family: `config.json`,
//! `tokenizer.json`, `model.safetensors`) run in the process with candle on the CPU, mean
//! pooling over the tokens, L2-normalised, as sentence-transformers computes all-MiniLM-L6-v2
//! (the model Elroy 0.5.0 uses through its embeddings API). No network: the files come from
//! `elroy models fetch` or by hand.
//!
//! [`BuiltinEmbedder::load`] reads the directory once per process (about 0.1 s for
//! all-MiniLM-L6-v2, see ARCHITECTURE.md); [`BuiltinEmbedder`] implements
//! [`elroy_core::Embedder`], so the memory store uses it as it uses an embeddings API.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::Tokenizer;

/// The default model's directory name under `$ELROY_HOME/models/`.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Tokens embedded per text when the directory does not say (`sentence_bert_config.json`'s
/// `max_seq_length`, 256 for all-MiniLM-L6-v2): the rest of a longer text is cut off, as
/// sentence-transformers does.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// Why a model directory could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The directory or one of [`MODEL_FILES`] does not exist.
    #[error("no embedding model at {}: {missing} is missing", dir.display())]
    Missing {
        /// The model directory.
        dir: PathBuf,
        /// The first missing file.
        missing: String,
    },
    /// A file exists but cannot be used (truncated weights, invalid JSON, a model that is not
    /// BERT-shaped).
    #[error("the embedding model at {} cannot be used: {reason}", dir.display())]
    Corrupt {
        /// The model directory.
        dir: PathBuf,
        /// What failed, with the file.
        reason: String,
    },
}

/// A loaded sentence-transformers model: the tokenizer and the BERT weights on the CPU.
pub struct BuiltinEmbedder {
    name: String,
    tokenizer: Tokenizer,
    model: BertModel,
    max_tokens: usize,
}

impl std::fmt::Debug for BuiltinEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinEmbedder")
            .field("name", &self.name)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl BuiltinEmbedder {
    /// Loads the model directory `dir`. Its vectors are stored under the model name
    /// `builtin:<directory name>` (vectors of another model are never compared).
    ///
    /// # Errors
    /// [`LoadError::Missing`] when `dir` or one of [`MODEL_FILES`] is absent;
    /// [`LoadError::Corrupt`] when a file cannot be parsed or the weights do not fit the config.
    pub fn load(dir: &Path) -> Result<Self, LoadError> {
        for file in MODEL_FILES {
            if !dir.join(file).is_file() {
                return Err(LoadError::Missing {
                    dir: dir.to_path_buf(),
                    missing: file.to_owned(),
                });
            }
        }
        let corrupt = |file: &str, e: &dyn std::fmt::Display| LoadError::Corrupt {
            dir: dir.to_path_buf(),
            reason: format!("{file}: {e}"),
        };
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| corrupt("config.json", &e))?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|e| corrupt("config.json", &e))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| corrupt("tokenizer.json", &e))?;
        let max_tokens = max_tokens(dir);
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: max_tokens,
                ..tokenizers::TruncationParams::default()
            }))
            .map_err(|e| corrupt("tokenizer.json", &e))?;
        let device = Device::Cpu;
        let tensors = candle_core::safetensors::load(dir.join("model.safetensors"), &device)
            .map_err(|e| corrupt("model.safetensors", &e))?;
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
        let model = BertModel::load(vb, &config).map_err(|e| corrupt("model.safetensors", &e))?;
        let name = dir
            .file_name()
            .map_or_else(|| DEFAULT_MODEL.into(), |n| n.to_string_lossy());
        Ok(BuiltinEmbedder {
            name: format!("builtin:{name}"),
            tokenizer,
            model,
            max_tokens,
        })
    }

    /// The L2-normalised mean of the last hidden states of `text`'s tokens (with the
    /// tokenizer's `[CLS]`/`[SEP]`), at most `max_seq_length` tokens.
    ///
    /// # Errors
    /// A message when tokenizing or the forward pass fails.
    pub fn embed_text(&self, text: &str) -> Result<Vec<f32>, String> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| format!("tokenizing failed: {e}"))?;
        let ids = encoding.get_ids();
        if ids.is_empty() {
            return Err("the text has no tokens".into());
        }
        let run = || -> candle_core::Result<Vec<f32>> {
            let device = Device::Cpu;
            let input = Tensor::new(ids, &device)?.unsqueeze(0)?;
            let types = input.zeros_like()?;
            let hidden = self.model.forward(&input, &types, None)?; // [1, tokens, dims]
            let pooled = (hidden.sum(1)? / ids.len() as f64)?.squeeze(0)?;
            let mut v = pooled.to_vec1::<f32>()?;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
            Ok(v)
        };
        run().map_err(|e| format!("the forward pass failed: {e}"))
    }

    /// The model name stored with each vector: `builtin:<directory name>`.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl elroy_core::Embedder for BuiltinEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, elroy_core::EmbedError> {
        self.embed_text(text).map_err(elroy_core::EmbedError)
    }
}

/// `max_seq_length` of `sentence_bert_config.json` when present, else [`DEFAULT_MAX_TOKENS`].
fn max_tokens(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("max_seq_length")?.as_u64())
        .map_or(DEFAULT_MAX_TOKENS, |n| n as usize)
}

/// What [`LazyEmbedder`] calls once when the model cannot be loaded.
pub type OnLoadError = Box<dyn Fn(&LoadError) + Send + Sync>;

/// A [`BuiltinEmbedder`] loaded on the first [`elroy_core::Embedder::embed`] call, so a process
/// that never embeds (most `elroy tools call`s) never reads the weights. The model name is known
/// without loading (from the directory name). When loading fails, `on_error` is called once and
/// every embedding fails with the same message (recall then uses keywords only).
pub struct LazyEmbedder {
    dir: PathBuf,
    name: String,
    loaded: std::sync::OnceLock<Result<BuiltinEmbedder, String>>,
    on_error: OnLoadError,
}

impl std::fmt::Debug for LazyEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyEmbedder")
            .field("dir", &self.dir)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl LazyEmbedder {
    /// An embedder for the model directory `dir`, not loaded yet.
    pub fn new(dir: PathBuf, on_error: OnLoadError) -> Self {
        let name = format!(
            "builtin:{}",
            dir.file_name()
                .map_or_else(|| DEFAULT_MODEL.into(), |n| n.to_string_lossy())
        );
        LazyEmbedder {
            dir,
            name,
            loaded: std::sync::OnceLock::new(),
            on_error,
        }
    }

    /// The loaded model, loading it on the first call.
    ///
    /// # Errors
    /// The load error's message (the same on every call).
    pub fn get(&self) -> Result<&BuiltinEmbedder, &str> {
        self.loaded
            .get_or_init(|| {
                BuiltinEmbedder::load(&self.dir).map_err(|e| {
                    (self.on_error)(&e);
                    e.to_string()
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl elroy_core::Embedder for LazyEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, elroy_core::EmbedError> {
        self.get()
            .map_err(|e| elroy_core::EmbedError(e.to_owned()))?
            .embed_text(text)
            .map_err(elroy_core::EmbedError)
    }

    /// Loaded (successfully) by an earlier embedding: a one-shot `create_memory` leaves its
    /// vector pending rather than load the model.
    fn is_loaded(&self) -> bool {
        self.loaded.get().is_some_and(Result::is_ok)
    }
}

#[cfg(test)]
extern crate self as elroy_embed;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
