//! # elroy-cli
//!
//! The `elroy` command line (the binary in the workspace root calls [`main`]).
//!
//! Thin by design: parse the command line, load the configuration, open the home through
//! `elroy-runtime`, call, print. Exit status: 0 success; 1 when a tool call or a turn fails (one
//! clear line on stderr); 2 for command-line usage errors.

mod agenda_cmd;
mod args;
mod chat;
mod chat_approve;
mod chat_open;
mod config_cmd;
mod doctor;
mod due_cmd;
mod history_cmd;
mod import_cmd;
mod logging;
mod mcp_cmd;
mod message;
mod models_cmd;
mod output;
mod plugins_cmd;
mod remember;
mod remind;
mod reminders;
mod render;
mod serve_cmd;
mod sync_cmd;
mod tools_cmd;

use std::process::ExitCode;

use clap::CommandFactory;
use elroy_config::{Config, LoadOptions};

use crate::args::{Cli, Command};

/// Runs the `elroy` command line with the process arguments; returns the exit status.
pub fn main() -> ExitCode {
    let cli = match output::parse_args::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // Memories a command leaves without a vector are embedded by this same executable, detached
    // (`elroy_runtime::embed_worker`).
    if let Ok(exe) = std::env::current_exe() {
        elroy_runtime::embed_worker::set_worker_program(exe);
    }
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            output::eprintln(&format!("elroy: {message}"));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match &cli.command {
        Some(Command::Version) => {
            output::println(&format!("elroy {}", env!("CARGO_PKG_VERSION")))?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Completions { shell }) => {
            // Generated into memory: clap_complete panics when its writer fails.
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "elroy", &mut script);
            output::write_bytes(&script)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Config(args)) => config_cmd::run(&load_config(&cli)?, args),
        Some(Command::Tools(args)) => tools_cmd::run(load_config(&cli)?, args),
        Some(Command::Chat) => {
            let config = load_config(&cli)?;
            match choose_front_end(cli.plain, &config.settings.ui, terminals()) {
                FrontEnd::FullScreen => interactive(config, full_screen),
                FrontEnd::DumbTerminal => {
                    output::eprintln(DUMB_TERMINAL);
                    interactive(config, chat::run)
                }
                // `elroy chat` with piped input is the line REPL too: a session.
                FrontEnd::Plain | FrontEnd::NonInteractive => interactive(config, chat::run),
            }
        }
        Some(Command::Message(args)) => message::run(load_config(&cli), args),
        Some(Command::History(args)) => history_cmd::history(&load_existing(&cli)?, args),
        Some(Command::Undo) => history_cmd::undo(&load_config(&cli)?),
        Some(Command::Sync(args)) => sync_cmd::run(&load_config(&cli)?, args),
        Some(Command::Doctor(args)) => doctor::run(&load_existing(&cli)?, args),
        Some(Command::Remember(args)) => remember::run(load_config(&cli)?, args),
        Some(Command::Mcp(args)) => mcp_cmd::run(load_config(&cli)?, args),
        Some(Command::Serve(args)) => serve_cmd::run(&cli, args),
        Some(Command::ImportElroy(args)) => import_cmd::run(load_config(&cli)?, args),
        Some(Command::Import(args)) => import_cmd::run_import(load_config(&cli)?, args),
        Some(Command::Agenda(args)) => agenda_cmd::run(load_existing(&cli)?, args),
        Some(Command::Due(args)) => due_cmd::run(load_existing(&cli)?, args),
        Some(Command::Remind(args)) => remind::run(load_existing(&cli)?, args),
        Some(Command::Models(args)) => models_cmd::run(load_config(&cli)?, args),
        Some(Command::Plugins(args)) => plugins_cmd::run(&load_config(&cli)?, args),
        None => {
            let config = load_config(&cli)?;
            match choose_front_end(cli.plain, &config.settings.ui, terminals()) {
                FrontEnd::FullScreen => interactive(config, full_screen),
                FrontEnd::DumbTerminal => {
                    output::eprintln(DUMB_TERMINAL);
                    interactive(config, chat::run)
                }
                FrontEnd::Plain => interactive(config, chat::run),
                FrontEnd::NonInteractive => {
                    let args = message::MessageArgs {
                        text: None,
                        json: false,
                        tool: None,
                    };
                    message::run(Ok(config), &args)
                }
            }
        }
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

/// Whether `TERM` names no terminal able to draw a screen (`dumb`, empty or unset), as every
/// curses program decides.
pub(crate) fn dumb_terminal() -> bool {
    std::env::var("TERM").map_or(true, |t| t.trim().is_empty() || t.trim() == "dumb")
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
        elroy_tui::Outcome::Restart(message) => chat::restart(&message),
    }
}

/// Loads the configuration with the global flags as the top layer.
pub(crate) fn load_config(cli: &Cli) -> Result<Config, String> {
    load_config_checked(cli, false)
}

/// [`load_config`] for a command that only reads the home ([`existing_home`]), checked before
/// anything (the log directory) is created in it.
pub(crate) fn load_existing(cli: &Cli) -> Result<Config, String> {
    load_config_checked(cli, true)
}

fn load_config_checked(cli: &Cli, read_only: bool) -> Result<Config, String> {
    let mut config = Config::load(&load_options(cli)).map_err(|e| e.to_string())?;
    if read_only {
        config = existing_home(config)?;
    }
    logging::init(&config, cli.verbose);
    // Every commit names this machine (`elroy sync` tells machines apart by it).
    elroy_history::set_machine_name(config.settings.machine_name.as_deref());
    Ok(config)
}

/// The configuration's load options from the global flags (`--home`, `--config`, `--user`,
/// `--model`, `--mcp-config`, `--permission-mode`, `--allow`, `--deny`) over the process's environment.
pub(crate) fn load_options(cli: &Cli) -> LoadOptions {
    let mut options = LoadOptions::from_process();
    options.home.clone_from(&cli.home);
    options.config_file.clone_from(&cli.config);
    if let Some(user) = &cli.user {
        options
            .flags
            .push(("user_token".into(), user.clone(), "--user".into()));
    }
    if let Some(model) = &cli.model {
        options
            .flags
            .push(("chat_model".into(), model.clone(), "--model".into()));
    }
    if let Some(file) = &cli.mcp_config {
        options.flags.push((
            "mcp_config_path".into(),
            file.to_string_lossy().into_owned(),
            "--mcp-config".into(),
        ));
    }
    if let Some(mode) = &cli.permission_mode {
        options.flags.push((
            elroy_config::MODE_FLAG_KEY.into(),
            mode.clone(),
            "--permission-mode".into(),
        ));
    }
    for (rules, key, flag) in [
        (&cli.allow, elroy_config::ALLOW_FLAG_KEY, "--allow"),
        (&cli.deny, elroy_config::DENY_FLAG_KEY, "--deny"),
    ] {
        for rule in rules {
            options.flags.push((key.into(), rule.clone(), flag.into()));
        }
    }
    options
}

/// The configuration of a command that only reads the home (`remind`, `due`, `agenda`, `doctor`,
/// `history`): such a command never creates one, so a mistyped `ELROY_HOME` or a missing `$HOME`
/// (under cron) is an error naming the path, not an empty home that says "No due items.".
///
/// # Errors
/// `no elroy home at {path} …` when the home directory does not exist.
pub(crate) fn existing_home(config: Config) -> Result<Config, String> {
    let home = &config.paths.elroy_home;
    if home.is_dir() {
        return Ok(config);
    }
    Err(format!(
        "no elroy home at {path} (this command only reads a home and never creates one). Check \
         --home, ELROY_HOME and HOME; to start a new home there: mkdir -p {path} (a command that \
         writes, such as `elroy message`, creates it too)",
        path = home.display()
    ))
}

/// A single-threaded async runtime for one command.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    Ok(runtime.block_on(future))
}

/// `text`, else all of standard input, with trailing line breaks removed (`elroy message`,
/// `elroy remember`). `what` names the input in the read error ("the message").
pub(crate) fn text_or_stdin(text: Option<&str>, what: &str) -> Result<String, String> {
    let text = match text {
        Some(text) => text.to_owned(),
        None => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| format!("cannot read {what} from standard input: {e}"))?;
            text
        }
    };
    Ok(text.trim_end_matches(['\n', '\r']).to_owned())
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
