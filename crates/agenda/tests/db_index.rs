//! The agenda index in `state.db` (`docs/formats.md#agenda-index`): stable ids shared by processes,
//! rows that follow the files (renames keep the id, deletions mark the row, broken files keep their
//! row).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use elroy_agenda::{AgendaStore, DbIndex, NewDueItem, indexed_status};
use elroy_db::Db;
use jiff::Timestamp;
use jiff::tz::TimeZone;

fn store(home: &Path) -> (AgendaStore, Arc<Db>, i64) {
    let db = Arc::new(Db::open(&home.join("state.db")).unwrap());
    let user = db.ensure_user("DEFAULT", Timestamp::UNIX_EPOCH).unwrap();
    let index = DbIndex::new(Arc::clone(&db), user);
    (AgendaStore::new(home, home, index), db, user)
}

fn date() -> jiff::civil::Date {
    jiff::civil::date(2026, 3, 20)
}

#[test]
fn ids_live_in_the_database_and_follow_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let (a, db, user) = store(home);
    let now = Timestamp::UNIX_EPOCH.to_zoned_datetime(TimeZone::UTC);
    assert_eq!(
        a.add_item("First", date(), Timestamp::UNIX_EPOCH)
            .unwrap()
            .id,
        1
    );
    let due = a
        .create_due_item(
            &NewDueItem {
                name: "Call mum",
                text: "Sunday",
                trigger: None,
                trigger_context: Some("weekend"),
            },
            &now,
        )
        .unwrap();
    assert_eq!(due.id, 2);
    // A second process (its own connection) sees the same ids and continues the numbering.
    let (b, _, _) = store(home);
    assert_eq!(
        b.fact_by_id(2, &TimeZone::UTC).unwrap().as_deref(),
        Some("#Call mum (Context: weekend)\nSunday")
    );
    let renamed = b.rename_due_item("Call mum", "Call dad", "1").unwrap();
    assert_eq!((renamed.id, renamed.stem.as_str()), (2, "Call_dad"));
    assert_eq!(
        indexed_status(&db, user, 2).unwrap(),
        Some(("Call_dad".to_owned(), "created".to_owned()))
    );
    assert_eq!(
        a.fact_by_id(2, &TimeZone::UTC).unwrap().as_deref(),
        Some("#Call dad (Context: weekend)\nSunday")
    );
    b.complete_item("first").unwrap();
    a.list_items(date()).unwrap();
    assert_eq!(
        indexed_status(&db, user, 1).unwrap(),
        Some(("First".to_owned(), "completed".to_owned()))
    );
    a.delete_due_item("Call dad").unwrap();
    assert_eq!(
        indexed_status(&db, user, 2).unwrap(),
        Some(("Call_dad".to_owned(), "deleted".to_owned()))
    );
    assert_eq!(b.fact_by_id(2, &TimeZone::UTC).unwrap(), None);
    // Ids are never reused; a file made by hand gets the next one.
    assert_eq!(
        b.add_item("Call dad", date(), Timestamp::UNIX_EPOCH)
            .unwrap()
            .id,
        3
    );
    std::fs::write(
        home.join("agenda/Hand.md"),
        "---\ncompleted: false\ndate: '2026-03-20'\nstatus: created\n---\n\nBy hand",
    )
    .unwrap();
    a.list_items(date()).unwrap();
    let entries = a.recall_entries(&TimeZone::UTC).unwrap();
    let hand = entries.iter().find(|e| e.name == "Hand").unwrap();
    assert_eq!(hand.id, 4);
    // A file whose front matter breaks keeps its row and id.
    std::fs::write(home.join("agenda/Hand.md"), "---\ndate: [\n---\n\nBroken").unwrap();
    a.list_items(date()).unwrap();
    assert_eq!(
        indexed_status(&db, user, 4).unwrap(),
        Some(("Hand".to_owned(), "created".to_owned()))
    );
    std::fs::remove_file(home.join("agenda/Hand.md")).unwrap();
    a.list_items(date()).unwrap();
    assert_eq!(
        indexed_status(&db, user, 4).unwrap(),
        Some(("Hand".to_owned(), "deleted".to_owned()))
    );
}

#[test]
fn concurrent_processes_get_unique_ids() {
    let dir = tempfile::tempdir().unwrap();
    let home = Arc::new(dir.path().to_path_buf());
    // Create the database and the user first, as start-up does.
    drop(store(&home));
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let home = Arc::clone(&home);
            std::thread::spawn(move || {
                let (s, _, _) = store(&home);
                (0..25)
                    .map(|i| {
                        s.add_item(&format!("Task {i} of {w}"), date(), Timestamp::UNIX_EPOCH)
                            .unwrap()
                            .id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<i64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=100).collect::<Vec<_>>());
    let (s, db, user) = store(&home);
    assert_eq!(s.list_items(date()).unwrap().len(), 100);
    let live: i64 = db
        .with_conn(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM agenda_items WHERE user_id = ?1 AND status = 'created'",
                [user],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert_eq!(live, 100);
}

/// The index selects rows by name in SQL; a name asked for in NFD (as macOS writes it) still
/// finds the item stored in NFC, and is still a duplicate of it.
#[test]
fn names_asked_for_in_nfd_are_found_by_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _, _) = store(dir.path());
    let now = Timestamp::UNIX_EPOCH.to_zoned_datetime(TimeZone::UTC);
    let due = |name| NewDueItem {
        name,
        text: "croissants",
        trigger: None,
        trigger_context: Some("morning"),
    };
    a.create_due_item(&due("Caf\u{e9}"), &now).unwrap();
    let (b, _, _) = store(dir.path());
    assert_eq!(b.due_item("Cafe\u{301}").unwrap().name, "Caf\u{e9}");
    assert!(b.create_due_item(&due("Cafe\u{301}"), &now).is_err());
    b.add_item("Th\u{e9}", date(), Timestamp::UNIX_EPOCH)
        .unwrap();
    assert!(
        b.add_item("The\u{301}", date(), Timestamp::UNIX_EPOCH)
            .is_err()
    );
    assert_eq!(
        b.complete_due_item("Cafe\u{301}", None).unwrap().name,
        "Caf\u{e9}"
    );
}

/// The recall stamp (agenda version and zone) changes with every change to the rows
/// — elroy's add, edit and completion, a file added by hand, another process's write — and not
/// otherwise; reading it stats no item file.
#[test]
fn the_recall_stamp_follows_every_change_and_costs_no_file_stat() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let (a, _db, _user) = store(home);
    let utc = TimeZone::UTC;
    let now = Timestamp::UNIX_EPOCH;
    for i in 0..20 {
        a.add_item(&format!("Item {i}"), date(), now).unwrap();
    }
    let (entries, built) = a.recall_entries_with_stamp(&utc).unwrap();
    assert_eq!(entries.len(), 20);
    assert_eq!(a.recall_stamp(&utc).unwrap(), built);
    let checked = a.files_checked();
    assert_eq!(a.recall_stamp(&utc).unwrap(), built);
    assert_eq!(a.files_checked(), checked, "the stamp stats no item file");
    // Another zone renders times differently: another stamp.
    assert_ne!(
        a.recall_stamp(&TimeZone::get("Asia/Kolkata").unwrap())
            .unwrap(),
        built
    );
    let mut last = built;
    let mut changed = |a: &AgendaStore, what: &str| {
        let stamp = a.recall_stamp(&utc).unwrap();
        assert_ne!(stamp, last, "{what}");
        let (_, rebuilt) = a.recall_entries_with_stamp(&utc).unwrap();
        assert_eq!(a.recall_stamp(&utc).unwrap(), rebuilt, "{what}");
        last = rebuilt;
    };
    a.add_item("Opera", date(), now).unwrap();
    changed(&a, "added");
    a.add_update(
        "Opera",
        "Tickets booked",
        &now.to_zoned_datetime(utc.clone()),
    )
    .unwrap();
    changed(&a, "edited");
    a.complete_item("Opera").unwrap();
    changed(&a, "completed");
    std::fs::write(
        home.join("agenda/Hand.md"),
        "---\ncompleted: false\ndate: '2026-03-20'\nstatus: created\n---\n\nBy hand",
    )
    .unwrap();
    changed(&a, "added by hand");
    let (other, _, _) = store(home);
    other.add_item("Ballet", date(), now).unwrap();
    changed(&a, "added by another process");
}
