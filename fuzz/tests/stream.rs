//! The streamed tool-call path (elroy-llm, `orchestrator.md` §8.4, R15/R16): an OpenAI-style SSE
//! body, cut into arbitrary byte pieces (inside UTF-8 characters and CRLF pairs too), read with
//! the SSE parser elroy uses (eventsource-stream), its `delta.tool_calls` entries read with
//! `ToolCallDelta::from_openai_json` and assembled by `ToolCallAccumulator`. The result must not
//! depend on how the bytes were cut, and must follow the accumulator's rules (checked against a
//! plain model of them).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use elroy_fuzz::fuzz;
use elroy_llm::{ToolCallAccumulator, ToolCallDelta};
use eventsource_stream::Eventsource;
use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Entry {
    index: Value,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<Value>,
}

fn entry() -> impl Strategy<Value = Entry> {
    let text = || prop_oneof![Just(String::new()), "[a-z_]{1,6}", any::<String>()];
    (
        prop_oneof![
            8 => (0u64..4).prop_map(Value::from),
            1 => Just(json!(-1)),
            1 => Just(json!("0")),
            1 => Just(Value::Null),
            1 => Just(json!(1.5)),
        ],
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(prop_oneof![
            6 => "[{}\":,a-z0-9 \\\\]{0,8}".prop_map(Value::String),
            2 => any::<String>().prop_map(Value::String),
            1 => Just(Value::Null),
            1 => Just(json!({"a": 1})),
        ]),
    )
        .prop_map(|(index, id, name, arguments)| Entry {
            index,
            id,
            name,
            arguments,
        })
}

/// One chunk: optional content text and tool-call entries.
fn chunk() -> impl Strategy<Value = (Option<String>, Vec<Entry>)> {
    (
        prop::option::of(any::<String>()),
        prop::collection::vec(entry(), 0..3),
    )
}

fn chunk_json(content: Option<&String>, entries: &[Entry]) -> Value {
    let calls: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut function = serde_json::Map::new();
            if let Some(name) = &e.name {
                function.insert("name".into(), json!(name));
            }
            if let Some(a) = &e.arguments {
                function.insert("arguments".into(), a.clone());
            }
            let mut obj = serde_json::Map::new();
            obj.insert("index".into(), e.index.clone());
            if let Some(id) = &e.id {
                obj.insert("id".into(), json!(id));
            }
            obj.insert("type".into(), json!("function"));
            obj.insert("function".into(), Value::Object(function));
            Value::Object(obj)
        })
        .collect();
    let mut delta = serde_json::Map::new();
    if let Some(c) = content {
        delta.insert("content".into(), json!(c));
    }
    if !calls.is_empty() {
        delta.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})
}

/// The SSE body a server sends, with `\n` or `\r\n` line ends and optional comment lines.
fn sse_body(chunks: &[(Option<String>, Vec<Entry>)], crlf: bool, comments: bool) -> Vec<u8> {
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut body = String::new();
    for (content, entries) in chunks {
        if comments {
            body.push_str(&format!(": keep-alive{nl}"));
        }
        body.push_str(&format!(
            "data: {}{nl}{nl}",
            chunk_json(content.as_ref(), entries)
        ));
    }
    body.push_str(&format!("data: [DONE]{nl}{nl}"));
    body.into_bytes()
}

#[derive(Debug, PartialEq)]
struct Outcome {
    content: String,
    /// (id or None when generated, name, arguments)
    calls: Vec<(Option<String>, String, String)>,
}

/// What elroy's streaming reader does with the body, cut at `cuts`.
fn read(body: &[u8], cuts: &[usize]) -> Result<Outcome, String> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for &cut in cuts {
        let cut = cut.min(body.len()).max(start);
        pieces.push(Ok::<Vec<u8>, std::convert::Infallible>(
            body[start..cut].to_vec(),
        ));
        start = cut;
    }
    pieces.push(Ok(body[start..].to_vec()));
    let events = futures_executor::block_on(futures_util::StreamExt::collect::<Vec<_>>(
        futures_util::stream::iter(pieces).eventsource(),
    ));
    let mut content = String::new();
    let mut acc = ToolCallAccumulator::new();
    for event in events {
        let event = event.map_err(|e| format!("SSE error: {e}"))?;
        if event.data.trim() == "[DONE]" {
            break;
        }
        let chunk: Value =
            serde_json::from_str(&event.data).map_err(|e| format!("chunk not JSON: {e}"))?;
        let delta = &chunk["choices"][0]["delta"];
        if let Some(c) = delta.get("content").and_then(Value::as_str) {
            content.push_str(c);
        }
        for entry in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(d) = ToolCallDelta::from_openai_json(entry) {
                acc.push(d);
            }
        }
    }
    let calls = acc
        .finish()
        .into_iter()
        .map(|c| {
            let generated = c.id.len() == 29
                && c.id.starts_with("call_")
                && c.id[5..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            (
                if generated { None } else { Some(c.id) },
                c.name,
                c.arguments,
            )
        })
        .collect();
    Ok(Outcome { content, calls })
}

/// The accumulator's rules, written plainly (`accumulate.rs` docs, §8.4).
fn model(chunks: &[(Option<String>, Vec<Entry>)]) -> Outcome {
    let mut content = String::new();
    let mut calls: Vec<(u64, Option<String>, String, String)> = Vec::new();
    for (c, entries) in chunks {
        if let Some(c) = c {
            content.push_str(c);
        }
        for e in entries {
            let Some(index) = e.index.as_u64() else {
                continue;
            };
            let id = e.id.clone().filter(|s| !s.is_empty());
            let name = e.name.clone().filter(|s| !s.is_empty());
            let args = match &e.arguments {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            if let Some(call) = calls.iter_mut().find(|c| c.0 == index) {
                call.3.push_str(&args);
                if call.1.is_none() {
                    call.1 = id;
                }
            } else if let Some(name) = name {
                calls.push((index, id, name, args));
            } else if let Some(last) = calls.last_mut() {
                last.3.push_str(&args);
            }
        }
    }
    Outcome {
        content,
        calls: calls.into_iter().map(|(_, id, n, a)| (id, n, a)).collect(),
    }
}

#[test]
fn stream_cut_anywhere_gives_the_same_calls() {
    fuzz(
        "stream::cut_anywhere",
        (
            prop::collection::vec(chunk(), 0..8),
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        ),
        |(chunks, crlf, comments, cuts)| {
            let body = sse_body(&chunks, crlf, comments);
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(body.len() + 1)).collect();
            cuts.sort_unstable();
            let whole = read(&body, &[]).map_err(TestCaseError::fail)?;
            let expected = model(&chunks);
            // Ids that look generated cannot be told apart; the model's explicit ids must match.
            let expected = Outcome {
                content: expected.content,
                calls: expected
                    .calls
                    .into_iter()
                    .map(|(id, n, a)| {
                        let looks_generated = id.as_deref().is_some_and(|i| {
                            i.len() == 29
                                && i.starts_with("call_")
                                && i[5..]
                                    .bytes()
                                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                        });
                        (if looks_generated { None } else { id }, n, a)
                    })
                    .collect(),
            };
            prop_assert_eq!(&whole, &expected);
            let cut = read(&body, &cuts).map_err(TestCaseError::fail)?;
            prop_assert_eq!(cut, whole);
            Ok(())
        },
    );
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof!["index|id|function|name|arguments|type", "[a-z]{1,3}"],
                    inner
                ),
                0..4
            )
            .prop_map(|e| Value::Object(e.into_iter().collect())),
        ]
    })
}

#[test]
fn any_delta_json_is_read_or_skipped() {
    fuzz(
        "stream::any_delta_json",
        prop::collection::vec(any_json(), 0..8),
        |entries| {
            let mut acc = ToolCallAccumulator::new();
            let mut read = 0usize;
            for e in &entries {
                if let Some(d) = ToolCallDelta::from_openai_json(e) {
                    prop_assert_eq!(Some(d.index), e.get("index").and_then(Value::as_u64));
                    read += 1;
                    acc.push(d);
                }
            }
            let dropped = acc.dropped();
            let calls = acc.finish();
            prop_assert!(calls.len() + dropped <= read);
            for c in calls {
                prop_assert!(!c.name.is_empty() && !c.id.is_empty());
            }
            Ok(())
        },
    );
}
