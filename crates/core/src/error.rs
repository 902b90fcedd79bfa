//! [`ToolError`]: why a tool call failed.

use std::fmt;

/// A tool failure. Its [`message`](ToolError::message) is the text after
/// `Error invoking tool {name}: ` (`docs/tool-rules.md#errors`, decision D1): where Elroy has a
/// message for the case, the message starts with Elroy's exact text; a short hint may follow.
///
/// A failure whose cause was a write the disk or the file system refused also carries the
/// [`std::io::ErrorKind`] of that write ([`ToolError::io_kind`]), set where a store error becomes a
/// tool error; the runtime reads it, never the message, to explain a full disk or a read-only home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    io_kind: Option<std::io::ErrorKind>,
}

impl ToolError {
    /// A failure with this message (no prefix; the registry adds it).
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            io_kind: None,
        }
    }

    /// This failure, caused by an I/O failure of kind `kind` (`None`: no I/O cause known).
    #[must_use]
    pub fn with_io_kind(mut self, kind: Option<std::io::ErrorKind>) -> Self {
        self.io_kind = kind;
        self
    }

    /// The kind of the I/O failure that caused this one, when the store said
    /// (`StorageFull`, `QuotaExceeded`, `ReadOnlyFilesystem`, `PermissionDenied`, …).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.io_kind
    }

    /// The message without the `Error invoking tool …: ` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The full text the model sees: `Error invoking tool {tool}: {message}`.
    pub fn render(&self, tool: &str) -> String {
        format!("Error invoking tool {tool}: {}", self.message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}
