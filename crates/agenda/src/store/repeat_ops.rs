//! The life cycle of a repeating due item: each occurrence announced once moves
//! `trigger_datetime` to the next; completing an occurrence schedules the next; completing the
//! series (or deleting the item) ends it; a snooze moves only the current occurrence
//! ([`AgendaStore::snooze_due_item`], unchanged).

use elroy_markdown::Value;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::matching::find_due;
use super::{AgendaStore, ItemRef};
use crate::db_index::Query;
use crate::item::Item;
use crate::time::format_stored_trigger;
use crate::{AgendaError, Recurrence};

/// What became of a repeating item's occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// The item.
    pub item: ItemRef,
    /// The next occurrence now in `trigger_datetime`; `None` when the item was not repeating or
    /// its rule has ended (then the item is completed).
    pub next: Option<Timestamp>,
    /// The rule in words, for a repeating item.
    pub rule: Option<String>,
}

fn rule_of(item: &Item) -> Option<Recurrence> {
    item.recurrence
        .as_deref()
        .and_then(|text| Recurrence::from_text(text).ok())
}

/// The first occurrence strictly after `after`.
fn next_after(
    rule: &Recurrence,
    after: Timestamp,
    tz: &TimeZone,
) -> Result<Option<Timestamp>, AgendaError> {
    let from = Timestamp::from_second(after.as_second() + 1)
        .map_err(|e| AgendaError::new(e.to_string()))?;
    rule.next_at_or_after(from, tz).map_err(AgendaError::from)
}

impl AgendaStore {
    /// Moves `item` to its next occurrence after `after`, or completes it when the rule has
    /// ended; the rest of the file stays.
    fn advance(
        &self,
        item: &Item,
        rule: &Recurrence,
        after: Timestamp,
        tz: &TimeZone,
        closing_comment: Option<&str>,
    ) -> Result<Option<Timestamp>, AgendaError> {
        let next = next_after(rule, after, tz)?;
        let mut front = item.front_matter().clone();
        match next {
            Some(next) => {
                front.insert(
                    "trigger_datetime",
                    Value::Timestamp(format_stored_trigger(next)),
                );
                if let Some(comment) = closing_comment {
                    front.insert("closing_comment", comment);
                }
            }
            None => {
                front.insert("completed", true);
                front.insert("status", "completed");
                front.insert(
                    "closing_comment",
                    closing_comment.map_or(Value::Null, Value::from),
                );
                super::normalize_trigger(&mut front, item);
            }
        }
        self.write_front_matter(item, &front)?;
        Ok(next)
    }

    /// After `elroy remind` announced the occurrence `announced` of the item `stem`: a repeating
    /// item moves to its first occurrence after `now` (occurrences missed meanwhile were counted
    /// in that one announcement), or is completed when its rule has ended. Nothing happens when
    /// the item is not repeating, is gone, or its `trigger_datetime` is no longer `announced`
    /// (another process moved it first: compare and set under the lock).
    ///
    /// # Errors
    /// Lock, read or write failures.
    pub fn occurrence_announced(
        &self,
        stem: &str,
        announced: Timestamp,
        now: Timestamp,
        tz: &TimeZone,
    ) -> Result<Option<Occurrence>, AgendaError> {
        self.locked(|| {
            let Ok(item) = self.fresh(stem) else {
                return Ok(None);
            };
            if !item.is_active() || item.trigger_datetime != Some(announced) {
                return Ok(None);
            }
            let Some(rule) = rule_of(&item) else {
                return Ok(None);
            };
            let next = self.advance(&item, &rule, now.max(announced), tz, None)?;
            Ok(Some(Occurrence {
                item: self.item_ref(&item),
                next,
                rule: Some(rule.describe()),
            }))
        })
    }

    /// `complete_due_item` / `elroy due done`: a repeating item completes the
    /// occurrence nearest to `now` and keeps the next one in `trigger_datetime` (the comment is
    /// kept as `closing_comment`): an overdue trigger moves to the first occurrence after `now`;
    /// a coming trigger nearer than the last passed occurrence (done early) moves to the one
    /// after it; otherwise the passed occurrence was the one (announced, so the trigger already
    /// moved on) and the trigger stays. A one-off item, or `series`, completes the item as
    /// [`AgendaStore::complete_due_item`] does.
    ///
    /// # Errors
    /// As [`AgendaStore::complete_due_item`].
    pub fn complete_due_occurrence(
        &self,
        name: &str,
        closing_comment: Option<&str>,
        series: bool,
        now: Timestamp,
        tz: &TimeZone,
    ) -> Result<Occurrence, AgendaError> {
        let repeating = self.locked(|| {
            let snap = self.query(Query::DueNamed(name))?;
            let Some(found) = find_due(&snap, name) else {
                return Err(self.due_not_found_active(name));
            };
            let item = self.fresh(&found.stem)?;
            let Some(rule) = rule_of(&item).filter(|_| !series) else {
                return Ok(None);
            };
            // "This occurrence" is the one nearest to now: an overdue trigger; else, when an
            // occurrence passed more recently than the trigger is ahead (it was announced and
            // `elroy remind` already moved the trigger on), that one, and the trigger stays;
            // else the coming trigger (done early), which is skipped.
            let next = match item.trigger_datetime {
                Some(trigger) if trigger > now => {
                    let window = trigger.as_second() - now.as_second();
                    let since = Timestamp::from_second(now.as_second() - window)
                        .map_err(|e| AgendaError::new(e.to_string()))?;
                    let recent = rule.between(since, now, tz, 1)?;
                    if recent.is_empty() {
                        self.advance(&item, &rule, trigger, tz, closing_comment)?
                    } else {
                        if let Some(comment) = closing_comment {
                            let mut front = item.front_matter().clone();
                            front.insert("closing_comment", comment);
                            super::normalize_trigger(&mut front, &item);
                            self.write_front_matter(&item, &front)?;
                        }
                        Some(trigger)
                    }
                }
                _ => self.advance(&item, &rule, now, tz, closing_comment)?,
            };
            Ok(Some(Occurrence {
                item: self.item_ref(&item),
                next,
                rule: Some(rule.describe()),
            }))
        })?;
        match repeating {
            Some(occurrence) => Ok(occurrence),
            None => Ok(Occurrence {
                item: self.complete_due_item(name, closing_comment)?,
                next: None,
                rule: None,
            }),
        }
    }
}
