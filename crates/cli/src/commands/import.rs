//! `elroy import SOURCE [PATH…]` (chat histories, the work is `elroy-import`'s `import_chats`;
//! `elroy import elroy DIR` is `elroy import-elroy`): parse the flags, draw the progress bar,
//! print the report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use elroy_config::Config;
use elroy_import::{ChatImportOptions, Granularity, Source};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
    /// Only Claude Code, Codex and Gemini CLI sessions run in DIR or a folder inside it
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Leave out conversations whose title matches (case-insensitive, * as wildcard; repeatable)
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Print what would be imported; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Also distil each conversation into one memory with the chat model, the way elroy forms
    /// its own (needs chat_model or a provider key)
    #[arg(long)]
    pub summarize: bool,
    /// How much of a conversation one memory holds
    #[arg(long, value_name = "UNIT", default_value = "span", value_parser = ["exchange", "span", "session"])]
    pub granularity: String,
    /// With `elroy import elroy`: Elroy's SQLite database [default: DIR/elroy.db when present]
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

pub(crate) fn run(config: Config, args: &ImportArgs) -> Result<ExitCode, String> {
    let Some(source) = Source::parse(&args.source) else {
        if args.summarize {
            return Err(
                "--summarize applies to chat histories (chatgpt, claude, claude-code, codex, gemini), not to an Elroy home".into(),
            );
        }
        let [dir] = args.paths.as_slice() else {
            return Err("elroy import elroy takes one folder: the Elroy home".into());
        };
        let elroy = super::import_elroy::ImportElroyArgs {
            dir: dir.clone(),
            db: args.db.clone(),
        };
        return super::import_elroy::run(config, &elroy);
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
    // The model first: without one, `--summarize` fails before anything is read.
    let mut summarizer = if args.summarize {
        Some(
            elroy_runtime::import::ModelSummarizer::new(&config).map_err(|e| match e {
                elroy_runtime::import::SummarizerError::Model(e) => {
                    format!("--summarize needs a chat model: {e}")
                }
                other => other.to_string(),
            })?,
        )
    } else {
        None
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
    let report = elroy_import::import_chats_with(
        &config,
        &options,
        summarizer
            .as_mut()
            .map(|s| s as &mut dyn elroy_import::Summarizer),
        &mut progress,
    );
    bar.finish_and_clear();
    let report = report.map_err(|e| e.to_string())?;
    // The import wrote without an embedder; the detached worker fills the new memories'
    // vectors now, in the background (nothing happens without an embedder).
    if !args.dry_run
        && report.memories + report.summaries > 0
        && let Ok(runtime) = elroy_runtime::Runtime::open(config)
    {
        runtime.start_embed_worker_for_pending();
    }
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
