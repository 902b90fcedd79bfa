//! [`HistoryError`].

/// Why the versioned home could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The home has no repository yet (versioning was off, or elroy never started there).
    #[error(
        "this home has no history yet (it starts the next time elroy opens it with versioned_home on)"
    )]
    NoRepository,
    /// Nothing elroy made is left to undo.
    #[error("nothing to undo: no change made by elroy is left in the history")]
    NothingToUndo,
    /// A file of the change to undo differs from what that change left (edited by hand since).
    #[error(
        "not undoing '{message}' ({id}): {path} was changed since (by hand or outside elroy); \
         restore it or edit it yourself, nothing was changed"
    )]
    EditedSince {
        /// The change's message.
        message: String,
        /// Its short id.
        id: String,
        /// The first file that differs, relative to the home.
        path: String,
    },
    /// The home lock could not be taken, or a file could not be written.
    #[error("{0}")]
    Files(#[from] elroy_markdown::MarkdownError),
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file, relative to the home.
        path: String,
        /// The OS error.
        message: String,
    },
    /// libgit2 failed.
    #[error("git: {0}")]
    Git(#[from] git2::Error),
}
