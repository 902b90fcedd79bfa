//! Elroy 0.5.0's fixture (`shared/fixtures/elroy-home-0.5.0`): its feature requests load and list
//! exactly as Elroy listed them, and replaying Elroy's calls of these tools in a fresh home gives
//! Elroy's results and Elroy's files.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::Path;

use common::{call, context, ist, shared_dir};
use serde_json::Value;

const TOOLS: [&str; 3] = [
    "make_feature_request",
    "edit_feature_request",
    "list_feature_requests",
];

fn fixture() -> std::path::PathBuf {
    shared_dir().join("fixtures/elroy-home-0.5.0")
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture().join("expected.json")).unwrap())
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn fixture_requests_list_as_elroy_listed_them() {
    let home = tempfile::tempdir().unwrap();
    copy_dir(
        &fixture().join("home/feature-requests"),
        &home.path().join("feature-requests"),
    );
    let ctx = context(home.path(), "DEFAULT", "2026-03-17T04:00:00Z", ist());
    let result = call(&ctx, "list_feature_requests", "{}");
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        expected()["final"]["list_feature_requests"]
            .as_str()
            .unwrap()
    );
    // Loading keeps every field Elroy wrote.
    let store = elroy_feature_requests::FeatureRequestStore::new(home.path(), home.path());
    let requests = store.requests().unwrap();
    let cal = &requests[0];
    assert_eq!(cal.id, "calendar-sync_-google-_1");
    assert_eq!(cal.title, "Calendar sync: Google & Outlook — für Teams");
    assert_eq!(cal.status, "planned");
    assert_eq!(cal.source, "user_request");
    assert_eq!(cal.created_at, "2026-03-17T02:42:30.654321+00:00");
    assert_eq!(cal.updated_at, "2026-03-17T03:30:00.000100+00:00");
    assert!(cal.aliases.is_empty());
    assert_eq!(
        cal.rationale.as_deref(),
        Some("Most users already live in their calendar.")
    );
    assert!(
        cal.supporting_context
            .as_deref()
            .unwrap()
            .ends_with("- Edited by user token: fixture-user-public")
    );
    assert_eq!(requests[1].aliases, ["Export memories as markdown files"]);
    // Nothing was written by listing.
    for name in [
        "calendar-sync_-google-_1.md",
        "export-memories-to-markdown.md",
    ] {
        assert_eq!(
            std::fs::read(home.path().join("feature-requests").join(name)).unwrap(),
            std::fs::read(fixture().join("home/feature-requests").join(name)).unwrap()
        );
    }
}

/// Every call of these tools in `expected.json`, in order, in one fresh home, at its recorded
/// instant, in `IST-5:30`, as `fixture-user-public`.
#[test]
fn replay_expected_calls() {
    let expected = expected();
    let env = &expected["environment"];
    let token = env["user_token"].as_str().unwrap();
    assert_eq!(env["timezone"]["posix_tz"], "IST-5:30");
    let home = tempfile::tempdir().unwrap();
    let mut replayed = 0;
    for c in expected["calls"].as_array().unwrap() {
        let tool = c["tool"].as_str().unwrap();
        if !TOOLS.contains(&tool) {
            continue;
        }
        let ctx = context(home.path(), token, c["clock_utc"].as_str().unwrap(), ist());
        let args = serde_json::to_string(&c["arguments"]).unwrap();
        let result = call(&ctx, tool, &args);
        assert_eq!(
            (result.content.as_str(), result.is_error),
            (
                c["content"].as_str().unwrap(),
                c["is_error"].as_bool().unwrap()
            ),
            "seq {}",
            c["seq"]
        );
        replayed += 1;
    }
    assert_eq!(replayed, 6);

    // The files: Elroy's bytes, except that we write non-ASCII raw (D5), so the title line of
    // the edited request is single-quoted UTF-8 instead of Elroy's escaped double quotes.
    let ours = home
        .path()
        .join("users")
        .join(token)
        .join("feature-requests");
    let theirs = fixture().join("home/feature-requests");
    let mut names: Vec<String> = std::fs::read_dir(&ours)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "calendar-sync_-google-_1.md",
            "export-memories-to-markdown.md"
        ]
    );
    let read = |dir: &Path, name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(
        read(&ours, "export-memories-to-markdown.md"),
        read(&theirs, "export-memories-to-markdown.md")
    );
    let elroy_title = "title: \"Calendar sync: Google & Outlook \\u2014 f\\xFCr Teams\"";
    assert!(read(&theirs, "calendar-sync_-google-_1.md").contains(elroy_title));
    assert_eq!(
        read(&ours, "calendar-sync_-google-_1.md"),
        read(&theirs, "calendar-sync_-google-_1.md").replace(
            elroy_title,
            "title: 'Calendar sync: Google & Outlook — für Teams'"
        )
    );
}
