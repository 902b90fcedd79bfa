#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `elroy import-elroy DIR --db FILE` on the Elroy 0.5.0 fixture: the imported home answers
//! `list_agenda_items`, `list_feature_requests`, `print_due_item` and `print_memory` as Elroy did
//! (`expected.json` `final`; D7: `Trigger Time:` lines compare as instants), files keep their
//! bytes (agenda files gain only their `name` line), and a second import changes nothing.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{TestHome, shared_dir, stderr, stdout};
use serde_json::Value;

fn fixture() -> PathBuf {
    shared_dir().join("fixtures/elroy-home-0.5.0")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

/// Every file under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `Trigger Time: …` as a UTC instant: Elroy prints naive UTC, elroy local time with its offset.
fn trigger_instant(text: &str) -> jiff::Timestamp {
    let text = text.trim();
    if let Ok(ts) = jiff::fmt::temporal::DateTimeParser::new().parse_timestamp(text) {
        return ts;
    }
    let civil: jiff::civil::DateTime = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    jiff::tz::TimeZone::UTC.to_timestamp(civil).unwrap()
}

fn same_due_item(expected: &str, ours: &str) -> bool {
    let split = |text: &str| {
        let mut instants = Vec::new();
        let mut rest = Vec::new();
        for line in text.split('\n') {
            match line.strip_prefix("Trigger Time: ") {
                Some(t) => {
                    instants.push(trigger_instant(t));
                    rest.push("Trigger Time: ");
                }
                None => rest.push(line),
            }
        }
        (instants, rest.join("\n"))
    };
    split(expected) == split(ours)
}

struct Setup {
    home: TestHome,
    source: PathBuf,
    db: PathBuf,
    token: String,
    posix_tz: String,
}

impl Setup {
    fn new() -> Self {
        let expected = expected();
        let home = TestHome::new();
        let source = home.root().join("elroy-py-home");
        copy_dir(&fixture().join("home"), &source);
        let db = home.root().join("elroy-copy.db");
        std::fs::write(
            &db,
            std::fs::read(fixture().join("elroy.db.sqlite")).unwrap(),
        )
        .unwrap();
        let env = &expected["environment"];
        Setup {
            home,
            source,
            db,
            token: env["user_token"].as_str().unwrap().to_owned(),
            posix_tz: env["timezone"]["posix_tz"].as_str().unwrap().to_owned(),
        }
    }

    fn cmd(&self) -> std::process::Command {
        let mut cmd = self.home.cmd();
        cmd.env("ELROY_USER_TOKEN", &self.token)
            .env("TZ", &self.posix_tz)
            .env("ELROY_NOW", "2026-03-17T03:00:00Z");
        cmd
    }

    fn import(&self) -> String {
        let out = self
            .cmd()
            .arg("import-elroy")
            .arg(&self.source)
            .arg("--db")
            .arg(&self.db)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    }

    fn call(&self, tool: &str, args: &Value) -> String {
        let out = self
            .cmd()
            .args(["tools", "call", tool, "--args", &args.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool} {args}: {}", stderr(&out));
        let text = stdout(&out);
        text.strip_suffix('\n').unwrap_or(&text).to_owned()
    }

    fn user_home(&self) -> PathBuf {
        self.home.home().join("users").join(&self.token)
    }
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
        .unwrap()
}

#[test]
fn imported_home_answers_as_elroy_and_a_second_import_changes_nothing() {
    let expected = expected();
    let finals = &expected["final"];
    let setup = Setup::new();
    let source_before = snapshot(&setup.source);
    let db_before = std::fs::read(&setup.db).unwrap();

    let first = setup.import();
    assert!(first.starts_with("Imported 16 from "), "{first}");
    assert!(
        first.contains("  agenda/Renew_passport.md  name 'Renew passport'\n"),
        "{first}"
    );
    assert!(
        first.contains(
            "  memories/Priya_s_plan__Kyoto_trip__2026.md  memory 1 'Priya's plan: Kyoto trip #2026' (inactive)\n"
        ),
        "{first}"
    );
    assert!(
        first.contains(
            "  memories/Priya_s_plan__Kyoto_trip__2026-2.md  memory 3 'Priya's plan: Kyoto trip #2026' (active)\n"
        ),
        "{first}"
    );
    assert!(!first.contains("Skipped"), "{first}");

    // Elroy's answers, from the imported home.
    for (date, listing) in finals["list_agenda_items"].as_object().unwrap() {
        let ours = setup.call(
            "list_agenda_items",
            &serde_json::json!({ "item_date": date }),
        );
        let ours: Value = serde_json::from_str(&ours).unwrap();
        let theirs: Value = serde_json::from_str(listing.as_str().unwrap()).unwrap();
        assert_eq!(ours, theirs, "list_agenda_items {date}");
    }
    assert_eq!(
        setup.call("list_feature_requests", &serde_json::json!({})),
        finals["list_feature_requests"].as_str().unwrap()
    );
    let due = finals["print_due_item"].as_object().unwrap();
    assert_eq!(due.len(), 4);
    for (name, answer) in due {
        let ours = setup.call("print_due_item", &serde_json::json!({ "name": name }));
        assert!(
            same_due_item(answer.as_str().unwrap(), &ours),
            "print_due_item {name}:\n  elroy-py: {answer}\n  ours    : {ours:?}"
        );
    }
    let memories = finals["print_memory"].as_object().unwrap();
    assert_eq!(memories.len(), 2);
    for (name, answer) in memories {
        let ours = setup.call("print_memory", &serde_json::json!({ "memory_name": name }));
        assert_eq!(ours, answer.as_str().unwrap(), "print_memory {name}");
    }

    // Files keep their bytes; an agenda file gains exactly its `name` line.
    let user_home = setup.user_home();
    for (rel, bytes) in &source_before {
        let imported = std::fs::read(user_home.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        if rel.starts_with("agenda/") {
            let imported = String::from_utf8(imported).unwrap();
            let original = String::from_utf8(bytes.clone()).unwrap();
            let name_lines: Vec<&str> = imported
                .lines()
                .filter(|l| l.starts_with("name: "))
                .collect();
            assert_eq!(name_lines.len(), 1, "{rel}:\n{imported}");
            let without = imported.replacen(&format!("{}\n", name_lines[0]), "", 1);
            assert_eq!(without, original, "{rel}");
        } else {
            assert_eq!(&imported, bytes, "{rel}");
        }
    }
    // The sources are read, never written.
    assert_eq!(snapshot(&setup.source), source_before);
    assert_eq!(std::fs::read(&setup.db).unwrap(), db_before);

    // The import is one change of the versioned home.
    let history = setup.cmd().arg("history").output().unwrap();
    assert!(history.status.success(), "{}", stderr(&history));
    let history = stdout(&history);
    let imports: Vec<&str> = history
        .lines()
        .filter(|l| l.contains(" import-elroy: 16 files from "))
        .collect();
    assert_eq!(imports.len(), 1, "{history}");

    // A second import reports nothing new and changes no file.
    let files_before = snapshot(&user_home);
    let second = setup.import();
    assert!(
        second.starts_with("Nothing new to import from "),
        "{second}"
    );
    assert!(
        second.contains("Already here (imported before): 16\n"),
        "{second}"
    );
    assert!(!second.contains("Skipped"), "{second}");
    assert_eq!(snapshot(&user_home), files_before);
    let history_after = setup.cmd().arg("history").output().unwrap();
    assert_eq!(stdout(&history_after), history, "no new commit");
    for (name, answer) in memories {
        let ours = setup.call("print_memory", &serde_json::json!({ "memory_name": name }));
        assert_eq!(
            ours,
            answer.as_str().unwrap(),
            "print_memory {name} after re-import"
        );
    }
}

#[test]
fn conflicts_are_skipped_with_the_reason() {
    let setup = Setup::new();
    // The elroy home already has its own memory with id 1 and a different agenda file of the
    // same name as one of Elroy's.
    let created = setup.call(
        "create_memory",
        &serde_json::json!({"name": "Own memory", "text": "Mine."}),
    );
    assert_eq!(created, "New memory created: Own memory");
    let agenda = setup.user_home().join("agenda");
    std::fs::create_dir_all(&agenda).unwrap();
    std::fs::write(
        agenda.join("Renew_passport.md"),
        "---\ncompleted: false\ndate: '2026-03-16'\n---\n\nMine",
    )
    .unwrap();
    std::fs::write(setup.source.join("agenda/notes.txt"), "not an item").unwrap();

    let report = setup.import();
    assert!(report.starts_with("Imported 14 from "), "{report}");
    assert!(report.contains("Skipped 3:\n"), "{report}");
    assert!(
        report.contains("  agenda/Renew_passport.md  a different file with this name is already in the elroy home\n"),
        "{report}"
    );
    assert!(
        report.contains("  agenda/notes.txt  not a markdown file\n"),
        "{report}"
    );
    assert!(
        report.contains("  memories/Priya_s_plan__Kyoto_trip__2026.md  memory id 1 is already used in this elroy home (by 'Own memory', Own_memory.md)\n"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(agenda.join("Renew_passport.md")).unwrap(),
        "---\ncompleted: false\ndate: '2026-03-16'\n---\n\nMine"
    );
}
