//! `elroy plugins [trust PATH… | trust --all | untrust PATH…]`: the plugins elroy finds and whether
//! it may run them (`docs/tool-rules.md#plugin-trust`). Listing runs no plugin; trusting records
//! each plugin's path, target and SHA-256 in `$ELROY_HOME/plugins-trusted.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use elroy_config::Config;
use elroy_plugins::{TrustReport, TrustStore};

use crate::output;

/// `elroy plugins …`
#[derive(Debug, clap::Args)]
pub struct PluginsArgs {
    /// Without a subcommand: list every plugin (contrib/ of the home, contrib_tools_path,
    /// custom_tools_path) with its state: trusted, untrusted (new, or changed since trusted),
    /// and trusted entries that are missing; no plugin is run
    #[command(subcommand)]
    pub command: Option<PluginsCommand>,
    /// Print JSON instead of lines (the list)
    #[arg(long)]
    pub json: bool,
}

/// `elroy plugins` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum PluginsCommand {
    /// Trust plugins as they are now (path, what it resolves to, SHA-256 of its content): elroy
    /// runs them until they change. Read them first.
    #[command(
        after_help = "Examples:\n  elroy plugins                                 what is trusted, what is not\n  elroy plugins trust ~/.elroy/contrib/hello_tool\n  elroy plugins trust --all                     every plugin listed as untrusted"
    )]
    Trust {
        /// The plugins to trust (as `elroy plugins` lists them)
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        paths: Vec<PathBuf>,
        /// Trust every plugin `elroy plugins` lists as untrusted (new or changed)
        #[arg(long)]
        all: bool,
    },
    /// Stop trusting plugins: elroy no longer runs them
    Untrust {
        /// The plugins (a missing one too)
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

/// `elroy plugins …`.
pub(crate) fn run(config: &Config, args: &PluginsArgs) -> Result<ExitCode, String> {
    let report = elroy_plugins::config_trust_report(config);
    let store = TrustStore::new(&config.paths.elroy_home);
    match &args.command {
        None => list(&report, &store, args.json),
        Some(PluginsCommand::Trust { paths, all }) => {
            let now = config.now.unwrap_or_else(jiff::Timestamp::now);
            trust(&report, &store, paths, *all, &now.to_string())
        }
        Some(PluginsCommand::Untrust { paths }) => untrust(&store, paths),
    }
}

fn warn_report(report: &TrustReport) {
    for warning in &report.warnings {
        output::eprintln(&format!("warning: {warning}"));
    }
    if let Some(e) = &report.list_error {
        output::eprintln(&format!("warning: {e}; no plugin is run until it is"));
    }
}

/// One line per plugin, `{state}  {path}[  ({detail})]`, then one per stale entry
/// (`TrustReport::rows`); a hint on stderr when something is untrusted.
fn list(report: &TrustReport, store: &TrustStore, json: bool) -> Result<ExitCode, String> {
    warn_report(report);
    if json {
        let value = report.to_json(store);
        output::println(&serde_json::to_string_pretty(&value).unwrap_or_default())?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows = report.rows();
    if rows.is_empty() {
        output::println(
            "no plugins (none in contrib/ of the home or the configured plugin paths)",
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = rows.iter().map(|r| r.state.len()).max().unwrap_or(0);
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!("{:width$}  {}", row.state, row.path.display()));
        if let Some(detail) = row.detail {
            out.push_str(&format!("  ({detail})"));
        }
        out.push('\n');
    }
    output::print(&out)?;
    if report.untrusted().next().is_some() {
        output::eprintln(
            "untrusted plugins are never run; read one, then: elroy plugins trust PATH (--all \
             trusts every untrusted one)",
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Trusts the plugins named or, with `--all`, every untrusted one that can be read
/// (`TrustReport::choose`); prints each with its hash. Nothing is written when one named is not
/// a plugin.
fn trust(
    report: &TrustReport,
    store: &TrustStore,
    paths: &[PathBuf],
    all: bool,
    now: &str,
) -> Result<ExitCode, String> {
    warn_report(report);
    let chosen = report.choose(paths, all).map_err(|e| e.to_string())?;
    for (path, e) in &chosen.unreadable {
        output::eprintln(&format!(
            "warning: {} cannot be read ({e}); not trusted",
            path.display()
        ));
    }
    if all && chosen.plugins.is_empty() {
        output::println("no untrusted plugins")?;
        return Ok(ExitCode::SUCCESS);
    }
    let plugins: Vec<PathBuf> = chosen.plugins.iter().map(|(p, _)| p.clone()).collect();
    let entries = store.trust(&plugins, now).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (entry, (_, loaded)) in entries.iter().zip(&chosen.plugins) {
        out.push_str(&format!(
            "trusted {}  sha256:{}",
            entry.path.display(),
            entry.sha256
        ));
        if entry.target != entry.path {
            out.push_str(&format!("  (-> {})", entry.target.display()));
        }
        out.push('\n');
        if !loaded {
            out.push_str(&format!(
                "  note: {} is not in contrib/ of the home or a configured plugin path \
                 (contrib_tools_path, custom_tools_path); elroy loads it once it is\n",
                entry.path.display()
            ));
        }
    }
    output::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Removes the trust of each plugin named; nothing is written when one is not trusted.
fn untrust(store: &TrustStore, paths: &[PathBuf]) -> Result<ExitCode, String> {
    let removed = store.untrust(paths).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for entry in removed {
        out.push_str(&format!("no longer trusted: {}\n", entry.path.display()));
    }
    output::print(&out)?;
    Ok(ExitCode::SUCCESS)
}
