//! Which interactive front end `elroy chat` (and `elroy` on a terminal) opens: the full-screen
//! interface (elroy-tui) when standard input and output are both terminals, else the line chat
//! (piped input reads plain lines, as before).

use std::io::IsTerminal;
use std::process::ExitCode;

use elroy_config::Config;

/// Opens the full-screen interface on a terminal, the line chat otherwise; a restart asked by
/// `restart_session` re-executes elroy (`orchestrator.md` §13).
pub(crate) fn chat(config: Config) -> Result<ExitCode, String> {
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return crate::chat::run(config);
    }
    match elroy_tui::run(config)? {
        elroy_tui::Outcome::Exit(code) => Ok(code),
        elroy_tui::Outcome::Restart(message) => crate::chat::restart(&message),
    }
}
