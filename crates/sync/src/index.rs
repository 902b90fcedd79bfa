//! This machine's `state.db` after a pull renumbered memories: the rows of a
//! memory whose id changed follow it, so recall, pins and the context window's references keep
//! pointing at the same text. `state.db` itself never syncs.
//!
//! What moves from the old id to the new one, for that user, in one transaction: the `memories`
//! row, its `recall_fts` row and embeddings (`kind = 'memory'`), `Memory` sources of other
//! memories (`source_metadata`), and the `memory_id` of `Memory` recall metadata in stored
//! messages (the context window's recall and pin pairs, `docs/formats.md#the-recall-payload`). The
//! memory index, validated by stat, then re-reads the rewritten files as usual.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::SyncError;

/// One renumbered memory as this machine's index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Remap {
    /// The user token (`DEFAULT` for the home's own stores).
    pub token: String,
    /// The file, relative to the user's memory directory (`Dog.md`, `archive/Dog.md`).
    pub file_name: String,
    /// The id the file had in this machine's HEAD (the index normally has it too).
    pub old: i64,
    /// Its id in the files now.
    pub new: i64,
}

/// The user token of a user-home prefix (`""` → `DEFAULT`, `users/alice/` → `alice`).
pub(crate) fn token_of(prefix: &str) -> String {
    prefix
        .strip_prefix("users/")
        .map(|rest| rest.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| "DEFAULT".to_owned())
}

fn open(db: &Path) -> Result<Option<Connection>, SyncError> {
    if !db.exists() {
        return Ok(None);
    }
    let conn = Connection::open(db).map_err(|e| SyncError::Index(e.to_string()))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|e| SyncError::Index(e.to_string()))?;
    let has_memories: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'memories'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|e| SyncError::Index(e.to_string()))?;
    Ok(has_memories.then_some(conn))
}

fn user_id(conn: &Connection, token: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row("SELECT id FROM users WHERE token = ?1", [token], |row| {
        row.get(0)
    })
    .optional()
}

/// The largest memory id this machine's index knows for `token` (0 when none, or no database).
pub(crate) fn max_memory_id(db: Option<&Path>, token: &str) -> Result<i64, SyncError> {
    let Some(conn) = db.map(open).transpose()?.flatten() else {
        return Ok(0);
    };
    let run = || -> rusqlite::Result<i64> {
        let Some(user) = user_id(&conn, token)? else {
            return Ok(0);
        };
        conn.query_row(
            "SELECT coalesce(max(id), 0) FROM memories WHERE user_id = ?1",
            [user],
            |row| row.get(0),
        )
    };
    run().map_err(|e| SyncError::Index(e.to_string()))
}

/// The name this machine's index gives memory `id` of `token`, if it has the row.
pub(crate) fn memory_name(conn: &Connection, token: &str, id: i64) -> Option<String> {
    let user = user_id(conn, token).ok()??;
    conn.query_row(
        "SELECT name FROM memories WHERE user_id = ?1 AND id = ?2",
        params![user, id],
        |row| row.get(0),
    )
    .optional()
    .ok()?
}

/// Opens `db` for name lookups (`None`: no database or no memories table).
pub(crate) fn open_for_names(db: Option<&Path>) -> Option<Connection> {
    db.map(open).transpose().ok().flatten().flatten()
}

/// Applies `remaps` to `db` in one transaction (see the module doc): the row of each remap's
/// file (by file name; the one with the old id when several) takes the new id. A file without a
/// row is skipped: the index finds it as new.
pub(crate) fn apply(db: Option<&Path>, remaps: &[Remap]) -> Result<(), SyncError> {
    if remaps.is_empty() {
        return Ok(());
    }
    let Some(mut conn) = db.map(open).transpose()?.flatten() else {
        return Ok(());
    };
    let run = |conn: &mut Connection| -> rusqlite::Result<()> {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Two steps through negative ids, so a chain (5 → 6 while 6 → 7) never collides.
        let mut moved: Vec<(i64, i64, i64)> = Vec::new();
        for remap in remaps {
            let Some(user) = user_id(&tx, &remap.token)? else {
                continue;
            };
            // The row of this file, whatever id it has: normally `old`, but a sync killed after
            // this step and run again finds the row already moved once (and picks another id).
            let row: Option<i64> = tx
                .query_row(
                    "SELECT id FROM memories WHERE user_id = ?1 AND file_name = ?2 AND id > 0 \
                     ORDER BY id = ?3 DESC LIMIT 1",
                    params![user, remap.file_name, remap.old],
                    |row| row.get(0),
                )
                .optional()?;
            let Some(old) = row.filter(|id| *id != remap.new) else {
                continue;
            };
            tx.execute(
                "UPDATE memories SET id = ?3 WHERE user_id = ?1 AND id = ?2",
                params![user, old, -remap.new],
            )?;
            tx.execute(
                "UPDATE recall_fts SET item_id = ?3 WHERE user_id = ?1 AND kind = 'memory' \
                 AND item_id = ?2",
                params![user, old, -remap.new],
            )?;
            tx.execute(
                "UPDATE embeddings SET item_id = ?3 WHERE user_id = ?1 AND kind = 'memory' \
                 AND item_id = ?2",
                params![user, old, -remap.new],
            )?;
            rewrite_references(&tx, user, old, -remap.new)?;
            moved.push((user, remap.old, remap.new));
        }
        for (user, _old, new) in &moved {
            // A stale row already holding the new id (its file now says otherwise) gives way.
            for table in ["memories", "recall_fts", "embeddings"] {
                let (id_col, kind) = match table {
                    "memories" => ("id", ""),
                    _ => ("item_id", " AND kind = 'memory'"),
                };
                tx.execute(
                    &format!("DELETE FROM {table} WHERE user_id = ?1 AND {id_col} = ?2{kind}"),
                    params![user, new],
                )?;
                tx.execute(
                    &format!(
                        "UPDATE {table} SET {id_col} = ?3 WHERE user_id = ?1 AND {id_col} = ?2{kind}"
                    ),
                    params![user, -new, new],
                )?;
            }
            rewrite_references(&tx, *user, -new, *new)?;
        }
        tx.commit()
    };
    run(&mut conn).map_err(|e| SyncError::Index(e.to_string()))
}

/// Points `Memory` references to `old` at `new`: other memories' `source_metadata`
/// (`{"source_type": "Memory", "id": 5}`) and messages' recall metadata
/// (`"memory_type":"Memory","memory_id":5`).
fn rewrite_references(tx: &Connection, user: i64, old: i64, new: i64) -> rusqlite::Result<()> {
    let pairs = [
        (
            "memories",
            "source_metadata",
            format!("\"source_type\": \"Memory\", \"id\": {old}}}"),
            format!("\"source_type\": \"Memory\", \"id\": {new}}}"),
        ),
        (
            "messages",
            "content",
            format!("\"memory_type\":\"Memory\",\"memory_id\":{old},"),
            format!("\"memory_type\":\"Memory\",\"memory_id\":{new},"),
        ),
    ];
    for (table, column, from, to) in pairs {
        tx.execute(
            &format!(
                "UPDATE {table} SET {column} = replace({column}, ?2, ?3) \
                 WHERE user_id = ?1 AND instr({column}, ?2) > 0"
            ),
            params![user, from, to],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::token_of;

    #[test]
    fn tokens() {
        assert_eq!(token_of(""), "DEFAULT");
        assert_eq!(token_of("users/alice/"), "alice");
    }
}

#[cfg(test)]
mod remap_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn memory(conn: &Connection, user: i64, id: i64, file: &str, sources: &str) {
        conn.execute(
            "INSERT INTO memories (user_id, id, name, file_name, is_active, source_metadata, \
             text_md5, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 1, ?5, 'x', 't', 't')",
            params![user, id, format!("name {id}"), file, sources],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO recall_fts (name, body, kind, user_id, item_id) \
             VALUES (?1, 'b', 'memory', ?2, ?3)",
            params![format!("name {id}"), user, id],
        )
        .unwrap();
    }

    #[test]
    fn a_chain_of_renumberings_moves_rows_and_references_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let db = elroy_db::Db::open(&path).unwrap();
        let now = "2026-03-16T08:30:00Z".parse().unwrap();
        let user = db.ensure_user("DEFAULT", now).unwrap();
        drop(db);
        let conn = Connection::open(&path).unwrap();
        memory(&conn, user, 5, "Dog.md", "[]");
        memory(
            &conn,
            user,
            6,
            "Cat.md",
            r#"[{"source_type": "Memory", "id": 5}]"#,
        );
        conn.execute(
            "INSERT INTO messages (user_id, role, content, created_at) VALUES (?1, 'tool', ?2, 't')",
            params![
                user,
                r#"{"content":"x","recall_metadata":[{"memory_type":"Memory","memory_id":5,"name":"Dog"},{"memory_type":"Memory","memory_id":6,"name":"Cat"}]}"#
            ],
        )
        .unwrap();
        drop(conn);
        // Dog 5 -> 6 while Cat 6 -> 7 (both files got new ids in one pull).
        let remaps = [
            Remap {
                token: "DEFAULT".into(),
                file_name: "Dog.md".into(),
                old: 5,
                new: 6,
            },
            Remap {
                token: "DEFAULT".into(),
                file_name: "Cat.md".into(),
                old: 6,
                new: 7,
            },
            // No row for this file: skipped.
            Remap {
                token: "DEFAULT".into(),
                file_name: "Owl.md".into(),
                old: 9,
                new: 10,
            },
        ];
        apply(Some(&path), &remaps).unwrap();
        let conn = Connection::open(&path).unwrap();
        let rows: Vec<(i64, String, String)> = conn
            .prepare("SELECT id, file_name, source_metadata FROM memories ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            vec![
                (6, "Dog.md".into(), "[]".into()),
                (
                    7,
                    "Cat.md".into(),
                    r#"[{"source_type": "Memory", "id": 6}]"#.into()
                ),
            ]
        );
        let fts: Vec<(String, i64)> = conn
            .prepare("SELECT name, item_id FROM recall_fts ORDER BY item_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(fts, vec![("name 5".into(), 6), ("name 6".into(), 7)]);
        let content: String = conn
            .query_row("SELECT content FROM messages", [], |r| r.get(0))
            .unwrap();
        assert!(
            content.contains(r#""memory_id":6,"name":"Dog""#)
                && content.contains(r#""memory_id":7,"name":"Cat""#),
            "{content}"
        );
    }
}

#[cfg(test)]
mod rerun_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A sync killed after it moved the row runs again and picks another id: the row of the file
    /// follows again (found by its file name), it is not left behind.
    #[test]
    fn a_row_moved_by_a_killed_sync_follows_the_next_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let db = elroy_db::Db::open(&path).unwrap();
        let user = db
            .ensure_user("DEFAULT", "2026-03-16T08:30:00Z".parse().unwrap())
            .unwrap();
        drop(db);
        let conn = Connection::open(&path).unwrap();
        conn.execute(
            "INSERT INTO memories (user_id, id, name, file_name, is_active, text_md5, created_at, \
             updated_at) VALUES (?1, 2, 'Dog', 'Dog.md', 1, 'x', 't', 't')",
            params![user],
        )
        .unwrap();
        drop(conn);
        let remap = Remap {
            token: "DEFAULT".into(),
            file_name: "Dog.md".into(),
            old: 1,
            new: 3,
        };
        apply(Some(&path), &[remap]).unwrap();
        let conn = Connection::open(&path).unwrap();
        let id: i64 = conn
            .query_row(
                "SELECT id FROM memories WHERE file_name = 'Dog.md'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(id, 3);
    }
}
