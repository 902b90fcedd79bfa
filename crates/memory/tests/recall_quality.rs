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

/// A store that is only half embedded (memories written by processes that exited before their
/// vectors were computed) ranks a planted memory without a vector where keywords alone rank it.
/// Each question is echoed by six embedded memories of its stop words (a close vector, no
/// keyword): scored as if its cosine were 0, the planted memory fell below all six. Two
/// planted memories, two questions each.
#[test]
fn a_half_embedded_store_ranks_a_planted_memory_as_keywords_alone_do() {
    let home = Home::new();
    let ids = build(&home);
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new());
    let hybrid = home.open(Some(Arc::clone(&embedder)));
    let echoes = [
        "What is my plan, what is my aim, what is it?",
        "How does her day go? How does her week go?",
    ];
    let mut embedded = Vec::new();
    for (i, echo) in echoes.iter().enumerate() {
        for j in 0..6 {
            let m = hybrid
                .create(
                    &format!("Echo {i} {j}"),
                    echo,
                    &[],
                    ts("2026-03-16T13:30:00Z"),
                )
                .unwrap();
            embedded.push(m.id);
        }
    }
    // Half the filler and every echo get their vectors; the planted memories do not (searches
    // embed a few pending memories inline, lowest ids first: the other half of the filler).
    let filler: Vec<i64> = hybrid.pending_embeddings(usize::MAX).unwrap();
    embedded.extend(
        filler
            .iter()
            .copied()
            .filter(|id| id % 2 == 0 && !ids.contains(id)),
    );
    for batch in embedded.chunks(64) {
        hybrid.embed_memories(batch);
    }
    let keyword = home.open(None);
    let pending = hybrid.pending_embeddings(usize::MAX).unwrap();
    assert!(
        pending.len() > 400,
        "half the store is left without vectors"
    );
    for (target, id) in TARGETS.iter().zip(&ids).take(2) {
        for q in target.questions {
            assert!(hybrid.pending_embeddings(usize::MAX).unwrap().contains(id));
            let k = rank_of(&keyword, q, *id);
            assert_eq!(k, Some(0), "keyword recall for {q:?}");
            assert_eq!(
                rank_of(&hybrid, q, *id),
                k,
                "half-embedded recall for {q:?}"
            );
        }
    }
}

// ---- The embedding leg's sign-bit codes (`elroy_memory::vectors`) ----

use elroy_memory::vectors;

/// A deterministic pseudo-random number in [-1, 1).
fn noise(seed: &mut u64) -> f32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    ((*seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// Vectors shaped like a sentence model's: a shared offset, 40 topics, per-memory noise.
fn clustered(n: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut s = seed | 1;
    let offset: Vec<f32> = (0..dims).map(|_| 0.4 * noise(&mut s)).collect();
    let topics: Vec<Vec<f32>> = (0..40)
        .map(|_| (0..dims).map(|_| noise(&mut s)).collect())
        .collect();
    (0..n)
        .map(|i| {
            let t = &topics[(i * 7 + i / 3) % topics.len()];
            let mut v: Vec<f32> = (0..dims)
                .map(|d| offset[d] + t[d] + 0.7 * noise(&mut s))
                .collect();
            elroy_memory::recall::normalize(&mut v);
            v
        })
        .collect()
}

/// Memory rows `1..=vectors.len()` (active, no files) with their vectors under `model`.
fn insert_vectors(home: &Home, model: &str, vectors: &[Vec<f32>]) {
    home.db
        .with_conn(|c| {
            let tx = c.transaction()?;
            for (i, v) in vectors.iter().enumerate() {
                let id = i as i64 + 1;
                tx.execute(
                    "INSERT INTO memories (user_id, id, name, file_name, is_active, text_md5,
                       created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?3, 1, ?4, 'x', 'x')
                     ON CONFLICT (user_id, id) DO NOTHING",
                    rusqlite::params![home.user, id, format!("m{id}"), format!("md5-{id}")],
                )?;
                set_vector(&tx, home.user, model, id, v)?;
            }
            tx.commit()
        })
        .unwrap();
}

fn set_vector(
    c: &rusqlite::Connection,
    user: i64,
    model: &str,
    id: i64,
    v: &[f32],
) -> rusqlite::Result<usize> {
    c.execute(
        "INSERT INTO embeddings (user_id, kind, item_id, model, dims, vector, text_md5, updated_at)
         VALUES (?1, 'memory', ?2, ?3, ?4, ?5, ?6, 'x')
         ON CONFLICT (user_id, kind, item_id, model) DO UPDATE SET vector = excluded.vector",
        rusqlite::params![
            user,
            id,
            model,
            v.len() as i64,
            elroy_memory::recall::vector_to_blob(v),
            format!("md5-{id}")
        ],
    )
}

fn exact(home: &Home, model: &str, q: &[f32], k: usize) -> Vec<(i64, f32)> {
    home.db
        .with_conn(|c| vectors::exact_ranking(c, home.user, model, q, -1.0, k))
        .unwrap()
}

fn coded(home: &Home, model: &str, q: &[f32], k: usize, rescore: usize) -> Vec<(i64, f32)> {
    home.db
        .with_conn(|c| vectors::ranking_with(c, home.user, model, q, -1.0, k, rescore))
        .unwrap()
}

/// The ids that have a code of `model` in a current code row.
fn coded_ids(home: &Home, model: &str, dims: usize) -> std::collections::BTreeSet<i64> {
    home.db
        .with_conn(|c| {
            let mut st = c.prepare(
                "SELECT vc.chunk, vc.codes FROM vector_codes vc
                 LEFT JOIN vector_chunks ch ON ch.user_id = vc.user_id AND ch.chunk = vc.chunk
                 WHERE vc.user_id = ?1 AND vc.model = ?2 AND vc.seq = coalesce(ch.seq, 0)",
            )?;
            let rows = st.query_map(rusqlite::params![home.user, model], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
            })?;
            let mut ids = std::collections::BTreeSet::new();
            for row in rows {
                let (chunk, codes) = row?;
                for rec in codes.chunks_exact(2 + dims.div_ceil(8)) {
                    ids.insert((chunk << 10) + i64::from(u16::from_le_bytes([rec[0], rec[1]])));
                }
            }
            Ok(ids)
        })
        .unwrap()
}

fn ids(ranked: &[(i64, f32)]) -> Vec<i64> {
    ranked.iter().map(|(id, _)| *id).collect()
}

#[test]
fn coded_leg_finds_the_exact_top_k() {
    let home = Home::new();
    let dims = 96;
    let all = clustered(1500, dims, 7);
    insert_vectors(&home, "m96", &all);
    // Questions near stored vectors (each a stored vector plus noise), as a question near its
    // memory is; 128 of 1,500 rescored (8.5 %).
    let mut s = 99u64;
    let mut same = 0;
    let questions = 30;
    for i in 0..questions {
        let mut q: Vec<f32> = all[i * 37 % all.len()]
            .iter()
            .map(|x| x + 0.05 * noise(&mut s))
            .collect();
        elroy_memory::recall::normalize(&mut q);
        let want = exact(&home, "m96", &q, 10);
        let got = coded(&home, "m96", &q, 10, 128);
        assert_eq!(got.len(), 10);
        // Every similarity reported is exact.
        for (id, sim) in &got {
            let v = &all[*id as usize - 1];
            assert!((elroy_memory::recall::dot(&q, v) - sim).abs() < 1e-6);
        }
        if ids(&got) == ids(&want) {
            same += 1;
        }
    }
    assert!(same >= questions - 1, "{same} of {questions} top-10s equal");
    // The codes were used: all 1,500 are coded, in two chunks.
    assert_eq!(coded_ids(&home, "m96", dims).len(), 1500);
}

#[test]
fn codes_follow_updates_deletes_deactivation_and_model_switch() {
    let home = Home::new();
    let dims = 64;
    let all = clustered(1100, dims, 3);
    insert_vectors(&home, "a", &all);
    let q = all[5].clone();
    // Rescoring everything makes the coded leg equal to the exact one exactly when every
    // current vector has a code.
    let check = |model: &str| {
        assert_eq!(
            coded(&home, model, &q, 20, 5000),
            exact(&home, model, &q, 20)
        );
    };
    check("a");
    assert_eq!(coded_ids(&home, "a", dims).len(), 1100);
    // Every active memory has its vector: a question need not look for missing ones; a new
    // memory without one changes that until its vector is stored.
    let needs = |model: &str| {
        home.db
            .with_conn(|c| Ok(vectors::may_need_vectors(c, home.user, model)))
            .unwrap()
    };
    assert!(!needs("a"));
    home.db
        .with_conn(|c| {
            c.execute(
                "INSERT INTO memories (user_id, id, name, file_name, is_active, text_md5,
                   created_at, updated_at) VALUES (?1, 2100, 'n', 'n', 1, 'md5-2100', 'x', 'x')",
                [home.user],
            )
        })
        .unwrap();
    assert!(needs("a"));
    home.db
        .with_conn(|c| set_vector(c, home.user, "a", 2100, &all[0]))
        .unwrap();
    assert!(!needs("a"));
    // An update of a vector (a re-embedding), in the second chunk.
    home.db
        .with_conn(|c| set_vector(c, home.user, "a", 1050, &q))
        .unwrap();
    check("a");
    assert_eq!(ids(&coded(&home, "a", &q, 2, 5000)), [6, 1050]);
    // A deleted vector and a deactivated memory.
    home.db
        .with_conn(|c| {
            c.execute("DELETE FROM embeddings WHERE item_id = 6", [])?;
            c.execute("UPDATE memories SET is_active = 0 WHERE id = 1050", [])
        })
        .unwrap();
    check("a");
    assert!(!coded_ids(&home, "a", dims).contains(&6));
    assert!(!coded_ids(&home, "a", dims).contains(&1050));
    // A text changed without a new vector yet (a hand edit re-indexed): its vector is stale.
    home.db
        .with_conn(|c| c.execute("UPDATE memories SET text_md5 = 'edited' WHERE id = 7", []))
        .unwrap();
    check("a");
    assert!(!coded_ids(&home, "a", dims).contains(&7));
    // Another model (a switch): its own basis and codes; the first model's stay.
    let other = clustered(300, 32, 11);
    insert_vectors(&home, "b", &other);
    let q2 = other[3].clone();
    assert_eq!(coded(&home, "b", &q2, 10, 5000), exact(&home, "b", &q2, 10));
    // Memory 7's text changed after its vectors were computed.
    assert_eq!(coded_ids(&home, "b", 32).len(), 299);
    check("a");
    // The store's own path: created memories are found through the codes.
    let store = home.open(Some(Arc::new(HashEmbedder::with_dims(dims))));
    std::fs::create_dir_all(home.memory_dir()).unwrap();
    let m = store
        .create(
            "Kayak trip",
            "The user paddles a kayak on Lake Tahoe each June.",
            &[],
            ts("2026-03-16T13:30:00Z"),
        )
        .unwrap();
    let mut query = MemoryQuery::from_text("kayak Lake Tahoe June");
    query.current.clear();
    let found = store.embedding_ranking(&query).unwrap().unwrap();
    assert_eq!(found.first(), Some(&m.id));
    assert!(coded_ids(&home, "hash-64", dims).contains(&m.id));
}

#[test]
fn stale_or_corrupt_codes_fall_back_to_exact_vectors_and_are_rebuilt() {
    let home = Home::new();
    let dims = 64;
    let all = clustered(1200, dims, 5);
    insert_vectors(&home, "a", &all);
    let q = all[40].clone();
    let want = exact(&home, "a", &q, 10);
    assert_eq!(coded(&home, "a", &q, 10, 5000), want);
    // A code row cut short: that chunk is scored exactly, then rebuilt.
    home.db
        .with_conn(|c| {
            c.execute(
                "UPDATE vector_codes SET codes = substr(codes, 1, length(codes) - 1) WHERE chunk = 0",
                [],
            )
        })
        .unwrap();
    assert_eq!(coded(&home, "a", &q, 10, 5000), want);
    assert_eq!(coded(&home, "a", &q, 10, 5000), want);
    assert_eq!(coded_ids(&home, "a", dims).len(), 1200);
    // A broken basis: the exact scan answers, and the codes are built again.
    home.db
        .with_conn(|c| c.execute("UPDATE vector_bases SET mean = x'00'", []))
        .unwrap();
    assert_eq!(coded(&home, "a", &q, 10, 5000), want);
    assert_eq!(coded_ids(&home, "a", dims).len(), 1200);
    // Stale codes that cannot be rebuilt (a read-only connection): the stale chunk's exact
    // vectors answer, so a new vector is found at once.
    home.db
        .with_conn(|c| {
            set_vector(c, home.user, "a", 1100, &q)?;
            c.execute_batch("PRAGMA query_only = ON")?;
            Ok(())
        })
        .unwrap();
    let got = coded(&home, "a", &q, 2, 5000);
    assert_eq!(ids(&got), [41, 1100]);
    assert!(!coded_ids(&home, "a", dims).contains(&1100));
    home.db
        .with_conn(|c| c.execute_batch("PRAGMA query_only = OFF"))
        .unwrap();
    assert_eq!(ids(&coded(&home, "a", &q, 2, 5000)), [41, 1100]);
    assert!(coded_ids(&home, "a", dims).contains(&1100));
}
