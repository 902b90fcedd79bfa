//! [`Announcements`]: which timed due items were announced, in the `due_announcements` table of
//! `state.db` (migration 3 of elroy-db).

use std::sync::Arc;

use elroy_db::rusqlite::{OptionalExtension, params};
use elroy_db::{Db, format_db_time};
use jiff::Timestamp;

use crate::time::format_stored_trigger;
use crate::{AgendaError, DueItem};

/// Who announces: each channel announces an item once, independently of the others, so a
/// reminder printed by a cron `elroy remind` still appears in an open chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// `elroy remind` (one-shot and `--watch`), with `notify_command` and the bell.
    CommandLine,
    /// The chat front ends (full-screen interface, plain REPL).
    Interface,
}

impl Channel {
    /// The stored word: `remind` or `interface`.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::CommandLine => "remind",
            Channel::Interface => "interface",
        }
    }
}

/// The announcement ledger of one user: a row per (item id, trigger instant, channel).
///
/// An item is identified by its stable id (kept by renames) and the trigger instant announced,
/// so a snoozed item (new trigger) is announced again, and completing, deleting or renaming an
/// item needs no clean-up. [`Announcements::claim`] is one `INSERT … ON CONFLICT DO NOTHING`:
/// with any number of processes at once, exactly one wins each announcement.
#[derive(Debug, Clone)]
pub struct Announcements {
    db: Arc<Db>,
    user_id: i64,
}

fn db_error(e: elroy_db::DbError) -> AgendaError {
    AgendaError::from(e)
}

impl Announcements {
    /// The ledger of `user_id` in `db`.
    pub fn new(db: Arc<Db>, user_id: i64) -> Self {
        Announcements { db, user_id }
    }

    /// Whether `item` was announced on `channel` for its current trigger. An item without a
    /// trigger time is never announced (`false`).
    ///
    /// # Errors
    /// Database failures, as text.
    pub fn is_announced(&self, item: &DueItem, channel: Channel) -> Result<bool, AgendaError> {
        let Some(trigger) = item.trigger_datetime else {
            return Ok(false);
        };
        self.db
            .with_conn(|conn| {
                conn.query_row(
                    "SELECT 1 FROM due_announcements
                     WHERE user_id = ?1 AND item_id = ?2 AND trigger_datetime = ?3 AND channel = ?4",
                    params![
                        self.user_id,
                        item.id,
                        format_stored_trigger(trigger),
                        channel.as_str()
                    ],
                    |_| Ok(()),
                )
                .optional()
            })
            .map(|row| row.is_some())
            .map_err(db_error)
    }

    /// Records that `item` is announced on `channel` for its current trigger, at `now`. Returns
    /// `true` when this call made the record (the caller announces), `false` when it existed
    /// already (someone else announced it) or the item has no trigger time.
    ///
    /// # Errors
    /// Database failures, as text.
    pub fn claim(
        &self,
        item: &DueItem,
        channel: Channel,
        now: Timestamp,
    ) -> Result<bool, AgendaError> {
        let Some(trigger) = item.trigger_datetime else {
            return Ok(false);
        };
        self.db
            .with_conn(|conn| {
                conn.execute(
                    "INSERT INTO due_announcements
                       (user_id, item_id, trigger_datetime, channel, announced_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT DO NOTHING",
                    params![
                        self.user_id,
                        item.id,
                        format_stored_trigger(trigger),
                        channel.as_str(),
                        format_db_time(now)
                    ],
                )
            })
            .map(|inserted| inserted == 1)
            .map_err(db_error)
    }

    /// Takes back a claim of `item` on `channel` for its current trigger: the caller could not
    /// show the announcement (its output was closed or failed), so the next run announces it.
    ///
    /// # Errors
    /// Database failures, as text.
    pub fn release(&self, item: &DueItem, channel: Channel) -> Result<(), AgendaError> {
        let Some(trigger) = item.trigger_datetime else {
            return Ok(());
        };
        self.db
            .with_conn(|conn| {
                conn.execute(
                    "DELETE FROM due_announcements
                     WHERE user_id = ?1 AND item_id = ?2 AND trigger_datetime = ?3 AND channel = ?4",
                    params![
                        self.user_id,
                        item.id,
                        format_stored_trigger(trigger),
                        channel.as_str()
                    ],
                )
            })
            .map(|_| ())
            .map_err(db_error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn item(id: i64, trigger: &str) -> DueItem {
        DueItem {
            id,
            name: "Call".into(),
            stem: "Call".into(),
            trigger_datetime: Some(trigger.parse().unwrap()),
            trigger_context: None,
            trigger_raw: Some(trigger.into()),
            text: String::new(),
            recurrence: None,
        }
    }

    #[test]
    fn claims_once_per_item_trigger_and_channel() {
        let db = Arc::new(Db::open_in_memory().unwrap());
        let now: Timestamp = "2026-12-01T09:01:00Z".parse().unwrap();
        let user = db.ensure_user("DEFAULT", now).unwrap();
        let ledger = Announcements::new(Arc::clone(&db), user);
        let call = item(1, "2026-12-01T09:00:00Z");
        assert!(!ledger.is_announced(&call, Channel::CommandLine).unwrap());
        assert!(ledger.claim(&call, Channel::CommandLine, now).unwrap());
        assert!(!ledger.claim(&call, Channel::CommandLine, now).unwrap());
        assert!(ledger.is_announced(&call, Channel::CommandLine).unwrap());
        // Another channel announces on its own.
        assert!(!ledger.is_announced(&call, Channel::Interface).unwrap());
        assert!(ledger.claim(&call, Channel::Interface, now).unwrap());
        // Snoozed: a new trigger is a new announcement; another item is another.
        assert!(
            ledger
                .claim(&item(1, "2026-12-01T09:12:00Z"), Channel::CommandLine, now)
                .unwrap()
        );
        assert!(
            ledger
                .claim(&item(2, "2026-12-01T09:00:00Z"), Channel::CommandLine, now)
                .unwrap()
        );
        let contextual = DueItem {
            trigger_datetime: None,
            ..call
        };
        assert!(
            !ledger
                .claim(&contextual, Channel::CommandLine, now)
                .unwrap()
        );
    }
}
