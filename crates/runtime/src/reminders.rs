//! Reminders: what is due and not yet announced, the announcement ledger, the next
//! trigger time, and snoozing — one API for `elroy remind`, `elroy due` and the chat interfaces.
//!
//! ```text
//! let reminders = runtime.reminders()?;                    // opens the agenda and state.db
//! for a in reminders.claim_due(now, Channel::Interface)? { show(&a.line) }   // each once
//! let wake = reminders.next_trigger(now)?;                 // sleep until then (bounded)
//! ```
//!
//! An announcement is claimed in `state.db` before it is shown ([`Reminders::claim_due`], or
//! [`Reminders::due_announcements`] then [`Reminders::mark_announced`]), so two processes on the
//! same channel never both show it. Channels are independent: an item announced by a cron
//! `elroy remind` still appears once in an open chat.

use std::sync::Arc;

use elroy_agenda::{AgendaError, AgendaStore, Announcements, DueItem};
use elroy_core::{
    CallObserver, Capabilities, ObservedCall, TimeContext, ToolContext, ToolError, ToolResult,
    UserId,
};
use jiff::Timestamp;

pub use elroy_agenda::Channel;

use crate::{Runtime, RuntimeError};

/// The name a snooze is recorded under in the versioned home (`snooze_due_item: agenda/X.md`).
pub const SNOOZE_CHANGE: &str = "snooze_due_item";

/// The name under which `elroy remind` records moving a repeating item to its next occurrence
/// (`next_occurrence: agenda/X.md`), which `elroy undo` reverts.
pub const NEXT_OCCURRENCE_CHANGE: &str = "next_occurrence";

/// The most occurrences counted for one announcement (a rule every minute after a long sleep).
const MISSED_COUNT_LIMIT: u16 = 10_000;

/// A timed due item to announce, with the texts every front end shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The item (its `trigger_datetime` is the trigger announced).
    pub item: DueItem,
    /// One line: `⏰ 09:00 Call the dentist — Ask about the invoice` (time in the configured
    /// zone, `YYYY-MM-DD HH:MM` when not today; the text on one line; no ` — …` without text).
    pub line: String,
    /// The notification title: `09:00 Call the dentist`.
    pub title: String,
    /// The notification body: the item's text (may be empty).
    pub body: String,
    /// The trigger time as shown: `09:00` today, `2026-12-02 09:00` on another day (configured zone).
    pub when: String,
    /// For a repeating item: how many of its occurrences have passed since its trigger (1 when
    /// only this one; more after the machine was off), announced in this one line.
    pub occurrences: usize,
}

/// Reminders of the runtime's user: the agenda store, the announcement ledger and the zone.
#[derive(Debug, Clone)]
pub struct Reminders {
    agenda: Arc<AgendaStore>,
    ledger: Announcements,
    time: TimeContext,
}

impl Runtime {
    /// The reminders of this runtime's user: opens the agenda store, `state.db` and the user.
    ///
    /// # Errors
    /// [`RuntimeError::Store`] when one of them cannot be opened.
    pub fn reminders(&self) -> Result<Reminders, RuntimeError> {
        let open = |what: &str| {
            elroy_core::ServiceError::new(std::io::Error::other(format!("{what} is not available")))
        };
        let agenda = self
            .services
            .try_get::<AgendaStore>()?
            .ok_or_else(|| open("the agenda"))?;
        let db = self
            .services
            .try_get::<elroy_db::Db>()?
            .ok_or_else(|| open("state.db"))?;
        let user = self
            .services
            .try_get::<UserId>()?
            .ok_or_else(|| open("the user"))?;
        Ok(Reminders {
            agenda,
            ledger: Announcements::new(db, user.0),
            time: self.time.clone(),
        })
    }

    /// `elroy due snooze NAME WHEN`: moves the active timed due item `name` to `when`, parsed
    /// like `create_due_item`'s `trigger_time` (`10m`, `in 2 hours`, `tomorrow 9am`, an ISO time)
    /// against this runtime's clock and zone. Only `trigger_datetime` changes. The change is
    /// recorded like a tool call (one versioned-home commit `snooze_due_item: agenda/X.md`, which
    /// `elroy undo` reverts). The result reads like a tool's: `is_error` with the message of
    /// [`elroy_agenda::parse_trigger_time`] or [`AgendaStore::snooze_due_item`].
    pub fn snooze_due_item(&self, name: &str, when: &str) -> ToolResult {
        let ctx = self.tool_context(Capabilities { can_restart: false });
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), name.into());
        arguments.insert("trigger_time".into(), when.into());
        let observed = self.history.call_starting(&ctx, SNOOZE_CHANGE, &arguments);
        let outcome = (|| -> Result<String, ToolError> {
            let now = self.time.now_local();
            // The parser's message is Elroy's (create_due_item's); a person snoozing is told the
            // spoken forms too.
            let trigger = elroy_agenda::parse_trigger_time_with(when, &now, self.time.day_start)
                .map_err(|e| match e {
                    elroy_agenda::TriggerTimeError::NotATime(_) => ToolError::new(format!(
                        "{e}; or as people say it: 10m, 2h, tonight at 9, tomorrow 9am, friday 17:00"
                    )),
                    elroy_agenda::TriggerTimeError::CannotBeMeant(_) => ToolError::new(e.to_string()),
                })?;
            let agenda = ctx.services.require::<AgendaStore>()?;
            let item = agenda
                .snooze_due_item(name, trigger, now.timestamp())
                .map_err(|e| e.to_tool_error())?;
            let repeats = agenda
                .due_item(&item.name)
                .ok()
                .and_then(|d| d.repeats())
                .map(|rule| format!(" Only this occurrence moves; it repeats {rule}."))
                .unwrap_or_default();
            // The due time as create_due_item confirms it (`Tue 2026-12-01 08:10 +00:00`).
            Ok(format!(
                "Due item '{}' snoozed until {}.{repeats}",
                item.name,
                elroy_agenda::format_spoken_instant(trigger, &self.time.tz)
            ))
        })();
        finish_recorded(&ctx, observed, outcome)
    }
}

impl Runtime {
    /// `elroy due done NAME [--comment TEXT]`: the `complete_due_item` tool called directly (a
    /// repeating item completes this occurrence and moves to the next), one versioned-home commit.
    pub async fn complete_due_item(&self, name: &str, closing_comment: Option<&str>) -> ToolResult {
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), name.into());
        if let Some(comment) = closing_comment {
            arguments.insert("closing_comment".into(), comment.into());
        }
        let raw = serde_json::Value::Object(arguments).to_string();
        self.call_tool("complete_due_item", Some(&raw)).await
    }

    /// `elroy due done NAME --series`: completes the active due item `name` whatever its rule
    /// (a repeating item ends; a one-off item is completed as by `complete_due_item`), recorded
    /// as one versioned-home commit (`complete_due_item: agenda/X.md`).
    pub fn complete_due_series(&self, name: &str, closing_comment: Option<&str>) -> ToolResult {
        let ctx = self.tool_context(Capabilities { can_restart: false });
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), name.into());
        let observed = self
            .history
            .call_starting(&ctx, "complete_due_item", &arguments);
        let outcome = (|| -> Result<String, ToolError> {
            let agenda = ctx.services.require::<AgendaStore>()?;
            let repeats = agenda.due_item(name).ok().and_then(|d| d.repeats());
            agenda
                .complete_due_item(name, closing_comment)
                .map_err(|e| e.to_tool_error())?;
            Ok(match repeats {
                Some(rule) => format!(
                    "Due item '{name}' has been marked as completed; it no longer repeats ({rule})."
                ),
                None => format!("Due item '{name}' has been marked as completed."),
            })
        })();
        finish_recorded(&ctx, observed, outcome)
    }

    /// [`Reminders::occurrence_announced`] recorded as one versioned-home commit
    /// (`next_occurrence: agenda/X.md`, which `elroy undo` reverts). `Ok(None)`: nothing moved.
    ///
    /// # Errors
    /// Agenda failures.
    pub fn record_occurrence_announced(
        &self,
        reminders: &Reminders,
        announcement: &Announcement,
        now: Timestamp,
    ) -> Result<Option<elroy_agenda::Occurrence>, AgendaError> {
        if announcement.item.recurrence.is_none() {
            return Ok(None);
        }
        let ctx = self.tool_context(Capabilities { can_restart: false });
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), announcement.item.name.clone().into());
        let observed = self
            .history
            .call_starting(&ctx, NEXT_OCCURRENCE_CHANGE, &arguments);
        let outcome = reminders.occurrence_announced(announcement, now);
        let result = ToolResult {
            content: String::new(),
            is_error: outcome.is_err(),
            effects: Vec::new(),
            io_kind: outcome.as_ref().err().and_then(AgendaError::io_kind),
        };
        if let Some(note) = observed.finished(&ctx, &result) {
            tracing::warn!("{note}");
        }
        outcome
    }
}

impl Reminders {
    /// The timed due items whose trigger is at or before `now` and that were not announced on
    /// `channel` for that trigger, by trigger time then id. Reads only; see
    /// [`Reminders::mark_announced`].
    ///
    /// # Errors
    /// Agenda or database failures.
    pub fn due_announcements(
        &self,
        now: Timestamp,
        channel: Channel,
    ) -> Result<Vec<Announcement>, AgendaError> {
        let mut out = Vec::new();
        for item in self.agenda.due_now(now)? {
            if !self.ledger.is_announced(&item, channel)? {
                out.push(self.announcement(item, now));
            }
        }
        Ok(out)
    }

    /// Records `announcement` as announced on `channel` at `now`. `true` when this caller made
    /// the record and should show it; `false` when another process (or an earlier call) did.
    ///
    /// # Errors
    /// Database failures.
    pub fn mark_announced(
        &self,
        announcement: &Announcement,
        channel: Channel,
        now: Timestamp,
    ) -> Result<bool, AgendaError> {
        self.ledger.claim(&announcement.item, channel, now)
    }

    /// Takes back the claim of `announcement` on `channel` (it could not be shown): the next
    /// run announces it again.
    ///
    /// # Errors
    /// Database failures.
    pub fn release(
        &self,
        announcement: &Announcement,
        channel: Channel,
    ) -> Result<(), AgendaError> {
        self.ledger.release(&announcement.item, channel)
    }

    /// [`Reminders::due_announcements`] then [`Reminders::mark_announced`] for each: the
    /// announcements this caller won, to be shown now (each exactly once across processes).
    ///
    /// # Errors
    /// Agenda or database failures.
    pub fn claim_due(
        &self,
        now: Timestamp,
        channel: Channel,
    ) -> Result<Vec<Announcement>, AgendaError> {
        let mut won = Vec::new();
        for announcement in self.due_announcements(now, channel)? {
            if self.mark_announced(&announcement, channel, now)? {
                won.push(announcement);
            }
        }
        Ok(won)
    }

    /// The earliest trigger of an active timed due item after `now` (`None`: none). A watcher
    /// sleeps until then, bounded by a short poll so that changes by other processes, hand edits
    /// and machine sleep are noticed.
    ///
    /// # Errors
    /// Agenda failures.
    pub fn next_trigger(&self, now: Timestamp) -> Result<Option<Timestamp>, AgendaError> {
        self.agenda.next_trigger_after(now)
    }

    /// After `elroy remind` showed `announcement`: a repeating item moves to its first
    /// occurrence after `now` (or is completed when its rule has ended); nothing for a one-off
    /// item. Only the process whose claim won calls this; the store compares the trigger under
    /// its lock, so the item moves once.
    ///
    /// # Errors
    /// Agenda failures.
    pub fn occurrence_announced(
        &self,
        announcement: &Announcement,
        now: Timestamp,
    ) -> Result<Option<elroy_agenda::Occurrence>, AgendaError> {
        let Some(trigger) = announcement.item.trigger_datetime else {
            return Ok(None);
        };
        if announcement.item.recurrence.is_none() {
            return Ok(None);
        }
        self.agenda
            .occurrence_announced(&announcement.item.stem, trigger, now, &self.time.tz)
    }

    /// The texts of `item` announced at `now` (see [`Announcement`]).
    pub fn announcement(&self, item: DueItem, now: Timestamp) -> Announcement {
        let tz = &self.time.tz;
        let when = item.trigger_datetime.map_or_else(String::new, |t| {
            let local = t.to_zoned_datetime(tz.clone());
            if local.date() == now.to_zoned_datetime(tz.clone()).date() {
                local.strftime("%H:%M").to_string()
            } else {
                local.strftime("%Y-%m-%d %H:%M").to_string()
            }
        });
        // One line each, nothing a terminal would take as a command: control characters in a
        // name or text (a model or a hand edit can write ESC, BEL or line breaks) become spaces.
        let printable = |text: &str| -> String {
            text.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect()
        };
        let title = format!("{when} {}", printable(&item.name).trim());
        let body = item.text.clone();
        let one_line = printable(&body)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let mut line = if one_line.is_empty() {
            format!("⏰ {title}")
        } else {
            format!("⏰ {title} — {one_line}")
        };
        // Missed occurrences (the machine was off): one line with the count, not one each.
        let occurrences = match (item.repetition(), item.trigger_datetime) {
            (Some(rule), Some(trigger)) if trigger <= now => rule
                .between(trigger, now, tz, MISSED_COUNT_LIMIT)
                .map_or(1, |o| o.len().max(1)),
            _ => 1,
        };
        if occurrences > 1 {
            let more = if occurrences >= usize::from(MISSED_COUNT_LIMIT) {
                "+"
            } else {
                ""
            };
            line.push_str(&format!(
                " ({occurrences}{more} occurrences since then, {})",
                item.repeats().unwrap_or_default()
            ));
        }
        Announcement {
            item,
            line,
            title,
            body,
            when,
            occurrences,
        }
    }
}

/// A command's outcome as a tool result (`Err` is a tool error), told to the history observer
/// that recorded it; the observer's note (e.g. that the change was saved but not recorded) follows
/// the text after a blank line, as for a tool call through the registry.
fn finish_recorded(
    ctx: &ToolContext,
    observed: Box<dyn ObservedCall>,
    outcome: Result<String, ToolError>,
) -> ToolResult {
    let (content, is_error, io_kind) = match outcome {
        Ok(content) => (content, false, None),
        Err(e) => (e.message().to_owned(), true, e.io_kind()),
    };
    let mut result = ToolResult {
        content,
        is_error,
        effects: Vec::new(),
        io_kind,
    };
    if let Some(note) = observed.finished(ctx, &result) {
        result.content.push_str("\n\n");
        result.content.push_str(&note);
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn runtime(home: &std::path::Path, now: &str) -> Runtime {
        let options = elroy_config::LoadOptions {
            home: Some(home.to_path_buf()),
            cwd: home.to_path_buf(),
            user_dir: Some(home.to_path_buf()),
            ..elroy_config::LoadOptions::default()
        };
        let mut config = elroy_config::Config::load(&options).unwrap();
        config.now = Some(now.parse().unwrap());
        config.timezone = jiff::tz::TimeZone::UTC;
        Runtime::open_with(config, crate::logged_warnings()).unwrap()
    }

    /// The API the interfaces use: what is due and not announced on a channel, claiming it
    /// (once), channels independent, the next trigger; a snooze makes it due again later.
    #[tokio::test]
    async fn interface_channel_announces_once_independently_of_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".elroy");
        let rt = runtime(&home, "2026-12-01T08:00:00Z");
        for (name, when) in [("Dentist", "09:00"), ("Rent", "tomorrow 9am")] {
            let args =
                format!(r#"{{"name":"{name}","text":"Ask\nabout it","trigger_time":"{when}"}}"#);
            let r = rt.call_tool("create_due_item", Some(&args)).await;
            assert!(!r.is_error, "{}", r.content);
        }
        let reminders = rt.reminders().unwrap();
        let at = |s: &str| s.parse::<Timestamp>().unwrap();
        assert!(
            reminders
                .due_announcements(at("2026-12-01T08:59:59Z"), Channel::Interface)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            reminders.next_trigger(at("2026-12-01T08:00:00Z")).unwrap(),
            Some(at("2026-12-01T09:00:00Z"))
        );
        let now = at("2026-12-01T09:00:30Z");
        let due = reminders
            .due_announcements(now, Channel::Interface)
            .unwrap();
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].line, "⏰ 09:00 Dentist — Ask about it");
        assert_eq!(
            (due[0].title.as_str(), due[0].body.as_str()),
            ("09:00 Dentist", "Ask\nabout it")
        );
        assert!(
            reminders
                .mark_announced(&due[0], Channel::Interface, now)
                .unwrap()
        );
        assert!(
            !reminders
                .mark_announced(&due[0], Channel::Interface, now)
                .unwrap()
        );
        assert!(
            reminders
                .claim_due(now, Channel::Interface)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            reminders
                .claim_due(now, Channel::CommandLine)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            reminders.next_trigger(now).unwrap(),
            Some(at("2026-12-02T09:00:00Z"))
        );
        // Another day's trigger shows its date.
        let later = at("2026-12-02T10:00:00Z");
        let rent = reminders.claim_due(later, Channel::Interface).unwrap();
        assert_eq!(rent[0].line, "⏰ 09:00 Rent — Ask about it");
        let next_day = reminders.claim_due(at("2026-12-03T10:00:00Z"), Channel::CommandLine);
        assert_eq!(
            next_day.unwrap()[0].line,
            "⏰ 2026-12-02 09:00 Rent — Ask about it"
        );
        // A snooze is a new trigger: due again, once, on every channel.
        let snoozed = rt.snooze_due_item("Dentist", "in 10 minutes");
        assert!(!snoozed.is_error, "{}", snoozed.content);
        assert_eq!(
            snoozed.content,
            "Due item 'Dentist' snoozed until Tue 2026-12-01 08:10 +00:00."
        );
        let again = reminders
            .claim_due(at("2026-12-01T08:10:00Z"), Channel::Interface)
            .unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].title, "08:10 Dentist");
    }
}
