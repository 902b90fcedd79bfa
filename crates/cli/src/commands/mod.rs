//! One file per subcommand: its clap arguments and what it does (parse, call the runtime or a
//! store crate, print).

pub(crate) mod agenda;
pub(crate) mod chat;
pub(crate) mod config;
pub(crate) mod doctor;
pub(crate) mod due;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod import_elroy;
pub(crate) mod mcp;
pub(crate) mod message;
pub(crate) mod models;
pub(crate) mod plugins;
pub(crate) mod remember;
pub(crate) mod remind;
pub(crate) mod serve;
pub(crate) mod sync;
pub(crate) mod tools;
pub(crate) mod undo;
