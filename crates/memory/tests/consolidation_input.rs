//! What consolidation reads from the store (`orchestrator.md` §12.2 step 1) and its trigger.

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
