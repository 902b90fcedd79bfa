//! A tiny BERT model directory for tests (this crate's, and other crates' through the cargo
//! feature `test-support`): 8 dimensions, 2 heads, 1 layer, a vocabulary of 12 word pieces,
//! weights from a fixed formula. The helpers panic on I/O errors: they are for tests only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};

/// The tiny model's word pieces, by id.
pub const VOCAB: [&str; 12] = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "dog", "cat", "is", "a", "beagle", "##s", ".",
];

/// Hidden size of the tiny model.
pub const DIMS: usize = 8;

/// Writes `config.json`, `tokenizer.json` and `model.safetensors` of the tiny model into `dir`.
pub fn write_tiny_model(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        serde_json::json!({
            "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
            "hidden_size": DIMS, "intermediate_size": 16, "num_attention_heads": 2,
            "num_hidden_layers": 1, "max_position_embeddings": 16, "type_vocab_size": 2,
            "vocab_size": VOCAB.len(), "layer_norm_eps": 1e-12, "pad_token_id": 0,
            "position_embedding_type": "absolute", "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02, "use_cache": true
        })
        .to_string(),
    )
    .unwrap();
    let vocab: serde_json::Map<String, serde_json::Value> = VOCAB
        .iter()
        .enumerate()
        .map(|(i, t)| ((*t).to_owned(), serde_json::json!(i)))
        .collect();
    std::fs::write(
        dir.join("tokenizer.json"),
        serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {
                    "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                    "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
            "decoder": null,
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                "vocab": vocab}
        })
        .to_string(),
    )
    .unwrap();
    let mut seed = 0u32;
    let mut tensor = |shape: &[usize]| -> Tensor {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                ((seed >> 16) % 1000) as f32 / 1000.0 - 0.5
            })
            .collect();
        Tensor::from_vec(data, shape, &Device::Cpu).unwrap()
    };
    let mut w: HashMap<String, Tensor> = HashMap::new();
    let v = VOCAB.len();
    w.insert(
        "embeddings.word_embeddings.weight".into(),
        tensor(&[v, DIMS]),
    );
    w.insert(
        "embeddings.position_embeddings.weight".into(),
        tensor(&[16, DIMS]),
    );
    w.insert(
        "embeddings.token_type_embeddings.weight".into(),
        tensor(&[2, DIMS]),
    );
    let ones = || Tensor::ones(DIMS, candle_core::DType::F32, &Device::Cpu).unwrap();
    let zeros = |n: usize| Tensor::zeros(n, candle_core::DType::F32, &Device::Cpu).unwrap();
    w.insert("embeddings.LayerNorm.weight".into(), ones());
    w.insert("embeddings.LayerNorm.bias".into(), zeros(DIMS));
    let p = "encoder.layer.0.";
    for name in [
        "attention.self.query",
        "attention.self.key",
        "attention.self.value",
        "attention.output.dense",
    ] {
        w.insert(format!("{p}{name}.weight"), tensor(&[DIMS, DIMS]));
        w.insert(format!("{p}{name}.bias"), zeros(DIMS));
    }
    w.insert(format!("{p}intermediate.dense.weight"), tensor(&[16, DIMS]));
    w.insert(format!("{p}intermediate.dense.bias"), zeros(16));
    w.insert(format!("{p}output.dense.weight"), tensor(&[DIMS, 16]));
    w.insert(format!("{p}output.dense.bias"), zeros(DIMS));
    for ln in ["attention.output.LayerNorm", "output.LayerNorm"] {
        w.insert(format!("{p}{ln}.weight"), ones());
        w.insert(format!("{p}{ln}.bias"), zeros(DIMS));
    }
    candle_core::safetensors::save(&w, dir.join("model.safetensors")).unwrap();
}
