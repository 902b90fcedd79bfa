//! `elroy undo` of a memory update (versioned home): the restored file is active again for the
//! memory sync (`docs/formats.md#memory-index-sync`), so `print_memory` finds the earlier version
//! and the superseding one is gone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::Output;

use common::{TestHome, stderr, stdout};

const NOW: &str = "2026-11-30T10:00:00Z";

fn run(home: &TestHome, args: &[&str]) -> Output {
    home.cmd()
        .env("ELROY_NOW", NOW)
        .args(args)
        .output()
        .unwrap()
}

fn call(home: &TestHome, tool: &str, args: &str) -> String {
    let out = run(home, &["tools", "call", tool, "--args", args]);
    assert!(out.status.success(), "{tool}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn undo_of_an_update_brings_the_earlier_memory_back() {
    let home = TestHome::new();
    call(
        &home,
        "create_memory",
        r#"{"name":"Trip","text":"The user goes to Kyoto on 2026-12-01."}"#,
    );
    call(
        &home,
        "update_outdated_or_incorrect_memory",
        r#"{"memory_name":"Trip","update_text":"Moved to 2026-12-08."}"#,
    );
    assert!(home.home().join("memories/archive/Trip.md").exists());
    let updated = call(&home, "print_memory", r#"{"memory_name":"Trip"}"#);
    assert!(updated.contains("Moved to 2026-12-08."), "{updated}");

    let out = run(&home, &["undo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!home.home().join("memories/archive/Trip.md").exists());
    assert_eq!(
        std::fs::read_to_string(home.home().join("memories/Trip.md")).unwrap(),
        "---\nid: 1\n---\n\nThe user goes to Kyoto on 2026-12-01."
    );
    assert_eq!(
        call(&home, "print_memory", r#"{"memory_name":"Trip"}"#).trim_end(),
        "#Trip\n\nThe user goes to Kyoto on 2026-12-01."
    );
    // Recall sees it again, and only that version.
    let found = call(
        &home,
        "examine_memories",
        r#"{"question":"When does the user go to Kyoto?"}"#,
    );
    assert!(found.contains("## Memory: Trip"), "{found}");
    assert!(!found.contains("Moved to"), "{found}");
}
