//! # elroy-history
//!
//! The versioned home: every change elroy makes to the markdown stores (agenda, feature requests,
//! memories, `MEMORY.md`/`USER.md`, for every user token) is a commit of a git repository in
//! `$ELROY_HOME` (libgit2 through `git2`, no `git` program needed).
//!
//! - [`VersionedHome::start`] opens (or creates) the repository when a home is opened: a new repository
//!   gets an `initial import` commit of the stores as they are, and hand edits made since the last
//!   commit become an `external edit` commit.
//! - [`Recorder`] is the [`elroy_core::CallObserver`] the runtime installs on the tool registry: after
//!   every tool call it commits what changed as `{tool}: {paths}`, e.g.
//!   `delete_agenda_item: agenda/Water_the_plants.md`. The paths come from `elroy-markdown`'s write
//!   journal ([`elroy_markdown::WriteScope`]), so a call costs what it changed, not a walk of the
//!   home; `.git/index` is kept current (with stat data) after every commit while it is small
//!   (≤ 2 MiB), and refreshed by the next walk above that. The walk for outside edits
//!   ([`VersionedHome::commit_outside_edits`]) stats each store file and reads only those changed
//!   since the last walk (their `ctime`; `.git/elroy-walk.json`). A failed commit is never a tool
//!   error: a commit
//!   that finds a git lock taken (`index.lock`, a ref lock: a `git` command running at that moment)
//!   is retried for [`RETRY_WINDOW`]; if it still fails, the change is journaled in
//!   `.git/elroy-pending.jsonl`, committed under the tool's name the next time elroy commits, undoes
//!   or starts (never as `external edit`), and the tool's result says it was saved but not recorded.
//! - [`VersionedHome::history`] (or, one at a time, [`VersionedHome::walk_history`], or without
//!   their files, [`VersionedHome::walk_summaries`]) lists the changes, newest first (`elroy
//!   history [PATH]`);
//!   [`VersionedHome::undo`] reverts the last change elroy made, refusing when a file of it was edited
//!   by hand since (`elroy undo`).
//!
//! - Nothing is committed while git has not finished something in the home (a merge, rebase,
//!   cherry-pick or revert in progress, an unmerged index, a detached HEAD) or when a file to
//!   commit holds conflict markers: [`Unfinished`], checked in the one place every commit is made;
//!   a tool's change then waits in the journal ([`HistoryError::NotRecordedUnfinished`]), undo
//!   refuses ([`HistoryError::Unfinished`]), and [`unfinished`] / [`marker_files`] tell `elroy
//!   doctor`. Every git write runs inside a [`GitWrite`] (the home lock and elroy's record of the
//!   write), so git locks a killed elroy left are recognised and removed at once.
//!
//! Only the markdown stores are versioned ([`is_store_path`]); `state.db`, logs, the cache and the
//! lock never are (the repository's `.gitignore` lists what is). Commits are made under the home
//! lock ([`elroy_markdown::HomeLock`]), so concurrent elroy processes do not race, and with the
//! identity `elroy <elroy@MACHINE>` (the machine's name, [`machine_name`]; `elroy sync` tells
//! machines apart by it) whatever the user's git configuration says.

// Top-down: each module uses only modules listed below it (ARCHITECTURE.md, "elroy-history").
mod check;
mod error;
mod home;
mod locks;
mod log;
mod machine;
mod paths;
mod pending;
mod reader;
mod recorder;
mod state;
mod tree;
mod undo;
mod walk;

pub use check::{Unrecorded, repair_index, unrecorded};
pub use error::HistoryError;
pub use home::{EXTERNAL_EDIT, INITIAL_IMPORT, VersionedHome};
pub use locks::{GitWrite, STALE_GIT_LOCK, git_lock_files, wait_for_git};
pub use log::Change;
pub use machine::{
    COMMITTER_EMAIL, COMMITTER_NAME, SYNC_PREFIX, commit_machine, is_other_machine, machine_name,
    machine_signature, set_machine_name,
};
pub use paths::{GITIGNORE, is_store_path};
pub use pending::RETRY_WINDOW;
pub use recorder::Recorder;
pub use state::{Unfinished, has_markers, marker_files, unfinished};
pub use tree::refresh_index;
pub use undo::{UNDO_PREFIX, Undone};

// The integration tests run in the unit-test executable (docs/development.md, "Test layout").
#[cfg(test)]
extern crate self as elroy_history;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
