//! The versioned home end to end: every change elroy makes to the markdown stores
//! is a commit in `$ELROY_HOME`; `elroy history [PATH]` lists them; `elroy undo` reverts the last one
//! elroy made, refusing after a hand edit; `versioned_home: false` turns it all off.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::Output;

use common::{TestHome, stderr, stdout};

const NOW: &str = "2026-03-16T08:30:00Z";

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
    assert_eq!(stderr(&out), "", "{tool} warned");
    stdout(&out)
}

/// `elroy history [PATH]` as (time, message) pairs; checks each line's short id.
fn history(home: &TestHome, path: Option<&str>) -> Vec<String> {
    let mut args = vec!["history"];
    args.extend(path);
    let out = run(home, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|line| {
            let (id, rest) = line.split_once(' ').unwrap();
            assert_eq!(id.len(), 7, "{line}");
            assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{line}");
            rest.to_owned()
        })
        .collect()
}

/// The message of the newest commit.
fn head_message(home: &TestHome) -> String {
    let repo = git2::Repository::open(home.home()).unwrap();
    let commit = repo.head().unwrap().peel_to_commit().unwrap();
    commit.message().unwrap().to_owned()
}

fn head_id(home: &TestHome) -> git2::Oid {
    let repo = git2::Repository::open(home.home()).unwrap();
    repo.head().unwrap().peel_to_commit().unwrap().id()
}

#[test]
fn undo_after_delete_agenda_item_restores_the_file_byte_for_byte() {
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Water the plants"}"#);
    let file = home.home().join("agenda/Water_the_plants.md");
    let before = std::fs::read(&file).unwrap();
    call(
        &home,
        "delete_agenda_item",
        r#"{"item_name":"Water the plants"}"#,
    );
    assert!(!file.exists());
    assert_eq!(
        history(&home, None),
        [
            "2026-03-16 08:30:00 delete_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 add_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 initial import",
        ]
    );

    let out = run(&home, &["undo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let undo_line = stdout(&out);
    assert!(
        undo_line.starts_with("Undid delete_agenda_item: agenda/Water_the_plants.md ("),
        "{undo_line}"
    );
    assert!(
        undo_line.ends_with("\n  restored agenda/Water_the_plants.md\n"),
        "{undo_line}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(
        history(&home, Some("agenda/Water_the_plants.md"))[0],
        "2026-03-16 08:30:00 undo: delete_agenda_item: agenda/Water_the_plants.md"
    );
    // The agenda sees the item again.
    let listing = call(&home, "list_agenda_items", "{}");
    assert!(listing.contains("Water the plants"), "{listing}");
    // Starting again finds nothing uncommitted.
    assert!(!history(&home, None)[0].ends_with("external edit"));
}

#[test]
fn undo_refuses_after_a_hand_edit_and_changes_nothing() {
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Water the plants"}"#);
    let file = home.home().join("agenda/Water_the_plants.md");
    let mut edited = std::fs::read(&file).unwrap();
    edited.extend_from_slice(b"Use the rain water.\n");
    std::fs::write(&file, &edited).unwrap();
    let head = head_id(&home);

    let out = run(&home, &["undo"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    let message = stderr(&out);
    assert!(
        message.starts_with("elroy: not undoing 'add_agenda_item: agenda/Water_the_plants.md' ("),
        "{message}"
    );
    assert!(
        message
            .contains("): agenda/Water_the_plants.md was changed since (by hand or outside elroy)"),
        "{message}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), edited);
    // The hand edit is recorded as what it is (undo committed it before looking), nothing else.
    assert_ne!(head_id(&home), head);
    assert_eq!(
        head_message(&home),
        "external edit\n\nagenda/Water_the_plants.md"
    );
}

#[test]
fn history_names_the_tool_and_the_item_and_filters_by_path() {
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Buy milk"}"#);
    call(
        &home,
        "create_memory",
        r#"{"name":"Rome trip","text":"Flight on Friday."}"#,
    );
    call(&home, "get_current_date", "{}");
    let all = history(&home, None);
    assert_eq!(
        all,
        [
            "2026-03-16 08:30:00 create_memory: memories/Rome_trip.md",
            "2026-03-16 08:30:00 add_agenda_item: agenda/Buy_milk.md",
            "2026-03-16 08:30:00 initial import",
        ]
    );
    assert_eq!(
        history(&home, Some("memories")),
        ["2026-03-16 08:30:00 create_memory: memories/Rome_trip.md"]
    );
    // A path to the file (here absolute) works as well as one relative to the home.
    let absolute = home.home().join("agenda/Buy_milk.md");
    assert_eq!(
        history(&home, Some(absolute.to_str().unwrap())),
        ["2026-03-16 08:30:00 add_agenda_item: agenda/Buy_milk.md"]
    );
    // state.db, logs and the lock are never versioned.
    let repo = git2::Repository::open(home.home()).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let mut names: Vec<String> = tree.iter().map(|e| e.name().unwrap().to_owned()).collect();
    names.sort();
    assert_eq!(names, [".gitignore", "agenda", "memories"]);
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.author().name().unwrap(), "elroy");
    // `elroy@MACHINE`: the machine's name (the host name here) for `elroy sync`.
    assert!(head.author().email().unwrap().starts_with("elroy@"));
}

#[test]
fn versioned_home_false_creates_no_repository() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .env("ELROY_VERSIONED_HOME", "false")
        .args([
            "tools",
            "call",
            "add_agenda_item",
            "--args",
            r#"{"text":"Buy milk"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(home.home().join("agenda/Buy_milk.md").exists());
    assert!(!home.home().join(".git").exists());
    assert!(!home.home().join(".gitignore").exists());
    let out = home
        .cmd()
        .env("ELROY_VERSIONED_HOME", "false")
        .arg("undo")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "elroy: the versioned home is off (versioned_home: false), so there is no history\n"
    );
    assert!(!home.home().join(".git").exists());
}

#[test]
fn hand_edits_are_committed_as_external_edit_when_the_history_is_read() {
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Buy milk"}"#);
    std::fs::write(
        home.home().join("MEMORY.md"),
        "# Notes\n\nPrefers oat milk.\n",
    )
    .unwrap();
    let file = home.home().join("agenda/Buy_milk.md");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("Two litres.\n");
    std::fs::write(&file, text).unwrap();
    // A read-only tool call does not walk the home (its time does not grow with the
    // home); `elroy history` commits the hand edits first, so it shows them at once.
    call(&home, "list_agenda_items", "{}");
    assert_eq!(head_message(&home), "add_agenda_item: agenda/Buy_milk.md");
    let all = history(&home, None);
    assert_eq!(all[0], "2026-03-16 08:30:00 external edit");
    assert_eq!(all.len(), 3);
    assert_eq!(
        history(&home, Some("MEMORY.md")),
        ["2026-03-16 08:30:00 external edit"]
    );
    // An external edit is not elroy's change: undo passes over it, and refuses because the item
    // it would revert was edited by hand.
    let out = run(&home, &["undo"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("'add_agenda_item: agenda/Buy_milk.md'"));
}

#[test]
fn concurrent_processes_leave_a_consistent_repository() {
    const PROCESSES: usize = 4;
    const ITEMS_EACH: usize = 25;
    let home = TestHome::new();
    std::thread::scope(|scope| {
        for p in 0..PROCESSES {
            let home = &home;
            scope.spawn(move || {
                for i in 0..ITEMS_EACH {
                    let out = home.call(
                        "add_agenda_item",
                        &format!(r#"{{"text":"process {p} item {i}"}}"#),
                    );
                    assert!(out.status.success(), "{p}/{i}: {}", stderr(&out));
                    assert_eq!(stderr(&out), "", "{p}/{i} warned");
                }
            });
        }
    });
    let repo = git2::Repository::open(home.home()).unwrap();
    // Nothing left uncommitted, nothing half-staged.
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true);
    let dirty: Vec<String> = repo
        .statuses(Some(&mut options))
        .unwrap()
        .iter()
        .map(|e| e.path().unwrap().to_owned())
        .collect();
    assert_eq!(dirty, Vec::<String>::new());
    // Every item is in exactly one commit, made by add_agenda_item.
    let mut walk = repo.revwalk().unwrap();
    walk.push_head().unwrap();
    let mut added: Vec<String> = Vec::new();
    for id in walk {
        let commit = repo.find_commit(id.unwrap()).unwrap();
        let Some(parent) = commit.parents().next() else {
            continue;
        };
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        assert!(
            message.starts_with("add_agenda_item: agenda/process_"),
            "{message}"
        );
        let diff = repo
            .diff_tree_to_tree(
                Some(&parent.tree().unwrap()),
                Some(&commit.tree().unwrap()),
                None,
            )
            .unwrap();
        for delta in diff.deltas() {
            assert_eq!(delta.status(), git2::Delta::Added);
            added.push(
                delta
                    .new_file()
                    .path()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    added.sort();
    let expected: Vec<String> = {
        let mut v: Vec<String> = (0..PROCESSES)
            .flat_map(|p| (0..ITEMS_EACH).map(move |i| format!("agenda/process_{p}_item_{i}.md")))
            .collect();
        v.sort();
        v
    };
    assert_eq!(added, expected);
}

#[test]
fn a_model_turns_tool_call_is_committed_like_a_direct_one() {
    let server = elroy_testkit::MockServer::start();
    server
        .push(elroy_testkit::Reply::tool_call(
            "add_agenda_item",
            r#"{"text":"Water the plants"}"#,
        ))
        .push(elroy_testkit::Reply::text("Added."));
    let home = common::home_with_model(&server, "");
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .args(["message", "Add an agenda item: water the plants"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        history(&home, None),
        [
            "2026-03-16 08:30:00 add_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 initial import",
        ]
    );
}

/// Holds the git lock files `names` (relative to `.git/`) in `home`, as a `git` command the user
/// runs would: created at once, kept fresh (so elroy's stale-lock cleanup, which only takes locks
/// older than 2 s for leftovers of killed processes, leaves them alone) until `release` says, then
/// removed.
struct HeldLocks {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HeldLocks {
    /// Holds the locks until [`HeldLocks::release`]; with `release`, `(file, exists, after)`, the
    /// locks are released by themselves `after` the moment `file` exists (or no longer does, when
    /// `exists` is false): the tool has made its change, its commit comes next.
    fn hold(
        home: &TestHome,
        names: &[&str],
        release: Option<(std::path::PathBuf, bool, std::time::Duration)>,
    ) -> Self {
        use std::sync::atomic::Ordering;
        let git = home.home().join(".git");
        let paths: Vec<std::path::PathBuf> = names.iter().map(|n| git.join(n)).collect();
        for path in &paths {
            std::fs::write(path, "held by a git command\n").unwrap();
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut changed_at: Option<std::time::Instant> = None;
            while !flag.load(Ordering::SeqCst) {
                if let Some((file, exists, after)) = &release {
                    if changed_at.is_none() && file.exists() == *exists {
                        changed_at = Some(std::time::Instant::now());
                    }
                    if changed_at.is_some_and(|t| t.elapsed() >= *after) {
                        break;
                    }
                }
                for path in &paths {
                    let _ = std::fs::File::options()
                        .write(true)
                        .open(path)
                        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            for path in &paths {
                let _ = std::fs::remove_file(path);
            }
        });
        HeldLocks {
            stop,
            thread: Some(thread),
        }
    }

    fn release(mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for HeldLocks {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Kind: a history commit that fails transiently (a git lock file held for a
/// moment by another program). The issue's example: `.git/index.lock` held for 0.4 s while
/// `delete_agenda_item` runs; and another of the kind: the branch's ref lock
/// (`refs/heads/main.lock`) held for 0.4 s while `create_memory` runs. Both commits are made
/// under the tool's name, nothing shows as `external edit`, and `elroy undo` reverts the change.
#[test]
fn a_briefly_held_git_lock_does_not_lose_the_commit() {
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Water the plants"}"#);
    let file = home.home().join("agenda/Water_the_plants.md");
    let before = std::fs::read(&file).unwrap();
    let locks = HeldLocks::hold(
        &home,
        &["index.lock"],
        Some((file.clone(), false, std::time::Duration::from_millis(400))),
    );
    let out = call(
        &home,
        "delete_agenda_item",
        r#"{"item_name":"Water the plants"}"#,
    );
    locks.release();
    assert!(!out.contains("not recorded"), "{out}");
    assert!(!file.exists());
    assert_eq!(
        history(&home, None)[0],
        "2026-03-16 08:30:00 delete_agenda_item: agenda/Water_the_plants.md"
    );

    let memory = home.home().join("memories/Passport.md");
    let locks = HeldLocks::hold(
        &home,
        &["refs/heads/main.lock"],
        Some((memory.clone(), true, std::time::Duration::from_millis(400))),
    );
    let out = call(
        &home,
        "create_memory",
        r#"{"name":"Passport","text":"Renew before June."}"#,
    );
    locks.release();
    assert!(!out.contains("not recorded"), "{out}");
    assert!(memory.exists());
    // A later start finds nothing uncommitted: no external edit.
    call(&home, "get_current_date", "{}");
    assert_eq!(
        history(&home, None),
        [
            "2026-03-16 08:30:00 create_memory: memories/Passport.md",
            "2026-03-16 08:30:00 delete_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 add_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 initial import",
        ]
    );
    let out = run(&home, &["undo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!memory.exists());
    let out = run(&home, &["undo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

/// The same kind past the retry window: the git locks are held for the whole
/// call, so the commit cannot be made. The tool output says the change was saved but not
/// recorded; the next start commits it under the tool's name (never `external edit`), and
/// `elroy undo` reverts it. An undo whose own commit is blocked the same way is recorded at the
/// next start too.
#[test]
fn a_git_lock_held_past_the_retry_window_is_recorded_at_the_next_start() {
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Water the plants"}"#);
    let file = home.home().join("agenda/Water_the_plants.md");
    let before = std::fs::read(&file).unwrap();
    let locks = HeldLocks::hold(&home, &["index.lock", "refs/heads/main.lock"], None);
    let out = run(
        &home,
        &[
            "tools",
            "call",
            "delete_agenda_item",
            "--args",
            r#"{"item_name":"Water the plants"}"#,
        ],
    );
    locks.release();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "the change was saved, but not recorded in the history (git: failed to lock file '"
        ) && text.contains(
            "elroy records it as 'delete_agenda_item: agenda/Water_the_plants.md' the next time it starts"
        ),
        "{text}"
    );
    assert!(!file.exists());
    assert!(home.home().join(".git/elroy-pending.jsonl").exists());

    // The next start, or `elroy history`, commits it under the tool's name.
    let shown = history(&home, None);
    assert!(!home.home().join(".git/elroy-pending.jsonl").exists());
    assert_eq!(
        shown,
        [
            "2026-03-16 08:30:00 delete_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 add_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 initial import",
        ]
    );

    // An undo whose commit is blocked: the file is restored, the undo is journaled.
    let locks = HeldLocks::hold(&home, &["refs/heads/main.lock"], None);
    let out = run(&home, &["undo"]);
    locks.release();
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains("the change was saved, but not recorded in the history")
            && message.contains("'undo: delete_agenda_item: agenda/Water_the_plants.md'"),
        "{message}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // `elroy undo` itself commits what is journaled first: the undo is recorded, and the next
    // undo reverts the add (the delete is undone already).
    let out = run(&home, &["undo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("Undid add_agenda_item: agenda/Water_the_plants.md ("),
        "{}",
        stdout(&out)
    );
    assert!(!file.exists());
    let all = history(&home, None);
    assert_eq!(
        all[..3],
        [
            "2026-03-16 08:30:00 undo: add_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 undo: delete_agenda_item: agenda/Water_the_plants.md",
            "2026-03-16 08:30:00 delete_agenda_item: agenda/Water_the_plants.md",
        ]
    );
    assert!(all.iter().all(|l| !l.ends_with("external edit")), "{all:?}");
}

/// What the git program's `git status --porcelain` prints for the home.
fn git_status(home: &TestHome) -> String {
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(home.home())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_index_stays_current_so_git_status_is_clean_after_every_change() {
    // Each commit writes `.git/index` (with stat data) for the paths it committed, so the
    // user's `git status` is clean and fast, and elroy's start-up walk reads no unchanged file.
    let home = TestHome::new();
    call(&home, "add_agenda_item", r#"{"text":"Buy milk"}"#);
    assert_eq!(git_status(&home), "");
    call(
        &home,
        "add_agenda_item_update",
        r#"{"item_name":"Buy milk","note":"oat"}"#,
    );
    assert_eq!(git_status(&home), "");
    call(&home, "delete_agenda_item", r#"{"item_name":"Buy milk"}"#);
    assert_eq!(git_status(&home), "");
    assert!(run(&home, &["undo"]).status.success());
    assert_eq!(git_status(&home), "");
    // A hand edit shows in `git status` until the next start commits it as an external edit.
    std::fs::write(home.home().join("USER.md"), "Likes tea.\n").unwrap();
    assert_eq!(git_status(&home), "?? USER.md\n");
    call(&home, "get_current_date", "{}");
    assert_eq!(history(&home, None)[0], "2026-03-16 08:30:00 external edit");
    assert_eq!(git_status(&home), "");
}
