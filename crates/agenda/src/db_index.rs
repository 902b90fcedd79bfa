//! [`DbIndex`]: the agenda index as the `agenda_items` table of `state.db` (`formats.md` §9.5).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use elroy_core::{Clock, SystemClock};
use elroy_db::rusqlite::{self, OptionalExtension, params};
use elroy_db::{Db, format_db_time, parse_db_time};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use md5::{Digest, Md5};

use crate::index::{AgendaIndex, IndexEntry, LiveFile};
use crate::item::Item;
use crate::{Kind, to_fact};

#[derive(Debug, Clone, Copy)]
struct Row {
    id: i64,
    created_at: Timestamp,
    size: Option<i64>,
    mtime_ns: Option<i64>,
}

#[derive(Debug, Default)]
struct Mirror {
    by_stem: HashMap<String, Row>,
    by_id: HashMap<i64, String>,
    max_id: i64,
    /// `PRAGMA data_version` at the last load: it changes when another connection commits.
    data_version: Option<i64>,
}

impl Mirror {
    fn insert(&mut self, stem: &str, row: Row) {
        self.max_id = self.max_id.max(row.id);
        self.by_id.insert(row.id, stem.to_owned());
        self.by_stem.insert(stem.to_owned(), row);
    }

    fn remove(&mut self, stem: &str) -> Option<Row> {
        let row = self.by_stem.remove(stem)?;
        self.by_id.remove(&row.id);
        Some(row)
    }
}

/// An [`AgendaIndex`] kept in the `agenda_items` table of `state.db`, one row per file and user:
/// the stable id, stem, name, kind, status, date, triggers, the md5 of the rendering, the scan
/// state (size, mtime) and the creation time. A file that disappears gets `status = 'deleted'`;
/// renames keep the id; a file with invalid front matter keeps its previous row.
///
/// The rows of the user are mirrored in memory and read again only when another connection
/// (another elroy process) committed to the database. All writes happen inside the home lock.
#[derive(Debug)]
pub struct DbIndex {
    db: Arc<Db>,
    user_id: i64,
    mirror: Mutex<Mirror>,
    /// The clock of `updated_at` for deletes and renames (`ELROY_NOW` through `TimeContext`).
    clock: Arc<dyn Clock>,
}

fn sql(e: impl std::fmt::Display) -> String {
    format!("agenda index: {e}")
}

fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The columns a parsed file gives: `(name, kind, status, item_date, trigger_datetime,
/// trigger_context, text_md5)`.
type Details = (
    String,
    &'static str,
    &'static str,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

fn details(stem: &str, item: Option<&Item>) -> Details {
    match item {
        Some(item) => (
            item.name().to_owned(),
            match item.kind() {
                Kind::Agenda => "agenda",
                Kind::Due => "due",
            },
            // The table knows created/completed/deleted; a file that exists is never 'deleted'.
            if item.is_active() {
                "created"
            } else {
                "completed"
            },
            item.date.map(|d| d.to_string()),
            item.trigger_datetime.map(format_db_time),
            item.trigger_context.clone(),
            md5_hex(&to_fact(item, &TimeZone::UTC)),
        ),
        None => (
            stem.to_owned(),
            "agenda",
            "created",
            None,
            None,
            None,
            md5_hex(""),
        ),
    }
}

impl DbIndex {
    /// The index of `user_id` (a `users` row) in `db`, stamping `updated_at` with the system
    /// clock; use [`DbIndex::with_clock`] to give it the session's clock.
    pub fn new(db: Arc<Db>, user_id: i64) -> Self {
        DbIndex {
            db,
            user_id,
            mirror: Mutex::new(Mirror::default()),
            clock: Arc::new(SystemClock),
        }
    }

    /// The same index stamping `updated_at` of deletes and renames with `clock` (the runtime's
    /// `TimeContext::clock`, so `ELROY_NOW` fixes it).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Mirror> {
        self.mirror
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Loads the user's live rows when the database changed under us (or on first use).
    fn reload(&self, mirror: &mut Mirror) -> Result<(), String> {
        let user = self.user_id;
        let loaded = self
            .db
            .with_conn(|c| {
                let version: i64 = c.query_row("PRAGMA data_version", [], |r| r.get(0))?;
                if mirror.data_version == Some(version) {
                    return Ok(None);
                }
                let max: i64 = c.query_row(
                    "SELECT COALESCE(MAX(id), 0) FROM agenda_items WHERE user_id = ?1",
                    [user],
                    |r| r.get(0),
                )?;
                let mut stmt = c.prepare(
                    "SELECT id, stem, created_at, file_size, file_mtime_ns FROM agenda_items \
                     WHERE user_id = ?1 AND status <> 'deleted'",
                )?;
                let rows = stmt
                    .query_map([user], |r| {
                        let created: String = r.get(2)?;
                        Ok((
                            r.get::<_, String>(1)?,
                            Row {
                                id: r.get(0)?,
                                created_at: parse_db_time(&created)
                                    .unwrap_or(Timestamp::UNIX_EPOCH),
                                size: r.get(3)?,
                                mtime_ns: r.get(4)?,
                            },
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(Some((version, max, rows)))
            })
            .map_err(sql)?;
        if let Some((version, max, rows)) = loaded {
            *mirror = Mirror::default();
            for (stem, row) in rows {
                mirror.insert(&stem, row);
            }
            mirror.max_id = mirror.max_id.max(max);
            mirror.data_version = Some(version);
        }
        Ok(())
    }

    fn insert_row(
        &self,
        mirror: &mut Mirror,
        stem: &str,
        created_at: Timestamp,
        file: Option<&LiveFile<'_>>,
    ) -> Result<Row, String> {
        let id = mirror.max_id + 1;
        let (name, kind, status, date, trigger, context, md5) =
            details(stem, file.and_then(|f| f.item));
        let size = file.map(|f| f.size as i64);
        let mtime_ns = file.map(|f| f.mtime.as_nanosecond() as i64);
        let at = format_db_time(created_at);
        let user = self.user_id;
        self.db
            .with_conn(|c| {
                c.execute(
                    "INSERT INTO agenda_items (user_id, id, stem, name, kind, status, item_date, \
                     trigger_datetime, trigger_context, text_md5, file_size, file_mtime_ns, \
                     created_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
                    params![
                        user, id, stem, name, kind, status, date, trigger, context, md5, size,
                        mtime_ns, at
                    ],
                )
            })
            .map_err(sql)?;
        let row = Row {
            id,
            created_at,
            size,
            mtime_ns,
        };
        mirror.insert(stem, row);
        Ok(row)
    }

    fn mark_deleted(&self, mirror: &mut Mirror, stem: &str) -> Result<(), String> {
        let Some(row) = mirror.remove(stem) else {
            return Ok(());
        };
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                c.execute(
                    "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                     WHERE user_id = ?1 AND id = ?2",
                    params![user, row.id, now],
                )
            })
            .map_err(sql)?;
        Ok(())
    }
}

impl AgendaIndex for DbIndex {
    fn sync(&self, live: &[LiveFile<'_>]) -> Result<(), String> {
        let mut mirror = self.lock();
        self.reload(&mut mirror)?;
        let live_stems: HashSet<&str> = live.iter().map(|f| f.stem).collect();
        let gone: Vec<String> = mirror
            .by_stem
            .keys()
            .filter(|s| !live_stems.contains(s.as_str()))
            .cloned()
            .collect();
        // Plan every change, then write them in one transaction.
        let mut inserts: Vec<(&LiveFile<'_>, i64)> = Vec::new();
        let mut updates: Vec<(&LiveFile<'_>, Row)> = Vec::new();
        let mut next_id = mirror.max_id;
        for file in live {
            let size = Some(file.size as i64);
            let mtime_ns = Some(file.mtime.as_nanosecond() as i64);
            match mirror.by_stem.get(file.stem).copied() {
                None => {
                    next_id += 1;
                    inserts.push((file, next_id));
                }
                Some(row) if row.size == size && row.mtime_ns == mtime_ns => {}
                // A file that does not parse keeps its previous row.
                Some(_) if file.item.is_none() => {}
                Some(row) => updates.push((file, row)),
            }
        }
        if gone.is_empty() && inserts.is_empty() && updates.is_empty() {
            return Ok(());
        }
        let gone_ids: Vec<i64> = gone
            .iter()
            .filter_map(|s| mirror.by_stem.get(s).map(|r| r.id))
            .collect();
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                let tx = c.transaction()?;
                for id in &gone_ids {
                    tx.execute(
                        "UPDATE agenda_items SET status = 'deleted', updated_at = ?3 \
                         WHERE user_id = ?1 AND id = ?2",
                        params![user, id, now],
                    )?;
                }
                for (file, id) in &inserts {
                    let (name, kind, status, date, trigger, context, md5) =
                        details(file.stem, file.item);
                    let at = format_db_time(file.mtime);
                    tx.execute(
                        "INSERT INTO agenda_items (user_id, id, stem, name, kind, status, \
                         item_date, trigger_datetime, trigger_context, text_md5, file_size, \
                         file_mtime_ns, created_at, updated_at) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
                        params![
                            user,
                            id,
                            file.stem,
                            name,
                            kind,
                            status,
                            date,
                            trigger,
                            context,
                            md5,
                            file.size as i64,
                            file.mtime.as_nanosecond() as i64,
                            at
                        ],
                    )?;
                }
                for (file, row) in &updates {
                    let (name, kind, status, date, trigger, context, md5) =
                        details(file.stem, file.item);
                    tx.execute(
                        "UPDATE agenda_items SET name = ?3, kind = ?4, status = ?5, \
                         item_date = ?6, trigger_datetime = ?7, trigger_context = ?8, \
                         text_md5 = ?9, file_size = ?10, file_mtime_ns = ?11, \
                         updated_at = ?12 WHERE user_id = ?1 AND id = ?2",
                        params![
                            user,
                            row.id,
                            name,
                            kind,
                            status,
                            date,
                            trigger,
                            context,
                            md5,
                            file.size as i64,
                            file.mtime.as_nanosecond() as i64,
                            format_db_time(file.mtime)
                        ],
                    )?;
                }
                tx.commit()
            })
            .map_err(sql)?;
        for stem in &gone {
            mirror.remove(stem);
        }
        for (file, id) in inserts {
            mirror.insert(
                file.stem,
                Row {
                    id,
                    created_at: file.mtime,
                    size: Some(file.size as i64),
                    mtime_ns: Some(file.mtime.as_nanosecond() as i64),
                },
            );
        }
        for (file, row) in updates {
            mirror.insert(
                file.stem,
                Row {
                    size: Some(file.size as i64),
                    mtime_ns: Some(file.mtime.as_nanosecond() as i64),
                    ..row
                },
            );
        }
        Ok(())
    }

    fn refresh(&self) -> Result<(), String> {
        let mut mirror = self.lock();
        self.reload(&mut mirror)
    }

    fn get(&self, stem: &str) -> Option<IndexEntry> {
        self.lock().by_stem.get(stem).map(|r| IndexEntry {
            id: r.id,
            created_at: r.created_at,
        })
    }

    fn stem_of(&self, id: i64) -> Option<String> {
        self.lock().by_id.get(&id).cloned()
    }

    fn created(&self, stem: &str, at: Timestamp) -> Result<IndexEntry, String> {
        let mut mirror = self.lock();
        self.reload(&mut mirror)?;
        self.mark_deleted(&mut mirror, stem)?;
        // Details are filled in by the next scan (the row has no scan state yet).
        let row = self.insert_row(&mut mirror, stem, at, None)?;
        Ok(IndexEntry {
            id: row.id,
            created_at: row.created_at,
        })
    }

    fn renamed(&self, old_stem: &str, new_stem: &str) -> Result<(), String> {
        let mut mirror = self.lock();
        self.reload(&mut mirror)?;
        let Some(row) = mirror.remove(old_stem) else {
            return Ok(());
        };
        let user = self.user_id;
        let now = format_db_time(self.clock.now());
        self.db
            .with_conn(|c| {
                c.execute(
                    "UPDATE agenda_items SET stem = ?3, file_size = NULL, file_mtime_ns = NULL, \
                     updated_at = ?4 WHERE user_id = ?1 AND id = ?2",
                    params![user, row.id, new_stem, now],
                )
            })
            .map_err(sql)?;
        mirror.insert(
            new_stem,
            Row {
                size: None,
                mtime_ns: None,
                ..row
            },
        );
        Ok(())
    }

    fn removed(&self, stem: &str) -> Result<(), String> {
        let mut mirror = self.lock();
        self.reload(&mut mirror)?;
        self.mark_deleted(&mut mirror, stem)
    }
}

/// The stored status of the item with `id`, for tests and diagnostics.
///
/// # Errors
/// A message when the query fails.
pub fn indexed_status(db: &Db, user_id: i64, id: i64) -> Result<Option<(String, String)>, String> {
    db.with_conn(|c| {
        c.query_row(
            "SELECT stem, status FROM agenda_items WHERE user_id = ?1 AND id = ?2",
            params![user_id, id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
    })
    .map_err(sql)
}

#[cfg(test)]
mod tests {
    use super::*;
    use elroy_core::FixedClock;

    fn updated_at(db: &Db, user: i64, id: i64) -> String {
        db.with_conn(|c| {
            c.query_row(
                "SELECT updated_at FROM agenda_items WHERE user_id = ?1 AND id = ?2",
                params![user, id],
                |r| r.get(0),
            )
        })
        .unwrap()
    }

    #[test]
    fn deletes_and_renames_are_stamped_with_the_injected_clock() {
        let db = Arc::new(Db::open_in_memory().unwrap());
        let t0: Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
        let user = db.ensure_user("DEFAULT", t0).unwrap();
        let fixed: Timestamp = "2001-02-03T04:05:06Z".parse().unwrap();
        let index = DbIndex::new(Arc::clone(&db), user).with_clock(Arc::new(FixedClock(fixed)));
        let a = index.created("A", t0).unwrap();
        let b = index.created("B", t0).unwrap();
        let c = index.created("C", t0).unwrap();
        index.renamed("A", "A2").unwrap();
        assert_eq!(updated_at(&db, user, a.id), format_db_time(fixed));
        index.removed("B").unwrap();
        assert_eq!(updated_at(&db, user, b.id), format_db_time(fixed));
        assert_eq!(
            indexed_status(&db, user, b.id).unwrap(),
            Some(("B".to_owned(), "deleted".to_owned()))
        );
        // A file gone at a scan is marked deleted at the clock's time too.
        index.sync(&[]).unwrap();
        assert_eq!(updated_at(&db, user, c.id), format_db_time(fixed));
        assert_eq!(
            indexed_status(&db, user, c.id).unwrap().map(|s| s.1),
            Some("deleted".to_owned())
        );
    }
}
