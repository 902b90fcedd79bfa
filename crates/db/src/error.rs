//! [`DbError`].

use std::path::PathBuf;

/// Why a database operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The file is Elroy's (Python) database (`docs/formats.md#home-layout`).
    #[error("database {0} belongs to Elroy (Python); set database_url to a different file")]
    ElroyOwned(String),
    /// The file has a `meta` table written by another program.
    #[error("database {path} is not an elroy database (meta.app = {app})")]
    NotElroy {
        /// The database file.
        path: String,
        /// The `meta.app` value found.
        app: String,
    },
    /// The file's schema is newer than this build knows.
    #[error("database schema version {found} is newer than this elroy supports ({supported})")]
    TooNew {
        /// `meta.schema_version` found.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// A filesystem error.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An SQLite error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// An SQLite error of a statement run on the database file `file` ([`crate::Db::with_conn`]),
    /// e.g. `SQLITE_FULL` on a full disk: `database error in {file}: database or disk is full`.
    #[error("database error in {file}: {source}")]
    SqliteIn {
        /// The database file (`:memory:` for an in-memory database).
        file: String,
        /// The SQLite error.
        source: rusqlite::Error,
    },
}

impl DbError {
    /// The failure as an I/O kind, for deciding what a failed write means: a filesystem error's
    /// own kind; SQLite's `SQLITE_FULL` as `StorageFull` and `SQLITE_READONLY` as
    /// `ReadOnlyFilesystem`. `None` for every other failure.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            DbError::Io { source, .. } => Some(source.kind()),
            DbError::Sqlite(e) | DbError::SqliteIn { source: e, .. } => sqlite_io_kind(e),
            _ => None,
        }
    }
}

/// An SQLite error as an I/O kind ([`DbError::io_kind`]): `SQLITE_FULL` is `StorageFull`,
/// `SQLITE_READONLY` is `ReadOnlyFilesystem`; `None` otherwise.
pub fn sqlite_io_kind(e: &rusqlite::Error) -> Option<std::io::ErrorKind> {
    match e.sqlite_error_code()? {
        rusqlite::ErrorCode::DiskFull => Some(std::io::ErrorKind::StorageFull),
        rusqlite::ErrorCode::ReadOnly => Some(std::io::ErrorKind::ReadOnlyFilesystem),
        _ => None,
    }
}
