//! [`MemoryError`].

/// Why a memory operation failed. `Display` is the message a tool shows after its prefix.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// Reading or writing a memory file failed (exact `docs/formats.md#front-matter-files`
    /// messages).
    #[error(transparent)]
    File(#[from] elroy_markdown::MarkdownError),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] elroy_db::DbError),
    /// A memory's file is missing when its text is needed.
    #[error("the file of memory '{name}' ({file}) is missing")]
    MissingFile {
        /// The memory name.
        name: String,
        /// Its display path.
        file: String,
    },
}

impl From<rusqlite::Error> for MemoryError {
    fn from(e: rusqlite::Error) -> Self {
        MemoryError::Db(elroy_db::DbError::Sqlite(e))
    }
}

/// Whether `e` says the home cannot be written (its database opened read-only, a full disk, a
/// read-only file system): a read path then goes on without the write it wanted.
pub(crate) fn cannot_write(e: &MemoryError, db: &elroy_db::Db) -> bool {
    use rusqlite::ErrorCode;
    if db.read_only().is_some() {
        return true;
    }
    let code = match e {
        MemoryError::Db(
            elroy_db::DbError::Sqlite(e) | elroy_db::DbError::SqliteIn { source: e, .. },
        ) => e.sqlite_error_code(),
        MemoryError::File(
            elroy_markdown::MarkdownError::Write { message, .. }
            | elroy_markdown::MarkdownError::Lock { message, .. },
        ) => {
            // The OS error numbers of a full disk, a quota, a read-only mount and a denied
            // write (the message keeps Rust's `(os error N)` suffix).
            return [
                "(os error 28)",
                "(os error 122)",
                "(os error 30)",
                "(os error 13)",
            ]
            .iter()
            .any(|n| message.ends_with(n));
        }
        _ => None,
    };
    matches!(
        code,
        Some(
            ErrorCode::ReadOnly
                | ErrorCode::DiskFull
                | ErrorCode::SystemIoFailure
                | ErrorCode::CannotOpen
        )
    )
}
