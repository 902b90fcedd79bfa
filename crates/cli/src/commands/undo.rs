//! `elroy undo`: the last change elroy made to the markdown stores reverted (`elroy-history`),
//! refused when a file of it was edited by hand since.

use std::process::ExitCode;

use elroy_config::Config;

use crate::output;

/// `elroy undo`: reverts the last change elroy made; prints what it did.
pub(crate) fn run(config: &Config) -> Result<ExitCode, String> {
    let home = super::history::open(config)?;
    let now = config
        .now
        .unwrap_or_else(|| elroy_core::Clock::now(&elroy_core::SystemClock));
    let undone = home.undo(now).map_err(|e| e.to_string())?;
    output::println(&format!(
        "Undid {} ({}) as {}",
        undone.original.summary, undone.original.short_id, undone.commit.short_id
    ))?;
    for path in &undone.original.paths {
        let verb = if home.root().join(path).exists() {
            "restored"
        } else {
            "removed"
        };
        output::println(&format!("  {verb} {path}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
