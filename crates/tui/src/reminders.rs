//! Reminders while the interface is open: a [`ReminderSource`] is polled
//! about once a second; each due item it hands back appears at once as a reminder line, is
//! highlighted in the Due tab and rings the bell. The model still receives due items at the start
//! of the next turn as before (K5): this only shows them.
//!
//! [`InterfaceReminders`] (elroy-commands) is the source the interface uses: claimed in
//! `state.db` on the `interface` channel, so an item is shown once across every interface open on
//! the home (`elroy remind` announces on its own channel).

use elroy_commands::InterfaceReminders;
use jiff::Timestamp;

use crate::app::Reminder;

/// Where reminders come from.
pub trait ReminderSource: Send + Sync {
    /// Due items whose trigger time is at or before `now` and that were not handed out yet;
    /// they count as announced once returned. Errors (an unreadable agenda) give no reminders.
    fn take_due(&self, now: Timestamp) -> Vec<Reminder>;
}

impl ReminderSource for InterfaceReminders {
    fn take_due(&self, now: Timestamp) -> Vec<Reminder> {
        InterfaceReminders::take_due(self, now)
            .into_iter()
            .map(|a| Reminder {
                name: a.item.name.clone(),
                text: a.body,
                time: a.when,
            })
            .collect()
    }
}

/// A source with nothing to announce (no agenda store).
pub struct NoReminders;

impl ReminderSource for NoReminders {
    fn take_due(&self, _now: Timestamp) -> Vec<Reminder> {
        Vec::new()
    }
}
