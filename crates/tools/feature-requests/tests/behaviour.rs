//! `docs/tools.md#feature-requests` and `docs/formats.md#feature-requests`: the worked example byte
//! for byte, lookup, the R4/R7 cases, and a request written here read back with Elroy's loader
//! rules.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{call, context};
use elroy_feature_requests::FeatureRequestStore;
use jiff::tz::TimeZone;

fn ok(ctx: &elroy_core::ToolContext, tool: &str, args: &str) -> String {
    let r = call(ctx, tool, args);
    assert!(!r.is_error, "{tool} {args}: {}", r.content);
    r.content
}

#[test]
fn worked_example_is_byte_exact() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let utc = TimeZone::UTC;
    assert_eq!(
        ok(
            &context(h, "DEFAULT", "2026-11-30T03:23:26.014063Z", utc.clone()),
            "make_feature_request",
            r#"{"title":"Add calendar sync","description":"Allow Elroy to sync reminders with external calendar providers.","rationale":"Useful."}"#
        ),
        "Created feature request: Add calendar sync (add-calendar-sync.md)."
    );
    assert_eq!(
        ok(
            &context(h, "DEFAULT", "2026-11-30T03:23:26.020112Z", utc.clone()),
            "make_feature_request",
            r#"{"title":"Calendar syncing for reminders","description":"Allow reminders to appear in external calendar providers."}"#
        ),
        "Merged into existing feature request: Add calendar sync (add-calendar-sync.md; match reason: similar behavior description)."
    );
    assert_eq!(
        ok(
            &context(h, "DEFAULT", "2026-11-30T03:23:26.027519Z", utc.clone()),
            "edit_feature_request",
            r#"{"identifier":"Calendar syncing for reminders","title":"Add calendar integration","status":"planned"}"#
        ),
        "Updated feature request: Add calendar integration (add-calendar-sync.md)."
    );
    assert_eq!(
        std::fs::read_to_string(h.join("feature-requests/add-calendar-sync.md")).unwrap(),
        include_str!("data/worked_example.md")
    );
    assert_eq!(
        ok(
            &context(h, "DEFAULT", "2026-11-30T03:24:00Z", utc),
            "list_feature_requests",
            ""
        ),
        "Feature requests (1):\n\n- Add calendar integration [planned] (add-calendar-sync.md) | aliases: Calendar syncing for reminders\n  Summary: Allow Elroy to sync reminders with external calendar providers."
    );
}

#[test]
fn empty_backlog_and_lookup_by_id_title_stem_alias() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(
        home.path(),
        "DEFAULT",
        "2026-03-16T08:30:00Z",
        TimeZone::UTC,
    );
    assert_eq!(
        ok(&ctx, "list_feature_requests", "{}"),
        "No feature requests found."
    );
    assert_eq!(
        ok(
            &ctx,
            "edit_feature_request",
            r#"{"identifier":"  voice input ","status":"closed"}"#
        ),
        "Feature request '  voice input ' not found."
    );
    ok(
        &ctx,
        "make_feature_request",
        r#"{"title":"Add dark mode","description":"Switch the UI to a dark theme.","rationale":"   "}"#,
    );
    // Not a duplicate (combined 0.818 < 0.82, summary 0.5): a second file.
    assert_eq!(
        ok(
            &ctx,
            "make_feature_request",
            r#"{"title":"Dark mode","description":"Something else entirely."}"#
        ),
        "Created feature request: Dark mode (dark-mode.md)."
    );
    for identifier in ["add-dark-mode", "ADD  dark_mode!", "add dark mode"] {
        let args = format!(r#"{{"identifier":"{identifier}","description":" New summary. "}}"#);
        assert_eq!(
            ok(&ctx, "edit_feature_request", &args),
            "Updated feature request: Add dark mode (add-dark-mode.md)."
        );
    }
    let text =
        std::fs::read_to_string(home.path().join("feature-requests/add-dark-mode.md")).unwrap();
    assert!(text.contains("## Summary\nNew summary.\n"));
    assert!(
        !text.contains("Why It Matters"),
        "blank rationale is absent"
    );
    // One edit block only: the identical block is already contained.
    assert_eq!(
        text.matches("- Edited at: 2026-03-16T08:30:00+00:00")
            .count(),
        1
    );
    // Closed requests are listed too, and still take part in matching.
    ok(
        &ctx,
        "edit_feature_request",
        r#"{"identifier":"dark-mode","status":"closed"}"#,
    );
    assert_eq!(
        ok(
            &ctx,
            "make_feature_request",
            r#"{"title":"dark MODE","description":"x"}"#
        ),
        "Merged into existing feature request: Dark mode (dark-mode.md; match reason: exact title match)."
    );
    let listing = ok(&ctx, "list_feature_requests", "{}");
    assert!(listing.contains("- Dark mode [closed] (dark-mode.md) | aliases: dark MODE\n"));
}

#[test]
fn yaml_significant_titles_and_safe_names() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(
        home.path(),
        "DEFAULT",
        "2026-03-16T08:30:00Z",
        TimeZone::UTC,
    );
    assert_eq!(
        ok(
            &ctx,
            "make_feature_request",
            r#"{"title":"Re: October 24 booking","description":"d"}"#
        ),
        "Created feature request: Re: October 24 booking (re_-october-24-booking.md)."
    );
    let text = std::fs::read_to_string(
        home.path()
            .join("feature-requests/re_-october-24-booking.md"),
    )
    .unwrap();
    assert!(text.contains("\ntitle: 'Re: October 24 booking'\n"));
    assert!(
        ok(&ctx, "list_feature_requests", "{}")
            .contains("- Re: October 24 booking [open] (re_-october-24-booking.md)")
    );
    assert_eq!(
        ok(
            &ctx,
            "make_feature_request",
            r#"{"title":"../secrets","description":"keep out"}"#
        ),
        "Created feature request: ../secrets (secrets.md)."
    );
    assert!(home.path().join("feature-requests/secrets.md").is_file());
    // The unique-path rule, ignoring case (D12).
    std::fs::write(
        home.path().join("feature-requests/Voice.md"),
        "---\ntitle: Unrelated backlog entry\n---\n\nhand written",
    )
    .unwrap();
    assert_eq!(
        ok(
            &ctx,
            "make_feature_request",
            r#"{"title":"voice","description":"Talk instead of typing, please."}"#
        ),
        "Created feature request: voice (voice-2.md)."
    );
}

#[test]
fn many_unreadable_files_make_one_line() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("feature-requests");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..40 {
        std::fs::write(
            dir.join(format!("broken-{i:02}.md")),
            "---\ntitle: a: b\n---\n",
        )
        .unwrap();
    }
    let ctx = context(
        home.path(),
        "DEFAULT",
        "2026-03-16T08:30:00Z",
        TimeZone::UTC,
    );
    assert_eq!(
        ok(&ctx, "list_feature_requests", "{}"),
        "No feature requests found.\n40 feature request files could not be read and were skipped \
         (first: broken-00.md, broken-01.md, broken-02.md; `elroy doctor` lists them all)"
    );
}

#[test]
fn unreadable_file_is_skipped_and_never_rewritten() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("feature-requests");
    std::fs::create_dir_all(&dir).unwrap();
    let broken = "---\ntitle: Re: October 24 booking\n---\n\n## Summary\nx\n";
    std::fs::write(dir.join("broken.md"), broken).unwrap();
    let ctx = context(
        home.path(),
        "DEFAULT",
        "2026-03-16T08:30:00Z",
        TimeZone::UTC,
    );
    let listing = ok(&ctx, "list_feature_requests", "{}");
    assert!(
        listing.starts_with("No feature requests found.\nSkipped unreadable file broken.md: "),
        "{listing}"
    );
    let r = call(
        &ctx,
        "edit_feature_request",
        r#"{"identifier":"broken","status":"closed"}"#,
    );
    assert!(r.is_error);
    assert!(
        r.content.starts_with(
            "Error invoking tool edit_feature_request: invalid front matter in feature-requests/broken.md: "
        ),
        "{}",
        r.content
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("broken.md")).unwrap(),
        broken
    );
    // A readable request is listed with the skipped line after it; a make ignores the broken file.
    ok(
        &ctx,
        "make_feature_request",
        r#"{"title":"Broken","description":"d"}"#,
    );
    let listing = ok(&ctx, "list_feature_requests", "{}");
    assert!(listing.starts_with("Feature requests (1):\n\n- Broken [open] (broken-2.md)\n  Summary: d\nSkipped unreadable file broken.md: "), "{listing}");
    assert_eq!(
        std::fs::read_to_string(dir.join("broken.md")).unwrap(),
        broken
    );
}

#[test]
fn unknown_keys_survive_an_edit() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("feature-requests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("x.md"),
        "---\npriority: high\ntitle: X\n---\n\nFree text only.\n",
    )
    .unwrap();
    let ctx = context(
        home.path(),
        "DEFAULT",
        "2026-03-16T08:30:00Z",
        TimeZone::UTC,
    );
    assert_eq!(
        ok(
            &ctx,
            "edit_feature_request",
            r#"{"identifier":"x","status":"done"}"#
        ),
        "Updated feature request: X (x.md)."
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("x.md")).unwrap(),
        "---\npriority: high\ntitle: X\nid: x\nstatus: done\nsource: user_request\ncreated_at: '2026-03-16T08:30:00+00:00'\nupdated_at: '2026-03-16T08:30:00+00:00'\naliases: []\n---\n\n## Summary\nFree text only.\n\n## Supporting Context\n- Edited at: 2026-03-16T08:30:00+00:00\n- Edited by user token: DEFAULT\n"
    );
}

/// A request made here, read back with Elroy's loader rules
/// (`docs/formats.md#loading-a-feature-request`), keeps every field, including YAML-significant and
/// non-ASCII text and a multi-line summary.
#[test]
fn written_request_reads_back_with_every_field() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(home.path(), "team", "2026-03-16T08:30:00.5Z", TimeZone::UTC);
    let args = serde_json::json!({
        "title": "  Sync: Café #1 'quoted' — für alle ",
        "description": "Line one: yes\n\nLine two # not a comment",
        "rationale": "yes",
    });
    assert_eq!(
        ok(&ctx, "make_feature_request", &args.to_string()),
        "Created feature request: Sync: Café #1 'quoted' — für alle (sync_-café-_1-_quoted_-_-für-alle.md)."
    );
    let store = FeatureRequestStore::new(home.path(), home.path().join("users/team"));
    let r = store.find("sync café 1 quoted für alle").unwrap().unwrap();
    assert_eq!(r.file_name, "sync_-café-_1-_quoted_-_-für-alle.md");
    assert_eq!(r.id, "sync_-café-_1-_quoted_-_-für-alle");
    assert_eq!(r.title, "Sync: Café #1 'quoted' — für alle");
    assert_eq!(r.status, "open");
    assert_eq!(r.source, "user_request");
    assert_eq!(r.created_at, "2026-03-16T08:30:00.500000+00:00");
    assert_eq!(r.updated_at, r.created_at);
    assert!(r.aliases.is_empty());
    assert_eq!(r.summary, "Line one: yes\n\nLine two # not a comment");
    assert_eq!(r.rationale.as_deref(), Some("yes"));
    assert_eq!(
        r.supporting_context.as_deref(),
        Some(
            "- Captured at: 2026-03-16T08:30:00.500000+00:00\n- Requested title: Sync: Café #1 'quoted' — für alle\n- Description: Line one: yes\n\nLine two # not a comment\n- Rationale: yes\n- User token: team"
        )
    );
}

/// Elroy reports the request as its loader reads it back: a blank title becomes the stem
/// (checked against Elroy 0.5.0 through the oracle).
#[test]
fn blank_title_is_reported_as_the_stem() {
    let home = tempfile::tempdir().unwrap();
    let ctx = context(
        home.path(),
        "DEFAULT",
        "2026-03-16T08:31:00Z",
        TimeZone::UTC,
    );
    assert_eq!(
        ok(
            &ctx,
            "make_feature_request",
            r#"{"title":"   ","description":"  blank title  "}"#
        ),
        "Created feature request: feature-request (feature-request.md)."
    );
    assert_eq!(
        ok(&ctx, "list_feature_requests", "{}"),
        "Feature requests (1):\n\n- feature-request [open] (feature-request.md)\n  Summary: blank title"
    );
    let text =
        std::fs::read_to_string(home.path().join("feature-requests/feature-request.md")).unwrap();
    assert!(text.contains("\ntitle: ''\n"), "{text}");
}
