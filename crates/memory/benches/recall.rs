//! Recall over 100,000 memories without embeddings (`formats.md` §6.3 budget: p50 under 20 ms on
//! a warm index). Run: `cargo bench -p elroy-memory --bench recall`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, OnceLock};

use elroy_db::Db;
use elroy_memory::{MemoryQuery, MemoryStore, MemoryStoreOptions};

const COUNT: usize = 100_000;

const WORDS: &[&str] = &[
    "bicycle",
    "garden",
    "tomato",
    "invoice",
    "spreadsheet",
    "guitar",
    "piano",
    "marathon",
    "library",
    "recipe",
    "lasagna",
    "mortgage",
    "insurance",
    "printer",
    "laptop",
    "keyboard",
    "umbrella",
    "sunscreen",
    "passport",
    "violin",
    "chess",
    "tennis",
    "yoga",
    "painting",
    "sculpture",
    "novel",
    "podcast",
    "newsletter",
    "vaccine",
    "pharmacy",
    "plumber",
    "roof",
    "window",
    "carpet",
    "sofa",
    "lamp",
    "battery",
    "charger",
    "backpack",
    "tent",
    "kayak",
    "mountain",
    "river",
    "forest",
    "museum",
    "concert",
    "theatre",
    "ballet",
    "opera",
    "jazz",
    "salsa",
    "knitting",
    "pottery",
    "origami",
    "telescope",
    "microscope",
    "chemistry",
    "algebra",
    "history",
    "geography",
    "spanish",
    "french",
    "german",
    "portuguese",
    "swimming",
    "cycling",
    "dentist",
    "coffee",
    "kyoto",
    "birthday",
    "anniversary",
    "budget",
    "meeting",
    "deadline",
];

struct Fixture {
    _dir: tempfile::TempDir,
    store: MemoryStore,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let memories = dir.path().join("memories");
        std::fs::create_dir_all(&memories).unwrap();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut pick = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            WORDS[(x % WORDS.len() as u64) as usize]
        };
        for i in 1..=COUNT {
            let words: Vec<&str> = (0..12).map(|_| pick()).collect();
            let text = format!(
                "The user mentioned {} and {} while planning the {} with {} ({}); {} {} {} {} {} {} {}.",
                words[0], words[1], words[2], words[3], i, words[4], words[5], words[6], words[7],
                words[8], words[9], words[10]
            );
            std::fs::write(
                memories.join(format!("memory_{i}.md")),
                format!("---\nid: {i}\n---\n\n{text}"),
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
    })
}

const QUESTIONS: &[&str] = &[
    "When is my dentist appointment?",
    "What coffee does Priya like?",
    "Remind me about the kyoto trip budget",
    "Did I renew the passport and the insurance?",
    "Which opera and ballet tickets are booked for the anniversary?",
];

fn main() {
    fixture();
    divan::main();
}

#[divan::bench(args = QUESTIONS)]
fn recall_keyword_100k(bencher: divan::Bencher, question: &str) {
    let store = &fixture().store;
    let query = MemoryQuery::from_text(question);
    bencher.bench(|| store.search(divan::black_box(&query), 2).unwrap());
}
