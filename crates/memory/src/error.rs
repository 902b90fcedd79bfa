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
