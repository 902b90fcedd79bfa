//! Self-reflection's request (`docs/behaviour.md#self-reflection` step 4), as Elroy's
//! `_persist_feature_request` decides it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_feature_requests::{
    EditRequest, FeatureRequestStore, ReflectionAction, ReflectionProposal,
};

fn proposal(excerpt: &str) -> ReflectionProposal {
    ReflectionProposal {
        title: "Improve response handling after direct user corrections".into(),
        summary: "When the user corrects the assistant explicitly, treat it as a sign to re-check the answer and recover within the same turn.".into(),
        rationale: "Recent feedback contained the phrase 'you forgot', which suggests an incomplete or wrong answer.".into(),
        phrase: "you forgot".into(),
        excerpt: excerpt.into(),
    }
}

#[test]
fn create_merge_reopen_unchanged() {
    let home = tempfile::tempdir().unwrap();
    let store = FeatureRequestStore::new(home.path(), home.path());
    let t1: jiff::Timestamp = "2026-03-16T08:30:00Z".parse().unwrap();
    let t2: jiff::Timestamp = "2026-03-16T09:30:00.25Z".parse().unwrap();

    let (r, action) = store
        .record_reflection(t1, &proposal("you forgot the milk"))
        .unwrap();
    assert_eq!(action, ReflectionAction::Created);
    assert_eq!(
        r.file_name,
        "improve-response-handling-after-direct-user-corrections.md"
    );
    let loaded = store.load(&r.file_name).unwrap();
    assert_eq!(loaded.source, "self_reflection");
    assert_eq!(loaded.status, "open");
    assert_eq!(
        loaded.supporting_context.as_deref(),
        Some(
            "- Reflected at: 2026-03-16T08:30:00+00:00\n- Trigger phrase: you forgot\n- Recent user feedback: you forgot the milk"
        )
    );

    // Same excerpt, active request: nothing is written.
    let before = std::fs::read(store.dir().join(&r.file_name)).unwrap();
    let (_, action) = store
        .record_reflection(t2, &proposal("you forgot the milk"))
        .unwrap();
    assert_eq!(action, ReflectionAction::Unchanged);
    assert_eq!(
        std::fs::read(store.dir().join(&r.file_name)).unwrap(),
        before
    );

    // Closed, then the same excerpt again: only reopened.
    store
        .edit(
            t1,
            "DEFAULT",
            "improve response handling after direct user corrections",
            &EditRequest {
                status: Some("Done".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let (r2, action) = store
        .record_reflection(t2, &proposal("you forgot the milk"))
        .unwrap();
    assert_eq!(action, ReflectionAction::Reopened);
    assert_eq!(r2.status, "open");
    assert_eq!(r2.updated_at, "2026-03-16T09:30:00.250000+00:00");

    // A new excerpt: the context grows; the title equals the request's, so no alias.
    let (r3, action) = store
        .record_reflection(t2, &proposal("not quite right"))
        .unwrap();
    assert_eq!(action, ReflectionAction::Merged);
    assert!(r3.aliases.is_empty());
    let context = store
        .load(&r3.file_name)
        .unwrap()
        .supporting_context
        .unwrap();
    assert!(context.ends_with("- Reflected at: 2026-03-16T09:30:00.250000+00:00\n- Trigger phrase: you forgot\n- Recent user feedback: not quite right"));
    assert_eq!(std::fs::read_dir(store.dir()).unwrap().count(), 1);
}
