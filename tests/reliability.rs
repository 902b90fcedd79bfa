#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Reliability of the real binary under stress: many processes writing one home
//! at once lose nothing; a process killed with SIGKILL in the middle of writes (at random, and on
//! purpose inside each store's write, at the test-only pause point of `write_atomic`) leaves every
//! file parseable and the database consistent; a home that cannot be written (read-only, a file
//! size limit, a really full `tmpfs`) gives a clear tool error naming the file, never a panic.
//! No assertion here is about time: speed belongs in the benchmarks.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::{TestHome, stderr, stdout};

/// Processes writing at once.
const PROCESSES: usize = 8;
/// Tool calls each process makes (`elroy tools call`, one process per call): 40 by default, so the
/// suite stays fast; `ELROY_RELIABILITY_CALLS=200` runs the full 8 × 200.
fn calls_each() -> usize {
    std::env::var("ELROY_RELIABILITY_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}
/// The call kinds cycled through: agenda item, due item, feature request, `memory` tool, memory.
const KINDS: usize = 5;
const DATE: &str = "2026-03-20";
/// elroy's clock in these tests (`ELROY_NOW`): due times in April are in the future.
const NOW: &str = "2026-03-16T08:30:00Z";

/// `elroy tools call TOOL --args ARGS` at [`NOW`].
fn call(home: &TestHome, tool: &str, args: &str) -> Output {
    elroy(home)
        .args(["tools", "call", tool, "--args", args])
        .output()
        .expect("run elroy")
}

/// `elroy` for `home` at [`NOW`].
fn elroy(home: &TestHome) -> Command {
    let mut cmd = home.cmd();
    cmd.env("ELROY_NOW", NOW);
    cmd
}

/// A word from a pseudo-random syllable sequence: feature-request titles must not look alike, or
/// `make_feature_request` rightly merges them.
fn word(mut seed: u64) -> String {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "bo", "da", "fe", "gi", "ho",
        "ju",
    ];
    let mut w = String::new();
    for _ in 0..4 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        w.push_str(SYLLABLES[(seed >> 60) as usize]);
    }
    w
}

fn title(p: usize, i: usize) -> String {
    let s = (p * 1000 + i) as u64;
    format!(
        "{} {} {} {p}x{i}",
        word(s),
        word(s + 7_777),
        word(s + 99_991)
    )
}

/// The tool call number `i` of process `p`: (tool, arguments).
fn mixed_call(p: usize, i: usize) -> (&'static str, String) {
    match i % KINDS {
        0 => (
            "add_agenda_item",
            format!(r#"{{"text":"process {p} agenda {i}","item_date":"{DATE}"}}"#),
        ),
        1 => (
            "create_due_item",
            format!(
                r#"{{"name":"process {p} due {i}","text":"Due text {p}/{i}","trigger_time":"2026-04-01 09:00"}}"#
            ),
        ),
        2 => (
            "make_feature_request",
            format!(
                r#"{{"title":"{}","description":"{} {} {}"}}"#,
                title(p, i),
                word(i as u64 * 31 + p as u64),
                word(i as u64 * 17 + 5),
                word((p * i) as u64 + 3)
            ),
        ),
        3 => (
            "memory",
            format!(
                r#"{{"action":"add","target":"{}","text":"note of process {p} number {i}"}}"#,
                if i.is_multiple_of(2) { "self" } else { "user" }
            ),
        ),
        _ => (
            "create_memory",
            format!(
                r#"{{"name":"process {p} memory {i}","text":"Fact {i} remembered by process {p}."}}"#
            ),
        ),
    }
}

/// Every `*.md` file under `dir` (recursively, skipping `.git`).
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if path.is_dir() {
            out.extend(markdown_files(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out
}

/// Every markdown file of the home parses (front matter included).
fn assert_markdown_parses(home: &Path) -> usize {
    let files = markdown_files(home);
    for file in &files {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("{} is not UTF-8 text: {e}", file.display()));
        if let Err(e) = elroy_markdown::Document::parse(&text, &file.display().to_string()) {
            panic!("{} does not parse: {e}\n{text}", file.display());
        }
    }
    files.len()
}

/// `PRAGMA integrity_check` and `PRAGMA foreign_key_check` of `state.db`.
fn assert_database_consistent(home: &Path) {
    let db = rusqlite::Connection::open(home.join("state.db")).unwrap();
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let mut stmt = db.prepare("PRAGMA foreign_key_check").unwrap();
    let violations = stmt.query_map([], |_| Ok(())).unwrap().count();
    assert_eq!(violations, 0, "foreign-key violations in state.db");
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

/// Runs `f` over `items` on `PROCESSES` threads.
fn parallel<T: Sync>(items: &[T], f: impl Fn(&T) + Sync) {
    let chunk = items.len().div_ceil(PROCESSES).max(1);
    thread::scope(|scope| {
        for part in items.chunks(chunk) {
            let f = &f;
            scope.spawn(move || part.iter().for_each(f));
        }
    });
}

#[test]
fn eight_processes_of_mixed_calls_lose_nothing() {
    let home = TestHome::new();
    let calls = calls_each();
    let started = Instant::now();
    // One call first, so the home (git repository, database) is created before the race.
    ok(&call(&home, "get_current_date", ""), "get_current_date");
    thread::scope(|scope| {
        for p in 0..PROCESSES {
            let home = &home;
            scope.spawn(move || {
                for i in 0..calls {
                    let (tool, args) = mixed_call(p, i);
                    let out = call(home, tool, &args);
                    ok(&out, &format!("process {p} call {i} ({tool} {args})"));
                }
            });
        }
    });
    let root = home.home();
    let files = assert_markdown_parses(&root);
    eprintln!(
        "{PROCESSES} processes x {calls} calls: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let per_kind = PROCESSES * calls / KINDS;
    // agenda + due items + feature requests + memories, and MEMORY.md and USER.md.
    assert_eq!(files, 4 * per_kind + 2, "markdown files in the home");

    let listing: serde_json::Value = serde_json::from_str(&ok(
        &call(
            &home,
            "list_agenda_items",
            &format!(r#"{{"item_date":"{DATE}"}}"#),
        ),
        "list_agenda_items",
    ))
    .unwrap();
    let items = listing["items"].as_array().unwrap();
    assert_eq!(items.len(), per_kind, "agenda items listed");

    let requests = ok(
        &call(&home, "list_feature_requests", ""),
        "list_feature_requests",
    );
    let memory_md = std::fs::read_to_string(root.join("MEMORY.md")).unwrap();
    let user_md = std::fs::read_to_string(root.join("USER.md")).unwrap();
    let mut reads: Vec<(&str, String, String)> = Vec::new();
    for p in 0..PROCESSES {
        for i in 0..calls {
            match i % KINDS {
                0 => {
                    let text = format!("process {p} agenda {i}");
                    assert!(
                        items.iter().any(|it| it["text"] == text.as_str()),
                        "{text} missing"
                    );
                }
                1 => reads.push((
                    "print_due_item",
                    format!(r#"{{"name":"process {p} due {i}"}}"#),
                    format!("Due text {p}/{i}"),
                )),
                2 => assert!(requests.contains(&title(p, i)), "{} missing", title(p, i)),
                3 => {
                    let line = format!("- note of process {p} number {i}\n");
                    let notes = if i.is_multiple_of(2) {
                        &memory_md
                    } else {
                        &user_md
                    };
                    assert!(notes.contains(&line), "{line:?} missing");
                }
                _ => reads.push((
                    "print_memory",
                    format!(r#"{{"memory_name":"process {p} memory {i}"}}"#),
                    format!("Fact {i} remembered by process {p}."),
                )),
            }
        }
    }
    parallel(&reads, |(tool, args, expected)| {
        let text = ok(&call(&home, tool, args), &format!("{tool} {args}"));
        assert!(text.contains(expected.as_str()), "{tool} {args}: {text}");
    });
    assert_database_consistent(&root);
}

/// A deterministic xorshift generator, seeded from the clock (the seed is printed on failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn sigkill_in_the_middle_of_writes_leaves_the_home_consistent() {
    let home = TestHome::new();
    let root = home.home();
    // Data written before the crashes must survive them.
    ok(
        &call(
            &home,
            "create_memory",
            r#"{"name":"updated memory","text":"First version."}"#,
        ),
        "create_memory",
    );
    for i in 0..5 {
        ok(
            &call(
                &home,
                "add_agenda_item",
                &format!(r#"{{"text":"kept agenda {i}","item_date":"{DATE}"}}"#),
            ),
            "add_agenda_item",
        );
        ok(
            &call(
                &home,
                "create_memory",
                &format!(r#"{{"name":"kept memory {i}","text":"Kept fact {i}."}}"#),
            ),
            "create_memory",
        );
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let mut rng = Rng(seed);
    let mut killed = 0;
    let rounds = 60;
    for round in 0..rounds {
        let (tool, args) = match round % 6 {
            0 => (
                "add_agenda_item",
                format!(r#"{{"text":"crash agenda {round}","item_date":"{DATE}"}}"#),
            ),
            1 => (
                "create_memory",
                format!(r#"{{"name":"crash memory {round}","text":"Crash fact {round}."}}"#),
            ),
            2 => (
                "add_agenda_item_update",
                r#"{"item_name":"kept agenda 1","note":"progress during a crash"}"#.to_owned(),
            ),
            3 => (
                "update_outdated_or_incorrect_memory",
                format!(r#"{{"memory_name":"updated memory","update_text":"Update {round}."}}"#),
            ),
            4 => (
                "make_feature_request",
                format!(
                    r#"{{"title":"{}","description":"crash round {round}"}}"#,
                    title(9, round)
                ),
            ),
            _ => (
                "memory",
                format!(r#"{{"action":"add","text":"crash note {round}"}}"#),
            ),
        };
        let mut child = elroy(&home)
            .args(["tools", "call", tool, "--args", &args])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Between 0 and 150 ms: from process start-up to the end of the write.
        thread::sleep(Duration::from_micros(rng.next() % 150_000));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            killed += 1;
        }
        child.wait().unwrap();
    }
    eprintln!("seed {seed}: {killed} of {rounds} calls killed by SIGKILL");
    assert!(killed > 0, "no call was killed (seed {seed})");

    assert_markdown_parses(&root);
    assert_database_consistent(&root);
    // The home still works: reads, and a write (the home lock was released by the kernel).
    let listing = ok(
        &call(
            &home,
            "list_agenda_items",
            &format!(r#"{{"item_date":"{DATE}"}}"#),
        ),
        "list_agenda_items after the crashes",
    );
    for i in 0..5 {
        assert!(
            listing.contains(&format!("kept agenda {i}")),
            "seed {seed}: kept agenda {i} missing from {listing}"
        );
        let memory = ok(
            &call(
                &home,
                "print_memory",
                &format!(r#"{{"memory_name":"kept memory {i}"}}"#),
            ),
            "print_memory",
        );
        assert!(memory.contains(&format!("Kept fact {i}.")), "seed {seed}");
    }
    ok(
        &call(
            &home,
            "examine_memories",
            r#"{"question":"What kept fact do I know?"}"#,
        ),
        "examine_memories after the crashes",
    );
    ok(
        &call(&home, "list_feature_requests", ""),
        "list_feature_requests",
    );
    ok(
        &call(
            &home,
            "add_agenda_item",
            &format!(r#"{{"text":"after the crashes","item_date":"{DATE}"}}"#),
        ),
        "a write after the crashes",
    );
    assert_markdown_parses(&root);
    assert_database_consistent(&root);
}

/// The call failed cleanly: exit 1, exactly one `Error invoking tool {tool}: …` line, no panic.
fn assert_clean_tool_error(out: &Output, tool: &str) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
    assert!(!err.contains("panicked"), "{tool} panicked: {err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("Error invoking tool "))
        .collect();
    assert_eq!(lines.len(), 1, "{tool}: {err}");
    assert!(
        lines[0].starts_with(&format!("Error invoking tool {tool}: ")),
        "{err}"
    );
    assert!(stdout(out).is_empty(), "{tool} printed a result");
    lines[0].to_owned()
}

/// Whether permission bits stop this process (they do not for root).
fn permission_bits_apply(dir: &Path) -> bool {
    let probe = dir.join("probe");
    std::fs::create_dir_all(&probe).unwrap();
    set_writable(&probe, false);
    let blocked = std::fs::write(probe.join("x"), "x").is_err();
    set_writable(&probe, true);
    std::fs::remove_dir_all(&probe).unwrap();
    blocked
}

fn set_writable(path: &Path, writable: bool) {
    let status = Command::new("chmod")
        .args(["-R", if writable { "u+w" } else { "a-w" }])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Write calls and the store directory each one writes.
const WRITES: &[(&str, &str, &str)] = &[
    (
        "add_agenda_item",
        r#"{"text":"Cannot be saved","item_date":"2026-03-20"}"#,
        "agenda",
    ),
    (
        "create_memory",
        r#"{"name":"Unsaved","text":"Cannot be saved."}"#,
        "memories",
    ),
    (
        "make_feature_request",
        r#"{"title":"Unsaved idea","description":"Cannot be saved."}"#,
        "feature-requests",
    ),
];

#[test]
fn read_only_home_gives_a_clear_tool_error() {
    let home = TestHome::new();
    let root = home.home();
    for (tool, _, _) in WRITES {
        // Creates the home and each store's directory.
        let _ = call(
            &home,
            tool,
            r#"{"text":"x","name":"x","title":"first","description":"d","item_date":"2026-03-19"}"#,
        );
    }
    let before: Vec<(PathBuf, String)> = markdown_files(&root)
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    if permission_bits_apply(home.root()) {
        // A real read-only home: every write is refused by the kernel.
        set_writable(&root, false);
        for (tool, args, _) in WRITES {
            assert_clean_tool_error(&call(&home, tool, args), tool);
        }
        set_writable(&root, true);
    } else {
        // Running as root, where permission bits stop nothing: each store directory is replaced
        // by a regular file, so that the store cannot write where it must.
        for (tool, args, dir) in WRITES {
            let path = root.join(dir);
            let saved = root.join(format!("{dir}.saved"));
            std::fs::rename(&path, &saved).unwrap();
            std::fs::write(&path, "not a directory").unwrap();
            let line = assert_clean_tool_error(&call(&home, tool, args), tool);
            assert!(line.contains(dir), "the error names {dir}: {line}");
            std::fs::remove_file(&path).unwrap();
            std::fs::rename(&saved, &path).unwrap();
        }
    }
    // Nothing that was there is lost or changed.
    for (path, text) in before {
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    assert_database_consistent(&root);
}

/// `elroy tools call` under `ulimit -f` (`RLIMIT_FSIZE`, in 512-byte blocks) with `SIGXFSZ`
/// ignored: a write beyond the limit fails with `EFBIG`, as on a full disk.
fn call_with_file_size_limit(home: &TestHome, blocks: u32, tool: &str, args: &str) -> Output {
    let mut cmd = elroy(home);
    let program = cmd.get_program().to_owned();
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" tools call {tool} --args \"$1\""
        ))
        .arg(program)
        .arg(args);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        sh.current_dir(dir);
    }
    cmd = sh;
    cmd.output().unwrap()
}

#[test]
fn full_disk_gives_a_clear_tool_error() {
    let home = TestHome::new();
    let root = home.home();
    ok(
        &call(
            &home,
            "create_memory",
            r#"{"name":"Before","text":"Written before."}"#,
        ),
        "create_memory",
    );
    let big = "word ".repeat(20_000); // 100 kB, over the 40 KiB limit below
    let calls = [
        (
            "create_memory",
            serde_json::json!({"name": "Big", "text": big}),
        ),
        (
            "add_agenda_item",
            serde_json::json!({"text": format!("Big {big}"), "item_date": DATE}),
        ),
        ("memory", serde_json::json!({"action": "add", "text": big})),
        (
            "make_feature_request",
            serde_json::json!({"title": "Big", "description": big}),
        ),
    ];
    for (tool, args) in &calls {
        let out = call_with_file_size_limit(&home, 80, tool, &args.to_string());
        let line = assert_clean_tool_error(&out, tool);
        assert!(line.contains("File too large"), "{line}");
    }
    // Nothing half-written is left behind, and the home still works without the limit.
    assert_markdown_parses(&root);
    for file in markdown_files(&root) {
        assert!(
            !std::fs::read_to_string(&file).unwrap().contains(&big),
            "{} holds the failed write",
            file.display()
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(root.join("memories"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    assert_database_consistent(&root);
    let memory = ok(
        &call(&home, "print_memory", r#"{"memory_name":"Before"}"#),
        "print_memory",
    );
    assert!(memory.contains("Written before."));
    ok(
        &call(
            &home,
            "create_memory",
            r#"{"name":"After","text":"Written after."}"#,
        ),
        "create_memory after the full disk",
    );

    // A limit below the database's size: elroy cannot even open its database. Still one clear
    // line and exit 1, no panic.
    let out = call_with_file_size_limit(
        &home,
        8,
        "create_memory",
        r#"{"name":"Tiny","text":"Cannot be saved."}"#,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.lines().any(|l| l.contains("database error")
            || l.starts_with("Error invoking tool create_memory: ")),
        "{err}"
    );
    assert_database_consistent(&root);
}

/// Every markdown file of the home with its content.
fn markdown_snapshot(home: &Path) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = markdown_files(home)
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    files.sort();
    files
}

/// Runs `elroy tools call TOOL --args ARGS` with the test-only pause point set to `needle`
/// (`ELROY_TEST_PAUSE_BEFORE_RENAME`), waits until it reports that it stopped between writing the
/// temporary file and renaming it over the target, checks that the temporary file is really
/// there, and kills it with SIGKILL. Returns the target path it was writing.
fn kill_inside_write(home: &TestHome, tool: &str, args: &str, needle: &str) -> PathBuf {
    use std::io::BufRead;
    let mut child = elroy(home)
        .env(elroy_markdown::PAUSE_BEFORE_RENAME_ENV, needle)
        .args(["tools", "call", tool, "--args", args])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let prefix = format!("{} ", elroy_markdown::PAUSED_BEFORE_RENAME);
    let mut seen = Vec::new();
    // A guard against a hang only (the pause sleeps until killed), not a measurement.
    let target = loop {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => match line.strip_prefix(&prefix) {
                Some(path) => break PathBuf::from(path),
                None => seen.push(line),
            },
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().unwrap();
                panic!(
                    "{tool} never paused before renaming a file matching {needle:?} \
                     (exit {status}); stderr:\n{}",
                    seen.join("\n")
                );
            }
        }
    };
    // The kill lands inside the write: the temporary file is written, the rename is not done.
    let name = target.file_name().unwrap().to_string_lossy().into_owned();
    let temporaries: Vec<String> = std::fs::read_dir(target.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}.tmp-")))
        .collect();
    assert!(
        !temporaries.is_empty(),
        "{tool}: no temporary file of {} while paused",
        target.display()
    );
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "{tool} was not killed: {status}");
    reader.join().unwrap();
    target
}

/// Kind: a process killed inside a write.
/// For every store (agenda items, due items, feature requests, memories, MEMORY.md and USER.md;
/// new files and files that exist), elroy is stopped on purpose at the test-only pause point
/// between writing the temporary file and renaming it, and killed there with SIGKILL. Afterwards
/// the target is as it was (absent, or its old content), every file stored before is unchanged,
/// every markdown file parses, `state.db` is consistent, and the stores still read and write.
#[test]
fn a_kill_inside_each_stores_write_loses_nothing() {
    let home = TestHome::new();
    let root = home.home();
    let stored = [
        (
            "add_agenda_item",
            format!(r#"{{"text":"Kept agenda","item_date":"{DATE}"}}"#),
        ),
        (
            "create_due_item",
            r#"{"name":"Kept due","text":"Pay rent","trigger_time":"2026-04-01 09:00"}"#.into(),
        ),
        (
            "make_feature_request",
            r#"{"title":"Kept request","description":"Dark mode for the terminal."}"#.into(),
        ),
        (
            "create_memory",
            r#"{"name":"Kept memory","text":"The passport expires in June."}"#.into(),
        ),
        (
            "memory",
            r#"{"action":"add","target":"self","text":"kept self note"}"#.into(),
        ),
        (
            "memory",
            r#"{"action":"add","target":"user","text":"kept user note"}"#.into(),
        ),
    ];
    for (tool, args) in &stored {
        ok(&call(&home, tool, args), tool);
    }
    let before = markdown_snapshot(&root);
    assert_eq!(before.len(), 6, "{before:?}");

    // (tool, arguments, a part of the target's path, whether the target exists already)
    let writes: [(&str, String, &str, bool); 8] = [
        (
            "add_agenda_item",
            format!(r#"{{"text":"Killed agenda","item_date":"{DATE}"}}"#),
            "agenda/Killed_agenda",
            false,
        ),
        (
            "add_agenda_item_update",
            r#"{"item_name":"Kept agenda","note":"progress when killed"}"#.into(),
            "agenda/Kept_agenda",
            true,
        ),
        (
            "create_due_item",
            r#"{"name":"Killed due","text":"Call","trigger_time":"2026-04-02 09:00"}"#.into(),
            "agenda/Killed_due",
            false,
        ),
        (
            "update_due_item_text",
            r#"{"name":"Kept due","new_text":"Pay rent and water"}"#.into(),
            "agenda/Kept_due",
            true,
        ),
        (
            "make_feature_request",
            r#"{"title":"Killed request","description":"Export to calendar files."}"#.into(),
            "feature-requests/killed-request",
            false,
        ),
        (
            "create_memory",
            r#"{"name":"Killed memory","text":"Never stored."}"#.into(),
            "memories/Killed_memory",
            false,
        ),
        (
            "memory",
            r#"{"action":"add","target":"self","text":"killed self note"}"#.into(),
            "MEMORY.md",
            true,
        ),
        (
            "memory",
            r#"{"action":"add","target":"user","text":"killed user note"}"#.into(),
            "USER.md",
            true,
        ),
    ];
    for (tool, args, needle, exists) in &writes {
        let target = kill_inside_write(&home, tool, args, needle);
        if *exists {
            let old = before
                .iter()
                .find(|(p, _)| *p == target)
                .unwrap_or_else(|| panic!("{tool}: {} was not stored before", target.display()));
            let now = std::fs::read_to_string(&target).unwrap_or_else(|e| {
                panic!("{tool}: {} is gone after the kill: {e}", target.display())
            });
            assert_eq!(
                now,
                old.1,
                "{tool}: the old content of {} is gone",
                target.display()
            );
        } else {
            assert!(!target.exists(), "{tool}: {} appeared", target.display());
        }
        // Nothing stored before is lost or changed, the home reads.
        assert_eq!(markdown_snapshot(&root), before, "after killing {tool}");
        assert_markdown_parses(&root);
        assert_database_consistent(&root);
    }

    // `create_memory` writes its file inside an open `state.db` write transaction (the row is
    // inserted after the file, then committed): the kill inside the file's write was a kill inside
    // that transaction too, and SQLite rolled it back.
    let db = rusqlite::Connection::open(root.join("state.db")).unwrap();
    let rows: i64 = db
        .query_row(
            "SELECT count(*) FROM memories WHERE name = 'Killed memory'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 0, "a row of the killed create_memory was committed");
    let kept: i64 = db
        .query_row(
            "SELECT count(*) FROM memories WHERE name = 'Kept memory' AND is_active = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 1);
    drop(db);

    // The stores still read what was stored, and write.
    let listing = ok(
        &call(
            &home,
            "list_agenda_items",
            &format!(r#"{{"item_date":"{DATE}"}}"#),
        ),
        "list_agenda_items",
    );
    assert!(listing.contains("Kept agenda"), "{listing}");
    assert!(!listing.contains("Killed agenda"), "{listing}");
    let due = ok(
        &call(&home, "print_due_item", r#"{"name":"Kept due"}"#),
        "print_due_item",
    );
    assert!(due.contains("Pay rent"), "{due}");
    let requests = ok(
        &call(&home, "list_feature_requests", ""),
        "list_feature_requests",
    );
    assert!(requests.contains("Kept request"), "{requests}");
    let memory = ok(
        &call(&home, "print_memory", r#"{"memory_name":"Kept memory"}"#),
        "print_memory",
    );
    assert!(memory.contains("The passport expires in June."), "{memory}");
    ok(
        &call(
            &home,
            "examine_memories",
            r#"{"question":"When does the passport expire?"}"#,
        ),
        "examine_memories",
    );
    for (tool, args, _, _) in &writes {
        ok(&call(&home, tool, args), &format!("{tool} after the kills"));
    }
    assert_markdown_parses(&root);
    assert_database_consistent(&root);

    // `update_outdated_or_incorrect_memory` gives the old version its archive name (a second
    // name, the file staying in place) and then writes the new one over it
    // (`docs/formats.md#multi-step-writes`). Killed inside the second write, the old version is
    // still the active memory; the next command drops the leftover archive name.
    let old_text = std::fs::read_to_string(root.join("memories/Kept_memory.md")).unwrap();
    let target = kill_inside_write(
        &home,
        "update_outdated_or_incorrect_memory",
        r#"{"memory_name":"Kept memory","update_text":"It expires in July."}"#,
        "memories/Kept_memory",
    );
    assert!(target.ends_with("memories/Kept_memory.md"), "{target:?}");
    let archived: Vec<String> = markdown_files(&root.join("memories/archive"))
        .into_iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        archived.contains(&old_text),
        "the old version is neither in place nor archived: {archived:?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("memories/Kept_memory.md")).unwrap(),
        old_text
    );
    let printed = ok(
        &call(&home, "print_memory", r#"{"memory_name":"Kept memory"}"#),
        "print_memory after the killed update",
    );
    assert!(
        printed.contains("The passport expires in June."),
        "{printed}"
    );
    assert!(
        markdown_files(&root.join("memories/archive")).is_empty(),
        "the interrupted update's archive name is left"
    );
    assert_markdown_parses(&root);
    assert_database_consistent(&root);
    ok(
        &call(&home, "list_agenda_items", "{}"),
        "list_agenda_items after the memory kill",
    );
}

/// A `tmpfs` of `size` mounted at `dir` for the life of the value, unmounted on drop (also when
/// the test fails).
pub(crate) struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts it, or says why it cannot (not root, mounting not allowed here).
    pub(crate) fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs {
            dir: dir.to_path_buf(),
        })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

/// Fills the file system of `dir` with `dir/name` until a write fails with `ENOSPC`.
pub(crate) fn fill(dir: &Path, name: &str) {
    use std::io::Write;
    let mut file = std::fs::File::create(dir.join(name)).unwrap();
    let chunk = vec![0x55u8; 64 * 1024];
    for size in [chunk.len(), 512, 1] {
        loop {
            match file
                .write_all(&chunk[..size])
                .and_then(|()| file.sync_all())
            {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(28) => break,
                Err(e) => panic!("filling {}: {e}", dir.display()),
            }
        }
    }
}

/// A minimal MCP client over `elroy mcp`'s stdio: one JSON-RPC request a line.
struct McpServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl McpServer {
    fn start(home: &TestHome) -> Self {
        let mut child = elroy(home)
            .env("ELROY_LOG_LEVEL", "off")
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut server = McpServer {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        server.request(
            "initialize",
            serde_json::json!({
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "reliability", "version": "0"}
            }),
        );
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::BufRead;
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the MCP server closed its output during {method}");
            let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply;
            }
        }
    }

    /// `tools/call`: (is the result an error, its text).
    fn call(&mut self, tool: &str, args: serde_json::Value) -> (bool, String) {
        let reply = self.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": args}),
        );
        let result = &reply["result"];
        assert!(result.is_object(), "{tool}: {reply}");
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (result["isError"] == true, text)
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kind: a write on a full disk (a real
/// `ENOSPC` from a small `tmpfs`; the `EFBIG` variant above runs everywhere). The home is a tmpfs:
/// first its git objects live on a second tmpfs that is full, so the store write succeeds and the
/// history commit fails (the change is journaled and committed under the tool's name once there
/// is room); then the whole home is full while `elroy mcp` runs: every markdown store and
/// `state.db` (`SQLITE_FULL`) fail with an error naming the file, and nothing already stored is
/// lost. Needs root and permission to mount; otherwise it prints `SKIPPED: <reason>`.
#[test]
fn a_really_full_disk_gives_a_clear_error_and_loses_nothing() {
    let home = TestHome::new();
    let root = home.home();
    let _home_fs = match Tmpfs::mount(&root, "16m") {
        Ok(fs) => fs,
        Err(reason) => {
            println!("SKIPPED: {reason}");
            return;
        }
    };
    let stored = [
        (
            "create_memory",
            r#"{"name":"Before","text":"Written before."}"#,
        ),
        (
            "add_agenda_item",
            r#"{"text":"Kept agenda","item_date":"2026-03-20"}"#,
        ),
        (
            "make_feature_request",
            r#"{"title":"Kept request","description":"Dark mode for the terminal."}"#,
        ),
        ("memory", r#"{"action":"add","text":"kept note"}"#),
        (
            "set_user_preferred_name",
            r#"{"preferred_name":"Kept name"}"#,
        ),
    ];
    for (tool, args) in stored {
        ok(&call(&home, tool, args), tool);
    }

    // 1. The git history on a full file system, the stores not.
    let git = root.join(".git");
    let objects = git.join("objects");
    let saved = git.join("objects.saved");
    std::fs::rename(&objects, &saved).unwrap();
    let copy = |from: &Path, to: &Path| {
        let status = Command::new("cp")
            .arg("-a")
            .arg(from.join("."))
            .arg(to)
            .status()
            .unwrap();
        assert!(status.success());
    };
    {
        let objects_fs = Tmpfs::mount(&objects, "1m").unwrap();
        copy(&saved, &objects);
        fill(&objects, "filler");
        let out = call(
            &home,
            "memory",
            r#"{"action":"add","text":"saved, not committed"}"#,
        );
        let text = ok(&out, "memory on a full git object store");
        assert!(
            text.contains("the change was saved, but not recorded in the history (git: ")
                && text.contains("No space left on device")
                && text.contains("elroy records it as 'memory: MEMORY.md' the next time it starts"),
            "{text}"
        );
        assert!(
            std::fs::read_to_string(root.join("MEMORY.md"))
                .unwrap()
                .contains("saved, not committed")
        );
        std::fs::remove_file(objects.join("filler")).unwrap();
        copy(&objects, &saved);
        drop(objects_fs);
        std::fs::remove_dir(&objects).unwrap();
        std::fs::rename(&saved, &objects).unwrap();
    }
    // The next start commits it under the tool's name, not as an external edit.
    ok(&call(&home, "get_current_date", ""), "get_current_date");
    assert_eq!(head_summary(&root), "memory: MEMORY.md");

    // 2. The whole home full while elroy runs.
    let before = markdown_snapshot(&root);
    let mut server = McpServer::start(&home);
    // A server that has been serving: each store is open (stores open on first use) before the
    // disk fills up.
    for (tool, args) in [
        ("get_current_date", serde_json::json!({})),
        (
            "examine_memories",
            serde_json::json!({"question": "anything before"}),
        ),
        ("list_agenda_items", serde_json::json!({"item_date": DATE})),
        ("get_user_preferred_name", serde_json::json!({})),
    ] {
        let (error, text) = server.call(tool, args);
        assert!(!error, "{tool}: {text}");
    }
    fill(&root, "filler");
    let big = "word ".repeat(2_000);
    let writes = [
        (
            "create_memory",
            serde_json::json!({"name": "Full", "text": big}),
            "memories/",
        ),
        (
            "add_agenda_item",
            serde_json::json!({"text": format!("Full {big}"), "item_date": DATE}),
            "agenda/",
        ),
        (
            "make_feature_request",
            serde_json::json!({"title": "Full disk idea", "description": big}),
            "feature-requests/",
        ),
        (
            "memory",
            serde_json::json!({"action": "add", "text": big}),
            "MEMORY.md",
        ),
        (
            "set_user_preferred_name",
            serde_json::json!({"preferred_name": "Full", "override_existing": true}),
            "state.db",
        ),
    ];
    for (tool, args, file) in &writes {
        let (error, text) = server.call(tool, args.clone());
        assert!(error, "{tool} succeeded on a full disk: {text}");
        assert!(
            text.starts_with(&format!("Error invoking tool {tool}: ")),
            "{tool}: {text}"
        );
        assert!(
            text.contains("No space left on device") || text.contains("database or disk is full"),
            "{tool}: {text}"
        );
        assert!(
            text.contains(file),
            "{tool}: the error names {file}: {text}"
        );
    }
    // Reads still work on the full disk.
    let (error, text) = server.call("print_memory", serde_json::json!({"memory_name": "Before"}));
    assert!(!error && text.contains("Written before."), "{text}");
    drop(server);

    // Nothing already stored is lost, nothing half-written is left, and with room again the
    // home works.
    std::fs::remove_file(root.join("filler")).unwrap();
    assert_eq!(markdown_snapshot(&root), before);
    assert_markdown_parses(&root);
    assert_database_consistent(&root);
    let name = ok(
        &call(&home, "get_user_preferred_name", ""),
        "get_user_preferred_name",
    );
    assert!(name.contains("Kept name"), "{name}");
    ok(
        &call(
            &home,
            "create_memory",
            r#"{"name":"After","text":"Written after."}"#,
        ),
        "create_memory after the full disk",
    );
    assert_eq!(head_summary(&root), "create_memory: memories/After.md");
}

/// The first line of the home repository's HEAD commit.
fn head_summary(root: &Path) -> String {
    let repo = git2::Repository::open(root).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    head.summary().unwrap().unwrap_or_default().to_owned()
}
