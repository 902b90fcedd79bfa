//! The queries of the index: which rows a store operation needs ([`Query`]), loaded and their
//! files stat'ed and read again when their signature changed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use elroy_db::rusqlite::{self};

use super::*;

/// Which rows of the index a store operation needs. Each one also returns the rows whose file
/// must be read again (no stored signature: new, renamed or written by elroy, or racy) and the
/// rows of files that do not parse (so a repaired file is seen by the next query that wants it).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Query<'a> {
    /// Every live row (recall, matching `item_name` by substring, the full check).
    All,
    /// Rows dated between the two dates, inclusive (`list_agenda_items`, `elroy agenda`).
    Dates(Date, Date),
    /// Active due items (the due check, `elroy due`, `elroy remind`).
    ActiveDue,
    /// Active due items whose `name` key is this name, and those without a `name` key (matched
    /// by stem, D6): `print_due_item` and the other due-item tools.
    DueNamed(&'a str),
    /// Active items whose name (the `name` key, else the stem) is this name (the duplicate
    /// checks of `add_agenda_item`, `create_due_item` and `rename_due_item`).
    Named(&'a str),
    /// The row with this id (recall and pins).
    Id(i64),
    /// The rows with these ids (the hits of a recall).
    Ids(&'a [i64]),
    /// The active due items among these ids (the hits of `examine_memories`).
    DueIds(&'a [i64]),
    /// The rows of these stems (the candidates of an `item_name`, [`DbIndex::name_candidates`]).
    Stems(&'a [String]),
    /// Active plain items without a readable date (`elroy agenda` names them).
    Undated,
}

impl Query<'_> {
    /// The SQL condition (after `user_id = ?1 AND status <> 'deleted' AND `) and its
    /// parameters. Each is served by an index of migration 6.
    pub(super) fn condition(
        &self,
    ) -> (std::borrow::Cow<'static, str>, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value as V;
        if let Query::Stems(stems) = self {
            let marks: Vec<String> = (2..stems.len() + 2).map(|i| format!("?{i}")).collect();
            return (
                format!("stem IN ({})", marks.join(", ")).into(),
                stems.iter().map(|s| V::Text(s.clone())).collect(),
            );
        }
        if let Query::Ids(ids) | Query::DueIds(ids) = self {
            let marks: Vec<String> = (2..ids.len() + 2).map(|i| format!("?{i}")).collect();
            let due = if matches!(self, Query::DueIds(_)) {
                "kind = 'due' AND status = 'created' AND "
            } else {
                ""
            };
            return (
                format!("{due}id IN ({})", marks.join(", ")).into(),
                ids.iter().map(|id| V::Integer(*id)).collect(),
            );
        }
        let (condition, values) = match *self {
            Query::All | Query::Stems(_) | Query::Ids(_) | Query::DueIds(_) => ("1", Vec::new()),
            Query::Dates(first, last) => (
                "item_date BETWEEN ?2 AND ?3",
                vec![V::Text(first.to_string()), V::Text(last.to_string())],
            ),
            Query::ActiveDue => ("kind = 'due' AND status = 'created'", Vec::new()),
            // Names are stored and compared in NFC (`elroy_markdown::normalize_name`).
            Query::DueNamed(name) => (
                "kind = 'due' AND status = 'created' AND (name = ?2 OR name_key IS NULL)",
                vec![V::Text(elroy_markdown::normalize_name(name).into_owned())],
            ),
            Query::Named(name) => (
                "name = ?2 AND status = 'created'",
                vec![V::Text(elroy_markdown::normalize_name(name).into_owned())],
            ),
            Query::Id(id) => ("id = ?2", vec![V::Integer(id)]),
            Query::Undated => (
                "item_date IS NULL AND kind = 'agenda' AND status = 'created'",
                Vec::new(),
            ),
        };
        (condition.into(), values)
    }

    /// Whether the rows to read again (and broken files) come too.
    pub(super) fn with_rows_to_read(&self) -> bool {
        !matches!(
            self,
            Query::All | Query::Id(_) | Query::Ids(_) | Query::DueIds(_) | Query::Stems(_)
        )
    }
}

/// The rows to read again: no stored signature, or a file that does not parse (the expression of
/// the partial index `agenda_items_to_read`, word for word).
const TO_READ: &str = "(file_mtime_ns IS NULL OR broken IS NOT NULL)";

impl DbIndex {
    /// Reads files; `unchanged` holds the entries of rows stored without a stamp (a racy file
    /// read again and unchanged needs no write, so it is left out of the result).
    pub(super) fn read_files(
        &self,
        dir: &Path,
        prefix: &str,
        files: Vec<(String, FileStamp)>,
        unchanged: &HashMap<String, Arc<Entry>>,
    ) -> (Vec<Parsed>, Vec<(String, String)>) {
        let wall = wall_clock_ns();
        let parsed: Vec<Parsed> = parse_all(dir, prefix, files)
            .into_iter()
            .filter(|p| {
                !(p.stamp.is_racy(wall) && unchanged.get(&p.name).is_some_and(|e| **e == p.entry))
            })
            .collect();
        let problems = parsed
            .iter()
            .filter_map(|p| match &p.entry {
                Entry::Broken { file, message, .. } => Some((file.clone(), message.clone())),
                Entry::Item(_) => None,
            })
            .collect();
        (parsed, problems)
    }

    /// Runs one `LOAD_COLUMNS` statement with `?1` = the user and `values` after it.
    pub(super) fn load(
        &self,
        sql_text: &str,
        values: Vec<rusqlite::types::Value>,
    ) -> Result<Vec<Loaded>, AgendaError> {
        let user = self.user_id;
        self.db
            .with_conn(|c| {
                let mut stmt = c.prepare_cached(sql_text)?;
                let mut params: Vec<rusqlite::types::Value> = vec![user.into()];
                params.extend(values);
                stmt.query_map(rusqlite::params_from_iter(params), |r| {
                    Ok(Loaded {
                        id: r.get(0)?,
                        stem: r.get(1)?,
                        created_at: r.get(2)?,
                        stamp: [r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?],
                        name_key: r.get(7)?,
                        raw_status: r.get(8)?,
                        completed: r.get(9)?,
                        item_date: r.get(10)?,
                        trigger_raw: r.get(11)?,
                        trigger_datetime: r.get(12)?,
                        trigger_context: r.get(13)?,
                        checklist: (r.get(14)?, r.get(15)?),
                        body: r.get(16)?,
                        broken: r.get(17)?,
                        recurrence: r.get(18)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| IndexError::from(e).into())
    }

    /// The rows `query` needs, brought up to date with their files (each file stat'ed; those
    /// whose signature changed are read and their rows rewritten; rows whose file is gone are
    /// marked deleted), in file-name order, with the files found unreadable. Call inside the
    /// home lock, after [`DbIndex::begin`].
    ///
    /// # Errors
    /// Database failures.
    pub(crate) fn query(
        &self,
        dir: &Path,
        prefix: &str,
        query: Query<'_>,
    ) -> Result<(Snapshot, Vec<(String, String)>), AgendaError> {
        let (condition, values) = query.condition();
        let mut statements = vec![(format!("{LOAD_COLUMNS}{condition}"), values)];
        if query.with_rows_to_read() {
            statements.push((format!("{LOAD_COLUMNS}{TO_READ}"), Vec::new()));
        }
        let mut loaded = Vec::new();
        for (sql_text, values) in statements {
            loaded.extend(self.load(&sql_text, values)?);
        }
        let mut rows: BTreeMap<String, Row> = BTreeMap::new();
        let mut to_parse = Vec::new();
        let mut gone = Vec::new();
        let mut unchanged = HashMap::new();
        for loaded in loaded {
            let (file_name, row) = loaded.into_row(prefix);
            if rows.contains_key(&file_name) || gone.contains(&file_name) {
                continue;
            }
            self.files_checked.fetch_add(1, Ordering::Relaxed);
            match FileStamp::of_file(&dir.join(&file_name)) {
                None => gone.push(file_name),
                Some(stamp) if row.stamp == Some(stamp) => {
                    rows.insert(file_name, row);
                }
                Some(stamp) => {
                    if row.stamp.is_none() {
                        unchanged.insert(file_name.clone(), Arc::clone(&row.entry));
                    }
                    to_parse.push((file_name.clone(), stamp));
                    rows.insert(file_name, row);
                }
            }
        }
        let mut problems = Vec::new();
        if !to_parse.is_empty() || !gone.is_empty() {
            let (parsed, found) = self.read_files(dir, prefix, to_parse, &unchanged);
            problems = found;
            let known: Known = rows
                .iter()
                .map(|(name, row)| (name.clone(), row.id))
                .collect();
            let _unsaved = self.write_changes(&known, &parsed, &gone);
            for p in parsed {
                if let Some(row) = rows.get_mut(&p.name) {
                    row.entry = Arc::new(p.entry);
                }
            }
        }
        let mut seen = self.seen();
        for (file_name, row) in &rows {
            let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
            seen.by_stem.insert(
                stem.to_owned(),
                IndexEntry {
                    id: row.id,
                    created_at: row.created_at,
                },
            );
        }
        let entries: Vec<Arc<Entry>> = rows.into_values().map(|r| r.entry).collect();
        Ok((
            Snapshot {
                entries: Arc::new(entries),
            },
            problems,
        ))
    }
}
