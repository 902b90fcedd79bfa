//! `elroy message` with a Claude model end to end: the real binary, configured only through the
//! environment (`ELROY_CHAT_MODEL=claude-…`, `ELROY_CHAT_MODEL_API_BASE`, `ANTHROPIC_API_KEY`),
//! against elroy-testkit's Anthropic Messages mock (`POST /v1/messages`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::{Output, Stdio};

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, Reply};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4-5-20250929";

fn message(home: &TestHome, server: &MockServer, text: &str) -> Output {
    std::fs::create_dir_all(home.home()).unwrap();
    home.cmd()
        .env("ELROY_NOW", "2026-11-30T10:00:00Z")
        .env("ELROY_CHAT_MODEL", MODEL)
        .env("ELROY_CHAT_MODEL_API_BASE", server.root_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e")
        .args(["message", text])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn agenda_files(home: &TestHome) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(home.home().join("agenda"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The `tool_use` blocks of the assistant messages of a request: `(id, name, input)`.
fn tool_uses(body: &Value) -> Vec<(String, String, Value)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            (
                b["id"].as_str().unwrap().to_owned(),
                b["name"].as_str().unwrap().to_owned(),
                b["input"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_claude_turn_with_a_tool_call_completes() {
    let server = MockServer::start();
    server
        .push(
            Reply::tool_call("add_agenda_item", r#"{"text":"Water the plants"}"#)
                .with_text("Adding it.")
                .chunked(3),
        )
        .push(Reply::text("Added **Water the plants** to your agenda.").chunked(5));
    let home = TestHome::new();
    let out = message(&home, &server, "Add an agenda item: water the plants");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).ends_with("Added **Water the plants** to your agenda.\n"),
        "{}",
        stdout(&out)
    );
    let files = agenda_files(&home);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].contains("Water the plants"), "{}", files[0]);

    let sent = server.chat_requests();
    assert!(sent.len() >= 2, "{sent:?}");
    for request in &sent[..2] {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some("sk-ant-e2e"));
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(request.body["model"], MODEL);
        assert_eq!(request.body["max_tokens"], 8192);
        assert!(request.is_stream());
        // enable_caching defaults to true: the system prompt is one cached text block.
        assert_eq!(
            request.body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        let tools = request.body["tools"].as_array().unwrap();
        assert_eq!(
            tools.last().unwrap()["cache_control"],
            json!({"type": "ephemeral"})
        );
        let add = tools
            .iter()
            .find(|t| t["name"] == "add_agenda_item")
            .unwrap();
        assert!(
            add["input_schema"]["properties"]["text"].is_object(),
            "{add}"
        );
        assert!(add.get("function").is_none());
    }
    assert!(sent[0].system_prompt().is_some_and(|s| !s.is_empty()));
    assert_eq!(
        sent[0].last_user_text().as_deref(),
        Some("Add an agenda item: water the plants")
    );

    // The second request carries the call as a tool_use block and its result as a tool_result.
    let uses = tool_uses(&sent[1].body);
    let (id, name, input) = uses.last().unwrap();
    assert_eq!(
        (name.as_str(), input),
        ("add_agenda_item", &json!({"text": "Water the plants"}))
    );
    let results = sent[1].anthropic_tool_results();
    let (result_id, content, is_error) = results.last().unwrap();
    assert_eq!(result_id, id);
    assert!(!is_error, "{content}");
    assert!(!content.starts_with("Error"), "{content}");
}

#[test]
fn a_tool_error_reaches_claude_with_is_error() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call("add_agenda_item", r#"{"txt":"Water"}"#))
        .push(Reply::text("Sorry, let me not."));
    let home = TestHome::new();
    let out = message(&home, &server, "add water to my agenda");
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = server.chat_requests();
    let results = sent[1].anthropic_tool_results();
    let (_, content, is_error) = results.last().unwrap();
    assert_eq!(
        content,
        "Error invoking tool add_agenda_item: missing required argument 'text'; unknown argument 'txt' — did you mean 'text'?"
    );
    assert!(is_error);
    assert!(agenda_files(&home).is_empty());
}
