//! The vector cache of `cargo xtask bench --recall`: every text the built-in embedder saw, with
//! its vector, so a second run needs no model time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use elroy_core::{EmbedError, Embedder};

/// An embedder that remembers every vector it computed (persisted in `vectors-<model>.bin`): the
/// built-in model is loaded only when a text is not cached. The model name is the one elroy
/// stores (`elroy_embed::model_identity`, from the model's content), so the homes' vectors serve
/// the real binary too, and the cache file is named by it (another model in the same directory
/// has another cache).
pub(crate) struct CachedEmbedder {
    dir: PathBuf,
    pub name: String,
    model: std::sync::OnceLock<Result<elroy_embed::BuiltinEmbedder, String>>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    file: PathBuf,
    added: Mutex<usize>,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl CachedEmbedder {
    pub(crate) fn open(dir: &Path, work: &Path) -> CachedEmbedder {
        let name = elroy_embed::model_identity(dir)
            .map_or_else(|_| elroy_embed::UNAVAILABLE_MODEL.to_owned(), |id| id.name);
        let base = name.trim_start_matches("builtin:");
        let file = work.join(format!("vectors-{base}.bin"));
        let cache = std::fs::read(&file)
            .map(|bytes| decode_cache(&bytes))
            .unwrap_or_default();
        CachedEmbedder {
            dir: dir.to_path_buf(),
            name,
            model: std::sync::OnceLock::new(),
            cache: Mutex::new(cache),
            file,
            added: Mutex::new(0),
        }
    }

    /// Whether the model can be used: cached vectors alone do not count (a new text needs it).
    pub(crate) fn available(&self) -> Result<(), String> {
        self.model
            .get_or_init(|| {
                elroy_embed::BuiltinEmbedder::load(&self.dir).map_err(|e| e.to_string())
            })
            .as_ref()
            .map(|_| ())
            .map_err(String::clone)
    }

    pub(crate) fn save(&self) -> Result<(), String> {
        let added = self.added.lock().map(|a| *a).unwrap_or(0);
        if added == 0 {
            return Ok(());
        }
        let cache = self.cache.lock().map_err(|e| e.to_string())?;
        let tmp = self.file.with_extension("bin.tmp");
        std::fs::write(&tmp, encode_cache(&cache))
            .and_then(|()| std::fs::rename(&tmp, &self.file))
            .map_err(|e| format!("{}: {e}", self.file.display()))
    }
}

impl Embedder for CachedEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if let Some(v) = self.cache.lock().ok().and_then(|c| c.get(text).cloned()) {
            return Ok(v);
        }
        let model = self
            .model
            .get_or_init(|| {
                elroy_embed::BuiltinEmbedder::load(&self.dir).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| EmbedError(e.clone()))?;
        let v = model.embed_text(text).map_err(EmbedError::from)?;
        if let Ok(mut c) = self.cache.lock() {
            c.insert(text.to_owned(), v.clone());
        }
        if let Ok(mut a) = self.added.lock() {
            *a += 1;
        }
        Ok(v)
    }
}

/// `u32 count`, then per entry `u32 text length, text, u32 dims, dims × f32` (little-endian).
fn encode_cache(cache: &HashMap<String, Vec<f32>>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend((cache.len() as u32).to_le_bytes());
    let mut keys: Vec<&String> = cache.keys().collect();
    keys.sort();
    for k in keys {
        let v = &cache[k];
        out.extend((k.len() as u32).to_le_bytes());
        out.extend(k.as_bytes());
        out.extend((v.len() as u32).to_le_bytes());
        for x in v {
            out.extend(x.to_le_bytes());
        }
    }
    out
}

/// The inverse of [`encode_cache`]; a truncated or damaged file gives what could be read.
fn decode_cache(bytes: &[u8]) -> HashMap<String, Vec<f32>> {
    let mut out = HashMap::new();
    let mut at = 0usize;
    let u32_at = |at: &mut usize| -> Option<usize> {
        let b = bytes.get(*at..*at + 4)?;
        *at += 4;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let Some(count) = u32_at(&mut at) else {
        return out;
    };
    for _ in 0..count {
        let Some(len) = u32_at(&mut at) else { break };
        let Some(text) = bytes.get(at..at + len) else {
            break;
        };
        at += len;
        let Some(dims) = u32_at(&mut at) else { break };
        let Some(raw) = bytes.get(at..at + dims * 4) else {
            break;
        };
        at += dims * 4;
        let v = raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        out.insert(String::from_utf8_lossy(text).into_owned(), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_cache_round_trips() {
        let mut cache = HashMap::new();
        cache.insert("a text".to_owned(), vec![0.5f32, -1.0]);
        cache.insert("b".to_owned(), vec![2.0f32]);
        assert_eq!(decode_cache(&encode_cache(&cache)), cache);
        // A truncated file keeps what it holds whole.
        let bytes = encode_cache(&cache);
        assert_eq!(decode_cache(&bytes[..bytes.len() - 2]).len(), 1);
    }
}
