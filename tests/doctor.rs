//! `elroy doctor`: every store, every file, the database and the versioned home, one
//! line per problem and a summary, exit 1 when anything is wrong; and the warnings of ordinary
//! commands, which summarize many similar problems in one line.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{TestHome, stderr, stdout};

fn doctor(home: &TestHome, json: bool) -> std::process::Output {
    let mut cmd = home.cmd();
    cmd.arg("doctor");
    if json {
        cmd.arg("--json");
    }
    cmd.output().unwrap()
}

#[test]
fn a_clean_home_has_no_problems() {
    let home = TestHome::new();
    let out = home.call(
        "add_agenda_item",
        r#"{"text":"Pay rent","item_date":"2026-03-20"}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = home.call(
        "create_memory",
        r#"{"name":"Tea","text":"Likes green tea."}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        format!("no problems found in {}\n", home.home().display())
    );
    let json: serde_json::Value = serde_json::from_str(&stdout(&doctor(&home, true))).unwrap();
    assert_eq!(json, serde_json::json!({"ok": true, "problems": []}));
}

#[test]
fn each_broken_case_is_one_line_by_path() {
    let home = TestHome::new();
    // A first call creates the home, the database and the versioned home.
    let out = home.call(
        "add_agenda_item",
        r#"{"text":"Pay rent","item_date":"2026-03-20"}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let root = home.home();
    let write = |path: &str, bytes: &[u8]| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    // R2 (`docs/behaviour.md#r2-text-someone-else-wrote-is-never-lost`) and R7: front matter that
    // does not parse, a notes file not in UTF-8.
    write("agenda/Broken.md", b"---\ndate: [2026-03-20\n---\n\nx\n");
    write(
        "feature-requests/broken.md",
        b"---\ntitle: Re: October 24 booking\n---\n\nx\n",
    );
    write("MEMORY.md", b"- a\xff\n");
    write("memories/Bad.md", b"---\nid: [\n---\n\nx\n");
    write("memories/archive/Latin1.md", b"caf\xe9\n");
    // The versioned home: a change saved but not recorded, a merge leftover.
    write(
        ".git/elroy-pending.jsonl",
        b"{\"tool\":\"x\",\"paths\":[]}\n",
    );
    write("agenda/Pay_rent.md.orig", b"old\n");
    // elroy sync's sibling of a notes file, in the user home itself (not a store directory).
    write("MEMORY.md.sync-conflict-laptop", b"- theirs\n");
    write(
        "user-names.yaml.sync-conflict-laptop",
        b"full_name: Ada King\n",
    );
    // A file a person keeps in the home is not a leftover of a store file.
    write("notes.orig", b"mine\n");
    // What a write killed before its rename leaves (elroy_markdown::write_atomic's temporary),
    // an hour old; one written just now may belong to a write in progress and is not listed.
    write(
        "memories/.Tea.md.tmp-4242-0badf00d",
        b"---\nid: 1\n---\n\nhalf",
    );
    std::fs::File::options()
        .write(true)
        .open(root.join("memories/.Tea.md.tmp-4242-0badf00d"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    write(".MEMORY.md.tmp-4243-00c0ffee", b"- now\n");
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let expected_starts = [
        "agenda: invalid front matter in agenda/Broken.md: ",
        "memories: invalid front matter in memories/Bad.md: ",
        "memories: memories/archive/Latin1.md",
        "feature-requests: invalid front matter in feature-requests/broken.md: ",
        "notebook: MEMORY.md is not valid UTF-8",
        "versioned-home: .git/elroy-pending.jsonl: 1 saved change(s) are not recorded",
        "versioned-home: MEMORY.md.sync-conflict-laptop: a sync-conflict or merge leftover file",
        "versioned-home: agenda/Pay_rent.md.orig: a sync-conflict or merge leftover file",
        "versioned-home: memories/.Tea.md.tmp-4242-0badf00d: left by a write that was interrupted",
        "versioned-home: user-names.yaml.sync-conflict-laptop: a sync-conflict or merge leftover",
    ];
    assert_eq!(lines.len(), expected_starts.len() + 1, "{text}");
    for (line, start) in lines.iter().zip(expected_starts) {
        assert!(
            line.starts_with(start),
            "{line:?} should start with {start:?}"
        );
    }
    assert_eq!(
        lines.last().unwrap(),
        &format!("10 problems found in {}", root.display())
    );
    // The same for scripts.
    let out = doctor(&home, true);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["problems"].as_array().unwrap().len(), 10);
    assert_eq!(json["problems"][0]["area"], "agenda");
    assert_eq!(json["problems"][0]["path"], "agenda/Broken.md");
    // Nothing was changed.
    assert_eq!(std::fs::read(root.join("MEMORY.md")).unwrap(), b"- a\xff\n");
    assert_eq!(
        std::fs::read(root.join("memories/Bad.md")).unwrap(),
        b"---\nid: [\n---\n\nx\n"
    );
}

#[test]
fn a_damaged_database_is_reported() {
    let home = TestHome::new();
    let out = home.call("get_user_preferred_name", "{}");
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(home.home().join("state.db"), b"not a database at all").unwrap();
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.starts_with("database: state.db: "), "{text}");
    let summary = format!("1 problem found in {}\n", home.home().display());
    assert!(text.ends_with(&summary), "{text}");
}

#[test]
fn many_similar_warnings_make_one_line() {
    let home = TestHome::new();
    let memories = home.home().join("memories");
    std::fs::create_dir_all(&memories).unwrap();
    for i in 0..50 {
        std::fs::write(
            memories.join(format!("Note_{i:02}.md")),
            format!("Hand-written note number {i}.\n"),
        )
        .unwrap();
    }
    let out = home.call("examine_memories", r#"{"question":"note"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    let warnings: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        warnings,
        vec![
            "warning: 50 memory files had no id; ids were assigned (first: memories/Note_00.md, \
             memories/Note_01.md, memories/Note_02.md; all of them are in the log)"
        ]
    );
    // They have ids now: the next command has nothing to say.
    let out = home.call("examine_memories", r#"{"question":"note"}"#);
    assert!(!stderr(&out).contains("warning:"), "{}", stderr(&out));
}

/// Kind: a valid file whose trigger time cannot be read (a hand edit) makes a due item that
/// never fires; doctor names it. The same file with a readable time is no problem.
#[test]
fn a_due_item_whose_trigger_time_cannot_be_read_is_reported() {
    let home = TestHome::new();
    let out = home.call(
        "create_due_item",
        r#"{"name":"Dentist","text":"Ask about the invoice","trigger_time":"2099-03-17 09:00"}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(doctor(&home, false).status.code(), Some(0));
    let file = home.home().join("agenda/Dentist.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("trigger_datetime:"))
        .unwrap()
        .to_owned();
    std::fs::write(
        &file,
        text.replace(&line, "trigger_datetime: 2026-12-01 8:30"),
    )
    .unwrap();
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    assert!(
        report.starts_with("agenda: agenda/Dentist.md: trigger_datetime \"2026-12-01 8:30\" is not a time elroy can read"),
        "{report}"
    );
}

/// The same kind for a repeating item: a `recurrence` that cannot be read (a hand
/// edit) leaves an item that fires once; doctor names it. A readable rule is no problem.
#[test]
fn a_due_item_whose_rule_cannot_be_read_is_reported() {
    let home = TestHome::new();
    let out = home.call(
        "create_due_item",
        r#"{"name":"Standup","text":"","trigger_time":"every weekday at 9am"}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(doctor(&home, false).status.code(), Some(0));
    let file = home.home().join("agenda/Standup.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("recurrence:"))
        .unwrap()
        .to_owned();
    std::fs::write(&file, text.replace(&line, "recurrence: every weekday")).unwrap();
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    assert!(
        report.starts_with("agenda: agenda/Standup.md: cannot read the recurrence 'every weekday'"),
        "{report}"
    );
    assert!(
        report.contains("fires once and does not repeat"),
        "{report}"
    );
}

/// The same kind for agenda items: a valid file whose `date` cannot be read is listed on no day
/// (`docs/formats.md#agenda-item-keys`); doctor names it (a newcomer's hand edit `date: 'someday'`
/// was silent).
#[test]
fn an_agenda_item_whose_date_cannot_be_read_is_reported() {
    let home = TestHome::new();
    let out = home.call(
        "add_agenda_item",
        r#"{"text":"Pay rent","item_date":"2026-03-20"}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(doctor(&home, false).status.code(), Some(0));
    let file = home.home().join("agenda/Pay_rent.md");
    let text = std::fs::read_to_string(&file).unwrap();
    for (bad, shown) in [
        ("date: someday", "someday"),
        ("date: '2026-13-40'", "2026-13-40"),
    ] {
        let edited = text
            .lines()
            .map(|l| if l.starts_with("date:") { bad } else { l })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&file, edited).unwrap();
        let out = doctor(&home, false);
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let report = stdout(&out);
        assert!(
            report.starts_with(&format!(
                "agenda: agenda/Pay_rent.md: date \"{shown}\" is not a date elroy can read"
            )),
            "{report}"
        );
    }
}

/// Doctor names what git has not finished in the home and every store file with
/// conflict markers, and elroy commits none of it. The kind: an unfinished git operation — here a
/// conflicted `git cherry-pick` (the sync tests cover a merge and a rebase); another input: marker
/// lines pasted into a memory by hand, with git idle.
#[test]
fn doctor_names_unfinished_git_states_and_files_with_conflict_markers() {
    use crate::sync_git::{git, git_ok};
    let home = TestHome::new();
    let out = home.call("add_agenda_item", r#"{"text":"Plan the trip"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    let root = home.home();
    let item = root.join("agenda/Plan_the_trip.md");
    let text = std::fs::read_to_string(&item).unwrap();
    git_ok(&root, &["switch", "-c", "other"]);
    std::fs::write(
        &item,
        text.replace("Plan the trip", "Plan the trip to Kyoto"),
    )
    .unwrap();
    git_ok(&root, &["commit", "-qam", "Kyoto"]);
    git_ok(&root, &["switch", "main"]);
    std::fs::write(
        &item,
        text.replace("Plan the trip", "Plan the trip to Osaka"),
    )
    .unwrap();
    git_ok(&root, &["commit", "-qam", "Osaka"]);
    assert!(!git(&root, &["cherry-pick", "other"]).status.success());

    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let report = stdout(&out);
    for part in [
        "a git cherry-pick is in progress in the home",
        "`git cherry-pick --abort`",
        "unmerged files (agenda/Plan_the_trip.md)",
        "agenda/Plan_the_trip.md holds git conflict markers",
    ] {
        assert!(report.contains(part), "{part}: {report}");
    }
    let json: serde_json::Value = serde_json::from_str(&stdout(&doctor(&home, true))).unwrap();
    assert_eq!(json["ok"], false);
    git_ok(&root, &["cherry-pick", "--abort"]);
    assert_eq!(doctor(&home, false).status.code(), Some(0));

    // Markers pasted by hand, git idle: listed, and never committed as an `external edit`.
    let out = home.call(
        "create_memory",
        r#"{"name":"Tea","text":"Likes green tea."}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let memory = root.join("memories/Tea.md");
    let text = std::fs::read_to_string(&memory).unwrap();
    std::fs::write(
        &memory,
        format!(
            "{text}\n<<<<<<< HEAD\nLikes green tea.\n=======\nLikes black tea.\n>>>>>>> other\n"
        ),
    )
    .unwrap();
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("memories/Tea.md holds git conflict markers"),
        "{}",
        stdout(&out)
    );
    let head = git_ok(&root, &["rev-parse", "HEAD"]);
    let out = home.cmd().arg("history").output().unwrap();
    assert!(
        stderr(&out).contains("memories/Tea.md holds git conflict markers"),
        "{}",
        stderr(&out)
    );
    assert_eq!(git_ok(&root, &["rev-parse", "HEAD"]), head);
    std::fs::write(&memory, text.replace("green", "black")).unwrap();
    let out = home.cmd().arg("history").output().unwrap();
    assert!(stdout(&out).contains("external edit"), "{}", stdout(&out));
    assert_eq!(doctor(&home, false).status.code(), Some(0));
}

/// The built-in embedder's model, when a session would use it (`embedding-model`): a corrupt
/// one is listed with the very warning a session gives; one asked for that is missing is
/// listed; a model that loads, or an absent default directory nobody asked for, is no problem.
#[test]
fn doctor_checks_the_embedding_model_a_session_would_use() {
    let home = TestHome::new();
    let model = home.home().join("models").join("all-MiniLM-L6-v2");
    // A first call creates the home.
    let out = home.call(
        "create_memory",
        r#"{"name":"Biscuit the dog","text":"The user's dog Biscuit is a beagle."}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Absent by default: nothing to say.
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // A model that loads: the memory written before it has no vector yet; once embedded,
    // nothing to say.
    elroy_embed::test_support::write_tiny_model(&model);
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("memories: 1 memory has no vector of builtin:"),
        "{}",
        stdout(&out)
    );
    let out = home.cmd().args(["models", "embed"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // Corrupt (a broken download): the line a session warns with.
    std::fs::write(model.join("config.json"), "{not json").unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout(&doctor(&home, true))).unwrap();
    assert_eq!(json["ok"], false);
    let problems = json["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{json}");
    assert_eq!(problems[0]["area"], "embedding-model");
    assert_eq!(problems[0]["path"], "models/all-MiniLM-L6-v2");
    let message = problems[0]["message"].as_str().unwrap();
    let out = home.call("examine_memories", r#"{"question":"Is Biscuit a beagle?"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warned: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .collect();
    assert_eq!(warned, [message], "{err}");
    assert!(
        message.starts_with(&format!(
            "the embedding model at {} cannot be used: config.json: ",
            model.display()
        )),
        "{message}"
    );
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out).lines().next().unwrap(),
        format!("embedding-model: {message}")
    );

    // Asked for and missing.
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "embedding_model: builtin\nembedding_model_path: {}\n",
            home.root().join("nowhere").display()
        ),
    )
    .unwrap();
    let out = doctor(&home, false);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.starts_with("embedding-model: no embedding model at ")
            && text.contains("nowhere: config.json is missing; recall uses keywords only"),
        "{text}"
    );
}

/// A model directory elroy cannot read is listed as unreadable, naming the file, not as
/// missing (skipped when permissions do not bite, as for root).
#[cfg(unix)]
#[test]
fn doctor_lists_an_unreadable_embedding_model() {
    use std::os::unix::fs::PermissionsExt;
    let home = TestHome::new();
    let model = home.home().join("models").join("all-MiniLM-L6-v2");
    elroy_embed::test_support::write_tiny_model(&model);
    let out = home.call(
        "create_memory",
        r#"{"name":"Biscuit the dog","text":"The user's dog Biscuit is a beagle."}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let weights = model.join("model.safetensors");
    let mode = |mode: u32| {
        std::fs::set_permissions(&weights, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(0o000);
    if std::fs::read(&weights).is_ok() {
        mode(0o644);
        println!("SKIPPED: this user reads files without read permission (root?)");
        return;
    }
    let out = doctor(&home, false);
    mode(0o644);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "embedding-model: the embedding model at {} cannot be read: {}: Permission denied",
            model.display(),
            weights.display()
        )),
        "{text}"
    );
    assert!(!text.contains("missing"), "{text}");

    // The default directory inside a folder elroy cannot enter is not taken for absent.
    let models = home.home().join("models");
    std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = doctor(&home, false);
    std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o755)).unwrap();
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "embedding-model: the embedding model at {0} cannot be read: {0}: Permission denied",
            model.display()
        )),
        "{text}"
    );
}
