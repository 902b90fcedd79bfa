//! The merge rules, on files in elroy's format (from the `elroy-home-0.5.0`
//! fixture and `docs/formats.md`'s worked examples), asserting the exact merged bytes and the
//! report.

use jiff::Timestamp;

use super::*;

mod props;

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

// ---------------------------------------------------------------- feature requests

const EXPORT: &str = "feature-requests/export-memories-to-markdown.md";
const EXPORT_BASE: &str = "---
id: export-memories-to-markdown
title: Export memories to Markdown
status: open
source: user_request
created_at: '2026-03-15T23:42:41.500000+00:00'
updated_at: '2026-03-17T02:40:00.123456+00:00'
aliases:
- Export memories as markdown files
---

## Summary
Let users export every memory as a Markdown file with YAML front matter.

## Why It Matters
People want to back up and edit their memories in Obsidian.

## Supporting Context
- Captured at: 2026-03-15T23:42:41.500000+00:00
- Requested title: Export memories to Markdown
- Description: Let users export every memory as a Markdown file with YAML front matter.
- Rationale: People want to back up and edit their memories in Obsidian.
- User token: fixture-user-public

- Captured at: 2026-03-17T02:40:00.123456+00:00
- Requested title: Export memories as markdown files
- Description: Export all memories into a folder of markdown files.
- User token: fixture-user-public
";

#[test]
fn feature_request_sections_merge_as_text_aliases_and_entries_as_sets() {
    let ours = EXPORT_BASE
        .replace(
            "updated_at: '2026-03-17T02:40:00.123456+00:00'",
            "updated_at: '2026-03-18T10:00:00+00:00'",
        )
        .replace(
            "- Export memories as markdown files\n",
            "- Export memories as markdown files\n- Markdown export\n",
        )
        .replacen(
            "People want to back up",
            "People want to back up (weekly)",
            1,
        )
        .replace(
            "- Description: Export all memories into a folder of markdown files.\n- User token: fixture-user-public\n",
            "- Description: Export all memories into a folder of markdown files.\n- User token: fixture-user-public\n\n- Captured at: 2026-03-18T10:00:00+00:00\n- Requested title: Markdown export\n- User token: fixture-user-public\n",
        );
    let theirs = EXPORT_BASE
        .replace(
            "updated_at: '2026-03-17T02:40:00.123456+00:00'",
            "updated_at: '2026-03-18T09:00:00+00:00'",
        )
        .replace("status: open", "status: planned")
        .replace(
            "aliases:\n- Export memories as markdown files\n",
            "aliases:\n- Export memories as markdown files\n- 'Export: Obsidian vault'\n",
        )
        .replace(
            "front matter.\n\n## Why",
            "front matter.\nInclude archived memories.\n\n## Why",
        )
        .replace(
            "- Description: Export all memories into a folder of markdown files.\n- User token: fixture-user-public\n",
            "- Description: Export all memories into a folder of markdown files.\n- User token: fixture-user-public\n\n- Edited at: 2026-03-18T09:00:00+00:00\n- Edited by user token: fixture-user-public\n",
        );
    let out = merge(EXPORT, Some(EXPORT_BASE), Some(&ours), Some(&theirs));
    let expected = "---
id: export-memories-to-markdown
title: Export memories to Markdown
status: planned
source: user_request
created_at: '2026-03-15T23:42:41.500000+00:00'
updated_at: '2026-03-18T10:00:00+00:00'
aliases:
- Export memories as markdown files
- Markdown export
- 'Export: Obsidian vault'
---

## Summary
Let users export every memory as a Markdown file with YAML front matter.
Include archived memories.

## Why It Matters
People want to back up (weekly) and edit their memories in Obsidian.

## Supporting Context
- Captured at: 2026-03-15T23:42:41.500000+00:00
- Requested title: Export memories to Markdown
- Description: Let users export every memory as a Markdown file with YAML front matter.
- Rationale: People want to back up and edit their memories in Obsidian.
- User token: fixture-user-public

- Captured at: 2026-03-17T02:40:00.123456+00:00
- Requested title: Export memories as markdown files
- Description: Export all memories into a folder of markdown files.
- User token: fixture-user-public

- Captured at: 2026-03-18T10:00:00+00:00
- Requested title: Markdown export
- User token: fixture-user-public

- Edited at: 2026-03-18T09:00:00+00:00
- Edited by user token: fixture-user-public
";
    assert_eq!(written(&out, EXPORT), Some(expected));
    assert_eq!(
        out.report,
        vec![ReportEntry::Merged {
            path: EXPORT.into()
        }]
    );
}

const CALENDAR: &str = "feature-requests/calendar-sync_-google-_1.md";
const CALENDAR_BASE: &str = "---
id: calendar-sync_-google-_1
title: \"Calendar sync: Google & Outlook \\u2014 f\\xFCr Teams\"
status: planned
source: user_request
created_at: '2026-03-17T02:42:30.654321+00:00'
updated_at: '2026-03-17T03:30:00.000100+00:00'
aliases: []
---

## Summary
Sync timed due items with Google Calendar events.

## Why It Matters
Most users already live in their calendar.

## Supporting Context
- Captured at: 2026-03-17T02:42:30.654321+00:00
- Requested title: Calendar sync: Google #1
- Description: Sync timed due items with Google Calendar events.
- User token: fixture-user-public

- Edited at: 2026-03-17T03:30:00.000100+00:00
- Edited by user token: fixture-user-public
";

#[test]
fn feature_request_section_conflict_goes_to_a_sibling_and_the_rest_merges() {
    // Both rewrite the summary (a conflict); theirs also adds an alias to an empty list and ours
    // removes the "Why It Matters" section, which theirs left unchanged.
    let ours = CALENDAR_BASE
        .replace(
            "Sync timed due items with Google Calendar events.\n\n## Why",
            "Sync due items with Google and Outlook calendars.\n\n## Why",
        )
        .replace(
            "## Why It Matters\nMost users already live in their calendar.\n\n",
            "",
        );
    let theirs = CALENDAR_BASE
        .replace(
            "Sync timed due items with Google Calendar events.\n\n## Why",
            "Show calendar events next to due items.\n\n## Why",
        )
        .replace("aliases: []", "aliases:\n- Outlook sync");
    let out = merge(CALENDAR, Some(CALENDAR_BASE), Some(&ours), Some(&theirs));
    // The merged keys are theirs' keys: theirs' block is kept byte for byte (Elroy's escapes).
    let expected = ours.replace("aliases: []", "aliases:\n- Outlook sync");
    assert_eq!(written(&out, CALENDAR), Some(expected.as_str()));
    let sibling = format!("{CALENDAR}.sync-conflict-desk_top");
    assert_eq!(written(&out, &sibling), Some(theirs.as_str()));
    assert_eq!(
        out.report,
        vec![ReportEntry::Sibling {
            path: CALENDAR.into(),
            sibling
        }]
    );
}

#[test]
fn repeated_headings_and_checklist_ids_merge_occurrence_by_occurrence() {
    // A hand edit left two `## Summary` sections; each side edits a different one.
    let base = "---\nid: x\ntitle: X\n---\n\n## Summary\nfirst\n\n## Summary\nsecond\n";
    let ours = base.replace("first", "first, ours");
    let theirs = base.replace("second", "second, theirs");
    let path = "feature-requests/x.md";
    let out = merge(path, Some(base), Some(&ours), Some(&theirs));
    assert_eq!(
        written(&out, path),
        Some(
            "---\nid: x\ntitle: X\n---\n\n## Summary\nfirst, ours\n\n## Summary\nsecond, theirs\n"
        )
    );
    // A checklist whose id 1 appears twice on theirs: the repeat is a new entry, renumbered.
    let base =
        "---\nchecklist:\n- completed: false\n  id: 1\n  text: a\ncompleted: false\n---\n\nT";
    let ours = base.replace("- completed: false", "- completed: true");
    let theirs = base.replace(
        "  text: a\n",
        "  text: a\n- completed: false\n  id: 1\n  text: b\n",
    );
    let path = "agenda/T.md";
    let out = merge(path, Some(base), Some(&ours), Some(&theirs));
    assert_eq!(
        written(&out, path),
        Some(
            "---\nchecklist:\n- completed: true\n  id: 1\n  text: a\n- completed: false\n  id: 2\n  text: b\ncompleted: false\n---\n\nT"
        )
    );
}

// ---------------------------------------------------------------- MEMORY.md and USER.md

const NOTES_BASE: &str = "# Long-term notes

- Ask before booking travel.
- The user prefers short answers in the morning.
- Deploys happen on Thursdays.
- Standup is at 09:30.
";

#[test]
fn notes_entries_merge_as_sets() {
    // Ours: adds two entries (one theirs adds too), removes "Deploys…", edits "Standup…".
    // Theirs: adds one entry, removes "Standup…" (edited by ours: the edit is kept), edits the
    // heading a person wrote.
    let ours = "# Long-term notes

- Ask before booking travel.
- The user prefers short answers in the morning.
- Standup is at 09:45.
- The user's sister is called Mira.
- Prefers aisle seats.
";
    let theirs = "# Long-term notes (shared)

- Ask before booking travel.
- The user prefers short answers in the morning.
- Deploys happen on Thursdays.
- Prefers aisle seats.
- Uses a Dvorak keyboard.
";
    let out = merge("MEMORY.md", Some(NOTES_BASE), Some(ours), Some(theirs));
    assert_eq!(
        written(&out, "MEMORY.md"),
        Some(
            "# Long-term notes (shared)

- Ask before booking travel.
- The user prefers short answers in the morning.
- Standup is at 09:45.
- The user's sister is called Mira.
- Prefers aisle seats.
- Uses a Dvorak keyboard.
"
        )
    );
    assert_eq!(
        out.report,
        vec![ReportEntry::Merged {
            path: "MEMORY.md".into()
        }]
    );
}

#[test]
fn user_notes_keep_person_lines_in_place_and_edits_over_removals() {
    let path = "users/team/USER.md";
    let base = "# About the user\nWritten by hand; keep short.\n\n- Lives in Lyon.\n- Works at a bakery.\n\n## Family\n- Two cats.";
    // Ours removes "Two cats" and appends at the end of the file; theirs edits "Two cats" and
    // adds an entry under the first list; both add the same entry in different places.
    let ours = "# About the user\nWritten by hand; keep short.\n\n- Lives in Lyon.\n- Works at a bakery.\n- Likes jazz.\n\n## Family\n- Has a brother.";
    let theirs = "# About the user\nWritten by hand; keep short.\n\n- Lives in Lyon.\n- Works at a bakery.\n- Bakes sourdough.\n\n## Family\n- Two cats and a dog.\n- Likes jazz.";
    let out = merge(path, Some(base), Some(ours), Some(theirs));
    assert_eq!(
        written(&out, path),
        Some(
            "# About the user\nWritten by hand; keep short.\n\n- Lives in Lyon.\n- Works at a bakery.\n- Likes jazz.\n- Bakes sourdough.\n\n## Family\n- Has a brother.\n- Two cats and a dog."
        )
    );
}

// ---------------------------------------------------------------- other files, siblings

#[test]
fn other_files_merge_as_text_or_go_to_a_unique_sibling() {
    let path = "AGENTS.md";
    let out = merge(
        path,
        Some("a\nb\nc\n"),
        Some("A\nb\nc\n"),
        Some("a\nb\nC\n"),
    );
    assert_eq!(written(&out, path), Some("A\nb\nC\n"));
    let taken = vec!["AGENTS.md.sync-conflict-desk_top".to_owned()];
    let out = merge_file(
        &MergeInput::new(
            path,
            Some(b"a\n"),
            side(Some("ours\n"), 100, "laptop"),
            side(Some("theirs\n"), 200, "desk top"),
        )
        .with_taken(&taken),
    );
    assert_eq!(
        out,
        MergeOutcome {
            writes: vec![(
                "AGENTS.md.sync-conflict-desk_top-2".into(),
                Some(b"theirs\n".to_vec())
            )],
            report: vec![ReportEntry::Sibling {
                path: path.into(),
                sibling: "AGENTS.md.sync-conflict-desk_top-2".into()
            }],
        }
    );
}

#[test]
fn unreadable_store_files_go_to_a_sibling_untouched() {
    // Invalid front matter on theirs, and a file that is not UTF-8.
    let theirs = "---\ndate: [unclosed\n---\n\nRenew the passport.";
    let out = merge(
        RENT,
        Some(RENT_BASE),
        Some(&RENT_BASE.replace("Transfer", "Send")),
        Some(theirs),
    );
    assert_eq!(
        out.writes,
        vec![(
            format!("{RENT}.sync-conflict-desk_top"),
            Some(theirs.as_bytes().to_vec())
        )]
    );
    let out = merge_file(&MergeInput::new(
        KYOTO,
        Some(KYOTO_BASE.as_bytes()),
        side(Some("---\nid: 1\n---\n\nchanged"), 100, "a"),
        Side {
            bytes: Some(b"\xff\xfe"),
            time: Timestamp::from_second(200).unwrap(),
            host: "b",
        },
    ));
    assert_eq!(
        out.writes,
        vec![(
            format!("{KYOTO}.sync-conflict-b"),
            Some(b"\xff\xfe".to_vec())
        )]
    );
}

#[test]
fn file_kinds_by_path() {
    assert_eq!(FileKind::of("agenda/Pay_rent.md"), FileKind::Agenda);
    assert_eq!(
        FileKind::of("users/team/memories/archive/Dog.md"),
        FileKind::Memory
    );
    assert_eq!(
        FileKind::of("feature-requests/x.md"),
        FileKind::FeatureRequest
    );
    assert_eq!(FileKind::of("users/team/USER.md"), FileKind::Notes);
    assert_eq!(FileKind::of("agenda/sub/x.md"), FileKind::Other);
    assert_eq!(FileKind::of("SOUL.md"), FileKind::Other);
}
