//! `elroy history [PATH]`: the versioned home (`elroy-history`).
//!
//! Both read the repository as it is: hand edits not yet committed (they are, as `external edit`,
//! the next time elroy opens the home) are not listed, and make `undo` refuse when they touch the
//! change to revert.

use std::path::PathBuf;
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

/// The versioned home, with hand edits since the last commit committed first (`elroy undo`
/// too; `elroy_runtime::versioned`).
pub(crate) fn open(config: &Config) -> Result<VersionedHome, String> {
    let now = config
        .now
        .unwrap_or_else(|| elroy_core::Clock::now(&elroy_core::SystemClock));
    let (home, failed) =
        elroy_runtime::versioned::open_for_history(config, now).map_err(|e| e.to_string())?;
    if let Some(e) = failed {
        output::eprintln(&format!("warning: versioned home: {e}"));
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
        .map(|p| elroy_runtime::versioned::home_relative(&config.paths.elroy_home, p));
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
