//! # elroy-cli
//!
//! The `elroy` command line (the binary in the workspace root calls [`main`]).
//!
//! Thin by design: parse the command line, load the configuration, open the home through
//! `elroy-runtime`, call, print. Exit status: 0 success; 1 when a tool call or a turn fails (one
//! clear line on stderr); 2 for command-line usage errors.

mod args;
mod chat;
mod config_cmd;
mod doctor;
mod history_cmd;
mod import_cmd;
mod logging;
mod mcp_cmd;
mod message;
mod output;
mod remember;
mod render;
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
        Some(Command::Chat) => chat::run(load_config(&cli)?),
        Some(Command::Message(args)) => message::run(load_config(&cli)?, args),
        Some(Command::History(args)) => history_cmd::history(&load_config(&cli)?, args),
        Some(Command::Undo) => history_cmd::undo(&load_config(&cli)?),
        Some(Command::Doctor(args)) => doctor::run(&load_config(&cli)?, args),
        Some(Command::Remember(args)) => remember::run(load_config(&cli)?, args),
        Some(Command::Mcp) => mcp_cmd::run(load_config(&cli)?),
        Some(Command::ImportElroy(args)) => import_cmd::run(load_config(&cli)?, args),
        None => {
            use std::io::IsTerminal;
            if std::io::stdin().is_terminal() {
                chat::run(load_config(&cli)?)
            } else {
                let args = message::MessageArgs {
                    text: None,
                    json: false,
                    tool: None,
                };
                message::run(load_config(&cli)?, &args)
            }
        }
    }
}

/// Loads the configuration with the global flags as the top layer.
pub(crate) fn load_config(cli: &Cli) -> Result<Config, String> {
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
    let config = Config::load(&options).map_err(|e| e.to_string())?;
    logging::init(&config, cli.verbose);
    Ok(config)
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
