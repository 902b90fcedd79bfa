//! Experiment (ARCHITECTURE.md "Inference crate"): the load-time breakdown of
//! all-MiniLM-L6-v2 (each step 7 times, median), and a static-embedding model derived from it
//! (model2vec's method: every vocabulary token through the model once, f16 rows, SIF/Zipf
//! weights) written to OUT/static.safetensors and measured against the full model: load, embedding
//! time, and dense-only hit@5 on LoCoMo's dev split (observations and dialog turns). Not part of
//! the product.
//!
//! `cargo run --release -p elroy-embed --example static_experiment -- MODEL_DIR LOCOMO_DIR OUT [load]`
//! (LOCOMO_DIR: the unpacked `locomo10_v2/` with `26.json` …; `load` stops after the breakdown).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    clippy::print_stdout
)]

use std::collections::HashMap;
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use elroy_embed::BuiltinEmbedder;
use tokenizers::Tokenizer;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let locomo = std::path::PathBuf::from(&args[2]);
    let out = std::path::PathBuf::from(&args[3]);
    let mode = args.get(4).map(String::as_str).unwrap_or("all");

    // --- load breakdown (7 rounds, median) ---
    let mut parts: HashMap<&str, Vec<f64>> = HashMap::new();
    for _ in 0..7 {
        let t = Instant::now();
        let mut tok = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        tok.with_padding(None);
        parts.entry("tokenizer.json").or_default().push(ms(t));
        let t = Instant::now();
        let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
        parts.entry("read safetensors").or_default().push(ms(t));
        let t = Instant::now();
        let tensors = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu).unwrap();
        parts.entry("tensors from buffer").or_default().push(ms(t));
        drop(bytes);
        let t = Instant::now();
        let cfg: Config =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap())
                .unwrap();
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let _m = BertModel::load(vb, &cfg).unwrap();
        parts.entry("BertModel::load").or_default().push(ms(t));
        let t = Instant::now();
        let _e = BuiltinEmbedder::load(&dir).unwrap();
        parts
            .entry("BuiltinEmbedder::load (all)")
            .or_default()
            .push(ms(t));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (k, v) in &mut parts {
        println!("load {k}: median {:.1} ms", median(v));
    }
    if mode == "load" {
        return;
    }

    // --- derive the static model ---
    let tok = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
    let vocab = tok.get_vocab_size(true);
    let cfg: Config =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let tensors =
        candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu).unwrap();
    let vb = VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
    let model = BertModel::load(vb, &cfg).unwrap();
    let (cls, sep) = (101u32, 102u32);
    let t = Instant::now();
    let mut rows: Vec<f32> = Vec::with_capacity(vocab * 384);
    let batch = 512;
    let mut start = 0;
    while start < vocab {
        let end = (start + batch).min(vocab);
        let ids: Vec<u32> = (start..end).flat_map(|i| [cls, i as u32, sep]).collect();
        let input = Tensor::from_vec(ids, (end - start, 3), &Device::Cpu).unwrap();
        let types = input.zeros_like().unwrap();
        let hidden = model.forward(&input, &types, None).unwrap(); // [b, 3, d]
        let pooled = (hidden.sum(1).unwrap() / 3.0).unwrap();
        let mut v: Vec<Vec<f32>> = pooled.to_vec2().unwrap();
        for r in &mut v {
            let n = r.iter().map(|x| x * x).sum::<f32>().sqrt();
            r.iter_mut().for_each(|x| *x /= n);
            rows.extend_from_slice(r);
        }
        start = end;
    }
    let derive_ms = ms(t);
    println!("derive: {vocab} tokens in {:.1} s", derive_ms / 1000.0);
    let dims = rows.len() / vocab;
    // SIF weights over the id rank (model2vec: 1e-3 / (1e-3 + p), p ~ Zipf by rank).
    let sif = 1e-3f64;
    let inv: Vec<f64> = (0..vocab).map(|r| 1.0 / (r as f64 + 2.0)).collect();
    let total: f64 = inv.iter().sum();
    let weights: Vec<f32> = inv
        .iter()
        .map(|p| (sif / (sif + p / total)) as f32)
        .collect();
    let emb = Tensor::from_vec(rows.clone(), (vocab, dims), &Device::Cpu)
        .unwrap()
        .to_dtype(DType::F16)
        .unwrap();
    let w = Tensor::from_vec(weights.clone(), vocab, &Device::Cpu).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let mut map = HashMap::new();
    map.insert("embeddings".to_owned(), emb);
    map.insert("weights".to_owned(), w);
    candle_core::safetensors::save(&map, out.join("static.safetensors")).unwrap();

    // --- static load + embed cost ---
    let mut load = Vec::new();
    let mut st = None;
    for _ in 0..7 {
        let t = Instant::now();
        let tk = Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        let m =
            candle_core::safetensors::load(out.join("static.safetensors"), &Device::Cpu).unwrap();
        let e: Vec<f32> = m["embeddings"]
            .to_dtype(DType::F32)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        let w: Vec<f32> = m["weights"].to_vec1().unwrap();
        load.push(ms(t));
        st = Some((tk, e, w));
    }
    let (stok, semb, sw) = st.unwrap();
    println!(
        "static load (tokenizer + f16 table): median {:.1} ms",
        median(&mut load)
    );
    let static_embed = |text: &str| -> Vec<f32> {
        let enc = stok.encode(text, false).unwrap();
        let mut v = vec![0f32; dims];
        let mut wsum = 0f32;
        for &id in enc.get_ids() {
            let id = id as usize;
            let wt = sw[id];
            wsum += wt;
            for (a, b) in v.iter_mut().zip(&semb[id * dims..(id + 1) * dims]) {
                *a += wt * b;
            }
        }
        let _ = wsum;
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if n > 0.0 {
            v.iter_mut().for_each(|x| *x /= n);
        }
        v
    };
    let full = BuiltinEmbedder::load(&dir).unwrap();
    let q = "What breed is the dog Biscuit?";
    let m = "#Kyoto trip\n\nThe user goes to Kyoto in December with two friends from the pottery class; they booked a ryokan near the river and want to see the temples early in the morning.";
    for (label, text) in [("question", q), ("memory", m)] {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for _ in 0..50 {
            let t = Instant::now();
            std::hint::black_box(static_embed(text));
            a.push(ms(t));
            let t = Instant::now();
            std::hint::black_box(full.embed_text(text).unwrap());
            b.push(ms(t));
        }
        println!(
            "embed {label}: static {:.3} ms, full {:.2} ms (median)",
            median(&mut a),
            median(&mut b)
        );
    }

    // --- quality on LoCoMo dev (dense only, observations and dialog turns) ---
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    for store in ["observations", "dialog"] {
        let (mut hits_full, mut hits_static, mut overlap, mut n, mut cos_sum, mut cos_n) =
            (0usize, 0usize, 0usize, 0usize, 0f64, 0usize);
        for conv in ["26", "30", "41", "42", "43"] {
            let d: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(locomo.join(format!("{conv}.json"))).unwrap(),
            )
            .unwrap();
            let obj = d.as_object().unwrap();
            let mut docs: Vec<(String, Vec<String>)> = Vec::new();
            for (k, v) in obj {
                if store == "observations" && k.ends_with("_observation") {
                    for (_speaker, list) in v.as_object().unwrap() {
                        for item in list.as_array().unwrap() {
                            let text = item[0].as_str().unwrap_or_default().to_owned();
                            let ids = match &item[1] {
                                serde_json::Value::Array(a) => a
                                    .iter()
                                    .filter_map(|x| x.as_str().map(str::to_owned))
                                    .collect(),
                                serde_json::Value::String(s) => vec![s.clone()],
                                _ => vec![],
                            };
                            docs.push((text, ids));
                        }
                    }
                }
                if store == "dialog"
                    && k.starts_with("session_")
                    && !k.contains("date")
                    && !k.contains("observation")
                    && !k.contains("summary")
                    && let Some(turns) = v.as_array()
                {
                    for t in turns {
                        let text = format!(
                            "{}: {}",
                            t["speaker"].as_str().unwrap_or_default(),
                            t["text"].as_str().unwrap_or_default()
                        );
                        docs.push((
                            text,
                            vec![t["dia_id"].as_str().unwrap_or_default().to_owned()],
                        ));
                    }
                }
            }
            let full_docs: Vec<Vec<f32>> = docs
                .iter()
                .map(|(t, _)| full.embed_text(t).unwrap())
                .collect();
            let static_docs: Vec<Vec<f32>> = docs.iter().map(|(t, _)| static_embed(t)).collect();
            for (a, b) in full_docs.iter().zip(&static_docs) {
                cos_sum += f64::from(dot(a, b));
                cos_n += 1;
            }
            for qa in obj["qa"].as_array().unwrap() {
                let cat = qa["category"].as_i64().unwrap_or(5);
                let ev: Vec<String> = qa["evidence"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                if cat == 5 || ev.is_empty() {
                    continue;
                }
                let question = qa["question"].as_str().unwrap_or_default();
                let top = |qv: &[f32], dv: &[Vec<f32>]| -> Vec<usize> {
                    let mut s: Vec<(usize, f32)> = dv
                        .iter()
                        .enumerate()
                        .map(|(i, d)| (i, dot(qv, d)))
                        .collect();
                    s.sort_by(|a, b| b.1.total_cmp(&a.1));
                    s.into_iter().take(5).map(|x| x.0).collect()
                };
                let tf = top(&full.embed_text(question).unwrap(), &full_docs);
                let ts = top(&static_embed(question), &static_docs);
                let hit = |t: &[usize]| t.iter().any(|&i| docs[i].1.iter().any(|d| ev.contains(d)));
                hits_full += usize::from(hit(&tf));
                hits_static += usize::from(hit(&ts));
                overlap += tf.iter().filter(|i| ts.contains(i)).count();
                n += 1;
            }
        }
        println!(
            "{store} dev: {n} questions; dense hit@5 full {:.1} %, static {:.1} %; top-5 overlap {:.2} of 5; mean cosine static~full {:.3}",
            100.0 * hits_full as f64 / n as f64,
            100.0 * hits_static as f64 / n as f64,
            overlap as f64 / n as f64,
            cos_sum / cos_n as f64
        );
    }
}
