//! Reading Elroy 0.5.0's SQLite database (read-only): agenda-item names, user names.
//!
//! Tables used (Elroy 0.5.0, `elroy/db/db_models.py`): `agendaitem (id, name, file_path, …)`,
//! `user (id, token)`, `userpreference (user_id, preferred_name, full_name, system_persona,
//! assistant_name, is_active)`. Memory names and active flags are read by the memory store's own
//! sync (`docs/formats.md#names-from-elroys-database`), which is given the same file.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{OpenFlags, OptionalExtension};

/// Why Elroy's database (`elroy.db` of an Elroy 0.5.0 home) could not be read; the text goes
/// into the import's note or error.
#[derive(Debug, thiserror::Error)]
pub enum SourceDbError {
    /// The path is not a file.
    #[error("{} is not a file", .0.display())]
    NotAFile(std::path::PathBuf),
    /// SQLite could not open it.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The file.
        path: std::path::PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// It has no `memory` table.
    #[error("{} is not Elroy's database (it has no memory table)", .0.display())]
    NotElroy(std::path::PathBuf),
    /// A query failed.
    #[error(transparent)]
    Query(#[from] rusqlite::Error),
}

/// An opened Elroy database.
pub(crate) struct SourceDb {
    conn: rusqlite::Connection,
}

/// The user names Elroy stored for one of its users (`userpreference`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ElroyPreferences {
    pub preferred_name: Option<String>,
    pub full_name: Option<String>,
    pub system_persona: Option<String>,
    pub assistant_name: Option<String>,
}

fn has_table(conn: &rusqlite::Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n > 0)
}

impl SourceDb {
    /// Opens `path` read-only.
    ///
    /// # Errors
    /// [`SourceDbError`] when the file cannot be opened as SQLite or is not Elroy's (no `memory`
    /// table).
    pub(crate) fn open(path: &Path) -> Result<SourceDb, SourceDbError> {
        if !path.is_file() {
            return Err(SourceDbError::NotAFile(path.to_path_buf()));
        }
        let conn = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| SourceDbError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        if !has_table(&conn, "memory") {
            return Err(SourceDbError::NotElroy(path.to_path_buf()));
        }
        Ok(SourceDb { conn })
    }

    /// Agenda-item names by file name (the base name of `agendaitem.file_path`); when several rows
    /// name one file, the newest row (highest id) wins.
    pub(crate) fn agenda_names(&self) -> Result<HashMap<String, String>, SourceDbError> {
        if !has_table(&self.conn, "agendaitem") {
            return Ok(HashMap::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT name, file_path FROM agendaitem ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?;
        let mut names = HashMap::new();
        for row in rows {
            let (name, file_path) = row?;
            let Some(file_path) = file_path else { continue };
            // Elroy stores absolute paths of the machine it ran on; only the base name matters.
            let base = file_path.rsplit(['/', '\\']).next().unwrap_or_default();
            if !base.is_empty() {
                names.insert(base.to_owned(), name);
            }
        }
        Ok(names)
    }

    /// The Elroy users: `(id, token)` in id order.
    pub(crate) fn users(&self) -> Result<Vec<(i64, String)>, SourceDbError> {
        if !has_table(&self.conn, "user") {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id, token FROM user ORDER BY id")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The names stored for Elroy user `user_id` (the active preference row, else the newest).
    pub(crate) fn preferences(&self, user_id: i64) -> Result<ElroyPreferences, SourceDbError> {
        if !has_table(&self.conn, "userpreference") {
            return Ok(ElroyPreferences::default());
        }
        self.conn
            .query_row(
                "SELECT preferred_name, full_name, system_persona, assistant_name
                 FROM userpreference WHERE user_id = ?1
                 ORDER BY coalesce(is_active, 0) DESC, id DESC LIMIT 1",
                [user_id],
                |r| {
                    Ok(ElroyPreferences {
                        preferred_name: r.get(0)?,
                        full_name: r.get(1)?,
                        system_persona: r.get(2)?,
                        assistant_name: r.get(3)?,
                    })
                },
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(SourceDbError::from)
    }
}
