//! `elroy import SOURCE [PATH…]`: chat histories as recallable memories (`docs/import.md`).
//!
//! Each source's reader turns its files into [`Conversation`]s (active branch only, what was
//! said only) and hands them to a [`Sink`]; the sink filters them (`--since`, `--project`,
//! `--exclude`), cuts them into exchanges and spans (`crate::chunk`), drops the exchanges an
//! earlier import already wrote, and writes the rest through the memory store, each memory dated
//! when its words were said. The whole import is one commit of the versioned home.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use elroy_config::{Config, DatabaseLocation};
use elroy_db::Db;
use elroy_memory::{MemorySource, MemoryStore, MemoryStoreOptions};
use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::ImportError;
use crate::chunk::{self, Granularity};
use crate::convo::{Conversation, Problem};
use crate::summary::{Summaries, Summarizer};

/// The `source_type` of the memory sources that keep the hashes of the exchanges a memory holds
/// (`docs/import.md#safe-to-run-twice`); no tool resolves it.
pub const IMPORT_SOURCE_TYPE: &str = "Import";

/// The summary prefix of the versioned-home commit of a chat import:
/// `import chatgpt: {n} memories from {paths}`.
pub const CHAT_COMMIT_PREFIX: &str = "import ";

/// A chat source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// ChatGPT's data export (`conversations.json` or the export's zip).
    ChatGpt,
    /// Claude.ai's data export (`conversations.json` or the export's zip).
    Claude,
    /// Claude Code's session logs (`~/.claude/projects/*/*.jsonl`).
    ClaudeCode,
    /// Codex's session logs (`~/.codex/sessions/**/rollout-*.jsonl`).
    Codex,
    /// Gemini CLI's session files (`~/.gemini/tmp/*/chats/session-*.json[l]`).
    Gemini,
}

impl Source {
    /// Every source, as `elroy import` names them.
    pub const ALL: [Source; 5] = [
        Source::ChatGpt,
        Source::Claude,
        Source::ClaudeCode,
        Source::Codex,
        Source::Gemini,
    ];

    /// The command-line name (`claude-code`); also the first part of every exchange key.
    pub fn id(self) -> &'static str {
        match self {
            Source::ChatGpt => "chatgpt",
            Source::Claude => "claude",
            Source::ClaudeCode => "claude-code",
            Source::Codex => "codex",
            Source::Gemini => "gemini",
        }
    }

    /// The name people know it by (`Claude Code`), in memory headers.
    pub fn label(self) -> &'static str {
        match self {
            Source::ChatGpt => "ChatGPT",
            Source::Claude => "Claude",
            Source::ClaudeCode => "Claude Code",
            Source::Codex => "Codex",
            Source::Gemini => "Gemini CLI",
        }
    }

    /// The source named `id`.
    pub fn parse(id: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Where the source keeps its files when no path is given (`None`: an export has no default
    /// place; the path is required).
    pub fn default_path(self, user_home: &Path) -> Option<PathBuf> {
        match self {
            Source::ChatGpt | Source::Claude => None,
            Source::ClaudeCode => Some(user_home.join(".claude/projects")),
            Source::Codex => Some(user_home.join(".codex/sessions")),
            Source::Gemini => Some(user_home.join(".gemini/tmp")),
        }
    }
}

/// What to import and how.
#[derive(Debug, Clone)]
pub struct ChatImportOptions {
    /// The source.
    pub source: Source,
    /// Files or folders; empty means the source's default folder under `user_home`.
    pub paths: Vec<PathBuf>,
    /// The person's home directory (for default folders).
    pub user_home: Option<PathBuf>,
    /// Only what was said at or after this time.
    pub since: Option<Timestamp>,
    /// Only agent sessions whose working directory is this folder or inside it (an older Gemini
    /// CLI session, whose folder is the hash of its project's path: this folder itself).
    pub project: Option<PathBuf>,
    /// Conversations whose title matches any of these are left out (case-insensitive; `*`
    /// matches any run of characters; without `*` a pattern matches anywhere in the title).
    pub exclude: Vec<String>,
    /// Report what would be imported; write nothing.
    pub dry_run: bool,
    /// How much of a conversation one memory holds.
    pub granularity: Granularity,
}

/// Progress of a running import, for a progress bar.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Bytes read of all the input files.
    pub bytes: u64,
    /// Their total size.
    pub total_bytes: u64,
    /// Conversations read.
    pub conversations: usize,
    /// Memories written (or, with `--dry-run`, that would be).
    pub memories: usize,
}

/// What a chat import did.
#[derive(Debug, Clone, Default)]
pub struct ChatImportReport {
    /// The source's name (`ChatGPT`).
    pub source: String,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Conversations read whole.
    pub conversations: usize,
    /// Conversations that gave at least one memory.
    pub imported_conversations: usize,
    /// Memories written (would be, with `--dry-run`), summaries not counted.
    pub memories: usize,
    /// Summary memories written by the chat model (`--summarize`; with `--dry-run`, the
    /// conversations that would be summarised).
    pub summaries: usize,
    /// Exchanges written.
    pub exchanges: usize,
    /// Exchanges an earlier import already wrote (or met twice in this one).
    pub known_exchanges: usize,
    /// Conversations left out by `--exclude`, `--project` or `--since`, or with nothing said.
    pub filtered: usize,
    /// Names of the memories written, in order (the first 20 are printed).
    pub names: Vec<String>,
    /// Conversations or files skipped, with file, line and reason.
    pub problems: Vec<Problem>,
    /// Bytes read.
    pub bytes: u64,
    /// Wall time of the import.
    pub elapsed: Duration,
    /// Remarks (the versioned home could not commit, a default folder is missing).
    pub notes: Vec<String>,
}

/// Where a reader puts what it read.
pub(crate) struct Sink<'a> {
    source: Source,
    options: &'a ChatImportOptions,
    store: Option<MemoryStore>,
    tz: TimeZone,
    /// The import's clock (`ELROY_NOW` or now): the date of words whose time no source records.
    now: Timestamp,
    known: HashSet<i64>,
    summaries: Option<Summaries<'a>>,
    pub(crate) report: ChatImportReport,
    progress: Progress,
    done_bytes: u64,
    on_progress: &'a mut dyn FnMut(&Progress),
    last_tick: Instant,
}

impl Sink<'_> {
    /// A conversation or a file was skipped.
    pub fn problem(&mut self, problem: Problem) {
        self.report.problems.push(problem);
    }

    /// `bytes` of the current file have been read.
    pub fn bytes(&mut self, bytes: u64) {
        self.progress.bytes = self.done_bytes + bytes;
        if self.last_tick.elapsed() >= Duration::from_millis(100) {
            self.last_tick = Instant::now();
            (self.on_progress)(&self.progress);
        }
    }

    /// The current file is read whole (`size` bytes).
    pub fn file_done(&mut self, size: u64) {
        self.done_bytes += size;
        self.progress.bytes = self.done_bytes;
        (self.on_progress)(&self.progress);
    }

    /// A conversation read whole.
    ///
    /// # Errors
    /// [`ImportError`] when a memory cannot be written.
    pub fn conversation(&mut self, conv: Conversation) -> Result<(), ImportError> {
        self.report.conversations += 1;
        self.progress.conversations += 1;
        let title = conv.display_title();
        let excluded = self.options.exclude.iter().any(|p| matches(p, &title));
        let outside = match (&self.options.project, &conv.project) {
            (None, _) => false,
            (Some(want), Some(project)) => !project.within(want),
            (Some(_), None) => true,
        };
        if excluded || outside {
            self.report.filtered += 1;
            return Ok(());
        }
        let exchanges = chunk::exchanges(self.source.id(), &conv);
        let since = self.options.since;
        let mut new = Vec::new();
        let mut runs: Vec<Vec<chunk::Exchange<'_>>> = Vec::new();
        let mut any_known = false;
        for ex in exchanges {
            let old = since.is_some_and(|s| ex.at().or(conv.started).is_none_or(|t| t < s));
            if old {
                continue;
            }
            if self.known.contains(&ex.key) {
                self.report.known_exchanges += 1;
                any_known = true;
                if !new.is_empty() {
                    runs.push(std::mem::take(&mut new));
                }
                continue;
            }
            new.push(ex);
        }
        if !new.is_empty() {
            runs.push(new);
        }
        if runs.is_empty() {
            if !any_known {
                self.report.filtered += 1;
            }
            return Ok(());
        }
        self.report.imported_conversations += 1;
        let label = self.source.label();
        for run in &runs {
            for span in chunk::spans(run, self.options.granularity) {
                let rendered = chunk::render(label, &conv, span, &self.tz);
                let sources: Vec<MemorySource> = span
                    .iter()
                    .map(|ex| MemorySource {
                        source_type: IMPORT_SOURCE_TYPE.into(),
                        id: ex.key,
                    })
                    .collect();
                if let Some(store) = &self.store {
                    let at = rendered.at.unwrap_or(self.now);
                    store.create(&rendered.name, &rendered.text, &sources, at)?;
                }
                self.known.extend(span.iter().map(|ex| ex.key));
                self.report.exchanges += span.len();
                self.report.memories += 1;
                self.progress.memories += 1;
                self.report.names.push(rendered.name);
            }
        }
        if let Some(summaries) = &mut self.summaries {
            if self.store.is_none() {
                self.report.summaries += 1;
                return Ok(());
            }
            match summaries.summarize(label, &conv, &runs, &self.tz) {
                Ok(Some(summary)) => {
                    if let Some(store) = &self.store {
                        let at = summary.at.unwrap_or(self.now);
                        store.create(
                            &summary.title,
                            &summary.text,
                            std::slice::from_ref(&summary.source),
                            at,
                        )?;
                    }
                    self.known.insert(summary.source.id);
                    self.report.summaries += 1;
                    self.progress.memories += 1;
                    self.report.names.push(summary.title);
                }
                Ok(None) => {}
                Err(failed) => self.report.notes.push(failed.to_string()),
            }
        }
        Ok(())
    }
}

/// Whether `title` matches `pattern` (case-insensitive; `*` any run of characters; a pattern
/// without `*` matches anywhere).
fn matches(pattern: &str, title: &str) -> bool {
    let title = title.to_lowercase();
    let pattern = pattern.to_lowercase();
    if !pattern.contains('*') {
        return title.contains(&pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = title.as_str();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// The exchange hashes kept by memories whose file is still there (a memory removed by `elroy
/// undo` or by hand frees its exchanges for a new import; an archived one keeps them).
fn known_keys(store: &MemoryStore) -> Result<HashSet<i64>, ImportError> {
    let rows: Vec<String> = store
        .db()
        .with_conn(|c| {
            let mut st = c.prepare(
                "SELECT source_metadata FROM memories
                 WHERE user_id = ?1 AND file_size IS NOT NULL AND source_metadata LIKE '%\"Import\"%'",
            )?;
            st.query_map([store.user_id()], |r| r.get(0))?.collect()
        })
        ?;
    Ok(rows
        .iter()
        .flat_map(|json| elroy_memory::sources_from_json(json))
        .filter(|s| s.source_type == IMPORT_SOURCE_TYPE)
        .map(|s| s.id)
        .collect())
}

/// Imports the chats of `options` into the memories of `config`'s user; `on_progress` is called
/// about ten times a second and after each file.
///
/// # Errors
/// [`ImportError`] when no input exists, `--project` is given for a source without folders, the
/// elroy home cannot be opened, or a memory cannot be written (memories written before stay and count as imported next time).
pub fn import_chats(
    config: &Config,
    options: &ChatImportOptions,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<ChatImportReport, ImportError> {
    import_chats_with(config, options, None, on_progress)
}

/// [`import_chats`], with `summarizer` (`--summarize`) distilling each conversation's new
/// exchanges into one more memory ([`crate::summary`]); with `--dry-run` it is not called.
///
/// # Errors
/// As [`import_chats`]. A failed summary is a note of the report, not an error.
pub fn import_chats_with<'a>(
    config: &Config,
    options: &'a ChatImportOptions,
    summarizer: Option<&'a mut dyn Summarizer>,
    on_progress: &'a mut dyn FnMut(&Progress),
) -> Result<ChatImportReport, ImportError> {
    let started = Instant::now();
    let now = config.now.unwrap_or_else(Timestamp::now);
    let source = options.source;
    if options.project.is_some()
        && !matches!(source, Source::ClaudeCode | Source::Codex | Source::Gemini)
    {
        return Err(ImportError::ProjectNotApplicable(source.label()));
    }
    let inputs: Vec<PathBuf> = if options.paths.is_empty() {
        let home = options.user_home.as_deref();
        match home.and_then(|h| source.default_path(h)) {
            Some(dir) if dir.exists() => vec![dir],
            Some(dir) => {
                return Err(ImportError::NoFiles {
                    label: source.label(),
                    dir,
                });
            }
            None => {
                return Err(ImportError::NoPath(source.label()));
            }
        }
    } else {
        options.paths.clone()
    };
    for path in &inputs {
        if !path.exists() {
            return Err(ImportError::Missing(path.clone()));
        }
    }
    let paths = &config.paths;
    let versioned = if config.settings.versioned_home && !options.dry_run {
        Some(elroy_history::VersionedHome::start(&paths.elroy_home, now))
    } else {
        None
    };
    let db = Arc::new(match &paths.database {
        DatabaseLocation::File(path) => Db::open(path)?,
        DatabaseLocation::Memory => Db::open_in_memory()?,
    });
    let user_id = db.ensure_user(config.settings.user_token.as_str(), now)?;
    let memory_options = MemoryStoreOptions {
        elroy_home: paths.elroy_home.clone(),
        memory_dir: paths.memory_dir.clone(),
        elroy_db_path: (config.settings.user_token == "DEFAULT")
            .then(|| paths.elroy_db_path.clone()),
        user_id,
        // Vectors are filled afterwards, as for any memory written without one
        // (`docs/behaviour.md#embeddings`): the import never waits for the embedder.
        embedder: None,
        cosine_threshold: 0.3,
    };
    let (store, _) = MemoryStore::open(db, memory_options, now)?;
    let known = known_keys(&store)?;
    let files = crate::files::list(source, &inputs);
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let mut sink = Sink {
        source,
        options,
        store: (!options.dry_run).then_some(store),
        tz: config.timezone.clone(),
        now,
        known,
        summaries: summarizer.map(Summaries::new),
        report: ChatImportReport {
            source: source.label().to_owned(),
            dry_run: options.dry_run,
            ..ChatImportReport::default()
        },
        progress: Progress {
            total_bytes: total,
            ..Progress::default()
        },
        done_bytes: 0,
        on_progress,
        last_tick: Instant::now(),
    };
    for file in &files {
        crate::files::read(source, file, &mut sink)?;
    }
    let mut report = sink.report;
    report.bytes = sink.progress.bytes.max(total);
    match versioned {
        Some(Ok(home)) if report.memories + report.summaries > 0 => {
            let from = inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let (id, n) = (source.id(), report.memories + report.summaries);
            let message = |paths: &[String]| {
                format!(
                    "{CHAT_COMMIT_PREFIX}{id}: {n} memories from {from}\n\n{}",
                    paths.join("\n")
                )
            };
            if let Err(e) = home.commit_changes(now, &message) {
                report
                    .notes
                    .push(format!("versioned home: {e}; the import is not committed"));
            }
        }
        Some(Err(e)) => report
            .notes
            .push(format!("versioned home: {e}; the import is not committed")),
        _ => {}
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

impl std::fmt::Display for ChatImportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = if self.dry_run {
            "would import"
        } else {
            "imported"
        };
        writeln!(
            f,
            "{}: {verb} {} memories ({} exchanges) from {} of {} conversations",
            self.source,
            self.memories,
            self.exchanges,
            self.imported_conversations,
            self.conversations
        )?;
        if self.summaries > 0 {
            let verb = if self.dry_run {
                "would summarise"
            } else {
                "summarised"
            };
            writeln!(
                f,
                "{verb} {} conversations with the chat model (one memory each)",
                self.summaries
            )?;
        }
        if self.known_exchanges > 0 {
            writeln!(f, "already imported: {} exchanges", self.known_exchanges)?;
        }
        if self.filtered > 0 {
            writeln!(
                f,
                "left out: {} conversations (--since, --project, --exclude, or nothing said)",
                self.filtered
            )?;
        }
        let shown = if self.dry_run { 50 } else { 20 };
        for name in self.names.iter().take(shown) {
            writeln!(f, "  + {name}")?;
        }
        if self.names.len() > shown {
            writeln!(f, "  … and {} more", self.names.len() - shown)?;
        }
        for p in &self.problems {
            writeln!(f, "skipped: {p}")?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        let secs = self.elapsed.as_secs_f64();
        #[allow(clippy::cast_precision_loss)]
        let mb = self.bytes as f64 / 1_000_000.0;
        write!(f, "read {mb:.1} MB in {secs:.1} s")?;
        if secs > 0.0 {
            write!(f, " ({:.1} MB/s)", mb / secs)?;
        }
        writeln!(f)
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn exclude_patterns() {
        assert!(matches("work", "Quarterly WORK plan"));
        assert!(matches("q*plan", "Quarterly work plan"));
        assert!(matches("*plan", "Quarterly work plan"));
        assert!(!matches("q*plan", "A quarterly work plan"));
        assert!(!matches("holiday", "Quarterly work plan"));
    }
}
