//! Many writers at once (D12): separate store instances (each with its own cache and index
//! handle, as separate processes have) adding items concurrently lose nothing, and ids stay
//! unique.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::sync::Arc;

use elroy_agenda::AgendaStore;
use jiff::Timestamp;

#[test]
fn eight_writers_fifty_items_each() {
    let dir = tempfile::tempdir().unwrap();
    let home = Arc::new(dir.path().to_path_buf());
    let date = jiff::civil::date(2026, 3, 20);
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let home = Arc::clone(&home);
            std::thread::spawn(move || {
                let store = AgendaStore::open(&home, &home, "DEFAULT").unwrap();
                (0..50)
                    .map(|i| {
                        let text = format!("Task {i} from writer {w}");
                        store
                            .add_item(&text, date, Timestamp::UNIX_EPOCH)
                            .unwrap()
                            .id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for t in threads {
        for id in t.join().unwrap() {
            assert!(ids.insert(id), "id {id} handed out twice");
        }
    }
    assert_eq!(ids.len(), 400);
    let files = std::fs::read_dir(home.join("agenda")).unwrap().count();
    assert_eq!(files, 400);
    let store = AgendaStore::open(&home, &home, "DEFAULT").unwrap();
    assert_eq!(store.list_items(date).unwrap().len(), 400);
}

#[test]
fn colliding_names_get_unique_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = Arc::new(dir.path().to_path_buf());
    let date = jiff::civil::date(2026, 3, 20);
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let home = Arc::clone(&home);
            std::thread::spawn(move || {
                let store = AgendaStore::open(&home, &home, "DEFAULT").unwrap();
                for i in 0..10 {
                    // Different names, same sanitized base: `a_b`, `a_b-2`, …
                    let text = format!("a{}b{}", ["/", ":", "?", "*"][w], " ".repeat(i));
                    store.add_item(&text, date, Timestamp::UNIX_EPOCH).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let store = AgendaStore::open(&home, &home, "DEFAULT").unwrap();
    let mut stems: Vec<String> = store
        .list_items(date)
        .unwrap()
        .into_iter()
        .map(|i| i.stem)
        .collect();
    stems.sort();
    let mut want: Vec<String> = (1..=40)
        .map(|n| {
            if n == 1 {
                "a_b".to_owned()
            } else {
                format!("a_b-{n}")
            }
        })
        .collect();
    want.sort();
    assert_eq!(stems, want);
}
