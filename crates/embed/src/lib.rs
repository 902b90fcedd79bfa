//! # elroy-embed
//!
//! The built-in embedder: a sentence-transformers model directory (BERT family: `config.json`,
//! `tokenizer.json`, `model.safetensors`) run in the process with candle on the CPU, mean
//! pooling over the tokens, L2-normalised, as sentence-transformers computes all-MiniLM-L6-v2
//! (the model Elroy 0.5.0 uses through its embeddings API). No network: the files come from
//! `elroy models fetch` or by hand.
//!
//! [`BuiltinEmbedder::load`] reads the directory once per process (the encoder's weights and the
//! tokenizer; the word-embedding table is read row by row per text, see ARCHITECTURE.md);
//! [`BuiltinEmbedder`] implements
//! [`elroy_core::Embedder`], so the memory store uses it as it uses an embeddings API.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{LayerNorm, VarBuilder};
use candle_transformers::models::bert::{BertEncoder, Config};
use tokenizers::Tokenizer;

mod error;
mod identity;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;

pub use error::{EmbedTextError, LoadError, WeightsError};
pub use identity::{DEFAULT_MODEL_FINGERPRINT, ModelIdentity, UNAVAILABLE_MODEL, model_identity};

/// The default model's directory name under `$ELROY_HOME/models/`.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The files a model directory must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Tokens embedded per text when the directory does not say (`sentence_bert_config.json`'s
/// `max_seq_length`, 256 for all-MiniLM-L6-v2): the rest of a longer text is cut off, as
/// sentence-transformers does.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// Checks that `dir` holds every one of [`MODEL_FILES`] as a file elroy can look at: the first
/// that does not exist is [`LoadError::Missing`] (so is every file of a directory that does not
/// exist); one the system refuses is [`LoadError::Unreadable`], naming the directory when it is
/// the directory that cannot be entered.
fn check_files(dir: &Path) -> Result<(), LoadError> {
    for file in MODEL_FILES {
        match std::fs::metadata(dir.join(file)) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => {
                return Err(LoadError::NotAFile {
                    dir: dir.to_path_buf(),
                    file,
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LoadError::io(dir, file, e));
            }
            Err(e) => {
                if let Err(dir_error) = std::fs::read_dir(dir) {
                    return Err(LoadError::Unreadable {
                        dir: dir.to_path_buf(),
                        path: dir.to_path_buf(),
                        source: dir_error,
                    });
                }
                return Err(LoadError::io(dir, file, e));
            }
        }
    }
    Ok(())
}

/// A loaded sentence-transformers model: the tokenizer, the BERT encoder's weights on the CPU,
/// and the word-embedding table left in `model.safetensors` (only the rows of a text's tokens
/// are read, when it is embedded: the table is half of all-MiniLM-L6-v2's 90 MB, and loading
/// it was a third of the load time).
pub struct BuiltinEmbedder {
    name: String,
    tokenizer: Tokenizer,
    encoder: BertEncoder,
    /// `position_embeddings.weight`, `[max_position_embeddings, hidden]`.
    positions: Tensor,
    /// Row 0 of `token_type_embeddings.weight` (every token is of type 0), `[hidden]`.
    token_type: Tensor,
    layer_norm: LayerNorm,
    words: WordRows,
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

/// The word-embedding table inside `model.safetensors`, read row by row.
struct WordRows {
    file: Mutex<File>,
    /// Byte offset of row 0 in the file.
    offset: u64,
    vocab: usize,
    hidden: usize,
}

impl WordRows {
    /// The rows of `ids` as a `[1, ids.len(), hidden]` tensor.
    fn rows(&self, ids: &[u32]) -> Result<Tensor, WeightsError> {
        let mut data = vec![0f32; ids.len() * self.hidden];
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        for (row, &id) in data.chunks_exact_mut(self.hidden).zip(ids) {
            let id = id as usize;
            if id >= self.vocab {
                return Err(WeightsError::OutsideVocabulary {
                    id,
                    vocab: self.vocab,
                });
            }
            let at = self.offset + (id * self.hidden * 4) as u64;
            file.seek(SeekFrom::Start(at))
                .and_then(|_| file.read_exact(bytemuck::cast_slice_mut(row)))
                .map_err(|source| WeightsError::Io {
                    context: "reading model.safetensors",
                    source,
                })?;
        }
        from_le(&mut data);
        Ok(Tensor::from_vec(
            data,
            (1, ids.len(), self.hidden),
            &Device::Cpu,
        )?)
    }
}

/// safetensors stores little-endian values; this is a no-op on little-endian machines.
fn from_le(data: &mut [f32]) {
    if cfg!(target_endian = "big") {
        for x in data {
            *x = f32::from_bits(u32::from_le(x.to_bits()));
        }
    }
}

/// One tensor's entry in a safetensors header.
#[derive(serde::Deserialize)]
struct TensorEntry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// Where an F32 tensor lies in the file: its shape and absolute byte range.
type TensorAt = (Vec<usize>, u64, u64);

/// A safetensors file's header.
struct Header {
    /// The header as it is in the file: its 8-byte length and its JSON.
    raw: Vec<u8>,
    /// The file's length.
    file_len: u64,
    /// Every tensor: name, type, shape and absolute byte range, each range checked against the
    /// file's length.
    tensors: Vec<(String, TensorEntry, u64, u64)>,
}

/// Reads the header of the safetensors file `file` (from its start).
fn read_header(file: &mut File) -> Result<Header, WeightsError> {
    let io = |context| move |source| WeightsError::Io { context, source };
    let file_len = file.metadata().map_err(io(""))?.len();
    file.seek(SeekFrom::Start(0)).map_err(io(""))?;
    let mut n = [0u8; 8];
    file.read_exact(&mut n).map_err(io("no header"))?;
    let header_len = u64::from_le_bytes(n);
    if header_len > 100_000_000 || 8 + header_len > file_len {
        return Err(WeightsError::HeaderTooLong);
    }
    let mut raw = vec![0u8; 8 + header_len as usize];
    raw[..8].copy_from_slice(&n);
    file.read_exact(&mut raw[8..]).map_err(io(""))?;
    let mut entries: HashMap<String, serde_json::Value> = serde_json::from_slice(&raw[8..])
        .map_err(|source| WeightsError::Json {
            name: "header".into(),
            source,
        })?;
    entries.remove("__metadata__");
    let data_start = 8 + header_len;
    let mut tensors = Vec::with_capacity(entries.len());
    for (name, value) in entries {
        let entry: TensorEntry = match serde_json::from_value(value) {
            Ok(entry) => entry,
            Err(source) => return Err(WeightsError::Json { name, source }),
        };
        let [start, end] = entry.data_offsets;
        // Checked sums: offsets come from the file.
        if end < start || data_start.checked_add(end).is_none_or(|e| e > file_len) {
            return Err(WeightsError::OutsideFile(name));
        }
        tensors.push((name, entry, data_start + start, data_start + end));
    }
    Ok(Header {
        raw,
        file_len,
        tensors,
    })
}

/// The F32 tensors of a safetensors file: `(name, shape, absolute byte range)`, every range
/// checked against the file's length (tensors of other types are left out: a weight the model
/// needs that is not F32 is then named as missing).
fn read_index(file: &mut File) -> Result<HashMap<String, TensorAt>, WeightsError> {
    let mut out = HashMap::new();
    for (name, entry, start, end) in read_header(file)?.tensors {
        // Only F32 tensors are read (`embeddings.position_ids`, I64, is not used).
        if entry.dtype != "F32" {
            continue;
        }
        let elements: usize = entry.shape.iter().product();
        if end - start != elements as u64 * 4 {
            return Err(WeightsError::SizeMismatch {
                name,
                bytes: end - start,
                shape: entry.shape,
            });
        }
        out.insert(name, (entry.shape, start, end));
    }
    Ok(out)
}

/// Reads one F32 tensor straight into its storage (no intermediate copy of the file).
fn read_tensor(
    file: &mut File,
    shape: &[usize],
    start: u64,
    end: u64,
) -> Result<Tensor, WeightsError> {
    let mut data = vec![0f32; ((end - start) / 4) as usize];
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_exact(bytemuck::cast_slice_mut(&mut data)))
        .map_err(|source| WeightsError::Io {
            context: "",
            source,
        })?;
    from_le(&mut data);
    Ok(Tensor::from_vec(data, shape, &Device::Cpu)?)
}

impl BuiltinEmbedder {
    /// Loads the model directory `dir`. Its vectors are stored under the model name
    /// [`model_identity`] gives, which comes from the files' content, not from the directory's
    /// path (`docs/formats.md#search-index-and-embeddings`; vectors of another model are never
    /// compared). The word-embedding table stays in the file (its rows are read per text); the
    /// file stays open for that.
    ///
    /// # Errors
    /// [`LoadError::Missing`] when `dir` or one of [`MODEL_FILES`] is absent;
    /// [`LoadError::Unreadable`] when the system refuses to read one (or the directory);
    /// [`LoadError::Corrupt`] when a file cannot be parsed or the weights do not fit the config.
    pub fn load(dir: &Path) -> Result<Self, LoadError> {
        let name = model_identity(dir)?.name;
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| LoadError::io(dir, "config.json", e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| LoadError::corrupt(dir, "config.json", e))?;
        let weights = |e: WeightsError| LoadError::corrupt(dir, "model.safetensors", e);
        let mut file = File::open(dir.join("model.safetensors"))
            .map_err(|e| LoadError::io(dir, "model.safetensors", e))?;
        let index = read_index(&mut file).map_err(weights)?;
        let prefix = if index.contains_key("bert.embeddings.word_embeddings.weight") {
            "bert."
        } else {
            ""
        };
        let hidden = config.hidden_size;
        let get = |file: &mut File, name: &str, shape: &[usize]| -> Result<Tensor, LoadError> {
            let full = format!("{prefix}{name}");
            let (have, start, end) = index
                .get(&full)
                .ok_or_else(|| weights(WeightsError::Missing(full.clone())))?;
            if have != shape {
                return Err(weights(WeightsError::Shape {
                    name: full,
                    have: have.clone(),
                    want: shape.to_vec(),
                }));
            }
            read_tensor(file, have, *start, *end).map_err(weights)
        };
        let positions = get(
            &mut file,
            "embeddings.position_embeddings.weight",
            &[config.max_position_embeddings, hidden],
        )?;
        let token_type = get(
            &mut file,
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, hidden],
        )?
        .get(0)
        .map_err(|e| weights(e.into()))?;
        let layer_norm = LayerNorm::new(
            get(&mut file, "embeddings.LayerNorm.weight", &[hidden])?,
            get(&mut file, "embeddings.LayerNorm.bias", &[hidden])?,
            config.layer_norm_eps,
        );
        let encoder_prefix = format!("{prefix}encoder.");
        let mut encoder_tensors = HashMap::new();
        for (name, (shape, start, end)) in &index {
            if name.starts_with(&encoder_prefix) {
                let tensor = read_tensor(&mut file, shape, *start, *end).map_err(weights)?;
                encoder_tensors.insert(name.clone(), tensor);
            }
        }
        let vb = VarBuilder::from_tensors(encoder_tensors, DType::F32, &Device::Cpu);
        let encoder = BertEncoder::load(vb.pp(format!("{prefix}encoder")), &config)
            .map_err(|e| weights(e.into()))?;
        let words_name = format!("{prefix}embeddings.word_embeddings.weight");
        let words = match index.get(&words_name) {
            Some((shape, start, _)) if *shape == [config.vocab_size, hidden] => WordRows {
                file: Mutex::new(file),
                offset: *start,
                vocab: config.vocab_size,
                hidden,
            },
            Some((shape, ..)) => {
                return Err(weights(WeightsError::Shape {
                    name: words_name,
                    have: shape.clone(),
                    want: vec![config.vocab_size, hidden],
                }));
            }
            None => return Err(weights(WeightsError::Missing(words_name))),
        };
        // Parsed last: the weights' errors come first, and this is the slowest step left.
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| LoadError::corrupt(dir, "tokenizer.json", e))?;
        let max_tokens = max_tokens(dir).min(config.max_position_embeddings);
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: max_tokens,
                ..tokenizers::TruncationParams::default()
            }))
            .map_err(|e| LoadError::corrupt(dir, "tokenizer.json", e))?;
        Ok(BuiltinEmbedder {
            name,
            tokenizer,
            encoder,
            positions,
            token_type,
            layer_norm,
            words,
            max_tokens,
        })
    }

    /// The L2-normalised mean of the last hidden states of `text`'s tokens (with the
    /// tokenizer's `[CLS]`/`[SEP]`), at most `max_seq_length` tokens.
    ///
    /// # Errors
    /// [`EmbedTextError`] when tokenizing, reading the word rows or the forward pass fails.
    pub fn embed_text(&self, text: &str) -> Result<Vec<f32>, EmbedTextError> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(EmbedTextError::Tokenize)?;
        let ids = encoding.get_ids();
        if ids.is_empty() {
            return Err(EmbedTextError::NoTokens);
        }
        let words = self.words.rows(ids)?;
        let run = || -> candle_core::Result<Vec<f32>> {
            let n = ids.len();
            // BERT's embeddings: word + token type (0) + position, layer-normalised (dropout is
            // off at inference), as candle-transformers' `BertEmbeddings`.
            let x = words
                .broadcast_add(&self.token_type)?
                .broadcast_add(&self.positions.narrow(0, 0, n)?)?;
            let x = self.layer_norm.forward(&x)?;
            // Every token is attended to: the extended mask is all zeros.
            let mask = Tensor::zeros((1, 1, 1, n), DType::F32, &Device::Cpu)?;
            let hidden = self.encoder.forward(&x, &mask)?; // [1, tokens, dims]
            let pooled = (hidden.sum(1)? / n as f64)?.squeeze(0)?;
            let mut v = pooled.to_vec1::<f32>()?;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
            Ok(v)
        };
        run().map_err(EmbedTextError::Forward)
    }

    /// The model name stored with each vector (see [`model_identity`]).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl elroy_core::Embedder for BuiltinEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, elroy_core::EmbedError> {
        Ok(self.embed_text(text)?)
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
/// without loading: [`model_identity`] reads the small files and samples of the weights, on the
/// first call of [`elroy_core::Embedder::model`]. When loading fails, `on_error` is called once
/// and every embedding fails with the same message (recall then uses keywords only). When the
/// files changed between the name and the load, loading fails with [`LoadError::Changed`]: no
/// vector is stored under a name that is not its model's.
pub struct LazyEmbedder {
    dir: PathBuf,
    name: std::sync::OnceLock<String>,
    loaded: std::sync::OnceLock<Result<BuiltinEmbedder, LoadError>>,
    on_error: OnLoadError,
}

impl std::fmt::Debug for LazyEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyEmbedder")
            .field("dir", &self.dir)
            .field("name", &self.name.get())
            .finish_non_exhaustive()
    }
}

impl LazyEmbedder {
    /// An embedder for the model directory `dir`, not loaded yet (nothing is read yet).
    pub fn new(dir: PathBuf, on_error: OnLoadError) -> Self {
        LazyEmbedder {
            dir,
            name: std::sync::OnceLock::new(),
            loaded: std::sync::OnceLock::new(),
            on_error,
        }
    }

    /// The model name its vectors are stored under: [`model_identity`]'s, or
    /// [`UNAVAILABLE_MODEL`] when the directory cannot be identified (then it cannot be loaded
    /// either, and no vector is stored under that name).
    pub fn name(&self) -> &str {
        self.name.get_or_init(|| {
            model_identity(&self.dir).map_or_else(|_| UNAVAILABLE_MODEL.to_owned(), |id| id.name)
        })
    }

    /// The loaded model, loading it on the first call.
    ///
    /// # Errors
    /// The load error (the same on every call).
    pub fn get(&self) -> Result<&BuiltinEmbedder, &LoadError> {
        self.loaded
            .get_or_init(|| {
                BuiltinEmbedder::load(&self.dir)
                    .and_then(|e| {
                        if e.name() == self.name() {
                            Ok(e)
                        } else {
                            Err(LoadError::Changed {
                                dir: self.dir.clone(),
                                was: self.name().to_owned(),
                                now: e.name().to_owned(),
                            })
                        }
                    })
                    .inspect_err(|e| (self.on_error)(e))
            })
            .as_ref()
    }
}

impl elroy_core::Embedder for LazyEmbedder {
    fn model(&self) -> &str {
        self.name()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, elroy_core::EmbedError> {
        self.get()
            .map_err(|e| elroy_core::EmbedError(e.to_string()))?
            .embed_text(text)
            .map_err(Into::into)
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
