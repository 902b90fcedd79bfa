//! Opening the line chat, with or without a chat model: without one, the one local-server
//! search (`elroy_llm::probe::search`) and one advice block, then the chat opens anyway.

use elroy_commands::ChatSession;
use elroy_config::Config;
use elroy_core::Capabilities;

/// What a message typed without a chat model gets instead of a reply: how to configure one.
pub(crate) const NOT_SENT: &str = "Not sent: there is no chat model yet. Pick one for this session with \
`/model NAME` (e.g. `/model sonnet` with ANTHROPIC_API_KEY set), or set ELROY_CHAT_MODEL_API_BASE and \
ELROY_CHAT_MODEL for a local server (docs/models.md); /commands work without a model (/help lists them).";

/// Opens the chat, with or without a chat model. Without one it runs the local-server search
/// both front ends share (`elroy_llm::probe::search`) and prints one advice block on stderr:
/// the settings that use the first server found (on a terminal, an offer to use it and save it
/// in elroy.conf.yaml), else the three ways to get a model. The chat then opens anyway: slash
/// commands and the tools they run work; a message is answered with [`NOT_SENT`].
pub(crate) fn open_chat(config: Config) -> Result<ChatSession, String> {
    let mut chat = ChatSession::open_without_model_allowed(
        config,
        Capabilities { can_restart: true },
        elroy_runtime::stderr_warnings(),
    )
    .map_err(|e| e.to_string())?;
    if chat.no_model().is_none() {
        return Ok(chat);
    }
    let found = elroy_runtime::block_on(elroy_commands::search_local_servers())?;
    let Some(server) = found.first() else {
        for line in elroy_llm::probe::no_model_help() {
            elroy_runtime::output::eprintln(&line);
        }
        return Ok(chat);
    };
    elroy_runtime::output::eprintln(&format!(
        "No chat model is configured, but {} answers at {}. To use it, set:",
        server.name, server.base_url
    ));
    for line in server.settings() {
        elroy_runtime::output::eprintln(&format!("  {line}"));
    }
    elroy_runtime::output::eprintln(
        "(or chat_model_api_base and chat_model in elroy.conf.yaml; docs/models.md has details)",
    );
    use std::io::IsTerminal;
    let Ok(choice) = elroy_commands::ModelChoice::local(server) else {
        return Ok(chat);
    };
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Ok(chat);
    }
    let _ = elroy_runtime::output::print(&format!(
        "Use {} from {} and save it in elroy.conf.yaml? [y/N] ",
        choice.model(),
        server.name
    ));
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err()
        || !matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
    {
        return Ok(chat);
    }
    match elroy_commands::adopt_and_save(&mut chat, &choice) {
        Ok(lines) => {
            for line in lines {
                elroy_runtime::output::eprintln(&line);
            }
        }
        Err(e) => elroy_runtime::output::eprintln(&format!("warning: {e}")),
    }
    Ok(chat)
}
