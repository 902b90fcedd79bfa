//! `elroy doctor`: prints what [`elroy_runtime::doctor::check_home`] found, one line per problem
//! (`{area}: {path}: {message}`, the areas of [`elroy_runtime::doctor::Area::as_str`]) and a
//! summary; exit 1 when anything is wrong. With `--fix`, first repairs what is safe to repair
//! ([`elroy_runtime::doctor::repair_home`]), one `fixed: …` line per action, then checks.

use std::process::ExitCode;

use elroy_config::Config;
use elroy_runtime::doctor::{check_home, repair_home};

use crate::output;

/// `elroy doctor …`
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print JSON (`{"ok": bool, "problems": [{"area", "path", "message"}]}`) instead of lines;
    /// area is database, agenda, memories, feature-requests, notebook, versioned-home,
    /// embedding-model or plugins
    #[arg(long)]
    pub json: bool,
    /// Repair what is safe to repair first (looping links in the memory folder, a memory left
    /// only in the archive, the git index, changes the history has not recorded, temporary files
    /// of interrupted writes), saying what was done; then check
    #[arg(long)]
    pub fix: bool,
}

/// `elroy doctor [--json] [--fix]`.
pub(crate) fn run(config: &Config, args: &DoctorArgs) -> Result<ExitCode, String> {
    let fixed = if args.fix {
        repair_home(config)
    } else {
        Vec::new()
    };
    if !args.json {
        for action in &fixed {
            output::println(&format!("fixed: {action}"))?;
        }
    }
    let report = check_home(config);
    if args.json {
        let value = report.to_json(args.fix.then_some(fixed.as_slice()));
        output::println(&serde_json::to_string_pretty(&value).unwrap_or_default())?;
    } else {
        for p in &report.problems {
            output::println(&p.line())?;
        }
        output::println(&report.summary(&config.paths.elroy_home.display().to_string()))?;
    }
    Ok(if report.is_healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
