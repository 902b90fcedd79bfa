//! A memory file that comes back into `memories/` (by hand or through `elroy undo`) is active again
//! after the sync (`docs/formats.md#memory-index-sync`), visible to name lookups (`print_memory`)
//! and recall.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use elroy_memory::{MemoryQuery, MemorySource, MemoryStore, recall};

fn finds(store: &MemoryStore, words: &str) -> Vec<i64> {
    let query = MemoryQuery {
        current: recall::recall_tokens(words),
        previous: Vec::new(),
        embedding_text: None,
        period: None,
    };
    store
        .search(&query, 5)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect()
}

#[test]
fn a_deleted_memory_file_restored_by_hand_is_active_again() {
    let home = Home::new();
    let store = home.open(None);
    let m = store
        .create(
            "User's dog",
            "The user's dog is called Biscuit.",
            &[MemorySource::context(3)],
            ts("2026-11-30T10:00:00Z"),
        )
        .unwrap();
    let path = home.memory_dir().join("User_s_dog.md");
    let content = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let report = store.sync(ts("2026-11-30T10:01:00Z")).unwrap();
    assert_eq!(report.deactivated, vec![m.id]);
    assert!(store.active_by_name("User's dog").unwrap().is_none());
    assert!(finds(&store, "Biscuit").is_empty());

    // The file comes back (by hand, or `elroy undo` restoring it).
    std::fs::write(&path, &content).unwrap();
    store.sync(ts("2026-11-30T10:02:00Z")).unwrap();
    let back = store.active_by_name("User's dog").unwrap().unwrap();
    assert_eq!(back.id, m.id);
    assert!(back.is_active);
    assert_eq!(back.sources, vec![MemorySource::context(3)]);
    assert_eq!(
        store.rendering(&back).unwrap(),
        "#User's dog\n\nThe user's dog is called Biscuit."
    );
    assert_eq!(finds(&store, "Biscuit"), vec![m.id]);

    // A new process (a full scan at open) sees the same.
    let again = home.open(None);
    assert_eq!(
        again.active_by_name("User's dog").unwrap().unwrap().id,
        m.id
    );
}

#[test]
fn an_archived_memory_moved_back_is_active_and_its_successor_inactive() {
    let home = Home::new();
    let store = home.open(None);
    let tz = jiff::tz::TimeZone::UTC;
    store
        .create(
            "Trip",
            "The user goes to Kyoto on 2026-12-01.",
            &[],
            ts("2026-11-30T10:00:00Z"),
        )
        .unwrap();
    let (old, new) = store
        .update(
            "Trip",
            "Moved to 2026-12-08.",
            ts("2026-11-30T10:05:00Z"),
            &tz,
        )
        .unwrap()
        .unwrap();
    assert_eq!(old.file_name, "archive/Trip.md");
    assert_eq!(new.file_name, "Trip.md");

    // What `elroy undo` of the update does: the old file is back at Trip.md, the archive copy gone.
    let archived = home.memory_dir().join("archive/Trip.md");
    let old_content = std::fs::read_to_string(&archived).unwrap();
    std::fs::remove_file(&archived).unwrap();
    std::fs::write(home.memory_dir().join("Trip.md"), &old_content).unwrap();
    let report = store.sync(ts("2026-11-30T10:06:00Z")).unwrap();
    assert_eq!(report.deactivated, vec![new.id]);

    let found = store.active_by_name("Trip").unwrap().unwrap();
    assert_eq!(found.id, old.id);
    assert_eq!(found.file_name, "Trip.md");
    assert_eq!(
        store.text(&found).unwrap(),
        "The user goes to Kyoto on 2026-12-01."
    );
    assert!(!store.get(new.id).unwrap().unwrap().is_active);
    assert_eq!(finds(&store, "Kyoto"), vec![old.id]);
}

#[test]
fn a_file_moved_into_the_archive_by_hand_stays_inactive_until_moved_back() {
    let home = Home::new();
    let store = home.open(None);
    let m = store
        .create("Bike", "A red bicycle.", &[], ts("2026-11-30T10:00:00Z"))
        .unwrap();
    let live = home.memory_dir().join("Bike.md");
    let archive = home.memory_dir().join("archive");
    std::fs::create_dir_all(&archive).unwrap();
    std::fs::rename(&live, archive.join("Bike.md")).unwrap();
    let report = store.sync(ts("2026-11-30T10:01:00Z")).unwrap();
    assert_eq!(report.deactivated, vec![m.id]);
    assert!(store.active_by_name("Bike").unwrap().is_none());
    // Indexing the archive again changes nothing.
    store.sync(ts("2026-11-30T10:02:00Z")).unwrap();
    assert!(store.active_by_name("Bike").unwrap().is_none());

    std::fs::rename(archive.join("Bike.md"), &live).unwrap();
    store.sync(ts("2026-11-30T10:03:00Z")).unwrap();
    assert_eq!(store.active_by_name("Bike").unwrap().unwrap().id, m.id);
}
