//! The versioned home as `elroy history`, `elroy undo`, `/history` and `/undo` read it: opened
//! only with `versioned_home` on, hand edits since the last commit committed first as `external
//! edit` (so the history shows them and undo never takes them for elroy's change).

use std::path::Path;

use elroy_config::Config;
use elroy_history::{HistoryError, VersionedHome};

/// Why the history cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryOpenError {
    /// `versioned_home: false`: there is no history.
    #[error("the versioned home is off (versioned_home: false), so there is no history")]
    Off,
    /// The repository could not be opened.
    #[error(transparent)]
    Open(#[from] HistoryError),
}

/// The versioned home of `config`, with hand edits committed at `now` first; the second value
/// is why committing them failed (the history is still read; the front end warns).
///
/// # Errors
/// [`HistoryOpenError::Off`] when `versioned_home` is off, [`HistoryOpenError::Open`] when the
/// repository cannot be opened.
pub fn open_for_history(
    config: &Config,
    now: jiff::Timestamp,
) -> Result<(VersionedHome, Option<HistoryError>), HistoryOpenError> {
    if !config.settings.versioned_home {
        return Err(HistoryOpenError::Off);
    }
    let home = VersionedHome::open(&config.paths.elroy_home)?;
    let failed = home.commit_outside_edits(now).err();
    Ok((home, failed))
}

/// `path` relative to the home (`/`-separated): an absolute path or one that exists from the
/// working directory is taken relative to the home when inside it; anything else is taken as
/// relative to the home already (`elroy history PATH`).
pub fn home_relative(home: &Path, path: &Path) -> String {
    let canonical_home = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
    let candidate = std::env::current_dir()
        .map(|cwd| cwd.join(path))
        .unwrap_or_else(|_| path.to_path_buf());
    // The file itself may be gone (deleted by the change); its directory is enough.
    let resolved = candidate.canonicalize().ok().or_else(|| {
        let parent = candidate.parent()?.canonicalize().ok()?;
        Some(parent.join(candidate.file_name()?))
    });
    let inside = resolved
        .as_deref()
        .and_then(|r| r.strip_prefix(&canonical_home).ok())
        .or_else(|| candidate.strip_prefix(home).ok());
    let relative = match inside {
        Some(rel) => rel,
        None if path.is_relative() => path,
        None => return path.to_string_lossy().into_owned(),
    };
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
