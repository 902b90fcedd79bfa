//! The due list: every front end's list of active due items.

use elroy_agenda::{AgendaError, AgendaStore, DueItem, split_updates};
use elroy_core::TimeContext;
use jiff::Timestamp;

use super::time::{due_time, one_line, relative};

/// The active due items at one instant, in the order every front end shows them.
#[derive(Debug, Clone, Default)]
pub struct DueList {
    /// Items with a trigger time, earliest first (then by name).
    pub timed: Vec<TimedDue>,
    /// Items without a readable trigger time (a context trigger, or a time elroy cannot read),
    /// by name.
    pub contextual: Vec<ContextDue>,
    /// Items whose `trigger_datetime` elroy cannot read: they never fire (each is also in
    /// `contextual`).
    pub unreadable: Vec<UnreadableTrigger>,
}

/// A due item with a trigger time.
#[derive(Debug, Clone)]
pub struct TimedDue {
    /// The item as stored.
    pub item: DueItem,
    /// Its trigger.
    pub at: Timestamp,
    /// The trigger as a person reads it ([`due_time`]).
    pub when: String,
    /// The distance from now ([`relative`]: `in 25 min`, `overdue 25 min`).
    pub relative: String,
    /// The trigger is at or before now.
    pub overdue: bool,
    /// A repeating item's rule in words (`every weekday at 09:00`).
    pub repeats: Option<String>,
    /// The main text (before `## Updates`) on one line.
    pub summary: String,
}

/// A due item without a readable trigger time.
#[derive(Debug, Clone)]
pub struct ContextDue {
    /// The item as stored.
    pub item: DueItem,
    /// When it applies: its `trigger_context`, else the unreadable `trigger_datetime` as written,
    /// on one line.
    pub context: String,
    /// The main text (before `## Updates`) on one line.
    pub summary: String,
}

/// A due item whose `trigger_datetime` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableTrigger {
    /// The item's file stem (`agenda/{stem}.md`).
    pub stem: String,
    /// The `trigger_datetime` as written, on one line.
    pub raw: String,
}

impl DueList {
    /// Whether there is no active due item.
    pub fn is_empty(&self) -> bool {
        self.timed.is_empty() && self.contextual.is_empty()
    }

    /// `items` sorted and described at `time`'s clock and zone.
    pub fn from_items(items: Vec<DueItem>, time: &TimeContext) -> DueList {
        let now = time.now();
        let mut list = DueList::default();
        for item in items {
            let summary = one_line(split_updates(&item.text).0);
            match item.trigger_datetime {
                Some(at) => list.timed.push(TimedDue {
                    at,
                    when: due_time(at, &time.tz),
                    relative: relative(at, now),
                    overdue: at <= now,
                    repeats: item.repeats(),
                    summary,
                    item,
                }),
                None => {
                    if let Some(raw) = &item.trigger_raw {
                        list.unreadable.push(UnreadableTrigger {
                            stem: item.stem.clone(),
                            raw: one_line(raw),
                        });
                    }
                    let context = item
                        .trigger_context
                        .as_deref()
                        .or(item.trigger_raw.as_deref())
                        .map(one_line)
                        .unwrap_or_default();
                    list.contextual.push(ContextDue {
                        item,
                        context,
                        summary,
                    });
                }
            }
        }
        list.timed
            .sort_by(|a, b| (a.at, &a.item.name).cmp(&(b.at, &b.item.name)));
        list.contextual
            .sort_by(|a, b| a.item.name.cmp(&b.item.name));
        list.unreadable.sort_by(|a, b| a.stem.cmp(&b.stem));
        list
    }
}

/// The active due items of `store` at `time`'s clock and zone.
///
/// # Errors
/// The store's, when its index or files cannot be read.
pub fn due_list(store: &AgendaStore, time: &TimeContext) -> Result<DueList, AgendaError> {
    Ok(DueList::from_items(store.active_due_items()?, time))
}

impl DueList {
    /// `elroy due --json`: `timed` (name, trigger_datetime in UTC, local with its offset in
    /// `tz`, seconds_until from `now`, relative, repeats, recurrence, trigger_context, text)
    /// and `contextual` (name, trigger_context, trigger_raw as written, text).
    pub fn to_json(&self, now: Timestamp, tz: &jiff::tz::TimeZone) -> serde_json::Value {
        serde_json::json!({
            "timed": self.timed.iter().map(|t| serde_json::json!({
                "name": t.item.name,
                "trigger_datetime": t.at.to_string(),
                "local": elroy_agenda::format_local_with_offset(t.at, tz),
                "seconds_until": t.at.as_second() - now.as_second(),
                "relative": t.relative,
                "repeats": t.repeats,
                "recurrence": t.item.recurrence,
                "trigger_context": t.item.trigger_context,
                "text": t.item.text,
            })).collect::<Vec<_>>(),
            "contextual": self.contextual.iter().map(|c| serde_json::json!({
                "name": c.item.name,
                "trigger_context": c.item.trigger_context,
                // A trigger_datetime that does not parse, as written (the file is kept).
                "trigger_raw": c.item.trigger_raw,
                "text": c.item.text,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn item(name: &str, at: Option<&str>, context: Option<&str>, text: &str) -> DueItem {
        DueItem {
            id: 0,
            name: name.into(),
            stem: name.replace(' ', "_"),
            trigger_datetime: at.map(|a| a.parse().unwrap()),
            trigger_context: context.map(str::to_owned),
            trigger_raw: at.map(str::to_owned),
            text: text.into(),
            recurrence: None,
        }
    }

    /// Timed items by time then name, contextual ones by name; unreadable triggers named and
    /// listed with the contextual ones; texts on one line without their updates.
    #[test]
    fn order_and_wording() {
        let time = TimeContext::fixed(
            "2026-12-01T08:35:00Z".parse().unwrap(),
            jiff::tz::TimeZone::UTC,
        );
        let mut broken = item("Early", None, None, "Early");
        broken.trigger_raw = Some("2026-12-01 8:30".into());
        let list = DueList::from_items(
            vec![
                item(
                    "Rent",
                    Some("2026-12-02T09:00:00Z"),
                    None,
                    "Transfer\nto the landlord",
                ),
                item(
                    "Milk",
                    None,
                    Some("at the shop"),
                    "semi\n\n## Updates\n\n- x",
                ),
                item("B call", Some("2026-12-01T09:00:00Z"), None, ""),
                item("A call", Some("2026-12-01T09:00:00Z"), None, ""),
                item("Standup", Some("2026-12-01T08:10:00Z"), None, ""),
                broken,
            ],
            &time,
        );
        let timed: Vec<(&str, &str, &str)> = list
            .timed
            .iter()
            .map(|t| (t.item.name.as_str(), t.when.as_str(), t.relative.as_str()))
            .collect();
        assert_eq!(
            timed,
            [
                ("Standup", "Tue 2026-12-01 08:10 +00:00", "overdue 25 min"),
                ("A call", "Tue 2026-12-01 09:00 +00:00", "in 25 min"),
                ("B call", "Tue 2026-12-01 09:00 +00:00", "in 25 min"),
                ("Rent", "Wed 2026-12-02 09:00 +00:00", "in 24 h"),
            ]
        );
        assert!(list.timed[0].overdue && !list.timed[1].overdue);
        assert_eq!(list.timed[3].summary, "Transfer to the landlord");
        let contextual: Vec<(&str, &str, &str)> = list
            .contextual
            .iter()
            .map(|c| (c.item.name.as_str(), c.context.as_str(), c.summary.as_str()))
            .collect();
        assert_eq!(
            contextual,
            [
                ("Early", "2026-12-01 8:30", "Early"),
                ("Milk", "at the shop", "semi")
            ]
        );
        assert_eq!(
            list.unreadable,
            [UnreadableTrigger {
                stem: "Early".into(),
                raw: "2026-12-01 8:30".into()
            }]
        );
    }
}
