//! [`HistoryError`]. Uses `state` (below it) for [`HistoryError::Unfinished`].

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
    /// A file of the change to undo was changed since through `elroy sync` (another machine's
    /// change it pulled, its merge, or its id renumbering): undoing would throw that change away.
    #[error(
        "not undoing '{message}' ({id}): {path} was changed since by {by}; undo only reverts this \
         machine's own last change while its files are as it left them, nothing was changed"
    )]
    ChangedByPull {
        /// The change's message.
        message: String,
        /// Its short id.
        id: String,
        /// The first file that differs, relative to the home.
        path: String,
        /// What changed it, in words: `a change from MACHINE (pulled by elroy sync)`, `elroy sync
        /// merging changes from MACHINE`, or `this machine's elroy sync ('sync: renumber')`.
        by: String,
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
    /// A change is saved in the stores, but its commit failed even after retrying for
    /// [`crate::RETRY_WINDOW`] (e.g. a `git` command held `.git/index.lock` or a ref lock); the
    /// change waits in `.git/elroy-pending.jsonl` and is committed as `summary` the next time elroy
    /// commits, undoes or starts, never as `external edit`.
    #[error(
        "the change was saved, but not recorded in the history ({reason}); elroy records it as \
         '{summary}' the next time it starts"
    )]
    NotRecorded {
        /// The first line of the commit message it will get.
        summary: String,
        /// Why the commit failed.
        reason: String,
    },
    /// A change is saved in the stores, but neither its commit nor the journal entry could be
    /// written (e.g. a full disk): the next start commits it as an `external edit`.
    #[error(
        "the change was saved, but could not be recorded in the history ({reason}); it will show \
         as an external edit"
    )]
    NotJournaled {
        /// Why the commit and the journal failed.
        reason: String,
    },
    /// Git has not finished something in the home (a merge, a rebase, a detached HEAD, conflict
    /// markers in a store file): elroy commits nothing until it is done (the state names the
    /// command that ends it).
    #[error("{0}; nothing was changed")]
    Unfinished(crate::state::Unfinished),
    /// A change is saved in the stores, but not committed because git has not finished something
    /// in the home ([`HistoryError::Unfinished`]); it waits in `.git/elroy-pending.jsonl` and is
    /// committed as `summary` by the first elroy command after that is done.
    #[error(
        "the change was saved, but not recorded in the history: {state}; elroy records it as \
         '{summary}' once that is done"
    )]
    NotRecordedUnfinished {
        /// The first line of the commit message it will get.
        summary: String,
        /// What git has not finished.
        state: crate::state::Unfinished,
    },
    /// A git lock file is taken (a `git` command is running in the home) and stayed taken for as
    /// long as elroy waited.
    #[error(
        "a git command is running in the home ({lock} exists, made {age} s ago); nothing was \
         changed: try again when it has finished (if no git command is running, delete {lock})"
    )]
    GitBusy {
        /// The lock file, relative to the home (`.git/index.lock`).
        lock: String,
        /// Its age in seconds.
        age: u64,
    },
    /// libgit2 failed (its message, without libgit2's class and code numbers).
    #[error("git: {}", .0.message().trim_end_matches([':', ' ']))]
    Git(#[from] git2::Error),
}
