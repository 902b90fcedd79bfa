//! The merge rules for the stores merged as text sections or sets (feature requests, MEMORY.md
//! and USER.md) and for other files and siblings, on files in elroy's format.

use super::*;

// ---------------------------------------------------------------- feature requests

pub(super) const EXPORT: &str = "feature-requests/export-memories-to-markdown.md";
pub(super) const EXPORT_BASE: &str = "---
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

pub(super) const NOTES_BASE: &str = "# Long-term notes

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
