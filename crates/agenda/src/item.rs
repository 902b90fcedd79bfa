//! One agenda or due-item file, as read (`docs/formats.md#agenda-items`).

use elroy_markdown::{Document, Mapping, Value};
use jiff::Timestamp;
use jiff::civil::Date;

use crate::time::parse_stored_trigger;

/// Lifecycle state (`status` key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// `created`: open.
    Created,
    /// `completed`.
    Completed,
    /// `deleted` (Elroy writes it just before removing a file).
    Deleted,
    /// Any other value a person or another program wrote (`in_progress`, `snoozed`): such an
    /// item is active like `created`, as Elroy 0.5.0 skips only completed and deleted items.
    Other(String),
}

impl Status {
    /// Whether the status leaves the item open: every value but `deleted` (whether it is done is
    /// the `completed` key's: Elroy 0.5.0 skips an item when `completed` is true or `status` is
    /// `deleted`, and nothing else).
    pub fn is_open(&self) -> bool {
        !matches!(self, Status::Deleted)
    }

    /// The stored word.
    pub fn as_str(&self) -> &str {
        match self {
            Status::Created => "created",
            Status::Completed => "completed",
            Status::Deleted => "deleted",
            Status::Other(s) => s,
        }
    }
}

/// Whether an item is a plain agenda item or a due item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// No trigger.
    Agenda,
    /// A time trigger, a context trigger, or both.
    Due,
}

/// An agenda or due-item file whose front matter parsed.
#[derive(Debug, Clone)]
pub struct Item {
    /// File name without `.md`.
    pub stem: String,
    /// Display path relative to `$ELROY_HOME` (`agenda/X.md`, `users/t/agenda/X.md`).
    pub file: String,
    /// The parsed document (front matter, raw body, raw YAML).
    pub document: Document,
    /// The `name` key, when present (D6).
    pub name_key: Option<String>,
    /// `completed` (strict boolean; default false).
    pub completed: bool,
    /// `status` (default `completed` if `completed`, else `created`).
    pub status: Status,
    /// `date`, when present and parseable as `YYYY-MM-DD`.
    pub date: Option<Date>,
    /// The raw `trigger_datetime` text, when non-empty.
    pub trigger_raw: Option<String>,
    /// `trigger_datetime` as an instant, when it parses
    /// (`docs/formats.md#reading-times-elroy-wrote`).
    pub trigger_datetime: Option<Timestamp>,
    /// `trigger_context` (or Elroy's legacy `reminder_context`), when non-empty.
    pub trigger_context: Option<String>,
    /// `recurrence`, when non-empty: the rule of a repeating due item (RFC 5545 text, see
    /// [`crate::Recurrence`]); `trigger_datetime` is its next occurrence.
    pub recurrence: Option<String>,
    /// Lower-cased stem, for matching.
    pub(crate) stem_lower: String,
    /// Lower-cased name, for matching.
    pub(crate) name_lower: String,
}

/// A checklist entry as listings see it (`docs/formats.md#checklist-entries`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecklistEntry {
    /// The entry id.
    pub id: i64,
    /// The entry text.
    pub text: String,
    /// Whether it is done.
    pub completed: bool,
    /// `due_date`, when set.
    pub due_date: Option<String>,
}

/// Reads a strict boolean (`docs/formats.md#reading-a-file`): a YAML boolean, or `true/yes/on` /
/// `false/no/off` ignoring ASCII case; missing or `null` is `None`.
///
/// # Errors
/// [`InvalidBoolean`]: `invalid boolean for '{key}' in {file}: {value}`.
pub fn strict_bool(
    value: Option<&Value>,
    key: &str,
    file: &str,
) -> Result<Option<bool>, InvalidBoolean> {
    let invalid = |value: String| InvalidBoolean {
        key: key.to_owned(),
        file: file.to_owned(),
        value,
    };
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Ok(Some(true)),
            "false" | "no" | "off" => Ok(Some(false)),
            _ => Err(invalid(s.clone())),
        },
        Some(other) => Err(invalid(other.display_short())),
    }
}

/// A front-matter value that should be a boolean and is not ([`strict_bool`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid boolean for '{key}' in {file}: {value}")]
pub struct InvalidBoolean {
    /// The key (`completed`).
    pub key: String,
    /// The file's display path.
    pub file: String,
    /// The value as written.
    pub value: String,
}

impl From<InvalidBoolean> for crate::AgendaError {
    fn from(e: InvalidBoolean) -> Self {
        crate::AgendaError::new(e.to_string())
    }
}

/// A non-empty string value (strings, and numbers written as text).
fn non_empty_text(value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(s) | Value::Timestamp(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

impl Item {
    /// Builds an item from a parsed document (CRLF line endings in the body become LF).
    ///
    /// # Errors
    /// The strict-boolean message when `completed` is not a boolean.
    pub fn from_document(
        stem: String,
        file: String,
        mut document: Document,
    ) -> Result<Item, InvalidBoolean> {
        // D5: CRLF files are accepted, and read (and rewritten) with LF line endings.
        if document.raw_body.contains('\r') {
            document.raw_body = document.raw_body.replace("\r\n", "\n");
        }
        let fm = &document.front_matter;
        let completed = strict_bool(fm.get("completed"), "completed", &file)?.unwrap_or(false);
        let status = match fm.get("status").and_then(Value::as_str) {
            Some("created") => Status::Created,
            Some("completed") => Status::Completed,
            Some("deleted") => Status::Deleted,
            Some(other) if !other.is_empty() => Status::Other(other.to_owned()),
            _ if completed => Status::Completed,
            _ => Status::Created,
        };
        let date = fm
            .get("date")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<Date>().ok().filter(|_| s.len() == 10));
        let trigger_raw = non_empty_text(fm.get("trigger_datetime"));
        let trigger_datetime = trigger_raw.as_deref().and_then(parse_stored_trigger);
        let trigger_context = non_empty_text(fm.get("trigger_context"))
            .or_else(|| non_empty_text(fm.get("reminder_context")));
        let recurrence = non_empty_text(fm.get(crate::recurrence::RECURRENCE_KEY));
        // A hand-written scalar that YAML reads as a number or boolean (`name: 2026`) still names
        // the item, as its text.
        let name_key = match fm.get("name") {
            Some(Value::Null | Value::List(_) | Value::Map(_)) | None => None,
            Some(other) => Some(other.display_short()).filter(|n| !n.is_empty()),
        }
        // Names compare in NFC (a hand-written or macOS NFD name is the same item).
        .map(|n| elroy_markdown::normalize_name(&n).into_owned());
        Ok(Item {
            stem_lower: elroy_markdown::normalize_name(&stem).to_lowercase(),
            name_lower: elroy_markdown::normalize_name(name_key.as_deref().unwrap_or(&stem))
                .to_lowercase(),
            stem,
            file,
            document,
            name_key,
            completed,
            status,
            date,
            trigger_raw,
            trigger_datetime,
            trigger_context,
            recurrence,
        })
    }

    /// The item's name (D6): the `name` key, else the stem.
    pub fn name(&self) -> &str {
        self.name_key.as_deref().unwrap_or(&self.stem)
    }

    /// Whether it is a due item (a time or context trigger).
    pub fn kind(&self) -> Kind {
        if self.trigger_raw.is_some() || self.trigger_context.is_some() {
            Kind::Due
        } else {
            Kind::Agenda
        }
    }

    /// Active: not `completed: true` and a status other than `deleted`. Elroy 0.5.0 skips exactly
    /// those, so `status: in_progress` (a hand edit, another tool) is active.
    pub fn is_active(&self) -> bool {
        self.status.is_open() && !self.completed
    }

    /// The front matter.
    pub fn front_matter(&self) -> &Mapping {
        &self.document.front_matter
    }

    /// The body stripped of surrounding whitespace.
    pub fn text(&self) -> &str {
        self.document.raw_body.trim()
    }

    /// The main text (before `## Updates`), stripped (`docs/formats.md#the-updates-section`).
    pub fn main_text(&self) -> &str {
        split_updates(self.text()).0.trim()
    }

    /// The checklist entries that have an `id` and a `text`; `completed` counts only strict
    /// booleans that are true.
    pub fn checklist(&self) -> Vec<ChecklistEntry> {
        let Some(Value::List(entries)) = self.front_matter().get("checklist") else {
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|e| match e {
                Value::Map(m) => checklist_entry(m, &self.file).ok().flatten(),
                _ => None,
            })
            .collect()
    }
}

/// What the agenda index keeps of a parsed file (`docs/formats.md#agenda-items`): everything
/// listings, name matching, the due check and recall read, without the document. Built from an
/// [`Item`] when a file is parsed, and from its `agenda_items` row when the file's stat did not
/// change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ItemView {
    pub stem: String,
    pub name_key: Option<String>,
    pub completed: bool,
    pub status: Status,
    pub date: Option<Date>,
    pub trigger_raw: Option<String>,
    pub trigger_datetime: Option<Timestamp>,
    pub trigger_context: Option<String>,
    /// As [`Item::recurrence`].
    pub recurrence: Option<String>,
    /// Checklist entries marked completed, and all entries ([`Item::checklist`]).
    pub checklist_completed: usize,
    pub checklist_total: usize,
    /// The body, stripped ([`Item::text`]).
    pub text: String,
    pub stem_lower: String,
    pub name_lower: String,
}

impl ItemView {
    /// Builds the view's derived fields (lower-cased names) from the stored ones.
    pub(crate) fn with_names(mut self) -> Self {
        self.stem_lower = elroy_markdown::normalize_name(&self.stem).to_lowercase();
        self.name_lower =
            elroy_markdown::normalize_name(self.name_key.as_deref().unwrap_or(&self.stem))
                .to_lowercase();
        self
    }

    /// As [`Item::name`].
    pub fn name(&self) -> &str {
        self.name_key.as_deref().unwrap_or(&self.stem)
    }

    /// As [`Item::kind`].
    pub fn kind(&self) -> Kind {
        if self.trigger_raw.is_some() || self.trigger_context.is_some() {
            Kind::Due
        } else {
            Kind::Agenda
        }
    }

    /// As [`Item::is_active`].
    pub fn is_active(&self) -> bool {
        self.status.is_open() && !self.completed
    }

    /// As [`Item::text`].
    pub fn text(&self) -> &str {
        &self.text
    }

    /// As [`Item::main_text`].
    pub fn main_text(&self) -> &str {
        split_updates(self.text()).0.trim()
    }
}

impl Item {
    /// The index's view of this item.
    pub(crate) fn view(&self) -> ItemView {
        let checklist = self.checklist();
        ItemView {
            stem: self.stem.clone(),
            name_key: self.name_key.clone(),
            completed: self.completed,
            status: self.status.clone(),
            date: self.date,
            trigger_raw: self.trigger_raw.clone(),
            trigger_datetime: self.trigger_datetime,
            trigger_context: self.trigger_context.clone(),
            recurrence: self.recurrence.clone(),
            checklist_completed: checklist.iter().filter(|c| c.completed).count(),
            checklist_total: checklist.len(),
            text: self.text().to_owned(),
            stem_lower: self.stem_lower.clone(),
            name_lower: self.name_lower.clone(),
        }
    }
}

impl Status {
    /// The status of a stored word (the inverse of [`Status::as_str`]).
    pub(crate) fn from_word(word: &str) -> Status {
        match word {
            "created" => Status::Created,
            "completed" => Status::Completed,
            "deleted" => Status::Deleted,
            other => Status::Other(other.to_owned()),
        }
    }
}

/// Reads one checklist mapping; `Ok(None)` when it lacks `id` or `text` (such entries are dropped).
///
/// # Errors
/// [`InvalidBoolean`] for `completed`.
pub(crate) fn checklist_entry(
    m: &Mapping,
    file: &str,
) -> Result<Option<ChecklistEntry>, InvalidBoolean> {
    let id = match m.get("id") {
        Some(Value::Int(i)) => Some(*i),
        Some(Value::Float(f)) if f.fract() == 0.0 => Some(*f as i64),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    let text = match m.get("text") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.display_short()),
    };
    let (Some(id), Some(text)) = (id, text) else {
        return Ok(None);
    };
    let completed = strict_bool(m.get("completed"), "completed", file)?.unwrap_or(false);
    let due_date = non_empty_text(m.get("due_date"));
    Ok(Some(ChecklistEntry {
        id,
        text,
        completed,
        due_date,
    }))
}

/// Splits a stripped body into main text and existing updates
/// (`docs/formats.md#the-updates-section`).
pub fn split_updates(body: &str) -> (&str, Option<&str>) {
    const MARKER: &str = "\n## Updates\n\n";
    if let Some(pos) = body.find(MARKER) {
        let main = body[..pos].trim_end();
        let updates = body[pos + MARKER.len()..].trim_end();
        return (main, (!updates.is_empty()).then_some(updates));
    }
    if let Some(rest) = body.strip_prefix("## Updates\n") {
        let updates = rest.trim();
        return ("", (!updates.is_empty()).then_some(updates));
    }
    (body, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_split() {
        assert_eq!(split_updates("a\nb"), ("a\nb", None));
        assert_eq!(
            split_updates("main  \n\n## Updates\n\n- x\n- y  "),
            ("main", Some("- x\n- y"))
        );
        assert_eq!(split_updates("## Updates\n\n- x"), ("", Some("- x")));
    }

    #[test]
    fn strict_booleans() {
        let v = Value::String("Yes".into());
        assert_eq!(strict_bool(Some(&v), "completed", "f"), Ok(Some(true)));
        let v = Value::String("maybe".into());
        assert_eq!(
            strict_bool(Some(&v), "completed", "agenda/x.md"),
            Err(InvalidBoolean {
                key: "completed".into(),
                file: "agenda/x.md".into(),
                value: "maybe".into()
            })
        );
        assert_eq!(
            strict_bool(Some(&Value::Int(1)), "c", "f")
                .unwrap_err()
                .to_string(),
            "invalid boolean for 'c' in f: 1"
        );
    }
}

#[cfg(test)]
mod name_tests {
    use super::*;

    fn item(yaml: &str) -> Item {
        let doc = Document::parse(&format!("---\n{yaml}\n---\n\nbody"), "agenda/X.md").unwrap();
        Item::from_document("X".into(), "agenda/X.md".into(), doc).unwrap()
    }

    #[test]
    fn names_and_defaults() {
        assert_eq!(item("name: 2026").name(), "2026");
        assert_eq!(item("name: Pay rent").name(), "Pay rent");
        assert_eq!(item("name: null").name(), "X");
        assert_eq!(item("completed: false").name(), "X");
        let done = item("completed: true");
        assert_eq!(done.status, Status::Completed);
        assert!(!done.is_active());
        assert_eq!(
            item("status: snoozed").status,
            Status::Other("snoozed".into())
        );
        // Elroy 0.5.0 skips only completed and deleted items: `in_progress` and `snoozed` are
        // open, `completed: true` is not, whatever the status says.
        assert!(item("status: in_progress").is_active());
        assert!(item("status: snoozed").is_active());
        assert!(!item("status: deleted").is_active());
        assert!(!item("status: in_progress\ncompleted: true").is_active());
        assert!(!item("completed: true").is_active());
        let legacy = item("reminder_context: at lunch");
        assert_eq!(legacy.kind(), Kind::Due);
        assert_eq!(legacy.trigger_context.as_deref(), Some("at lunch"));
        assert_eq!(
            item("date: 2026-03-20").date,
            Some(jiff::civil::date(2026, 3, 20))
        );
        assert_eq!(item("date: 2026-3-20").date, None);
    }
}
