//! [`IndexError`]: what can go wrong keeping the agenda index in `state.db`.

/// A failure of the agenda index. The files stay the source of truth: an index that cannot be
/// written costs a later operation a listing or a read, never an item.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A statement on `state.db` failed: `agenda index: {database error}`.
    #[error("agenda index: {0}")]
    Db(#[from] elroy_db::DbError),
}

impl From<IndexError> for crate::AgendaError {
    fn from(e: IndexError) -> Self {
        let message = e.to_string();
        let IndexError::Db(db) = e;
        crate::AgendaError {
            message,
            ..crate::AgendaError::from(db)
        }
    }
}
