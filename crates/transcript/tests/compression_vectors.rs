//! The compression test vectors of `docs/behaviour.md#context-refresh-and-compression` and its
//! invariants.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_core::{Message, Role, ToolCall};
use elroy_transcript::{compress, estimate_tokens};
use jiff::{SignedDuration, Timestamp};

fn now() -> Timestamp {
    "2026-03-17T04:00:00Z".parse().unwrap()
}

fn text(n: usize) -> String {
    "x".repeat(n)
}

fn user(n: usize) -> Message {
    Message::user(text(n))
}

fn assistant(n: usize) -> Message {
    Message::assistant(Some(text(n)), vec![])
}

/// `S`(0), `U1`(400), `A1`(calls, 160 chars in total), `T`(400), `U2`(400), `A2`(400).
fn vector_2_input() -> Vec<Message> {
    let call = ToolCall {
        id: "c1".into(),
        name: "x".repeat(10),
        arguments: "y".repeat(150),
    };
    vec![
        Message::system(""),
        user(400),
        Message::assistant(None, vec![call]),
        Message::tool("c1", text(400), false),
        user(400),
        assistant(400),
    ]
}

#[test]
fn vector_1_newest_messages_that_fit() {
    let mut messages = vec![Message::system(text(40))];
    for i in 0..100 {
        messages.push(if i % 2 == 0 {
            user(400)
        } else {
            assistant(400)
        });
    }
    let created = vec![now(); messages.len()];
    let kept = compress(&messages, &created, 1000, None, now());
    // S, m91 … m99 (message k is at index k + 1).
    let expected: Vec<usize> = std::iter::once(0).chain(92..=100).collect();
    assert_eq!(kept, expected);
    let tokens: usize = kept[1..]
        .iter()
        .map(|&i| estimate_tokens(&messages[i]))
        .sum();
    assert_eq!(tokens, 900);
}

#[test]
fn vector_2_tool_unit_is_not_split() {
    let messages = vector_2_input();
    assert_eq!(
        estimate_tokens(&messages[2]) + estimate_tokens(&messages[3]),
        140
    );
    let created = vec![now(); messages.len()];
    assert_eq!(
        compress(&messages, &created, 250, None, now()),
        vec![0, 4, 5]
    );
}

#[test]
fn vector_3_tool_unit_kept_whole() {
    let messages = vector_2_input();
    let created = vec![now(); messages.len()];
    assert_eq!(
        compress(&messages, &created, 350, None, now()),
        vec![0, 2, 3, 4, 5]
    );
}

#[test]
fn vector_4_stops_at_too_old_message() {
    let messages = vec![
        Message::system("S"),
        user(4),
        assistant(4),
        user(4),
        assistant(4),
    ];
    let old = now().checked_sub(SignedDuration::from_hours(13)).unwrap();
    let created = vec![now(), old, now(), now(), now()];
    let kept = compress(
        &messages,
        &created,
        1000,
        Some(SignedDuration::from_mins(720)),
        now(),
    );
    assert_eq!(kept, vec![0, 2, 3, 4]);
}

#[test]
fn invariants_hold_for_many_targets() {
    let messages = vector_2_input();
    let created = vec![now(); messages.len()];
    for target in 0..1200 {
        let kept = compress(&messages, &created, target, None, now());
        assert_eq!(kept[0], 0);
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
        for (pos, &i) in kept.iter().enumerate() {
            if messages[i].role == Role::Tool {
                // Its assistant call (index 2) is kept right before the tool run.
                assert!(kept[..pos].contains(&2), "target {target}");
            }
        }
        let tokens: usize = kept[1..]
            .iter()
            .map(|&i| estimate_tokens(&messages[i]))
            .sum();
        assert!(tokens <= target.saturating_sub(estimate_tokens(&messages[0])));
    }
}
