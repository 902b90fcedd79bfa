//! Creating, updating (D8), archiving and re-indexing memories.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use elroy_memory::MemorySource;

fn ist() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::posix("IST-5:30").unwrap()
}

#[test]
fn worked_example_of_formats_6_5() {
    let home = Home::new();
    let store = home.open(None);
    let name = "The user's plan to attend a concert on 2026-12-11";
    let m = store
        .create(
            name,
            "The user plans to attend a concert on 2026-12-11.",
            &[MemorySource::context(4)],
            ts("2026-11-30T03:00:00Z"),
        )
        .unwrap();
    assert_eq!(m.id, 1);
    let file = home
        .memory_dir()
        .join("The_user_s_plan_to_attend_a_concert_on_2026-12-11.md");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "---\nid: 1\n---\n\nThe user plans to attend a concert on 2026-12-11."
    );
    let (old, new) = store
        .update(
            name,
            "The concert moved to 2026-12-18.",
            ts("2026-11-30T03:53:25Z"),
            &ist(),
        )
        .unwrap()
        .unwrap();
    assert_eq!((old.id, new.id), (1, 2));
    assert_eq!(
        std::fs::read_to_string(
            home.memory_dir()
                .join("archive/The_user_s_plan_to_attend_a_concert_on_2026-12-11.md")
        )
        .unwrap(),
        "---\nid: 1\n---\n\nThe user plans to attend a concert on 2026-12-11."
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "---\nid: 2\n---\n\n\nThe user plans to attend a concert on 2026-12-11.\n\nUpdate (2026-11-30 09:23:25):\nThe concert moved to 2026-12-18."
    );
    let old = store.get(1).unwrap().unwrap();
    assert!(!old.is_active);
    assert_eq!(
        old.file_name,
        "archive/The_user_s_plan_to_attend_a_concert_on_2026-12-11.md"
    );
    let active = store.active_by_name(name).unwrap().unwrap();
    assert_eq!(active.id, 2);
    assert_eq!(active.sources, vec![MemorySource::memory(1)]);
    assert_eq!(store.all_by_name(name).unwrap().len(), 2);
    // Keyword recall finds only the active version.
    let hits = store
        .search(
            &elroy_memory::MemoryQuery::from_text("When is the concert?"),
            5,
        )
        .unwrap();
    assert_eq!(hits.iter().map(|m| m.id).collect::<Vec<_>>(), [2]);
    // The row survives a re-open (index sync) unchanged.
    let store = home.open(None);
    assert!(!store.get(1).unwrap().unwrap().is_active);
    assert!(store.get(2).unwrap().unwrap().is_active);
    assert!(
        store
            .update("nope", "x", ts("2026-11-30T04:00:00Z"), &ist())
            .unwrap()
            .is_none()
    );
}

#[test]
fn hand_edits_are_reindexed_at_next_open() {
    let home = Home::new();
    let store = home.open(None);
    let m = store
        .create(
            "Dog",
            "The user's dog is Biscuit.",
            &[],
            ts("2026-03-16T13:30:00Z"),
        )
        .unwrap();
    // A person edits the file, adds one without an id, and deletes nothing.
    let path = home.memory_dir().join("Dog.md");
    std::fs::write(
        &path,
        "---\nid: 1\n---\n\nThe user's dog is called Pretzel now.",
    )
    .unwrap();
    std::fs::write(
        home.memory_dir().join("Garden_notes.md"),
        "Tomatoes need staking.",
    )
    .unwrap();
    std::fs::write(
        home.memory_dir().join("Broken.md"),
        "---\nid: [unclosed\n---\n\nbody",
    )
    .unwrap();
    let (store, report) = elroy_memory::MemoryStore::open(
        home.db.clone(),
        home.options(None),
        ts("2026-03-16T14:00:00Z"),
    )
    .unwrap();
    assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
    assert!(
        report.warnings[0]
            .message
            .starts_with("invalid front matter in memories/Broken.md: ")
    );
    assert_eq!(
        store.rendering(&store.get(m.id).unwrap().unwrap()).unwrap(),
        "#Dog\n\nThe user's dog is called Pretzel now."
    );
    let hits = store
        .search(&elroy_memory::MemoryQuery::from_text("pretzel"), 5)
        .unwrap();
    assert_eq!(hits[0].id, 1);
    assert!(
        store
            .search(&elroy_memory::MemoryQuery::from_text("biscuit"), 5)
            .unwrap()
            .is_empty()
    );
    // The file without an id got id 2 written into its front matter; its name is the stem.
    let garden = store.active_by_name("Garden notes").unwrap().unwrap();
    assert_eq!(garden.id, 2);
    assert_eq!(
        std::fs::read_to_string(home.memory_dir().join("Garden_notes.md")).unwrap(),
        "---\nid: 2\n---\n\nTomatoes need staking."
    );
    // The broken file is never rewritten.
    assert_eq!(
        std::fs::read_to_string(home.memory_dir().join("Broken.md")).unwrap(),
        "---\nid: [unclosed\n---\n\nbody"
    );
    // A directory changed just now is rescanned (its stamp may be "racy")…
    assert!(
        store
            .sync_if_changed(ts("2026-03-16T14:20:00Z"))
            .unwrap()
            .is_some()
    );
    // …but once its modification time is old, an unchanged directory is not scanned again.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::open(home.memory_dir())
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    assert!(
        store
            .sync_if_changed(ts("2026-03-16T14:25:00Z"))
            .unwrap()
            .is_some()
    );
    assert!(
        store
            .sync_if_changed(ts("2026-03-16T14:30:00Z"))
            .unwrap()
            .is_none()
    );
    // Deleting a file deactivates its memory (the directory's mtime changed).
    std::fs::remove_file(&path).unwrap();
    let report = store
        .sync_if_changed(ts("2026-03-16T15:00:00Z"))
        .unwrap()
        .unwrap();
    assert_eq!(report.deactivated, vec![1]);
    assert!(store.active_by_name("Dog").unwrap().is_none());
}

#[test]
fn duplicate_ids_get_new_ids() {
    let home = Home::new();
    std::fs::create_dir_all(home.memory_dir()).unwrap();
    std::fs::write(home.memory_dir().join("A.md"), "---\nid: 5\n---\n\na").unwrap();
    std::fs::write(
        home.memory_dir().join("B.md"),
        "---\nid: 5\nzz: keep\n---\n\nb",
    )
    .unwrap();
    let store = home.open(None);
    assert_eq!(store.active_by_name("A").unwrap().unwrap().id, 5);
    assert_eq!(store.active_by_name("B").unwrap().unwrap().id, 6);
    assert_eq!(
        std::fs::read_to_string(home.memory_dir().join("B.md")).unwrap(),
        "---\nid: 6\nzz: keep\n---\n\nb"
    );
    // New ids continue after the largest.
    let m = store
        .create("C", "c", &[], ts("2026-03-16T13:30:00Z"))
        .unwrap();
    assert_eq!(m.id, 7);
}
