//! [`AgendaError`]: a failed store operation, carrying the exact message the model sees.

/// A failed agenda operation. Its `Display` is the message of `docs/tools.md#agenda` to
/// `docs/tools.md#due-items` (for example `No agenda item found matching 'dentist'.`), without the
/// `Error invoking tool …: ` prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AgendaError {
    message: String,
}

impl AgendaError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        AgendaError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<elroy_markdown::MarkdownError> for AgendaError {
    fn from(e: elroy_markdown::MarkdownError) -> Self {
        AgendaError::new(e.to_string())
    }
}

impl From<String> for AgendaError {
    fn from(message: String) -> Self {
        AgendaError::new(message)
    }
}

impl From<crate::RecurrenceError> for AgendaError {
    fn from(e: crate::RecurrenceError) -> Self {
        AgendaError::new(e.to_string())
    }
}
