//! Recall finds the right memory among 1,000 unrelated ones for questions phrased differently
//! from the memory, without embeddings (FTS5 BM25 + coverage) and with the deterministic
//! embedder (hybrid, reciprocal rank fusion) — which must rank at least as well.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::Arc;

use common::*;
use elroy_core::Embedder;
use elroy_memory::{HashEmbedder, MemoryQuery, MemoryStore};

/// The everyday topic words of the shared corpus without its last eight (`dentist`, `coffee`,
/// `kyoto`, … are what the questions below look for, so the filler must not contain them).
const WORDS: &[&str] = elroy_testkit::corpus::TOPIC_WORDS
    .split_at(elroy_testkit::corpus::TOPIC_WORDS.len() - 8)
    .0;

/// Deterministic filler: 1,000 memories that share none of the target words.
fn filler(i: usize) -> (String, String) {
    let mut x = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut pick = || {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51afd7ed558ccd);
        x ^= x >> 29;
        WORDS[(x % WORDS.len() as u64) as usize]
    };
    let (a, b, c, d) = (pick(), pick(), pick(), pick());
    (
        format!("Note {i}: {a}, {b}"),
        format!("{a} practice log {i}: prefers {c} over {d} on weekends, {b} booked."),
    )
}

struct Target {
    name: &'static str,
    text: &'static str,
    questions: &'static [&'static str],
}

const TARGETS: &[Target] = &[
    Target {
        name: "User's dog",
        text: "The user's dog is named Biscuit, a beagle adopted in 2024.",
        questions: &["What is my dog called?", "Which breed are our dogs again?"],
    },
    Target {
        name: "Priya's coffee preference",
        text: "Priya prefers a flat white with oat milk and avoids café lattes.",
        questions: &[
            "How does Priya take her coffee?",
            "Order a drink for Priya: which milk does she want?",
        ],
    },
    Target {
        name: "Dentist appointment",
        text: "The user has a dentist appointment with Dr. Rao on 2026-04-02 at 10:00.",
        questions: &[
            "When am I seeing the dentist?",
            "Who is my dentist and when is the appointment?",
        ],
    },
    Target {
        name: "Trip to Kyoto",
        text: "Priya plans to travel to Kyoto in May 2026 with her sister.",
        questions: &[
            "Who is travelling to Kyoto with Priya?",
            "Where is the Kyoto travel plan headed?",
        ],
    },
    Target {
        name: "Allergy",
        text: "The user is allergic to peanuts and carries an epinephrine pen.",
        questions: &[
            "Do I have any food allergies?",
            "Is there anything allergic I should avoid, like peanut sauce?",
        ],
    },
];

fn build(home: &Home) -> Vec<i64> {
    let store = home.open(None);
    std::fs::create_dir_all(home.memory_dir()).unwrap();
    for i in 0..1000 {
        let (name, text) = filler(i);
        store
            .create(&name, &text, &[], ts("2026-03-16T13:30:00Z"))
            .unwrap();
    }
    TARGETS
        .iter()
        .map(|t| {
            store
                .create(t.name, t.text, &[], ts("2026-03-16T13:30:00Z"))
                .unwrap()
                .id
        })
        .collect()
}

fn rank_of(store: &MemoryStore, question: &str, id: i64) -> Option<usize> {
    store
        .search(&MemoryQuery::from_text(question), 5)
        .unwrap()
        .iter()
        .position(|m| m.id == id)
}

#[test]
fn keyword_recall_and_hybrid_find_the_right_memory() {
    let home = Home::new();
    let ids = build(&home);
    let keyword = home.open(None);
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new());
    let hybrid = home.open(Some(embedder));
    // Embed everything up front (embed_pending computes 32 per call).
    while hybrid.embed_pending(None) > 0 {}
    for (target, id) in TARGETS.iter().zip(&ids) {
        for q in target.questions {
            let k = rank_of(&keyword, q, *id);
            assert_eq!(k, Some(0), "keyword recall for {q:?}");
            let h = rank_of(&hybrid, q, *id);
            assert!(
                h.is_some() && h <= k,
                "hybrid recall for {q:?}: {h:?} vs {k:?}"
            );
        }
    }
    // Unrelated questions find none of the targets first.
    let hits = keyword
        .search(&MemoryQuery::from_text("How was the pottery class?"), 5)
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|m| !ids.contains(&m.id)));
    // Stop-word-only questions find nothing.
    assert!(
        keyword
            .search(&MemoryQuery::from_text("what is it?"), 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn embedding_leg_alone_respects_threshold() {
    let home = Home::new();
    let ids = build(&home);
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new());
    let hybrid = home.open(Some(embedder));
    while hybrid.embed_pending(None) > 0 {}
    let ranking = hybrid
        .embedding_ranking(&MemoryQuery::from_text("Biscuit the beagle dog"))
        .unwrap()
        .unwrap();
    assert_eq!(ranking.first(), Some(&ids[0]));
    assert!(ranking.len() <= elroy_memory::EMBEDDING_CANDIDATES);
    // Nothing shares a token with this query: nothing passes the threshold.
    let none = hybrid
        .embedding_ranking(&MemoryQuery::from_text("zzzqqq xxyyzz wwvvuu kkjjhh"))
        .unwrap()
        .unwrap();
    assert!(none.is_empty());
}
