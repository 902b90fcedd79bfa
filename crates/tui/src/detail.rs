//! The detail view's text: an item file rendered as a person reads it — title, date, status,
//! due time as every front end writes it (`elroy_commands::views::due_time`: `Wed 2026-12-02
//! 13:30 +05:30`, in the configured zone), context, then
//! the body with its checklist as `[x]` / `[ ]` and its updates. The file as stored is one key
//! away (`v`, [`raw_markdown`]).

use elroy_markdown::{Document, Value};
use jiff::tz::TimeZone;

/// Front-matter keys shown as their own lines, in this order, with their labels.
const FIELDS: &[(&str, &str)] = &[
    ("date", "Date"),
    ("status", "Status"),
    ("trigger_datetime", "Due"),
    ("trigger_context", "When"),
    ("reminder_context", "When"),
];
/// Keys a person does not read (bookkeeping).
/// `recurrence` is shown in words instead (`Repeats`), `uid` is `elroy sync`'s identity.
const HIDDEN: &[&str] = &[
    "name",
    "completed",
    "created_at",
    "updated_at",
    "id",
    "uid",
    "recurrence",
];

/// `text` (a markdown file, front matter optional) as the detail view shows it, the due time in
/// `tz`. A file whose front matter cannot be read is shown as stored.
pub fn item_markdown(text: &str, tz: &TimeZone) -> String {
    let Ok(doc) = Document::parse(text, "item") else {
        return raw_markdown(text);
    };
    if !doc.has_front_matter {
        return checklist(text);
    }
    let fm = &doc.front_matter;
    let body = doc.body_trimmed();
    let mut out = String::new();
    let title = fm
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| {
            body.lines()
                .next()
                .map(|l| l.trim_start_matches('#').trim().to_owned())
        })
        .unwrap_or_default();
    if !title.is_empty() {
        out.push_str(&format!("# {title}\n\n"));
    }
    let mut facts = Vec::new();
    for (key, label) in FIELDS {
        let Some(value) = fm.get(key) else { continue };
        let shown = match (*key, value) {
            ("trigger_datetime", v) => {
                let raw = v.display_short();
                match elroy_agenda::parse_stored_trigger(&raw) {
                    Some(ts) => elroy_commands::views::due_time(ts, tz),
                    None => format!("{raw} (unreadable)"),
                }
            }
            (_, v) if v.is_null() => continue,
            (_, v) => v.display_short(),
        };
        if !shown.is_empty() {
            facts.push(format!("**{label}:** {shown}"));
        }
    }
    // A repeating due item: its rule as a person says it (`every weekday at 09:00`).
    if let Some(rule) = fm
        .get("recurrence")
        .and_then(Value::as_str)
        .and_then(|text| elroy_agenda::Recurrence::from_text(text).ok())
    {
        facts.push(format!("**Repeats:** {}", rule.describe()));
    }
    for (key, value) in fm.iter() {
        if FIELDS.iter().any(|(k, _)| *k == key) || HIDDEN.contains(&key) || value.is_null() {
            continue;
        }
        facts.push(format!("**{key}:** {}", value.display_short()));
    }
    if !facts.is_empty() {
        out.push_str(&facts.join("  \n"));
        out.push_str("\n\n");
    }
    // The body's first line repeats the title when the item is named after it.
    let body = match body.split_once('\n') {
        Some((first, rest)) if first.trim_start_matches('#').trim() == title => rest.trim_start(),
        None if body.trim_start_matches('#').trim() == title => "",
        _ => body,
    };
    out.push_str(&checklist(body));
    out
}

/// The file as stored, in a code block (front matter included), for `v` in the detail view.
pub fn raw_markdown(text: &str) -> String {
    let fence = if text.contains("```") { "~~~~" } else { "```" };
    format!("{fence}text\n{}\n{fence}\n", text.trim_end())
}

/// Checklist lines (`- [x] done`, `- [ ] open`) with their boxes kept as text (a markdown
/// renderer would turn them into list items without a visible state).
fn checklist(body: &str) -> String {
    body.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let indent = &line[..line.len() - trimmed.len()];
            for (mark, shown) in [("- [x] ", "[x]"), ("- [X] ", "[x]"), ("- [ ] ", "[ ]")] {
                if let Some(rest) = trimmed.strip_prefix(mark) {
                    return format!("{indent}- `{shown}` {rest}");
                }
            }
            line.to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A due item's detail: its time in the local zone as the tools confirm it, not the stored
    /// UTC, and no raw front matter. Another zone too.
    #[test]
    fn a_due_item_shows_its_local_time_and_no_front_matter() {
        let text = "---\nname: Call Sam\ntrigger_datetime: 2026-12-02 08:00:00+00:00\nstatus: created\n---\nCall Sam\n\nAbout the lease.\n";
        let kolkata = TimeZone::get("Asia/Kolkata").unwrap();
        let shown = item_markdown(text, &kolkata);
        assert!(shown.starts_with("# Call Sam\n"), "{shown}");
        assert!(
            shown.contains("**Due:** Wed 2026-12-02 13:30 +05:30"),
            "{shown}"
        );
        assert!(shown.contains("About the lease."), "{shown}");
        assert!(!shown.contains("---"), "{shown}");
        let ny = TimeZone::get("America/New_York").unwrap();
        assert!(item_markdown(text, &ny).contains("**Due:** Wed 2026-12-02 03:00 -05:00"));
    }

    #[test]
    fn an_agenda_item_shows_date_status_checklist_and_updates() {
        let text = "---\nname: Plan the trip\ndate: 2026-12-01\nstatus: in_progress\n---\nPlan the trip\n\n- [x] book flights\n- [ ] hotel\n\n## Updates\n\n- 2026-11-30: started\n";
        let shown = item_markdown(text, &TimeZone::UTC);
        assert!(shown.contains("**Date:** 2026-12-01"), "{shown}");
        assert!(shown.contains("**Status:** in_progress"), "{shown}");
        assert!(shown.contains("- `[x]` book flights"), "{shown}");
        assert!(shown.contains("- `[ ]` hotel"), "{shown}");
        assert!(shown.contains("## Updates"), "{shown}");
        assert_eq!(shown.matches("Plan the trip").count(), 1, "{shown}");
        assert!(raw_markdown(text).contains("name: Plan the trip"));
    }
}
