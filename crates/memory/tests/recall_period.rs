//! The time a question names (`docs/behaviour.md#the-time-a-question-names`): memories written in
//! that period rank first, keywords only and with embeddings.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::Arc;

use common::*;
use elroy_core::Embedder;
use elroy_memory::{HashEmbedder, MemoryQuery, MemoryStore};

/// Three memories about the same thing written in three months, and filler of other days. The
/// one of May says the keywords most often, so without the period it ranks first for every
/// question; the period a question names must bring its own month's memory first.
fn build(home: &Home) -> [i64; 3] {
    let store = home.open(None);
    std::fs::create_dir_all(home.memory_dir()).unwrap();
    for i in 0..40 {
        store
            .create(
                &format!("Note {i}"),
                &format!("Bought groceries and walked the dog, day {i}."),
                &[],
                ts(&format!("2023-0{}-{:02}T10:00:00Z", 1 + i % 9, 1 + i % 27)),
            )
            .unwrap();
    }
    let concert =
        |name: &str, text: &str, at: &str| store.create(name, text, &[], ts(at)).unwrap().id;
    [
        concert(
            "Evening out 1",
            "Band concert: the concert of the band, the best concert.",
            "2023-05-10T20:00:00Z",
        ),
        concert(
            "Evening out 2",
            "Saw the band at a concert by the lake with friends.",
            "2023-08-20T21:00:00Z",
        ),
        concert(
            "Evening out 3",
            "A concert of the band in the park, cold evening.",
            "2024-10-02T19:00:00Z",
        ),
    ]
}

fn first(store: &MemoryStore, question: &str) -> i64 {
    store.search(&MemoryQuery::from_text(question), 5).unwrap()[0].id
}

#[test]
fn the_memory_of_the_named_period_ranks_first() {
    let home = Home::new();
    let [may, august, october] = build(&home);
    let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new());
    let keyword = home.open(None);
    let hybrid = home.open(Some(embedder));
    while hybrid.embed_pending(None) > 0 {}
    for store in [&keyword, &hybrid] {
        // No period: the memory that says `concert` most often.
        assert_eq!(first(store, "Which band did I see at the concert?"), may);
        assert_eq!(
            first(store, "Which band did I see at the concert in August 2023?"),
            august
        );
        assert_eq!(
            first(
                store,
                "Which band did I see at the concert on 20 August, 2023?"
            ),
            august
        );
        assert_eq!(
            first(
                store,
                "Which band did I see at the concert on October 2, 2024?"
            ),
            october
        );
        assert_eq!(first(store, "What concert did I go to in 2024?"), october);
        // A month of any year.
        assert_eq!(
            first(store, "Which band played the concert in October?"),
            october
        );
        // A period that holds no memory of the kind leaves the ranking as it is.
        assert_eq!(
            first(store, "Which band did I see at the concert in March 2022?"),
            may
        );
        // A time relative to the day the question is asked.
        let asked = |question: &str, today: &str| {
            let query = MemoryQuery::from_text_on(question, today.parse().unwrap());
            store.search(&query, 5).unwrap()[0].id
        };
        assert_eq!(
            asked(
                "Which band did I see at the concert last week?",
                "2023-08-24"
            ),
            august
        );
        assert_eq!(
            asked(
                "Which band did I see at the concert a year ago?",
                "2025-03-01"
            ),
            october
        );
        assert_eq!(
            asked(
                "Which band did I see at the concert last August?",
                "2024-01-15"
            ),
            august
        );
        // The same words without the day they were asked name no period.
        assert_eq!(
            first(store, "Which band did I see at the concert last week?"),
            may
        );
    }
}
