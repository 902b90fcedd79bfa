//! What consolidation reads from the store (`docs/behaviour.md#consolidation` step 1) and its
//! trigger.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::Arc;

use common::*;
use elroy_core::Embedder;
use elroy_memory::consolidate::{ClusterParams, clusters};
use elroy_memory::{HashEmbedder, recall};

#[test]
fn stored_embeddings_of_active_memories_are_the_vectors() {
    let home = Home::new();
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new());
    let store = home.open(Some(Arc::clone(&embedder)));
    let t = ts("2026-11-30T10:00:00Z");
    let a = store
        .create("Dog", "A beagle named Biscuit.", &[], t)
        .unwrap();
    let b = store.create("Bike", "A red bicycle.", &[], t).unwrap();
    let c = store
        .create("Dog 2", "A beagle named Biscuit.", &[], t)
        .unwrap();
    store.archive(&b, t).unwrap();
    // Embeddings missing from the table are computed first.
    home.db
        .with_conn(|conn| conn.execute("DELETE FROM embeddings", []))
        .unwrap();
    let vectors = store.active_embeddings().unwrap();
    assert_eq!(
        vectors.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        [a.id, c.id]
    );
    let mut expected = embedder
        .embed(&store.rendering(&store.get(a.id).unwrap().unwrap()).unwrap())
        .unwrap();
    recall::normalize(&mut expected);
    assert_eq!(vectors[0].1, expected);
    // Without an embedder there are no stored vectors (the orchestrator uses TF-IDF then).
    assert!(home.open(None).active_embeddings().unwrap().is_empty());
    // Same text, different names: close enough to cluster with a third copy.
    let items: Vec<(i64, Vec<f64>)> = vectors
        .iter()
        .map(|(id, v)| (*id, v.iter().map(|x| f64::from(*x)).collect()))
        .collect();
    assert!(
        clusters(
            &items,
            &ClusterParams {
                min_size: 2,
                ..ClusterParams::default()
            }
        )
        .iter()
        .any(|c| c.len() == 2)
    );
}

#[test]
fn the_trigger_fires_once_at_the_threshold() {
    let home = Home::new();
    let store = home.open(None);
    let clone = store.clone();
    assert!(!store.record_op_tracked(3).unwrap());
    assert!(!store.record_op_tracked(3).unwrap());
    assert!(!clone.take_consolidation_due());
    assert!(store.record_op_tracked(3).unwrap());
    assert_eq!(
        home.db
            .op_tracker(home.user)
            .unwrap()
            .memories_since_consolidation,
        0
    );
    // Clones share the flag; taking it clears it.
    assert!(clone.take_consolidation_due());
    assert!(!store.take_consolidation_due());
    // 0 disables consolidation.
    for _ in 0..5 {
        assert!(!store.record_op_tracked(0).unwrap());
    }
    assert!(!store.take_consolidation_due());
}

/// Kind: a home of years of memories. Consolidation reads only the newest active memories (and
/// their vectors), not all of them: a window of the highest ids, in id order, archived ones
/// left out; another of the kind: a window larger than the store.
#[test]
fn the_newest_active_memories_and_only_their_vectors() {
    let home = Home::new();
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new());
    let store = home.open(Some(Arc::clone(&embedder)));
    let t = ts("2026-11-30T10:00:00Z");
    let made: Vec<_> = (1..=6)
        .map(|i| {
            store
                .create(&format!("M{i}"), &format!("Memory number {i}."), &[], t)
                .unwrap()
        })
        .collect();
    store.archive(&made[4], t).unwrap();
    let ids = |list: &[elroy_memory::Memory]| list.iter().map(|m| m.id).collect::<Vec<_>>();
    let window = store.newest_active(3).unwrap();
    assert_eq!(ids(&window), [made[2].id, made[3].id, made[5].id]);
    assert_eq!(store.newest_active(100).unwrap().len(), 5);
    home.db
        .with_conn(|conn| conn.execute("DELETE FROM embeddings", []))
        .unwrap();
    let vectors = store.embeddings_of(&window).unwrap();
    assert_eq!(
        vectors.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        ids(&window)
    );
    let stored: i64 = home
        .db
        .with_conn(|conn| conn.query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(stored, 3, "only the window's vectors are computed");
}
