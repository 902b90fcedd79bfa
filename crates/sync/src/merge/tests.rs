//! The merge rules, on files in elroy's format (from the `elroy-home-0.5.0`
//! fixture and `docs/formats.md`'s worked examples), asserting the exact merged bytes and the
//! report.

use jiff::Timestamp;

use super::*;

mod props;
mod text_stores;
use text_stores::{EXPORT, EXPORT_BASE, NOTES_BASE};

/// Our side changed at t=100 s, theirs at t=200 s (theirs is the later change) unless a test
/// swaps them.
fn side<'a>(bytes: Option<&'a str>, seconds: i64, host: &'a str) -> Side<'a> {
    Side {
        bytes: bytes.map(str::as_bytes),
        time: Timestamp::from_second(seconds).unwrap(),
        host,
    }
}

fn merge(path: &str, base: Option<&str>, ours: Option<&str>, theirs: Option<&str>) -> MergeOutcome {
    merge_file(&MergeInput::new(
        path,
        base.map(str::as_bytes),
        side(ours, 100, "laptop"),
        side(theirs, 200, "desk top"),
    ))
}

/// The content the outcome writes to `path` (`None`: deleted; panics when not written).
fn written<'o>(outcome: &'o MergeOutcome, path: &str) -> Option<&'o str> {
    let (_, content) = outcome
        .writes
        .iter()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("{path} not written: {outcome:#?}"));
    content.as_deref().map(|c| std::str::from_utf8(c).unwrap())
}

fn assert_no_markers(outcome: &MergeOutcome) {
    for (path, content) in &outcome.writes {
        let text = String::from_utf8_lossy(content.as_deref().unwrap_or_default());
        assert!(!text.contains("<<<<<<<"), "{path} holds conflict markers");
    }
}

fn key_conflict(path: &str, key: &str, kept: &str, other: &str) -> ReportEntry {
    ReportEntry::KeyConflict {
        path: path.into(),
        key: key.into(),
        kept: kept.into(),
        other: other.into(),
    }
}

// ---------------------------------------------------------------- agenda and due items

const BUDGET: &str = "agenda/Prepare_Q2_budget_review.md";
/// `agenda/Prepare_Q2_budget_review.md` of the fixture, as elroy rewrites it (keys sorted, no
/// folding).
const BUDGET_BASE: &str = "---
checklist:
- completed: true
  due_date: '2026-03-17'
  id: 1
  text: 'Collect numbers: sales #3 region'
- completed: false
  id: 2
  text: Book room at Café Zentral
completed: false
date: '2026-03-18'
status: created
---

Prepare Q2 budget review
Gather last quarter's actuals.
Compare against plan and flag gaps over 5%.

## Updates

- **2026-03-16 10:15**: Sales numbers received from all regions.
- **2026-03-16 11:10**: Draft shared with Anika: waiting on feedback #review";

#[test]
fn agenda_front_matter_merges_key_by_key_and_the_later_change_wins() {
    let ours = BUDGET_BASE
        .replace("date: '2026-03-18'", "date: '2026-03-19'")
        .replace(
            "status: created",
            "name: Prepare Q2 budget review\nstatus: created",
        );
    let theirs = BUDGET_BASE
        .replace("date: '2026-03-18'", "date: '2026-03-20'")
        .replace(
            "completed: false\ndate",
            "completed: false\ncustom_tag: finance\ndate",
        );
    let out = merge(BUDGET, Some(BUDGET_BASE), Some(&ours), Some(&theirs));
    let expected = BUDGET_BASE.replace(
        "completed: false\ndate: '2026-03-18'\nstatus: created",
        "completed: false\ncustom_tag: finance\ndate: '2026-03-20'\nname: Prepare Q2 budget review\nstatus: created",
    );
    assert_eq!(written(&out, BUDGET), Some(expected.as_str()));
    assert_eq!(
        out.report,
        vec![key_conflict(BUDGET, "date", "'2026-03-20'", "'2026-03-19'")]
    );
    assert_no_markers(&out);
}

const RENT: &str = "agenda/Pay_rent.md";
/// `docs/formats.md#agenda-items`'s hybrid due item.
const RENT_BASE: &str = "---
completed: false
date: '2026-11-30'
name: Pay rent
status: created
trigger_context: when paying bills
trigger_datetime: 2026-12-02 03:30:00+00:00
---

Transfer rent to the landlord";

#[test]
fn due_item_keys_merge_and_the_later_side_can_be_ours() {
    // Ours (the later change here) completes the item; theirs moves the trigger and also touches
    // `status` (deleted): ours' status wins, theirs' value is in the report.
    let ours = "---
closing_comment: paid on time
completed: true
date: '2026-11-30'
name: Pay rent
status: completed
trigger_context: when paying bills
trigger_datetime: 2026-12-02 03:30:00+00:00
---

Transfer rent to the landlord";
    let theirs = RENT_BASE
        .replace("2026-12-02 03:30:00", "2026-12-03 03:30:00")
        .replace("status: created", "status: deleted");
    let out = merge_file(&MergeInput::new(
        RENT,
        Some(RENT_BASE.as_bytes()),
        side(Some(ours), 300, "laptop"),
        side(Some(&theirs), 200, "desktop"),
    ));
    let expected = ours.replace("2026-12-02 03:30:00", "2026-12-03 03:30:00");
    assert_eq!(written(&out, RENT), Some(expected.as_str()));
    assert_eq!(
        out.report,
        vec![key_conflict(RENT, "status", "completed", "deleted")]
    );
}

#[test]
fn elroy_folded_front_matter_is_read_and_written_as_elroy_emits_it() {
    // The fixture's file as Elroy 0.5.0 wrote it (escapes, a folded line).
    let base = "---
completed: false
date: '2026-03-18'
status: created
title_note: \"Caf\\xE9 Zentral for the \\u65E5\\u672C delegation, with projector,\\
  \\ whiteboard\"
---

Prepare Q2 budget review";
    let ours = base.replace("date: '2026-03-18'", "date: '2026-03-19'");
    let theirs = base.replace("status: created", "status: completed");
    let out = merge(BUDGET, Some(base), Some(&ours), Some(&theirs));
    assert_eq!(
        written(&out, BUDGET),
        Some(
            "---
completed: false
date: '2026-03-19'
status: completed
title_note: Café Zentral for the 日本 delegation, with projector, whiteboard
---

Prepare Q2 budget review"
        )
    );
    assert_eq!(
        out.report,
        vec![ReportEntry::Merged {
            path: BUDGET.into()
        }]
    );
}

#[test]
fn agenda_updates_are_the_union_of_both_sides_in_time_order() {
    let ours = format!("{BUDGET_BASE}\n- **2026-03-17 09:00**: Anika replied.");
    let theirs = format!(
        "{BUDGET_BASE}\n- **2026-03-16 18:30**: Asked finance for Q1 actuals.\n- **2026-03-18 08:00**: Room booked."
    );
    let out = merge(BUDGET, Some(BUDGET_BASE), Some(&ours), Some(&theirs));
    let expected = format!(
        "{BUDGET_BASE}\n- **2026-03-16 18:30**: Asked finance for Q1 actuals.\n- **2026-03-17 09:00**: Anika replied.\n- **2026-03-18 08:00**: Room booked."
    );
    assert_eq!(written(&out, BUDGET), Some(expected.as_str()));
    assert_eq!(
        out.report,
        vec![ReportEntry::Merged {
            path: BUDGET.into()
        }]
    );
}

#[test]
fn agenda_updates_union_when_the_base_had_none() {
    // A due item without updates: both sides add the first one (and ours edits the text).
    let ours = format!(
        "{}\n\n## Updates\n\n- **2026-12-01 09:00**: Asked the bank.",
        RENT_BASE.replace("Transfer rent", "Transfer the rent")
    );
    let theirs = format!("{RENT_BASE}\n\n## Updates\n\n- **2026-11-30 20:00**: Found the IBAN.");
    let out = merge(RENT, Some(RENT_BASE), Some(&ours), Some(&theirs));
    let expected = format!(
        "{}\n\n## Updates\n\n- **2026-11-30 20:00**: Found the IBAN.\n- **2026-12-01 09:00**: Asked the bank.",
        RENT_BASE.replace("Transfer rent", "Transfer the rent")
    );
    assert_eq!(written(&out, RENT), Some(expected.as_str()));
}

#[test]
fn agenda_checklist_entries_merge_by_id_position_and_text() {
    // Ours: edits entry 2's text, adds "Send invite" (id 3) and "Print handouts" (id 4).
    // Theirs: completes entry 2, removes entry 1, adds "Order coffee" (id 3) and "Print handouts".
    let ours = BUDGET_BASE.replace(
        "  text: Book room at Café Zentral\n",
        "  text: Book room at Café Zentral for twelve\n- completed: false\n  id: 3\n  text: Send invite\n- completed: false\n  id: 4\n  text: Print handouts\n",
    );
    let theirs = BUDGET_BASE
        .replace(
            "- completed: true\n  due_date: '2026-03-17'\n  id: 1\n  text: 'Collect numbers: sales #3 region'\n",
            "",
        )
        .replace(
            "- completed: false\n  id: 2\n  text: Book room at Café Zentral\n",
            "- completed: true\n  id: 2\n  text: Book room at Café Zentral\n- completed: false\n  id: 3\n  text: Order coffee\n- completed: false\n  id: 4\n  text: Print handouts\n",
        );
    let out = merge(BUDGET, Some(BUDGET_BASE), Some(&ours), Some(&theirs));
    let expected = BUDGET_BASE.replace(
        "checklist:
- completed: true
  due_date: '2026-03-17'
  id: 1
  text: 'Collect numbers: sales #3 region'
- completed: false
  id: 2
  text: Book room at Café Zentral
",
        "checklist:
- completed: true
  id: 2
  text: Book room at Café Zentral for twelve
- completed: false
  id: 3
  text: Send invite
- completed: false
  id: 4
  text: Print handouts
- completed: false
  id: 5
  text: Order coffee
",
    );
    assert_eq!(written(&out, BUDGET), Some(expected.as_str()));
    assert_eq!(
        out.report,
        vec![ReportEntry::Merged {
            path: BUDGET.into()
        }]
    );
}

#[test]
fn checklist_entry_edited_on_both_sides_keeps_the_later_text_and_reports_the_other() {
    let ours = BUDGET_BASE.replace(
        "  text: Book room at Café Zentral\n",
        "  text: Book the big room\n",
    );
    // Theirs removes entry 1 too, which ours edited: the edit is kept.
    let ours = ours.replace("  due_date: '2026-03-17'\n", "  due_date: '2026-03-18'\n");
    let theirs = BUDGET_BASE
        .replace("  text: Book room at Café Zentral\n", "  text: Book the small room\n")
        .replace(
            "- completed: true\n  due_date: '2026-03-17'\n  id: 1\n  text: 'Collect numbers: sales #3 region'\n",
            "",
        );
    let out = merge(BUDGET, Some(BUDGET_BASE), Some(&ours), Some(&theirs));
    let expected = ours.replace("Book the big room", "Book the small room");
    assert_eq!(written(&out, BUDGET), Some(expected.as_str()));
    assert_eq!(
        out.report,
        vec![key_conflict(
            BUDGET,
            "checklist[2].text",
            "Book the small room",
            "Book the big room"
        )]
    );
}

#[test]
fn agenda_text_merges_as_lines() {
    let ours = BUDGET_BASE.replace("Gather last quarter's actuals.", "Gather Q1 actuals.");
    let theirs = BUDGET_BASE.replace("flag gaps over 5%.", "flag gaps over 5%.\nInvite Anika.");
    let out = merge(BUDGET, Some(BUDGET_BASE), Some(&ours), Some(&theirs));
    let expected = BUDGET_BASE
        .replace("Gather last quarter's actuals.", "Gather Q1 actuals.")
        .replace("flag gaps over 5%.", "flag gaps over 5%.\nInvite Anika.");
    assert_eq!(written(&out, BUDGET), Some(expected.as_str()));
    assert_eq!(
        out.report,
        vec![ReportEntry::Merged {
            path: BUDGET.into()
        }]
    );
}

#[test]
fn agenda_text_conflict_keeps_ours_merged_and_theirs_in_a_sibling() {
    let ours = RENT_BASE.replace(
        "Transfer rent to the landlord",
        "Transfer rent to Mrs. Patel",
    );
    let theirs = format!(
        "{}\n\n## Updates\n\n- **2026-12-01 08:00**: Reminder set.",
        RENT_BASE
            .replace("Transfer rent to the landlord", "Pay rent by card")
            .replace("status: created", "status: completed")
    );
    let out = merge(RENT, Some(RENT_BASE), Some(&ours), Some(&theirs));
    // The keys and the updates still merge; the conflicting text stays ours.
    let expected = format!(
        "{}\n\n## Updates\n\n- **2026-12-01 08:00**: Reminder set.",
        ours.replace("status: created", "status: completed")
    );
    assert_eq!(written(&out, RENT), Some(expected.as_str()));
    let sibling = "agenda/Pay_rent.md.sync-conflict-desk_top";
    assert_eq!(written(&out, sibling), Some(theirs.as_str()));
    assert_eq!(
        out.report,
        vec![ReportEntry::Sibling {
            path: RENT.into(),
            sibling: sibling.into()
        }]
    );
    assert_no_markers(&out);
}

// ---------------------------------------------------------------- memories

const KYOTO: &str = "memories/Priya_s_plan__Kyoto_trip__2026.md";
const KYOTO_BASE: &str =
    "---\nid: 1\n---\n\nPriya plans to visit Kyoto (京都) in April 2026 with her sister.";

#[test]
fn memory_text_changed_on_both_sides_keeps_both_texts() {
    let ours = "---\nid: 1\n---\n\nPriya plans to visit Kyoto (京都) in May 2026 with her sister.";
    let theirs = "---\nid: 1\n---\n\nPriya plans to visit Kyoto (京都) in April 2026 with her sister and Nara (奈良).";
    let out = merge(KYOTO, Some(KYOTO_BASE), Some(ours), Some(theirs));
    // Ours stays in place (nothing to write); theirs becomes a new memory.
    let new_path = "memories/Priya_s_plan_Kyoto_trip_2026__from_desk_top.md";
    assert_eq!(out.writes.len(), 1);
    assert_eq!(
        written(&out, new_path),
        Some(
            "---\nname: Priya s plan  Kyoto trip  2026 (from desk top)\n---\n\nPriya plans to visit Kyoto (京都) in April 2026 with her sister and Nara (奈良)."
        )
    );
    assert_eq!(
        out.report,
        vec![ReportEntry::MemoryCopy {
            path: KYOTO.into(),
            new_path: new_path.into(),
            name: "Priya s plan  Kyoto trip  2026 (from desk top)".into(),
        }]
    );
}

#[test]
fn memory_copy_takes_the_known_name_and_a_free_path() {
    let path = "memories/Priya_s_coffee_preference.md";
    let base =
        "---\nid: 2\n---\n\nPriya prefers a flat white with oat milk and avoids café lattes.";
    let ours = "---\nid: 2\n---\n\nPriya prefers a flat white with oat milk.";
    let theirs = "---\nid: 2\nsource: import\n---\n\nPriya now drinks green tea.";
    let taken = vec!["memories/priya_s_coffee_preference__from_desktop.md".to_owned()];
    let out = merge_file(
        &MergeInput::new(
            path,
            Some(base.as_bytes()),
            side(Some(ours), 100, "laptop"),
            side(Some(theirs), 200, "desktop"),
        )
        .with_taken(&taken)
        .with_memory_name(Some("Priya's coffee preference")),
    );
    let new_path = "memories/Priya_s_coffee_preference__from_desktop-2.md";
    // The key theirs added merges into ours; the copy keeps theirs' keys but the id.
    assert_eq!(
        written(&out, path),
        Some("---\nid: 2\nsource: import\n---\n\nPriya prefers a flat white with oat milk.")
    );
    assert_eq!(
        written(&out, new_path),
        Some(
            "---\nname: Priya's coffee preference (from desktop)\nsource: import\n---\n\nPriya now drinks green tea."
        )
    );
    assert_eq!(
        out.report,
        vec![ReportEntry::MemoryCopy {
            path: path.into(),
            new_path: new_path.into(),
            name: "Priya's coffee preference (from desktop)".into(),
        }]
    );
}

#[test]
fn memory_front_matter_changes_merge_key_by_key_without_a_copy() {
    let ours = "---\nid: 1\nname: 'Trip plan: Kyoto #2026'\n---\n\nPriya plans to visit Kyoto (京都) in April 2026 with her sister.";
    let theirs = "---\nid: 1\nname: Kyoto trip\n---\n\nPriya plans to visit Kyoto (京都) in May 2026 with her sister.";
    let out = merge(KYOTO, Some(KYOTO_BASE), Some(ours), Some(theirs));
    assert_eq!(
        written(&out, KYOTO),
        Some(
            "---\nid: 1\nname: Kyoto trip\n---\n\nPriya plans to visit Kyoto (京都) in May 2026 with her sister."
        )
    );
    assert_eq!(
        out.report,
        vec![key_conflict(
            KYOTO,
            "name",
            "Kyoto trip",
            "'Trip plan: Kyoto #2026'"
        )]
    );
}

#[test]
fn memory_created_on_both_sides_at_the_same_path_keeps_both() {
    let path = "users/team/memories/Dog.md";
    let ours = "---\nid: 4\n---\n\nThe dog is called Rex.";
    let theirs = "---\nid: 4\n---\n\nThe dog is a beagle.";
    let out = merge(path, None, Some(ours), Some(theirs));
    assert_eq!(
        written(&out, "users/team/memories/Dog__from_desk_top.md"),
        Some("---\nname: Dog (from desk top)\n---\n\nThe dog is a beagle.")
    );
    assert_eq!(out.writes.len(), 1);
}

// ---------------------------------------------------------------- deleted on one side

#[test]
fn deleted_on_one_side_and_edited_on_the_other_keeps_the_edit() {
    let edited = KYOTO_BASE.replace("April", "May");
    let out = merge(KYOTO, Some(KYOTO_BASE), None, Some(&edited));
    assert_eq!(written(&out, KYOTO), Some(edited.as_str()));
    assert_eq!(
        out.report,
        vec![ReportEntry::EditKeptOverDelete { path: KYOTO.into() }]
    );
    // Ours edited, theirs deleted: ours stays (nothing to write).
    let ours = RENT_BASE.replace("status: created", "status: completed");
    let out = merge(RENT, Some(RENT_BASE), Some(&ours), None);
    assert!(out.writes.is_empty());
    assert_eq!(
        out.report,
        vec![ReportEntry::EditKeptOverDelete { path: RENT.into() }]
    );
}

#[test]
fn one_sided_changes_and_deletes_follow_git() {
    let edited = KYOTO_BASE.replace("April", "May");
    let out = merge(KYOTO, Some(KYOTO_BASE), Some(KYOTO_BASE), Some(&edited));
    assert_eq!(written(&out, KYOTO), Some(edited.as_str()));
    assert!(out.report.is_empty());
    let out = merge(KYOTO, Some(KYOTO_BASE), Some(KYOTO_BASE), None);
    assert_eq!(written(&out, KYOTO), None);
    let out = merge(KYOTO, Some(KYOTO_BASE), Some(&edited), Some(KYOTO_BASE));
    assert_eq!(out, MergeOutcome::default());
}
