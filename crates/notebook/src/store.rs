//! [`Notebook`]: `MEMORY.md` and `USER.md` of one user home, edited under the home lock.

use std::path::{Path, PathBuf};

use elroy_markdown::{HomeLock, MarkdownError, write_atomic};

use crate::{Edit, EditError, Soul, edit};

/// Which notes file an edit targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// `MEMORY.md`: the assistant's own durable notes (the `memory` tool's `target: self`).
    SelfNotes,
    /// `USER.md`: the assistant's picture of the user (`target: user`).
    User,
}

impl Target {
    /// The file name in the user home: `MEMORY.md` or `USER.md`.
    pub fn file_name(self) -> &'static str {
        match self {
            Target::SelfNotes => "MEMORY.md",
            Target::User => "USER.md",
        }
    }

    /// Parses the `memory` tool's `target` value: `self` or `user`, exact and case-sensitive.
    pub fn parse(name: &str) -> Option<Target> {
        match name {
            "self" => Some(Target::SelfNotes),
            "user" => Some(Target::User),
            _ => None,
        }
    }
}

/// Why a notebook edit failed. `Display` is the `memory` tool's message (after
/// `Error invoking tool memory: `); in every case the file is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotebookError {
    /// `text must not be empty` or `not found: {text}`.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// `{FILE} is not valid UTF-8; not modified` (robustness R2).
    #[error("{file} is not valid UTF-8; not modified")]
    NotUtf8 {
        /// `MEMORY.md` or `USER.md`.
        file: &'static str,
    },
    /// Lock, read or write failures (`Could not acquire the elroy home lock within 10 seconds`,
    /// `Unable to read …`, `Unable to write …`).
    #[error(transparent)]
    Io(#[from] MarkdownError),
}

/// The notes files of one user home. Holds only paths: every operation re-reads the file from
/// disk inside the home lock (`docs/formats.md#the-home-lock`), so several handles (or processes)
/// on one home never lose each other's entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notebook {
    elroy_home: PathBuf,
    user_home: PathBuf,
}

impl Notebook {
    /// The notebook of `user_home`, locking `$ELROY_HOME/.lock` of `elroy_home`.
    pub fn new(elroy_home: impl Into<PathBuf>, user_home: impl Into<PathBuf>) -> Self {
        Notebook {
            elroy_home: elroy_home.into(),
            user_home: user_home.into(),
        }
    }

    /// The user home (where the notes and the other bootstrap files live).
    pub fn user_home(&self) -> &Path {
        &self.user_home
    }

    /// The path of a notes file.
    pub fn path(&self, target: Target) -> PathBuf {
        self.user_home.join(target.file_name())
    }

    /// The display path of a notes file relative to `$ELROY_HOME` (`users/team/MEMORY.md`).
    fn display(&self, target: Target) -> String {
        let path = self.path(target);
        match path.strip_prefix(&self.elroy_home) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => target.file_name().to_owned(),
        }
    }

    /// The whole current text of a notes file (no size cap); a missing file reads as `""`.
    ///
    /// # Errors
    /// [`NotebookError::NotUtf8`]; [`NotebookError::Io`] when the file cannot be read.
    pub fn read(&self, target: Target) -> Result<String, NotebookError> {
        let bytes = match std::fs::read(self.path(target)) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
            Err(e) => {
                return Err(NotebookError::Io(MarkdownError::Read {
                    file: self.display(target),
                    message: e.to_string(),
                }));
            }
        };
        String::from_utf8(bytes).map_err(|_| NotebookError::NotUtf8 {
            file: target.file_name(),
        })
    }

    /// Applies one edit (`docs/tool-rules.md#actions-and-checks` steps 5–7): take the home lock,
    /// read the whole file, compute the new content, write it atomically when it differs (creating
    /// the user home when needed, keeping the file's permission bits), release the lock.
    ///
    /// # Errors
    /// [`NotebookError`]; the file is byte-identical afterwards in every error case.
    pub fn edit(&self, target: Target, edit: &Edit) -> Result<(), NotebookError> {
        edit::check(edit)?;
        let _lock = HomeLock::acquire(&self.elroy_home)?;
        let current = self.read(target)?;
        let next = edit::apply(&current, edit)?;
        if next != current {
            write_atomic(&self.path(target), next.as_bytes(), &self.display(target))?;
        }
        Ok(())
    }

    /// Composes the soul snapshot of this user home now (`docs/behaviour.md#the-soul-snapshot`).
    /// The value is frozen: later edits do not change it.
    pub fn soul(&self) -> Soul {
        Soul::compose(&self.user_home)
    }
}
