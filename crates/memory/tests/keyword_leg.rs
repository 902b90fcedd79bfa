//! The keyword leg's coverage rule (`docs/behaviour.md#keyword-leg`,
//! `docs/behaviour.md#whether-to-recall`).

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
        period: None,
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
    // `docs/behaviour.md#whether-to-recall`: T_cur = [dog, called]; one token needed; `dog`
    // matches.
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

/// The fuzzy fallback (`docs/behaviour.md#keyword-leg`): when no row qualifies, a token that
/// matches nothing is widened to the words it begins (a shortened name) or to indexed words one
/// or two edits away (a misspelt one). Examples: `Bart` for `Bartholomew`; another of the kind,
/// `Tenessee` for `Tennessee`. Words with no near neighbour still find nothing.
#[test]
fn fuzzy_fallback_for_shortened_and_misspelt_words() {
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    let boat = store
        .create(
            "Bartholomew's boat",
            "Bartholomew keeps a sailboat at the marina.",
            &[],
            now,
        )
        .unwrap();
    let trip = store
        .create(
            "Road trip",
            "The user drove through Tennessee in April.",
            &[],
            now,
        )
        .unwrap();
    store
        .create("Garden", "Tomatoes grow by the shed.", &[], now)
        .unwrap();
    // Four tokens need two matches: `keep` matches, `bart` only by its prefix.
    assert_eq!(
        ids(&store, "Where does Bart keep his yacht these days?", ""),
        [boat.id]
    );
    // `april` matches, `tenessee` is two edits from the stem `tennesse`.
    assert_eq!(
        ids(
            &store,
            "Which roads through Tenessee did the user drive in April?",
            ""
        ),
        [trip.id]
    );
    // Nothing near `kayak`, `violin` or `piano`: the rule still needs two matches.
    assert!(ids(&store, "tomatoes kayak violin piano", "").is_empty());
    // A token that matches as typed is not widened: `marina` alone qualifies nothing here.
    assert!(ids(&store, "marina zzzz qqqq wwww", "").is_empty());
}

/// The fallback compares a misspelt word's own stem with the indexed stems too: `Seatle` (the
/// break-it pass's example, stem `seatl`) is two edits from `seattl` of `Seattle` but one from its
/// stem; another of the kind, `Vancuver` (stem `vancuv`) for `Vancouver` (`vancouv`), beside a
/// word that matches nothing either.
#[test]
fn a_misspelt_word_is_compared_by_its_stem() {
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    store
        .create("Tim's dog", "Tim walks his dog every morning.", &[], now)
        .unwrap();
    let seattle = store
        .create(
            "Conference",
            "In May Tim flew to Seattle for a conference.",
            &[],
            now,
        )
        .unwrap();
    let vancouver = store
        .create(
            "Ferry",
            "Sam took the ferry to Vancouver in June.",
            &[],
            now,
        )
        .unwrap();
    assert_eq!(ids(&store, "Seatle", ""), [seattle.id]);
    assert_eq!(ids(&store, "Vancuver skyline", ""), [vancouver.id]);
    // A word with no near stem still finds nothing.
    assert!(ids(&store, "Kyoto", "").is_empty());
}

/// Kind: keyword recall in scripts written without spaces, on the path automatic recall takes in
/// a turn (tokens of the current and previous message, `MemoryStore::search`) and on the agenda
/// kind (`replace_fts_items` + `keyword_leg`, as turn recall and `examine_memories` index due
/// items). Japanese (the example), with a Japanese previous message, and a Chinese due
/// item.
#[test]
fn bigram_recall_in_turns_and_for_agenda_items() {
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    let trip = store
        .create(
            "週末の予定",
            "土曜日に東京タワーへ行く予定。待ち合わせは浜松町駅。",
            &[],
            now,
        )
        .unwrap();
    store
        .create("Dog", "The user's dog is named Biscuit.", &[], now)
        .unwrap();
    assert_eq!(ids(&store, "東京タワーはいつ行く？", ""), [trip.id]);
    // With the previous message's tokens (T_prev), as in a turn; a question sharing no word of
    // it finds nothing.
    assert_eq!(ids(&store, "待ち合わせはどこ？", "土曜日の予定"), [trip.id]);
    assert!(ids(&store, "大阪城はどこ？", "").is_empty());
    let found = store
        .search(
            &MemoryQuery {
                current: recall_tokens("東京タワーはいつ行く？"),
                previous: Vec::new(),
                embedding_text: None,
                period: None,
            },
            2,
        )
        .unwrap();
    assert_eq!(found.iter().map(|m| m.id).collect::<Vec<_>>(), [trip.id]);

    let user = store.user_id();
    let ranked = store
        .db()
        .with_conn(|c| {
            elroy_memory::recall::replace_fts_items(
                c,
                user,
                "agenda",
                &[
                    elroy_memory::recall::FtsItem {
                        id: 1,
                        name: "交房租".into(),
                        body: "每个月五号之前交房租给房东。".into(),
                    },
                    elroy_memory::recall::FtsItem {
                        id: 2,
                        name: "Dentist".into(),
                        body: "Dentist appointment on Friday.".into(),
                    },
                ],
            )?;
            elroy_memory::recall::keyword_leg(
                c,
                user,
                "agenda",
                &recall_tokens("房租什么时候交？"),
                &[],
            )
        })
        .unwrap();
    assert_eq!(ranked, [1]);
}

/// Kind: every recall passes the whole agenda to `replace_fts_items`. The same items again
/// write nothing (another connection sees no commit); changed items are indexed.
#[test]
fn replacing_the_agenda_index_with_the_same_items_writes_nothing() {
    let home = Home::new();
    let store = home.open(None);
    let user = store.user_id();
    let path = store.db().path().unwrap().to_path_buf();
    let watcher = rusqlite::Connection::open(&path).unwrap();
    let version = || -> i64 {
        watcher
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .unwrap()
    };
    let item = |id: i64, body: &str| elroy_memory::recall::FtsItem {
        id,
        name: format!("Item {id}"),
        body: body.to_owned(),
    };
    let replace = |items: &[elroy_memory::recall::FtsItem]| {
        store
            .db()
            .with_conn(|c| elroy_memory::recall::replace_fts_items(c, user, "agenda", items))
            .unwrap();
    };
    let find = |word: &str| -> Vec<i64> {
        store
            .db()
            .with_conn(|c| {
                elroy_memory::recall::keyword_leg(c, user, "agenda", &recall_tokens(word), &[])
            })
            .unwrap()
    };
    replace(&[item(1, "Dentist on Friday"), item(2, "Water the plants")]);
    let before = version();
    replace(&[item(1, "Dentist on Friday"), item(2, "Water the plants")]);
    assert_eq!(version(), before, "the same items were written again");
    assert_eq!(find("dentist"), [1]);
    replace(&[item(1, "Dentist on Monday"), item(3, "Call the plumber")]);
    assert_ne!(version(), before);
    assert_eq!(find("plumber"), [3]);
    assert!(find("plants").is_empty());
}
