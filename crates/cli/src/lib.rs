//! # elroy-cli
//!
//! The `elroy` command line (the binary in the workspace root calls [`main`]).
//!
//! Thin by design: parse the command line, load the configuration, open the home through
//! `elroy-runtime`, call, print. Exit status: 0 success; 1 when a tool call or a turn fails (one
//! clear line on stderr); 2 for command-line usage errors.

mod args;
mod commands;
mod table;

use std::process::ExitCode;

use clap::CommandFactory;
use elroy_config::{Config, LoadOptions};
use elroy_runtime::{block_on, output};

use crate::args::{Cli, Command};

/// Runs the `elroy` command line with the process arguments; returns the exit status.
pub fn main() -> ExitCode {
    // The detached embedding worker may stay for minutes: it lets go of whatever its starter
    // passed on before anything here opens a file.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if elroy_runtime::embed_worker::is_worker_command(&args) {
        elroy_runtime::embed_worker::close_inherited_descriptors();
    }
    let cli = match parse_args::<Cli>() {
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
        Some(Command::Config(args)) => commands::config::run(&load_config(&cli)?, args),
        Some(Command::Tools(args)) => commands::tools::run(load_config(&cli)?, args),
        Some(Command::Chat) => commands::chat::run(load_config(&cli)?, cli.plain, true),
        Some(Command::Message(args)) => commands::message::run(load_config(&cli), args),
        Some(Command::History(args)) => commands::history::run(&load_existing(&cli)?, args),
        Some(Command::Undo) => commands::undo::run(&load_config(&cli)?),
        Some(Command::Sync(args)) => commands::sync::run(&load_config(&cli)?, args),
        Some(Command::Doctor(args)) => commands::doctor::run(&load_existing(&cli)?, args),
        Some(Command::Remember(args)) => commands::remember::run(load_config(&cli)?, args),
        Some(Command::Mcp(args)) => commands::mcp::run(load_config(&cli)?, args),
        Some(Command::Serve(args)) => commands::serve::run(&cli, args),
        Some(Command::ImportElroy(args)) => commands::import_elroy::run(load_config(&cli)?, args),
        Some(Command::Import(args)) => commands::import::run(load_config(&cli)?, args),
        Some(Command::Agenda(args)) => commands::agenda::run(load_existing(&cli)?, args),
        Some(Command::Due(args)) => commands::due::run(load_existing(&cli)?, args),
        Some(Command::Remind(args)) => commands::remind::run(load_existing(&cli)?, args),
        Some(Command::Models(args)) => commands::models::run(load_config(&cli)?, args),
        Some(Command::Plugins(args)) => commands::plugins::run(&load_config(&cli)?, args),
        None => commands::chat::run(load_config(&cli)?, cli.plain, false),
    }
}

/// Loads the configuration with the global flags as the top layer.
pub(crate) fn load_config(cli: &Cli) -> Result<Config, String> {
    load_config_checked(cli, false)
}

/// [`load_config`] for a command that only reads the home (`remind`, `due`, `agenda`, `doctor`,
/// `history`; `Config::require_home`), checked before anything (the log directory) is created in it.
pub(crate) fn load_existing(cli: &Cli) -> Result<Config, String> {
    load_config_checked(cli, true)
}

fn load_config_checked(cli: &Cli, read_only: bool) -> Result<Config, String> {
    let config = Config::load(&load_options(cli)).map_err(|e| e.to_string())?;
    if read_only {
        config.require_home().map_err(|e| e.to_string())?;
    }
    elroy_runtime::logging::init(&config, cli.verbose);
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
        options.flag("user_token", user, "--user");
    }
    if let Some(model) = &cli.model {
        options.flag("chat_model", model, "--model");
    }
    if let Some(file) = &cli.mcp_config {
        options.flag("mcp_config_path", &file.to_string_lossy(), "--mcp-config");
    }
    if let Some(mode) = &cli.permission_mode {
        options.flag(elroy_config::MODE_FLAG_KEY, mode, "--permission-mode");
    }
    for rule in &cli.allow {
        options.flag(elroy_config::ALLOW_FLAG_KEY, rule, "--allow");
    }
    for rule in &cli.deny {
        options.flag(elroy_config::DENY_FLAG_KEY, rule, "--deny");
    }
    options
}

/// The `elroy …` command line parsed, with clap's own output (help, version, usage errors)
/// written through this module: help and version to standard output (exit 0), usage errors to
/// standard error (exit 2).
///
/// # Errors
/// The exit status to end with when clap printed help, a version or a usage error.
fn parse_args<P: clap::Parser>() -> Result<P, std::process::ExitCode> {
    use std::io::IsTerminal;

    match P::try_parse() {
        Ok(parsed) => Ok(parsed),
        Err(error) => {
            let code = u8::try_from(error.exit_code()).unwrap_or(2);
            let styled = error.render();
            if error.use_stderr() {
                let text = if std::io::stderr().is_terminal() {
                    styled.ansi().to_string()
                } else {
                    styled.to_string()
                };
                output::eprintln(text.trim_end_matches('\n'));
            } else {
                let text = if std::io::stdout().is_terminal() {
                    styled.ansi().to_string()
                } else {
                    styled.to_string()
                };
                if let Err(message) = output::print(&text) {
                    output::eprintln(&format!("elroy: {message}"));
                    return Err(std::process::ExitCode::FAILURE);
                }
            }
            Err(std::process::ExitCode::from(code))
        }
    }
}

/// A direct tool call's result (`elroy tools call`, `remember`, `due snooze|done`): its text on
/// stdout (exit 0), or on stderr (exit 1).
pub(crate) fn print_tool_result(result: &elroy_core::ToolResult) -> Result<ExitCode, String> {
    if result.is_error {
        output::eprintln(&result.content);
        return Ok(ExitCode::FAILURE);
    }
    output::println(&result.content)?;
    Ok(ExitCode::SUCCESS)
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
