//! One row of the index as loaded from `state.db`, and the words its columns hold.

use std::sync::Arc;

use elroy_db::parse_db_time;
use jiff::Timestamp;

use super::*;

/// One row as a query returns it.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) id: i64,
    pub(super) created_at: Timestamp,
    /// `None`: read the file at the next query that returns the row (new, renamed, written by
    /// elroy, racy or never read).
    pub(super) stamp: Option<FileStamp>,
    pub(super) entry: Arc<Entry>,
}

/// The columns of one row as loaded.
pub(super) struct Loaded {
    pub(super) id: i64,
    pub(super) stem: String,
    pub(super) created_at: String,
    pub(super) stamp: [Option<i64>; 4],
    pub(super) name_key: Option<String>,
    pub(super) raw_status: Option<String>,
    pub(super) completed: Option<bool>,
    pub(super) item_date: Option<String>,
    pub(super) trigger_raw: Option<String>,
    pub(super) trigger_datetime: Option<String>,
    pub(super) trigger_context: Option<String>,
    pub(super) checklist: (Option<i64>, Option<i64>),
    pub(super) body: Option<String>,
    pub(super) broken: Option<String>,
    pub(super) recurrence: Option<String>,
}

impl Loaded {
    pub(super) fn into_row(self, prefix: &str) -> (String, Row) {
        let file_name = file_name_of(&self.stem);
        let stamp = match self.stamp {
            [Some(size), Some(mtime_ns), Some(ino), Some(ctime_ns)] => Some(FileStamp {
                size,
                mtime_ns,
                ino,
                ctime_ns,
            }),
            _ => None,
        };
        let entry = if let Some(message) = self.broken {
            Some(Entry::Broken {
                file: format!("{prefix}{file_name}"),
                stem: self.stem.clone(),
                message,
            })
        } else if let (Some(status), Some(completed)) = (self.raw_status, self.completed) {
            Some(Entry::Item(Box::new(
                ItemView {
                    stem: self.stem.clone(),
                    name_key: self.name_key,
                    completed,
                    status: Status::from_word(&status),
                    date: self.item_date.and_then(|d| d.parse().ok()),
                    trigger_raw: self.trigger_raw,
                    trigger_datetime: self.trigger_datetime.as_deref().and_then(parse_db_time),
                    trigger_context: self.trigger_context,
                    checklist_completed: usize::try_from(self.checklist.0.unwrap_or(0))
                        .unwrap_or(0),
                    checklist_total: usize::try_from(self.checklist.1.unwrap_or(0)).unwrap_or(0),
                    text: self.body.unwrap_or_default(),
                    recurrence: self.recurrence,
                    stem_lower: String::new(),
                    name_lower: String::new(),
                }
                .with_names(),
            )))
        } else {
            None
        };
        let row = Row {
            id: self.id,
            created_at: parse_db_time(&self.created_at).unwrap_or(Timestamp::UNIX_EPOCH),
            // A row without its data is read again.
            stamp: stamp.filter(|_| entry.is_some()),
            entry: entry.map_or_else(|| unread(&self.stem), Arc::new),
        };
        (file_name, row)
    }
}

/// The detail columns of a parsed item: `(name, kind, status)` of `docs/formats.md#agenda-index`
/// and the view's columns.
pub(super) fn kind_word(view: &ItemView) -> &'static str {
    match view.kind() {
        Kind::Agenda => "agenda",
        Kind::Due => "due",
    }
}

pub(super) fn status_word(view: &ItemView) -> &'static str {
    // The table knows created/completed/deleted; a file that exists is never 'deleted'.
    if view.is_active() {
        "created"
    } else {
        "completed"
    }
}

pub(super) const LOAD_COLUMNS: &str = "SELECT id, stem, created_at, file_size, file_mtime_ns, file_ino, \
     file_ctime_ns, name_key, raw_status, completed, item_date, trigger_raw, trigger_datetime, \
     trigger_context, checklist_done, checklist_total, body, broken, recurrence FROM agenda_items \
     WHERE user_id = ?1 AND status <> 'deleted' AND ";
