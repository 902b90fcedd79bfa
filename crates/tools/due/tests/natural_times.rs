//! Issue 16 point 6: `create_due_item` takes times as people say them (`tomorrow 9am`,
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
    ] {
        let args = format!(r#"{{"name":"{name}","text":"t","trigger_time":"{when}"}}"#);
        let r = call(&registry, &ctx, "create_due_item", &args);
        assert!(!r.is_error, "{when}: {}", r.content);
        assert_eq!(
            r.content,
            format!("Timed due item '{name}' has been created for {when}.")
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
    assert_eq!(
        other.content,
        "Error invoking tool create_due_item: Invalid datetime format: 'sometime tomorrow'. \
         Expected formats: 'YYYY-MM-DD HH:MM:SS', 'YYYY-MM-DD HH:MM', 'YYYY-MM-DD', or ISO 8601 \
         format"
    );
}
