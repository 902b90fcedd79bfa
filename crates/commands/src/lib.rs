//! # elroy-commands — the interface's slash commands, front-end neutral
//!
//! What a person types in the plain REPL or the full-screen interface goes through [`parse`]:
//! a line starting with `/` is a command ([`Input::Command`]) or an unknown word
//! ([`Input::Unknown`], whose [`unknown_message`] lists the commands); anything else is a message
//! for the model ([`Input::NotCommand`]), `//text` being sent as `/text`. [`complete`] gives the
//! candidates for Tab (command names, then arguments where they make sense). [`run`] executes a
//! command on a [`ChatSession`] **without the model**: agenda, due items, memories, requests and
//! `/remember` go through the same tools as a model's call (so every change lands in `elroy
//! history` and `elroy undo` reverts it), `/history` and `/undo` use the versioned home. The
//! result is a [`CommandOutput`]: markdown lines for the front end to render, and an optional
//! [`Action`] telling it what changed (exit, a new context, another model).
//!
//! The crate depends on no terminal crate: the plain REPL (elroy-cli) and the full-screen
//! interface (elroy-tui) render the same output their own way.

mod complete;
mod first_run;
pub mod front_end;
mod parse;
mod reminders;
mod run;
mod session;
pub mod views;

pub use complete::{Candidate, CompletionNames, complete};
/// The local-server search both front ends use, and what it finds (re-exported for elroy-tui).
pub use elroy_llm::probe::{LocalServer, search as search_local_servers};
pub use first_run::{FirstRunError, ModelChoice, adopt_and_save, mask_key};
pub use parse::{COMMANDS, Command, CommandInfo, Input, parse, unknown_message};
pub use reminders::{InterfaceReminders, NoReminders, ReminderSource};
pub use run::{Action, CommandOutput, DEFAULT_NAME_CHARS, default_memory_name, run};
pub use session::ChatSession;
