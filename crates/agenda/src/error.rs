//! [`AgendaError`]: a failed store operation, carrying the exact message the model sees.

/// A failed agenda operation. Its `Display` is the message of `docs/tools.md#agenda` to
/// `docs/tools.md#due-items` (for example `No agenda item found matching 'dentist'.`), without the
/// `Error invoking tool …: ` prefix.
///
/// A failure caused by a write the file system or the database refused keeps the I/O kind of
/// that write ([`AgendaError::io_kind`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AgendaError {
    pub(crate) message: String,
    pub(crate) io_kind: Option<std::io::ErrorKind>,
}

impl AgendaError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        AgendaError {
            message: message.into(),
            io_kind: None,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The kind of the I/O failure behind this one (a full disk, a read-only file system), when
    /// a file or database write failed.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.io_kind
    }

    /// The tool error with the same message and I/O kind.
    pub fn to_tool_error(&self) -> elroy_core::ToolError {
        elroy_core::ToolError::new(self.message.clone()).with_io_kind(self.io_kind)
    }
}

impl From<elroy_markdown::MarkdownError> for AgendaError {
    fn from(e: elroy_markdown::MarkdownError) -> Self {
        AgendaError {
            message: e.to_string(),
            io_kind: e.io_kind(),
        }
    }
}

impl From<elroy_db::DbError> for AgendaError {
    fn from(e: elroy_db::DbError) -> Self {
        AgendaError {
            message: e.to_string(),
            io_kind: e.io_kind(),
        }
    }
}

impl From<String> for AgendaError {
    fn from(message: String) -> Self {
        AgendaError::new(message)
    }
}

impl From<crate::RecurrenceError> for AgendaError {
    fn from(e: crate::RecurrenceError) -> Self {
        AgendaError::new(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store failure keeps the kind of the write behind it, and its tool error too; its
    /// message stays the file's.
    #[test]
    fn the_io_kind_of_a_failed_write_reaches_the_tool_error() {
        let enospc = std::io::Error::from_raw_os_error(28);
        let e = AgendaError::from(elroy_markdown::MarkdownError::write("agenda/A.md", &enospc));
        assert_eq!(e.io_kind(), Some(std::io::ErrorKind::StorageFull));
        assert!(e.message().starts_with("Unable to write agenda/A.md: "));
        let tool = e.to_tool_error();
        assert_eq!(tool.message(), e.message());
        assert_eq!(tool.io_kind(), Some(std::io::ErrorKind::StorageFull));
        let db = elroy_db::DbError::Sqlite(elroy_db::rusqlite::Error::SqliteFailure(
            elroy_db::rusqlite::ffi::Error::new(elroy_db::rusqlite::ffi::SQLITE_READONLY),
            None,
        ));
        assert_eq!(
            AgendaError::from(db).io_kind(),
            Some(std::io::ErrorKind::ReadOnlyFilesystem)
        );
        assert_eq!(AgendaError::new("No agenda item found").io_kind(), None);
    }
}
