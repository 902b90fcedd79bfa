//! The transcript in the database: append-only messages, versions, snapshots, effects.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use elroy_core::{Message, RecallItem, RecallKind, RecallMetadata};
use elroy_db::Db;
use elroy_transcript::{ContextItem, PinContent, ResolvedEffect, TranscriptStore};

fn now() -> jiff::Timestamp {
    "2026-03-16T13:30:00Z".parse().unwrap()
}

fn setup() -> (TranscriptStore, i64) {
    let db = Arc::new(Db::open_in_memory().unwrap());
    let user = db.ensure_user("DEFAULT", now()).unwrap();
    (TranscriptStore::new(db), user)
}

fn contents(store: &TranscriptStore, user: i64) -> Vec<Option<String>> {
    store
        .active_context(user)
        .unwrap()
        .into_iter()
        .map(|s| s.message.content)
        .collect()
}

fn pin(id: i64, name: &str) -> ResolvedEffect {
    ResolvedEffect::Pin(PinContent {
        metadata: RecallMetadata {
            memory_type: RecallKind::Memory,
            memory_id: id,
            name: name.into(),
        },
        rendering: format!("#{name}\n\nbody"),
    })
}

#[test]
fn append_versions_and_snapshots() {
    let (store, user) = setup();
    assert_eq!(store.current_version(user).unwrap(), None);
    let (v1, ids) = store
        .append(
            user,
            "session",
            now(),
            &[
                Message::system("<system_instruction>p"),
                Message::user("hello"),
            ],
        )
        .unwrap()
        .unwrap();
    assert_eq!((v1, ids.len()), (1, 2));
    // A message with no content and no tool calls is never stored.
    assert_eq!(
        store
            .append(user, "turn", now(), &[Message::assistant(None, vec![])])
            .unwrap(),
        None
    );
    let (v2, _) = store
        .append(
            user,
            "turn",
            now(),
            &[Message::assistant(Some("hi".into()), vec![])],
        )
        .unwrap()
        .unwrap();
    assert_eq!(v2, 2);
    store
        .remove(user, "refresh", now(), &[ids[1]])
        .unwrap()
        .unwrap();
    assert_eq!(
        contents(&store, user),
        [Some("<system_instruction>p".into()), Some("hi".into())]
    );
    // Snapshot 2 still has the removed message.
    let snap = store.context_at(user, 2).unwrap().unwrap();
    assert_eq!(snap.len(), 3);
    assert_eq!(snap[1].message.content.as_deref(), Some("hello"));
    assert_eq!(snap[1].created_at, now());
    assert_eq!(store.context_at(user, 9).unwrap(), None);
    // No change writes no version.
    let live: Vec<ContextItem> = store
        .active_context(user)
        .unwrap()
        .iter()
        .map(|s| ContextItem::Stored(s.id))
        .collect();
    assert_eq!(
        store.set_context(user, "refresh", now(), &live).unwrap(),
        None
    );
    // Insert at the front, then in the middle (gap renumbering keeps order).
    let mut target = vec![ContextItem::New(Message::system("<system_instruction>new"))];
    target.extend(live.iter().cloned());
    target.insert(2, ContextItem::New(Message::user("middle")));
    store
        .set_context(user, "repair", now(), &target)
        .unwrap()
        .unwrap();
    assert_eq!(
        contents(&store, user),
        [
            Some("<system_instruction>new".into()),
            Some("<system_instruction>p".into()),
            Some("middle".into()),
            Some("hi".into())
        ]
    );
}

#[test]
fn effects_pin_and_unpin_round_trip_through_the_database() {
    let (store, user) = setup();
    store
        .append(
            user,
            "session",
            now(),
            &[Message::system("<system_instruction>p")],
        )
        .unwrap();
    let v = store
        .apply_effects(user, now(), &[pin(2, "coffee")])
        .unwrap();
    assert_eq!(v, Some(2));
    let ctx = store.active_context(user).unwrap();
    assert_eq!(ctx.len(), 3);
    assert_eq!(ctx[1].message.model.as_deref(), Some("elroy"));
    assert!(
        ctx[2]
            .message
            .content
            .as_deref()
            .unwrap()
            .contains("\"memory_id\":2")
    );
    // Pinning again: no new version.
    assert_eq!(
        store
            .apply_effects(user, now(), &[pin(2, "coffee")])
            .unwrap(),
        None
    );
    let item = RecallItem {
        memory_type: RecallKind::Memory,
        memory_id: 2,
    };
    assert_eq!(
        store
            .apply_effects(user, now(), &[ResolvedEffect::Unpin(item)])
            .unwrap(),
        Some(3)
    );
    assert_eq!(store.active_context(user).unwrap().len(), 1);
    let reasons: Vec<String> = store
        .db()
        .with_conn(|c| {
            let mut st = c.prepare("SELECT reason FROM context_versions ORDER BY version")?;
            st.query_map([], |r| r.get(0))?.collect()
        })
        .unwrap();
    assert_eq!(reasons, ["session", "pin", "unpin"]);
    // Re-pin after unpin adds a fresh pair; the snapshot of version 2 still carries the old one.
    store
        .apply_effects(user, now(), &[pin(2, "coffee")])
        .unwrap()
        .unwrap();
    assert_eq!(store.active_context(user).unwrap().len(), 3);
    assert_eq!(store.context_at(user, 2).unwrap().unwrap().len(), 3);
    assert_eq!(store.context_at(user, 3).unwrap().unwrap().len(), 1);
}
