//! `cargo xtask vector-recall --model DIR --locomo DIR`: how much of the exact top 10 the
//! embedding leg's sign-bit codes find (`elroy_memory::vectors`), on real sentence-model
//! vectors.
//!
//! The corpus is every session observation and dialog turn of LoCoMo's ten conversations
//! (`data/locomo10.zip` of github.com/snap-research/locomo, unpacked: the directory holding
//! `26.json` …), embedded with the built-in embedder over `--model` (all-MiniLM-L6-v2); the
//! queries are its questions (categories 1–4). For each question the exact top 10 by cosine is
//! compared with the codes' answer: the `R` best by code, rescored exactly, top 10. Printed per
//! `R`: recall@10 (the share of the exact top 10 found), the share of questions whose top 10 is
//! identical, and `R` as a share of the corpus (at 100,000 memories the leg rescores 512, 0.51 %).
//! `--cache FILE` keeps the vectors between runs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use elroy_memory::vectors::Basis;

const USAGE: &str = "usage: cargo xtask vector-recall --model DIR --locomo DIR [--cache FILE]

  --model DIR    a sentence-transformers directory (all-MiniLM-L6-v2)
  --locomo DIR   LoCoMo's conversations, unpacked (the directory holding 26.json …)
  --cache FILE   store the vectors there, and read them from there when present";

/// Runs `cargo xtask vector-recall`.
pub fn run(args: &[&str]) -> ExitCode {
    let mut model = None;
    let mut locomo = None;
    let mut cache = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let slot = match *arg {
            "--model" => &mut model,
            "--locomo" => &mut locomo,
            "--cache" => &mut cache,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown option {other}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        };
        *slot = it.next().map(PathBuf::from);
    }
    let (Some(model), Some(locomo)) = (model, locomo) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match measure(&model, &locomo, cache.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cargo xtask vector-recall: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The corpus texts and the questions of the conversations in `dir`.
fn texts(dir: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    let mut corpus = Vec::new();
    let mut questions = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let Some(map) = v.as_object() else { continue };
        for (key, value) in map {
            if !key.starts_with("session_") || key.ends_with("date_time") {
                continue;
            }
            if key.ends_with("_observation") {
                for list in value.as_object().into_iter().flat_map(|o| o.values()) {
                    for entry in list.as_array().into_iter().flatten() {
                        if let Some(t) = entry.get(0).and_then(|t| t.as_str()) {
                            corpus.push(t.to_owned());
                        }
                    }
                }
            } else if let Some(turns) = value.as_array() {
                for turn in turns {
                    if let (Some(s), Some(t)) = (
                        turn.get("speaker").and_then(|s| s.as_str()),
                        turn.get("text").and_then(|t| t.as_str()),
                    ) {
                        corpus.push(format!("{s}: {t}"));
                    }
                }
            }
        }
        for qa in map
            .get("qa")
            .and_then(|q| q.as_array())
            .into_iter()
            .flatten()
        {
            let category = qa.get("category").and_then(|c| c.as_i64()).unwrap_or(5);
            if let (true, Some(q)) = (
                (1..=4).contains(&category),
                qa.get("question").and_then(|q| q.as_str()),
            ) {
                questions.push(q.to_owned());
            }
        }
    }
    Ok((corpus, questions))
}

fn embed_all(
    model: &Path,
    texts: &[String],
    cache: Option<&Path>,
) -> Result<Vec<Vec<f32>>, String> {
    if let Some(bytes) = cache.and_then(|c| std::fs::read(c).ok()) {
        let all = elroy_memory::recall::blob_to_vector(&bytes);
        if !all.is_empty() && all.len().is_multiple_of(texts.len()) {
            let dims = all.len() / texts.len();
            return Ok(all.chunks(dims).map(<[f32]>::to_vec).collect());
        }
    }
    let embedder = elroy_embed::BuiltinEmbedder::load(model).map_err(|e| e.to_string())?;
    let started = std::time::Instant::now();
    let mut out = Vec::with_capacity(texts.len());
    for (i, t) in texts.iter().enumerate() {
        out.push(embedder.embed_text(t).map_err(|e| e.to_string())?);
        if (i + 1) % 1000 == 0 {
            eprintln!(
                "   embedded {} of {} ({:.0} s)",
                i + 1,
                texts.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    if let Some(cache) = cache {
        let flat: Vec<f32> = out.iter().flatten().copied().collect();
        std::fs::write(cache, elroy_memory::recall::vector_to_blob(&flat))
            .map_err(|e| format!("{}: {e}", cache.display()))?;
    }
    Ok(out)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn top(mut scored: Vec<(f32, usize)>, k: usize) -> Vec<usize> {
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(k);
    scored.into_iter().map(|(_, i)| i).collect()
}

fn measure(model: &Path, locomo: &Path, cache: Option<&Path>) -> Result<(), String> {
    let (corpus, questions) = texts(locomo)?;
    println!(
        "corpus: {} observations and dialog turns; {} questions",
        corpus.len(),
        questions.len()
    );
    let mut all: Vec<String> = corpus.clone();
    all.extend(questions.iter().cloned());
    let vectors = embed_all(model, &all, cache)?;
    let (docs, queries) = vectors.split_at(corpus.len());
    let dims = docs.first().map_or(0, Vec::len);
    // As the store fits it: on the vectors of the lowest ids (the oldest memories), 4,096 at most.
    let fitted =
        Basis::fit_centred(docs.iter().take(4096).map(Vec::as_slice), 1).ok_or("no vectors")?;
    let uncentred = Basis::fit(docs.iter().map(Vec::as_slice), 1).ok_or("no vectors")?;
    let centred = Basis {
        scale: vec![1.0; dims],
        ..fitted.clone()
    };
    let scaled = Basis {
        mean: vec![0.0; dims],
        ..fitted.clone()
    };
    let depths = [10usize, 20, 43, 64, 128, 256, 512];
    for (label, basis) in [
        ("centred on the mean, weighted by the deviation", &fitted),
        ("centred on the mean", &centred),
        ("sign bits, weighted by the deviation", &scaled),
        ("sign bits (the store's)", &uncentred),
    ] {
        let codes: Vec<Vec<u8>> = docs.iter().map(|v| basis.encode(v)).collect();
        let mut found = vec![0usize; depths.len()];
        let mut same = vec![0usize; depths.len()];
        let mut wanted = 0usize;
        for q in queries {
            let exact = top(
                docs.iter()
                    .enumerate()
                    .map(|(i, v)| (dot(q, v), i))
                    .collect(),
                10,
            );
            wanted += exact.len();
            let table = basis.query(q);
            let mut by_code: Vec<(f32, usize)> = codes
                .iter()
                .enumerate()
                .map(|(i, c)| (table.score(c), i))
                .collect();
            by_code.sort_by(|a, b| b.0.total_cmp(&a.0));
            for (d, &r) in depths.iter().enumerate() {
                let rescored = top(
                    by_code
                        .iter()
                        .take(r)
                        .map(|&(_, i)| (dot(q, &docs[i]), i))
                        .collect(),
                    10,
                );
                found[d] += rescored.iter().filter(|i| exact.contains(i)).count();
                if rescored == exact {
                    same[d] += 1;
                }
            }
        }
        println!(
            "\n{label}: {dims} dimensions, {} bytes a code",
            basis.code_bytes()
        );
        println!(
            "{:>10} {:>12} {:>12} {:>16}",
            "rescored", "of corpus", "recall@10", "same top 10"
        );
        for (d, &r) in depths.iter().enumerate() {
            println!(
                "{:>10} {:>11.2}% {:>11.1}% {:>15.1}%",
                r,
                100.0 * r as f64 / docs.len() as f64,
                100.0 * found[d] as f64 / wanted.max(1) as f64,
                100.0 * same[d] as f64 / queries.len().max(1) as f64
            );
        }
    }
    Ok(())
}
