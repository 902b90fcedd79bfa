//! Every agenda write is whole or absent (`docs/formats.md#multi-step-writes`): when the index
//! row of a new item cannot be written (a full disk; here an SQLite trigger that aborts the
//! statement, opened on the same `state.db` from outside like another process), the call fails
//! and leaves no file, so a retry makes no duplicate and no "already exists"; a rename whose
//! index step fails puts the file back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use elroy_agenda::{AgendaStore, NewDueItem};
use elroy_db::rusqlite::Connection;
use jiff::Timestamp;

fn inject(home: &Path, sql: &str) {
    let c = Connection::open(home.join("state.db")).unwrap();
    c.execute_batch(sql).unwrap();
}

fn fail_on(home: &Path, op: &str) {
    inject(
        home,
        &format!(
            "CREATE TRIGGER injected_failure BEFORE {op} ON agenda_items
             BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
        ),
    );
}

fn heal(home: &Path) {
    inject(home, "DROP TRIGGER injected_failure;");
}

fn files(home: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.join("agenda"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn add_agenda_item_that_cannot_be_indexed_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let date = jiff::civil::date(2026, 3, 20);
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    store.add_item("Kept", date, Timestamp::UNIX_EPOCH).unwrap();
    fail_on(home, "INSERT");
    let err = store
        .add_item("Water the plants", date, Timestamp::UNIX_EPOCH)
        .unwrap_err();
    assert!(err.to_string().contains("disk is full"), "{err}");
    assert_eq!(files(home), ["Kept.md"]);
    heal(home);
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    store
        .add_item("Water the plants", date, Timestamp::UNIX_EPOCH)
        .unwrap();
    let names: Vec<String> = store
        .list_items(date)
        .unwrap()
        .into_iter()
        .map(|i| i.stem)
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn create_due_item_that_cannot_be_indexed_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let now: Timestamp = "2026-03-16T08:30:00Z".parse().unwrap();
    let now = now.to_zoned_datetime(jiff::tz::TimeZone::UTC);
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    let item = NewDueItem {
        name: "Call mum",
        text: "Call mum about Sunday.",
        trigger: Some("2026-04-01T09:00:00Z".parse().unwrap()),
        trigger_context: None,
    };
    fail_on(home, "INSERT");
    assert!(store.create_due_item(&item, &now).is_err());
    assert!(files(home).is_empty(), "{:?}", files(home));
    heal(home);
    // The retry is not "already exists".
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    store.create_due_item(&item, &now).unwrap();
    assert_eq!(files(home), ["Call_mum.md"]);
}

#[test]
fn a_rename_whose_index_step_fails_keeps_the_old_name() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let now: Timestamp = "2026-03-16T08:30:00Z".parse().unwrap();
    let now = now.to_zoned_datetime(jiff::tz::TimeZone::UTC);
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    let item = NewDueItem {
        name: "Call mum",
        text: "Call mum about Sunday.",
        trigger: None,
        trigger_context: Some("when it rains"),
    };
    store.create_due_item(&item, &now).unwrap();
    // Only the rename's own row change (its new stem) fails.
    fail_on(home, "UPDATE OF stem");
    assert!(store.rename_due_item("Call mum", "Call dad", "1").is_err());
    assert_eq!(files(home), ["Call_mum.md"]);
    heal(home);
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    assert_eq!(store.due_item("Call mum").unwrap().name, "Call mum");
}
