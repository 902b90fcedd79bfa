//! `elroy message [TEXT]`: one turn. TEXT, or standard input when TEXT is absent; prints the reply
//! (or NDJSON events with `--json`); exits 1 with one clear line on stderr when the turn fails.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use elroy_config::Config;
use elroy_core::Capabilities;
use elroy_orchestrator::{Session, TurnEvent, TurnInput, wiring};
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

/// Opens a session on `config`'s home for a front-end with `capabilities`.
pub(crate) fn open_session(config: Config, capabilities: Capabilities) -> Result<Session, String> {
    let endpoint = elroy_llm::select::endpoint(
        &config,
        elroy_llm::ModelRole::Chat,
        &elroy_llm::select::process_env,
    )
    .map_err(|e| e.to_string())?;
    let protocol = endpoint.protocol;
    let idle = std::time::Duration::from_secs(config.settings.llm_timeout_seconds.max(1));
    let model = client(&config, endpoint, idle).map_err(|e| e.to_string())?;
    let runtime = Runtime::open(config).map_err(|e| e.to_string())?;
    for warning in &runtime.warnings {
        tracing::warn!("{warning}");
    }
    let mut parts = wiring::session_parts(&runtime, Arc::clone(&model), protocol, capabilities)
        .map_err(|e| e.to_string())?;
    parts.fast_model = fast_model(&runtime.config, idle);
    Session::start(parts).map_err(|e| e.to_string())
}

/// The fast model's client when it differs from the chat model (§14.1: it defaults to the chat
/// model and its endpoint).
fn fast_model(config: &Config, idle: std::time::Duration) -> Option<Arc<dyn elroy_llm::ChatModel>> {
    let env = &elroy_llm::select::process_env;
    let chat = elroy_llm::select::endpoint(config, elroy_llm::ModelRole::Chat, env).ok()?;
    let fast = elroy_llm::select::endpoint(config, elroy_llm::ModelRole::Fast, env).ok()?;
    if fast == chat {
        return None;
    }
    client(config, fast, idle).ok()
}

/// A chat client for `endpoint` with the default retries, `llm_timeout_seconds` as the idle
/// timeout and `enable_caching` (Anthropic prompt-cache markers).
fn client(
    config: &Config,
    endpoint: elroy_llm::ModelEndpoint,
    idle: std::time::Duration,
) -> Result<Arc<dyn elroy_llm::ChatModel>, elroy_llm::LlmError> {
    elroy_llm::chat_client_with_caching(
        endpoint,
        elroy_llm::RetryPolicy::default(),
        elroy_llm::Timeouts {
            idle,
            ..elroy_llm::Timeouts::default()
        },
        config.settings.enable_caching,
    )
}

pub(crate) fn run(config: Config, args: &MessageArgs) -> Result<ExitCode, String> {
    let text = message_text(args)?;
    run_text(config, text, args.json, args.tool.clone())
}

/// Runs one turn with `text` (also `elroy` with standard input that is not a terminal).
pub(crate) fn run_text(
    config: Config,
    text: String,
    json: bool,
    tool: Option<String>,
) -> Result<ExitCode, String> {
    let session = open_session(config, Capabilities { can_restart: false })?;
    if let Some(name) = &tool
        && !session.parts().registry.contains(name)
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
            // Background work after the reply (§11, §12.1); a one-shot command waits for it.
            match crate::block_on(session.after_turn()) {
                Ok(Err(e)) | Err(e) => {
                    tracing::warn!("background work after the turn failed: {e}");
                }
                Ok(Ok(_)) => {}
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => Err(error.to_string()),
    }
}
