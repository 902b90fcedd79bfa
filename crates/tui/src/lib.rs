//! # elroy-tui — the full-screen interface
//!
//! `elroy` (and `elroy chat`) on a terminal: the conversation on the left with replies streamed
//! token by token and rendered as markdown, a sidebar on the right (Agenda, Due, Memories,
//! Requests, Codex and one tab per plugin panel), the multi-line input, a status bar, the
//! command palette (Ctrl+P) with forms generated from tool schemas, browse mode (Esc) with a
//! detail view, and reminders when a due item comes due.
//!
//! Structure (as mature ratatui applications are built): [`app::App`] holds all state and turns
//! input into [`app::Action`]s without IO; [`ui::render`] draws an `App` and nothing else (tests
//! draw it on ratatui's `TestBackend`); [`run`] is the event loop that merges terminal events,
//! turn events, tool results, background work, sidebar loads and reminders over one channel.
//! The session comes from the composition root (`elroy-runtime`); every change goes through
//! the tool registry, so it is in `elroy history`.

pub mod app;
pub mod approval;
pub mod conversation;
pub mod detail;
pub mod first_run;
pub mod highlight;
pub mod input;
pub mod keys;
pub mod markdown;
pub mod mcp_status;
pub mod palette;
mod run;
pub mod sidebar;
pub mod signals;
pub mod source;
pub mod terminal_input;
pub mod theme;
pub mod ui;
pub mod wrap;

pub use run::{EditorError, Outcome, QUIT_WAIT, RESUME_VARIABLE, TuiError, run};

#[cfg(test)]
mod snapshots;
