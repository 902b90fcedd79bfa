//! What store operations return, and the rendering of an item (`docs/formats.md#renderings`).

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::Kind;
use crate::item::{Item, ItemView};
use crate::time::format_local_with_offset;

/// An item an operation touched: enough for messages and recall effects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRef {
    /// Stable id (recall `memory_id`).
    pub id: i64,
    /// File name without `.md` (after the operation).
    pub stem: String,
    /// The item's name (D6).
    pub name: String,
}

/// A plain agenda item as `list_agenda_items` shows it (`docs/tools.md#list_agenda_items`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedItem {
    /// The stem (listed as `name`, as Elroy does).
    pub stem: String,
    /// The main text, stripped.
    pub text: String,
    /// Completed checklist entries.
    pub checklist_completed: usize,
    /// All checklist entries.
    pub checklist_total: usize,
}

/// A due item as `print_due_item`, due-item surfacing and recall see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueItem {
    /// Stable id.
    pub id: i64,
    /// The item's name (D6).
    pub name: String,
    /// The stem.
    pub stem: String,
    /// The time trigger.
    pub trigger_datetime: Option<Timestamp>,
    /// The context trigger.
    pub trigger_context: Option<String>,
    /// The raw `trigger_datetime` text, when non-empty (it may not parse: then
    /// `trigger_datetime` is `None` and the item never fires).
    pub trigger_raw: Option<String>,
    /// The body, stripped.
    pub text: String,
    /// The rule of a repeating item (the `recurrence` key), as stored.
    pub recurrence: Option<String>,
}

impl DueItem {
    /// The rule of a repeating item, read; `None` for a one-off (or a rule that does not read:
    /// then the item fires once, at `trigger_datetime`, as Elroy 0.5.0 would).
    pub fn repetition(&self) -> Option<crate::Recurrence> {
        self.recurrence
            .as_deref()
            .and_then(|text| crate::Recurrence::from_text(text).ok())
    }

    /// The rule in words (`every weekday at 09:00`), for a repeating item.
    pub fn repeats(&self) -> Option<String> {
        self.repetition().map(|r| r.describe())
    }

    /// The `print_due_item` text (`docs/tools.md#print_due_item`), `{name}` being the name as asked
    /// for: `Due item '{name}':`, `Trigger Time: {local with offset}` (D7), `Context: …`, `Text:
    /// …`.
    pub fn print(&self, asked_name: &str, tz: &TimeZone) -> String {
        let mut lines = vec![format!("Due item '{asked_name}':")];
        if let Some(ts) = self.trigger_datetime {
            lines.push(format!(
                "Trigger Time: {}",
                format_local_with_offset(ts, tz)
            ));
        }
        if let Some(repeats) = self.repeats() {
            lines.push(format!("Repeats: {repeats}"));
        }
        if let Some(context) = &self.trigger_context {
            lines.push(format!("Context: {context}"));
        }
        lines.push(format!("Text: {}", self.text));
        lines.join("\n")
    }

    /// The `⏰ DUE ITEM` block of the due-item injection (`docs/behaviour.md#due-items-in-a-turn`).
    pub fn due_notice(&self, tz: &TimeZone) -> String {
        let when = self
            .trigger_datetime
            .map(|ts| format_local_with_offset(ts, tz))
            .unwrap_or_default();
        format!(
            "⏰ DUE ITEM: '{}' - {}\n\nThis item was scheduled for {when} and is now due. Please inform the user about it and then use the delete_due_item tool to remove it from active due items.",
            self.name, self.text
        )
        .replace(
            "use the delete_due_item tool to remove it from active due items.",
            &match self.repeats() {
                // A repeating item: deleting it would end every later occurrence.
                Some(rule) => format!(
                    "use the complete_due_item tool to mark this occurrence done (it repeats {rule}; \
                     delete_due_item would end the whole series)."
                ),
                None => "use the delete_due_item tool to remove it from active due items.".into(),
            },
        )
    }
}

/// An active item for recall: its id, name, kind and rendering (`docs/formats.md#renderings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallEntry {
    /// Stable id (`memory_id`, `memory_type` `AgendaItem`).
    pub id: i64,
    /// The name.
    pub name: String,
    /// Plain or due.
    pub kind: Kind,
    /// The rendering (`to_fact`).
    pub fact: String,
}

/// Arguments of [`AgendaStore::create_due_item`](crate::AgendaStore::create_due_item) (after `trigger_time` was parsed).
#[derive(Debug, Clone)]
pub struct NewDueItem<'a> {
    /// `name`, as given.
    pub name: &'a str,
    /// `text`.
    pub text: &'a str,
    /// The parsed `trigger_time`.
    pub trigger: Option<Timestamp>,
    /// `trigger_context`.
    pub trigger_context: Option<&'a str>,
}

/// The rendering of an item (`docs/formats.md#renderings`): `#{name} (Timed: {local
/// time})\n{text}`, `#{name} (Context: {context})\n{text}` or `#Agenda: {name}\n{text}`.
pub fn to_fact(item: &Item, tz: &TimeZone) -> String {
    render_fact(
        item.name(),
        item.kind(),
        item.trigger_datetime,
        item.trigger_context.as_deref(),
        item.trigger_raw.as_deref(),
        item.text(),
        tz,
    )
}

/// [`to_fact`] of an indexed item.
pub(crate) fn view_fact(item: &ItemView, tz: &TimeZone) -> String {
    render_fact(
        item.name(),
        item.kind(),
        item.trigger_datetime,
        item.trigger_context.as_deref(),
        item.trigger_raw.as_deref(),
        item.text(),
        tz,
    )
}

fn render_fact(
    name: &str,
    kind: Kind,
    trigger: Option<Timestamp>,
    context: Option<&str>,
    raw: Option<&str>,
    text: &str,
    tz: &TimeZone,
) -> String {
    match (kind, trigger, context) {
        (Kind::Due, Some(ts), _) => format!(
            "#{name} (Timed: {})\n{text}",
            format_local_with_offset(ts, tz)
        ),
        (Kind::Due, None, Some(context)) => format!("#{name} (Context: {context})\n{text}"),
        (Kind::Due, None, None) => {
            format!("#{name} (Timed: {})\n{text}", raw.unwrap_or_default())
        }
        (Kind::Agenda, _, _) => format!("#Agenda: {name}\n{text}"),
    }
}
