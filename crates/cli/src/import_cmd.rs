//! `elroy import SOURCE [PATH…]` (chat histories, the work is `elroy-import`'s `import_chats`)
//! and `elroy import-elroy DIR [--db FILE]` (an Elroy 0.5.0 home; also `elroy import elroy DIR`):
//! parse the flags, draw the progress bar, print the report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use elroy_config::Config;
use elroy_import::{ChatImportOptions, Granularity, Source};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `elroy import-elroy …`
#[derive(Debug, Args)]
pub struct ImportElroyArgs {
    /// The Elroy home to import (the folder with agenda/, feature-requests/, memories/)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Elroy's SQLite database, for agenda, due-item and memory names, active flags and user
    /// names [default: DIR/elroy.db when present]
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

/// `elroy import SOURCE [PATH…]`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// chatgpt, claude, claude-code, codex, gemini, or elroy (an Elroy home, as import-elroy)
    #[arg(value_name = "SOURCE", value_parser = ["chatgpt", "claude", "claude-code", "codex", "gemini", "elroy"])]
    pub source: String,
    /// Export files (conversations.json or the export's zip) or folders of session files
    /// [default: ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Only what was said on or after DATE (2024-03-05, or a time with its offset)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only Claude Code and Codex sessions run in DIR or a folder inside it
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Leave out conversations whose title matches (case-insensitive, * as wildcard; repeatable)
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Print what would be imported; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// How much of a conversation one memory holds
    #[arg(long, value_name = "UNIT", default_value = "span", value_parser = ["exchange", "span", "session"])]
    pub granularity: String,
    /// With `elroy import elroy`: Elroy's SQLite database [default: DIR/elroy.db when present]
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

pub(crate) fn run_import(config: Config, args: &ImportArgs) -> Result<ExitCode, String> {
    let Some(source) = Source::parse(&args.source) else {
        let [dir] = args.paths.as_slice() else {
            return Err("elroy import elroy takes one folder: the Elroy home".into());
        };
        let elroy = ImportElroyArgs {
            dir: dir.clone(),
            db: args.db.clone(),
        };
        return run(config, &elroy);
    };
    let since = match &args.since {
        Some(text) => Some(parse_since(text, &config.timezone)?),
        None => None,
    };
    let options = ChatImportOptions {
        source,
        paths: args.paths.clone(),
        user_home: std::env::var_os("HOME").map(PathBuf::from),
        since,
        project: args
            .project
            .as_ref()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone())),
        exclude: args.exclude.clone(),
        dry_run: args.dry_run,
        granularity: match args.granularity.as_str() {
            "exchange" => Granularity::Exchange,
            "session" => Granularity::Session,
            _ => Granularity::Span,
        },
    };
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {bytes_per_sec} {msg}")
            .map_err(|e| e.to_string())?,
    );
    let mut progress = |p: &elroy_import::Progress| {
        bar.set_length(p.total_bytes);
        bar.set_position(p.bytes);
        bar.set_message(format!(
            "{} conversations, {} memories",
            p.conversations, p.memories
        ));
    };
    let report = elroy_import::import_chats(&config, &options, &mut progress);
    bar.finish_and_clear();
    let report = report.map_err(|e| e.to_string())?;
    crate::output::print(&report.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// `--since`: a date (the start of that day in the configured zone) or a time with an offset.
fn parse_since(text: &str, tz: &jiff::tz::TimeZone) -> Result<jiff::Timestamp, String> {
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return Ok(ts);
    }
    let invalid =
        |e: jiff::Error| format!("--since {text}: not a date (2024-03-05) or a time ({e})");
    if let Ok(dt) = text.parse::<jiff::civil::DateTime>() {
        return tz.to_timestamp(dt).map_err(invalid);
    }
    let date: jiff::civil::Date = text.parse().map_err(invalid)?;
    tz.to_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
        .map_err(invalid)
}
