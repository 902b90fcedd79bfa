//! The Elroy 0.5.0 fixture's memory files load, with names and active flags from Elroy's
//! database (`docs/formats.md#names-from-elroys-database`), and render as Elroy's `print_memory`
//! did.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;
use serde_json::Value;

#[test]
fn fixture_memories_load_with_elroy_names() {
    let home = Home::new();
    copy_dir(&fixture_dir().join("home/memories"), &home.memory_dir());
    std::fs::copy(
        fixture_dir().join("elroy.db.sqlite"),
        home.path().join("elroy.db"),
    )
    .unwrap();
    // Files modified in the last two seconds are read again by the next sync (their stamps could
    // hide a change made within the file system's timestamp granularity); these were copied
    // earlier, as a home's files usually are.
    for entry in std::fs::read_dir(home.memory_dir()).unwrap() {
        let file = std::fs::File::options()
            .append(true)
            .open(entry.unwrap().path())
            .unwrap();
        file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
            .unwrap();
    }
    let store = home.open(None);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_dir().join("expected.json")).unwrap(),
    )
    .unwrap();
    let names: Vec<String> = expected["final"]["active_memory_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(store.active_names().unwrap(), names);
    for name in &names {
        let memory = store.active_by_name(name).unwrap().unwrap();
        assert_eq!(
            store.rendering(&memory).unwrap(),
            expected["final"]["print_memory"][name].as_str().unwrap(),
            "{name}"
        );
    }
    // id 1 is the superseded version: inactive, still in memories/, not moved.
    let old = store.get(1).unwrap().unwrap();
    assert!(!old.is_active);
    assert_eq!(old.file_name, "Priya_s_plan__Kyoto_trip__2026.md");
    let new = store.get(3).unwrap().unwrap();
    assert_eq!(new.sources, vec![elroy_memory::MemorySource::memory(1)]);
    // ContextMessageSet sources of Elroy's database are dropped.
    assert!(store.get(2).unwrap().unwrap().sources.is_empty());
    // The fixture files are untouched (no id had to be written).
    for entry in std::fs::read_dir(fixture_dir().join("home/memories")).unwrap() {
        let entry = entry.unwrap();
        assert_eq!(
            std::fs::read(entry.path()).unwrap(),
            std::fs::read(home.memory_dir().join(entry.file_name())).unwrap()
        );
    }
    // Re-opening re-reads nothing and changes nothing.
    let (_, report) = elroy_memory::MemoryStore::open(
        home.db.clone(),
        home.options(None),
        ts("2026-03-17T05:00:00Z"),
    )
    .unwrap();
    assert_eq!(report.indexed, 0);
    assert!(report.deactivated.is_empty());
}

#[test]
fn without_elroy_database_names_come_from_stems() {
    let home = Home::new();
    copy_dir(&fixture_dir().join("home/memories"), &home.memory_dir());
    let store = home.open(None);
    assert_eq!(
        store.active_names().unwrap(),
        [
            "Priya s coffee preference",
            "Priya s plan  Kyoto trip  2026",
            "Priya s plan  Kyoto trip  2026-2"
        ]
    );
}
