//! `elroy sync`: one elroy home on several machines, through any git remote.
//!
//! The versioned home (`elroy-history`) is already a git repository; syncing is fetch, merge, index
//! update, push ([`sync`], in [`engine`]). What git cannot do for elroy is merge two versions of a
//! *store file*: this crate merges them by their structure ([`merge`]) and never writes conflict
//! markers into a store file. What cannot be merged by those rules is kept in a sibling file that
//! the stores ignore and `elroy doctor` lists. Memory ids stay unique per user across machines
//! ([`identity`]), and this machine's `state.db` follows a renumbered memory.

pub mod engine;
pub mod identity;
mod index;
pub mod merge;
pub mod people;
pub mod transport;

#[cfg(test)]
mod tests;

pub use engine::{
    ChangeKind, FAIL_AFTER_ENV, FileChange, SyncOptions, SyncReport, merge_lines, sync,
};
pub use identity::Renumbered;

impl From<elroy_history::HistoryError> for SyncError {
    fn from(e: elroy_history::HistoryError) -> Self {
        match e {
            elroy_history::HistoryError::Unfinished(state) => SyncError::Unfinished(state),
            other => SyncError::History(other),
        }
    }
}

/// Why a sync could not be done.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The remote could not be reached, refused, or needs credentials elroy cannot get (git's or
    /// libgit2's reason). At the fetch this leaves the home exactly as it was.
    #[error("cannot sync with {remote}: {}", .message.trim_end_matches([':', ' ']))]
    Remote {
        /// The remote as configured.
        remote: String,
        /// Why.
        message: String,
    },
    /// A file the pull would change was edited while the sync ran; nothing was changed.
    #[error("{path} was edited while elroy sync ran; nothing was changed, run elroy sync again")]
    EditedDuringSync {
        /// The file, relative to the home.
        path: String,
    },
    /// Git has not finished something in the home (a merge, a rebase, a detached HEAD, an
    /// unmerged index, conflict markers in a store file); nothing was changed.
    #[error("not syncing: {0}; nothing was changed")]
    Unfinished(elroy_history::Unfinished),
    /// Another `elroy sync` is running on this home (`.git/elroy-sync.lock` is held).
    #[error(
        "another elroy sync is running on this home; nothing was changed, wait for it to finish"
    )]
    AlreadyRunning,
    /// A file or directory could not be written.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The file, relative to the home.
        path: String,
        /// The OS error.
        message: String,
    },
    /// This machine's `state.db` could not be updated for renumbered memories.
    #[error("state.db: {0}")]
    Index(String),
    /// The versioned home failed (commit, lock, a `git` command running).
    #[error("{0}")]
    History(elroy_history::HistoryError),
    /// The home lock or an atomic write failed.
    #[error("{0}")]
    Files(#[from] elroy_markdown::MarkdownError),
    /// libgit2 failed locally.
    #[error("git: {}", .0.message().trim_end_matches([':', ' ']))]
    Git(#[from] git2::Error),
}
