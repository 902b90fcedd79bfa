//! The parse cache never hides the files: edits in place, renames, deletions and a replaced
//! directory are all seen by the next operation of a long-lived store.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_agenda::AgendaStore;
use jiff::Timestamp;

fn texts(store: &AgendaStore) -> Vec<(String, String)> {
    store
        .list_items(jiff::civil::date(2026, 3, 20))
        .unwrap()
        .into_iter()
        .map(|i| (i.stem, i.text))
        .collect()
}

fn item(text: &str) -> String {
    format!("---\ncompleted: false\ndate: '2026-03-20'\nstatus: created\n---\n\n{text}")
}

#[test]
fn hand_edits_renames_and_deletions_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let store = AgendaStore::open(home, home, "DEFAULT").unwrap();
    let agenda = home.join("agenda");
    assert!(texts(&store).is_empty());
    std::fs::create_dir_all(&agenda).unwrap();
    std::fs::write(agenda.join("A.md"), item("aaaa")).unwrap();
    assert_eq!(texts(&store), vec![("A".into(), "aaaa".into())]);
    // Same size, in place.
    std::fs::write(agenda.join("A.md"), item("bbbb")).unwrap();
    assert_eq!(texts(&store), vec![("A".into(), "bbbb".into())]);
    std::fs::rename(agenda.join("A.md"), agenda.join("B.md")).unwrap();
    assert_eq!(texts(&store), vec![("B".into(), "bbbb".into())]);
    std::fs::write(agenda.join("C.md"), item("cccc")).unwrap();
    std::fs::remove_file(agenda.join("B.md")).unwrap();
    assert_eq!(texts(&store), vec![("C".into(), "cccc".into())]);
    // The whole directory replaced.
    std::fs::remove_dir_all(&agenda).unwrap();
    assert!(texts(&store).is_empty());
    std::fs::create_dir_all(&agenda).unwrap();
    std::fs::write(agenda.join("D.md"), item("dddd")).unwrap();
    assert_eq!(texts(&store), vec![("D".into(), "dddd".into())]);
    std::fs::write(agenda.join("D.md"), item("eeee")).unwrap();
    assert_eq!(texts(&store), vec![("D".into(), "eeee".into())]);
}

#[test]
fn ids_are_stable_across_store_instances_and_renames() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let now = || jiff::Timestamp::UNIX_EPOCH.to_zoned_datetime(jiff::tz::TimeZone::UTC);
    let a = AgendaStore::open(home, home, "DEFAULT").unwrap();
    let first = a
        .add_item(
            "First",
            jiff::civil::date(2026, 3, 20),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap();
    let due = a
        .create_due_item(
            &elroy_agenda::NewDueItem {
                name: "Call mum",
                text: "Sunday",
                trigger: None,
                trigger_context: Some("weekend"),
            },
            &now(),
        )
        .unwrap();
    assert_eq!((first.id, due.id), (1, 2));
    let b = AgendaStore::open(home, home, "DEFAULT").unwrap();
    let renamed = b.rename_due_item("Call mum", "Call dad", "1").unwrap();
    assert_eq!((renamed.id, renamed.stem.as_str()), (2, "Call_dad"));
    let tz = jiff::tz::TimeZone::UTC;
    assert_eq!(
        a.fact_by_id(2, &tz).unwrap().as_deref(),
        Some("#Call dad (Context: weekend)\nSunday")
    );
    assert_eq!(
        a.fact_by_id(1, &tz).unwrap().as_deref(),
        Some("#Agenda: First\nFirst")
    );
    let deleted = a.delete_due_item("Call dad").unwrap();
    assert_eq!(deleted.id, 2);
    assert_eq!(b.fact_by_id(2, &tz).unwrap(), None);
    // A new file never reuses an id.
    let again = b
        .add_item(
            "Call dad",
            jiff::civil::date(2026, 3, 20),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap();
    assert_eq!(again.id, 3);
}
