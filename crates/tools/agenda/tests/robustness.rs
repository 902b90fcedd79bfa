//! Robustness requirements R1, R2, R4, R5, R7–R10 and the matching rules of D6, through the tools.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::Home;
use elroy_agenda::AgendaStore;
use jiff::tz::TimeZone;

fn home_in(tz: &str) -> Home {
    let mut home = Home::new("DEFAULT", TimeZone::get(tz).unwrap());
    home.set_now("2026-11-30T03:23:24Z");
    home
}

fn write(home: &Home, file: &str, text: &str) {
    std::fs::create_dir_all(home.agenda_dir()).unwrap();
    std::fs::write(home.agenda_dir().join(file), text).unwrap();
}

#[test]
fn r1_unknown_keys_survive_edits() {
    let home = home_in("Asia/Kolkata");
    write(
        &home,
        "Q3_report.md",
        "---\ncompleted: false\ndate: '2026-11-30'\npriority: high\nstatus: created\n---\n\nQ3 report",
    );
    let r = home.call(
        "add_agenda_item_update",
        r#"{"item_name":"report","note":"Started"}"#,
    );
    assert_eq!(
        r.content,
        "Update added to 'Q3_report' at 2026-11-30 08:53."
    );
    assert_eq!(
        home.file("Q3_report.md"),
        "---\ncompleted: false\ndate: '2026-11-30'\npriority: high\nstatus: created\n---\n\nQ3 report\n\n## Updates\n\n- **2026-11-30 08:53**: Started"
    );
    // Rewrites of the front matter keep it too.
    home.call("complete_agenda_item", r#"{"item_name":"q3"}"#);
    assert!(home.file("Q3_report.md").contains("\npriority: high\n"));

    write(
        &home,
        "Pay_rent.md",
        "---\ncompleted: false\ndate: '2026-11-29'\nname: Pay rent\npriority: high\nstatus: created\ntrigger_datetime: 2026-12-02 03:30:00+00:00\n---\n\nTransfer rent",
    );
    let r = home.call(
        "update_due_item_text",
        r#"{"name":"Pay rent","new_text":"Pay by card"}"#,
    );
    assert_eq!(r.content, "Due item 'Pay rent' text has been updated.");
    assert_eq!(
        home.file("Pay_rent.md"),
        "---\ncompleted: false\ndate: '2026-11-29'\nname: Pay rent\npriority: high\nstatus: created\ntrigger_datetime: 2026-12-02 03:30:00+00:00\n---\n\nPay by card"
    );
}

#[test]
fn r2_broken_front_matter_is_reported_by_name_and_never_rewritten() {
    let home = home_in("UTC");
    let broken = "---\ndate: [2026-03-20\n---\n\nBroken item";
    write(&home, "Broken.md", broken);
    let r = home.call("complete_agenda_item", r#"{"item_name":"Broken"}"#);
    assert!(r.is_error);
    assert!(
        r.content.starts_with(
            "Error invoking tool complete_agenda_item: invalid front matter in agenda/Broken.md: "
        ),
        "{}",
        r.content
    );
    for (tool, args) in [
        (
            "add_agenda_item_update",
            r#"{"item_name":"broken","note":"x"}"#,
        ),
        ("delete_agenda_item", r#"{"item_name":"Broken"}"#),
        (
            "add_agenda_checklist_item",
            r#"{"item_name":"Broken","text":"x"}"#,
        ),
    ] {
        let r = home.call(tool, args);
        assert!(
            r.is_error && r.content.contains("agenda/Broken.md"),
            "{tool}"
        );
    }
    assert_eq!(home.file("Broken.md"), broken);
    // Listings skip it; other files still work; the store reports it by name.
    home.call(
        "add_agenda_item",
        r#"{"text":"Fine","item_date":"2026-03-20"}"#,
    );
    let r = home.call("list_agenda_items", r#"{"item_date":"2026-03-20"}"#);
    assert_eq!(
        r.content,
        r#"{"item_date":"2026-03-20","items":[{"name":"Fine","text":"Fine","checklist_completed":0,"checklist_total":0}],"skipped_files":1,"skipped":[{"file":"agenda/Broken.md","reason":"invalid front matter in agenda/Broken.md: line 2: a \"[\" list is never closed with \"]\""}]}"#
    );
    let store = home.ctx.services.require::<AgendaStore>().unwrap();
    let broken_files = store.broken_files().unwrap();
    assert_eq!(broken_files.len(), 1);
    assert_eq!(broken_files[0].0, "agenda/Broken.md");
    // A strict boolean that is not one is an error naming the key and the file.
    write(
        &home,
        "Odd.md",
        "---\ncompleted: maybe\ndate: '2026-03-20'\nstatus: created\n---\n\nOdd",
    );
    let r = home.call("complete_agenda_item", r#"{"item_name":"Odd"}"#);
    assert_eq!(
        r.content,
        "Error invoking tool complete_agenda_item: invalid boolean for 'completed' in agenda/Odd.md: maybe"
    );
}

#[test]
fn r2_hand_edits_are_seen() {
    let home = home_in("UTC");
    home.call(
        "add_agenda_item",
        r#"{"text":"Plan","item_date":"2026-11-30"}"#,
    );
    let list = || home.call("list_agenda_items", "").content;
    assert!(list().contains(r#""text":"Plan""#));
    let path = home.agenda_dir().join("Plan.md");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\n\nPlan", "\n\nPlan the offsite");
    std::fs::write(&path, edited).unwrap();
    assert!(
        list().contains(r#""text":"Plan the offsite""#),
        "{}",
        list()
    );
    // Another program appends a line; the next edit keeps it.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\nwith snacks");
    std::fs::write(&path, text).unwrap();
    home.call(
        "add_agenda_item_update",
        r#"{"item_name":"plan","note":"Booked"}"#,
    );
    assert!(
        home.file("Plan.md")
            .contains("Plan the offsite\nwith snacks\n\n## Updates")
    );
}

#[test]
fn r4_names_never_escape_the_agenda_directory() {
    let home = home_in("UTC");
    home.call("add_agenda_item", r#"{"text":"/etc/hosts"}"#);
    assert!(home.file("etc_hosts.md").contains("\nname: /etc/hosts\n"));
    for (name, file) in [
        ("C:\\Windows\\win.ini", "C__Windows_win_ini.md"),
        ("CON", "CON_.md"),
        ("../../x", "x.md"),
        ("...", "agenda_item.md"),
    ] {
        let args = serde_json::json!({"name": name, "text": "x", "trigger_context": "y"});
        let r = home.call("create_due_item", &args.to_string());
        assert!(!r.is_error, "{}", r.content);
        assert!(home.agenda_dir().join(file).exists(), "{file}");
    }
    let r = home.call("print_due_item", r#"{"name":"../../x"}"#);
    assert!(r.content.starts_with("Due item '../../x':"));
    assert!(!home.dir.path().join("x.md").exists());
}

#[test]
fn r5_delimiters_in_text_are_safe() {
    let home = home_in("UTC");
    home.call(
        "create_due_item",
        r#"{"name":"Fence","text":"---\nfoo: bar\n---\nhello","trigger_context":"x"}"#,
    );
    let r = home.call("print_due_item", r#"{"name":"Fence"}"#);
    assert_eq!(
        r.content,
        "Due item 'Fence':\nContext: x\nText: ---\nfoo: bar\n---\nhello"
    );
}

#[test]
fn r7_yaml_significant_values_round_trip() {
    let home = home_in("UTC");
    let r = home.call(
        "create_due_item",
        r#"{"name":"Governance: quarterly review","text":"x","trigger_context":"y"}"#,
    );
    assert!(!r.is_error);
    assert!(
        home.file("Governance__quarterly_review.md")
            .contains("\nname: 'Governance: quarterly review'\n")
    );
    let r = home.call(
        "print_due_item",
        r#"{"name":"Governance: quarterly review"}"#,
    );
    assert_eq!(
        r.content,
        "Due item 'Governance: quarterly review':\nContext: y\nText: x"
    );
    home.call("add_agenda_item", r#"{"text":"yes"}"#);
    assert!(home.file("yes.md").contains("\nname: 'yes'\n"));
    let r = home.call("add_agenda_item", r#"{"text":"yes"}"#);
    assert_eq!(
        r.content,
        "Error invoking tool add_agenda_item: Task 'yes' already exists"
    );
    for text in [
        "#tag",
        "it's 'quoted'",
        "tab\there",
        "Café – 日本",
        "123",
        "~",
    ] {
        let args = serde_json::json!({"text": text, "item_date": "2026-01-05"});
        assert!(
            !home.call("add_agenda_item", &args.to_string()).is_error,
            "{text}"
        );
    }
    let listed: serde_json::Value = serde_json::from_str(
        &home
            .call("list_agenda_items", r#"{"item_date":"2026-01-05"}"#)
            .content,
    )
    .unwrap();
    let mut texts: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect();
    texts.sort_unstable();
    assert_eq!(
        texts,
        vec![
            "#tag",
            "123",
            "Café – 日本",
            "it's 'quoted'",
            "tab\there",
            "~"
        ]
    );
}

#[test]
fn r8_r9_times_use_the_configured_zone_and_stay_put() {
    let mut home = home_in("Asia/Kolkata");
    home.set_now("2026-06-30T12:00:00Z");
    home.call(
        "create_due_item",
        r#"{"name":"Standup","text":"x","trigger_time":"2026-07-01T09:00"}"#,
    );
    assert!(
        home.file("Standup.md")
            .contains("\ntrigger_datetime: 2026-07-01 03:30:00+00:00\n")
    );
    let r = home.call("print_due_item", r#"{"name":"Standup"}"#);
    assert_eq!(
        r.content,
        "Due item 'Standup':\nTrigger Time: 2026-07-01 09:00:00+05:30\nText: x"
    );
    home.call(
        "create_due_item",
        r#"{"name":"Sync","text":"x","trigger_time":"2026-07-01T09:00+02:00"}"#,
    );
    assert!(
        home.file("Sync.md")
            .contains("\ntrigger_datetime: 2026-07-01 07:00:00+00:00\n")
    );
    let store = home.ctx.services.require::<AgendaStore>().unwrap();
    assert!(
        store
            .due_now("2026-07-01T03:29:59Z".parse().unwrap())
            .unwrap()
            .is_empty()
    );
    let due = store
        .due_now("2026-07-01T03:30:00Z".parse().unwrap())
        .unwrap();
    assert_eq!(due.len(), 1);
    assert!(
        due[0]
            .due_notice(&home.ctx.time.tz)
            .contains("This item was scheduled for 2026-07-01 09:00:00+05:30 and is now due.")
    );
    // R9: another zone changes the display only.
    let before = home.file("Standup.md");
    home.ctx.time.tz = TimeZone::get("America/New_York").unwrap();
    let r = home.call("print_due_item", r#"{"name":"Standup"}"#);
    assert_eq!(
        r.content,
        "Due item 'Standup':\nTrigger Time: 2026-06-30 23:30:00-04:00\nText: x"
    );
    assert_eq!(home.file("Standup.md"), before);
    // Hand-written forms: an offset, or none (UTC).
    for (file, stamp) in [
        ("Hand_offset.md", "2026-07-01 09:00:00+05:30"),
        ("Hand_naive.md", "2026-07-01 03:30:00"),
    ] {
        write(
            &home,
            file,
            &format!(
                "---\ncompleted: false\ndate: '2026-06-30'\nstatus: created\ntrigger_datetime: {stamp}\n---\n\nx"
            ),
        );
    }
    let due = store
        .due_now("2026-07-01T03:30:00Z".parse().unwrap())
        .unwrap();
    assert_eq!(due.len(), 3);
    assert!(
        store
            .due_now("2026-07-01T03:29:59Z".parse().unwrap())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn r10_relative_times() {
    for (input, stored) in [
        ("2m", "2026-11-30 03:25:24+00:00"),
        ("in 2 minutes", "2026-11-30 03:25:24+00:00"),
        ("+1h30m", "2026-11-30 04:53:24+00:00"),
        ("in an hour", "2026-11-30 04:23:24+00:00"),
        ("in 1 hour and 30 minutes", "2026-11-30 04:53:24+00:00"),
        ("in 3 days", "2026-12-03 03:23:24+00:00"),
    ] {
        let home = home_in("UTC");
        let args = serde_json::json!({"name": "Tea", "text": "x", "trigger_time": input});
        let r = home.call("create_due_item", &args.to_string());
        // Not one of Elroy's formats: Elroy's sentence and what was understood.
        let at = elroy_agenda::parse_stored_trigger(stored).unwrap();
        let understood = elroy_agenda::format_spoken_instant(at, &TimeZone::UTC);
        assert_eq!(
            r.content,
            format!("Timed due item 'Tea' has been created for {input} ({understood}).")
        );
        assert!(
            home.file("Tea.md")
                .contains(&format!("\ntrigger_datetime: {stored}\n"))
        );
    }
    let home = home_in("UTC");
    let r = home.call(
        "create_due_item",
        r#"{"name":"Tea","text":"x","trigger_time":"0m"}"#,
    );
    // Elroy's message, then the forms elroy also reads.
    assert!(
        r.content.starts_with(
            "Error invoking tool create_due_item: Invalid datetime format: '0m'. Expected formats: 'YYYY-MM-DD HH:MM:SS', 'YYYY-MM-DD HH:MM', 'YYYY-MM-DD', or ISO 8601 format; elroy also accepts"
        ),
        "{}",
        r.content
    );
    assert!(home.files().is_empty());
}

#[test]
fn d6_exact_matches_win_and_candidates_are_sorted() {
    let home = home_in("UTC");
    home.call("add_agenda_item", r#"{"text":"Write Q2 report"}"#);
    write(
        &home,
        "Write_Q2_report-2.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nstatus: created\n---\n\nsecond",
    );
    let r = home.call("complete_agenda_item", r#"{"item_name":"write_q2_report"}"#);
    assert_eq!(
        r.content,
        "Agenda item 'Write_Q2_report' marked as completed."
    );
    home.call("add_agenda_item", r#"{"text":"Write Q2 report"}"#);
    let r = home.call("complete_agenda_item", r#"{"item_name":"q2"}"#);
    assert_eq!(
        r.content,
        "Error invoking tool complete_agenda_item: Multiple agenda items match 'q2': Write_Q2_report-2, Write_Q2_report-3. Be more specific."
    );
    // The name matches exactly too (case-insensitive).
    let r = home.call("delete_agenda_item", r#"{"item_name":"WRITE Q2 REPORT"}"#);
    assert_eq!(r.content, "Agenda item 'Write_Q2_report-3' deleted.");
    for blank in ["", "   "] {
        let args = serde_json::json!({"item_name": blank});
        let r = home.call("complete_agenda_item", &args.to_string());
        assert_eq!(
            r.content,
            format!(
                "Error invoking tool complete_agenda_item: No agenda item found matching '{blank}'."
            )
        );
    }
}

#[test]
fn due_item_errors() {
    let mut home = home_in("Asia/Kolkata");
    let call = |home: &Home, tool: &str, args: &str| home.call(tool, args).content;
    assert_eq!(
        call(&home, "create_due_item", r#"{"name":"x","text":"y"}"#),
        "Error invoking tool create_due_item: Either trigger_time or trigger_context must be provided for due items"
    );
    assert_eq!(
        call(
            &home,
            "create_due_item",
            r#"{"name":"  ","text":"y","trigger_context":"c"}"#
        ),
        "Error invoking tool create_due_item: Due item name cannot be empty"
    );
    home.set_now("2026-03-16T13:04:00.5Z");
    assert_eq!(
        call(
            &home,
            "create_due_item",
            r#"{"name":"Old","text":"y","trigger_time":"2026-03-01 10:00"}"#
        ),
        "Error invoking tool create_due_item: Attempted to create a due item for 2026-03-01 04:30:00+00:00, which is in the past. The current time is 2026-03-16 13:04:00.500000+00:00"
    );
    assert!(
        !home
            .call(
                "create_due_item",
                r#"{"name":"A","text":"y","trigger_time":"in 1 day"}"#
            )
            .is_error
    );
    assert_eq!(
        call(
            &home,
            "create_due_item",
            r#"{"name":"A","text":"y","trigger_time":"in 2 days"}"#
        ),
        "Error invoking tool create_due_item: Timed due item 'A' already exists"
    );
    home.call("add_agenda_item", r#"{"text":"Plain"}"#);
    assert_eq!(
        call(
            &home,
            "create_due_item",
            r#"{"name":"Plain","text":"y","trigger_context":"c"}"#
        ),
        "Error invoking tool create_due_item: Contextual due item 'Plain' already exists"
    );
    home.set_now("2026-03-16T13:05:00Z");
    home.call(
        "create_due_item",
        r#"{"name":"B","text":"y","trigger_context":"c"}"#,
    );
    assert_eq!(
        call(
            &home,
            "rename_due_item",
            r#"{"old_name":"Nope","new_name":"C"}"#
        ),
        "Error invoking tool rename_due_item: Active due item 'Nope' not found for user 1. Active items: A, B"
    );
    assert_eq!(
        call(
            &home,
            "rename_due_item",
            r#"{"old_name":"A","new_name":" "}"#
        ),
        "Error invoking tool rename_due_item: Due item name cannot be empty"
    );
    assert_eq!(
        call(
            &home,
            "rename_due_item",
            r#"{"old_name":"A","new_name":"B"}"#
        ),
        "Error invoking tool rename_due_item: Active due item 'B' already exists for user 1"
    );
    assert_eq!(
        call(
            &home,
            "rename_due_item",
            r#"{"old_name":"A","new_name":"Plain"}"#
        ),
        "Error invoking tool rename_due_item: Active task 'Plain' already exists."
    );
    assert_eq!(
        call(&home, "delete_due_item", r#"{"name":"Nope"}"#),
        "Error invoking tool delete_due_item: Active due item 'Nope' not found. Active due items: A, B"
    );
    assert_eq!(
        call(
            &home,
            "update_due_item_text",
            r#"{"name":"Nope","new_text":"t"}"#
        ),
        "Error invoking tool update_due_item_text: Due item 'Nope' not found. Valid items: A,B"
    );
    assert_eq!(
        call(&home, "list_agenda_items", r#"{"item_date":"2026-3-18"}"#),
        "Error invoking tool list_agenda_items: Invalid date format '2026-3-18'. Use YYYY-MM-DD."
    );
    assert_eq!(
        call(
            &home,
            "add_agenda_checklist_item",
            r#"{"item_name":"Plain","text":"t","due_date":"soon"}"#
        ),
        "Error invoking tool add_agenda_checklist_item: Invalid due_date format 'soon'. Use YYYY-MM-DD."
    );
    assert_eq!(
        call(&home, "add_agenda_item", r#"{"text":"\nsecond line"}"#),
        "Error invoking tool add_agenda_item: Task name cannot be empty"
    );
}

#[test]
fn other_users_have_their_own_agenda() {
    let home = Home::new("team", TimeZone::UTC);
    home.call("add_agenda_item", r#"{"text":"Ours"}"#);
    assert!(home.dir.path().join("users/team/agenda/Ours.md").exists());
    std::fs::write(home.agenda_dir().join("Bad.md"), "---\na: [\n---\n").unwrap();
    let r = home.call("delete_agenda_item", r#"{"item_name":"Bad"}"#);
    assert!(
        r.content
            .contains("invalid front matter in users/team/agenda/Bad.md: "),
        "{}",
        r.content
    );
}

#[test]
fn d5_crlf_files_are_read_and_rewritten_as_lf_with_the_body_intact() {
    let home = home_in("UTC");
    write(
        &home,
        "Crlf.md",
        "---\r\ncompleted: false\r\ndate: '2026-11-30'\r\nstatus: created\r\n---\r\n\r\nLine one\r\nLine two  \r\n",
    );
    let r = home.call("list_agenda_items", "");
    assert_eq!(
        r.content,
        r#"{"item_date":"2026-11-30","items":[{"name":"Crlf","text":"Line one\nLine two","checklist_completed":0,"checklist_total":0}]}"#
    );
    home.call(
        "add_agenda_checklist_item",
        r#"{"item_name":"crlf","text":"Step"}"#,
    );
    assert_eq!(
        home.file("Crlf.md"),
        "---\nchecklist:\n- completed: false\n  id: 1\n  text: Step\ncompleted: false\ndate: '2026-11-30'\nstatus: created\n---\n\nLine one\nLine two  \n"
    );
}

/// `docs/tools.md#rename_due_item` step 5: a new name with the same sanitized base keeps the file
/// (Elroy 0.5.0 moves it to `-2`, found by an oracle run); D12: file names are unique ignoring
/// case.
#[test]
fn rename_to_the_same_base_keeps_the_file_and_names_ignore_case() {
    let home = home_in("UTC");
    home.call(
        "create_due_item",
        r#"{"name":"Überweisung an Vermieter","text":"x","trigger_context":"rent"}"#,
    );
    let r = home.call(
        "rename_due_item",
        r#"{"old_name":"Überweisung an Vermieter","new_name":"Überweisung an Vermieter :"}"#,
    );
    assert_eq!(
        r.content,
        "Due item 'Überweisung an Vermieter' has been renamed to 'Überweisung an Vermieter :'."
    );
    assert_eq!(home.files(), vec!["Überweisung_an_Vermieter.md"]);
    assert!(
        home.file("Überweisung_an_Vermieter.md")
            .contains("\nname: 'Überweisung an Vermieter :'\n")
    );
    home.call(
        "create_due_item",
        r#"{"name":"üBERWEISUNG AN vERMIETER :","text":"y","trigger_context":"rent"}"#,
    );
    assert_eq!(
        home.files(),
        vec![
            "Überweisung_an_Vermieter.md",
            "üBERWEISUNG_AN_vERMIETER-2.md"
        ]
    );
}

/// Kind: a front-matter key given twice (hand edits). Elroy 0.5.0 (PyYAML) reads the file with
/// the last value winning, and so does elroy: the issue's example (a second `status:` line in
/// an agenda file: the item stays listed and can be completed) and a repeated `name:` in a due
/// item (the last name finds it).
#[test]
fn duplicate_front_matter_keys_read_last_value_wins() {
    let home = home_in("UTC");
    write(
        &home,
        "Plan_trip.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Plan trip\nstatus: created\nstatus: in_progress\n---\n\nPlan trip",
    );
    let r = home.call("list_agenda_items", "{}");
    let listing: serde_json::Value = serde_json::from_str(&r.content).unwrap();
    assert_eq!(listing["items"][0]["name"], "Plan_trip", "{}", r.content);
    assert!(listing.get("skipped_files").is_none(), "{}", r.content);
    // The other order: the last `status: created` wins, so the item is active and completes.
    write(
        &home,
        "Plan_trip.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Plan trip\nstatus: in_progress\nstatus: created\n---\n\nPlan trip",
    );
    let r = home.call("complete_agenda_item", r#"{"item_name":"Plan trip"}"#);
    assert!(!r.is_error, "{}", r.content);
    assert!(home.file("Plan_trip.md").contains("\nstatus: completed\n"));

    write(
        &home,
        "Call_mum.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Call mom\nname: Call mum\nstatus: created\ntrigger_context: when the user mentions family\n---\n\nRing her",
    );
    let r = home.call("print_due_item", r#"{"name":"Call mum"}"#);
    assert!(r.content.contains("Ring her"), "{}", r.content);
}

/// Kind: an agenda file that truly cannot be read. The listing says how many files it skipped,
/// which, and why in plain words; a tool aimed at the file names it with the reason. An
/// unquoted `title: Re: …` and a tab-indented line.
#[test]
fn unreadable_agenda_files_are_counted_and_explained() {
    let home = home_in("UTC");
    write(
        &home,
        "Good.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nstatus: created\n---\n\nGood",
    );
    write(
        &home,
        "Reply.md",
        "---\ncompleted: false\ndate: '2026-11-30'\ntitle: Re: October booking\nstatus: created\n---\n\nReply",
    );
    write(
        &home,
        "Tabbed.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nchecklist:\n\t- text: x\nstatus: created\n---\n\nTabbed",
    );
    let r = home.call("list_agenda_items", "{}");
    let listing: serde_json::Value = serde_json::from_str(&r.content).unwrap();
    assert_eq!(
        listing["items"].as_array().unwrap().len(),
        1,
        "{}",
        r.content
    );
    assert_eq!(listing["skipped_files"], 2);
    assert_eq!(listing["skipped"][0]["file"], "agenda/Reply.md");
    assert_eq!(
        listing["skipped"][0]["reason"],
        "invalid front matter in agenda/Reply.md: line 4: a value containing \": \" must be in quotes (or the line is indented too far)"
    );
    assert_eq!(listing["skipped"][1]["file"], "agenda/Tabbed.md");
    assert!(
        listing["skipped"][1]["reason"]
            .as_str()
            .unwrap()
            .ends_with("line 5: a tab is used for indentation; YAML allows only spaces"),
        "{}",
        r.content
    );
    let r = home.call("complete_agenda_item", r#"{"item_name":"Reply"}"#);
    assert_eq!(
        r.content,
        "Error invoking tool complete_agenda_item: invalid front matter in agenda/Reply.md: line 4: a value containing \": \" must be in quotes (or the line is indented too far)"
    );
    assert!(!r.content.contains("Options"));
}

/// Kind: one name in composed (NFC) and decomposed (NFD) spelling. The issue's example: a due
/// item created in NFC is found by its NFD spelling, creating it again in NFD is refused, and
/// the file name keeps `é`. Also an agenda item (its name from the text) added twice.
#[test]
fn nfc_and_nfd_names_are_one_item() {
    let home = home_in("UTC");
    let r = home.call(
        "create_due_item",
        r#"{"name":"Call Jos\u00e9 about the caf\u00e9","text":"Ask about Friday","trigger_context":"when the user mentions coffee"}"#,
    );
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(home.files(), ["Call_José_about_the_café.md"]);
    let r = home.call(
        "print_due_item",
        r#"{"name":"Call Jose\u0301 about the cafe\u0301"}"#,
    );
    assert!(r.content.contains("Ask about Friday"), "{}", r.content);
    let r = home.call(
        "create_due_item",
        r#"{"name":"Call Jose\u0301 about the cafe\u0301","text":"again","trigger_context":"coffee"}"#,
    );
    assert!(r.content.contains("already exists"), "{}", r.content);
    assert_eq!(home.files(), ["Call_José_about_the_café.md"]);

    let r = home.call(
        "add_agenda_item",
        r#"{"text":"Re\u0301sume\u0301 review","item_date":"2026-11-30"}"#,
    );
    assert!(!r.is_error, "{}", r.content);
    assert!(home.files().contains(&"Résumé_review.md".to_owned()));
    let r = home.call(
        "add_agenda_item",
        r#"{"text":"R\u00e9sum\u00e9 review","item_date":"2026-11-30"}"#,
    );
    assert!(r.content.contains("already exists"), "{}", r.content);
    let r = home.call(
        "complete_agenda_item",
        r#"{"item_name":"re\u0301sume\u0301"}"#,
    );
    assert!(!r.is_error, "{}", r.content);
}

/// Kind: names no file system can store (over 255 bytes once sanitised). A due item named with
/// 80 4-byte characters (CJK extension B) gets a file name of at most 255 bytes, cut at a
/// character boundary, and keeps its full name in the front matter; a long Cyrillic name
/// (2 bytes each) keeps its 80 characters.
#[test]
fn long_names_in_any_script_fit_the_file_system() {
    let home = home_in("UTC");
    let ext_b: String = std::iter::repeat_n('\u{20BB7}', 80).collect();
    let cyrillic = "Позвонить бабушке насчёт дачи, огурцов и помидоров в субботу утром пораньше";
    for name in [ext_b.as_str(), cyrillic] {
        for _ in 0..2 {
            let r = home.call(
                "create_due_item",
                &serde_json::json!({"name": name, "text": "x", "trigger_context": "weekend"})
                    .to_string(),
            );
            // The second call is a duplicate; the first must have been stored.
            assert!(!r.content.contains("Unable to write"), "{}", r.content);
        }
        let r = home.call(
            "print_due_item",
            &serde_json::json!({"name": name}).to_string(),
        );
        assert!(!r.is_error, "{}", r.content);
    }
    let files = home.files();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        assert!(f.len() <= 255, "{} bytes", f.len());
    }
    let ext_file = files.iter().find(|f| f.starts_with('\u{20BB7}')).unwrap();
    assert_eq!(ext_file.len(), 240 + 3);
    assert!(home.file(ext_file).contains(&format!("name: {ext_b}")));
    let cyr_file = files.iter().find(|f| f.starts_with('П')).unwrap();
    assert_eq!(
        cyr_file.trim_end_matches(".md").chars().count(),
        cyrillic.chars().count()
    );
}

/// Elroy 0.5.0 skips only completed and deleted items, so an item whose `status` is any
/// other word (`in_progress`, from a hand edit or another tool; `waiting`, the same kind) is found
/// by every agenda and due-item tool and listed.
#[test]
fn any_open_status_matches_like_created() {
    let home = home_in("UTC");
    write(
        &home,
        "Renew.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Renew passport\nstatus: in_progress\n---\n\nRenew passport",
    );
    write(
        &home,
        "Water.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nstatus: waiting\n---\n\nWater the plants",
    );
    write(
        &home,
        "Call.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nname: Call Sam\nstatus: in_progress\ntrigger_datetime: 2026-12-01 09:00:00+00:00\n---\n\nCall Sam",
    );
    write(
        &home,
        "Gone.md",
        "---\ncompleted: false\ndate: '2026-11-30'\nstatus: deleted\n---\n\nGone",
    );
    let list = home.call("list_agenda_items", "").content;
    assert!(list.contains("Renew passport"), "{list}");
    assert!(list.contains("Water the plants"), "{list}");
    assert!(!list.contains("Gone"), "{list}");
    let r = home.call(
        "add_agenda_item_update",
        r#"{"item_name":"Renew","note":"Photos taken"}"#,
    );
    assert!(!r.is_error, "{}", r.content);
    let r = home.call("complete_agenda_item", r#"{"item_name":"Renew"}"#);
    assert!(!r.is_error, "{}", r.content);
    assert!(home.file("Renew.md").contains("status: completed"));
    let r = home.call("complete_agenda_item", r#"{"item_name":"water"}"#);
    assert!(!r.is_error, "{}", r.content);
    let r = home.call("print_due_item", r#"{"name":"Call Sam"}"#);
    assert!(!r.is_error, "{}", r.content);
    let r = home.call("complete_due_item", r#"{"name":"Call Sam"}"#);
    assert!(!r.is_error, "{}", r.content);
    let r = home.call("complete_agenda_item", r#"{"item_name":"Gone"}"#);
    assert!(r.is_error, "{}", r.content);
}
