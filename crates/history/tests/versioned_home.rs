//! The versioned home against real repositories in temporary homes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use elroy_history::{HistoryError, VersionedHome};
use jiff::Timestamp;

fn now() -> Timestamp {
    "2026-03-16T08:30:00Z".parse().unwrap()
}

fn write(root: &Path, path: &str, bytes: &[u8]) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, bytes).unwrap();
}

fn tool(home: &VersionedHome, name: &str) -> Option<git2::Oid> {
    home.commit_changes(now(), &|paths| format!("{name}: {}", paths.join(", ")))
        .unwrap()
}

fn summaries(home: &VersionedHome, path: Option<&str>) -> Vec<String> {
    home.history(path)
        .unwrap()
        .into_iter()
        .map(|c| c.summary)
        .collect()
}

fn head_tree_paths(root: &Path) -> Vec<String> {
    let repo = git2::Repository::open(root).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let mut paths = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            paths.push(format!("{dir}{}", entry.name().unwrap()));
        }
        git2::TreeWalkResult::Ok
    })
    .unwrap();
    paths.sort();
    paths
}

#[test]
fn initial_import_takes_only_the_stores() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for path in [
        "agenda/Water_the_plants.md",
        "memories/Trip.md",
        "memories/archive/Old.md",
        "feature-requests/Dark_mode.md",
        "MEMORY.md",
        "USER.md",
        "users/alice/agenda/a.md",
        "state.db",
        "logs/elroy.log",
        "cache/history",
        "SOUL.md",
        "agenda/.x.md.swp",
    ] {
        write(root, path, b"x\n");
    }
    let home = VersionedHome::start(root, now()).unwrap();
    assert_eq!(
        head_tree_paths(root),
        [
            ".gitignore",
            "MEMORY.md",
            "USER.md",
            "agenda/Water_the_plants.md",
            "feature-requests/Dark_mode.md",
            "memories/Trip.md",
            "memories/archive/Old.md",
            "users/alice/agenda/a.md",
        ]
    );
    let history = home.history(None).unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].summary, "initial import");
    assert_eq!(history[0].time, now());
    let repo = git2::Repository::open(root).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.author().name().unwrap(), "elroy");
    assert_eq!(
        head.committer().email().unwrap(),
        format!("elroy@{}", elroy_history::machine_name())
    );
    // A second start with nothing changed makes no commit.
    VersionedHome::start(root, now()).unwrap();
    assert_eq!(home.history(None).unwrap().len(), 1);
}

#[test]
fn an_empty_home_gets_an_initial_import_too() {
    let dir = tempfile::tempdir().unwrap();
    let home = VersionedHome::start(dir.path(), now()).unwrap();
    assert_eq!(summaries(&home, None), ["initial import"]);
    assert_eq!(head_tree_paths(dir.path()), [".gitignore"]);
}

#[test]
fn hand_edits_become_an_external_edit_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "agenda/a.md", b"one\n");
    VersionedHome::start(root, now()).unwrap();
    write(root, "agenda/a.md", b"two\n");
    write(root, "MEMORY.md", b"notes\n");
    let home = VersionedHome::start(root, now()).unwrap();
    let history = home.history(None).unwrap();
    assert_eq!(history[0].summary, "external edit");
    assert_eq!(
        history[0].message,
        "external edit\n\nMEMORY.md\nagenda/a.md"
    );
    assert_eq!(history[0].paths, ["MEMORY.md", "agenda/a.md"]);
}

#[test]
fn history_is_newest_first_and_filters_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let home = VersionedHome::start(root, now()).unwrap();
    assert_eq!(tool(&home, "get_current_date"), None);
    write(root, "agenda/a.md", b"a\n");
    tool(&home, "add_agenda_item").unwrap();
    write(root, "memories/m.md", b"m\n");
    tool(&home, "create_memory").unwrap();
    std::fs::remove_file(root.join("agenda/a.md")).unwrap();
    tool(&home, "delete_agenda_item").unwrap();
    assert_eq!(
        summaries(&home, None),
        [
            "delete_agenda_item: agenda/a.md",
            "create_memory: memories/m.md",
            "add_agenda_item: agenda/a.md",
            "initial import",
        ]
    );
    assert_eq!(
        summaries(&home, Some("agenda/a.md")),
        [
            "delete_agenda_item: agenda/a.md",
            "add_agenda_item: agenda/a.md"
        ]
    );
    assert_eq!(
        summaries(&home, Some("memories/")),
        ["create_memory: memories/m.md"]
    );
    assert_eq!(summaries(&home, Some("agenda/b.md")), Vec::<String>::new());
    let first = &home.history(None).unwrap()[0];
    assert_eq!(first.short_id.len(), 7);
    assert!(first.id.starts_with(&first.short_id));
    // `elroy history` lists the same changes without diffing trees: for every filter (a file, a
    // directory, a nested one, the whole home, a path never written) the same commits.
    write(root, "memories/archive/x.md", b"x\n");
    tool(&home, "archive").unwrap();
    write(root, "memories/archive/x.md", b"x2\n");
    write(root, "agenda/d.md", b"d\n");
    tool(&home, "both").unwrap();
    for filter in [
        None,
        Some("agenda/a.md"),
        Some("agenda"),
        Some("./memories/"),
        Some("memories/m.md"),
        Some("memories/archive"),
        Some("memories/archive/x.md"),
        Some("memories/archive/x.md/y"),
        Some("agenda/d.md"),
        Some("agenda/b.md"),
        Some(""),
    ] {
        let mut quick = Vec::new();
        home.walk_summaries(filter, &mut |change| {
            assert!(change.paths.is_empty());
            quick.push(change.summary);
            true
        })
        .unwrap();
        assert_eq!(quick, summaries(&home, filter), "{filter:?}");
    }
}

#[test]
fn undo_restores_a_deleted_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // CRLF, a missing final newline and bytes that are not UTF-8: nothing may be normalised.
    let bytes: &[u8] = b"---\r\nname: x\r\n---\r\n\xff\xfe tail";
    write(root, "agenda/Water_the_plants.md", bytes);
    let home = VersionedHome::start(root, now()).unwrap();
    std::fs::remove_file(root.join("agenda/Water_the_plants.md")).unwrap();
    tool(&home, "delete_agenda_item").unwrap();
    let undone = home.undo(now()).unwrap();
    assert_eq!(
        undone.original.summary,
        "delete_agenda_item: agenda/Water_the_plants.md"
    );
    assert_eq!(
        undone.commit.summary,
        "undo: delete_agenda_item: agenda/Water_the_plants.md"
    );
    assert_eq!(
        std::fs::read(root.join("agenda/Water_the_plants.md")).unwrap(),
        bytes
    );
    // The undo is committed: nothing is left for the next start.
    VersionedHome::start(root, now()).unwrap();
    assert_eq!(home.history(None).unwrap()[0].id, undone.commit.id);
}

#[test]
fn undo_removes_created_files_and_steps_back_past_outside_edits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "agenda/a.md", b"a1\n");
    let home = VersionedHome::start(root, now()).unwrap();
    write(root, "agenda/a.md", b"a2\n");
    tool(&home, "update_agenda_item").unwrap();
    write(root, "agenda/b.md", b"b\n");
    tool(&home, "add_agenda_item").unwrap();
    write(root, "MEMORY.md", b"by hand\n");
    VersionedHome::start(root, now()).unwrap();

    let first = home.undo(now()).unwrap();
    assert_eq!(first.original.summary, "add_agenda_item: agenda/b.md");
    assert!(!root.join("agenda/b.md").exists());
    let second = home.undo(now()).unwrap();
    assert_eq!(second.original.summary, "update_agenda_item: agenda/a.md");
    assert_eq!(std::fs::read(root.join("agenda/a.md")).unwrap(), b"a1\n");
    // The hand edit stays; the initial import is never undone.
    assert_eq!(std::fs::read(root.join("MEMORY.md")).unwrap(), b"by hand\n");
    assert!(matches!(home.undo(now()), Err(HistoryError::NothingToUndo)));
}

#[test]
fn undo_refuses_after_a_hand_edit_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let home = VersionedHome::start(root, now()).unwrap();
    write(root, "agenda/a.md", b"from elroy\n");
    tool(&home, "add_agenda_item").unwrap();
    write(root, "agenda/a.md", b"by hand\n");
    let head = home.history(None).unwrap()[0].id.clone();
    let err = home.undo(now()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "not undoing 'add_agenda_item: agenda/a.md' ({}): agenda/a.md was changed since (by hand \
             or outside elroy); restore it or edit it yourself, nothing was changed",
            &head[..7]
        )
    );
    assert_eq!(
        std::fs::read(root.join("agenda/a.md")).unwrap(),
        b"by hand\n"
    );
    assert_eq!(home.history(None).unwrap()[0].id, head);
    // Still refused once the hand edit is committed at the next start.
    VersionedHome::start(root, now()).unwrap();
    assert!(matches!(
        home.undo(now()),
        Err(HistoryError::EditedSince { .. })
    ));
}

#[test]
fn a_home_without_a_repository_has_no_history() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        VersionedHome::open(dir.path()),
        Err(HistoryError::NoRepository)
    ));
}

#[test]
fn concurrent_writers_lose_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    VersionedHome::start(&root, now()).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let root = root.clone();
            std::thread::spawn(move || {
                let home = VersionedHome::open(&root).unwrap();
                for i in 0..10 {
                    {
                        let _lock = elroy_markdown::HomeLock::acquire(&root).unwrap();
                        write(&root, &format!("agenda/t{t}_{i}.md"), b"x\n");
                    }
                    tool(&home, "add_agenda_item");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let home = VersionedHome::open(&root).unwrap();
    let mut committed: Vec<String> = home
        .history(None)
        .unwrap()
        .into_iter()
        .flat_map(|c| c.paths)
        .filter(|p| p.starts_with("agenda/"))
        .collect();
    committed.sort();
    assert_eq!(committed.len(), 40);
    committed.dedup();
    assert_eq!(committed.len(), 40);
    let repo = git2::Repository::open(&root).unwrap();
    let dirty = repo.statuses(None).unwrap().iter().count();
    assert_eq!(dirty, 0);
}

#[test]
fn a_git_lock_left_by_a_killed_process_does_not_stop_commits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let home = VersionedHome::start(root, now()).unwrap();
    // Older than the 15 minutes a live `git` command (an editor open) may hold one.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(20 * 60);
    for lock in [".git/index.lock", ".git/refs/heads/main.lock"] {
        let file = std::fs::File::create(root.join(lock)).unwrap();
        file.set_modified(old).unwrap();
    }
    write(root, "agenda/a.md", b"a\n");
    tool(&home, "add_agenda_item").unwrap();
    assert_eq!(
        summaries(&home, None),
        ["add_agenda_item: agenda/a.md", "initial import"]
    );
    assert!(!root.join(".git/index.lock").exists());
    // A fresh index lock (a git command running now) is left alone, and does not stop the commit
    // either: the tree is built from HEAD's in memory.
    std::fs::File::create(root.join(".git/index.lock")).unwrap();
    write(root, "agenda/b.md", b"b\n");
    tool(&home, "add_agenda_item").unwrap();
    assert!(root.join(".git/index.lock").exists());
    assert_eq!(summaries(&home, None)[0], "add_agenda_item: agenda/b.md");
    // Another of the kind: a lock held for minutes by a live `git commit` whose editor is open
    // (the adversarial run's case: a 2-second threshold removed it and broke the user's commit).
    std::fs::File::options()
        .write(true)
        .open(root.join(".git/index.lock"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 60))
        .unwrap();
    write(root, "agenda/b2.md", b"b2\n");
    tool(&home, "add_agenda_item").unwrap();
    assert!(root.join(".git/index.lock").exists());
    // A fresh ref lock held past the retry window: the commit fails with the lock error, the lock
    // is left alone, nothing is lost, and the change is committed once the lock is gone.
    std::fs::File::create(root.join(".git/refs/heads/main.lock")).unwrap();
    write(root, "agenda/c.md", b"c\n");
    let err = home.commit_changes(now(), &|_| "x".into()).unwrap_err();
    assert!(
        matches!(&err, HistoryError::Git(e) if e.code() == git2::ErrorCode::Locked),
        "{err}"
    );
    assert!(root.join(".git/refs/heads/main.lock").exists());
    assert_eq!(std::fs::read(root.join("agenda/c.md")).unwrap(), b"c\n");
    std::fs::remove_file(root.join(".git/refs/heads/main.lock")).unwrap();
    std::fs::remove_file(root.join(".git/index.lock")).unwrap();
    tool(&home, "add_agenda_item").unwrap();
    assert_eq!(
        summaries(&home, None),
        [
            "add_agenda_item: agenda/c.md",
            "add_agenda_item: agenda/b2.md",
            "add_agenda_item: agenda/b.md",
            "add_agenda_item: agenda/a.md",
            "initial import"
        ]
    );
    assert_eq!(
        head_tree_paths(root),
        [
            ".gitignore",
            "agenda/a.md",
            "agenda/b.md",
            "agenda/b2.md",
            "agenda/c.md"
        ]
    );
}

/// The last change's files.
fn last_paths(home: &VersionedHome) -> Vec<String> {
    home.history(None).unwrap().remove(0).paths
}

/// The commit `.git/elroy-walk.json` (the stamp of the last walk) is for, if any.
fn stamp_head(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join(".git/elroy-walk.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    Some(value["head"].as_str().unwrap().to_owned())
}

fn head_id(root: &Path) -> String {
    let repo = git2::Repository::open(root).unwrap();
    repo.head().unwrap().target().unwrap().to_string()
}

#[test]
fn a_warm_walk_sees_every_kind_of_hand_edit() {
    // Once a walk has stamped the home, the next one stats each store file and reads
    // nothing else when nothing changed; each kind of hand edit is still seen.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for path in [
        "agenda/a.md",
        "agenda/b.md",
        "memories/m.md",
        "memories/archive/old.md",
        "MEMORY.md",
        "users/alice/agenda/x.md",
    ] {
        write(root, path, path.as_bytes());
    }
    let home = VersionedHome::start(root, now()).unwrap();
    assert!(!home.commit_outside_edits(now()).unwrap());
    assert_eq!(
        stamp_head(root),
        Some(head_id(root)),
        "a walk stamps the home"
    );
    assert!(!home.commit_outside_edits(now()).unwrap());

    // In place, same size, modification time put back: only its ctime tells.
    let file = root.join("agenda/a.md");
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, b"AGENDA/A.MD").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert!(home.commit_outside_edits(now()).unwrap());
    assert_eq!(last_paths(&home), ["agenda/a.md"]);
    assert_eq!(summaries(&home, None)[0], "external edit");

    // Added, deleted, a directory deleted whole, a user home's file, a notebook file deleted.
    write(root, "agenda/c.md", b"c\n");
    assert!(home.commit_outside_edits(now()).unwrap());
    assert_eq!(last_paths(&home), ["agenda/c.md"]);
    std::fs::remove_file(root.join("memories/m.md")).unwrap();
    assert!(home.commit_outside_edits(now()).unwrap());
    assert_eq!(last_paths(&home), ["memories/m.md"]);
    std::fs::remove_dir_all(root.join("memories/archive")).unwrap();
    assert!(home.commit_outside_edits(now()).unwrap());
    assert_eq!(last_paths(&home), ["memories/archive/old.md"]);
    write(root, "users/alice/agenda/x.md", b"edited\n");
    std::fs::remove_file(root.join("MEMORY.md")).unwrap();
    assert!(home.commit_outside_edits(now()).unwrap());
    assert_eq!(last_paths(&home), ["MEMORY.md", "users/alice/agenda/x.md"]);
    assert!(!home.commit_outside_edits(now()).unwrap());

    // elroy's own commit moves the stamp along, so the next walk is still the quick one.
    write(root, "agenda/b.md", b"by a tool\n");
    tool(&home, "add_agenda_item_update").unwrap();
    assert_eq!(stamp_head(root), Some(head_id(root)));
    assert!(!home.commit_outside_edits(now()).unwrap());

    // A `git checkout` of an older version of a file, then a commit by the user's git: HEAD moved
    // outside elroy, so the walk is libgit2's (nothing to commit), and stamps the home again.
    let first = {
        let repo = git2::Repository::open(root).unwrap();
        let mut walk = repo.revwalk().unwrap();
        walk.push_head().unwrap();
        walk.last().unwrap().unwrap().to_string()
    };
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["checkout", &first, "--", "agenda/a.md"]);
    assert_eq!(std::fs::read(&file).unwrap(), b"agenda/a.md");
    assert!(home.commit_outside_edits(now()).unwrap());
    assert_eq!(last_paths(&home), ["agenda/a.md"]);
    write(root, "agenda/b.md", b"committed by the user\n");
    git(&[
        "-c",
        "user.name=u",
        "-c",
        "user.email=u@localhost",
        "commit",
        "-q",
        "-am",
        "by hand",
    ]);
    assert!(!home.commit_outside_edits(now()).unwrap());
    assert_eq!(summaries(&home, None)[0], "by hand");
    assert_eq!(stamp_head(root), Some(head_id(root)));
}
