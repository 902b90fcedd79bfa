//! The agenda directory Elroy 0.5.0 wrote (`shared/fixtures/elroy-home-0.5.0/home/agenda`) used as
//! a home's agenda: every file parses, and the listings and due items read back as Elroy reported
//! them in `expected.json` (`final`), apart from the D7 time rendering.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{Home, d7_trigger_time, shared};
use elroy_agenda::AgendaStore;
use jiff::tz::TimeZone;

fn fixture_home() -> (Home, serde_json::Value) {
    let root = shared().join("fixtures/elroy-home-0.5.0");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected.json")).unwrap())
            .unwrap();
    let tz = TimeZone::posix("IST-5:30").unwrap();
    let mut home = Home::new("DEFAULT", tz);
    std::fs::create_dir_all(home.agenda_dir()).unwrap();
    for entry in std::fs::read_dir(root.join("home/agenda")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), home.agenda_dir().join(entry.file_name())).unwrap();
    }
    home.set_now("2026-03-17T04:00:00Z");
    (home, expected)
}

#[test]
fn every_fixture_file_parses() {
    let (home, _) = fixture_home();
    let store = home.ctx.services.require::<AgendaStore>().unwrap();
    assert_eq!(
        store.broken_files().unwrap(),
        Vec::<(String, String)>::new()
    );
    let tz = home.ctx.time.tz.clone();
    let facts: Vec<String> = store
        .recall_entries(&tz)
        .unwrap()
        .into_iter()
        .map(|e| e.fact)
        .collect();
    insta::assert_snapshot!("fixture_recall_facts", facts.join("\n---\n"));
}

#[test]
fn listings_and_due_items_equal_elroys() {
    let (home, expected) = fixture_home();
    let tz = home.ctx.time.tz.clone();
    let final_state = &expected["final"];
    for (date, want) in final_state["list_agenda_items"].as_object().unwrap() {
        let got = home.call("list_agenda_items", &format!(r#"{{"item_date":"{date}"}}"#));
        assert!(!got.is_error);
        assert_eq!(got.content, want.as_str().unwrap(), "{date}");
    }
    let names = final_state["active_due_item_names"].as_array().unwrap();
    assert_eq!(names.len(), 4);
    for name in names {
        let name = name.as_str().unwrap();
        let got = home.call(
            "print_due_item",
            &serde_json::json!({ "name": name }).to_string(),
        );
        let want = final_state["print_due_item"][name].as_str().unwrap();
        assert_eq!(got.content, d7_trigger_time(want, &tz), "{name}");
    }
    // Elroy-written files carry no `name` key; their names are their stems.
    let got = home.call("print_due_item", r#"{"name":"Pay electricity bill"}"#);
    assert_eq!(
        got.content,
        "Error invoking tool print_due_item: Due item 'Pay electricity bill' not found. Valid items: Ask_about_café__wifi__password,Renew_passport,Return_library_books__2,Send_birthday_wishes_to_Anika"
    );
}

#[test]
fn due_now_on_the_fixture() {
    let (home, _) = fixture_home();
    let store = home.ctx.services.require::<AgendaStore>().unwrap();
    let tz = home.ctx.time.tz.clone();
    assert!(
        store
            .due_now("2026-03-25T02:29:59Z".parse().unwrap())
            .unwrap()
            .is_empty()
    );
    let due = store
        .due_now("2026-04-02T04:00:00Z".parse().unwrap())
        .unwrap();
    let notices: Vec<String> = due.iter().map(|d| d.due_notice(&tz)).collect();
    assert_eq!(
        notices,
        vec![
            "⏰ DUE ITEM: 'Send_birthday_wishes_to_Anika' - Send Anika a birthday message.\nMention the 日本 photos.\n\nThis item was scheduled for 2026-03-25 08:00:00+05:30 and is now due. Please inform the user about it and then use the delete_due_item tool to remove it from active due items.",
            "⏰ DUE ITEM: 'Renew_passport' - Renew the passport before the Kyoto trip.\n\nThis item was scheduled for 2026-04-02 09:30:00+05:30 and is now due. Please inform the user about it and then use the delete_due_item tool to remove it from active due items.",
        ]
    );
}

#[test]
fn editing_an_elroy_file_keeps_its_front_matter_bytes() {
    let (home, _) = fixture_home();
    let before = home.file("Prepare_Q2_budget_review.md");
    let r = home.call(
        "add_agenda_item_update",
        r#"{"item_name":"Prepare_Q2_budget_review","note":"Done"}"#,
    );
    assert_eq!(
        r.content,
        "Update added to 'Prepare_Q2_budget_review' at 2026-03-17 09:30."
    );
    let after = home.file("Prepare_Q2_budget_review.md");
    let fm_end = before.find("\n---\n").unwrap();
    assert_eq!(after[..fm_end], before[..fm_end]);
    assert_eq!(after, format!("{before}\n- **2026-03-17 09:30**: Done"));
}
