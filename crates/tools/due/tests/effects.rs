//! D13: `create_due_item` pins the new item and `delete_due_item` unpins it, with the item's
//! stable id; other due-item tools have no effects; errors carry none.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_core::{Effect, RecallItem, RecallKind};

use crate::{call, setup};

#[test]
fn pin_on_create_unpin_on_delete() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let (registry, ctx) = setup(&home, "2026-11-30T03:23:24Z", jiff::tz::TimeZone::UTC);
    let item = |id| RecallItem {
        memory_type: RecallKind::AgendaItem,
        memory_id: id,
    };
    let r = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"A","text":"a","trigger_context":"c"}"#,
    );
    assert_eq!(r.effects, vec![Effect::Pin(item(1))]);
    let r = call(
        &registry,
        &ctx,
        "create_due_item",
        r#"{"name":"B","text":"b","trigger_time":"in 1 hour"}"#,
    );
    assert_eq!(r.effects, vec![Effect::Pin(item(2))]);
    for (tool, args) in [
        ("print_due_item", r#"{"name":"A"}"#),
        ("update_due_item_text", r#"{"name":"A","new_text":"x"}"#),
        ("rename_due_item", r#"{"old_name":"A","new_name":"C"}"#),
        ("complete_due_item", r#"{"name":"B"}"#),
    ] {
        let r = call(&registry, &ctx, tool, args);
        assert!(!r.is_error && r.effects.is_empty(), "{tool}: {}", r.content);
    }
    let r = call(
        &registry,
        &ctx,
        "delete_due_item",
        r#"{"name":"C","closing_comment":"done"}"#,
    );
    assert_eq!(r.content, "Due item 'C' has been deleted. Comment: done");
    assert_eq!(r.effects, vec![Effect::Unpin(item(1))]);
    let r = call(&registry, &ctx, "delete_due_item", r#"{"name":"C"}"#);
    assert!(r.is_error && r.effects.is_empty());
    assert_eq!(
        r.content,
        "Error invoking tool delete_due_item: Active due item 'C' not found. Active due items: "
    );
}
