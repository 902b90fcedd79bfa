//! [`MarkdownError`]: what can go wrong reading or writing a front-matter file.

/// A failure reading, parsing or writing a markdown file. Every variant's `Display` is the exact
/// message of `docs/formats.md#front-matter-files` with `{file}` the path relative to `$ELROY_HOME`
/// (as the caller gave it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkdownError {
    /// `{file} is not valid UTF-8` (`docs/formats.md#reading-a-file` step 1).
    #[error("{file} is not valid UTF-8")]
    NotUtf8 {
        /// Display path.
        file: String,
    },
    /// `invalid front matter in {file}: {message}` (`docs/formats.md#reading-a-file` step 3):
    /// invalid YAML, or a top level that is not a mapping. Nothing is ever written to such a file.
    #[error("invalid front matter in {file}: {message}")]
    InvalidFrontMatter {
        /// Display path.
        file: String,
        /// What is wrong, in plain words with the line in the file (`line 3: a value containing
        /// ": " must be in quotes …`); never the YAML library's advice.
        message: String,
    },
    /// `Unable to read {file}: {os error}`.
    #[error("Unable to read {file}: {message}")]
    Read {
        /// Display path.
        file: String,
        /// The OS error text.
        message: String,
    },
    /// `Unable to write {file}: {os error}` (`docs/formats.md#atomic-writes`).
    #[error("Unable to write {file}: {message}")]
    Write {
        /// Display path.
        file: String,
        /// The OS error text.
        message: String,
        /// The OS error's kind (`StorageFull`, `ReadOnlyFilesystem`, …), for deciding.
        kind: std::io::ErrorKind,
    },
    /// `Could not acquire the elroy home lock within 10 seconds` (`docs/formats.md#the-home-lock`).
    #[error("Could not acquire the elroy home lock within 10 seconds")]
    LockTimeout,
    /// The lock file could not be opened or locked: `Unable to lock {file}: {os error}`.
    #[error("Unable to lock {file}: {message}")]
    Lock {
        /// Display path of the lock file.
        file: String,
        /// The OS error text.
        message: String,
        /// The OS error's kind, for deciding.
        kind: std::io::ErrorKind,
    },
}

impl MarkdownError {
    /// [`MarkdownError::Write`] of `file` failing with `error`.
    pub fn write(file: impl Into<String>, error: &std::io::Error) -> Self {
        MarkdownError::Write {
            file: file.into(),
            message: error.to_string(),
            kind: error.kind(),
        }
    }

    /// The kind of the OS error of a failed write or lock (`None` for the other failures).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            MarkdownError::Write { kind, .. } | MarkdownError::Lock { kind, .. } => Some(*kind),
            _ => None,
        }
    }
    /// The display path of the file the error is about (`None` for a lock timeout).
    pub fn file(&self) -> Option<&str> {
        match self {
            MarkdownError::NotUtf8 { file }
            | MarkdownError::InvalidFrontMatter { file, .. }
            | MarkdownError::Read { file, .. }
            | MarkdownError::Write { file, .. }
            | MarkdownError::Lock { file, .. } => Some(file),
            MarkdownError::LockTimeout => None,
        }
    }

    /// Why a file could not be read, without its name: `not valid UTF-8`, `invalid front
    /// matter: line 3: …`, or the OS error. For listings that name skipped files
    /// (`Skipped unreadable file {file}: {reason}`).
    pub fn reason(&self) -> String {
        match self {
            MarkdownError::NotUtf8 { .. } => "not valid UTF-8".to_owned(),
            MarkdownError::InvalidFrontMatter { message, .. } => {
                format!("invalid front matter: {message}")
            }
            MarkdownError::Read { message, .. }
            | MarkdownError::Write { message, .. }
            | MarkdownError::Lock { message, .. } => message.clone(),
            MarkdownError::LockTimeout => self.to_string(),
        }
    }
}
