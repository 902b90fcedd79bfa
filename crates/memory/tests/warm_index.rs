//! The memory index in `state.db` is a validated cache of the files: a new store (a new
//! elroy process) on a warm index lists no directory whose signature did not change and reads no
//! file, and still sees every change made while no elroy ran: a file added, deleted or renamed
//! by hand and an editor's write by rename at the next command (each changes the directory and
//! the file's inode), an edit in place (even one that keeps the size and sets the mtime back) and
//! a `git checkout` of an older version (whose new file may reuse the inode number) at the next
//! command that reads that memory. A deleted `state.db` is rebuilt with the same answers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::common;

use common::*;
use elroy_db::Db;
use elroy_memory::{MemoryQuery, MemoryStore, SyncReport};

/// Sets a file's (or directory's) mtime, as an editor, `cp -p`, `rsync -t` or `touch -d` can.
fn set_mtime(path: &Path, to: SystemTime) {
    let file = if path.is_dir() {
        std::fs::File::open(path).unwrap()
    } else {
        std::fs::File::options().append(true).open(path).unwrap()
    };
    file.set_modified(to).unwrap();
}

fn an_hour_ago() -> SystemTime {
    SystemTime::now() - Duration::from_secs(3600)
}

/// Everything in the memory directory (files and directories) last modified an hour ago, as in
/// a home that was not touched for a while.
fn age(home: &Home) {
    let dir = home.memory_dir();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for inner in std::fs::read_dir(&path).unwrap() {
                set_mtime(&inner.unwrap().path(), an_hour_ago());
            }
        }
        set_mtime(&path, an_hour_ago());
    }
    set_mtime(&dir, an_hour_ago());
}

/// A store as a new process opens it (its own connection to `state.db`), with its report.
fn open(home: &Home) -> (MemoryStore, SyncReport) {
    let db = Arc::new(Db::open(&home.path().join("state.db")).unwrap());
    MemoryStore::open(db, home.options(None), ts("2026-03-17T05:00:00Z")).unwrap()
}

fn names_for(store: &MemoryStore, words: &str) -> Vec<String> {
    store
        .search(&MemoryQuery::from_text(words), 5)
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect()
}

const DOG: &str = "---\nid: 1\n---\n\nThe dog is called Biscuit.";
const DOG_NEW: &str = "---\nid: 1\n---\n\nThe dog is called Pretzel.";

/// A home with two memories, a broken file and an archived memory, all last modified an hour
/// ago, indexed once: a warm index.
fn warm_home() -> Home {
    let home = Home::new();
    let dir = home.memory_dir();
    std::fs::create_dir_all(dir.join("archive")).unwrap();
    std::fs::write(dir.join("Dog.md"), DOG).unwrap();
    std::fs::write(
        dir.join("Tea.md"),
        "---\nid: 2\n---\n\nGreen tea, no sugar.",
    )
    .unwrap();
    std::fs::write(dir.join("Broken.md"), "---\nid: [\n---\n\nx").unwrap();
    std::fs::write(
        dir.join("archive/Old.md"),
        "---\nid: 3\n---\n\nAn old bike.",
    )
    .unwrap();
    age(&home);
    let (store, report) = open(&home);
    assert_eq!(report.indexed, 3, "{report:?}");
    assert_eq!(names_for(&store, "biscuit"), ["Dog"]);
    home
}

#[test]
fn a_warm_index_lists_nothing_and_reads_nothing() {
    let home = warm_home();
    let (store, report) = open(&home);
    assert_eq!(report, SyncReport::default());
    assert!(
        store
            .sync_if_changed(ts("2026-03-17T05:00:00Z"))
            .unwrap()
            .is_none()
    );
    // The broken file is still named, without being read again.
    assert_eq!(store.unreadable_files().len(), 1);
    assert_eq!(store.unreadable_files()[0].0, "memories/Broken.md");
    // Elroy's own write keeps the directory trusted: the next process lists nothing either.
    store
        .create("Car", "A blue hatchback.", &[], ts("2026-03-17T05:01:00Z"))
        .unwrap();
    let (store, _) = open(&home);
    assert!(
        store
            .sync_if_changed(ts("2026-03-17T05:02:00Z"))
            .unwrap()
            .is_none()
    );
    assert_eq!(names_for(&store, "hatchback"), ["Car"]);
}

#[test]
fn an_edit_in_place_with_the_same_size_and_mtime_is_seen_when_a_query_returns_it() {
    let home = warm_home();
    let path = home.memory_dir().join("Dog.md");
    std::fs::write(&path, DOG_NEW).unwrap();
    set_mtime(&path, an_hour_ago());
    set_mtime(&home.memory_dir(), an_hour_ago());
    let (store, report) = open(&home);
    assert_eq!(report.indexed, 0, "the directory did not change");
    // The trade-off (ARCHITECTURE.md): the old words still lead to the memory, which is then
    // checked and read again before the answer…
    assert!(names_for(&store, "biscuit").is_empty());
    let dog = store.active_by_name("Dog").unwrap().unwrap();
    assert_eq!(store.text(&dog).unwrap(), "The dog is called Pretzel.");
    // …and the new words find it from then on.
    assert_eq!(names_for(&store, "pretzel"), ["Dog"]);
    // Another of the kind: a pinned memory (or `print_memory`) checks its file too.
    std::fs::write(&path, DOG).unwrap();
    let (entry, rendering) = store.recall_entry(1).unwrap().unwrap();
    assert_eq!(entry.name, "Dog");
    assert_eq!(rendering, "#Dog\n\nThe dog is called Biscuit.");
    assert_eq!(names_for(&store, "biscuit"), ["Dog"]);
}

#[test]
fn a_full_check_sees_an_edit_in_place_no_query_touched() {
    let home = warm_home();
    let path = home.memory_dir().join("Tea.md");
    std::fs::write(&path, "---\nid: 2\n---\n\nBlack coffee, no sugar.").unwrap();
    set_mtime(&path, an_hour_ago());
    let (store, _) = open(&home);
    assert!(names_for(&store, "coffee").is_empty());
    // `elroy doctor`'s check: the edit is indexed, and a file without an id is left as it is
    // (the check writes no file; the next sync gives it an id).
    std::fs::write(
        home.memory_dir().join("Garden.md"),
        "Tomatoes need staking.",
    )
    .unwrap();
    let report = store.check_all(ts("2026-03-17T05:00:00Z")).unwrap();
    assert_eq!(report.indexed, 1, "{report:?}");
    assert_eq!(names_for(&store, "coffee"), ["Tea"]);
    assert_eq!(
        std::fs::read_to_string(home.memory_dir().join("Garden.md")).unwrap(),
        "Tomatoes need staking."
    );
    assert!(store.active_by_name("Garden").unwrap().is_none());
    // The sync of the next command gives it one.
    store.sync(ts("2026-03-17T05:00:00Z")).unwrap();
    assert_eq!(names_for(&store, "tomatoes"), ["Garden"]);
}

#[test]
fn an_edit_by_rename_is_seen_by_the_next_command() {
    let home = warm_home();
    let dir = home.memory_dir();
    std::fs::write(dir.join(".Dog.md.swp"), DOG_NEW).unwrap();
    std::fs::rename(dir.join(".Dog.md.swp"), dir.join("Dog.md")).unwrap();
    let (store, report) = open(&home);
    assert_eq!(report.indexed, 1, "{report:?}");
    // Found by its new words without any query touching it first.
    assert_eq!(names_for(&store, "pretzel"), ["Dog"]);
    assert!(names_for(&store, "biscuit").is_empty());
}

#[test]
fn files_added_deleted_and_renamed_by_hand_are_seen_by_the_next_command() {
    let home = warm_home();
    let dir = home.memory_dir();
    std::fs::write(dir.join("Garden.md"), "Tomatoes need staking.").unwrap();
    std::fs::remove_file(dir.join("Tea.md")).unwrap();
    let (store, report) = open(&home);
    assert_eq!(report.deactivated, vec![2]);
    assert!(store.active_by_name("Tea").unwrap().is_none());
    assert_eq!(names_for(&store, "tomatoes"), ["Garden"]);
    assert_eq!(store.active_by_name("Garden").unwrap().unwrap().id, 4);
    // A rename keeps the memory (its id is in the file); the new file name is recorded.
    std::fs::rename(dir.join("Dog.md"), dir.join("Hound.md")).unwrap();
    let (store, report) = open(&home);
    assert!(report.deactivated.is_empty(), "{report:?}");
    let dog = store.active_by_name("Dog").unwrap().unwrap();
    assert_eq!((dog.id, dog.file_name.as_str()), (1, "Hound.md"));
    assert_eq!(names_for(&store, "biscuit"), ["Dog"]);
    // A broken file fixed by hand in place is read again when a search names it.
    std::fs::write(dir.join("Broken.md"), "---\nid: 9\n---\n\nFixed by hand.").unwrap();
    assert!(store.unreadable_files().is_empty());
    assert_eq!(names_for(&store, "fixed"), ["Broken"]);
}

#[test]
fn a_git_checkout_of_an_older_version_is_seen_by_the_next_command() {
    let home = warm_home();
    let dir = home.memory_dir();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", home.path())
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "Dog.md"]);
    git(&["commit", "-q", "-m", "v1"]);
    // A newer version, indexed by a command.
    std::fs::write(dir.join("Dog.md"), DOG_NEW).unwrap();
    set_mtime(&dir.join("Dog.md"), an_hour_ago());
    let (store, _) = open(&home);
    assert_eq!(names_for(&store, "biscuit"), Vec::<String>::new());
    assert_eq!(names_for(&store, "pretzel"), ["Dog"]);
    age(&home);
    let (store, _) = open(&home);
    assert!(
        store
            .sync_if_changed(ts("2026-03-17T05:00:00Z"))
            .unwrap()
            .is_none()
    );
    // The older version comes back while no elroy runs. Git writes a new file, which may get
    // the freed inode number again: the listing cannot tell, the file's own stat can. The next
    // command that reads the memory (words of both versions) sees the older text…
    git(&["checkout", "-q", "--", "Dog.md"]);
    let (store, _) = open(&home);
    let found = store.search(&MemoryQuery::from_text("dog"), 5).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(store.text(&found[0]).unwrap(), "The dog is called Biscuit.");
    // …and the index has it from then on.
    assert_eq!(names_for(&store, "biscuit"), ["Dog"]);
    assert!(names_for(&store, "pretzel").is_empty());
}

#[test]
fn a_deleted_state_db_is_rebuilt_with_the_same_answers() {
    let home = warm_home();
    let answers = |store: &MemoryStore| {
        (
            store.active_names().unwrap(),
            names_for(store, "biscuit"),
            names_for(store, "green tea"),
            store.unreadable_files(),
            store.get(3).unwrap().map(|m| (m.is_active, m.file_name)),
        )
    };
    let (store, _) = open(&home);
    let before = answers(&store);
    drop(store);
    for name in ["state.db", "state.db-wal", "state.db-shm"] {
        let _ = std::fs::remove_file(home.path().join(name));
    }
    // A new database: the user is created again, with the same id.
    let db = Arc::new(Db::open(&home.path().join("state.db")).unwrap());
    assert_eq!(
        db.ensure_user("DEFAULT", ts("2026-03-16T13:00:00Z"))
            .unwrap(),
        home.user
    );
    let (store, report) = open(&home);
    assert_eq!(answers(&store), before);
    // Rebuilding reads every file again, so the broken one is reported again.
    assert_eq!(report.unreadable.len(), 1, "{report:?}");
}
