//! # elroy-tools-codex
//!
//! The Codex and contrib tool family (`docs/tools.md#codex-and-contrib-plugins`; decisions D14,
//! D16):
//!
//! - [`CreateContribRepo`] (`create_contrib_repo`): a git repository (git2) with the sample plugin
//!   `hello_tool`, the sample panel `hello_panel`, a README and a .gitignore, committed.
//! - [`EditContribWithCodex`] (`edit_contrib_with_codex`): runs the `codex` program (config
//!   `codex_command`) with `--sandbox workspace-write` in `$ELROY_HOME/contrib/`, records the
//!   session, and commits completed changes.
//! - [`InspectElroyWithCodex`] (`inspect_elroy_with_codex`): a `--sandbox read-only` session in
//!   the Elroy source tree (`elroy_source_path`), optionally with the log tail; nothing committed.
//! - [`ListCodexSessions`] (`list_codex_sessions`): recorded sessions, newest first, `scope`
//!   filter.
//!
//! Sessions are kept by a [`CodexSessionStore`] found in [`elroy_core::Services`] as
//! [`CodexSessions`]: [`SqliteSessionStore`] over the `state.db` table of
//! `docs/formats.md#codex-sessions` in the runtime, [`MemorySessionStore`] in tests.

mod contrib;
mod events;
mod git;
mod runner;
mod sessions;
mod sqlite;
mod store;
pub mod stubs;

use elroy_core::{ToolFamily, ToolRegistry, async_tool, sync_tool};

pub use contrib::{CreateContribRepo, CreateContribRepoArgs};
pub use events::{Events, parse_events};
pub use runner::CodexHome;
pub use sessions::{
    EditContribArgs, EditContribWithCodex, InspectElroyArgs, InspectElroyWithCodex,
    ListCodexSessions, ListCodexSessionsArgs,
};
pub use sqlite::{SqliteSessionStore, open_session_store};
pub use store::{
    CodexSession, CodexSessionStore, CodexSessions, CommandRecord, MemorySessionStore,
    STALE_MESSAGE, Scope, SessionStatus, SessionStoreError, format_time,
};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Codex and contrib plugins",
    guide: "Runs of the Codex CLI: a read-only inspection of elroy's source, and edits to the \
            contrib plugin repository in the home, whose executables become tools.",
};

/// Registers `create_contrib_repo`, `edit_contrib_with_codex`, `inspect_elroy_with_codex` and
/// `list_codex_sessions`.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(CreateContribRepo))
        .register(async_tool(EditContribWithCodex))
        .register(async_tool(InspectElroyWithCodex))
        .register(sync_tool(ListCodexSessions));
}
