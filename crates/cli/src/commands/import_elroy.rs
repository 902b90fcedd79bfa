//! `elroy import-elroy DIR [--db FILE]` (also `elroy import elroy DIR`): an Elroy 0.5.0 home
//! imported by `elroy-import`; the report printed.

use std::path::PathBuf;
use std::process::ExitCode;

use elroy_config::Config;

/// `elroy import-elroy …`
#[derive(Debug, clap::Args)]
pub struct ImportElroyArgs {
    /// The Elroy home to import (the folder with agenda/, feature-requests/, memories/)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Elroy's SQLite database, for agenda, due-item and memory names, active flags and user
    /// names [default: DIR/elroy.db when present]
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

pub(crate) fn run(config: Config, args: &ImportElroyArgs) -> Result<ExitCode, String> {
    let now = config.now.unwrap_or_else(jiff::Timestamp::now);
    let options = elroy_import::ImportOptions {
        source_dir: args.dir.clone(),
        database: args.db.clone(),
    };
    let report = elroy_import::import(&config, &options, now).map_err(|e| e.to_string())?;
    // A closed pipe (`| head`) is not an error: the import is done either way.
    crate::output::print(&report.to_string())?;
    Ok(ExitCode::SUCCESS)
}
