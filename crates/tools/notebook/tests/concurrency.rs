//! R2 (`docs/behaviour.md#r2-text-someone-else-wrote-is-never-lost`): 8 processes, each adding 100
//! entries through the `memory` tool on the same MEMORY.md at once, leave all 800 entries, none
//! missing or duplicated.
//!
//! The test re-runs its own test binary as the 8 child processes (`child_adds_entries` does the
//! work only when `ELROY_NOTEBOOK_TEST_HOME` is set), so every child has its own store handle,
//! file descriptors and home lock.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::json;

const HOME_VAR: &str = "ELROY_NOTEBOOK_TEST_HOME";
const WORKER_VAR: &str = "ELROY_NOTEBOOK_TEST_WORKER";
const PROCESSES: usize = 8;
const ENTRIES: usize = 100;

#[test]
fn child_adds_entries() {
    let (Ok(home), Ok(worker)) = (std::env::var(HOME_VAR), std::env::var(WORKER_VAR)) else {
        return; // only meaningful as a child of `eight_processes_keep_every_entry`
    };
    let ctx = common::context(std::path::Path::new(&home));
    for i in 0..ENTRIES {
        let r = common::call(
            &ctx,
            &json!({"action":"add","text":format!("worker {worker} entry {i}")}),
        );
        assert!(!r.is_error, "{}", r.content);
    }
}

#[test]
fn eight_processes_keep_every_entry() {
    if std::env::var(HOME_VAR).is_ok() {
        return; // a child never spawns children
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("MEMORY.md"), "# Notes\n").unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|worker| {
            Command::new(&exe)
                .args([
                    "concurrency::child_adds_entries",
                    "--exact",
                    "--test-threads=1",
                ])
                .env(HOME_VAR, home.path())
                .env(WORKER_VAR, worker.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(home.path().join("MEMORY.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "# Notes");
    let entries: BTreeSet<&str> = lines[1..].iter().copied().collect();
    assert_eq!(
        lines.len() - 1,
        PROCESSES * ENTRIES,
        "no entry lost or duplicated"
    );
    for worker in 0..PROCESSES {
        for i in 0..ENTRIES {
            let entry = format!("- worker {worker} entry {i}");
            assert!(entries.contains(entry.as_str()), "{entry} missing");
        }
    }
    // Each process's entries are in its own order.
    for worker in 0..PROCESSES {
        let positions: Vec<usize> = (0..ENTRIES)
            .map(|i| {
                let entry = format!("- worker {worker} entry {i}");
                lines.iter().position(|l| *l == entry).unwrap()
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
    }
    // No temporary files left behind.
    let names: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| n == "MEMORY.md" || n == ".lock"),
        "{names:?}"
    );
}
