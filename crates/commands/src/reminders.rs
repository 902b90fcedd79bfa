//! Reminders for the chat front ends: the due items that come due
//! while an interface is open, each shown once — across every interface open on the home, since
//! the claim is recorded in `state.db` on the `interface` channel of the announcement ledger
//! (`elroy_runtime::reminders`), the same record `elroy remind` uses on its own channel.
//!
//! Items already due when the interface opens are claimed silently: the model surfaces them at
//! the start of the first turn (K5, unchanged), so they are not shown twice.

use elroy_runtime::reminders::{Announcement, Channel, Reminders};
use jiff::Timestamp;

use crate::ChatSession;

/// The due items of a chat's home, claimed on the `interface` channel.
#[derive(Debug, Clone)]
pub struct InterfaceReminders {
    reminders: Reminders,
}

impl InterfaceReminders {
    /// The reminders of `chat`'s home; what is already due at `now` counts as announced (it is
    /// the first turn's). `None` when the agenda store or `state.db` cannot be opened (the
    /// reason is logged): an interface then shows no reminders, and turns still get due items.
    pub fn open(chat: &ChatSession, now: Timestamp) -> Option<Self> {
        let reminders = match chat.runtime().reminders() {
            Ok(reminders) => reminders,
            Err(e) => {
                tracing::warn!("reminders are off in this interface: {e}");
                return None;
            }
        };
        let this = InterfaceReminders { reminders };
        let _ = this.take_due(now);
        Some(this)
    }

    /// The items whose trigger is at or before `now` and that no interface has shown yet, claimed
    /// now (each is returned by exactly one call, in one process). A failure is logged and gives
    /// none; the next call tries again.
    pub fn take_due(&self, now: Timestamp) -> Vec<Announcement> {
        match self.reminders.claim_due(now, Channel::Interface) {
            Ok(won) => won,
            Err(e) => {
                tracing::warn!("reminders: {e}");
                Vec::new()
            }
        }
    }
}

/// Where a front end's reminders come from: [`InterfaceReminders`] on a home, [`NoReminders`]
/// without an agenda store, a scripted source in tests. The line chat prints each
/// announcement's `line` above its prompt; the full-screen interface shows it as a reminder
/// line, highlights the item in its Due tab and rings the bell.
pub trait ReminderSource: Send + Sync {
    /// The due items whose trigger is at or before `now` and that were not handed out yet; they
    /// count as announced once returned. Failures (an unreadable agenda) give none.
    fn take_due(&self, now: Timestamp) -> Vec<Announcement>;
}

impl ReminderSource for InterfaceReminders {
    fn take_due(&self, now: Timestamp) -> Vec<Announcement> {
        InterfaceReminders::take_due(self, now)
    }
}

/// A source with nothing to announce (no agenda store).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoReminders;

impl ReminderSource for NoReminders {
    fn take_due(&self, _now: Timestamp) -> Vec<Announcement> {
        Vec::new()
    }
}
