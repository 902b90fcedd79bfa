//! Several `elroy` processes writing the same home at once lose nothing (decision D12: atomic
//! writes under the home lock, files re-read inside the lock).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::thread;

use common::{TestHome, stderr, stdout};

const PROCESSES: usize = 8;
const ITEMS_EACH: usize = 50;

#[test]
fn eight_processes_adding_agenda_items_lose_nothing() {
    let home = TestHome::new();
    thread::scope(|scope| {
        for p in 0..PROCESSES {
            let home = &home;
            scope.spawn(move || {
                for i in 0..ITEMS_EACH {
                    let args =
                        format!(r#"{{"text":"process {p} item {i}","item_date":"2026-03-20"}}"#);
                    let out = home.call("add_agenda_item", &args);
                    assert!(
                        out.status.success(),
                        "process {p} item {i}: {}",
                        stderr(&out)
                    );
                }
            });
        }
    });
    let files = std::fs::read_dir(home.home().join("agenda"))
        .unwrap()
        .filter_map(Result::ok)
        .count();
    assert_eq!(files, PROCESSES * ITEMS_EACH);
    let out = home.call("list_agenda_items", r#"{"item_date":"2026-03-20"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    let listing: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let items = listing["items"].as_array().unwrap();
    assert_eq!(items.len(), PROCESSES * ITEMS_EACH);
    for p in 0..PROCESSES {
        for i in 0..ITEMS_EACH {
            let text = format!("process {p} item {i}");
            assert!(
                items.iter().any(|item| item["text"] == text.as_str()),
                "{text} missing"
            );
        }
    }
}

#[test]
fn broken_front_matter_is_reported_by_name_and_left_untouched() {
    let home = TestHome::new();
    let agenda = home.home().join("agenda");
    std::fs::create_dir_all(&agenda).unwrap();
    let broken = "---\nname: [unclosed\n---\nbody";
    std::fs::write(agenda.join("Broken.md"), broken).unwrap();
    let out = home.call(
        "add_agenda_item",
        r#"{"text":"Fine item","item_date":"2026-03-20"}"#,
    );
    let listing = home.call("list_agenda_items", r#"{"item_date":"2026-03-20"}"#);
    let reported = format!(
        "{}{}{}{}",
        stdout(&out),
        stderr(&out),
        stdout(&listing),
        stderr(&listing)
    );
    assert!(
        reported.contains("Broken.md"),
        "the broken file is named: {reported}"
    );
    assert_eq!(
        std::fs::read_to_string(agenda.join("Broken.md")).unwrap(),
        broken
    );
}
