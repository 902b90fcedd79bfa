//! The keyword leg's coverage rule (`orchestrator.md` §4.3, §16.6).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use elroy_memory::MemoryQuery;
use elroy_memory::recall::{previous_tokens, recall_tokens};

fn ids(store: &elroy_memory::MemoryStore, current: &str, previous: &str) -> Vec<i64> {
    let cur = recall_tokens(current);
    let query = MemoryQuery {
        previous: previous_tokens(previous, &cur),
        current: cur,
        embedding_text: None,
    };
    store.keyword_ranking(&query).unwrap()
}

#[test]
fn coverage_rule() {
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    let dog = store
        .create("User's dog", "The user's dog is named Biscuit.", &[], now)
        .unwrap();
    let park = store
        .create("Park", "The park closes at dusk.", &[], now)
        .unwrap();
    let both = store
        .create(
            "Garden",
            "Tomatoes and basil grow in the garden by the shed.",
            &[],
            now,
        )
        .unwrap();
    // §16.6: T_cur = [dog, called]; one token needed; `dog` matches.
    assert_eq!(ids(&store, "What is my dog called?", ""), [dog.id]);
    // A row matching only T_prev does not qualify.
    assert_eq!(ids(&store, "What is my dog called?", "the park"), [dog.id]);
    // Four current tokens: two must match.
    assert_eq!(ids(&store, "tomatoes shed kayak violin", ""), [both.id]);
    assert!(ids(&store, "tomatoes kayak violin piano", "").is_empty());
    // Stemming: `named` matches `name`, `parks` matches `park`.
    assert_eq!(ids(&store, "parks", ""), [park.id]);
    assert_eq!(ids(&store, "who is named Biscuit", ""), [dog.id]);
    // Inactive memories are never recalled.
    store.archive(&park, now).unwrap();
    assert!(ids(&store, "parks", "").is_empty());
}
