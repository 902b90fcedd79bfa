//! The names taken in the agenda folder, for a new item's file name.

use elroy_db::rusqlite::{self, params};

use super::*;

impl DbIndex {
    /// The names of the live rows an `item_name` may match
    /// (`docs/tool-rules.md#finding-an-agenda-item`), without their bodies: `(stem, name, active)`
    /// of active rows (a covering index of migration 6), and of rows to read again or whose file
    /// does not parse (always candidates: their stored name may be out of date, and a broken file
    /// matches by its stem). Call inside the home lock.
    ///
    /// # Errors
    /// Database failures.
    pub(crate) fn name_candidates(&self) -> Result<Vec<(String, String, bool)>, AgendaError> {
        let user = self.user_id;
        self.db
            .with_conn(|c| {
                let mut out = Vec::new();
                for (sql_text, always) in [
                    (
                        "SELECT stem, name FROM agenda_items WHERE user_id = ?1 \
                         AND status = 'created'",
                        false,
                    ),
                    (
                        "SELECT stem, name FROM agenda_items WHERE user_id = ?1 \
                         AND status <> 'deleted' AND (file_mtime_ns IS NULL OR broken IS NOT NULL)",
                        true,
                    ),
                ] {
                    let mut stmt = c.prepare_cached(sql_text)?;
                    let rows = stmt.query_map([user], |r| Ok((r.get(0)?, r.get(1)?, always)))?;
                    for row in rows {
                        out.push(row?);
                    }
                }
                Ok(out)
            })
            .map_err(|e| IndexError::from(e).into())
    }

    /// Whether the directory has an entry called `name` (a file name `{stem}.md`), ignoring case
    /// (`docs/formats.md#unique-paths`, D12): a live row's file or another `*.md` entry seen by the
    /// last directory check. An ASCII name is one indexed lookup (SQLite's `NOCASE` folds ASCII);
    /// another name compares with every live row's name lower-cased (loaded once per operation).
    /// Call it inside the home lock, after [`DbIndex::begin`].
    pub(crate) fn is_taken(&self, name: &str) -> bool {
        let lower = name.to_lowercase();
        if self
            .others_lower
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(&lower)
        {
            return true;
        }
        let user = self.user_id;
        let Some(stem) = name.strip_suffix(".md") else {
            return false;
        };
        if name.is_ascii() {
            return self
                .db
                .with_conn(|c| {
                    c.prepare_cached(
                        "SELECT 1 FROM agenda_items WHERE user_id = ?1 AND status <> 'deleted' \
                         AND stem = ?2 COLLATE NOCASE LIMIT 1",
                    )?
                    .exists(params![user, stem])
                })
                // The store checks the exact name on disk too.
                .unwrap_or(false);
        }
        let mut names = self.names_lower();
        if names.is_none() {
            let stems: Vec<String> = self
                .db
                .with_conn(|c| {
                    let mut stmt = c.prepare_cached(
                        "SELECT stem FROM agenda_items WHERE user_id = ?1 AND status <> 'deleted'",
                    )?;
                    stmt.query_map([user], |r| r.get(0))?
                        .collect::<rusqlite::Result<Vec<String>>>()
                })
                .unwrap_or_default();
            *names = Some(
                stems
                    .into_iter()
                    .map(|s| file_name_of(&s).to_lowercase())
                    .collect(),
            );
        }
        names.as_ref().is_some_and(|t| t.contains(&lower))
    }
}
