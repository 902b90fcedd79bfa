//! `create_due_item` takes times as people say them (`tomorrow 9am`,
//! `friday 17:00`, `next monday at 5:30 pm`), in the configured zone; a time earlier today is an
//! error that says so; anything else keeps the `Invalid datetime format` message.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use elroy_agenda::AgendaStore;
use elroy_core::{TimeContext, ToolContext, ToolRegistry, UserInfo};

use crate::call;

#[test]
fn create_due_item_reads_natural_times_in_the_configured_zone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let mut registry = ToolRegistry::new();
    elroy_tools_due::register(&mut registry);
    let mut ctx = ToolContext::new(UserInfo {
        id: Some(1),
        token: "DEFAULT".into(),
        elroy_home: home.clone(),
        user_home: home.clone(),
    });
    // Monday 2026-11-30 10:00 in Berlin (UTC+1).
    ctx.time = TimeContext::fixed(
        "2026-11-30T09:00:00Z".parse().unwrap(),
        jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    );
    ctx.services.insert(Arc::new(
        AgendaStore::open(&home, &home, "DEFAULT").unwrap(),
    ));
    for (name, when, shown) in [
        ("Dentist", "tomorrow 9am", "2026-12-01 09:00:00+01:00"),
        ("Rent", "tomorrow at 9am", "2026-12-01 09:00:00+01:00"),
        ("Pub", "friday 17:00", "2026-12-04 17:00:00+01:00"),
        (
            "Call",
            "next monday at 5:30 pm",
            "2026-12-07 17:30:00+01:00",
        ),
        ("Film", "tonight at 9", "2026-11-30 21:00:00+01:00"),
        ("Lunch", "12:30", "2026-11-30 12:30:00+01:00"),
        ("Bins", "friday", "2026-12-04 09:00:00+01:00"),
        ("Late film", "tonight at 1", "2026-12-01 01:00:00+01:00"),
    ] {
        let args = format!(r#"{{"name":"{name}","text":"t","trigger_time":"{when}"}}"#);
        let r = call(&registry, &ctx, "create_due_item", &args);
        assert!(!r.is_error, "{when}: {}", r.content);
        // Elroy's sentence, then what was understood (weekday, local time, offset).
        let ts: jiff::Timestamp =
            elroy_agenda::parse_absolute_time(shown, &jiff::tz::TimeZone::UTC).unwrap();
        let understood = elroy_agenda::format_spoken_instant(ts, &ctx.time.tz);
        assert_eq!(
            r.content,
            format!("Timed due item '{name}' has been created for {when} ({understood}).")
        );
        let printed = call(
            &registry,
            &ctx,
            "print_due_item",
            &format!(r#"{{"name":"{name}"}}"#),
        );
        assert!(
            printed.content.contains(&format!("Trigger Time: {shown}")),
            "{when}: {}",
            printed.content
        );
    }
    let past = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"Late","text":"t","trigger_time":"9am"}"#,
    );
    assert!(past.is_error);
    assert_eq!(
        past.content,
        "Error invoking tool create_due_item: '9am' is 09:00 today, which has already passed \
         (it is 10:00 now). Give a later time, or another day such as 'tomorrow 09:00'"
    );
    let other = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"Soon","text":"t","trigger_time":"sometime tomorrow"}"#,
    );
    assert!(
        other.content.starts_with(
            "Error invoking tool create_due_item: Invalid datetime format: 'sometime tomorrow'. \
             Expected formats: 'YYYY-MM-DD HH:MM:SS', 'YYYY-MM-DD HH:MM', 'YYYY-MM-DD', or ISO \
             8601 format; elroy also accepts"
        ),
        "{}",
        other.content
    );
    // Elroy's own form: Elroy's sentence alone.
    let r = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"Exact","text":"t","trigger_time":"2026-12-24 08:00"}"#,
    );
    assert_eq!(
        r.content,
        "Timed due item 'Exact' has been created for 2026-12-24 08:00."
    );
}

/// A repetition through the tools. The file keeps Elroy's keys with
/// `trigger_datetime` at the first occurrence and the rule in `recurrence`; `print_due_item`
/// shows it in words; `complete_due_item` completes one occurrence and names the next;
/// `delete_due_item` ends the series.
#[test]
fn create_due_item_takes_a_repetition() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let mut registry = ToolRegistry::new();
    elroy_tools_due::register(&mut registry);
    let mut ctx = ToolContext::new(UserInfo {
        id: Some(1),
        token: "DEFAULT".into(),
        elroy_home: home.clone(),
        user_home: home.clone(),
    });
    // Monday 2026-11-30 10:00 in Berlin (UTC+1).
    ctx.time = TimeContext::fixed(
        "2026-11-30T09:00:00Z".parse().unwrap(),
        jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    );
    ctx.services.insert(Arc::new(
        AgendaStore::open(&home, &home, "DEFAULT").unwrap(),
    ));
    let r = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"Standup","text":"Daily sync","trigger_time":"every weekday at 9am"}"#,
    );
    assert_eq!(
        r.content,
        "Timed due item 'Standup' has been created for every weekday at 9am \
         (Tue 2026-12-01 09:00 +01:00, every weekday at 09:00)."
    );
    let file = std::fs::read_to_string(home.join("agenda/Standup.md")).unwrap();
    assert_eq!(
        file,
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Standup\nrecurrence: \
         DTSTART;TZID=Europe/Berlin:20261201T090000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\n\
         status: created\ntrigger_datetime: 2026-12-01 08:00:00+00:00\n---\n\nDaily sync"
    );
    let printed = call(&registry, &ctx, "print_due_item", r#"{"name":"Standup"}"#);
    assert_eq!(
        printed.content,
        "Due item 'Standup':\nTrigger Time: 2026-12-01 09:00:00+01:00\nRepeats: every weekday at \
         09:00\nText: Daily sync"
    );
    let done = call(
        &registry,
        &ctx,
        "complete_due_item",
        r#"{"name":"Standup"}"#,
    );
    assert_eq!(
        done.content,
        "Due item 'Standup' has been marked as completed. It repeats every weekday at 09:00: \
         next on Wed 2026-12-02 09:00 +01:00."
    );
    let printed = call(&registry, &ctx, "print_due_item", r#"{"name":"Standup"}"#);
    assert!(
        printed
            .content
            .contains("Trigger Time: 2026-12-02 09:00:00+01:00"),
        "{}",
        printed.content
    );
    // A cron expression and an RRULE line are repetitions too; a count ends the rule.
    let r = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"Pills","text":"","trigger_time":"daily at 8pm for 2 times"}"#,
    );
    assert!(
        r.content.ends_with("every day at 20:00, 2 times)."),
        "{}",
        r.content
    );
    let once = call(&registry, &ctx, "complete_due_item", r#"{"name":"Pills"}"#);
    assert!(
        once.content.contains("next on Tue 2026-12-01 20:00 +01:00"),
        "{}",
        once.content
    );
    let last = call(&registry, &ctx, "complete_due_item", r#"{"name":"Pills"}"#);
    assert!(
        last.content
            .ends_with("That was the last occurrence of every day at 20:00, 2 times."),
        "{}",
        last.content
    );
    assert!(call(&registry, &ctx, "print_due_item", r#"{"name":"Pills"}"#).is_error);
    let r = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"Report","text":"","trigger_time":"0 9 * * 1-5"}"#,
    );
    assert!(
        r.content.contains("every weekday at 09:00"),
        "{}",
        r.content
    );
    let deleted = call(&registry, &ctx, "delete_due_item", r#"{"name":"Standup"}"#);
    assert!(!deleted.is_error);
    assert!(!home.join("agenda/Standup.md").exists());
}
