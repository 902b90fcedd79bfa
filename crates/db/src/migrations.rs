//! Numbered, forward-only migrations applied at open inside one transaction; the current number is
//! `meta.schema_version` (`docs/formats.md#connection-and-migrations`). Migration 1 is the whole
//! schema of `docs/formats.md#the-database`.

use rusqlite::{Connection, OptionalExtension};

use crate::DbError;

/// The migrations in order: `(version, SQL)`. Never edit a released entry; append a new one.
/// Migration 2 adds `recall_grams` (character bigrams of scripts without spaces, see
/// [`crate::grams`]) and fills it from `recall_fts`. Migration 3 adds `due_announcements`
/// ([`ANNOUNCEMENTS_SCHEMA`]). Migration 4 makes the agenda and memory indexes validated caches
/// of their files ([`STAT_INDEX`]). Migration 5 lets the memory index skip unchanged directories
/// ([`MEMORY_LISTING`]). Migration 6 indexes the agenda rows by what its queries select
/// ([`AGENDA_QUERY_INDEXES`]). Migration 7 marks open the rows of items that are not completed and
/// whose `status` is not `deleted` ([`OPEN_STATUSES`]). Migration 8 adds the compact sign-bit codes
/// of memory vectors that recall's embedding leg scans before it rescores with the exact vectors
/// ([`VECTOR_CODES`]). Migration 9 indexes memories by when they were written, for the period a
/// recall question names ([`MEMORIES_BY_CREATED`]).
pub const MIGRATIONS: &[(i64, &str)] = &[
    (1, SCHEMA_V1),
    (2, crate::grams::GRAMS_SCHEMA),
    (3, ANNOUNCEMENTS_SCHEMA),
    (4, STAT_INDEX),
    (5, MEMORY_LISTING),
    (6, AGENDA_QUERY_INDEXES),
    (7, OPEN_STATUSES),
    (8, VECTOR_CODES),
    (9, MEMORIES_BY_CREATED),
];

/// The newest schema version this build knows.
pub const LATEST_VERSION: i64 = 9;

/// Migration 9: the memories written in a date range, for a question that names a period ("in
/// June 2023", "on 8 May"): without it the range is a scan of every memory (18 ms at 100,000).
const MEMORIES_BY_CREATED: &str = r#"
CREATE INDEX memories_by_created ON memories (user_id, created_at);
"#;

/// Migration 4: everything an agenda listing, a lookup by name and the due check need, per file,
/// so they read the index and re-read only files whose stat changed: the raw `status`,
/// `completed`, the `name` key, the raw trigger, checklist counts, the stripped body, the error of
/// a file that does not parse (`broken`), and a stat signature beside size and mtime (inode and
/// ctime, so a same-size edit within the mtime's granularity or with an mtime set back is seen).
/// Memories get the same signature. Existing rows lose their scan state, so the next scan reads
/// each file once and fills the new columns.
const STAT_INDEX: &str = r#"
ALTER TABLE agenda_items ADD COLUMN file_ino INTEGER;
ALTER TABLE agenda_items ADD COLUMN file_ctime_ns INTEGER;
ALTER TABLE agenda_items ADD COLUMN name_key TEXT;
ALTER TABLE agenda_items ADD COLUMN raw_status TEXT;
ALTER TABLE agenda_items ADD COLUMN completed INTEGER;
ALTER TABLE agenda_items ADD COLUMN trigger_raw TEXT;
ALTER TABLE agenda_items ADD COLUMN checklist_done INTEGER;
ALTER TABLE agenda_items ADD COLUMN checklist_total INTEGER;
ALTER TABLE agenda_items ADD COLUMN body TEXT;
ALTER TABLE agenda_items ADD COLUMN broken TEXT;
UPDATE agenda_items SET file_size = NULL, file_mtime_ns = NULL;
ALTER TABLE memories ADD COLUMN file_ino INTEGER;
ALTER TABLE memories ADD COLUMN file_ctime_ns INTEGER;
"#;

/// Migration 5: the memory index without a scan of every file. `memories_by_file`
/// finds a row by its file and covers the listing diff's inode comparison (`_nocase`: the
/// unique-name rule, D12),
/// `memory_dirs` holds the stat signature of
/// `memories/` and its `archive/` at the last listing that covered them (a directory whose
/// signature is unchanged is not listed), and `memory_unreadable` the files of those directories
/// that could not be read, with their stat signature (named by every search, read again only
/// when their signature changes).
const MEMORY_LISTING: &str = r#"
CREATE INDEX memories_by_file ON memories (user_id, file_name, file_ino);
CREATE INDEX memories_by_file_nocase ON memories (user_id, file_name COLLATE NOCASE);
CREATE TABLE memory_dirs (
  user_id  INTEGER NOT NULL REFERENCES users(id),
  dir      TEXT NOT NULL,
  path     TEXT NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  ino      INTEGER NOT NULL,
  PRIMARY KEY (user_id, dir)
);
CREATE TABLE memory_unreadable (
  user_id       INTEGER NOT NULL REFERENCES users(id),
  file_name     TEXT NOT NULL,
  shown         TEXT NOT NULL,
  reason        TEXT NOT NULL,
  file_size     INTEGER,
  file_mtime_ns INTEGER,
  file_ino      INTEGER,
  file_ctime_ns INTEGER,
  PRIMARY KEY (user_id, file_name)
);
"#;

const SCHEMA_V1: &str = r#"
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('app', 'elroy');

CREATE TABLE users (
  id         INTEGER PRIMARY KEY,
  token      TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

CREATE TABLE user_preferences (
  user_id        INTEGER PRIMARY KEY REFERENCES users(id),
  preferred_name TEXT,
  full_name      TEXT,
  system_persona TEXT,
  assistant_name TEXT,
  updated_at     TEXT NOT NULL
);

CREATE TABLE messages (
  id           INTEGER PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users(id),
  role         TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
  content      TEXT,
  tool_calls   TEXT,
  tool_call_id TEXT,
  is_error     INTEGER NOT NULL DEFAULT 0,
  model        TEXT,
  created_at   TEXT NOT NULL
);

CREATE TABLE context_versions (
  user_id    INTEGER NOT NULL REFERENCES users(id),
  version    INTEGER NOT NULL,
  reason     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (user_id, version)
);

CREATE TABLE context_entries (
  id              INTEGER PRIMARY KEY,
  user_id         INTEGER NOT NULL REFERENCES users(id),
  message_id      INTEGER NOT NULL REFERENCES messages(id),
  ord             INTEGER NOT NULL,
  added_version   INTEGER NOT NULL,
  removed_version INTEGER
);
CREATE INDEX context_entries_live ON context_entries (user_id, removed_version, ord);

CREATE TABLE memories (
  user_id         INTEGER NOT NULL REFERENCES users(id),
  id              INTEGER NOT NULL,
  name            TEXT NOT NULL,
  file_name       TEXT NOT NULL,
  is_active       INTEGER NOT NULL,
  source_metadata TEXT NOT NULL DEFAULT '[]',
  text_md5        TEXT NOT NULL,
  file_size       INTEGER,
  file_mtime_ns   INTEGER,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (user_id, id)
);
CREATE INDEX memories_by_name ON memories (user_id, name, is_active);

CREATE TABLE memory_op_tracker (
  user_id                      INTEGER PRIMARY KEY REFERENCES users(id),
  messages_since_memory        INTEGER NOT NULL DEFAULT 0,
  memories_since_consolidation INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE agenda_items (
  user_id          INTEGER NOT NULL REFERENCES users(id),
  id               INTEGER NOT NULL,
  stem             TEXT NOT NULL,
  name             TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('agenda','due')),
  status           TEXT NOT NULL CHECK (status IN ('created','completed','deleted')),
  item_date        TEXT,
  trigger_datetime TEXT,
  trigger_context  TEXT,
  text_md5         TEXT NOT NULL,
  file_size        INTEGER,
  file_mtime_ns    INTEGER,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  PRIMARY KEY (user_id, id)
);
CREATE UNIQUE INDEX agenda_items_live_stem ON agenda_items (user_id, stem) WHERE status <> 'deleted';

CREATE VIRTUAL TABLE recall_fts USING fts5(
  name,
  body,
  kind    UNINDEXED,
  user_id UNINDEXED,
  item_id UNINDEXED,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE embeddings (
  user_id    INTEGER NOT NULL REFERENCES users(id),
  kind       TEXT NOT NULL,
  item_id    INTEGER NOT NULL,
  model      TEXT NOT NULL,
  dims       INTEGER NOT NULL,
  vector     BLOB NOT NULL,
  text_md5   TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (user_id, kind, item_id, model)
);

CREATE TABLE codex_sessions (
  id                INTEGER PRIMARY KEY,
  user_id           INTEGER NOT NULL REFERENCES users(id),
  session_id        TEXT NOT NULL,
  scope             TEXT NOT NULL CHECK (scope IN ('contrib','elroy')),
  repo_path         TEXT NOT NULL,
  prompt            TEXT NOT NULL,
  model             TEXT,
  status            TEXT NOT NULL CHECK (status IN ('running','completed','failed','timed_out')),
  summary           TEXT NOT NULL DEFAULT '',
  final_message     TEXT NOT NULL DEFAULT '',
  touched_paths     TEXT NOT NULL DEFAULT '[]',
  commands          TEXT NOT NULL DEFAULT '[]',
  commit_sha        TEXT,
  session_file_path TEXT,
  exit_code         INTEGER,
  started_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  UNIQUE (user_id, session_id)
);
"#;

fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Refuses databases elroy must not write: Elroy's own (`alembic_version` and no `meta`,
/// `docs/formats.md#home-layout`) and databases whose `meta.app` is not `elroy`.
///
/// # Errors
/// [`DbError::ElroyOwned`], [`DbError::NotElroy`], [`DbError::Sqlite`].
pub fn refuse_foreign(conn: &Connection, shown_path: &str) -> Result<(), DbError> {
    let has_meta = table_exists(conn, "meta")?;
    if !has_meta && table_exists(conn, "alembic_version")? {
        return Err(DbError::ElroyOwned(shown_path.to_owned()));
    }
    if has_meta {
        let app: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'app'", [], |r| r.get(0))
            .optional()?;
        if let Some(app) = app.filter(|a| a != "elroy") {
            return Err(DbError::NotElroy {
                path: shown_path.to_owned(),
                app,
            });
        }
    }
    Ok(())
}

/// `meta.schema_version`, or 0 for a database without the `meta` table.
///
/// # Errors
/// `rusqlite::Error`.
pub fn current_version(conn: &Connection) -> rusqlite::Result<i64> {
    if !table_exists(conn, "meta")? {
        return Ok(0);
    }
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Applies every migration newer than the current version, all in one `BEGIN IMMEDIATE`
/// transaction (so two processes opening a new home at once do not both migrate).
///
/// # Errors
/// [`DbError::TooNew`] when the file was written by a newer elroy; [`DbError::Sqlite`].
pub fn migrate(conn: &mut Connection) -> Result<(), DbError> {
    // An up-to-date database is only read: opening never needs to write (a full disk, a
    // read-only home).
    if current_version(conn)? == LATEST_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current = current_version(&tx)?;
    if current > LATEST_VERSION {
        return Err(DbError::TooNew {
            found: current,
            supported: LATEST_VERSION,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        tx.execute_batch(sql)?;
        if *version == 2 {
            crate::grams::backfill(&tx)?;
        }
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [version.to_string()],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// Migration 3: which timed due items were announced (`elroy remind`, the
/// interfaces): per user, per item id (`agenda_items.id`, stable across renames), per trigger
/// instant announced (stored UTC, `YYYY-MM-DD HH:MM:SS+00:00`, so a snoozed item fires again) and
/// per channel (`remind` for the command line, `interface` for the chat front ends, which announce
/// independently). The primary key makes a claim (`INSERT … ON CONFLICT DO NOTHING`) succeed for
/// exactly one process. Completed, deleted or renamed items need no clean-up.
pub const ANNOUNCEMENTS_SCHEMA: &str = r#"
CREATE TABLE due_announcements (
  user_id          INTEGER NOT NULL REFERENCES users(id),
  item_id          INTEGER NOT NULL,
  trigger_datetime TEXT NOT NULL,
  channel          TEXT NOT NULL,
  announced_at     TEXT NOT NULL,
  PRIMARY KEY (user_id, item_id, trigger_datetime, channel)
);
"#;

/// Migration 6: the agenda index answers each query from the rows it
/// selects, so they are indexed by what the queries filter on: the date (`list_agenda_items`,
/// `elroy agenda`), the name (duplicate checks, `print_due_item`), kind and status (the due
/// check, `elroy due`, `elroy remind`), the rows to read again (no stored signature, or a file
/// that does not parse), a covering index of the file columns for the directory diff (a listing
/// compared with the rows without reading their bodies), the stem ignoring ASCII case (the
/// unique-path rule of a new file), and the names of active rows (the candidates of an agenda
/// tool's `item_name`). All but the last are partial on live rows.
const AGENDA_QUERY_INDEXES: &str = r#"
CREATE INDEX agenda_items_by_date ON agenda_items (user_id, item_date) WHERE status <> 'deleted';
CREATE INDEX agenda_items_by_name ON agenda_items (user_id, name) WHERE status <> 'deleted';
CREATE INDEX agenda_items_by_kind ON agenda_items (user_id, kind, status) WHERE status <> 'deleted';
CREATE INDEX agenda_items_to_read ON agenda_items (user_id)
  WHERE status <> 'deleted' AND (file_mtime_ns IS NULL OR broken IS NOT NULL);
CREATE INDEX agenda_items_files ON agenda_items (user_id, stem, id, file_ino, file_mtime_ns)
  WHERE status <> 'deleted';
CREATE INDEX agenda_items_stem_nocase ON agenda_items (user_id, stem COLLATE NOCASE)
  WHERE status <> 'deleted';
CREATE INDEX agenda_items_active_names ON agenda_items (user_id, status, stem, name);
"#;

/// Migration 7: the agenda index keeps a repeating due item's rule (its `recurrence`
/// key, RFC 5545 text), and an item that is not `completed: true` and whose `status` is any word
/// but `deleted` (`in_progress`, written by hand or another tool) is open, as in Elroy 0.5.0;
/// earlier builds indexed such rows as `completed`, so no tool could find them until the file
/// changed. Every row loses its scan state, so the next query reads each file once and fills
/// both.
const OPEN_STATUSES: &str = r#"
ALTER TABLE agenda_items ADD COLUMN recurrence TEXT;
UPDATE agenda_items SET status = 'created'
  WHERE status = 'completed' AND completed = 0 AND raw_status IS NOT NULL
    AND raw_status <> 'deleted';
UPDATE agenda_items SET file_size = NULL, file_mtime_ns = NULL;
"#;

/// Migration 8: compact codes of the memory vectors, so the embedding leg reads some 50
/// bytes per memory instead of its whole `f32` vector (`elroy_memory::vectors`). Memory ids fall
/// into chunks of 1,024 (`item_id >> 10`). `vector_chunks` counts, per user and chunk, the changes
/// to the rows the codes are derived from: triggers bump `seq` on every insert, update and delete
/// of a memory's `embeddings` row and of a `memories` row (its id, active flag or text md5), by
/// whatever writes them (the store, the sync's id remapping, an import, a hand-run `sqlite3`), as
/// long as the user has a code basis at all. `vector_bases` holds, per user and model, the
/// per-dimension mean and mean absolute deviation the codes are taken against; `vector_codes`, per
/// user, model and chunk, the `seq` and basis generation it was built at, how many active memories
/// of the chunk had no vector of their current text then (`pending`: when no current row has any,
/// a question skips the search for memories to embed), and one record per coded memory (`u16`
/// slot little-endian, then one bit per dimension: above the mean). A code row whose
/// `seq` or basis differs from the current ones is stale: the reader rebuilds it, or scores that
/// chunk's exact vectors, so codes never give an answer the exact vectors would not.
pub const VECTOR_CODES: &str = r#"
CREATE TABLE vector_chunks (
  user_id INTEGER NOT NULL,
  chunk   INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  PRIMARY KEY (user_id, chunk)
) WITHOUT ROWID;

CREATE TABLE vector_bases (
  user_id    INTEGER NOT NULL,
  model      TEXT NOT NULL,
  generation INTEGER NOT NULL,
  dims       INTEGER NOT NULL,
  fitted     INTEGER NOT NULL,
  mean       BLOB NOT NULL,
  scale      BLOB NOT NULL,
  PRIMARY KEY (user_id, model)
);

CREATE TABLE vector_codes (
  user_id    INTEGER NOT NULL,
  model      TEXT NOT NULL,
  chunk      INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  pending    INTEGER NOT NULL,
  codes      BLOB NOT NULL,
  PRIMARY KEY (user_id, model, chunk)
);

CREATE TRIGGER vector_chunks_embedding_insert AFTER INSERT ON embeddings
WHEN NEW.kind = 'memory' AND EXISTS (SELECT 1 FROM vector_bases WHERE user_id = NEW.user_id)
BEGIN
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (NEW.user_id, NEW.item_id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER vector_chunks_embedding_update AFTER UPDATE ON embeddings
WHEN (NEW.kind = 'memory' OR OLD.kind = 'memory')
  AND EXISTS (SELECT 1 FROM vector_bases WHERE user_id IN (NEW.user_id, OLD.user_id))
BEGIN
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (OLD.user_id, OLD.item_id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (NEW.user_id, NEW.item_id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER vector_chunks_embedding_delete AFTER DELETE ON embeddings
WHEN OLD.kind = 'memory' AND EXISTS (SELECT 1 FROM vector_bases WHERE user_id = OLD.user_id)
BEGIN
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (OLD.user_id, OLD.item_id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER vector_chunks_memory_insert AFTER INSERT ON memories
WHEN EXISTS (SELECT 1 FROM vector_bases WHERE user_id = NEW.user_id)
BEGIN
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (NEW.user_id, NEW.id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER vector_chunks_memory_update AFTER UPDATE OF user_id, id, is_active, text_md5 ON memories
WHEN (NEW.id IS NOT OLD.id OR NEW.user_id IS NOT OLD.user_id OR NEW.is_active IS NOT OLD.is_active
      OR NEW.text_md5 IS NOT OLD.text_md5)
  AND EXISTS (SELECT 1 FROM vector_bases WHERE user_id IN (NEW.user_id, OLD.user_id))
BEGIN
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (OLD.user_id, OLD.id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (NEW.user_id, NEW.id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER vector_chunks_memory_delete AFTER DELETE ON memories
WHEN EXISTS (SELECT 1 FROM vector_bases WHERE user_id = OLD.user_id)
BEGIN
  INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (OLD.user_id, OLD.id >> 10, 1)
    ON CONFLICT (user_id, chunk) DO UPDATE SET seq = seq + 1;
END;
"#;
