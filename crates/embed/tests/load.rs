//! Loading model directories: the tiny model the test writes itself, and the directories that
//! cannot be used (missing, corrupt).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::common::{DIMS, write_tiny_model};

use elroy_core::Embedder;
use elroy_embed::{BuiltinEmbedder, LoadError};

#[test]
fn the_tiny_model_gives_unit_vectors_of_its_hidden_size() {
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("tiny-bert");
    write_tiny_model(&model_dir);
    let e = BuiltinEmbedder::load(&model_dir).unwrap();
    // Named by its content (`identity.rs`), not by its directory.
    assert!(
        e.model().starts_with("builtin:bert-l1-h8-"),
        "{}",
        e.model()
    );
    let dog = e.embed("The dog is a beagle.").unwrap();
    assert_eq!(dog.len(), DIMS);
    let norm: f32 = dog.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    // Deterministic, and the text matters (the lower-casing normaliser maps `DOG` to `dog`).
    assert_eq!(e.embed("the DOG is a beagle.").unwrap(), dog);
    assert_ne!(e.embed("The cats.").unwrap(), dog);
}

#[test]
fn a_missing_directory_or_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = BuiltinEmbedder::load(&dir.path().join("nowhere")).unwrap_err();
    assert!(matches!(&err, LoadError::Missing { missing, .. } if missing == "config.json"));
    let model_dir = dir.path().join("m");
    write_tiny_model(&model_dir);
    std::fs::remove_file(model_dir.join("model.safetensors")).unwrap();
    let err = BuiltinEmbedder::load(&model_dir).unwrap_err();
    assert!(
        err.to_string().ends_with("model.safetensors is missing"),
        "{err}"
    );
}

/// Two corrupt files of the kind: truncated weights (an interrupted download) and a
/// `config.json` that is not JSON.
#[test]
fn a_corrupt_model_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("m");
    write_tiny_model(&model_dir);
    let weights = model_dir.join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let err = BuiltinEmbedder::load(&model_dir).unwrap_err();
    assert!(matches!(err, LoadError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");

    write_tiny_model(&model_dir);
    std::fs::write(model_dir.join("config.json"), "{not json").unwrap();
    let err = BuiltinEmbedder::load(&model_dir).unwrap_err();
    assert!(err.to_string().contains("config.json"), "{err}");
}
