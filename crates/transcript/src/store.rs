//! [`TranscriptStore`]: messages, context entries and context versions
//! (`docs/formats.md#transcript-and-context-versions`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use elroy_core::{Message, Role, ToolCall};
use elroy_db::{Db, format_db_time, parse_db_time};
use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::TranscriptError;
use crate::effects::{self, ResolvedEffect};

/// A message read back from the database, with its row id and creation time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// `messages.id`.
    pub id: i64,
    /// The message.
    pub message: Message,
    /// `messages.created_at`.
    pub created_at: Timestamp,
}

/// One element of a desired context (see [`TranscriptStore::set_context`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ContextItem {
    /// A message already stored (by `messages.id`); kept in place when it is live.
    Stored(i64),
    /// A new message, stored with `created_at` = the change's `now`.
    New(Message),
    /// A new message with its own creation time (bulk imports, turn messages created earlier).
    NewAt(Message, Timestamp),
}

/// The transcript of every user of one database.
#[derive(Debug, Clone)]
pub struct TranscriptStore {
    db: Arc<Db>,
}

struct LiveEntry {
    entry_id: i64,
    message_id: i64,
    ord: i64,
}

impl TranscriptStore {
    /// A store over `db` (already migrated).
    pub fn new(db: Arc<Db>) -> Self {
        TranscriptStore { db }
    }

    /// The database.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// The latest context version of the user, or `None` when no context was ever written.
    ///
    /// # Errors
    /// [`TranscriptError::Db`].
    pub fn current_version(&self, user_id: i64) -> Result<Option<i64>, TranscriptError> {
        Ok(self.db.with_conn(|c| current_version(c, user_id))?)
    }

    /// The active context: the live entries ordered by `ord`
    /// (`docs/formats.md#transcript-and-context-versions`).
    ///
    /// # Errors
    /// [`TranscriptError`] for database failures or corrupt rows.
    pub fn active_context(&self, user_id: i64) -> Result<Vec<StoredMessage>, TranscriptError> {
        self.db.with_conn_mapped(|c| {
            load(
                c,
                "SELECT m.id, m.role, m.content, m.tool_calls, m.tool_call_id, m.is_error, m.model, m.created_at
                 FROM context_entries e JOIN messages m ON m.id = e.message_id
                 WHERE e.user_id = ?1 AND e.removed_version IS NULL ORDER BY e.ord",
                params![user_id],
            )
        })
    }

    /// The context as it was at `version` (a snapshot, addressable as a memory source), or `None`
    /// when the user has no such version.
    ///
    /// # Errors
    /// [`TranscriptError`] for database failures or corrupt rows.
    pub fn context_at(
        &self,
        user_id: i64,
        version: i64,
    ) -> Result<Option<Vec<StoredMessage>>, TranscriptError> {
        self.db.with_conn_mapped(|c| {
            let exists: Option<i64> = c
                .query_row(
                    "SELECT version FROM context_versions WHERE user_id = ?1 AND version = ?2",
                    params![user_id, version],
                    |r| r.get(0),
                )
                .optional()?;
            if exists.is_none() {
                return Ok(None);
            }
            load(
                c,
                "SELECT m.id, m.role, m.content, m.tool_calls, m.tool_call_id, m.is_error, m.model, m.created_at
                 FROM context_entries e JOIN messages m ON m.id = e.message_id
                 WHERE e.user_id = ?1 AND e.added_version <= ?2
                   AND (e.removed_version IS NULL OR e.removed_version > ?2)
                 ORDER BY e.ord",
                params![user_id, version],
            )
            .map(Some)
        })
    }

    /// Appends `messages` to the end of the active context as one version with `reason`
    /// (`turn`, `session`, …). Messages with no content and no tool calls are skipped
    /// (`docs/formats.md#transcript-and-context-versions`). Returns the new version and the stored
    /// message ids (skipped messages have none), or `None` when nothing was stored.
    ///
    /// # Errors
    /// [`TranscriptError::Db`].
    pub fn append(
        &self,
        user_id: i64,
        reason: &str,
        now: Timestamp,
        messages: &[Message],
    ) -> Result<Option<(i64, Vec<i64>)>, TranscriptError> {
        self.db.with_conn_mapped(|c| {
            let tx = c.transaction()?;
            let live = live_entries(&tx, user_id)?;
            let mut ord = live.iter().map(|e| e.ord).max().unwrap_or(0);
            let mut ids = Vec::new();
            let version = current_version(&tx, user_id)?.unwrap_or(0) + 1;
            for m in messages.iter().filter(|m| storable(m)) {
                let id = insert_message(&tx, user_id, m, now)?;
                ord += 1;
                insert_entry(&tx, user_id, id, ord, version)?;
                ids.push(id);
            }
            if ids.is_empty() {
                return Ok(None);
            }
            insert_version(&tx, user_id, version, reason, now)?;
            tx.commit()?;
            Ok(Some((version, ids)))
        })
    }

    /// Makes the active context equal to `target` as one version with `reason`, changing as
    /// little as possible (`docs/formats.md#transcript-and-context-versions`): live stored messages
    /// that stay keep their entry and `ord`; messages left out are removed (`removed_version` = the
    /// new version); new items are placed before the first kept entry (`ord = min - 1`, …), after
    /// the last one (`max + 1`, …), or in the gap they take (a replaced message gets its
    /// predecessor's free `ord`). When a gap has no free `ord`, the kept entries after it are
    /// re-added with new ords (same messages). Returns the new version, or `None` when nothing
    /// changed (no version is written).
    ///
    /// # Errors
    /// [`TranscriptError::Db`].
    pub fn set_context(
        &self,
        user_id: i64,
        reason: &str,
        now: Timestamp,
        target: &[ContextItem],
    ) -> Result<Option<i64>, TranscriptError> {
        self.db
            .with_conn_mapped(|c| set_context_in(c, user_id, reason, now, target))
    }

    /// Removes the live entries of `message_ids` as one version with `reason`; `None` when none
    /// of them was live.
    ///
    /// # Errors
    /// [`TranscriptError::Db`].
    pub fn remove(
        &self,
        user_id: i64,
        reason: &str,
        now: Timestamp,
        message_ids: &[i64],
    ) -> Result<Option<i64>, TranscriptError> {
        let drop: HashSet<i64> = message_ids.iter().copied().collect();
        self.db.with_conn_mapped(|c| {
            let live = live_entries(c, user_id)?;
            let target: Vec<ContextItem> = live
                .iter()
                .filter(|e| !drop.contains(&e.message_id))
                .map(|e| ContextItem::Stored(e.message_id))
                .collect();
            set_context_in(c, user_id, reason, now, &target)
        })
    }

    /// Applies resolved `Pin`/`Unpin` effects to the active context at once, as one version
    /// (`docs/behaviour.md#applying-effects`, direct tool calls): reason `pin` when a pair was
    /// added, else `unpin`. Effects apply in order with the rules of [`effects::apply`]. Returns
    /// the new version, or `None` when nothing changed.
    ///
    /// # Errors
    /// [`TranscriptError`].
    pub fn apply_effects(
        &self,
        user_id: i64,
        now: Timestamp,
        resolved: &[ResolvedEffect],
    ) -> Result<Option<i64>, TranscriptError> {
        self.db.with_conn_mapped(|c| {
            let current = load_active(c, user_id)?;
            let mut items: Vec<(ContextItem, Message)> = current
                .into_iter()
                .map(|s| (ContextItem::Stored(s.id), s.message))
                .collect();
            let messages: Vec<Message> = items.iter().map(|(_, m)| m.clone()).collect();
            let outcome = effects::apply(&messages, resolved);
            if !outcome.changed() {
                return Ok(None);
            }
            // Rebuild the target: kept stored messages in order, minus removals, plus new pairs.
            let removed: HashSet<usize> = outcome.removed.iter().copied().collect();
            let mut target: Vec<ContextItem> = items
                .drain(..)
                .enumerate()
                .filter(|(i, _)| !removed.contains(i))
                .map(|(_, (item, _))| item)
                .collect();
            target.extend(outcome.added.into_iter().map(ContextItem::New));
            let reason = if outcome.pinned { "pin" } else { "unpin" };
            set_context_in(c, user_id, reason, now, &target)
        })
    }
}

impl TranscriptStore {
    /// Runs the validator ([`crate::validate()`]) on `stored` (the active context as loaded) and,
    /// when it repaired anything, stores the repaired list as one version with reason `repair`
    /// (`docs/behaviour.md#context-repair`). Returns that version (or `None`) and the validation.
    ///
    /// # Errors
    /// [`TranscriptError::Db`].
    pub fn repair(
        &self,
        user_id: i64,
        now: Timestamp,
        stored: &[StoredMessage],
        provider: crate::Provider,
        new_system: impl FnOnce() -> Message,
    ) -> Result<(Option<i64>, crate::Validation), TranscriptError> {
        let messages: Vec<Message> = stored.iter().map(|s| s.message.clone()).collect();
        let validation = crate::validate(&messages, provider, new_system);
        if !validation.changed() {
            return Ok((None, validation));
        }
        let target: Vec<ContextItem> = validation
            .items
            .iter()
            .filter_map(|item| match item {
                crate::ValidatedItem::Original(i) => {
                    stored.get(*i).map(|s| ContextItem::Stored(s.id))
                }
                crate::ValidatedItem::Modified { message, .. }
                | crate::ValidatedItem::Inserted(message) => {
                    Some(ContextItem::New(message.clone()))
                }
            })
            .collect();
        let version = self.set_context(user_id, "repair", now, &target)?;
        Ok((version, validation))
    }
}

fn load_active(c: &Connection, user_id: i64) -> Result<Vec<StoredMessage>, TranscriptError> {
    load(
        c,
        "SELECT m.id, m.role, m.content, m.tool_calls, m.tool_call_id, m.is_error, m.model, m.created_at
         FROM context_entries e JOIN messages m ON m.id = e.message_id
         WHERE e.user_id = ?1 AND e.removed_version IS NULL ORDER BY e.ord",
        params![user_id],
    )
}

fn storable(m: &Message) -> bool {
    m.content.is_some() || !m.tool_calls.is_empty()
}

fn current_version(c: &Connection, user_id: i64) -> rusqlite::Result<Option<i64>> {
    c.query_row(
        "SELECT max(version) FROM context_versions WHERE user_id = ?1",
        [user_id],
        |r| r.get(0),
    )
}

fn live_entries(c: &Connection, user_id: i64) -> rusqlite::Result<Vec<LiveEntry>> {
    let mut st = c.prepare_cached(
        "SELECT id, message_id, ord FROM context_entries
         WHERE user_id = ?1 AND removed_version IS NULL ORDER BY ord",
    )?;
    st.query_map([user_id], |r| {
        Ok(LiveEntry {
            entry_id: r.get(0)?,
            message_id: r.get(1)?,
            ord: r.get(2)?,
        })
    })?
    .collect()
}

fn insert_message(
    tx: &Transaction<'_>,
    user_id: i64,
    m: &Message,
    created_at: Timestamp,
) -> rusqlite::Result<i64> {
    let calls = m.tool_calls_json().map(|v| v.to_string());
    tx.prepare_cached(
        "INSERT INTO messages (user_id, role, content, tool_calls, tool_call_id, is_error, model, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        user_id,
        m.role.as_str(),
        m.content,
        calls,
        m.tool_call_id,
        m.is_error,
        m.model,
        format_db_time(created_at)
    ])?;
    Ok(tx.last_insert_rowid())
}

fn insert_entry(
    tx: &Transaction<'_>,
    user_id: i64,
    message_id: i64,
    ord: i64,
    version: i64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO context_entries (user_id, message_id, ord, added_version) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![user_id, message_id, ord, version])
    .map(|_| ())
}

fn insert_version(
    tx: &Transaction<'_>,
    user_id: i64,
    version: i64,
    reason: &str,
    now: Timestamp,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO context_versions (user_id, version, reason, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![user_id, version, reason, format_db_time(now)],
    )
    .map(|_| ())
}

fn load(
    c: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<StoredMessage>, TranscriptError> {
    type Row = (
        i64,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        bool,
        Option<String>,
        String,
    );
    let mut st = c.prepare_cached(sql)?;
    let rows: Vec<Row> = st
        .query_map(params, |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(
            |(id, role, content, calls, call_id, is_error, model, created)| {
                let corrupt = |reason: String| TranscriptError::Corrupt { id, reason };
                let role = Role::parse(&role).ok_or_else(|| corrupt(format!("role {role}")))?;
                let tool_calls = match calls {
                    None => Vec::new(),
                    Some(text) => {
                        let value: serde_json::Value = serde_json::from_str(&text)
                            .map_err(|e| corrupt(format!("tool_calls: {e}")))?;
                        value
                            .as_array()
                            .map(|a| a.iter().filter_map(ToolCall::from_openai_json).collect())
                            .unwrap_or_default()
                    }
                };
                let created_at = parse_db_time(&created)
                    .ok_or_else(|| corrupt(format!("created_at {created}")))?;
                Ok(StoredMessage {
                    id,
                    message: Message {
                        role,
                        content,
                        tool_calls,
                        tool_call_id: call_id,
                        is_error,
                        model,
                    },
                    created_at,
                })
            },
        )
        .collect()
}

/// A target slot after planning: keep a live entry, or add a new entry at `ord`.
enum Planned<'a> {
    Keep,
    Add { ord: i64, item: &'a ContextItem },
}

fn set_context_in(
    c: &mut Connection,
    user_id: i64,
    reason: &str,
    now: Timestamp,
    target: &[ContextItem],
) -> Result<Option<i64>, TranscriptError> {
    let target: Vec<&ContextItem> = target
        .iter()
        .filter(|item| match item {
            ContextItem::Stored(_) => true,
            ContextItem::New(m) | ContextItem::NewAt(m, _) => storable(m),
        })
        .collect();
    let tx = c.transaction()?;
    let live = live_entries(&tx, user_id)?;
    let by_message: HashMap<i64, &LiveEntry> = live.iter().map(|e| (e.message_id, e)).collect();

    // Greedy: keep live stored messages whose ords increase along the target.
    let mut anchors: Vec<Option<i64>> = vec![None; target.len()]; // ord of kept entries
    let mut last = i64::MIN;
    let mut used = HashSet::new();
    for (i, item) in target.iter().enumerate() {
        if let ContextItem::Stored(mid) = item
            && let Some(e) = by_message.get(mid)
            && e.ord > last
            && used.insert(*mid)
        {
            anchors[i] = Some(e.ord);
            last = e.ord;
        }
    }
    // Place the rest; drop anchors after a gap that has no free ords, and retry.
    let plan = loop {
        match plan_ords(&target, &anchors) {
            Ok(plan) => break plan,
            Err(next_anchor) => anchors[next_anchor] = None,
        }
    };
    let kept: HashSet<i64> = target
        .iter()
        .zip(&anchors)
        .filter_map(|(item, a)| match (item, a) {
            (ContextItem::Stored(mid), Some(_)) => Some(*mid),
            _ => None,
        })
        .collect();
    let removed: Vec<&LiveEntry> = live
        .iter()
        .filter(|e| !kept.contains(&e.message_id))
        .collect();
    let added = plan
        .iter()
        .filter(|p| matches!(p, Planned::Add { .. }))
        .count();
    if removed.is_empty() && added == 0 {
        return Ok(None);
    }
    let version = current_version(&tx, user_id)?.unwrap_or(0) + 1;
    for e in &removed {
        tx.execute(
            "UPDATE context_entries SET removed_version = ?1 WHERE id = ?2",
            params![version, e.entry_id],
        )?;
    }
    for p in &plan {
        if let Planned::Add { ord, item } = p {
            let message_id = match item {
                ContextItem::Stored(mid) => *mid,
                ContextItem::New(m) => insert_message(&tx, user_id, m, now)?,
                ContextItem::NewAt(m, at) => insert_message(&tx, user_id, m, *at)?,
            };
            insert_entry(&tx, user_id, message_id, *ord, version)?;
        }
    }
    insert_version(&tx, user_id, version, reason, now)?;
    tx.commit()?;
    Ok(Some(version))
}

/// Assigns ords to the non-anchored slots. `Err(i)`: the anchor at index `i` closes a gap that
/// has too few free ords.
fn plan_ords<'a>(
    target: &[&'a ContextItem],
    anchors: &[Option<i64>],
) -> Result<Vec<Planned<'a>>, usize> {
    let mut plan = Vec::with_capacity(target.len());
    let mut prev: Option<i64> = None;
    let mut i = 0;
    while i < target.len() {
        if anchors[i].is_some() {
            prev = anchors[i];
            plan.push(Planned::Keep);
            i += 1;
            continue;
        }
        let start = i;
        while i < target.len() && anchors[i].is_none() {
            i += 1;
        }
        let gap = i64::try_from(i - start).unwrap_or(i64::MAX);
        let next = anchors.get(i).copied().flatten();
        let first = match (prev, next) {
            (None, None) => 1,
            (None, Some(b)) => b - gap,
            (Some(a), None) => a + 1,
            (Some(a), Some(b)) => {
                if b - a - 1 < gap {
                    return Err(i);
                }
                a + 1
            }
        };
        for (k, item) in target[start..i].iter().enumerate() {
            plan.push(Planned::Add {
                ord: first + i64::try_from(k).unwrap_or(0),
                item,
            });
        }
    }
    Ok(plan)
}
