//! `elroy chat` and `elroy` without a subcommand: the one place that chooses the interface (the
//! full-screen interface, elroy-tui, or the line chat, elroy-chat) and starts it between the
//! syncs of `sync_on_start` and `sync_on_exit`.

use std::process::ExitCode;

use elroy_commands::front_end::{FrontEnd, choose_front_end, terminals};
use elroy_config::Config;

use crate::output;

/// Starts the interface `plain` (`--plain`), the `ui` key and the terminals choose. With standard
/// input not a terminal, `elroy chat` (`chat_command`) reads its lines with the line chat and
/// `elroy` answers one message read from it.
pub(crate) fn run(config: Config, plain: bool, chat_command: bool) -> Result<ExitCode, String> {
    match choose_front_end(plain, &config.settings.ui, terminals()) {
        FrontEnd::FullScreen => interactive(config, full_screen),
        FrontEnd::DumbTerminal => {
            output::eprintln(DUMB_TERMINAL);
            interactive(config, elroy_chat::run)
        }
        FrontEnd::NonInteractive if !chat_command => {
            let args = super::message::MessageArgs {
                text: None,
                json: false,
                tool: None,
            };
            super::message::run(Ok(config), &args)
        }
        // `elroy chat` with piped input is the line REPL too: a session.
        FrontEnd::Plain | FrontEnd::NonInteractive => interactive(config, elroy_chat::run),
    }
}

/// Runs an interactive session (`front_end`: the full-screen interface or the line REPL), with
/// the syncs of `sync_on_start` and `sync_on_exit` before and after it, each a
/// one-line status on stderr.
fn interactive(
    config: Config,
    front_end: fn(Config) -> Result<ExitCode, String>,
) -> Result<ExitCode, String> {
    if let Some(status) = elroy_runtime::sync::session_sync(&config, true) {
        output::eprintln(&status);
    }
    let at_exit = config.clone();
    let result = front_end(config);
    if let Some(status) = elroy_runtime::sync::session_sync(&at_exit, false) {
        output::eprintln(&status);
    }
    result
}

/// The line elroy prints when `TERM` keeps it from the full-screen interface.
const DUMB_TERMINAL: &str =
    "elroy: TERM is dumb or unset, so the line chat runs instead of the full-screen interface";

/// The full-screen interface (elroy-tui); a restart asked by `restart_session` re-executes elroy
/// (`docs/behaviour.md#restarting-a-session`), as the line REPL does.
fn full_screen(config: Config) -> Result<ExitCode, String> {
    match elroy_tui::run(config)? {
        elroy_tui::Outcome::Exit(code) => Ok(code),
        elroy_tui::Outcome::Restart(message) => elroy_chat::restart(&message),
    }
}
