//! [`HashEmbedder`]: the deterministic embedding of the Elroy fixture, for tests and offline
//! experiments.

use elroy_core::{EmbedError, Embedder};
use md5::{Digest, Md5};

/// The fixture's deterministic "embedding model" (`expected.json` of Elroy 0.5.0's fixture home
/// (`docs/development.md#fixtures-and-golden-files`), `environment.embedding`): for each token of
/// `[a-z0-9]+` in the lower-cased text, add 1.0 at index `int(md5(token), 16) % dims`, then
/// L2-normalise (all zeros when there is no token).
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dims: usize,
    model: String,
}

impl HashEmbedder {
    /// The fixture's embedder: 1536 dimensions, model name `hash-1536`.
    pub fn new() -> Self {
        Self::with_dims(1536)
    }

    /// A hash embedder with `dims` dimensions (at least 1).
    pub fn with_dims(dims: usize) -> Self {
        let dims = dims.max(1);
        HashEmbedder {
            dims,
            model: format!("hash-{dims}"),
        }
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

impl Embedder for HashEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = vec![0f32; self.dims];
        let lower = text.to_lowercase();
        for token in lower
            .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
            .filter(|t| !t.is_empty())
        {
            let digest = Md5::digest(token.as_bytes());
            // int(hex, 16) % dims == the 128-bit big-endian value modulo dims.
            let value = u128::from_be_bytes(digest.into());
            let index = usize::try_from(value % self.dims as u128).unwrap_or(0);
            v[index] += 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_normalised() {
        let e = HashEmbedder::new();
        let a = e.embed("Priya likes Kyoto, kyoto!").unwrap();
        assert_eq!(a.len(), 1536);
        let norm: f32 = a.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-5);
        // "kyoto" appears twice: one index holds 2/sqrt(6).
        let max = a.iter().cloned().fold(0f32, f32::max);
        assert!((max - 2.0 / 6f32.sqrt()).abs() < 1e-5);
        assert_eq!(e.embed("").unwrap(), vec![0f32; 1536]);
        let b = e.embed("Kyoto priya likes").unwrap();
        assert_eq!(
            b.iter()
                .filter(|x| (**x - 1.0 / 3f32.sqrt()).abs() < 1e-5)
                .count(),
            3
        );
        // Python: int(hashlib.md5(b"kyoto").hexdigest(), 16) % 1536 == 1488.
        let k = e.embed("kyoto").unwrap();
        assert_eq!(k.iter().position(|x| *x > 0.0), Some(1488));
    }
}
