//! Why the interface could not start or go on ([`TuiError`]), why `$EDITOR` failed
//! ([`EditorError`]) and why a turn gave no reply ([`TurnFailed`]). Each keeps its source; the
//! CLI makes the text.

use elroy_orchestrator::TurnError;
use elroy_runtime::RuntimeError;

/// Why the full-screen interface stopped with an error ([`crate::run`]).
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// tokio's runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    AsyncRuntime(#[source] std::io::Error),
    /// The signal handlers could not be installed.
    #[error("cannot handle signals: {0}")]
    Signals(#[source] std::io::Error),
    /// The terminal could not be set up (raw mode, alternate screen).
    #[error("cannot set up the terminal: {0}")]
    Terminal(#[source] std::io::Error),
    /// A frame could not be drawn.
    #[error("cannot draw: {0}")]
    Draw(#[source] std::io::Error),
    /// The home, its stores or the session could not be opened.
    #[error(transparent)]
    Session(#[from] RuntimeError),
}

impl From<TuiError> for String {
    fn from(error: TuiError) -> Self {
        error.to_string()
    }
}

/// Why `$VISUAL` / `$EDITOR` did not edit a file; shown as a warning in the conversation.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    /// The variable's value cannot be split into words.
    #[error("cannot read EDITOR={0}")]
    Unreadable(String),
    /// The program could not be run.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The program ended unsuccessfully.
    #[error("{program} exited with {status}")]
    Exited {
        /// The program.
        program: String,
        /// How it ended.
        status: std::process::ExitStatus,
    },
}

/// Why a turn ended without a reply (the event loop only tells success from failure; the turn's
/// own events already showed the error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TurnFailed {
    /// No chat model is set up yet (the first-run panel is up).
    #[error("no chat model yet")]
    NoModel,
    /// The turn failed.
    #[error(transparent)]
    Turn(#[from] TurnError),
}
