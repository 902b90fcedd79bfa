//! `elroy history [PATH]`: the versioned home (`elroy-history`).
//!
//! Both read the repository as it is: hand edits not yet committed (they are, as `external edit`,
//! the next time elroy opens the home) are not listed, and make `undo` refuse when they touch the
//! change to revert.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::output;

use elroy_config::Config;
use elroy_history::VersionedHome;

/// `elroy history …`
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Only changes to this file or directory (relative to the elroy home, or a path to it)
    pub path: Option<PathBuf>,
}

/// The versioned home, with hand edits since the last commit committed first (`elroy undo` too).
pub(crate) fn open(config: &Config) -> Result<VersionedHome, String> {
    if !config.settings.versioned_home {
        return Err(
            "the versioned home is off (versioned_home: false), so there is no history".into(),
        );
    }
    let home = VersionedHome::open(&config.paths.elroy_home).map_err(|e| e.to_string())?;
    // Hand edits since the last commit become an `external edit` first, so the history shows
    // them and undo never takes them for elroy's change.
    let now = config
        .now
        .unwrap_or_else(|| elroy_core::Clock::now(&elroy_core::SystemClock));
    if let Err(e) = home.commit_outside_edits(now) {
        crate::output::eprintln(&format!("warning: versioned home: {e}"));
    }
    Ok(home)
}

/// `elroy history [PATH]`: one line per change, newest first: short id, time (configured zone),
/// message summary.
pub(crate) fn run(config: &Config, args: &HistoryArgs) -> Result<ExitCode, String> {
    let home = open(config)?;
    let filter = args
        .path
        .as_deref()
        .map(|p| home_relative(&config.paths.elroy_home, p));
    // Printed as found, so `elroy history | head` stops after the few lines it reads.
    let mut printed = Ok(());
    // Without the files of each change (not printed): no tree diff per line.
    home.walk_summaries(filter.as_deref(), &mut |change| {
        // A change another machine made (pulled by `elroy sync`) names that machine.
        let from = change
            .machine
            .as_deref()
            .map(|m| format!(" (from {m})"))
            .unwrap_or_default();
        printed = output::println(&format!(
            "{} {} {}{from}",
            change.short_id,
            change
                .time
                .to_zoned_datetime(config.timezone.clone())
                .strftime("%Y-%m-%d %H:%M:%S"),
            change.summary
        ));
        printed.is_ok() && !output::stdout_closed()
    })
    .map_err(|e| e.to_string())?;
    printed?;
    Ok(ExitCode::SUCCESS)
}

/// `path` relative to the home (`/`-separated): an absolute path or one that exists from the
/// working directory is taken relative to the home when inside it; anything else is taken as
/// relative to the home already.
fn home_relative(home: &Path, path: &Path) -> String {
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
