//! `create_due_item` takes times as people say them (`tomorrow 9am`,
//! `friday 17:00`, `next monday at 5:30 pm`), in the configured zone; a time earlier today is an
//! error that says so; anything else keeps the `Invalid datetime format` message. `list_due_items`
//! shows them in that zone, soonest first.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_core::TimeContext;

use crate::{call, setup};

#[test]
fn create_due_item_reads_natural_times_in_the_configured_zone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    // Monday 2026-11-30 10:00 in Berlin (UTC+1).
    let (registry, ctx) = setup(
        &home,
        "2026-11-30T09:00:00Z",
        jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    );
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
    // Monday 2026-11-30 10:00 in Berlin (UTC+1).
    let (registry, ctx) = setup(
        &home,
        "2026-11-30T09:00:00Z",
        jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    );
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

/// `list_due_items`: every active due item, timed ones soonest first (a tie by name) in the
/// configured zone with repetitions in words, then those with only a context; completed and
/// deleted items are gone; `limit` bounds the list while `total` counts them all, and a limit
/// below 1 is an error. Cases: an empty home, then one-offs, a repetition and a context-only
/// item, listed in Berlin and again in UTC.
#[test]
fn list_due_items_lists_them_soonest_first_in_the_configured_zone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    // Monday 2026-11-30 10:00 in Berlin (UTC+1).
    let (registry, mut ctx) = setup(
        &home,
        "2026-11-30T09:00:00Z",
        jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
    );
    let empty = call(&registry, &ctx, "list_due_items", "{}");
    assert_eq!(empty.content, r#"{"total":0,"items":[]}"#);
    for args in [
        r#"{"name":"Pub","text":"Quiz night","trigger_time":"friday 17:00"}"#,
        r#"{"name":"Umbrella","text":"Regenschirm ☂","trigger_context":"when it rains"}"#,
        r#"{"name":"Standup","text":"Daily sync","trigger_time":"every weekday at 9am"}"#,
        r#"{"name":"Dentist","text":"Teeth","trigger_time":"tomorrow 9am"}"#,
        r#"{"name":"Gone","text":"x","trigger_time":"tomorrow 10am"}"#,
        r#"{"name":"Done","text":"x","trigger_time":"tonight at 9"}"#,
    ] {
        let r = call(&registry, &ctx, "create_due_item", args);
        assert!(!r.is_error, "{args}: {}", r.content);
    }
    assert!(!call(&registry, &ctx, "delete_due_item", r#"{"name":"Gone"}"#).is_error);
    assert!(!call(&registry, &ctx, "complete_due_item", r#"{"name":"Done"}"#).is_error);
    let all = call(&registry, &ctx, "list_due_items", "{}");
    assert!(!all.is_error && all.effects.is_empty(), "{}", all.content);
    assert_eq!(
        all.content,
        concat!(
            r#"{"total":4,"items":["#,
            r#"{"name":"Dentist","trigger_time":"2026-12-01 09:00:00+01:00","repeats":null,"trigger_context":null,"text":"Teeth"},"#,
            r#"{"name":"Standup","trigger_time":"2026-12-01 09:00:00+01:00","repeats":"every weekday at 09:00","trigger_context":null,"text":"Daily sync"},"#,
            r#"{"name":"Pub","trigger_time":"2026-12-04 17:00:00+01:00","repeats":null,"trigger_context":null,"text":"Quiz night"},"#,
            r#"{"name":"Umbrella","trigger_time":null,"repeats":null,"trigger_context":"when it rains","text":"Regenschirm ☂"}"#,
            "]}"
        )
    );
    // The same items in another configured zone: the same order, the times in that zone.
    ctx.time = TimeContext::fixed(
        "2026-11-30T09:00:00Z".parse().unwrap(),
        jiff::tz::TimeZone::UTC,
    );
    let utc: serde_json::Value =
        serde_json::from_str(&call(&registry, &ctx, "list_due_items", "{}").content).unwrap();
    let times: Vec<serde_json::Value> = utc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["trigger_time"].clone())
        .collect();
    assert_eq!(
        times,
        [
            serde_json::json!("2026-12-01 08:00:00+00:00"),
            serde_json::json!("2026-12-01 08:00:00+00:00"),
            serde_json::json!("2026-12-04 16:00:00+00:00"),
            serde_json::Value::Null,
        ]
    );
    for limit in [r#"{"limit":2}"#, r#"{"limit":"2"}"#] {
        let two: serde_json::Value =
            serde_json::from_str(&call(&registry, &ctx, "list_due_items", limit).content).unwrap();
        assert_eq!(two["total"], 4, "{limit}");
        let names: Vec<&str> = two["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Dentist", "Standup"], "{limit}");
    }
    for (limit, shown) in [(r#"{"limit":0}"#, "0"), (r#"{"limit":-3}"#, "-3")] {
        let refused = call(&registry, &ctx, "list_due_items", limit);
        assert!(refused.is_error);
        assert_eq!(
            refused.content,
            format!("Error invoking tool list_due_items: limit must be at least 1, not {shown}")
        );
    }
}
