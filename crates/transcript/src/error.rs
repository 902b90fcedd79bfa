//! [`TranscriptError`].

/// Why a transcript operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] elroy_db::DbError),
    /// A stored row could not be read back (unknown role, bad JSON, bad timestamp).
    #[error("corrupt transcript row {id}: {reason}")]
    Corrupt {
        /// The message id.
        id: i64,
        /// What was wrong.
        reason: String,
    },
}

impl From<rusqlite::Error> for TranscriptError {
    fn from(e: rusqlite::Error) -> Self {
        TranscriptError::Db(elroy_db::DbError::Sqlite(e))
    }
}
