//! The built-in embedder's costs: its model name from the files' content (every process that
//! uses the built-in embedder, loaded or not), loading all-MiniLM-L6-v2 (once per process) and
//! embedding one sentence, a memory-sized text, and a 256-token text.
//!
//! `ELROY_EMBEDDING_MODEL_PATH=DIR cargo bench -p elroy-embed` (DIR: the model directory, e.g.
//! the one `elroy models fetch` writes, `$ELROY_HOME/models/all-MiniLM-L6-v2`). Without it the
//! benchmarks print `SKIPPED` and measure nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::sync::OnceLock;

use elroy_embed::BuiltinEmbedder;

fn main() {
    if model_dir().is_none() {
        println!("SKIPPED: set ELROY_EMBEDDING_MODEL_PATH to an all-MiniLM-L6-v2 directory");
        return;
    }
    divan::main();
}

fn model_dir() -> Option<PathBuf> {
    std::env::var_os("ELROY_EMBEDDING_MODEL_PATH").map(PathBuf::from)
}

fn model() -> &'static BuiltinEmbedder {
    static MODEL: OnceLock<BuiltinEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| BuiltinEmbedder::load(&model_dir().unwrap()).unwrap())
}

#[divan::bench]
fn model_identity() -> elroy_embed::ModelIdentity {
    elroy_embed::model_identity(&model_dir().unwrap()).unwrap()
}

#[divan::bench(sample_count = 10)]
fn load() -> BuiltinEmbedder {
    BuiltinEmbedder::load(&model_dir().unwrap()).unwrap()
}

#[divan::bench(args = [
    "What breed is the dog Biscuit?",
    "#Kyoto trip\n\nThe user goes to Kyoto in December with two friends from the pottery class; they booked a ryokan near the river and want to see the temples early in the morning.",
])]
fn embed(text: &str) -> Vec<f32> {
    model().embed_text(text).unwrap()
}

#[divan::bench(sample_count = 20)]
fn embed_256_tokens() -> Vec<f32> {
    let text = "the user likes long walks by the sea with the dog ".repeat(30);
    model().embed_text(&text).unwrap()
}
