#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! User names from Elroy's database into the user profile, which Elroy user is chosen, and an
//! import without a database.

use std::path::{Path, PathBuf};

use elroy_config::{Config, LoadOptions};
use elroy_import::{ImportOptions, import};

fn now() -> jiff::Timestamp {
    "2026-03-17T03:00:00Z".parse().unwrap()
}

fn config(root: &Path, token: &str) -> Config {
    Config::load(&LoadOptions {
        home: Some(root.join("home")),
        flags: vec![("user_token".into(), token.into(), "--user".into())],
        cwd: root.to_path_buf(),
        user_dir: Some(root.to_path_buf()),
        ..LoadOptions::default()
    })
    .unwrap()
}

/// An Elroy home with one memory file and a database with `users` (token, preferred name, full
/// name).
fn elroy_home(root: &Path, users: &[(&str, Option<&str>, Option<&str>)]) -> (PathBuf, PathBuf) {
    let dir = root.join("elroy-py");
    std::fs::create_dir_all(dir.join("memories")).unwrap();
    std::fs::write(
        dir.join("memories/Dog_s_name.md"),
        "---\nid: 4\n---\n\nThe dog is called Rex.",
    )
    .unwrap();
    let db = dir.join("elroy.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE memory (id INTEGER PRIMARY KEY, user_id INTEGER, name VARCHAR NOT NULL,
           is_active BOOLEAN, source_metadata TEXT, file_path VARCHAR);
         CREATE TABLE user (id INTEGER PRIMARY KEY, token VARCHAR NOT NULL);
         CREATE TABLE userpreference (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL,
           preferred_name VARCHAR, system_persona VARCHAR, full_name VARCHAR, is_active BOOLEAN,
           assistant_name VARCHAR);
         INSERT INTO memory VALUES (4, 1, 'Dog''s name', 1, '[]', '/x/memories/Dog_s_name.md');",
    )
    .unwrap();
    for (i, (token, preferred, full)) in users.iter().enumerate() {
        let id = i as i64 + 1;
        conn.execute(
            "INSERT INTO user (id, token) VALUES (?1, ?2)",
            rusqlite::params![id, token],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO userpreference (user_id, preferred_name, full_name, is_active)
             VALUES (?1, ?2, ?3, 1)",
            rusqlite::params![id, preferred, full],
        )
        .unwrap();
    }
    (dir, db)
}

fn state_db(root: &Path) -> elroy_db::Db {
    elroy_db::Db::open(&root.join("home/state.db")).unwrap()
}

#[test]
fn user_names_go_to_the_profile_once() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let (dir, _) = elroy_home(root, &[("py-user", Some("Priya"), Some("Priya Sharma"))]);
    let options = ImportOptions {
        source_dir: dir.clone(),
        database: None,
    };
    let config = config(root, "alice");
    let report = import(&config, &options, now()).unwrap();
    let text = report.to_string();
    assert!(
        text.contains("  user profile  preferred name 'Priya' (Elroy user 'py-user')\n"),
        "{text}"
    );
    assert!(
        text.contains("  user profile  full name 'Priya Sharma' (Elroy user 'py-user')\n"),
        "{text}"
    );
    assert!(
        text.contains("  memories/Dog_s_name.md  memory 4 'Dog's name' (active)\n"),
        "{text}"
    );
    assert_eq!(report.database, Some(dir.join("elroy.db")));
    let db = state_db(root);
    let user = db.ensure_user("alice", now()).unwrap();
    let prefs = db.preferences(user).unwrap();
    assert_eq!(prefs.preferred_name.as_deref(), Some("Priya"));
    assert_eq!(prefs.full_name.as_deref(), Some("Priya Sharma"));
    assert_eq!(prefs.assistant_name, None);
    // The memory went to alice's memory directory.
    assert!(
        root.join("home/users/alice/memories/Dog_s_name.md")
            .is_file()
    );

    let again = import(&config, &options, now()).unwrap();
    assert!(again.nothing_new(), "{again}");
    assert_eq!(again.unchanged, 3, "{again}");
    assert!(again.skipped.is_empty(), "{again}");

    // A name the user set differently in elroy is kept, and the import says so.
    db.set_preference(
        user,
        elroy_db::PreferenceField::PreferredName,
        Some("Pri"),
        now(),
    )
    .unwrap();
    let third = import(&config, &options, now()).unwrap().to_string();
    assert!(
        third.contains("  user profile  preferred name 'Priya': already set to 'Pri' here\n"),
        "{third}"
    );
    assert_eq!(
        state_db(root)
            .preferences(user)
            .unwrap()
            .preferred_name
            .as_deref(),
        Some("Pri")
    );
}

#[test]
fn several_elroy_users_need_a_matching_token() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let (dir, db) = elroy_home(
        root,
        &[("one", Some("Ann"), None), ("bob", Some("Bob"), None)],
    );
    let options = ImportOptions {
        source_dir: dir,
        database: Some(db),
    };
    let text = import(&config(root, "alice"), &options, now())
        .unwrap()
        .to_string();
    assert!(
        text.contains("  user profile  Elroy's database has 2 users and none has the token 'alice' (choose one with --user)\n"),
        "{text}"
    );
    let text = import(&config(root, "bob"), &options, now())
        .unwrap()
        .to_string();
    assert!(
        text.contains("  user profile  preferred name 'Bob' (Elroy user 'bob')\n"),
        "{text}"
    );
}

#[test]
fn without_a_database_names_come_from_file_names() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let (dir, db) = elroy_home(root, &[]);
    std::fs::remove_file(&db).unwrap();
    let report = import(
        &config(root, "DEFAULT"),
        &ImportOptions {
            source_dir: dir,
            database: None,
        },
        now(),
    )
    .unwrap();
    let text = report.to_string();
    assert_eq!(report.database, None);
    assert!(text.contains("(no Elroy database):\n"), "{text}");
    assert!(
        text.contains("  memories/Dog_s_name.md  memory 4 'Dog s name' (active)\n"),
        "{text}"
    );
}

#[test]
fn an_explicit_database_that_is_not_elroys_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let (dir, _) = elroy_home(root, &[]);
    let other = root.join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let error = import(
        &config(root, "DEFAULT"),
        &ImportOptions {
            source_dir: dir,
            database: Some(other.clone()),
        },
        now(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is not Elroy's database (it has no memory table)",
            other.display()
        )
    );
    assert!(!root.join("home/state.db").exists());
}

#[test]
fn an_elroy_home_imported_in_place_gains_its_agenda_names() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let home = root.join("home");
    std::fs::create_dir_all(home.join("agenda")).unwrap();
    let original = "---\ncompleted: false\ndate: '2026-03-16'\nstatus: created\ntrigger_datetime: 2026-04-02 04:00:00+00:00\n---\n\nRenew the passport.";
    std::fs::write(home.join("agenda/Renew_passport.md"), original).unwrap();
    let db = home.join("elroy.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE memory (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, is_active BOOLEAN,
               source_metadata TEXT);
             CREATE TABLE agendaitem (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL,
               file_path VARCHAR NOT NULL);
             INSERT INTO agendaitem VALUES (8, 'Renew passport', '/home/user/.elroy/agenda/Renew_passport.md');",
        )
        .unwrap();
    let options = ImportOptions {
        source_dir: home.clone(),
        database: None,
    };
    let report = import(&config(root, "DEFAULT"), &options, now()).unwrap();
    assert_eq!(report.database, Some(db));
    assert_eq!(
        report.to_string().lines().nth(1),
        Some("  agenda/Renew_passport.md  name 'Renew passport'")
    );
    assert_eq!(
        std::fs::read_to_string(home.join("agenda/Renew_passport.md")).unwrap(),
        original.replace(
            "status: created\n",
            "name: Renew passport\nstatus: created\n"
        )
    );
    let again = import(&config(root, "DEFAULT"), &options, now()).unwrap();
    assert!(again.nothing_new(), "{again}");
    assert_eq!(again.unchanged, 1);
}
