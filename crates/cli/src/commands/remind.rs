//! `elroy remind [--watch]`: the flag; the announcing, once or watching, and the notifier are
//! `elroy_runtime::remind`'s.

use std::process::ExitCode;

use elroy_config::Config;

/// `elroy remind …`
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Announces each timed due item once, when its time has passed: a line on stdout, a bell on a
terminal, and notify_command when configured (e.g. `notify_command: notify-send`).

Examples:
  elroy remind                       once (e.g. from cron: * * * * * elroy remind)
  elroy remind --watch               keep running; announce each item when it comes due")]
pub struct RemindArgs {
    /// Keep running and announce each item when it comes due (until SIGINT or SIGTERM)
    #[arg(long)]
    pub watch: bool,
}

pub(crate) fn run(config: Config, args: &RemindArgs) -> Result<ExitCode, String> {
    elroy_runtime::remind::run(config, args.watch).map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}
