//! The index in `state.db` is a validated cache of the files: a new store (a new elroy
//! process) on a warm index reads no file whose stat did not change, and sees every change made
//! while no elroy ran — an edit in place (even one that keeps the size and sets the mtime back),
//! an editor's write by rename, a file added or deleted by hand, a `git checkout` of an older
//! version — and a deleted `state.db` is rebuilt with the same answers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use elroy_agenda::AgendaStore;
use elroy_core::FileWarning;

fn day() -> jiff::civil::Date {
    jiff::civil::date(2026, 3, 20)
}

fn item(text: &str) -> String {
    format!("---\ncompleted: false\ndate: '2026-03-20'\nstatus: created\n---\n\n{text}")
}

/// A store as a new process opens it, with the files it warns about (= the broken files it read).
fn open(home: &Path) -> (AgendaStore, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let store = AgendaStore::open(home, home, "DEFAULT")
        .unwrap()
        .with_warnings(Arc::new(move |w: Vec<FileWarning>| {
            sink.lock().unwrap().extend(w.into_iter().map(|w| w.path));
        }));
    (store, seen)
}

fn texts(store: &AgendaStore) -> Vec<(String, String)> {
    store
        .list_items(day())
        .unwrap()
        .into_iter()
        .map(|i| (i.stem, i.text))
        .collect()
}

/// Sets a file's mtime, as an editor, `cp -p`, `rsync -t` or `touch -d` can.
fn set_mtime(path: &Path, to: SystemTime) {
    std::fs::File::options()
        .append(true)
        .open(path)
        .unwrap()
        .set_modified(to)
        .unwrap();
}

fn an_hour_ago() -> SystemTime {
    SystemTime::now() - Duration::from_secs(3600)
}

/// A home with two items and a broken file, all last modified an hour ago, indexed once (so
/// the index holds their stamps: files modified in the last two seconds are always read again).
fn warm_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let agenda = dir.path().join("agenda");
    std::fs::create_dir_all(&agenda).unwrap();
    std::fs::write(agenda.join("A.md"), item("aaaa")).unwrap();
    std::fs::write(agenda.join("B.md"), item("bbbb")).unwrap();
    std::fs::write(agenda.join("Broken.md"), "---\ncompleted: [\n---\n").unwrap();
    for name in ["A.md", "B.md", "Broken.md"] {
        set_mtime(&agenda.join(name), an_hour_ago());
    }
    let (store, warned) = open(dir.path());
    assert_eq!(
        texts(&store),
        vec![("A".into(), "aaaa".into()), ("B".into(), "bbbb".into())]
    );
    assert_eq!(*warned.lock().unwrap(), vec!["agenda/Broken.md"]);
    dir
}

#[test]
fn a_warm_index_reads_no_unchanged_file() {
    let home = warm_home();
    let (store, warned) = open(home.path());
    assert_eq!(texts(&store).len(), 2);
    // The broken file was not read again (it would have been warned about).
    assert!(warned.lock().unwrap().is_empty());
    // It is still known, from the index.
    assert_eq!(store.broken_files().unwrap().len(), 1);
    // Once changed, it is read (and reported) again.
    std::fs::write(home.path().join("agenda/Broken.md"), "---\nname: [\n---\n").unwrap();
    let (store, warned) = open(home.path());
    texts(&store);
    assert_eq!(*warned.lock().unwrap(), vec!["agenda/Broken.md"]);
}

#[test]
fn an_edit_in_place_with_the_same_size_and_mtime_is_seen() {
    let home = warm_home();
    let path = home.path().join("agenda/A.md");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    // Same size, same inode, the mtime put back: only the ctime tells.
    std::fs::write(&path, item("AAAA")).unwrap();
    set_mtime(&path, mtime);
    // A lookup by id (recall, pins) sees it too, with no directory check.
    let (store, _) = open(home.path());
    assert_eq!(store.item_by_id(1).unwrap().unwrap().text(), "AAAA");
    assert_eq!(texts(&store)[0], ("A".into(), "AAAA".into()));
    assert_eq!(store.item_by_id(1).unwrap().unwrap().text(), "AAAA");
}

#[test]
fn an_edit_by_rename_is_seen() {
    let home = warm_home();
    let agenda = home.path().join("agenda");
    let path = agenda.join("A.md");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    // An editor writes a new file and renames it over the old one (new inode), here with the
    // old size and mtime.
    std::fs::write(agenda.join(".A.md.swp"), item("ZZZZ")).unwrap();
    set_mtime(&agenda.join(".A.md.swp"), mtime);
    std::fs::rename(agenda.join(".A.md.swp"), &path).unwrap();
    let (store, _) = open(home.path());
    assert_eq!(texts(&store)[0], ("A".into(), "ZZZZ".into()));
}

#[test]
fn files_added_and_deleted_by_hand_are_seen() {
    let home = warm_home();
    let agenda = home.path().join("agenda");
    std::fs::write(agenda.join("C.md"), item("cccc")).unwrap();
    set_mtime(&agenda.join("C.md"), an_hour_ago());
    std::fs::remove_file(agenda.join("A.md")).unwrap();
    let (store, _) = open(home.path());
    assert!(store.item_by_id(1).unwrap().is_none(), "A is gone");
    assert_eq!(store.item_by_id(2).unwrap().unwrap().text(), "bbbb");
    assert_eq!(
        texts(&store),
        vec![("B".into(), "bbbb".into()), ("C".into(), "cccc".into())]
    );
    // A new file gets a new id; the deleted one's id is not reused.
    let (a, _) = open(home.path());
    let c = a.complete_item("C").unwrap();
    assert_eq!(c.id, 4);
}

#[test]
fn a_git_checkout_of_an_older_version_is_seen() {
    let home = warm_home();
    let agenda = home.path().join("agenda");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&agenda)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@localhost")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@localhost")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", home.path())
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "A.md"]);
    git(&["commit", "-q", "-m", "v1"]);
    // elroy changes the item; a later process indexes that version with its stamps.
    let (store, _) = open(home.path());
    store
        .add_checklist_item("A", "step", None)
        .expect("the item exists");
    set_mtime(&agenda.join("A.md"), an_hour_ago());
    let (store, _) = open(home.path());
    assert_eq!(
        store.list_items(day()).unwrap()[0].checklist_total,
        1,
        "the change is listed"
    );
    git(&["checkout", "-q", "--", "A.md"]);
    let (store, _) = open(home.path());
    let listed = store.list_items(day()).unwrap();
    assert_eq!(listed[0].stem, "A");
    assert_eq!(listed[0].checklist_total, 0, "the older version is listed");
}

#[test]
fn a_deleted_state_db_is_rebuilt_with_the_same_answers() {
    let home = warm_home();
    let answers = |store: &AgendaStore| {
        (
            texts(store),
            store.broken_files().unwrap(),
            store.due_now(jiff::Timestamp::MAX).unwrap(),
        )
    };
    let (store, _) = open(home.path());
    let before = answers(&store);
    drop(store);
    for name in ["state.db", "state.db-wal", "state.db-shm"] {
        let _ = std::fs::remove_file(home.path().join(name));
    }
    let (store, warned) = open(home.path());
    assert_eq!(answers(&store), before);
    // Rebuilding reads every file again, so the broken one is reported again.
    assert_eq!(*warned.lock().unwrap(), vec!["agenda/Broken.md"]);
}

/// Sets a directory's mtime to one fixed old time, so the index trusts it (a directory modified
/// in the last two seconds is listed again by every operation) and, set again after a change,
/// its signature looks unchanged.
fn age_dir(dir: &Path) {
    std::fs::File::open(dir)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        .unwrap();
}

/// A warm home whose `agenda/` is an hour old and whose signature the index holds.
fn trusted_home() -> tempfile::TempDir {
    let home = warm_home();
    age_dir(&home.path().join("agenda"));
    let (store, _) = open(home.path());
    texts(&store);
    home
}

#[test]
fn with_an_unchanged_directory_a_query_still_sees_an_edit_in_place_of_its_rows() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    let path = agenda.join("A.md");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, item("AAAA")).unwrap();
    set_mtime(&path, mtime);
    // Writing a file in place leaves the directory as it was: no listing, the row's stat tells.
    age_dir(&agenda);
    let (store, _) = open(home.path());
    assert_eq!(texts(&store)[0], ("A".into(), "AAAA".into()));
    assert_eq!(store.item_by_id(1).unwrap().unwrap().text(), "AAAA");
}

#[test]
fn with_a_trusted_directory_added_deleted_and_renamed_files_are_seen() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    std::fs::write(agenda.join("C.md"), item("cccc")).unwrap();
    set_mtime(&agenda.join("C.md"), an_hour_ago());
    std::fs::remove_file(agenda.join("A.md")).unwrap();
    let (store, _) = open(home.path());
    assert_eq!(
        texts(&store),
        vec![("B".into(), "bbbb".into()), ("C".into(), "cccc".into())]
    );
    // An editor's save by rename (new inode) of a file no query had asked for yet.
    age_dir(&agenda);
    let (store, _) = open(home.path());
    texts(&store);
    std::fs::write(agenda.join(".B.tmp"), item("BBBB")).unwrap();
    std::fs::rename(agenda.join(".B.tmp"), agenda.join("B.md")).unwrap();
    let (store, _) = open(home.path());
    assert_eq!(texts(&store)[0], ("B".into(), "BBBB".into()));
}

#[test]
fn an_edit_that_moves_an_item_to_another_date_is_seen_by_the_full_check() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    // B moves to another day in place; the day it moves to is not B's indexed day, so a listing
    // of that day trusts the index (the documented trade-off)...
    let moved = "---\ncompleted: false\ndate: '2026-03-21'\nstatus: created\n---\n\nbbbb";
    std::fs::write(agenda.join("B.md"), moved).unwrap();
    age_dir(&agenda);
    let (store, _) = open(home.path());
    // ...but the listing of B's old day stats B and sees that it left.
    assert_eq!(texts(&store), vec![("A".into(), "aaaa".into())]);
    let next_day = store.list_items(jiff::civil::date(2026, 3, 21)).unwrap();
    assert_eq!(next_day.len(), 1, "read again when its row was checked");
    // A file added with the directory's mtime put back is listed all the same: the directory's
    // signature has its ctime, which nobody can set back (the one stamp of the directory
    // indexes, as the memory index and the versioned home compare it).
    std::fs::write(agenda.join("D.md"), item("dddd")).unwrap();
    age_dir(&agenda);
    let (store, _) = open(home.path());
    assert_eq!(texts(&store).len(), 2, "A and D");
    // The full check (doctor) lists the directory whatever its signature and finds the same.
    assert_eq!(store.broken_files().unwrap().len(), 1);
    assert_eq!(texts(&store).len(), 2, "A and D");
}

#[test]
fn a_due_item_edited_in_place_is_seen_by_the_due_check() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    let due = |when: &str| {
        format!(
            "---\ncompleted: false\ndate: '2026-03-20'\nname: Call\nstatus: created\n\
             trigger_datetime: {when}\n---\n\nCall the bank"
        )
    };
    std::fs::write(agenda.join("Call.md"), due("2026-03-20 09:00:00+00:00")).unwrap();
    set_mtime(&agenda.join("Call.md"), an_hour_ago());
    let (store, _) = open(home.path());
    let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
    assert_eq!(store.due_now(at("2026-03-20T10:00:00Z")).unwrap().len(), 1);
    age_dir(&agenda);
    let (store, _) = open(home.path());
    assert_eq!(store.due_now(at("2026-03-20T10:00:00Z")).unwrap().len(), 1);
    // Snoozed by hand, in place.
    std::fs::write(agenda.join("Call.md"), due("2026-03-20 11:00:00+00:00")).unwrap();
    set_mtime(&agenda.join("Call.md"), an_hour_ago());
    let (store, _) = open(home.path());
    assert!(
        store
            .due_now(at("2026-03-20T10:00:00Z"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.due_item("Call").unwrap().trigger_datetime,
        Some(at("2026-03-20T11:00:00Z"))
    );
}

#[test]
fn hand_changes_next_to_elroys_own_writes_are_seen() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    let now = jiff::Timestamp::now();
    let (store, _) = open(home.path());
    // elroy's own writes: a new file, a rewrite (a new inode), a removal.
    store.add_item("eeee", day(), now).unwrap();
    store.add_checklist_item("A", "step", None).unwrap();
    store.add_item("gone", day(), now).unwrap();
    store.delete_item("gone").unwrap();
    let (store, _) = open(home.path());
    let listed = store.list_items(day()).unwrap();
    let stems: Vec<&str> = listed.iter().map(|i| i.stem.as_str()).collect();
    assert_eq!(stems, ["A", "B", "eeee"]);
    assert_eq!(listed[0].checklist_total, 1);
    // Then, right after another write by elroy, a file added and one deleted by hand.
    store.add_item("gggg", day(), now).unwrap();
    std::fs::write(agenda.join("F.md"), item("ffff")).unwrap();
    std::fs::remove_file(agenda.join("B.md")).unwrap();
    let (store, _) = open(home.path());
    assert_eq!(
        texts(&store),
        vec![
            ("A".into(), "aaaa".into()),
            ("F".into(), "ffff".into()),
            ("eeee".into(), "eeee".into()),
            ("gggg".into(), "gggg".into()),
        ]
    );
}

#[test]
fn item_names_are_matched_from_the_index_and_checked_against_the_files() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    let (store, _) = open(home.path());
    // A broken file is a candidate through its stem, and says why it cannot be changed.
    let err = store.add_checklist_item("roke", "x", None).unwrap_err();
    assert!(err.message().contains("Broken.md"), "{err}");
    // A `name` given in place by hand (directory unchanged) is found by that name.
    let named =
        "---\ncompleted: false\ndate: '2026-03-20'\nname: Dentist\nstatus: created\n---\n\nbbbb";
    std::fs::write(agenda.join("B.md"), named).unwrap();
    age_dir(&agenda);
    let (store, _) = open(home.path());
    assert_eq!(store.complete_item("dentist").unwrap().stem, "B");
    assert_eq!(texts(&store), vec![("A".into(), "aaaa".into())]);
}

/// A symlink named `*.md` in `agenda/` is not followed: its target (anywhere, here outside the
/// home) is never read as an item nor written, and the link keeps its name (a new item of that
/// name gets the next free file name).
#[cfg(unix)]
#[test]
fn a_symlinked_file_is_not_an_item_and_keeps_its_name() {
    let home = trusted_home();
    let agenda = home.path().join("agenda");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret.md");
    std::fs::write(&target, item("secret words")).unwrap();
    std::os::unix::fs::symlink(&target, agenda.join("Link.md")).unwrap();
    let (store, _) = open(home.path());
    let listed = texts(&store);
    assert_eq!(listed.len(), 2, "A and B only: {listed:?}");
    assert!(listed.iter().all(|(_, text)| text != "secret words"));
    let now: jiff::Timestamp = "2026-03-20T08:00:00Z".parse().unwrap();
    let added = store.add_item("Link", day(), now).unwrap();
    assert_eq!(added.stem, "Link-2");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        item("secret words")
    );
    // The full check (doctor) does not read through the link either.
    assert_eq!(store.broken_files().unwrap().len(), 1);
}
