//! Reminders while the interface is open (issue 16 point 4): a [`ReminderSource`] is polled
//! about once a second; each due item it hands back appears at once as a reminder line, is
//! highlighted in the Due tab and rings the bell. The model still receives due items at the start
//! of the next turn as before (K5): this only shows them.
//!
//! [`AgendaReminders`] is the in-process source: items already due when the interface opened are
//! not announced again (the first turn surfaces them), every later trigger once per trigger time
//! (a snoozed item fires again). Elroy's `elroy remind` keeps its own record in `state.db`; the
//! composition root can hand this interface that source instead through the same trait.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use elroy_agenda::AgendaStore;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::app::Reminder;

/// Where reminders come from.
pub trait ReminderSource: Send + Sync {
    /// Due items whose trigger time is at or before `now` and that were not handed out yet;
    /// they count as announced once returned. Errors (an unreadable agenda) give no reminders.
    fn take_due(&self, now: Timestamp) -> Vec<Reminder>;
}

/// Reminders from the agenda store, remembered in this process.
pub struct AgendaReminders {
    store: Arc<AgendaStore>,
    tz: TimeZone,
    announced: Mutex<HashSet<(String, Timestamp)>>,
}

impl AgendaReminders {
    /// A source over `store`; items already due at `now` count as announced.
    pub fn new(store: Arc<AgendaStore>, tz: TimeZone, now: Timestamp) -> Self {
        let source = AgendaReminders {
            store,
            tz,
            announced: Mutex::new(HashSet::new()),
        };
        let _ = source.take_due(now);
        source
    }
}

impl ReminderSource for AgendaReminders {
    fn take_due(&self, now: Timestamp) -> Vec<Reminder> {
        let Ok(due) = self.store.due_now(now) else {
            return Vec::new();
        };
        let mut announced = self
            .announced
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = Vec::new();
        for item in due {
            let Some(at) = item.trigger_datetime else {
                continue;
            };
            if announced.insert((item.name.clone(), at)) {
                out.push(Reminder {
                    name: item.name.clone(),
                    text: item.text.clone(),
                    time: at
                        .to_zoned_datetime(self.tz.clone())
                        .strftime("%H:%M")
                        .to_string(),
                });
            }
        }
        out
    }
}

/// A source with nothing to announce (no agenda store).
pub struct NoReminders;

impl ReminderSource for NoReminders {
    fn take_due(&self, _now: Timestamp) -> Vec<Reminder> {
        Vec::new()
    }
}
