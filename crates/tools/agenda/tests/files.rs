//! The files each kind of tool call leaves (`docs/formats.md#agenda-items` worked examples, byte
//! for byte), as insta snapshots too: sorted keys, PyYAML list layout, quoting, `## Updates`, no
//! trailing newline.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::Home;
use jiff::tz::TimeZone;

fn kolkata() -> Home {
    Home::new("DEFAULT", TimeZone::get("Asia/Kolkata").unwrap())
}

fn ok(home: &Home, tool: &str, args: &str) -> String {
    let r = home.call(tool, args);
    assert!(!r.is_error, "{tool} {args}: {}", r.content);
    r.content
}

const REPORT: &str = "Write_the_Q2_report.md";

#[test]
fn agenda_item_files_after_each_tool() {
    let mut home = kolkata();
    home.set_now("2026-03-20T03:30:00Z");
    assert_eq!(
        ok(
            &home,
            "add_agenda_item",
            r#"{"text":"Write the Q2 report.\nSecond line details","item_date":"2026-03-20"}"#
        ),
        "Agenda item added for 2026-03-20: Write the Q2 report."
    );
    let created = home.file(REPORT);
    assert_eq!(
        created,
        "---\ncompleted: false\ndate: '2026-03-20'\nname: Write the Q2 report.\nstatus: created\n---\n\nWrite the Q2 report.\nSecond line details"
    );
    insta::assert_snapshot!("1_add_agenda_item", created);

    assert_eq!(
        ok(
            &home,
            "add_agenda_checklist_item",
            r#"{"item_name":"q2_report","text":"Draft outline","due_date":"2026-03-25"}"#
        ),
        "Checklist item 1 added to 'Write_the_Q2_report'."
    );
    assert_eq!(
        ok(
            &home,
            "add_agenda_checklist_item",
            r#"{"item_name":"Write the Q2 report.","text":"Write first section"}"#
        ),
        "Checklist item 2 added to 'Write_the_Q2_report'."
    );
    insta::assert_snapshot!("2_add_agenda_checklist_item", home.file(REPORT));

    assert_eq!(
        ok(
            &home,
            "complete_agenda_checklist_item",
            r#"{"item_name":"report","checklist_item_id":"1"}"#
        ),
        "Checklist item 1 on 'Write_the_Q2_report' marked as completed."
    );
    insta::assert_snapshot!("3_complete_agenda_checklist_item", home.file(REPORT));

    assert_eq!(
        ok(
            &home,
            "edit_agenda_checklist_item",
            r#"{"item_name":"report","checklist_item_id":2,"new_text":"Second edited"}"#
        ),
        "Checklist item 2 on 'Write_the_Q2_report' updated."
    );
    insta::assert_snapshot!("4_edit_agenda_checklist_item", home.file(REPORT));

    home.set_now("2026-03-20T03:44:00Z");
    assert_eq!(
        ok(
            &home,
            "add_agenda_item_update",
            r#"{"item_name":"report","note":"Started"}"#
        ),
        "Update added to 'Write_the_Q2_report' at 2026-03-20 09:14."
    );
    home.set_now("2026-03-20T08:32:00Z");
    ok(
        &home,
        "add_agenda_item_update",
        r#"{"item_name":"report","note":"More"}"#,
    );
    let updated = home.file(REPORT);
    assert_eq!(
        updated,
        "---\nchecklist:\n- completed: true\n  due_date: '2026-03-25'\n  id: 1\n  text: Draft outline\n- completed: false\n  id: 2\n  text: Second edited\ncompleted: false\ndate: '2026-03-20'\nname: Write the Q2 report.\nstatus: created\n---\n\nWrite the Q2 report.\nSecond line details\n\n## Updates\n\n- **2026-03-20 09:14**: Started\n- **2026-03-20 14:02**: More"
    );
    insta::assert_snapshot!("5_add_agenda_item_update", updated);

    assert_eq!(
        ok(&home, "list_agenda_items", r#"{"item_date":"2026-03-20"}"#),
        r#"{"item_date":"2026-03-20","items":[{"name":"Write_the_Q2_report","text":"Write the Q2 report.\nSecond line details","checklist_completed":1,"checklist_total":2}]}"#
    );

    assert_eq!(
        ok(&home, "complete_agenda_item", r#"{"item_name":"report"}"#),
        "Agenda item 'Write_the_Q2_report' marked as completed."
    );
    let completed = home.file(REPORT);
    assert_eq!(
        completed,
        "---\nchecklist:\n- completed: true\n  due_date: '2026-03-25'\n  id: 1\n  text: Draft outline\n- completed: false\n  id: 2\n  text: Second edited\nclosing_comment: null\ncompleted: true\ndate: '2026-03-20'\nname: Write the Q2 report.\nstatus: completed\n---\n\nWrite the Q2 report.\nSecond line details\n\n## Updates\n\n- **2026-03-20 09:14**: Started\n- **2026-03-20 14:02**: More"
    );
    insta::assert_snapshot!("6_complete_agenda_item", completed);
    assert_eq!(
        ok(&home, "list_agenda_items", r#"{"item_date":"2026-03-20"}"#),
        r#"{"item_date":"2026-03-20","items":[]}"#
    );

    ok(&home, "add_agenda_item", r#"{"text":"Cancel gym trial"}"#);
    let r = home.call("delete_agenda_item", r#"{"item_name":"gym"}"#);
    assert_eq!(r.content, "Agenda item 'Cancel_gym_trial' deleted.");
    assert_eq!(r.effects.len(), 1, "delete unpins the item");
    assert_eq!(home.files(), vec![REPORT.to_owned()]);
}

#[test]
fn due_item_files_after_each_tool() {
    let mut home = kolkata();
    home.set_now("2026-11-30T03:23:24Z");
    let r = home.call(
        "create_due_item",
        r#"{"name":"Pay rent","text":"Transfer rent to the landlord","trigger_time":"2026-12-02 09:00","trigger_context":"when paying bills"}"#,
    );
    assert_eq!(
        r.content,
        "Hybrid due item 'Pay rent' has been created for 2026-12-02 09:00 and context: when paying bills."
    );
    assert!(matches!(r.effects.as_slice(), [elroy_core::Effect::Pin(_)]));
    let hybrid = home.file("Pay_rent.md");
    assert_eq!(
        hybrid,
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Pay rent\nstatus: created\ntrigger_context: when paying bills\ntrigger_datetime: 2026-12-02 03:30:00+00:00\n---\n\nTransfer rent to the landlord"
    );
    insta::assert_snapshot!("1_create_due_item_hybrid", hybrid);

    assert_eq!(
        ok(
            &home,
            "create_due_item",
            r#"{"name":"Ask about the lease: renewal","text":"Ask whether the lease renewal paperwork arrived.","trigger_context":"next time the landlord comes up"}"#
        ),
        "Contextual due item 'Ask about the lease: renewal' has been created."
    );
    let contextual = home.file("Ask_about_the_lease__renewal.md");
    assert_eq!(
        contextual,
        "---\ncompleted: false\ndate: '2026-11-30'\nname: 'Ask about the lease: renewal'\nstatus: created\ntrigger_context: next time the landlord comes up\n---\n\nAsk whether the lease renewal paperwork arrived."
    );
    insta::assert_snapshot!("2_create_due_item_contextual", contextual);

    assert_eq!(
        ok(
            &home,
            "create_due_item",
            r#"{"name":"Tea","text":"Make tea","trigger_time":"in 2 minutes"}"#
        ),
        // Not one of Elroy's formats: Elroy's sentence and what was understood.
        "Timed due item 'Tea' has been created for in 2 minutes (Mon 2026-11-30 08:55 +05:30)."
    );
    insta::assert_snapshot!("3_create_due_item_timed", home.file("Tea.md"));

    assert_eq!(
        ok(&home, "print_due_item", r#"{"name":"Pay rent"}"#),
        "Due item 'Pay rent':\nTrigger Time: 2026-12-02 09:00:00+05:30\nContext: when paying bills\nText: Transfer rent to the landlord"
    );

    assert_eq!(
        ok(
            &home,
            "rename_due_item",
            r#"{"old_name":"Tea","new_name":"Green tea: sencha"}"#
        ),
        "Due item 'Tea' has been renamed to 'Green tea: sencha'."
    );
    assert!(!home.agenda_dir().join("Tea.md").exists());
    insta::assert_snapshot!("4_rename_due_item", home.file("Green_tea__sencha.md"));

    assert_eq!(
        ok(
            &home,
            "update_due_item_text",
            r#"{"name":"Green tea: sencha","new_text":"Brew sencha at 70°C"}"#
        ),
        "Due item 'Green tea: sencha' text has been updated."
    );
    insta::assert_snapshot!("5_update_due_item_text", home.file("Green_tea__sencha.md"));

    assert_eq!(
        ok(
            &home,
            "complete_due_item",
            r#"{"name":"Pay rent","closing_comment":"paid on time"}"#
        ),
        "Due item 'Pay rent' has been marked as completed. Comment: paid on time"
    );
    let completed = home.file("Pay_rent.md");
    assert_eq!(
        completed,
        "---\nclosing_comment: paid on time\ncompleted: true\ndate: '2026-11-30'\nname: Pay rent\nstatus: completed\ntrigger_context: when paying bills\ntrigger_datetime: 2026-12-02 03:30:00+00:00\n---\n\nTransfer rent to the landlord"
    );
    insta::assert_snapshot!("6_complete_due_item", completed);

    let r = home.call("delete_due_item", r#"{"name":"Green tea: sencha"}"#);
    assert_eq!(r.content, "Due item 'Green tea: sencha' has been deleted.");
    assert!(matches!(
        r.effects.as_slice(),
        [elroy_core::Effect::Unpin(_)]
    ));
    assert_eq!(
        home.files(),
        vec!["Ask_about_the_lease__renewal.md", "Pay_rent.md"]
    );
}
