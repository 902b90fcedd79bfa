//! Recall over 100,000 memories without embeddings (`docs/formats.md#memory-index-sync` budget: p50
//! under 20 ms on a warm index). Run: `cargo bench -p elroy-memory --bench recall`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, OnceLock};

use elroy_db::Db;
use elroy_memory::{MemoryQuery, MemoryStore, MemoryStoreOptions};
use elroy_testkit::corpus::{Rng, memory_text};

const COUNT: usize = 100_000;

struct Fixture {
    _dir: tempfile::TempDir,
    store: MemoryStore,
}

fn build(dense: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let memories = dir.path().join("memories");
    std::fs::create_dir_all(&memories).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 1..=COUNT {
        std::fs::write(
            memories.join(format!("memory_{i}.md")),
            format!("---\nid: {i}\n---\n\n{}", memory_text(&mut rng, i, dense)),
        )
        .unwrap();
    }
    let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
    let now = "2026-03-17T04:00:00Z".parse().unwrap();
    let user = db.ensure_user("DEFAULT", now).unwrap();
    let (store, report) = MemoryStore::open(
        db,
        MemoryStoreOptions {
            elroy_home: dir.path().to_path_buf(),
            memory_dir: memories,
            elroy_db_path: None,
            user_id: user,
            embedder: None,
            cosine_threshold: 0.3,
        },
        now,
    )
    .unwrap();
    assert_eq!(report.indexed, COUNT);
    Fixture { _dir: dir, store }
}

fn natural() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| build(false))
}

fn dense() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| build(true))
}

const QUESTIONS: &[&str] = &[
    "When is my dentist appointment?",
    "What coffee does Priya like?",
    "Remind me about the kyoto trip budget",
    "Did I renew the passport and the insurance?",
    "Which opera and ballet tickets are booked for the anniversary?",
];

fn main() {
    if std::env::var_os("ELROY_RECALL_PERCENTILES").is_some() {
        percentiles();
        return;
    }
    natural();
    dense();
    divan::main();
}

/// `ELROY_RECALL_PERCENTILES=1 cargo bench -p elroy-memory --bench recall` (used by
/// `cargo xtask bench`): p50 and p95 of single recalls over the natural 100,000-memory corpus,
/// each question timed 200 times after one warm-up round, instead of divan's table.
fn percentiles() {
    let started = std::time::Instant::now();
    let store = &natural().store;
    println!(
        "recall fixture: {COUNT} memories indexed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let queries: Vec<MemoryQuery> = QUESTIONS
        .iter()
        .map(|q| MemoryQuery::from_text(q))
        .collect();
    for query in &queries {
        store.search(query, 2).unwrap();
    }
    let mut micros: Vec<f64> = Vec::new();
    for _ in 0..200 {
        for query in &queries {
            let t = std::time::Instant::now();
            divan::black_box(store.search(divan::black_box(query), 2).unwrap());
            micros.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    micros.sort_by(f64::total_cmp);
    let at = |p: f64| micros[((micros.len() - 1) as f64 * p).round() as usize];
    println!(
        "recall over {COUNT} memories ({} recalls of {} questions): p50 {:.0} us, p95 {:.0} us, max {:.0} us",
        micros.len(),
        QUESTIONS.len(),
        at(0.50),
        at(0.95),
        at(1.0)
    );
}

/// The headline figure: 100,000 memories of natural-like text.
#[divan::bench(args = QUESTIONS)]
fn recall_keyword_100k(bencher: divan::Bencher, question: &str) {
    let store = &natural().store;
    let query = MemoryQuery::from_text(question);
    bencher.bench(|| store.search(divan::black_box(&query), 2).unwrap());
}

/// The worst case: every query word occurs in ~15% of the 100,000 memories.
#[divan::bench(args = QUESTIONS)]
fn recall_keyword_100k_dense(bencher: divan::Bencher, question: &str) {
    let store = &dense().store;
    let query = MemoryQuery::from_text(question);
    bencher.bench(|| store.search(divan::black_box(&query), 2).unwrap());
}
