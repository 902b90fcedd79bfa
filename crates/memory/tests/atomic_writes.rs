//! Every memory write is whole or absent (`docs/formats.md#multi-step-writes`): a step that fails
//! after the files changed (a full disk at the index commit, here a failure injected by an SQLite
//! trigger that aborts the statement) leaves the files and the index as they were, and a retry
//! neither duplicates nor loses anything.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;

fn utc() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::UTC
}

/// Makes every `op` (`INSERT` or `UPDATE`) of the `memories` table fail, like a full disk.
fn fail_on(home: &Home, op: &str) {
    home.db
        .with_conn(|c| {
            c.execute_batch(&format!(
                "CREATE TRIGGER injected_failure BEFORE {op} ON memories
                 BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
            ))
        })
        .unwrap();
}

fn heal(home: &Home) {
    home.db
        .with_conn(|c| c.execute_batch("DROP TRIGGER injected_failure;"))
        .unwrap();
}

/// Every file under `memories/` with its text, sorted.
fn files(home: &Home) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["", "archive/"] {
        let Ok(entries) = std::fs::read_dir(home.memory_dir().join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().unwrap().is_file() {
                let name = format!("{dir}{}", e.file_name().to_string_lossy());
                out.push((name, std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn active(store: &elroy_memory::MemoryStore) -> Vec<(i64, String)> {
    store
        .active_memories()
        .unwrap()
        .into_iter()
        .map(|m| (m.id, m.name))
        .collect()
}

#[test]
fn an_update_whose_second_step_fails_changes_nothing() {
    // Kind: the update's new version cannot be indexed (its INSERT fails) after the old file got
    // its archive name; and a second input: the archive step itself fails (its UPDATE).
    for op in ["INSERT", "UPDATE"] {
        let home = Home::new();
        let store = home.open(None);
        let now = ts("2026-03-16T13:30:00Z");
        store
            .create("Dog", "The dog is Biscuit.", &[], now)
            .unwrap();
        let before = files(&home);
        fail_on(&home, op);
        let err = store
            .update("Dog", "Biscuit is 3.", now, &utc())
            .unwrap_err();
        assert!(err.to_string().contains("disk is full"), "{op}: {err}");
        assert_eq!(files(&home), before, "{op}: the files are as they were");
        assert_eq!(active(&store), [(1, "Dog".to_owned())], "{op}");
        assert_eq!(
            store.text(&store.get(1).unwrap().unwrap()).unwrap(),
            "The dog is Biscuit."
        );
        // The next open finds nothing to repair, and a retry works once.
        heal(&home);
        let store = home.open(None);
        assert_eq!(active(&store), [(1, "Dog".to_owned())], "{op}");
        let (old, new) = store
            .update("Dog", "Biscuit is 3.", now, &utc())
            .unwrap()
            .unwrap();
        assert_eq!((old.id, new.id), (1, 2));
        assert_eq!(active(&home.open(None)), [(2, "Dog".to_owned())], "{op}");
        assert_eq!(files(&home).len(), 2, "{op}: {:?}", files(&home));
    }
}

#[test]
fn a_create_whose_index_write_fails_leaves_no_file() {
    // "Error but saved" made impossible: the failed call leaves no file, so a retry (or the next
    // open's sync) makes no duplicate.
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    store.create("Kept", "Kept before.", &[], now).unwrap();
    let before = files(&home);
    fail_on(&home, "INSERT");
    assert!(store.create("New", "A new fact.", &[], now).is_err());
    assert_eq!(files(&home), before);
    heal(&home);
    let store = home.open(None);
    assert_eq!(active(&store), [(1, "Kept".to_owned())]);
    store.create("New", "A new fact.", &[], now).unwrap();
    assert_eq!(
        active(&home.open(None)),
        [(1, "Kept".to_owned()), (2, "New".to_owned())]
    );
}

#[test]
fn an_archive_whose_index_write_fails_puts_the_file_back() {
    // Another store operation of two durable steps (a move, then the row).
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    let m = store.create("Old", "An old fact.", &[], now).unwrap();
    let before = files(&home);
    fail_on(&home, "UPDATE");
    assert!(store.archive(&m, now).is_err());
    assert_eq!(files(&home), before);
    heal(&home);
    assert_eq!(active(&home.open(None)), [(1, "Old".to_owned())]);
}

#[test]
fn an_update_keeps_the_file_name_and_the_archive_row_matches_its_file() {
    // The new version takes the old file's name (as Elroy's archive-then-create did), and a full
    // check after the update re-reads nothing (the archive row's signature is current).
    let home = Home::new();
    let store = home.open(None);
    let now = ts("2026-03-16T13:30:00Z");
    store.create("Cat", "The cat is Tom.", &[], now).unwrap();
    store
        .update("Cat", "Tom is 5.", now, &utc())
        .unwrap()
        .unwrap();
    let names: Vec<String> = files(&home).into_iter().map(|f| f.0).collect();
    assert_eq!(names, ["Cat.md", "archive/Cat.md"]);
    let report = store.sync(now).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(active(&store), [(2, "Cat".to_owned())]);
}
