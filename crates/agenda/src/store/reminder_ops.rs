//! What the reminder commands read and change: every active item with its id (for
//! `elroy agenda` and `elroy due`), the next trigger time (for `elroy remind --watch`), and
//! snoozing (a new `trigger_datetime`, nothing else).

use elroy_markdown::Value;
use jiff::Timestamp;
use jiff::civil::Date;

use super::matching::{active_due, active_items, find_due};
use super::{AgendaStore, ItemRef, with_front_matter};
use crate::db_index::Query;
use crate::item::Item;
use crate::time::{format_python_utc, format_stored_trigger};
use crate::{AgendaError, Kind};

impl AgendaStore {
    /// The active items of `kind` (any kind when `None`) dated between `dates` (inclusive; any
    /// date, or none, when `None`), with their stable ids, by file name. The filter runs in the
    /// index's SQL (only the rows it keeps are stat'ed; a file is read only when its stat
    /// changed); the kept items are read whole (checklists, updates). Files with invalid front
    /// matter are skipped (see [`AgendaStore::broken_files`]).
    ///
    /// # Errors
    /// Lock, directory or read failures.
    pub fn active_items_with_ids(
        &self,
        kind: Option<Kind>,
        dates: Option<(Date, Date)>,
    ) -> Result<Vec<(i64, Item)>, AgendaError> {
        let query = match (kind, dates) {
            (_, Some((first, last))) => Query::Dates(first, last),
            (Some(Kind::Due), None) => Query::ActiveDue,
            _ => Query::All,
        };
        self.locked(|| {
            let snap = self.query(query)?;
            active_items(&snap)
                .filter(|i| kind.is_none_or(|k| i.kind() == k))
                .filter(|i| {
                    dates
                        .is_none_or(|(first, last)| i.date.is_some_and(|d| d >= first && d <= last))
                })
                .map(|i| Ok((self.id_of(&i.stem), self.fresh(&i.stem)?)))
                .collect()
        })
    }

    /// Active plain items whose `date` is present but not a `YYYY-MM-DD` date, with the value
    /// as written: they are never listed for a day (`docs/formats.md#agenda-item-keys`), so `elroy
    /// agenda` names them. Only the rows without a date are selected (an index of migration 6).
    ///
    /// # Errors
    /// Lock, directory or read failures.
    pub fn items_with_unreadable_dates(&self) -> Result<Vec<(Item, String)>, AgendaError> {
        self.locked(|| {
            let snap = self.query(Query::Undated)?;
            let mut out = Vec::new();
            for view in active_items(&snap).filter(|i| i.kind() == Kind::Agenda && i.date.is_none())
            {
                let item = self.fresh(&view.stem)?;
                let raw = match item.front_matter().get("date") {
                    None | Some(Value::Null) => continue,
                    Some(Value::String(s)) if s.trim().is_empty() => continue,
                    Some(value) => value.display_short(),
                };
                out.push((item, raw));
            }
            Ok(out)
        })
    }

    /// The earliest trigger of an active timed due item that is later than `after`, or `None`.
    /// What `elroy remind --watch` sleeps until.
    ///
    /// # Errors
    /// Lock or directory failures.
    pub fn next_trigger_after(&self, after: Timestamp) -> Result<Option<Timestamp>, AgendaError> {
        self.locked(|| {
            Ok(active_due(&self.query(Query::ActiveDue)?)
                .filter_map(|i| i.trigger_datetime)
                .filter(|t| *t > after)
                .min())
        })
    }

    /// Snoozes the active due item called `name` (D6 matching, as `complete_due_item`): sets its
    /// `trigger_datetime` to `trigger` (stored UTC) and changes nothing else in the file, so
    /// Elroy 0.5.0 still reads it. `now` guards against a trigger in the past.
    ///
    /// # Errors
    /// `Active due item '{name}' not found. Active due items: …`; `'{name}' has no trigger time
    /// (it is a contextual due item), so it cannot be snoozed`; the past-time message of
    /// `create_due_item`; write failures.
    pub fn snooze_due_item(
        &self,
        name: &str,
        trigger: Timestamp,
        now: Timestamp,
    ) -> Result<ItemRef, AgendaError> {
        if trigger < now {
            return Err(AgendaError::new(format!(
                "Attempted to snooze a due item to {}, which is in the past. The current time is {}",
                format_python_utc(trigger),
                format_python_utc(now)
            )));
        }
        self.locked(|| {
            let snap = self.query(Query::DueNamed(name))?;
            let Some(found) = find_due(&snap, name) else {
                return Err(self.due_not_found_active(name));
            };
            let item = self.fresh(&found.stem)?;
            if item.trigger_raw.is_none() {
                return Err(AgendaError::new(format!(
                    "'{name}' has no trigger time (it is a contextual due item), so it cannot be \
                     snoozed"
                )));
            }
            let mut front = item.front_matter().clone();
            front.insert(
                "trigger_datetime",
                Value::Timestamp(format_stored_trigger(trigger)),
            );
            self.write(&item.stem, &with_front_matter(&item, &front))?;
            Ok(self.item_ref(&item))
        })
    }
}
