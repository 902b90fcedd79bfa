//! The agenda rows of the recall index (`recall_fts`, kind `agenda`), shared by the turn's recall
//! (the runtime's recall port) and `examine_memories`.

use elroy_agenda::{AgendaError, AgendaStore, RecallEntry};
use elroy_db::{Db, DbError};
use elroy_memory::recall;
use jiff::tz::TimeZone;

/// Brings the agenda rows of `recall_fts` for `user` up to date with the agenda store:
/// rebuilt from every live item only when the agenda's recall stamp (its version and the time
/// zone the renderings use) differs from the one they were built from, so an unchanged agenda
/// costs one directory stat and one `meta` read, not a stat per item.
///
/// Returns the entries it loaded when it rebuilt (callers use them instead of looking hits up),
/// `None` when the rows were current.
///
/// # Errors
/// [`RecallRowsError`]: the agenda store's or the database's error.
pub fn refresh_agenda_recall_rows(
    agenda: &AgendaStore,
    db: &Db,
    user: i64,
    tz: &TimeZone,
) -> Result<Option<Vec<RecallEntry>>, RecallRowsError> {
    let stamp = agenda.recall_stamp(tz)?;
    let built = db.with_conn(|c| recall::fts_source(c, user, "agenda"))?;
    if built.as_deref() == Some(stamp.as_str()) {
        return Ok(None);
    }
    let (entries, stamp) = agenda.recall_entries_with_stamp(tz)?;
    let items: Vec<recall::FtsItem> = entries
        .iter()
        .map(|e| recall::FtsItem {
            id: e.id,
            name: e.name.clone(),
            body: e.fact.clone(),
        })
        .collect();
    // The rows are a cache of the agenda: when they cannot be written (a read-only home, a full
    // disk) the search ranks with them as they stand, and every hit is built from its file.
    if let Err(e) =
        db.with_conn(|c| recall::replace_fts_items_from(c, user, "agenda", &stamp, &items))
        && db.read_only().is_none()
        && !elroy_db::is_cannot_write(&e)
    {
        return Err(e.into());
    }
    Ok(Some(entries))
}

/// Why [`refresh_agenda_recall_rows`] failed.
#[derive(Debug, thiserror::Error)]
pub enum RecallRowsError {
    /// The agenda store could not list its items.
    #[error(transparent)]
    Agenda(#[from] AgendaError),
    /// `state.db` could not be read or written.
    #[error(transparent)]
    Db(#[from] DbError),
}
