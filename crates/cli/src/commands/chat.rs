//! `elroy chat` and `elroy` without a subcommand: the one place that chooses the interface (the
//! full-screen interface, elroy-tui, or the line chat, elroy-chat) and starts it between the
//! syncs of `sync_on_start` and `sync_on_exit`.

use std::process::ExitCode;

use elroy_chat::dumb_terminal;
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

/// The interface `elroy` and `elroy chat` open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrontEnd {
    /// The full-screen interface (standard input and output are terminals, no `--plain`, `ui`
    /// is not `plain`).
    FullScreen,
    /// The line REPL (`--plain` or `ui: plain` on a terminal; standard output not a terminal).
    Plain,
    /// The line REPL because the terminal cannot show the full-screen interface (`TERM` is
    /// `dumb`, empty or unset); elroy says so in one line.
    DumbTerminal,
    /// Standard input is not a terminal: `elroy` reads one message from it, `elroy chat` reads
    /// its lines with the line REPL (as before the full-screen interface).
    NonInteractive,
}

/// Whether standard input and standard output are terminals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Terminals {
    /// Standard input is a terminal.
    pub stdin: bool,
    /// Standard output is a terminal.
    pub stdout: bool,
    /// `TERM` is `dumb`, empty or unset: a terminal without cursor addressing.
    pub dumb: bool,
}

/// The line elroy prints when `TERM` keeps it from the full-screen interface.
const DUMB_TERMINAL: &str =
    "elroy: TERM is dumb or unset, so the line chat runs instead of the full-screen interface";

fn terminals() -> Terminals {
    use std::io::IsTerminal;
    Terminals {
        stdin: std::io::stdin().is_terminal(),
        stdout: std::io::stdout().is_terminal(),
        dumb: dumb_terminal(),
    }
}

/// The one place that decides the interface: `plain_flag` is `--plain`, `ui`
/// the `ui` key (`full` or `plain`; the configuration refuses any other value).
pub(crate) fn choose_front_end(plain_flag: bool, ui: &str, terminals: Terminals) -> FrontEnd {
    if !terminals.stdin {
        return FrontEnd::NonInteractive;
    }
    if plain_flag || ui.trim().eq_ignore_ascii_case("plain") || !terminals.stdout {
        FrontEnd::Plain
    } else if terminals.dumb {
        FrontEnd::DumbTerminal
    } else {
        FrontEnd::FullScreen
    }
}

/// The full-screen interface (elroy-tui); a restart asked by `restart_session` re-executes elroy
/// (`docs/behaviour.md#restarting-a-session`), as the line REPL does.
fn full_screen(config: Config) -> Result<ExitCode, String> {
    match elroy_tui::run(config)? {
        elroy_tui::Outcome::Exit(code) => Ok(code),
        elroy_tui::Outcome::Restart(message) => elroy_chat::restart(&message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Terminals = Terminals {
        stdin: true,
        stdout: true,
        dumb: false,
    };

    #[test]
    fn front_end_choice() {
        assert_eq!(choose_front_end(false, "full", BOTH), FrontEnd::FullScreen);
        assert_eq!(choose_front_end(false, "Full ", BOTH), FrontEnd::FullScreen);
        assert_eq!(choose_front_end(true, "full", BOTH), FrontEnd::Plain);
        assert_eq!(choose_front_end(false, "plain", BOTH), FrontEnd::Plain);
        assert_eq!(choose_front_end(false, "PLAIN", BOTH), FrontEnd::Plain);
        let dumb = Terminals { dumb: true, ..BOTH };
        assert_eq!(
            choose_front_end(false, "full", dumb),
            FrontEnd::DumbTerminal
        );
        assert_eq!(choose_front_end(true, "full", dumb), FrontEnd::Plain);
        let piped_out = Terminals {
            stdin: true,
            stdout: false,
            dumb: false,
        };
        assert_eq!(choose_front_end(false, "full", piped_out), FrontEnd::Plain);
        for stdout in [true, false] {
            let piped_in = Terminals {
                stdin: false,
                stdout,
                dumb: false,
            };
            for (flag, ui) in [(false, "full"), (true, "full"), (false, "plain")] {
                assert_eq!(
                    choose_front_end(flag, ui, piped_in),
                    FrontEnd::NonInteractive
                );
            }
        }
    }
}
