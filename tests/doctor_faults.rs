//! `elroy doctor` finds the states faults leave and `elroy doctor --fix` repairs what is safe:
//! a git index that lacks files (elroy killed between its commit and the index write), saved
//! changes never committed, a sync merge stopped halfway (named, left to `elroy sync`), symbolic
//! links that loop in `memories/`, and a memory left only in the archive by a failed update.
//! Each with a second input of its kind; afterwards doctor is clean and nothing is lost.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::sync::{Machine, bare};

use std::path::Path;
use std::process::Output;

use common::{TestHome, stderr, stdout};

fn run(home: &TestHome, args: &[&str]) -> Output {
    home.cmd()
        .env("ELROY_NOW", "2026-03-16T08:30:00Z")
        .args(args)
        .output()
        .unwrap()
}

fn call(home: &TestHome, tool: &str, args: &str) -> String {
    let out = run(home, &["tools", "call", tool, "--args", args]);
    assert!(out.status.success(), "{tool}: {}", stderr(&out));
    stdout(&out)
}

/// `elroy doctor` finds `needles` (all in its output, exit 1); `--fix` says `fixed`; then
/// doctor is clean.
fn found_then_fixed(home: &TestHome, needles: &[&str], fixed: &[&str]) {
    let out = run(home, &["doctor"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    for needle in needles {
        assert!(
            text.contains(needle),
            "doctor does not name {needle:?}:\n{text}"
        );
    }
    let out = run(home, &["doctor", "--fix"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    for line in fixed {
        assert!(text.contains(line), "--fix does not say {line:?}:\n{text}");
    }
    let out = run(home, &["doctor"]);
    assert!(out.status.success(), "{}", stdout(&out));
}

fn drop_from_git_index(root: &Path, paths: &[&str]) {
    let repo = git2::Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    for path in paths {
        index.remove_path(Path::new(path)).unwrap();
    }
    index.write().unwrap();
}

#[test]
fn a_git_index_that_lacks_committed_files_is_found_and_set_back() {
    // What a kill between elroy's commit and its index write leaves: HEAD has the files, the
    // index does not (a memory, and an agenda item: two stores).
    let home = TestHome::new();
    call(
        &home,
        "create_memory",
        r#"{"name":"Dog","text":"The dog is Biscuit."}"#,
    );
    call(&home, "add_agenda_item", r#"{"text":"Water plants"}"#);
    let root = home.home();
    drop_from_git_index(&root, &["memories/Dog.md", "agenda/Water_plants.md"]);
    found_then_fixed(
        &home,
        &[
            "memories/Dog.md: the git index",
            "agenda/Water_plants.md: the git index",
        ],
        &["fixed: set the git index back to the last commit for 2 file(s)"],
    );
    let repo = git2::Repository::open(&root).unwrap();
    let dirty = repo
        .statuses(None)
        .unwrap()
        .iter()
        .filter(|s| s.status() != git2::Status::CURRENT && !s.status().is_ignored())
        .count();
    assert_eq!(dirty, 0);
}

#[test]
fn saved_changes_no_commit_records_are_found_and_recorded() {
    // A change whose commit failed looks like this to git: the file differs from HEAD and no
    // journal entry waits for it. Here: an edited memory and a new agenda file.
    let home = TestHome::new();
    call(
        &home,
        "create_memory",
        r#"{"name":"Dog","text":"The dog is Biscuit."}"#,
    );
    let root = home.home();
    std::fs::write(
        root.join("memories/Dog.md"),
        "---\nid: 1\n---\n\nBiscuit, 3 years.",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("agenda")).unwrap();
    std::fs::write(
        root.join("agenda/Saved.md"),
        "---\ncompleted: false\ndate: '2026-03-16'\nname: Saved\nstatus: created\n---\n\nSaved\n",
    )
    .unwrap();
    found_then_fixed(
        &home,
        &[
            "memories/Dog.md: changed but not recorded in the history",
            "agenda/Saved.md: changed but not recorded in the history",
        ],
        &["fixed: recorded 2 changed file(s) in the history as 'external edit'"],
    );
    let shown = call(&home, "print_memory", r#"{"memory_name":"Dog"}"#);
    assert!(shown.contains("Biscuit, 3 years."), "{shown}");
}

#[test]
fn looping_links_in_memories_are_found_and_removed() {
    // Two kinds of loop: a folder link to its own folder, a file link to itself.
    let home = TestHome::new();
    call(
        &home,
        "create_memory",
        r#"{"name":"Dog","text":"The dog is Biscuit."}"#,
    );
    let dir = home.home().join("memories");
    std::os::unix::fs::symlink(".", dir.join("again")).unwrap();
    std::os::unix::fs::symlink("Self.md", dir.join("Self.md")).unwrap();
    found_then_fixed(
        &home,
        &[
            "memories/again: a symbolic link that loops",
            "memories/Self.md: a symbolic link that loops",
        ],
        &[
            "fixed: removed memories/again, a symbolic link that looped",
            "fixed: removed memories/Self.md, a symbolic link that looped",
        ],
    );
    assert!(dir.join("Dog.md").is_file());
    let shown = call(&home, "print_memory", r#"{"memory_name":"Dog"}"#);
    assert!(shown.contains("Biscuit"), "{shown}");
}

#[test]
fn a_memory_left_only_in_the_archive_is_found_and_put_back() {
    // What an update that archived the old version and then failed to write the new one left
    // (older elroy): the memory in `archive/`, nothing active under its name. Two memories.
    let home = TestHome::new();
    call(
        &home,
        "create_memory",
        r#"{"name":"Dog","text":"The dog is Biscuit."}"#,
    );
    call(
        &home,
        "create_memory",
        r#"{"name":"Cat","text":"The cat is Tom."}"#,
    );
    let dir = home.home().join("memories");
    std::fs::create_dir_all(dir.join("archive")).unwrap();
    for name in ["Dog", "Cat"] {
        std::fs::rename(
            dir.join(format!("{name}.md")),
            dir.join(format!("archive/{name}.md")),
        )
        .unwrap();
    }
    // The stores see them archived.
    let out = run(
        &home,
        &[
            "tools",
            "call",
            "print_memory",
            "--args",
            r#"{"memory_name":"Dog"}"#,
        ],
    );
    assert!(!stdout(&out).contains("Biscuit"), "{}", stdout(&out));
    found_then_fixed(
        &home,
        &[
            "memories/archive/Dog.md: memory 'Dog' is only in the archive",
            "memories/archive/Cat.md: memory 'Cat' is only in the archive",
        ],
        &[
            "fixed: put memory 'Dog' back: memories/archive/Dog.md → memories/Dog.md",
            "fixed: put memory 'Cat' back: memories/archive/Cat.md → memories/Cat.md",
        ],
    );
    for (name, text) in [("Dog", "Biscuit"), ("Cat", "Tom")] {
        let shown = call(
            &home,
            "print_memory",
            &format!(r#"{{"memory_name":"{name}"}}"#),
        );
        assert!(shown.contains(text), "{shown}");
    }
}

#[test]
fn a_sync_merge_stopped_halfway_is_named_and_the_next_sync_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"From the laptop"}"#);
    a.call(
        "create_memory",
        r#"{"name":"Laptop memory","text":"laptop text"}"#,
    );
    a.sync(&remote);
    b.call("add_agenda_item", r#"{"text":"From the desktop"}"#);
    let out = b.run_env(
        &["sync", "--remote", remote.to_str().unwrap()],
        &[("ELROY_SYNC_FAIL_AFTER", "index")],
    );
    assert_eq!(out.status.code(), Some(86), "{}", stderr(&out));
    let out = b.run(&["doctor"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("written by an elroy sync that stopped before it finished its merge; run elroy sync again"),
        "{text}"
    );
    // --fix leaves it to the sync (it does not record the merge's files as an edit).
    let fixed = stdout(&b.run(&["doctor", "--fix"]));
    assert!(!fixed.contains("external edit"), "{fixed}");
    b.sync(&remote);
    let out = b.run(&["doctor"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let listing = b.call("list_agenda_items", "{}");
    assert!(
        listing.contains("From the laptop") && listing.contains("From the desktop"),
        "{listing}"
    );
}
