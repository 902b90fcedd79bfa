//! Whole or absent, and reads that never need to write (`docs/formats.md#multi-step-writes`), on
//! the real binary: a nearly full disk (a real `ENOSPC` from a small `tmpfs`, root only) never
//! gives "error" with the change made, and a retry never duplicates; on a full disk and in a
//! read-only home (a user that cannot write, through `setpriv`, and a read-only mount) listing,
//! printing and recall work and writes name the cause; after each, `elroy doctor` is clean or
//! names the problem, and `elroy doctor --fix` repairs it. Tests that cannot run here print
//! `SKIPPED: <reason>`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::reliability::{Tmpfs, fill};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use common::{TestHome, stderr, stdout};

const NOW: &str = "2026-03-16T08:30:00Z";

fn elroy(home: &TestHome) -> Command {
    let mut cmd = home.cmd();
    cmd.env("ELROY_NOW", NOW);
    cmd
}

fn call(home: &TestHome, tool: &str, args: &str) -> Output {
    elroy(home)
        .args(["tools", "call", tool, "--args", args])
        .output()
        .unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: exit {:?}\n{}",
        out.status.code(),
        stderr(out)
    );
    stdout(out)
}

/// Every markdown file under `dir` (recursively, `.git` and hidden files left out) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                pending.push(path);
            } else if name.ends_with(".md") {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// The home's stores with a memory, an agenda item and a due item.
fn seed(home: &TestHome) {
    ok(
        &call(
            home,
            "create_memory",
            r#"{"name":"Dog","text":"The dog is Biscuit."}"#,
        ),
        "create_memory",
    );
    ok(
        &call(
            home,
            "add_agenda_item",
            r#"{"text":"Water plants","item_date":"2026-03-16"}"#,
        ),
        "add_agenda_item",
    );
    ok(
        &call(
            home,
            "create_due_item",
            r#"{"name":"Call mum","text":"About Sunday.","trigger_time":"2026-04-01 09:00"}"#,
        ),
        "create_due_item",
    );
}

/// The read commands and what each must show: two commands of their own and three tool calls.
fn assert_reads_work(home: &TestHome, run: &dyn Fn(&[&str]) -> Output) {
    let reads: [(&[&str], &str); 5] = [
        (&["agenda"], "Water plants"),
        (&["due"], "Call mum"),
        (
            &[
                "tools",
                "call",
                "examine_memories",
                "--args",
                r#"{"question":"dog"}"#,
            ],
            "Biscuit",
        ),
        (
            &[
                "tools",
                "call",
                "print_memory",
                "--args",
                r#"{"memory_name":"Dog"}"#,
            ],
            "Biscuit",
        ),
        (
            &[
                "tools",
                "call",
                "print_due_item",
                "--args",
                r#"{"name":"Call mum"}"#,
            ],
            "About Sunday.",
        ),
    ];
    for (args, expected) in reads {
        let out = run(args);
        let text = ok(&out, &args.join(" "));
        assert!(text.contains(expected), "{args:?}: {text}");
    }
    let _ = home;
}

/// The writes tried on a nearly full disk, each with what shows that it was made.
fn writes(n: usize) -> Vec<(&'static str, String, String)> {
    vec![
        (
            "create_memory",
            format!(r#"{{"name":"Cat {n}","text":"The cat is Tom {n}."}}"#),
            format!("memories/Cat_{n}.md"),
        ),
        (
            "add_agenda_item",
            format!(r#"{{"text":"Feed {n}","item_date":"2026-03-16"}}"#),
            format!("agenda/Feed_{n}.md"),
        ),
        (
            "create_due_item",
            format!(r#"{{"name":"Ring {n}","text":"x","trigger_time":"2026-04-01 09:00"}}"#),
            format!("agenda/Ring_{n}.md"),
        ),
        (
            "update_outdated_or_incorrect_memory",
            format!(r#"{{"memory_name":"Dog","update_text":"Biscuit is {n}."}}"#),
            format!("Biscuit is {n}."),
        ),
    ]
}

/// Whether the write `made` shows in the home: a file that exists, or a text `memories/Dog.md`
/// holds.
fn made(root: &Path, made: &str) -> bool {
    if made.ends_with(".md") {
        root.join(made).is_file()
    } else {
        std::fs::read_to_string(root.join("memories/Dog.md")).is_ok_and(|t| t.contains(made))
    }
}

/// Kind: a write on a disk with a little room left, where the file fits and the index (or the
/// history) may not. A write that fails leaves every markdown file as it was; one that succeeds is
/// there; with room again, each failed write succeeds once and none is duplicated. Reads work on
/// the full disk. Needs root and mounting; else `SKIPPED`.
#[test]
fn a_nearly_full_disk_never_says_error_with_the_change_made() {
    let home = TestHome::new();
    let root = home.home();
    let _fs = match Tmpfs::mount(&root, "16m") {
        Ok(fs) => fs,
        Err(reason) => {
            println!("SKIPPED: {reason}");
            return;
        }
    };
    seed(&home);
    let filler = root.join("filler");
    let mut failed = Vec::new();
    let mut succeeded = 0;
    for (round, room_kb) in [8u64, 24, 40, 56, 72, 88, 104, 136].into_iter().enumerate() {
        fill(&root, "filler");
        let size = std::fs::metadata(&filler).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .unwrap()
            .set_len(size.saturating_sub(room_kb * 1024))
            .unwrap();
        for (tool, args, shows) in writes(round) {
            let before = snapshot(&root);
            let out = call(&home, tool, &args);
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{tool}: {err}");
            if out.status.success() {
                assert!(
                    made(&root, &shows),
                    "{tool} succeeded with {room_kb} KB: {shows}"
                );
                succeeded += 1;
            } else {
                assert_eq!(
                    snapshot(&root),
                    before,
                    "{tool} failed with {room_kb} KB left but changed the files: {err}"
                );
                assert!(err.contains("is full"), "{tool}: {err}");
                failed.push((tool, args, shows));
            }
        }
        std::fs::remove_file(&filler).unwrap();
    }
    assert!(
        !failed.is_empty(),
        "no write failed: the disk was never full enough"
    );
    // The full disk: reads work.
    fill(&root, "filler");
    assert_reads_work(&home, &|args| elroy(&home).args(args).output().unwrap());
    let out = call(&home, "create_memory", r#"{"name":"No room","text":"x"}"#);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("The disk holding ~/.elroy is full"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(&filler).unwrap();
    // With room again: every failed write goes through once, and nothing is duplicated.
    for (tool, args, shows) in &failed {
        ok(&call(&home, tool, args), tool);
        assert!(made(&root, shows), "{tool}: {shows}");
    }
    let files = snapshot(&root);
    for (round, _) in [0; 8].iter().enumerate() {
        for prefix in [
            format!("memories/Cat_{round}"),
            format!("agenda/Feed_{round}"),
            format!("agenda/Ring_{round}"),
        ] {
            let copies = files.keys().filter(|k| k.starts_with(&prefix)).count();
            assert_eq!(copies, 1, "{prefix}: {:?}", files.keys());
        }
    }
    let dog = ok(
        &call(&home, "print_memory", r#"{"memory_name":"Dog"}"#),
        "print_memory",
    );
    for round in 0..8 {
        assert_eq!(
            dog.matches(&format!("Biscuit is {round}.")).count(),
            1,
            "{dog}"
        );
    }
    let _ = succeeded;
    // Commits that failed on the full disk are named by doctor, and --fix records them.
    let doctor = elroy(&home).arg("doctor").output().unwrap();
    if !doctor.status.success() {
        assert!(
            stdout(&doctor).contains("not recorded in the history"),
            "{}",
            stdout(&doctor)
        );
        let fixed = ok(
            &elroy(&home).args(["doctor", "--fix"]).output().unwrap(),
            "fix",
        );
        assert!(fixed.contains("fixed: recorded"), "{fixed}");
    }
    ok(
        &elroy(&home).arg("doctor").output().unwrap(),
        "doctor after the fix",
    );
}

/// Whether this process can run a command as `nobody` (root with `setpriv`).
fn can_switch_user() -> Result<(), String> {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .output()
        .map_err(|e| format!("setpriv: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "setpriv cannot switch to nobody: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn chmod(args: &[&str], path: &Path) {
    assert!(
        Command::new("chmod")
            .args(args)
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

/// Kind: a home elroy cannot write. First as a user without write permission (`nobody`, the home
/// owned by root), then (a second input of the kind) on a read-only mount: listing, printing and
/// recall work, a write says the home is read-only, and nothing changes.
#[test]
fn a_read_only_home_reads_and_says_why_it_cannot_write() {
    let home = TestHome::new();
    let root = home.home();
    seed(&home);
    let before = snapshot(&root);
    match can_switch_user() {
        Err(reason) => println!("SKIPPED (as another user): {reason}"),
        Ok(()) => {
            // Readable by nobody, writable by nobody but root.
            chmod(&["a+rx"], home.root());
            chmod(&["-R", "a+rX,a-w"], &root);
            let as_nobody = |args: &[&str]| {
                let mut cmd = elroy(&home);
                let program = cmd.get_program().to_owned();
                let mut sh = Command::new("setpriv");
                sh.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                    .arg(program)
                    .args(args);
                for (k, v) in cmd.get_envs() {
                    match v {
                        Some(v) => sh.env(k, v),
                        None => sh.env_remove(k),
                    };
                }
                sh.current_dir("/");
                cmd = sh;
                cmd.output().unwrap()
            };
            assert_reads_work(&home, &as_nobody);
            let out = as_nobody(&[
                "tools",
                "call",
                "create_memory",
                "--args",
                r#"{"name":"Cat","text":"Tom"}"#,
            ]);
            assert!(!out.status.success());
            assert!(
                stderr(&out).contains("~/.elroy is read-only"),
                "{}",
                stderr(&out)
            );
            chmod(&["-R", "u+w"], &root);
            assert_eq!(snapshot(&root), before);
        }
    }
    // A read-only mount: root is refused too.
    let mount = root.with_file_name("ro-mount");
    std::fs::create_dir_all(&mount).unwrap();
    let bind = Command::new("mount")
        .arg("--bind")
        .arg(&root)
        .arg(&mount)
        .output()
        .unwrap();
    if !bind.status.success() {
        println!(
            "SKIPPED (read-only mount): {}",
            String::from_utf8_lossy(&bind.stderr).trim()
        );
    } else {
        struct Unmount(std::path::PathBuf);
        impl Drop for Unmount {
            fn drop(&mut self) {
                let _ = Command::new("umount").arg(&self.0).status();
            }
        }
        let _unmount = Unmount(mount.clone());
        assert!(
            Command::new("mount")
                .args(["-o", "remount,bind,ro"])
                .arg(&mount)
                .status()
                .unwrap()
                .success()
        );
        let on_mount = |args: &[&str]| {
            elroy(&home)
                .env("ELROY_HOME", &mount)
                .args(args)
                .output()
                .unwrap()
        };
        assert_reads_work(&home, &on_mount);
        let out = on_mount(&[
            "tools",
            "call",
            "add_agenda_item",
            "--args",
            r#"{"text":"Cannot","item_date":"2026-03-16"}"#,
        ]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("is read-only"), "{}", stderr(&out));
    }
    assert_eq!(snapshot(&root), before);
    ok(&elroy(&home).arg("doctor").output().unwrap(), "doctor");
}
