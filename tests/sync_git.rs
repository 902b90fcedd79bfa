//! `elroy sync` in a home that a person also uses with their own `git`: a conflicted
//! hand pull, a detached HEAD, a push the remote's hook refuses, git's lock files left by a
//! killed elroy or held by a running `git`. Each test drives the real `git` program and the real
//! binary on temporary homes with a bare remote, and ends with every repository checked: `git
//! fsck` clean, no commit on any branch adding a conflict-marker line, the index matching HEAD,
//! and `elroy doctor` exiting 0.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{stderr, stdout};
use crate::sync::{Machine, assert_no_markers, bare, store_files};

/// The person's own `git` in `dir`: no system or global configuration, a fixed identity, no
/// editor.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Person")
        .env("GIT_AUTHOR_EMAIL", "person@example.invalid")
        .env("GIT_COMMITTER_NAME", "Person")
        .env("GIT_COMMITTER_EMAIL", "person@example.invalid")
        .env("GIT_EDITOR", "true")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap()
}

pub(crate) fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// The commit `rev` is at in the repository `dir` (`None`: no such ref).
fn rev(dir: &Path, rev: &str) -> Option<String> {
    let out = git(dir, &["rev-parse", "--verify", "--quiet", rev]);
    out.status.success().then(|| stdout(&out).trim().to_owned())
}

/// Every check the issue asks for after each test, on each home and on the remote.
pub(crate) fn assert_healthy(machines: &[&Machine], remote: &Path) {
    for repo in machines
        .iter()
        .map(|m| m.root())
        .chain([remote.to_path_buf()])
    {
        let out = git(&repo, &["fsck", "--no-dangling"]);
        assert!(
            out.status.success() && !stderr(&out).contains("error"),
            "git fsck in {}: {}{}",
            repo.display(),
            stdout(&out),
            stderr(&out)
        );
        // No commit reachable from any branch adds a marker line.
        let log = git_ok(&repo, &["log", "--all", "-p", "--format=commit %H"]);
        assert!(
            !log.lines()
                .any(|l| l.starts_with("+<<<<<<<") || l.starts_with("+>>>>>>>")),
            "a commit adds conflict markers in {}:\n{log}",
            repo.display()
        );
    }
    for m in machines {
        // The index matches HEAD.
        let out = git(&m.root(), &["diff", "--cached", "--quiet"]);
        assert!(
            out.status.success(),
            "{}: index differs from HEAD: {}",
            m.name,
            git_ok(&m.root(), &["status", "--short"])
        );
        let out = m.run(&["doctor"]);
        assert!(
            out.status.success(),
            "doctor on {}: {}",
            m.name,
            stdout(&out)
        );
        assert_no_markers(&m.root());
    }
}

#[test]
fn a_hand_pull_that_conflicts_is_never_committed_pushed_or_undone() {
    // The issue's case: a `git pull` (merge) in the home that conflicts; another in-progress
    // state of the kind: a conflicted `git pull --rebase`.
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let url = remote.to_str().unwrap();
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"Plan the trip"}"#);
    a.sync(&remote);
    b.sync(&remote);
    a.call(
        "add_agenda_item_update",
        r#"{"item_name":"Plan the trip","note":"Booked the train"}"#,
    );
    b.call(
        "add_agenda_item_update",
        r#"{"item_name":"Plan the trip","note":"Asked for leave"}"#,
    );
    b.sync(&remote);
    let remote_head = rev(&remote, "refs/heads/main");
    for (n, (pull, abort)) in [
        (["pull", "--no-rebase", "--no-edit"], "git merge --abort"),
        (["pull", "--rebase", "--no-edit"], "git rebase --abort"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = git(&a.root(), &[pull[0], pull[1], pull[2], url, "main"]);
        assert!(!out.status.success(), "the pull should conflict");
        let item = std::fs::read_to_string(a.root().join("agenda/Plan_the_trip.md")).unwrap();
        assert!(item.contains("<<<<<<<"), "{item}");
        let head = rev(&a.root(), "HEAD");

        // The sync refuses, naming the state and the command that ends it.
        let out = a.run(&["sync"]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        assert!(stderr(&out).contains(abort), "{}", stderr(&out));
        assert!(stderr(&out).contains("nothing was changed"));
        assert!(!stdout(&out).contains("Pushed"), "{}", stdout(&out));
        assert_eq!(rev(&remote, "refs/heads/main"), remote_head);
        assert_eq!(rev(&a.root(), "HEAD"), head);

        // A tool call still saves what was asked, and says why it is not recorded.
        let text = a.call("add_agenda_item", &format!(r#"{{"text":"Buy milk {n}"}}"#));
        assert!(
            text.contains("not recorded in the history") && text.contains(abort),
            "{text}"
        );
        assert!(a.root().join(format!("agenda/Buy_milk_{n}.md")).exists());
        assert_eq!(rev(&a.root(), "HEAD"), head);

        // Undo refuses too; doctor names the state and the file with markers.
        let out = a.run(&["undo"]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        assert!(stderr(&out).contains(abort), "{}", stderr(&out));
        let out = a.run(&["doctor"]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let report = stdout(&out);
        assert!(report.contains(abort), "{report}");
        assert!(
            report.contains("agenda/Plan_the_trip.md holds git conflict markers"),
            "{report}"
        );

        git_ok(&a.root(), &abort.split(' ').skip(1).collect::<Vec<_>>());
    }
    // Once git has finished, the sync merges by structure, records the calls made meanwhile under
    // their own names, and pushes.
    let report = a.sync(&remote);
    assert!(report.contains("Pushed"), "{report}");
    let history = stdout(&a.run(&["history"]));
    for n in 0..2 {
        assert!(
            history.contains(&format!("add_agenda_item: agenda/Buy_milk_{n}.md")),
            "{history}"
        );
    }
    b.sync(&remote);
    assert_eq!(store_files(&a.root()), store_files(&b.root()));
    let item = std::fs::read_to_string(b.root().join("agenda/Plan_the_trip.md")).unwrap();
    assert!(
        item.contains("Booked the train") && item.contains("Asked for leave"),
        "{item}"
    );
    assert_healthy(&[&a, &b], &remote);
}

#[test]
fn a_detached_head_is_refused_and_no_push_is_reported() {
    // The issue's case: `git checkout --detach HEAD~1`; another of the kind: `git checkout`
    // of a commit id.
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"Water the plants"}"#);
    a.call("add_agenda_item", r#"{"text":"Call mom"}"#);
    a.sync(&remote);
    let first = rev(&a.root(), "HEAD~1").unwrap();
    let main = rev(&a.root(), "refs/heads/main");
    let remote_head = rev(&remote, "refs/heads/main");
    for (n, target) in [
        vec!["checkout", "--detach", "HEAD~1"],
        vec!["checkout", &first],
    ]
    .into_iter()
    .enumerate()
    {
        git_ok(&a.root(), &target);
        let text = a.call("add_agenda_item", &format!(r#"{{"text":"Pay rent {n}"}}"#));
        assert!(
            text.contains("not recorded in the history") && text.contains("git switch main"),
            "{text}"
        );
        let out = a.run(&["sync"]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        assert!(
            stderr(&out).contains("HEAD is detached") && stderr(&out).contains("git switch main"),
            "{}",
            stderr(&out)
        );
        assert!(!stdout(&out).contains("Pushed"), "{}", stdout(&out));
        assert_eq!(rev(&remote, "refs/heads/main"), remote_head);
        assert_eq!(rev(&a.root(), "refs/heads/main"), main);
        let out = a.run(&["doctor"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(stdout(&out).contains("detached"), "{}", stdout(&out));
        git_ok(&a.root(), &["switch", "main"]);
    }
    let report = a.sync(&remote);
    assert!(
        report.contains("Pay rent 0") && report.contains("Pay rent 1"),
        "{report}"
    );
    assert_eq!(rev(&remote, "refs/heads/main"), rev(&a.root(), "HEAD"));
    b.sync(&remote);
    assert_eq!(store_files(&a.root()), store_files(&b.root()));
    assert_healthy(&[&a, &b], &remote);
}

#[test]
fn a_push_the_remote_refuses_shows_its_reason_and_keeps_the_commits() {
    // The issue's case: a `pre-receive` hook on the bare remote, given as a path (pushed through
    // `git`, which runs the hook, because the remote has one); another of the kind: an `update`
    // hook on a `file://` URL.
    for (hook, file_url) in [("pre-receive", false), ("update", true)] {
        let dir = tempfile::tempdir().unwrap();
        let remote = bare(dir.path());
        let url = if file_url {
            format!("file://{}", remote.display())
        } else {
            remote.display().to_string()
        };
        let script = remote.join("hooks").join(hook);
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(
            &script,
            "#!/bin/sh\necho 'pushes are closed for maintenance' >&2\nexit 1\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let a = Machine::new("laptop");
        a.call("add_agenda_item", r#"{"text":"Water the plants"}"#);
        for _ in 0..2 {
            let out = a.run(&["sync", "--remote", &url]);
            assert_eq!(out.status.code(), Some(1), "{hook}: {}", stdout(&out));
            let err = stderr(&out);
            assert!(
                err.contains("pushes are closed for maintenance") && err.contains("refused"),
                "{hook}: {err}"
            );
            assert!(!err.contains("other machines pushed"), "{hook}: {err}");
            assert!(!stdout(&out).contains("Pushed"), "{}", stdout(&out));
            assert_eq!(rev(&remote, "refs/heads/main"), None);
        }
        // This machine's commits stay, and go out once the remote takes them.
        let history = stdout(&a.run(&["history"]));
        assert!(
            history.contains("add_agenda_item: agenda/Water_the_plants.md"),
            "{history}"
        );
        std::fs::remove_file(&script).unwrap();
        let out = a.run(&["sync", "--remote", &url]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("Pushed"), "{}", stdout(&out));
        assert_eq!(rev(&remote, "refs/heads/main"), rev(&a.root(), "HEAD"));
        assert_healthy(&[&a], &remote);
    }
}

#[test]
fn git_locks_of_a_killed_elroy_go_at_once_and_a_running_gits_are_waited_for_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let a = Machine::new("laptop");
    let b = Machine::new("desktop");
    a.call("add_agenda_item", r#"{"text":"Water the plants"}"#);
    a.sync(&remote);
    let git_dir = a.root().join(".git");

    // What a SIGKILL in the middle of a commit leaves: elroy's record of its git write (a pid
    // that runs no elroy, a start time that is not its) and the lock taken after it. The issue's
    // case is the branch's lock; another lock of the kind: `.git/index.lock`.
    for (n, lock) in ["refs/heads/main.lock", "index.lock"]
        .into_iter()
        .enumerate()
    {
        std::fs::write(git_dir.join("elroy-git-write"), "999999999 1\n").unwrap();
        std::fs::write(git_dir.join(lock), "").unwrap();
        a.call("add_agenda_item", &format!(r#"{{"text":"Errand {n}"}}"#));
        // (The tool call already removed it: the first elroy command after the kill.)
        assert!(!git_dir.join(lock).exists(), "{lock}");
        std::fs::write(git_dir.join("elroy-git-write"), "999999999 1\n").unwrap();
        std::fs::write(git_dir.join(lock), "").unwrap();
        let report = a.sync(&remote);
        assert!(
            report.contains(&format!(
                "Note: removed .git/{lock}, left by elroy (pid 999999999) killed while it wrote"
            )),
            "{report}"
        );
        assert!(report.contains(&format!("Errand {n}")), "{report}");
        assert!(!git_dir.join(lock).exists());
    }

    // Another of the kind: a sync killed during its fetch (which runs without the home lock)
    // leaves the tracking ref's lock; only a sync writes there, and one sync runs at a time.
    std::fs::write(git_dir.join("refs/remotes/sync/main.lock"), "").unwrap();
    let report = a.sync(&remote);
    assert!(
        report.contains("Note: removed .git/refs/remotes/sync/main.lock, left by an elroy sync"),
        "{report}"
    );

    // A `git` command running now holds a lock (no record of elroy's): the sync waits, then
    // stops naming it and changes nothing. The issue's case is `.git/index.lock`; another of the
    // kind: the branch's lock.
    for lock in ["index.lock", "refs/heads/main.lock"] {
        b.call(
            "add_agenda_item",
            &format!(r#"{{"text":"From the desktop {lock}"}}"#),
        );
        b.sync(&remote);
        std::fs::write(git_dir.join(lock), "").unwrap();
        let head = rev(&a.root(), "HEAD");
        let files = store_files(&a.root());
        let out = a.run(&["sync"]);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(".git/{lock} exists"))
                && err.contains("a git command is running"),
            "{err}"
        );
        assert_eq!(rev(&a.root(), "HEAD"), head);
        assert_eq!(store_files(&a.root()), files);
        assert!(git_dir.join(lock).exists());
        std::fs::remove_file(git_dir.join(lock)).unwrap();
        let report = a.sync(&remote);
        assert!(report.contains("From the desktop"), "{report}");
    }

    // Someone else's lock older than any git command holds one: today's rule (removed), named.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(20 * 60);
    for n in 0..2 {
        let file = std::fs::File::create(git_dir.join("index.lock")).unwrap();
        file.set_modified(old).unwrap();
        drop(file);
        if n == 0 {
            let report = a.sync(&remote);
            assert!(
                report.contains("Note: removed .git/index.lock, 20 minutes old"),
                "{report}"
            );
        } else {
            // A tool call removes it too (and commits).
            a.call("add_agenda_item", r#"{"text":"Last errand"}"#);
        }
        assert!(!git_dir.join("index.lock").exists());
    }
    b.sync(&remote);
    a.sync(&remote);
    b.sync(&remote);
    assert_eq!(store_files(&a.root()), store_files(&b.root()));
    assert_healthy(&[&a, &b], &remote);
}
