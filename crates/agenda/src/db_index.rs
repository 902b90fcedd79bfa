//! [`DbIndex`]: the agenda index as the `agenda_items` table of `state.db`
//! (`docs/formats.md#agenda-index`), validated against the files by their stat signatures.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use elroy_core::{Clock, SystemClock};
use elroy_db::rusqlite::{self, OptionalExtension, params};
use elroy_db::{Db, format_db_time, parse_db_time};
use jiff::Timestamp;
use jiff::civil::Date;
use md5::{Digest, Md5};

use crate::item::{ItemView, Status};
use crate::scan::{
    Entry, Listing, Parsed, Snapshot, Stamp, list_dir, parse_all, stat_file, wall_clock_ns,
};
use crate::{AgendaError, Kind};

/// What the index knows about one live file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Stable per user: the recall metadata `memory_id` of the item
    /// (`docs/formats.md#the-recall-payload`).
    pub id: i64,
    /// When elroy created the file, or first saw it (then the file's modification time).
    pub created_at: Timestamp,
}

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
    fn condition(&self) -> (std::borrow::Cow<'static, str>, Vec<rusqlite::types::Value>) {
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
    fn with_rows_to_read(&self) -> bool {
        !matches!(
            self,
            Query::All | Query::Id(_) | Query::Ids(_) | Query::DueIds(_) | Query::Stems(_)
        )
    }
}

/// The rows to read again: no stored signature, or a file that does not parse (the expression of
/// the partial index `agenda_items_to_read`, word for word).
const TO_READ: &str = "(file_mtime_ns IS NULL OR broken IS NOT NULL)";

/// One row as a query returns it.
#[derive(Debug, Clone)]
struct Row {
    id: i64,
    created_at: Timestamp,
    /// `None`: read the file at the next query that returns the row (new, renamed, written by
    /// elroy, racy or never read).
    stamp: Option<Stamp>,
    entry: Arc<Entry>,
}

/// Ids of the rows the current operation's queries returned, by stem (emptied by
/// [`DbIndex::begin`]).
#[derive(Debug, Default)]
struct Seen {
    by_stem: HashMap<String, IndexEntry>,
}

/// The agenda index in the `agenda_items` table of `state.db`, one row per file and user: the
/// stable id, the creation time, what the file says (name, `name` key, kind, status, completion,
/// date, triggers, checklist counts, body; or why it could not be read) and its stat signature
/// (size, mtime, inode, ctime). A file that disappears gets `status = 'deleted'`; renames by elroy
/// keep the id; ids are never reused.
///
/// Nothing is loaded whole. An operation first checks the directory: its stat
/// signature (mtime in ns and inode) is kept in `meta` (key `agenda_dir:{user id}`), stored only
/// when it is older than two seconds (the racy rule of the files). Unchanged: no listing. Changed
/// (a file added, removed, or renamed over, as editors and `git checkout` do): one `readdir`
/// (names and inodes, no `stat`) diffed against the rows; new files and files whose inode changed
/// are read, rows without a file are marked deleted. Then each query ([`Query`]) selects only the
/// rows it needs in SQL, stats their files and re-reads those whose signature changed. The
/// trade-off: a file edited in place (same inode, directory unchanged) is seen by the next query
/// that returns its row, and by `elroy doctor` ([`crate::AgendaStore::broken_files`] checks
/// every file); a query that filters on what the edit changed (the date, the name) sees it only
/// then. The table is a cache of the files: a deleted `state.db` is rebuilt by the next operation
/// (ids renumbered). All writes happen inside the home lock.
#[derive(Debug)]
pub struct DbIndex {
    db: Arc<Db>,
    user_id: i64,
    seen: Mutex<Seen>,
    /// Lower-cased names of the non-item `*.md` entries at the last directory check.
    others_lower: Mutex<Vec<String>>,
    /// Lower-cased file names of the live rows, when this operation already loaded them.
    names_lower: Mutex<Option<HashSet<String>>>,
    /// The clock of `updated_at` for deletes and renames (`ELROY_NOW` through `TimeContext`).
    clock: Arc<dyn Clock>,
    /// How many agenda files this index stat'ed (queries and listing diffs), for tests.
    files_checked: AtomicU64,
}

fn sql(e: impl std::fmt::Display) -> String {
    format!("agenda index: {e}")
}

pub(crate) fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn file_name_of(stem: &str) -> String {
    format!("{stem}.md")
}

fn timestamp_of_ns(ns: i64) -> Timestamp {
    Timestamp::from_nanosecond(i128::from(ns)).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A placeholder for a row whose file has not been read yet (its stamp is `None`, so the query
/// reads the file or drops the row; it is never shown).
fn unread(stem: &str) -> Arc<Entry> {
    Arc::new(Entry::Broken {
        stem: stem.to_owned(),
        file: String::new(),
        message: String::new(),
    })
}

/// The columns of one row as loaded.
struct Loaded {
    id: i64,
    stem: String,
    created_at: String,
    stamp: [Option<i64>; 4],
    name_key: Option<String>,
    raw_status: Option<String>,
    completed: Option<bool>,
    item_date: Option<String>,
    trigger_raw: Option<String>,
    trigger_datetime: Option<String>,
    trigger_context: Option<String>,
    checklist: (Option<i64>, Option<i64>),
    body: Option<String>,
    broken: Option<String>,
    recurrence: Option<String>,
}

impl Loaded {
    fn into_row(self, prefix: &str) -> (String, Row) {
        let file_name = file_name_of(&self.stem);
        let stamp = match self.stamp {
            [Some(size), Some(mtime_ns), Some(ino), Some(ctime_ns)] => Some(Stamp {
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
fn kind_word(view: &ItemView) -> &'static str {
    match view.kind() {
        Kind::Agenda => "agenda",
        Kind::Due => "due",
    }
}

fn status_word(view: &ItemView) -> &'static str {
    // The table knows created/completed/deleted; a file that exists is never 'deleted'.
    if view.is_active() {
        "created"
    } else {
        "completed"
    }
}

const LOAD_COLUMNS: &str = "SELECT id, stem, created_at, file_size, file_mtime_ns, file_ino, \
     file_ctime_ns, name_key, raw_status, completed, item_date, trigger_raw, trigger_datetime, \
     trigger_context, checklist_done, checklist_total, body, broken, recurrence FROM agenda_items \
     WHERE user_id = ?1 AND status <> 'deleted' AND ";

/// The `meta` value of a directory check: `{mtime_ns} {ino}` of `agenda/`, then the lower-cased
/// names of its non-item `*.md` entries, one a line.
fn dir_meta_value(sig: &Stamp, others: &[String]) -> String {
    let mut value = format!("{} {}", sig.mtime_ns, sig.ino);
    for name in others {
        value.push('\n');
        value.push_str(name);
    }
    value
}

/// The hash of one directory entry in the digest of `agenda_names:{user id}`: FNV-1a (64 bits)
/// of the name, a zero byte and the inode (`None`, a symlink, as -1). The digest is the wrapping
/// sum over the entries, so an entry is added or taken out without the others.
fn entry_hash(name: &str, ino: Option<i64>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let ino = ino.unwrap_or(-1).to_le_bytes();
    for b in name.bytes().chain([0]).chain(ino) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The ids of existing rows met by a directory check or a query, by file name.
type Known = HashMap<String, i64>;

/// The `meta` key of the agenda version of `user_id` (see [`DbIndex::version`]).
fn version_key(user_id: i64) -> String {
    format!("agenda_version:{user_id}")
}

/// Adds one to the agenda version of `user_id`, on `conn` (inside the transaction of the row
/// write it stands for).
fn bump_version(conn: &rusqlite::Connection, user_id: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, '1') \
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        [version_key(user_id)],
    )?;
    Ok(())
}

impl DbIndex {
    /// The index of `user_id` (a `users` row) in `db`, stamping `updated_at` with the system
    /// clock; use [`DbIndex::with_clock`] to give it the session's clock.
    pub fn new(db: Arc<Db>, user_id: i64) -> Self {
        DbIndex {
            db,
            user_id,
            seen: Mutex::new(Seen::default()),
            others_lower: Mutex::new(Vec::new()),
            names_lower: Mutex::new(None),
            clock: Arc::new(SystemClock),
            files_checked: AtomicU64::new(0),
        }
    }

    /// The same index stamping `updated_at` of deletes and renames with `clock` (the runtime's
    /// `TimeContext::clock`, so `ELROY_NOW` fixes it).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn names_lower(&self) -> std::sync::MutexGuard<'_, Option<HashSet<String>>> {
        self.names_lower
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn meta_key(&self) -> String {
        format!("agenda_dir:{}", self.user_id)
    }

    fn names_key(&self) -> String {
        format!("agenda_names:{}", self.user_id)
    }

    fn meta_get(&self, key: &str) -> Result<Option<String>, String> {
        self.db
            .with_conn(|c| {
                c.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
                    .query_row([key], |r| r.get(0))
                    .optional()
            })
            .map_err(sql)
    }

    /// Sets (`Some`) or removes (`None`) a `meta` value. A value that cannot be written only
    /// costs a later operation a listing or a diff.
    fn meta_set(&self, key: &str, value: Option<&str>) {
        let _ = self.db.with_conn(|c| match value {
            Some(value) => c.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            ),
            None => c.execute("DELETE FROM meta WHERE key = ?1", [key]),
        });
    }

    /// Records changes elroy made to the directory's entries, `(file name, inode)` removed and
    /// added, in the digest of the entries the rows stand for (`meta` key
    /// `agenda_names:{user id}`), so the next listing that finds only these changes needs no
    /// diff. An unknown inode drops the digest (the next listing diffs). Call inside the home
    /// lock, with the rows already updated ([`DbIndex::created`] and the others).
    pub(crate) fn entries_changed(
        &self,
        removed: &[(&str, Option<i64>)],
        added: &[(&str, Option<i64>)],
    ) {
        let key = self.names_key();
        let Ok(Some(stored)) = self.meta_get(&key) else {
            return;
        };
        let known = removed.iter().chain(added).all(|(_, ino)| ino.is_some());
        let Some(mut digest) = stored.parse::<u64>().ok().filter(|_| known) else {
            self.meta_set(&key, None);
            return;
        };
        for (name, ino) in removed {
            digest = digest.wrapping_sub(entry_hash(name, *ino));
        }
        for (name, ino) in added {
            digest = digest.wrapping_add(entry_hash(name, *ino));
        }
        self.meta_set(&key, Some(&digest.to_string()));
    }

    /// Starts an operation (inside the home lock): brings the rows up to date with the
    /// directory's entries when the directory changed since the last check (`full`: always),
    /// and returns the files found unreadable on the way (`(display path, message)`).
    ///
    /// # Errors
    /// A directory that cannot be listed; database failures.
    pub(crate) fn begin(
        &self,
        dir: &Path,
        prefix: &str,
        full: bool,
    ) -> Result<Vec<(String, String)>, AgendaError> {
        self.reset();
        // The directory's signature before its listing: a change during the listing leaves the
        // stored signature behind, so the next operation lists again.
        let sig = std::fs::metadata(dir).ok().map(|m| Stamp::of(&m));
        let key = self.meta_key();
        let stored = self.meta_get(&key)?;
        if let (Some(sig), Some(stored), false) = (&sig, &stored, full) {
            let mut lines = stored.lines();
            if lines.next() == Some(dir_meta_value(sig, &[]).as_str()) {
                *self
                    .others_lower
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    lines.map(str::to_owned).collect();
                return Ok(Vec::new());
            }
        }
        let listing = list_dir(dir, prefix)?;
        // The entries as the rows stand for them: when the listing finds exactly those (the
        // directory changed only by elroy's own writes), no diff is needed.
        let digest = listing
            .files
            .iter()
            .fold(0u64, |d, (name, ino)| {
                d.wrapping_add(entry_hash(name, *ino))
            })
            .to_string();
        let names_key = self.names_key();
        let problems = if !full && self.meta_get(&names_key)?.as_deref() == Some(digest.as_str()) {
            Vec::new()
        } else {
            let (problems, saved) = self.sync_listing(dir, prefix, &listing)?;
            self.meta_set(&names_key, saved.then_some(digest.as_str()));
            problems
        };
        let wall = wall_clock_ns();
        if let Some(sig) = sig.filter(|s| !s.is_racy(wall)) {
            let value = dir_meta_value(&sig, &listing.others_lower);
            if stored.as_deref() != Some(value.as_str()) {
                self.meta_set(&key, Some(&value));
            }
        }
        *self
            .others_lower
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = listing.others_lower;
        Ok(problems)
    }

    /// Starts an operation that needs no directory check (a lookup by id: the file of the row
    /// is stat'ed, and a file the row does not know is not asked for).
    pub(crate) fn reset(&self) {
        self.seen().by_stem.clear();
        *self.names_lower() = None;
    }

    /// Diffs a listing against the live rows: files without a row, or whose inode is not the
    /// row's, are read; rows without a file are marked deleted.
    fn sync_listing(
        &self,
        dir: &Path,
        prefix: &str,
        listing: &Listing,
    ) -> Result<(Vec<(String, String)>, bool), AgendaError> {
        let user = self.user_id;
        // (file name) -> (id, stored inode)
        let rows: HashMap<String, (i64, Option<i64>)> = self
            .db
            .with_conn(|c| {
                let mut stmt = c.prepare_cached(
                    "SELECT stem, id, file_ino, file_mtime_ns FROM agenda_items \
                     WHERE user_id = ?1 AND status <> 'deleted'",
                )?;
                stmt.query_map([user], |r| {
                    let stem: String = r.get(0)?;
                    let ino: Option<i64> = r.get(2)?;
                    let mtime: Option<i64> = r.get(3)?;
                    Ok((
                        file_name_of(&stem),
                        (r.get(1)?, ino.filter(|_| mtime.is_some())),
                    ))
                })?
                .collect::<rusqlite::Result<HashMap<_, _>>>()
            })
            .map_err(sql)?;
        let mut listed: HashSet<&str> = HashSet::with_capacity(listing.files.len());
        let mut to_parse = Vec::new();
        for (name, ino) in &listing.files {
            listed.insert(name.as_str());
            let row = rows.get(name);
            if row.is_some_and(|r| r.1.is_some() && r.1 == *ino) {
                continue;
            }
            self.files_checked.fetch_add(1, Ordering::Relaxed);
            if let Some(stamp) = stat_file(&dir.join(name)) {
                if row.is_some_and(|r| r.1 == Some(stamp.ino)) {
                    // A symlink whose target did not move: its query checks the rest.
                    continue;
                }
                to_parse.push((name.clone(), stamp));
            } else {
                listed.remove(name.as_str());
            }
        }
        let gone: Vec<String> = rows
            .keys()
            .filter(|f| !listed.contains(f.as_str()))
            .cloned()
            .collect();
        if to_parse.is_empty() && gone.is_empty() {
            return Ok((Vec::new(), true));
        }
        let known: Known = rows.into_iter().map(|(name, (id, _))| (name, id)).collect();
        let (parsed, problems) = self.read_files(dir, prefix, to_parse, &HashMap::new());
        // The table is a cache of the files: when it cannot be written (a full disk), this
        // process goes on, and the next one reads those files again.
        let saved = self.write_changes(&known, &parsed, &gone).is_ok();
        Ok((problems, saved))
    }

    /// Reads files; `unchanged` holds the entries of rows stored without a stamp (a racy file
    /// read again and unchanged needs no write, so it is left out of the result).
    fn read_files(
        &self,
        dir: &Path,
        prefix: &str,
        files: Vec<(String, Stamp)>,
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
    fn load(
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
            .map_err(|e| AgendaError::new(sql(e)))
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
            match stat_file(&dir.join(&file_name)) {
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

    /// Writes read files and vanished files in one transaction. `known` gives the id of files
    /// that have a row; the others get new ids (after the largest ever given: ids are never
    /// reused).
    fn write_changes(
        &self,
        known: &Known,
        parsed: &[Parsed],
        gone: &[String],
    ) -> Result<(), String> {
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
                    let stored = (!p.stamp.is_racy(wall)).then_some(p.stamp);
                    let stamp_cols = (
                        stored.map(|s| s.size),
                        stored.map(|s| s.mtime_ns),
                        stored.map(|s| s.ino),
                        stored.map(|s| s.ctime_ns),
                    );
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
                }
                if !parsed.is_empty() || !gone.is_empty() {
                    bump_version(&tx, user)?;
                }
                tx.commit()
            })
            .map_err(sql)
    }

    fn mark_deleted(&self, stem: &str) -> Result<(), String> {
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
            .map_err(sql)?;
        self.seen().by_stem.remove(stem);
        Ok(())
    }

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
            .map_err(|e| AgendaError::new(sql(e)))
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

    /// The entry of a stem returned by this operation's queries (or created by it).
    pub(crate) fn get(&self, stem: &str) -> Option<IndexEntry> {
        self.seen().by_stem.get(stem).copied()
    }

    /// Records a file elroy just created: a new id, `created_at` = `at`; the next query reads it.
    pub(crate) fn created(&self, stem: &str, at: Timestamp) -> Result<IndexEntry, String> {
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
            .map_err(sql)?;
        let entry = IndexEntry { id, created_at: at };
        self.seen().by_stem.insert(stem.to_owned(), entry);
        Ok(entry)
    }

    /// Records that elroy rewrote the file of `stem`: its row is read again by the next query
    /// that could want it (whatever the query filters on).
    pub(crate) fn written(&self, stem: &str) -> Result<(), String> {
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
            .map_err(sql)?;
        Ok(())
    }

    /// Records a move by elroy (`rename_due_item`): the id and `created_at` stay with the file;
    /// the next query reads it.
    pub(crate) fn renamed(&self, old_stem: &str, new_stem: &str) -> Result<(), String> {
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
            .map_err(sql)?;
        let mut seen = self.seen();
        if let Some(entry) = seen.by_stem.remove(old_stem) {
            seen.by_stem.insert(new_stem.to_owned(), entry);
        }
        Ok(())
    }

    /// The agenda version of this user (`meta` key `agenda_version:{user id}`, `0` when absent):
    /// a number raised in the transaction of every write to this user's rows (elroy's own
    /// writes, and what a directory check or a query read again or found gone). Equal versions
    /// mean the rows did not change in between, so a cache of the rows (the agenda rows of the
    /// recall index) is still current; a file edited in place is seen, and the version raised,
    /// only when a query returns its row. A deleted `state.db` starts again at `0`, together
    /// with any cache kept in it.
    ///
    /// # Errors
    /// Database failures.
    pub(crate) fn version(&self) -> Result<i64, AgendaError> {
        let value = self
            .meta_get(&version_key(self.user_id))
            .map_err(AgendaError::new)?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// How many agenda files this index stat'ed since it was made (each query stats the files
    /// of the rows it returns; a listing diff stats new entries).
    pub(crate) fn files_checked(&self) -> u64 {
        self.files_checked.load(Ordering::Relaxed)
    }

    /// Records a removal by elroy (`delete_agenda_item`, `delete_due_item`).
    pub(crate) fn removed(&self, stem: &str) -> Result<(), String> {
        self.mark_deleted(stem)
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
        // A file gone at a directory check is marked deleted at the clock's time too.
        let empty = tempfile::tempdir().unwrap();
        index.begin(empty.path(), "agenda/", true).unwrap();
        assert_eq!(updated_at(&db, user, c.id), format_db_time(fixed));
        assert_eq!(
            indexed_status(&db, user, c.id).unwrap().map(|s| s.1),
            Some("deleted".to_owned())
        );
    }
}
