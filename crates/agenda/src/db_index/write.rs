//! Writing the index: the rows of files read, and of what elroy did to the files (created,
//! written, renamed, removed).

use elroy_db::format_db_time;
use elroy_db::rusqlite::params;
use jiff::Timestamp;

use super::*;

impl DbIndex {
    /// Writes read files and vanished files in one transaction. `known` gives the id of files
    /// that have a row; the others get new ids (after the largest ever given: ids are never
    /// reused).
    pub(super) fn write_changes(
        &self,
        known: &Known,
        parsed: &[Parsed],
        gone: &[String],
    ) -> Result<(), IndexError> {
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        let wall = wall_clock_ns();
        self.db
            .with_conn(|c| {
                let tx = c.transaction()?;
                let mut next_id: i64 = tx.query_row(
                    "SELECT COALESCE(MAX(id), 0) FROM agenda_items WHERE user_id = ?1",
                    [user],
                    |r| r.get(0),
                )?;
                for file_name in gone {
                    let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
                    tx.execute(
                        "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                         WHERE user_id = ?1 AND stem = ?2 AND status <> 'deleted'",
                        params![user, stem, now],
                    )?;
                }
                for p in parsed {
                    let stem = p.name.strip_suffix(".md").unwrap_or(&p.name);
                    let updated = format_db_time(timestamp_of_ns(p.stamp.mtime_ns));
                    let id = match known.get(&p.name) {
                        Some(id) => *id,
                        None => {
                            next_id += 1;
                            tx.execute(
                                "INSERT INTO agenda_items (user_id, id, stem, name, kind, status, \
                                 text_md5, created_at, updated_at) \
                                 VALUES (?1, ?2, ?3, ?3, 'agenda', 'created', ?4, ?5, ?5)",
                                params![user, next_id, stem, p.text_md5, updated],
                            )?;
                            next_id
                        }
                    };
                    write_row(&tx, user, id, p, wall)?;
                }
                if !parsed.is_empty() || !gone.is_empty() {
                    bump_version(&tx, user)?;
                }
                tx.commit()
            })
            .map_err(IndexError::from)
    }

    pub(super) fn mark_deleted(&self, stem: &str) -> Result<(), IndexError> {
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                let tx = c.transaction()?;
                tx.execute(
                    "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                     WHERE user_id = ?1 AND stem = ?2 AND status <> 'deleted'",
                    params![user, stem, now],
                )?;
                bump_version(&tx, user)?;
                tx.commit()
            })
            .map_err(IndexError::from)?;
        self.seen().by_stem.remove(stem);
        Ok(())
    }

    /// Records a file elroy just created: a new id, `created_at` = `at`; the next query reads it.
    pub(crate) fn created(&self, stem: &str, at: Timestamp) -> Result<IndexEntry, IndexError> {
        let user = self.user_id;
        let when = format_db_time(at);
        let now = format_db_time(self.clock.now());
        let id = self
            .db
            .with_conn(|c| {
                let tx = c.transaction()?;
                tx.execute(
                    "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                     WHERE user_id = ?1 AND stem = ?2 AND status <> 'deleted'",
                    params![user, stem, now],
                )?;
                let id: i64 = tx.query_row(
                    "SELECT COALESCE(MAX(id), 0) + 1 FROM agenda_items WHERE user_id = ?1",
                    [user],
                    |r| r.get(0),
                )?;
                tx.execute(
                    "INSERT INTO agenda_items (user_id, id, stem, name, kind, status, text_md5, \
                     created_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?3, 'agenda', 'created', ?4, ?5, ?5)",
                    params![user, id, stem, md5_hex(""), when],
                )?;
                bump_version(&tx, user)?;
                tx.commit()?;
                Ok(id)
            })
            .map_err(IndexError::from)?;
        let entry = IndexEntry { id, created_at: at };
        self.seen().by_stem.insert(stem.to_owned(), entry);
        Ok(entry)
    }

    /// Records that elroy rewrote the file of `stem`: its row is read again by the next query
    /// that could want it (whatever the query filters on).
    pub(crate) fn written(&self, stem: &str) -> Result<(), IndexError> {
        let user = self.user_id;
        self.db
            .with_conn(|c| {
                let tx = c.transaction()?;
                tx.execute(
                    "UPDATE agenda_items SET file_size = NULL, file_mtime_ns = NULL \
                     WHERE user_id = ?1 AND stem = ?2 AND status <> 'deleted'",
                    params![user, stem],
                )?;
                bump_version(&tx, user)?;
                tx.commit()
            })
            .map_err(IndexError::from)?;
        Ok(())
    }

    /// Records a move by elroy (`rename_due_item`): the id and `created_at` stay with the file;
    /// the next query reads it.
    pub(crate) fn renamed(&self, old_stem: &str, new_stem: &str) -> Result<(), IndexError> {
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                let tx = c.transaction()?;
                tx.execute(
                    "UPDATE agenda_items SET stem = ?3, file_size = NULL, file_mtime_ns = NULL, \
                     updated_at = ?4 WHERE user_id = ?1 AND stem = ?2 AND status <> 'deleted'",
                    params![user, old_stem, new_stem, now],
                )?;
                bump_version(&tx, user)?;
                tx.commit()
            })
            .map_err(IndexError::from)?;
        let mut seen = self.seen();
        if let Some(entry) = seen.by_stem.remove(old_stem) {
            seen.by_stem.insert(new_stem.to_owned(), entry);
        }
        Ok(())
    }

    /// Records a removal by elroy (`delete_agenda_item`, `delete_due_item`).
    pub(crate) fn removed(&self, stem: &str) -> Result<(), IndexError> {
        self.mark_deleted(stem)
    }
}

/// Writes what the read file `p` says into its row `id`, with its stat signature unless it is
/// racy (`wall`: now, in ns). A file that does not parse keeps its previous data
/// (`docs/formats.md#agenda-index`).
fn write_row(
    tx: &rusqlite::Connection,
    user: i64,
    id: i64,
    p: &Parsed,
    wall: i64,
) -> rusqlite::Result<()> {
    let stored = (!p.stamp.is_racy(wall)).then_some(p.stamp);
    let stamp_cols = (
        stored.map(|s| s.size),
        stored.map(|s| s.mtime_ns),
        stored.map(|s| s.ino),
        stored.map(|s| s.ctime_ns),
    );
    let updated = format_db_time(timestamp_of_ns(p.stamp.mtime_ns));
    match &p.entry {
        Entry::Broken { message, .. } => {
            // A file that does not parse keeps its previous data
            // (`docs/formats.md#agenda-index`).
            tx.execute(
                "UPDATE agenda_items SET broken = ?3, file_size = ?4, \
                 file_mtime_ns = ?5, file_ino = ?6, file_ctime_ns = ?7, \
                 updated_at = ?8 WHERE user_id = ?1 AND id = ?2",
                params![
                    user,
                    id,
                    message,
                    stamp_cols.0,
                    stamp_cols.1,
                    stamp_cols.2,
                    stamp_cols.3,
                    updated
                ],
            )?;
        }
        Entry::Item(view) => {
            tx.execute(
                "UPDATE agenda_items SET name = ?3, kind = ?4, status = ?5, \
                 item_date = ?6, trigger_datetime = ?7, trigger_context = ?8, \
                 text_md5 = ?9, file_size = ?10, file_mtime_ns = ?11, \
                 file_ino = ?12, file_ctime_ns = ?13, name_key = ?14, \
                 raw_status = ?15, completed = ?16, trigger_raw = ?17, \
                 checklist_done = ?18, checklist_total = ?19, body = ?20, \
                 broken = NULL, updated_at = ?21, recurrence = ?22 \
                 WHERE user_id = ?1 AND id = ?2",
                params![
                    user,
                    id,
                    view.name(),
                    kind_word(view),
                    status_word(view),
                    view.date.map(|d| d.to_string()),
                    view.trigger_datetime.map(format_db_time),
                    view.trigger_context,
                    p.text_md5,
                    stamp_cols.0,
                    stamp_cols.1,
                    stamp_cols.2,
                    stamp_cols.3,
                    view.name_key,
                    view.status.as_str(),
                    view.completed,
                    view.trigger_raw,
                    view.checklist_completed as i64,
                    view.checklist_total as i64,
                    view.text,
                    updated,
                    view.recurrence
                ],
            )?;
        }
    }
    Ok(())
}
