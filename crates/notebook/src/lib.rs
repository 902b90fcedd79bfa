//! # elroy-notebook
//!
//! The toolnexus-style notes of a user home (`docs/formats.md#notes-and-bootstrap-files`,
//! `docs/tools.md#memory`): `MEMORY.md` (the assistant's own durable notes) and `USER.md` (its
//! picture of the user), edited by the `memory` tool with add / replace / remove, and the **soul**:
//! the bootstrap files composed once per session start into a frozen text for the system prompt
//! (`docs/behaviour.md#the-soul-snapshot`).
//!
//! - [`Notebook`]: the store; [`Notebook::edit`] runs one [`Edit`] under the home lock with an
//!   atomic write (D12), re-reading the file inside the lock (robustness R2).
//! - [`edit::apply`]: the edit semantics as a pure function (first occurrence, literal
//!   replacement, loud misses; robustness R1, R5, R6).
//! - [`Soul`]: the snapshot, with the 2 MiB-per-file cap and its notice.

pub mod edit;
mod soul;
mod store;

pub use edit::{Edit, EditError};
pub use soul::{
    BOOTSTRAP_CAP_BYTES, BOOTSTRAP_FILES, SOUL_BLOCK_INTRO, Soul, SoulSection, TRUNCATION_NOTICE,
};
pub use store::{Notebook, NotebookError, Target};

// The integration tests (`tests/*.rs`) run in this crate's unit-test executable, so the package
// builds one test executable (docs/development.md, "Test layout"); they use the crate by its name.
#[cfg(test)]
extern crate self as elroy_notebook;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
