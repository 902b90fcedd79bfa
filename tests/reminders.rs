//! Reminders for a person: `elroy agenda`, `elroy due` (snooze, done), `elroy remind`
//! and `elroy remind --watch`, end to end with the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use common::{TestHome, stderr, stdout};

fn run_at(home: &TestHome, now: &str, args: &[&str]) -> Output {
    home.cmd()
        .env("ELROY_NOW", now)
        .args(args)
        .output()
        .unwrap()
}

fn ok_at(home: &TestHome, now: &str, args: &[&str]) -> String {
    let out = run_at(home, now, args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "{args:?} warned");
    stdout(&out)
}

fn create_due(home: &TestHome, now: &str, name: &str, text: &str, when: &str) {
    let args = serde_json::json!({"name": name, "text": text, "trigger_time": when}).to_string();
    ok_at(
        home,
        now,
        &["tools", "call", "create_due_item", "--args", &args],
    );
}

/// A `notify_command` that appends its argument count and arguments to `log`.
fn recording_script(home: &TestHome) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let log = home.root().join("notify.log");
    let script = home.root().join("notify.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n{{ printf 'argc=%s\\n' \"$#\"; for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done; }} >> '{}'\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, log)
}

/// The "Done when" sequence: not at 08:59, once at 09:01, not again at 09:02; snoozed 10 minutes
/// at 09:02, once more at 09:13; `notify_command` got exactly the title and the body each time.
#[test]
fn remind_announces_each_trigger_once_and_again_after_a_snooze() {
    let home = TestHome::new();
    let (script, log) = recording_script(&home);
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "notify_command: {}\ntimezone: Europe/Berlin\n",
            script.display()
        ),
    )
    .unwrap();
    // 09:00 in Berlin is 08:00 UTC.
    create_due(
        &home,
        "2026-12-01T07:00:00Z",
        "Call the dentist",
        "Ask about the invoice",
        "09:00",
    );
    let remind = |now: &str| ok_at(&home, now, &["remind"]);
    assert_eq!(remind("2026-12-01T07:59:00Z"), "");
    assert_eq!(
        remind("2026-12-01T08:01:00Z"),
        "⏰ 09:00 Call the dentist — Ask about the invoice\n"
    );
    assert_eq!(remind("2026-12-01T08:02:00Z"), "");
    assert_eq!(
        ok_at(
            &home,
            "2026-12-01T08:02:00Z",
            &["due", "snooze", "Call the dentist", "10m"]
        ),
        "Due item 'Call the dentist' snoozed until Tue 2026-12-01 09:12 +01:00.\n"
    );
    assert_eq!(remind("2026-12-01T08:11:00Z"), "");
    assert_eq!(
        remind("2026-12-01T08:13:00Z"),
        "⏰ 09:12 Call the dentist — Ask about the invoice\n"
    );
    assert_eq!(remind("2026-12-01T08:14:00Z"), "");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "argc=2\n[09:00 Call the dentist]\n[Ask about the invoice]\n\
         argc=2\n[09:12 Call the dentist]\n[Ask about the invoice]\n"
    );
}

/// A `notify_command` that cannot run is a warning; the announcement still happens, once.
#[test]
fn a_failing_notify_command_is_a_warning() {
    let home = TestHome::new();
    create_due(
        &home,
        "2026-12-01T08:00:00Z",
        "Stretch",
        "",
        "2026-12-01 09:00",
    );
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-12-01T09:00:00Z")
        .env(
            "ELROY_NOTIFY_COMMAND",
            "/nonexistent/notify --urgency 'very high'",
        )
        .arg("remind")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "⏰ 09:00 Stretch\n");
    assert!(
        stderr(&out).starts_with("warning: notify_command: cannot run /nonexistent/notify: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(ok_at(&home, "2026-12-01T09:01:00Z", &["remind"]), "");
}

/// Kind: an announcement nobody could read. With standard output failing (`> /dev/full`),
/// `elroy remind` exits 1 and takes its claims back, so the next run announces them.
#[test]
fn announcements_that_could_not_be_written_are_announced_by_the_next_run() {
    let home = TestHome::new();
    for name in ["Stretch", "Water"] {
        create_due(&home, "2026-12-01T08:00:00Z", name, "", "2026-12-01 09:00");
    }
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-12-01T09:00:00Z")
        .arg("remind")
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write to standard output"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        ok_at(&home, "2026-12-01T09:01:00Z", &["remind"]),
        "⏰ 09:00 Stretch\n⏰ 09:00 Water\n"
    );
    assert_eq!(ok_at(&home, "2026-12-01T09:02:00Z", &["remind"]), "");
}

/// Eight `elroy remind` processes at once announce each of five due items exactly once.
#[test]
fn concurrent_reminds_announce_each_item_exactly_once() {
    let home = TestHome::new();
    let names: Vec<String> = (1..=5).map(|i| format!("Item {i}")).collect();
    for name in &names {
        create_due(
            &home,
            "2026-12-01T08:00:00Z",
            name,
            "text",
            "2026-12-01 09:00",
        );
    }
    let children: Vec<_> = (0..8)
        .map(|_| {
            home.cmd()
                .env("ELROY_NOW", "2026-12-01T09:30:00Z")
                .arg("remind")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut lines = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "");
        lines.extend(stdout(&out).lines().map(str::to_owned));
    }
    lines.sort();
    let expected: Vec<String> = names
        .iter()
        .map(|n| format!("⏰ 09:00 {n} — text"))
        .collect();
    assert_eq!(lines, expected);
}

/// The real clock: an item 2 s ahead is announced within 1 s of its time (never before); an item
/// added meanwhile by another process is announced too; SIGTERM ends the watcher with status 0.
/// Waits are bounded; nothing else is timed.
#[test]
fn watch_announces_items_when_they_come_due_and_stops_on_sigterm() {
    let home = TestHome::new();
    // Whole seconds from now (triggers are stored in whole seconds).
    let at = |seconds: i64| {
        let now = jiff::Timestamp::now().as_second();
        jiff::Timestamp::from_second(now + seconds).unwrap()
    };
    let first = at(2);
    let args =
        serde_json::json!({"name": "First", "text": "one", "trigger_time": first.to_string()})
            .to_string();
    let out = home
        .cmd()
        .args(["tools", "call", "create_due_item", "--args", &args])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut watcher = home
        .cmd()
        .args(["remind", "--watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = BufReader::new(watcher.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines() {
            let Ok(line) = line else { break };
            if tx.send((line, SystemTime::now())).is_err() {
                break;
            }
        }
    });
    let wait_line = |rx: &mpsc::Receiver<(String, SystemTime)>| {
        rx.recv_timeout(Duration::from_secs(15))
            .expect("an announcement within 15 s")
    };
    let (line, seen) = wait_line(&rx);
    assert!(line.ends_with("First — one"), "{line}");
    let due = SystemTime::UNIX_EPOCH + Duration::from_secs(first.as_second() as u64);
    let late = seen.duration_since(due).expect("announced before its time");
    assert!(
        late <= Duration::from_secs(1),
        "announced {late:?} after its time"
    );

    // Another process adds an item 1 s ahead while the watcher runs.
    let second = at(1);
    let args =
        serde_json::json!({"name": "Second", "text": "two", "trigger_time": second.to_string()})
            .to_string();
    let out = home
        .cmd()
        .args(["tools", "call", "create_due_item", "--args", &args])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (line, seen) = wait_line(&rx);
    assert!(line.ends_with("Second — two"), "{line}");
    let due = SystemTime::UNIX_EPOCH + Duration::from_secs(second.as_second() as u64);
    assert!(seen >= due, "announced before its time");

    let pid = watcher.id().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = watcher.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = watcher.kill();
            panic!("elroy remind --watch did not end within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    // Nothing was announced twice.
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
}

const NOW: &str = "2026-12-01T08:00:00Z";

/// A home with plain items (checklist, updates) over a week and timed and contextual due items.
fn agenda_home() -> TestHome {
    let home = TestHome::new();
    let call = |tool: &str, args: serde_json::Value| {
        ok_at(
            &home,
            NOW,
            &["tools", "call", tool, "--args", &args.to_string()],
        );
    };
    call(
        "add_agenda_item",
        serde_json::json!({"text": "Water the plants\nThe ferns need more.", "item_date": "2026-12-01"}),
    );
    call(
        "add_agenda_checklist_item",
        serde_json::json!({"item_name": "Water the plants", "text": "ferns"}),
    );
    call(
        "add_agenda_checklist_item",
        serde_json::json!({"item_name": "Water the plants", "text": "cactus"}),
    );
    call(
        "complete_agenda_checklist_item",
        serde_json::json!({"item_name": "Water the plants", "checklist_item_id": 1}),
    );
    call(
        "add_agenda_item_update",
        serde_json::json!({"item_name": "Water the plants", "note": "ferns done"}),
    );
    call(
        "add_agenda_item",
        serde_json::json!({"text": "Write the report", "item_date": "2026-12-03"}),
    );
    call(
        "add_agenda_item",
        serde_json::json!({"text": "Next month", "item_date": "2027-01-05"}),
    );
    create_due(
        &home,
        NOW,
        "Call the dentist",
        "Ask about the invoice",
        "09:00",
    );
    create_due(
        &home,
        NOW,
        "Pay rent",
        "Transfer\nto the landlord",
        "tomorrow 9am",
    );
    create_due(&home, NOW, "Standup", "", "in 10 minutes");
    call(
        "create_due_item",
        serde_json::json!({"name": "Buy milk", "text": "semi-skimmed", "trigger_context": "when at the shop"}),
    );
    home
}

#[test]
fn agenda_and_due_tables_and_json() {
    let home = agenda_home();
    // 35 minutes later: the standup is overdue.
    let later = "2026-12-01T08:35:00Z";
    insta::assert_snapshot!("agenda_today", ok_at(&home, later, &["agenda"]));
    insta::assert_snapshot!("agenda_week", ok_at(&home, later, &["agenda", "week"]));
    insta::assert_snapshot!(
        "agenda_tomorrow_empty",
        ok_at(&home, later, &["agenda", "tomorrow"])
    );
    insta::assert_snapshot!(
        "agenda_week_json",
        ok_at(&home, later, &["agenda", "week", "--json"])
    );
    insta::assert_snapshot!("due", ok_at(&home, later, &["due"]));
    insta::assert_snapshot!("due_json", ok_at(&home, later, &["due", "--json"]));
    // NO_COLOR or not, a pipe gets plain text.
    let plain = home
        .cmd()
        .env("ELROY_NOW", later)
        .env("NO_COLOR", "1")
        .arg("due")
        .output()
        .unwrap();
    assert_eq!(stdout(&plain), ok_at(&home, later, &["due"]));
    assert!(!stdout(&plain).contains('\x1b'));
    // Point 7: another zone changes the display, never the stored trigger.
    let kolkata = home
        .cmd()
        .env("ELROY_NOW", later)
        .env("ELROY_TIMEZONE", "Asia/Kolkata")
        .args(["due", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&kolkata.stdout).unwrap();
    assert_eq!(json["timed"][1]["trigger_datetime"], "2026-12-01T09:00:00Z");
    assert_eq!(json["timed"][1]["local"], "2026-12-01 14:30:00+05:30");
    assert!(
        std::fs::read_to_string(home.home().join("agenda/Call_the_dentist.md"))
            .unwrap()
            .contains("trigger_datetime: 2026-12-01 09:00:00+00:00")
    );
    let bad = run_at(&home, later, &["agenda", "someday"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("not a day: 'someday'"),
        "{}",
        stderr(&bad)
    );
}

/// `elroy due snooze` and `elroy due done` are one versioned-home commit each, listed by
/// `elroy history` and reverted by `elroy undo`; snoozing changes only `trigger_datetime`.
#[test]
fn snooze_and_done_are_recorded_and_undone() {
    let home = agenda_home();
    let file = home.home().join("agenda/Call_the_dentist.md");
    let before = std::fs::read_to_string(&file).unwrap();
    ok_at(
        &home,
        NOW,
        &[
            "due",
            "snooze",
            "Call the dentist",
            "tomorrow",
            "at",
            "10am",
        ],
    );
    let snoozed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        snoozed,
        before.replace(
            "trigger_datetime: 2026-12-01 09:00:00+00:00",
            "trigger_datetime: 2026-12-02 10:00:00+00:00"
        )
    );
    assert_ne!(snoozed, before);
    let history = ok_at(&home, NOW, &["history"]);
    assert!(
        history
            .lines()
            .next()
            .unwrap()
            .ends_with("snooze_due_item: agenda/Call_the_dentist.md"),
        "{history}"
    );
    ok_at(
        &home,
        NOW,
        &["due", "done", "Call the dentist", "--comment", "called"],
    );
    let history = ok_at(&home, NOW, &["history"]);
    assert!(
        history
            .lines()
            .next()
            .unwrap()
            .ends_with("complete_due_item: agenda/Call_the_dentist.md"),
        "{history}"
    );
    assert!(!ok_at(&home, NOW, &["due"]).contains("Call the dentist"));
    ok_at(&home, NOW, &["undo"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), snoozed);
    ok_at(&home, NOW, &["undo"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

    // Errors: unknown item, contextual item, a time that has passed, not a time.
    for (args, message) in [
        (
            vec!["due", "snooze", "Nope", "10m"],
            "Active due item 'Nope' not found.",
        ),
        (
            vec!["due", "snooze", "Buy milk", "10m"],
            "'Buy milk' has no trigger time (it is a contextual due item), so it cannot be snoozed",
        ),
        (
            vec!["due", "snooze", "Pay rent", "7am"],
            "'7am' is 07:00 today, which has already passed (it is 08:00 now).",
        ),
        (
            vec!["due", "snooze", "Pay rent", "whenever"],
            "Invalid datetime format: 'whenever'.",
        ),
        (
            vec!["due", "snooze", "Pay rent", "whenever"],
            "or as people say it: 10m, 2h, tonight at 9, tomorrow 9am",
        ),
        (
            vec!["due", "done", "Nope"],
            "Active due item 'Nope' not found.",
        ),
    ] {
        let out = run_at(&home, NOW, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

/// Kind: control characters a model or a hand edit put into a name or a text (escape
/// sequences, bells, line breaks) never reach the terminal: `elroy remind` prints one line per
/// item and `elroy due` one row, with spaces in their place.
#[test]
fn control_characters_in_names_and_texts_are_not_printed() {
    let home = TestHome::new();
    create_due(
        &home,
        "2026-12-01T08:00:00Z",
        "Pay\trent\nnow",
        "ctl \u{7} \u{1b}[31mred",
        "2026-12-01 09:00",
    );
    let reminded = ok_at(&home, "2026-12-01T09:00:00Z", &["remind"]);
    assert_eq!(reminded.lines().count(), 1, "{reminded:?}");
    assert!(
        !reminded.contains(['\u{1b}', '\u{7}', '\t']),
        "{reminded:?}"
    );
    assert!(reminded.contains("Pay rent now"), "{reminded:?}");
    let listed = ok_at(&home, "2026-12-01T09:00:00Z", &["due"]);
    assert!(!listed.contains(['\u{1b}', '\u{7}', '\t']), "{listed:?}");
}

/// A hand-written date or trigger time elroy cannot read is named, not left out silently: the
/// item stays off every day (`docs/formats.md#agenda-item-keys`) and the due item never fires, and
/// both commands say which file and why (on standard error; the tables and JSON are unchanged).
#[test]
fn unreadable_dates_and_trigger_times_are_named() {
    let home = agenda_home();
    let later = "2026-12-01T08:35:00Z";
    let table = ok_at(&home, later, &["agenda"]);
    let due_table = ok_at(&home, later, &["due"]);
    std::fs::write(
        home.home().join("agenda/Someday.md"),
        "---\ncompleted: false\ndate: next week\nstatus: created\n---\n\nSomeday\n",
    )
    .unwrap();
    std::fs::write(
        home.home().join("agenda/Early.md"),
        "---\ncompleted: false\ndate: '2026-12-01'\nname: Early\nstatus: created\n\
         trigger_datetime: 2026-12-01 8:30\n---\n\nEarly\n",
    )
    .unwrap();
    let agenda = run_at(&home, later, &["agenda"]);
    assert!(agenda.status.success());
    assert_eq!(stdout(&agenda), table);
    assert!(
        stderr(&agenda).contains(
            "warning: agenda/Someday.md: date \"next week\" is not a date elroy can read"
        ),
        "{}",
        stderr(&agenda)
    );
    let due = run_at(&home, later, &["due"]);
    assert!(due.status.success());
    assert!(stdout(&due).starts_with(due_table.trim_end_matches('\n').lines().next().unwrap()));
    assert!(
        stderr(&due).contains(
            "warning: agenda/Early.md: trigger_datetime \"2026-12-01 8:30\" is not a time elroy \
             can read"
        ),
        "{}",
        stderr(&due)
    );
}

/// Kind: a read-only command on a home that does not exist. `HOME=/nonexistent elroy remind`
/// (cron with no home) and a mistyped `ELROY_HOME` exit 1 naming the path, and create nothing;
/// `due`, `agenda`, `doctor` and `history` likewise.
#[test]
fn read_only_commands_refuse_a_missing_home() {
    let home = TestHome::new();
    let missing = home.root().join("typo-home");
    for args in [
        &["remind"][..],
        &["due"],
        &["due", "--json"],
        &["agenda"],
        &["doctor"],
        &["history"],
    ] {
        let out = home
            .cmd()
            .env("ELROY_HOME", &missing)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("no elroy home at {}", missing.display())),
            "{args:?}: {err}"
        );
        assert!(err.contains("mkdir -p"), "{args:?}: {err}");
        assert_eq!(stdout(&out), "", "{args:?}");
        assert!(!missing.exists(), "{args:?} created the home");
    }
    let out = home
        .cmd()
        .env_remove("ELROY_HOME")
        .env("HOME", "/nonexistent")
        .arg("remind")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no elroy home at /nonexistent/.elroy"),
        "{}",
        stderr(&out)
    );
    assert!(!std::path::Path::new("/nonexistent").exists());
}

/// Kind: an announcement nobody could read, with standard output closed (`elroy remind >&-`,
/// where the standard library would drop the line silently; `> /dev/full` is the other case,
/// above): exit 1, nothing claimed, the next run announces it.
#[test]
fn remind_with_stdout_closed_announces_nothing() {
    let home = TestHome::new();
    create_due(
        &home,
        "2026-12-01T08:00:00Z",
        "Stretch",
        "",
        "2026-12-01 09:00",
    );
    // The shell closes descriptor 1 and runs elroy with the test environment.
    let mut shell = std::process::Command::new("/bin/sh");
    let probe = home.cmd();
    for (k, v) in probe.get_envs() {
        match v {
            Some(v) => shell.env(k, v),
            None => shell.env_remove(k),
        };
    }
    let out = shell
        .env("ELROY_NOW", "2026-12-01T09:00:00Z")
        .env("ELROY_BIN", env!("CARGO_BIN_EXE_elroy"))
        .args(["-c", "exec \"$ELROY_BIN\" remind >&-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write to standard output: it is closed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        ok_at(&home, "2026-12-01T09:01:00Z", &["remind"]),
        "⏰ 09:00 Stretch\n"
    );
}

/// A `notify_command` that hangs is stopped after its 10 s with its whole process group: the
/// `sleep` it started (and that sleep's own child) are gone too, not left running.
#[test]
fn a_hanging_notify_command_is_stopped_with_its_children() {
    use std::os::unix::fs::PermissionsExt;
    let home = TestHome::new();
    let pids = home.root().join("pids");
    let script = home.root().join("hang.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! >> '{p}'\nsh -c 'sleep 301 & echo $! >> {p}; wait' &\nwait\n",
            p = pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    create_due(
        &home,
        "2026-12-01T08:00:00Z",
        "Stretch",
        "",
        "2026-12-01 09:00",
    );
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-12-01T09:00:00Z")
        .env("ELROY_NOTIFY_COMMAND", &script)
        .arg("remind")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "⏰ 09:00 Stretch\n");
    assert!(
        stderr(&out).contains("did not finish within 10 s and was stopped"),
        "{}",
        stderr(&out)
    );
    let pids = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    // A killed child is gone, or a zombie until init reaps it; bounded wait for the reaping.
    let alive = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in pids {
        assert!(
            !alive(pid),
            "process {pid} of the notify command still runs"
        );
    }
}

/// A home in Berlin (its change to summer time is on 2026-03-29).
fn berlin_home() -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        "timezone: Europe/Berlin\n",
    )
    .unwrap();
    home
}

fn trigger_of(home: &TestHome, file: &str) -> String {
    let text = std::fs::read_to_string(home.home().join("agenda").join(file)).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("trigger_datetime: "))
        .unwrap_or_default()
        .to_owned()
}

/// The life cycle of a repeating item with the real binary at fixed clocks:
/// `elroy remind` announces each occurrence once and moves the trigger on (across the DST
/// change 09:00 stays 09:00), `done` after an announcement keeps the next one, a machine off
/// for four days gets one line with the count, a snooze moves only this occurrence, every move
/// is a commit `elroy undo` reverts, and `--series` ends it.
#[test]
fn a_repeating_item_through_its_life_cycle() {
    let home = berlin_home();
    let file = "Standup.md";
    // Thursday 2026-03-26 08:00 in Berlin (+01:00).
    create_due(
        &home,
        "2026-03-26T07:00:00Z",
        "Standup",
        "Daily sync",
        "every weekday at 9am",
    );
    assert_eq!(trigger_of(&home, file), "2026-03-26 08:00:00+00:00");
    let remind = |now: &str| ok_at(&home, now, &["remind"]);
    assert_eq!(remind("2026-03-26T07:59:00Z"), "");
    assert_eq!(
        remind("2026-03-26T08:01:00Z"),
        "⏰ 09:00 Standup — Daily sync\n"
    );
    assert_eq!(trigger_of(&home, file), "2026-03-27 08:00:00+00:00");
    assert_eq!(remind("2026-03-26T08:02:00Z"), "");
    let history = ok_at(&home, "2026-03-26T08:02:00Z", &["history"]);
    assert!(
        history
            .lines()
            .next()
            .unwrap()
            .ends_with("next_occurrence: agenda/Standup.md"),
        "{history}"
    );
    // `elroy due` and its JSON show the rule in words.
    let table = ok_at(&home, "2026-03-26T08:02:00Z", &["due"]);
    assert!(table.contains("REPEATS"), "{table}");
    assert!(table.contains("every weekday at 09:00"), "{table}");
    let json: serde_json::Value =
        serde_json::from_str(&ok_at(&home, "2026-03-26T08:02:00Z", &["due", "--json"])).unwrap();
    assert_eq!(json["timed"][0]["repeats"], "every weekday at 09:00");
    assert_eq!(json["timed"][0]["local"], "2026-03-27 09:00:00+01:00");
    // Done after the announcement: this (Thursday's) occurrence; Friday's stays.
    assert_eq!(
        ok_at(&home, "2026-03-26T08:20:00Z", &["due", "done", "Standup"]),
        "Due item 'Standup' has been marked as completed. It repeats every weekday at 09:00: \
         next on Fri 2026-03-27 09:00 +01:00.\n"
    );
    assert_eq!(trigger_of(&home, file), "2026-03-27 08:00:00+00:00");
    // Friday, then across the change to summer time: Monday 09:00 is 07:00 UTC.
    assert_eq!(
        remind("2026-03-27T08:00:30Z"),
        "⏰ 09:00 Standup — Daily sync\n"
    );
    assert_eq!(trigger_of(&home, file), "2026-03-30 07:00:00+00:00");
    // The machine is off from Monday to Thursday: one line with the count.
    assert_eq!(
        remind("2026-04-02T07:30:00Z"),
        "⏰ 2026-03-30 09:00 Standup — Daily sync (4 occurrences since then, every weekday at \
         09:00)\n"
    );
    assert_eq!(trigger_of(&home, file), "2026-04-03 07:00:00+00:00");
    assert_eq!(remind("2026-04-02T07:31:00Z"), "");
    // Friday: announced, then snoozed 10 minutes: only this occurrence moves.
    assert_eq!(
        remind("2026-04-03T07:00:30Z"),
        "⏰ 09:00 Standup — Daily sync\n"
    );
    assert_eq!(trigger_of(&home, file), "2026-04-06 07:00:00+00:00");
    assert_eq!(
        ok_at(
            &home,
            "2026-04-03T07:01:00Z",
            &["due", "snooze", "Standup", "10m"]
        ),
        "Due item 'Standup' snoozed until Fri 2026-04-03 09:11 +02:00. Only this \
         occurrence moves; it repeats every weekday at 09:00.\n"
    );
    assert_eq!(
        remind("2026-04-03T07:12:00Z"),
        "⏰ 09:11 Standup — Daily sync\n"
    );
    assert_eq!(trigger_of(&home, file), "2026-04-06 07:00:00+00:00");
    // Each move was one commit: undo takes back the last one.
    ok_at(&home, "2026-04-03T07:13:00Z", &["undo"]);
    assert_eq!(trigger_of(&home, file), "2026-04-03 07:11:00+00:00");
    ok_at(&home, "2026-04-03T07:13:00Z", &["undo"]);
    assert_eq!(trigger_of(&home, file), "2026-04-06 07:00:00+00:00");
    // `--series` ends it.
    assert_eq!(
        ok_at(
            &home,
            "2026-04-03T07:14:00Z",
            &["due", "done", "Standup", "--series"]
        ),
        "Due item 'Standup' has been marked as completed; it no longer repeats (every weekday \
         at 09:00).\n"
    );
    assert_eq!(
        ok_at(&home, "2026-04-03T07:14:00Z", &["due"]),
        "No due items.\n"
    );
    assert_eq!(remind("2026-04-06T07:01:00Z"), "");
}

/// Each way of saying a repetition (a phrase, a cron expression, an RRULE line, with a count),
/// through three occurrences announced by `elroy remind`.
#[test]
fn every_kind_of_repetition_is_announced_at_each_occurrence() {
    let home = berlin_home();
    let now = "2026-03-26T07:00:00Z";
    create_due(&home, now, "Pills", "", "daily at 8pm for 3 times");
    create_due(&home, now, "Report", "", "30 18 * * mon,thu");
    create_due(
        &home,
        now,
        "Review",
        "",
        "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=FR;BYHOUR=16;BYMINUTE=0",
    );
    create_due(&home, now, "Rent", "", "last friday of every month at 5pm");
    let remind = |now: &str| ok_at(&home, now, &["remind"]);
    let walk: &[(&str, &str)] = &[
        ("2026-03-26T17:31:00Z", "⏰ 18:30 Report\n"),
        ("2026-03-26T19:01:00Z", "⏰ 20:00 Pills\n"),
        ("2026-03-27T15:01:00Z", "⏰ 16:00 Review\n"),
        ("2026-03-27T16:01:00Z", "⏰ 17:00 Rent\n"),
        ("2026-03-27T19:01:00Z", "⏰ 20:00 Pills\n"),
        ("2026-03-28T19:01:00Z", "⏰ 20:00 Pills\n"),
        // Three times: over.
        ("2026-03-29T18:01:00Z", ""),
        ("2026-03-30T16:31:00Z", "⏰ 18:30 Report\n"),
        ("2026-04-02T16:31:00Z", "⏰ 18:30 Report\n"),
        ("2026-04-10T14:01:00Z", "⏰ 16:00 Review\n"),
        ("2026-04-24T14:01:00Z", "⏰ 16:00 Review\n"),
        ("2026-04-24T15:01:00Z", "⏰ 17:00 Rent\n"),
        ("2026-05-29T15:01:00Z", "⏰ 17:00 Rent\n"),
    ];
    for (at, expected) in walk {
        assert_eq!(&remind(at), expected, "at {at}");
        // Three occurrences of the cron rule and of the RRULE seen: end them.
        if *at == "2026-04-02T16:31:00Z" {
            ok_at(&home, at, &["due", "done", "Report", "--series"]);
        }
        if *at == "2026-04-24T14:01:00Z" {
            ok_at(&home, at, &["due", "done", "Review", "--series"]);
        }
    }
    assert!(!ok_at(&home, "2026-05-29T15:02:00Z", &["due"]).contains("Pills"));
}

/// Eight `elroy remind` processes at once, twice, on four repeating items: each occurrence is
/// announced exactly once and each file moves on exactly once.
#[test]
fn concurrent_reminds_announce_each_occurrence_once() {
    let home = berlin_home();
    let names: Vec<String> = (1..=4).map(|i| format!("Task {i}")).collect();
    for name in &names {
        create_due(
            &home,
            "2026-03-26T07:00:00Z",
            name,
            "text",
            "every day at 10",
        );
    }
    for (now, next) in [
        ("2026-03-26T09:30:00Z", "2026-03-27 09:00:00+00:00"),
        ("2026-03-27T09:30:00Z", "2026-03-28 09:00:00+00:00"),
    ] {
        let children: Vec<_> = (0..8)
            .map(|_| {
                home.cmd()
                    .env("ELROY_NOW", now)
                    .arg("remind")
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut lines = Vec::new();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(stderr(&out), "");
            lines.extend(stdout(&out).lines().map(str::to_owned));
        }
        lines.sort();
        let expected: Vec<String> = names
            .iter()
            .map(|n| format!("⏰ 10:00 {n} — text"))
            .collect();
        assert_eq!(lines, expected, "at {now}");
        for i in 1..=4 {
            assert_eq!(trigger_of(&home, &format!("Task_{i}.md")), next, "at {now}");
        }
    }
}

/// The oracle (`../shared/tools/elroy-oracle`, real Elroy 0.5.0), when it is set up: its
/// `elroy-py` script and the virtual environment's Python. `None` (the test says SKIPPED) when
/// either is missing. `ELROY_SHARED_DIR` overrides where shared/ is.
fn oracle() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let shared = std::env::var_os("ELROY_SHARED_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        std::path::PathBuf::from,
    );
    let script = shared.join("tools/elroy-oracle/elroy-py");
    let base = std::env::var_os("ELROY_ORACLE_HOME").map_or_else(
        || {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/elroy-oracle")
        },
        std::path::PathBuf::from,
    );
    let python = base.join("venv/bin/python");
    let installed = python.exists()
        && std::process::Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m, sys; sys.exit(m.version('elroy') != '0.5.0')",
            ])
            .status()
            .is_ok_and(|s| s.success());
    (script.exists() && installed).then_some((script, python))
}

/// Elroy 0.5.0 reads a repeating item's file without error and sees it at its next
/// occurrence: after `elroy remind` moved it on, Elroy's own front-matter reader gives the next
/// occurrence as `trigger_datetime`, and Elroy's tools run on the home with the file in it.
/// (Elroy keeps due items in its own database, so its due-item tools list only items it made; an
/// edit by Elroy rewrites the front matter with its own keys, which drops `recurrence` — the item
/// then fires once more, at that next occurrence, and stays readable by both.)
#[test]
fn elroy_reads_a_repeating_item_at_its_next_occurrence() {
    let Some((elroy_py, python)) = oracle() else {
        println!(
            "SKIPPED: the Elroy 0.5.0 oracle is not installed (../shared/tools/elroy-oracle/setup.sh)"
        );
        return;
    };
    let home = berlin_home();
    create_due(
        &home,
        "2026-03-26T07:00:00Z",
        "Standup",
        "Daily sync",
        "every weekday at 9am",
    );
    assert_eq!(
        ok_at(&home, "2026-03-26T08:01:00Z", &["remind"]),
        "⏰ 09:00 Standup — Daily sync\n"
    );
    let file = home.home().join("agenda/Standup.md");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("\nrecurrence: DTSTART;TZID=Europe/Berlin:")
    );
    // Elroy's own reader of agenda front matter.
    let read = std::process::Command::new(&python)
        .args([
            "-c",
            "import sys; from pathlib import Path\n\
             from elroy.repository.agenda.file_storage import read_agenda_metadata\n\
             m = read_agenda_metadata(Path(sys.argv[1]))\n\
             print(m['trigger_datetime'].isoformat(), m['status'], m['completed'])",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(read.status.success(), "{}", stderr(&read));
    assert_eq!(stdout(&read), "2026-03-27T08:00:00+00:00 created False\n");
    // Elroy's tools on the home: no error; the item is a due item, so not an agenda item.
    let elroy = |tool: &str, args: &str| {
        std::process::Command::new(&elroy_py)
            .args(["--home"])
            .arg(home.home())
            .args(["tools", "call", tool, "--args", args])
            .env("ELROY_NOW", "2026-03-26T08:05:00Z")
            .env("TZ", "Europe/Berlin")
            .output()
            .unwrap()
    };
    let listed = elroy("list_agenda_items", r#"{"item_date":"2026-03-26"}"#);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(!stdout(&listed).contains("Standup"), "{}", stdout(&listed));
    let updated = elroy(
        "add_agenda_item_update",
        r#"{"item_name":"Standup","note":"seen by Elroy"}"#,
    );
    assert!(updated.status.success(), "{}", stderr(&updated));
    // After Elroy's edit the item is still due at its next occurrence for elroy.
    let json: serde_json::Value =
        serde_json::from_str(&ok_at(&home, "2026-03-26T08:06:00Z", &["due", "--json"])).unwrap();
    assert_eq!(
        json["timed"][0]["local"], "2026-03-27 09:00:00+01:00",
        "{json}"
    );
}

/// `day_start_time` moves the time of a day said without one (`friday`, `every monday`); a value
/// that is not `HH:MM` is a warning and the default 09:00 holds.
#[test]
fn day_start_time_is_the_time_of_a_day_said_alone() {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        "day_start_time: '08:30'\n",
    )
    .unwrap();
    // Tuesday 2026-12-01 in UTC.
    create_due(&home, "2026-12-01T10:00:00Z", "Bins", "", "friday");
    create_due(&home, "2026-12-01T10:00:00Z", "Plants", "", "every monday");
    assert_eq!(trigger_of(&home, "Bins.md"), "2026-12-04 08:30:00+00:00");
    assert_eq!(trigger_of(&home, "Plants.md"), "2026-12-07 08:30:00+00:00");
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        "day_start_time: half past eight\n",
    )
    .unwrap();
    let args =
        serde_json::json!({"name": "Rent", "text": "", "trigger_time": "friday"}).to_string();
    let out = run_at(
        &home,
        "2026-12-01T10:00:00Z",
        &["tools", "call", "create_due_item", "--args", &args],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("day_start_time: 'half past eight' is not a time as HH:MM"),
        "{}",
        stderr(&out)
    );
    assert_eq!(trigger_of(&home, "Rent.md"), "2026-12-04 09:00:00+00:00");
}

/// One format for a due time wherever a person reads one: the time `create_due_item` confirms is
/// the time `elroy due` lists and `elroy due snooze` confirms. Two zones.
#[test]
fn one_due_time_format_for_the_tool_the_list_and_snooze() {
    for (zone, shown, snoozed) in [
        (
            "UTC",
            "Sun 2026-12-06 09:00 +00:00",
            "Sun 2026-12-06 10:30 +00:00",
        ),
        (
            "Asia/Kolkata",
            "Sun 2026-12-06 09:00 +05:30",
            "Sun 2026-12-06 10:30 +05:30",
        ),
    ] {
        let home = TestHome::new();
        let at = |args: &[&str]| {
            let out = home
                .cmd()
                .env("ELROY_NOW", NOW)
                .env("ELROY_TIMEZONE", zone)
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            stdout(&out)
        };
        let args =
            serde_json::json!({"name": "Dentist", "text": "Call", "trigger_time": "sunday 9am"});
        let created = at(&[
            "tools",
            "call",
            "create_due_item",
            "--args",
            &args.to_string(),
        ]);
        assert!(created.contains(shown), "{zone}: {created}");
        let listed = at(&["due"]);
        assert!(
            listed.contains(&format!("{shown}  in ")),
            "{zone}: {listed}"
        );
        let moved = at(&["due", "snooze", "Dentist", "sunday 10:30"]);
        assert!(moved.contains(snoozed), "{zone}: {moved}");
        assert!(at(&["due"]).contains(snoozed), "{zone}");
    }
}
