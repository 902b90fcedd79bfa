//! # elroy-chat — the line chat
//!
//! elroy's plain front end beside the full-screen interface (elroy-tui): `elroy chat --plain`,
//! `elroy` with `ui: plain`, on a dumb terminal, or with piped input to `elroy chat`. The
//! command line only chooses it and calls [`run`]; both interfaces share the slash commands and
//! the chat opening of elroy-commands and the composition root of elroy-runtime.
//!
//! - `repl`: the REPL on rustyline (history, Tab completion, a spinner, Ctrl-C cancelling a
//!   turn, the background work after a reply while the next line is typed, restart by
//!   re-execution).
//! - `render`: replies streamed as ANSI markdown (`MarkdownStream`).
//! - `approve`: the approval question a model's call may need (`docs/security.md`).
//! - `reminders`: due items printed above the prompt while elroy waits for input.
//! - `open`: opening the chat with or without a chat model.
//! - [`style`]: the colours, which the command line's tables use too.

mod approve;
mod open;
mod reminders;
mod render;
mod repl;
pub mod style;

pub use repl::{RESUME_VARIABLE, restart, run};
pub use style::{RESET, color};
