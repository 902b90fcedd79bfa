//! The validator test vectors of `docs/behaviour.md#context-repair`, read from
//! `tests/data/validator_vectors.json`, run both as a pure function and through the database (a
//! repair is one `repair` version).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use elroy_core::{Message, Role, ToolCall};
use elroy_db::Db;
use elroy_transcript::{Provider, TranscriptStore, validate};
use serde_json::Value;

fn parse(spec: &str) -> Message {
    let (head, text) = match spec.split_once(':') {
        Some((h, t)) => (h, Some(t)),
        None => (spec, None),
    };
    match head {
        "S" => Message::system("<system_instruction>the prompt"),
        "S2" => Message::system("<system_instruction>a second prompt"),
        "NEW_S" => Message::system("<system_instruction>freshly built"),
        "system" => Message::system(text.unwrap_or_default()),
        "U" => Message::user(text.unwrap_or("user message")),
        "T" => Message::tool(text.unwrap_or_default(), "result", false),
        _ if head.starts_with('A') => {
            // A, A[c1,c2], A:text, A:text[c1]
            let all = spec.strip_prefix('A').unwrap_or_default();
            let (body, calls) = match all.find('[') {
                Some(i) => (&all[..i], &all[i + 1..all.len() - 1]),
                None => (all, ""),
            };
            let content = body.strip_prefix(':').map(str::to_owned);
            let calls = calls
                .split(',')
                .filter(|c| !c.is_empty())
                .map(|id| ToolCall {
                    id: id.to_owned(),
                    name: "some_tool".to_owned(),
                    arguments: "{}".to_owned(),
                })
                .collect();
            Message::assistant(content, calls)
        }
        other => panic!("unknown notation {other}"),
    }
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/validator_vectors.json"),
    )
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn list(v: &Value) -> Vec<Message> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| parse(s.as_str().unwrap()))
        .collect()
}

fn provider(case: &Value) -> Provider {
    match case["provider"].as_str().unwrap() {
        "anthropic" => Provider::Anthropic,
        _ => Provider::Other,
    }
}

#[test]
fn validator_vectors_pure() {
    let cases = cases();
    assert_eq!(cases.len(), 10);
    for case in cases {
        let n = &case["n"];
        let input = list(&case["input"]);
        let expected = list(&case["output"]);
        let v = validate(&input, provider(&case), || parse("NEW_S"));
        assert_eq!(v.messages(&input), expected, "case {n}");
        assert_eq!(
            v.changed(),
            case["rewritten"].as_bool().unwrap(),
            "case {n}: {:?}",
            v.repairs
        );
        if let Some(r) = case.get("repairs") {
            assert_eq!(v.repairs.len() as u64, r.as_u64().unwrap(), "case {n}");
        }
        // Repairing is idempotent.
        let again = validate(&v.messages(&input), provider(&case), || parse("NEW_S"));
        assert!(!again.changed(), "case {n} not stable: {:?}", again.repairs);
    }
}

#[test]
fn validator_vectors_through_the_database() {
    let now: jiff::Timestamp = "2026-03-16T13:30:00Z".parse().unwrap();
    for case in cases() {
        let n = &case["n"];
        let db = Arc::new(Db::open_in_memory().unwrap());
        let user = db.ensure_user("DEFAULT", now).unwrap();
        let store = TranscriptStore::new(db);
        let input = list(&case["input"]);
        store.append(user, "turn", now, &input).unwrap();
        let stored = store.active_context(user).unwrap();
        let (version, validation) = store
            .repair(user, now, &stored, provider(&case), || parse("NEW_S"))
            .unwrap();
        assert_eq!(
            version.is_some(),
            case["rewritten"].as_bool().unwrap(),
            "case {n}"
        );
        let after: Vec<Message> = store
            .active_context(user)
            .unwrap()
            .into_iter()
            .map(|s| s.message)
            .collect();
        assert_eq!(
            after,
            list(&case["output"]),
            "case {n}: {:?}",
            validation.repairs
        );
        // The pre-repair snapshot is still addressable.
        let before: Vec<Message> = store
            .context_at(user, 1)
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|s| s.message)
            .collect();
        assert_eq!(before, input, "case {n}");
        // A stripped assistant message keeps its ord (same position) as a new row.
        if n == 1 {
            let roles: Vec<Role> = after.iter().map(|m| m.role).collect();
            assert_eq!(roles, [Role::System, Role::User, Role::Assistant]);
        }
    }
}
