use super::*;

fn now() -> jiff::Timestamp {
    "2026-03-16T13:30:00Z".parse().unwrap()
}

#[test]
fn open_creates_schema_and_pragmas() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("state.db");
    let db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), migrations::LATEST_VERSION);
    let (mode, fk, timeout, sync): (String, i64, i64, i64) = db
        .with_conn(|c| {
            Ok((
                c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?,
                c.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?,
                c.query_row("PRAGMA busy_timeout", [], |r| r.get(0))?,
                c.query_row("PRAGMA synchronous", [], |r| r.get(0))?,
            ))
        })
        .unwrap();
    assert_eq!((mode.as_str(), fk, timeout, sync), ("wal", 1, 5000, 1));
    let tables: Vec<String> = db
        .with_conn(|c| {
            let mut st = c.prepare(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'recall_fts_%' AND name NOT LIKE 'recall_grams_%' ORDER BY name",
            )?;
            st.query_map([], |r| r.get(0))?.collect()
        })
        .unwrap();
    assert_eq!(
        tables,
        [
            "agenda_items",
            "codex_sessions",
            "context_entries",
            "context_versions",
            "due_announcements",
            "embeddings",
            "memories",
            "memory_dirs",
            "memory_op_tracker",
            "memory_unreadable",
            "messages",
            "meta",
            "recall_fts",
            "recall_grams",
            "user_preferences",
            "users",
            "vector_bases",
            "vector_chunks",
            "vector_codes"
        ]
    );
    drop(db);
    // Re-opening runs no migration twice.
    let db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), migrations::LATEST_VERSION);
    let app: String = db
        .with_conn(|c| c.query_row("SELECT value FROM meta WHERE key='app'", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(app, "elroy");
}

#[test]
fn refuses_elroy_python_database() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fixtures/elroy-home-0.5.0/elroy.db.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("elroy.db");
    std::fs::copy(&fixture, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let err = Db::open(&copy).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "database {} belongs to Elroy (Python); set database_url to a different file",
            copy.display()
        )
    );
    assert!(
        std::fs::read(&copy).unwrap() == before,
        "the file was modified"
    );
}

#[test]
fn users_and_preferences() {
    let db = Db::open_in_memory().unwrap();
    let a = db.ensure_user("DEFAULT", now()).unwrap();
    let b = db.ensure_user("team", now()).unwrap();
    assert_ne!(a, b);
    assert_eq!(db.ensure_user("DEFAULT", now()).unwrap(), a);
    assert_eq!(db.preferences(a).unwrap(), UserPreferences::default());
    db.set_preference(a, PreferenceField::PreferredName, Some("Priya"), now())
        .unwrap();
    db.set_preference(a, PreferenceField::AssistantName, Some("Ada"), now())
        .unwrap();
    let p = db.preferences(a).unwrap();
    assert_eq!(p.preferred_name.as_deref(), Some("Priya"));
    assert_eq!(p.assistant_name.as_deref(), Some("Ada"));
    assert_eq!(p.full_name, None);
    assert_eq!(db.preferences(b).unwrap(), UserPreferences::default());
}

#[test]
fn op_tracker_counts() {
    let db = Db::open_in_memory().unwrap();
    let u = db.ensure_user("DEFAULT", now()).unwrap();
    assert_eq!(db.op_tracker(u).unwrap(), OpTracker::default());
    assert_eq!(
        db.add_messages_since_memory(u, 2)
            .unwrap()
            .messages_since_memory,
        2
    );
    assert!(!db.record_memory_created(u, 2).unwrap());
    assert_eq!(
        db.op_tracker(u).unwrap(),
        OpTracker {
            messages_since_memory: 0,
            memories_since_consolidation: 1
        }
    );
    assert!(db.record_memory_created(u, 2).unwrap());
    assert_eq!(db.op_tracker(u).unwrap().memories_since_consolidation, 0);
}

/// Kind: a `state.db` made before the bigram index (schema 1) whose `recall_fts` already holds
/// CJK and Thai items: opening it migrates and fills `recall_grams` from the existing rows, so
/// the old items are found by a word of their text.
#[test]
fn migration_2_fills_the_gram_index_from_existing_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        // A database at schema 1, as elroy wrote it then.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(migrations::MIGRATIONS[0].1).unwrap();
        c.execute_batch(
            "INSERT INTO meta (key, value) VALUES ('schema_version', '1');
             INSERT INTO recall_fts (rowid, name, body, kind, user_id, item_id)
               VALUES (10, '週末の予定', '土曜日に東京タワーへ行く予定。', 'memory', 1, 5),
                      (12, 'Thai', 'ไปทะเล', 'memory', 1, 6),
                      (14, 'plain', 'English only', 'memory', 1, 7);",
        )
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), migrations::LATEST_VERSION);
    let hits = |q: &str| -> Vec<i64> {
        db.with_conn(|c| {
            let mut st = c.prepare(
                "SELECT rowid FROM recall_grams WHERE recall_grams MATCH ?1 ORDER BY rowid",
            )?;
            st.query_map([q], |r| r.get(0))?.collect()
        })
        .unwrap()
    };
    assert_eq!(hits("\"東京\""), [10]);
    assert_eq!(hits("\"予定\""), [10]);
    assert_eq!(hits("\"ทะ\""), [12]);
    let rows: i64 = db
        .with_conn(|c| c.query_row("SELECT count(*) FROM recall_grams", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(rows, 2, "rows without gram-script text get no gram row");
}

/// Kind: one user name in composed and decomposed spelling; it is stored composed (NFC).
#[test]
fn user_names_are_stored_in_nfc() {
    let db = Db::open_in_memory().unwrap();
    let user = db.ensure_user("default", now()).unwrap();
    db.set_preference(
        user,
        PreferenceField::PreferredName,
        Some("Jose\u{301}"),
        now(),
    )
    .unwrap();
    db.set_preference(
        user,
        PreferenceField::FullName,
        Some("Zoe\u{308} Mu\u{308}ller"),
        now(),
    )
    .unwrap();
    let p = db.preferences(user).unwrap();
    assert_eq!(p.preferred_name.as_deref(), Some("Jos\u{e9}"));
    assert_eq!(p.full_name.as_deref(), Some("Zo\u{eb} M\u{fc}ller"));
}

/// Migration 3: a version-2 database gains `due_announcements`, whose key lets one
/// claim per (user, item, trigger, channel) succeed.
#[test]
fn migration_3_adds_due_announcements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        // A database at schema 2, as elroy wrote it then.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(migrations::MIGRATIONS[0].1).unwrap();
        c.execute_batch(migrations::MIGRATIONS[1].1).unwrap();
        c.execute_batch("INSERT INTO meta (key, value) VALUES ('schema_version', '2');")
            .unwrap();
    }
    let db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), migrations::LATEST_VERSION);
    let user = db.ensure_user("DEFAULT", now()).unwrap();
    let claim = |channel: &str| {
        db.with_conn(|c| {
            c.execute(
                "INSERT INTO due_announcements VALUES (?1, 7, '2026-12-01 09:00:00+00:00', ?2, 'x')
                 ON CONFLICT DO NOTHING",
                rusqlite::params![user, channel],
            )
        })
        .unwrap()
    };
    assert_eq!(
        (claim("remind"), claim("remind"), claim("interface")),
        (1, 0, 1)
    );
}

/// Migration 7: a version-6 index row of an item with `status: in_progress` (indexed
/// as `completed` by earlier builds, so no tool found it) is open again, every row is read once
/// more, and rows keep a repeating item's rule.
#[test]
fn migration_7_reopens_open_statuses_and_adds_recurrence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        for (_, sql) in &migrations::MIGRATIONS[..6] {
            c.execute_batch(sql).unwrap();
        }
        c.execute_batch(
            "INSERT INTO meta (key, value) VALUES ('schema_version', '6');
             INSERT INTO users (id, token, created_at) VALUES (1, 'DEFAULT', 'x');
             INSERT INTO agenda_items (user_id, id, stem, name, kind, status, text_md5, created_at,
               updated_at, file_size, file_mtime_ns, raw_status, completed)
             VALUES (1, 1, 'Renew', 'Renew', 'agenda', 'completed', '', 'x', 'x', 10, 5,
               'in_progress', 0),
             (1, 2, 'Done', 'Done', 'agenda', 'completed', '', 'x', 'x', 10, 5, 'in_progress', 1),
             (1, 3, 'Gone', 'Gone', 'agenda', 'completed', '', 'x', 'x', 10, 5, 'deleted', 0);",
        )
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), migrations::LATEST_VERSION);
    let rows: Vec<(i64, String, Option<i64>, Option<String>)> = db
        .with_conn(|c| {
            let mut stmt = c.prepare(
                "SELECT id, status, file_mtime_ns, recurrence FROM agenda_items ORDER BY id",
            )?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect()
        })
        .unwrap();
    assert_eq!(
        rows,
        vec![
            (1, "created".into(), None, None),
            (2, "completed".into(), None, None),
            (3, "completed".into(), None, None),
        ]
    );
}

/// Kind: two processes on one `state.db`, one reading then writing in a transaction while the
/// other commits in between. A deferred transaction would fail at its first write with
/// "database is locked" (no busy wait); every transaction takes the write lock at BEGIN, so both
/// writes land.
#[test]
fn a_transaction_that_reads_then_writes_survives_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let first = Db::open(&path).unwrap();
    let second = Db::open(&path).unwrap();
    first
        .with_conn(|c| {
            let tx = c.transaction()?;
            let before: i64 = tx.query_row("SELECT count(*) FROM users", [], |r| r.get(0))?;
            assert_eq!(before, 0);
            let other = std::thread::spawn(move || second.ensure_user("other", now()));
            std::thread::sleep(std::time::Duration::from_millis(300));
            tx.execute(
                "INSERT INTO users (token, created_at) VALUES ('first', '2026-12-01 09:00:00')",
                [],
            )?;
            tx.commit()?;
            other.join().unwrap().unwrap();
            Ok(())
        })
        .unwrap();
    let count: i64 = first
        .with_conn(|c| c.query_row("SELECT count(*) FROM users", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(count, 2);
}

/// Kind: a failure while opening (a damaged file, a full disk, a lock held elsewhere) names the
/// database file, so a person knows which one.
#[test]
fn an_open_failure_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, vec![0x42_u8; 4096]).unwrap();
    let Err(e) = Db::open(&path) else {
        panic!("a file of 0x42 bytes opened as a database")
    };
    assert!(
        e.to_string()
            .starts_with(&format!("database error in {}: ", path.display())),
        "{e}"
    );
}

/// Many connections opening one new file at once all open it (the race behind
/// `tests/concurrency.rs`'s "database is locked": the first opener turns the new file to WAL while
/// the others read it in rollback mode).
#[test]
fn connections_opening_one_new_file_at_once_all_succeed() {
    for round in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let barrier = std::sync::Barrier::new(12);
        std::thread::scope(|scope| {
            for _ in 0..12 {
                scope.spawn(|| {
                    barrier.wait();
                    let db = Db::open(&path);
                    assert!(db.is_ok(), "round {round}: {:?}", db.err());
                });
            }
        });
    }
}
