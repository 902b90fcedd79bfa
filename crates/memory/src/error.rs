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

impl MemoryError {
    /// The kind of the I/O failure behind this one ([`elroy_markdown::MarkdownError::io_kind`],
    /// [`elroy_db::DbError::io_kind`]), `None` when there is none.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            MemoryError::File(e) => e.io_kind(),
            MemoryError::Db(e) => e.io_kind(),
            MemoryError::MissingFile { .. } => None,
        }
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
        MemoryError::File(e) => {
            // A full disk, a quota, a read-only mount and a denied write.
            return matches!(
                e.io_kind(),
                Some(
                    std::io::ErrorKind::StorageFull
                        | std::io::ErrorKind::QuotaExceeded
                        | std::io::ErrorKind::ReadOnlyFilesystem
                        | std::io::ErrorKind::PermissionDenied
                )
            );
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn sqlite(code: std::ffi::c_int) -> MemoryError {
        MemoryError::from(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            None,
        ))
    }

    /// A file write refused by a full disk, a quota, a read-only mount or a denied write cannot
    /// write the home; another I/O failure can (its words do not decide).
    #[test]
    fn cannot_write_reads_the_kind_of_the_failed_write() {
        let db = elroy_db::Db::open_in_memory().unwrap();
        let file = |errno| {
            let e = std::io::Error::from_raw_os_error(errno);
            MemoryError::File(elroy_markdown::MarkdownError::write("memories/A.md", &e))
        };
        for errno in [28, 122, 30, 13] {
            assert!(cannot_write(&file(errno), &db), "errno {errno}");
        }
        assert!(!cannot_write(&file(2), &db));
        assert_eq!(file(28).io_kind(), Some(std::io::ErrorKind::StorageFull));
        assert_eq!(
            sqlite(rusqlite::ffi::SQLITE_FULL).io_kind(),
            Some(std::io::ErrorKind::StorageFull)
        );
        assert_eq!(
            sqlite(rusqlite::ffi::SQLITE_READONLY).io_kind(),
            Some(std::io::ErrorKind::ReadOnlyFilesystem)
        );
        assert_eq!(sqlite(rusqlite::ffi::SQLITE_BUSY).io_kind(), None);
    }
}
