//! `elroy import … --summarize`: besides the spans, each conversation's new exchanges are
//! distilled into one memory by the chat model, the way elroy forms its own memories
//! (`docs/behaviour.md#automatic-memory-creation`; the caller's [`Summarizer`] runs elroy's own
//! formation, `elroy_orchestrator::form_memory`, so this crate needs no model client).
//!
//! The summary memory is named by the model, headed by the conversation's source line
//! (`Summarised from ChatGPT: conversation "…", 2024-03-05 14:00 (file)`), dated when the
//! summarised words were first said, and keeps the hash of `summary:{first new exchange}` among its
//! sources, so a re-import summarises nothing again and a grown conversation gets a summary of
//! its new part only.

use elroy_memory::MemorySource;

use crate::chats::IMPORT_SOURCE_TYPE;
use crate::chunk::{self, Exchange};
use crate::convo::Conversation;

/// The most characters of a conversation a summary request carries (its first ones); about
/// 12,000 tokens, within every chat model's context.
pub const SUMMARY_INPUT_CHARS: usize = 48_000;

/// After this many failed summary requests in one import the rest of the conversations are
/// imported without summaries (a model that is down or refuses the key would fail them all).
const MAX_FAILURES: usize = 3;

/// Distils a conversation into one memory; the CLI implements it with the configured chat model.
pub trait Summarizer {
    /// The memory's title and text formed from `conversation` (the rendered exchanges, headed by
    /// their source line), or `None` when the model answered nothing usable.
    ///
    /// # Errors
    /// The model call's failure ([`SummarizeError`] keeps it as its source).
    fn summarize(&mut self, conversation: &str)
    -> Result<Option<(String, String)>, SummarizeError>;
}

/// Why a [`Summarizer`] formed no summary: the model call's error, whatever the model client's
/// error type is (`Display` is that error's).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct SummarizeError(#[from] pub Box<dyn std::error::Error + Send + Sync + 'static>);

/// A conversation whose summary request failed: a note for the import report, `{file}
/// ("{title}"): no summary: {error}`, with `; 3 summaries failed, the rest of the import has
/// none` after the failure that gives summaries up.
#[derive(Debug, thiserror::Error)]
#[error("{file} (\"{title}\"): no summary: {source}{}", given_up_note(*.gave_up))]
pub(crate) struct SummaryFailed {
    file: String,
    title: String,
    #[source]
    source: SummarizeError,
    gave_up: bool,
}

/// What follows the note of the failure that gives summaries up.
fn given_up_note(gave_up: bool) -> String {
    if gave_up {
        format!("; {MAX_FAILURES} summaries failed, the rest of the import has none")
    } else {
        String::new()
    }
}

/// One summary to write: its title, text, date and source.
pub(crate) struct Summary {
    pub title: String,
    pub text: String,
    pub at: Option<jiff::Timestamp>,
    pub source: MemorySource,
}

/// The summaries of one import: the summarizer and how many of its requests failed.
pub(crate) struct Summaries<'a> {
    summarizer: &'a mut dyn Summarizer,
    failures: usize,
}

impl<'a> Summaries<'a> {
    pub fn new(summarizer: &'a mut dyn Summarizer) -> Self {
        Summaries {
            summarizer,
            failures: 0,
        }
    }

    /// The key hash of the summary of `runs` (the new exchanges of a conversation).
    pub fn key(runs: &[Vec<Exchange<'_>>]) -> Option<i64> {
        let first = runs.first()?.first()?;
        Some(chunk::key_hash(&format!("summary:{}", first.key)))
    }

    /// Asks for the summary of `runs` of `conv`. `Ok(None)` when the model gave nothing or
    /// summaries were given up after [`MAX_FAILURES`]; `Err` names a failed request (a note for
    /// the report).
    pub fn summarize(
        &mut self,
        tool: &str,
        conv: &Conversation,
        runs: &[Vec<Exchange<'_>>],
        tz: &jiff::tz::TimeZone,
    ) -> Result<Option<Summary>, SummaryFailed> {
        if self.failures >= MAX_FAILURES {
            return Ok(None);
        }
        let Some(key) = Self::key(runs) else {
            return Ok(None);
        };
        let mut input = String::new();
        for run in runs {
            if !input.is_empty() {
                input.push_str("\n\n");
            }
            input.push_str(&chunk::render(tool, conv, run, tz).text);
        }
        if let Some((cut, _)) = input.char_indices().nth(SUMMARY_INPUT_CHARS) {
            input.truncate(cut);
        }
        let title = conv.display_title();
        let formed = match self.summarizer.summarize(&input) {
            Ok(formed) => formed,
            Err(source) => {
                self.failures += 1;
                return Err(SummaryFailed {
                    file: conv.file.display().to_string(),
                    title: title.to_string(),
                    source,
                    gave_up: self.failures == MAX_FAILURES,
                });
            }
        };
        let Some((name, text)) = formed else {
            return Ok(None);
        };
        let at = runs
            .iter()
            .flatten()
            .find_map(Exchange::at)
            .or(conv.started);
        let head = chunk::source_line(&format!("Summarised from {tool}"), conv, at, tz);
        Ok(Some(Summary {
            title: name,
            text: format!("{head}\n\n{text}"),
            at,
            source: MemorySource {
                source_type: IMPORT_SOURCE_TYPE.into(),
                id: key,
            },
        }))
    }
}
