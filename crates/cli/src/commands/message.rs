//! `elroy message [TEXT]`: one turn. TEXT, or standard input when TEXT is absent; prints the reply
//! (or NDJSON events with `--json`); exits 1 with one clear line on stderr when the turn fails (with
//! `--json`: an `error` event on stdout, whatever failed).

use std::process::ExitCode;

use clap::Args;
use elroy_config::Config;
use elroy_core::Capabilities;
use elroy_orchestrator::{Session, TurnEvent, TurnInput};
use elroy_runtime::Runtime;

use crate::output;

/// `elroy message …`
#[derive(Debug, Args)]
pub struct MessageArgs {
    /// The message; read from standard input when omitted
    pub text: Option<String>,
    /// Print the turn's events as NDJSON: text, thought, tool_call, tool_result, error, final
    #[arg(long)]
    pub json: bool,
    /// Make the model call this tool in its first round
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
}

/// Reads the message: TEXT, else all of standard input (a trailing newline removed).
fn message_text(args: &MessageArgs) -> Result<String, String> {
    let text = crate::text_or_stdin(args.text.as_deref(), "the message")?;
    if text.trim().is_empty() {
        return Err("no message: pass TEXT or pipe it on standard input".into());
    }
    Ok(text)
}

/// Opens a session on `config`'s home for a front-end with `capabilities`, through the
/// composition root (`elroy-runtime`). Configuration and plugin warnings found at open are logged
/// (the line naming plugins not run because not trusted is printed to stderr too);
/// warnings found while opening the stores and models (a broken agenda file, a fast model that
/// cannot be built) are printed to stderr.
pub(crate) fn open_session(config: Config, capabilities: Capabilities) -> Result<Session, String> {
    let runtime =
        Runtime::open_with(config, elroy_runtime::stderr_warnings()).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        tracing::warn!("{warning}");
    }
    runtime.warn_untrusted();
    runtime.session(capabilities).map_err(|e| e.to_string())
}

/// `elroy message`, its configuration as loaded. With `--json` every error is one NDJSON event
/// on standard output, `{"type": "error", "message": …}`, as a failed turn's (the contract of
/// `docs/models.md#elroy-message`), and the exit status is 1; without, it is the usual
/// `elroy: …` line on standard error.
pub(crate) fn run(config: Result<Config, String>, args: &MessageArgs) -> Result<ExitCode, String> {
    let result = config.and_then(|config| {
        let text = message_text(args)?;
        run_text(config, text, args.json, args.tool.clone())
    });
    match result {
        Err(message) if args.json => {
            output::println(&error_event(&message))?;
            Ok(ExitCode::FAILURE)
        }
        other => other,
    }
}

/// The NDJSON error event: `{"type":"error","message":…}`.
fn error_event(message: &str) -> String {
    serde_json::json!({"type": "error", "message": message}).to_string()
}

/// Runs one turn with `text` (also `elroy` with standard input that is not a terminal).
pub(crate) fn run_text(
    config: Config,
    text: String,
    json: bool,
    tool: Option<String>,
) -> Result<ExitCode, String> {
    let session = open_session(config, Capabilities { can_restart: false })?;
    // An MCP server's tool counts once the servers it could belong to have started.
    if let Some(name) = &tool
        && crate::block_on(session.parts().registry.find(name))?.is_none()
    {
        return Err(session.parts().registry.unknown_tool_message(name));
    }
    let input = TurnInput {
        forced_tool: tool,
        ..TurnInput::new(text)
    };
    let outcome = crate::block_on(async {
        let mut sink = |event: TurnEvent| {
            if json && let Some(line) = event.to_json() {
                // An event that cannot be written must not stop the turn; a closed pipe is
                // handled (and remembered) by the output path, the final write reports the rest.
                let _ = output::println(&line.to_string());
            }
        };
        session.turn(&input, &mut sink).await
    })?;
    match outcome {
        Ok(outcome) => {
            let line = if json {
                serde_json::json!({"type": "final", "content": outcome.reply}).to_string()
            } else {
                outcome.reply.clone()
            };
            // A closed pipe is not an error (the turn is stored either way); the background work
            // below still runs.
            output::println(&line).map_err(|e| format!("cannot write the reply: {e}"))?;
            // Background work after the reply (`docs/behaviour.md#context-refresh-and-compression`,
            // `docs/behaviour.md#background-memory-work`); a one-shot command waits for it. Every
            // step runs; each failure is one warning line on stderr (and in the log).
            let warnings: Vec<String> = match crate::block_on(session.after_turn()) {
                Ok(report) => report.failures.iter().map(ToString::to_string).collect(),
                Err(e) => vec![format!("could not run: {e}")],
            };
            for warning in warnings {
                output::eprintln(&format!(
                    "warning: background work after the turn: {warning}"
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
        // With --json the turn's own error event is already on standard output.
        Err(_) if json => Ok(ExitCode::FAILURE),
        Err(error) => Err(error.to_string()),
    }
}
