//! The Anthropic Messages client (genai) against elroy-testkit's loopback `/v1/messages` mock,
//! through the `ChatModel` trait (`docs/behaviour.md#anthropic-streams`,
//! `docs/behaviour.md#model-providers`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use elroy_core::{Message, ToolCall};
use elroy_llm::{
    ChatModel, ChatRequest, LlmError, ModelEndpoint, PLACEHOLDER_TOOL, Protocol, RetryPolicy,
    StreamDelta, Timeouts,
};
use elroy_testkit::{MockServer, Reply};
use serde_json::{Value, json};

const MODEL: &str = "claude-sonnet-4-5-20250929";

fn endpoint(server: &MockServer, key: Option<&str>) -> ModelEndpoint {
    ModelEndpoint {
        protocol: Protocol::Anthropic,
        name: MODEL.into(),
        model: MODEL.into(),
        base_url: server.root_url(),
        api_key: key.map(Into::into),
        organization: None,
    }
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        delays: vec![Duration::from_millis(10), Duration::from_millis(10)],
        max_retry_after: Duration::from_secs(30),
    }
}

/// A client built the way the application builds it (`chat_client_with_caching`).
fn client(server: &MockServer, caching: bool) -> Arc<dyn ChatModel> {
    elroy_llm::chat_client_with_caching(
        endpoint(server, Some("sk-ant-test")),
        fast_retry(),
        Timeouts::default(),
        caching,
    )
    .unwrap()
}

fn tools() -> Vec<Value> {
    vec![
        json!({"type":"function","function":{"name":"web_search","description":"Search the web.",
            "parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}}),
        json!({"type":"function","function":{"name":"pwd","description":"Where am I?"}}),
    ]
}

fn simple(with_tools: bool) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("You are elroy."), Message::user("hi")],
        tools: if with_tools { tools() } else { vec![] },
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn streams_text_with_anthropic_headers_and_body() {
    let server = MockServer::start();
    server.push(Reply::text("Hello from Claude.").chunked(3));
    let c = client(&server, false);
    assert_eq!(c.model_name(), MODEL);
    let mut deltas = Vec::new();
    let r = c
        .chat_stream(&simple(false), &mut |d| deltas.push(d))
        .await
        .unwrap();
    assert_eq!(r.content, "Hello from Claude.");
    assert_eq!(r.finish_reason.as_deref(), Some("end_turn"));
    assert!(r.tool_calls.is_empty());
    assert_eq!(deltas.len(), 6);
    assert_eq!(deltas[0], StreamDelta::Text("Hel".into()));

    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.body["model"], MODEL);
    assert_eq!(sent.body["max_tokens"], 8192);
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["system"], "You are elroy.");
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": "hi"}])
    );
    assert!(sent.body.get("tools").is_none());
    assert!(sent.body.get("tool_choice").is_none());
}

#[tokio::test]
async fn a_tool_call_split_over_many_input_json_deltas_is_assembled() {
    let server = MockServer::start();
    server.push(
        Reply::tool_call(
            "add_agenda_item",
            r#"{"text":"Water the plants","due":null}"#,
        )
        .with_text("On it.")
        .chunked(2),
    );
    let c = client(&server, false);
    let mut deltas = Vec::new();
    let r = c
        .chat_stream(&simple(true), &mut |d| deltas.push(d))
        .await
        .unwrap();
    assert_eq!(r.content, "On it.");
    assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.tool_calls,
        [ToolCall {
            id: "call_add_agenda_item_1".into(),
            name: "add_agenda_item".into(),
            arguments: r#"{"text":"Water the plants","due":null}"#.into(),
        }]
    );
    assert_eq!(
        deltas
            .iter()
            .filter(|d| matches!(d, StreamDelta::ToolCallStarted(_)))
            .collect::<Vec<_>>(),
        [&StreamDelta::ToolCallStarted("add_agenda_item".into())]
    );
}

/// `docs/behaviour.md#anthropic-streams` on raw events: a `tool_use` block opens a call at its
/// index with its id and name; each `input_json_delta` appends (plain append,
/// `docs/behaviour.md#assembling-tool-calls` C); `ping` and unknown events are ignored; two calls
/// keep their order.
#[tokio::test]
async fn raw_events_follow_section_8_3() {
    let server = MockServer::start();
    let start = |index: u64, id: &str, name: &str| {
        json!({"type":"content_block_start","index":index,
            "content_block":{"type":"tool_use","id":id,"name":name,"input":{}}})
    };
    let args = |index: u64, partial: &str| {
        json!({"type":"content_block_delta","index":index,
            "delta":{"type":"input_json_delta","partial_json":partial}})
    };
    let stop = |index: u64| json!({"type":"content_block_stop","index":index});
    server.push(Reply::AnthropicEvents(vec![
        json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant",
            "model":MODEL,"content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":0}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}),
        json!({"type":"ping"}),
        stop(0),
        start(1, "toolu_q", "web_search"),
        args(1, "{\"query\":\"ab"),
        json!({"type":"something_new","index":1}),
        args(1, "abc\"}"),
        stop(1),
        start(2, "toolu_p", "pwd"),
        stop(2),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}),
        json!({"type":"message_stop"}),
    ]));
    let c = client(&server, false);
    let r = c.chat_stream(&simple(true), &mut |_| {}).await.unwrap();
    assert_eq!(r.content, "Let me look.");
    assert_eq!(
        r.tool_calls,
        [
            ToolCall {
                id: "toolu_q".into(),
                name: "web_search".into(),
                arguments: r#"{"query":"ababc"}"#.into(),
            },
            ToolCall {
                id: "toolu_p".into(),
                name: "pwd".into(),
                arguments: String::new(),
            },
        ]
    );
}

#[tokio::test]
async fn an_error_event_fails_the_turn_without_retry() {
    let server = MockServer::start();
    server.push(Reply::AnthropicEvents(vec![
        json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant",
            "model":MODEL,"content":[],"usage":{"input_tokens":1,"output_tokens":0}}}),
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
    ]));
    server.fallback(Reply::text("must not be asked"));
    let c = client(&server, false);
    let err = c
        .chat_stream(&simple(false), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(err, LlmError::Stream("Overloaded".into()));
    assert_eq!(server.requests().len(), 1);
}

/// `docs/behaviour.md#message-conversion`: assistant calls become `tool_use` blocks, consecutive
/// tool results one user message of `tool_result` blocks with `is_error`; later system messages are
/// prefixed user text.
#[tokio::test]
async fn tool_results_go_back_as_tool_result_blocks_with_is_error() {
    let server = MockServer::start();
    server.push(Reply::text("Done."));
    let c = client(&server, false);
    let call = |id: &str, name: &str, args: &str| ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    };
    let request = ChatRequest {
        messages: vec![
            Message::system("You are elroy."),
            Message::user("search and tell me where I am"),
            Message::assistant(
                Some("Sure.".into()),
                vec![
                    call("toolu_1", "web_search", r#"{"query":"rust"}"#),
                    call("toolu_2", "pwd", ""),
                ],
            ),
            Message::tool("toolu_1", "Rust is a language.", false),
            Message::tool(
                "toolu_2",
                "Error invoking tool pwd: no working directory",
                true,
            ),
            Message::system("Remember to be brief."),
        ],
        tools: tools(),
        ..ChatRequest::default()
    };
    let r = c.chat_stream(&request, &mut |_| {}).await.unwrap();
    assert_eq!(r.content, "Done.");
    let sent = &server.requests()[0];
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "user", "content": "search and tell me where I am"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "toolu_1", "name": "web_search", "input": {"query": "rust"}},
                {"type": "tool_use", "id": "toolu_2", "name": "pwd", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rust is a language."},
                {"type": "tool_result", "tool_use_id": "toolu_2",
                    "content": "Error invoking tool pwd: no working directory", "is_error": true},
                {"type": "text", "text": "[This is a system message, representing internal thought process of the assistant] Remember to be brief."},
            ]},
        ])
    );
    assert_eq!(
        sent.anthropic_tool_results(),
        [
            ("toolu_1".into(), "Rust is a language.".into(), false),
            (
                "toolu_2".into(),
                "Error invoking tool pwd: no working directory".into(),
                true
            ),
        ]
    );
    assert_eq!(sent.system_prompt().as_deref(), Some("You are elroy."));
}

/// `docs/behaviour.md#requests`: tools as `{name, description, input_schema}` (an empty object
/// schema when the tool has no parameters; a tool named `web_search` stays elroy's tool, not
/// Anthropic's server tool); with `enable_caching` the system prompt and the last tool carry
/// `cache_control`.
#[tokio::test]
async fn tools_and_cache_control() {
    let server = MockServer::start();
    server.fallback(Reply::text("ok"));
    let expected_tools = json!([
        {"name": "web_search", "description": "Search the web.", "input_schema":
            {"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}},
        {"name": "pwd", "description": "Where am I?", "input_schema": {"type":"object","properties":{}}},
    ]);

    client(&server, false)
        .chat_stream(&simple(true), &mut |_| {})
        .await
        .unwrap();
    let plain = &server.requests()[0].body;
    assert_eq!(plain["tools"], expected_tools);
    assert_eq!(plain["system"], "You are elroy.");
    assert!(!plain.to_string().contains("cache_control"));

    client(&server, true)
        .chat_stream(&simple(true), &mut |_| {})
        .await
        .unwrap();
    let cached = &server.requests()[1].body;
    let mut tools_cached = expected_tools.clone();
    tools_cached[1]["cache_control"] = json!({"type": "ephemeral"});
    assert_eq!(cached["tools"], tools_cached);
    assert_eq!(
        cached["system"],
        json!([{"type": "text", "text": "You are elroy.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        server.requests()[1].system_prompt().as_deref(),
        Some("You are elroy.")
    );

    // A forced tool is `tool_choice: {"type":"tool","name":…}`.
    let forced = ChatRequest {
        forced_tool: Some("pwd".into()),
        ..simple(true)
    };
    client(&server, false).chat(&forced).await.unwrap();
    assert_eq!(
        server.requests()[2].body["tool_choice"],
        json!({"type": "tool", "name": "pwd"})
    );
    assert_eq!(server.requests()[2].body["stream"], false);
}

#[tokio::test]
async fn tool_use_without_tools_offered_sends_the_placeholder_tool() {
    let server = MockServer::start();
    server.push(Reply::text("ok"));
    let request = ChatRequest {
        messages: vec![
            Message::system("S"),
            Message::user("u"),
            Message::assistant(
                None,
                vec![ToolCall {
                    id: "c1".into(),
                    name: "get_fast_recall".into(),
                    arguments: "{}".into(),
                }],
            ),
            Message::tool("c1", "recalled", false),
        ],
        ..ChatRequest::default()
    };
    client(&server, false)
        .chat_stream(&request, &mut |_| {})
        .await
        .unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.tool_names(), [PLACEHOLDER_TOOL]);
    assert_eq!(
        sent.body["tools"][0]["description"],
        "Placeholder that exists for technical reasons. Never call it."
    );
}

#[tokio::test]
async fn non_streamed_answer_with_a_tool_call() {
    let server = MockServer::start();
    server.push(Reply::tool_call("web_search", r#"{"query":"rust"}"#).with_text("Searching."));
    let r = client(&server, false).chat(&simple(true)).await.unwrap();
    assert_eq!(r.content, "Searching.");
    assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.tool_calls,
        [ToolCall {
            id: "call_web_search_1".into(),
            name: "web_search".into(),
            arguments: r#"{"query":"rust"}"#.into(),
        }]
    );
    assert_eq!(server.requests()[0].body["stream"], false);
}

#[tokio::test]
async fn a_429_then_success_is_retried() {
    let server = MockServer::start();
    server
        .push(Reply::status(429, "slow down"))
        .push(Reply::text("second time lucky"));
    let r = client(&server, false)
        .chat_stream(&simple(false), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(r.content, "second time lucky");
    assert_eq!(server.requests().len(), 2);

    // Non-streamed too, with a 529 (overloaded) and a 500.
    server
        .push(Reply::status(529, "overloaded"))
        .push(Reply::status(500, "oops"))
        .push(Reply::text("third"));
    let r = client(&server, false).chat(&simple(false)).await.unwrap();
    assert_eq!(r.content, "third");
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn retries_give_up_after_two() {
    let server = MockServer::start();
    server.fallback(Reply::status(503, "down"));
    let err = client(&server, false)
        .chat_stream(&simple(false), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "model request to {}/v1/messages failed with HTTP 503: down",
            server.root_url()
        )
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_rejected_key_is_one_clear_error_and_not_retried() {
    let server = MockServer::start();
    server.fallback(Reply::status(401, "invalid x-api-key"));
    let err = client(&server, false)
        .chat_stream(&simple(false), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the model server rejected the API key for {MODEL} (HTTP 401): invalid x-api-key; check the key configured for it"
        )
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_silent_server_times_out_after_llm_timeout_seconds() {
    let server = MockServer::start();
    server
        .delay(Duration::from_secs(3))
        .fallback(Reply::text("late"));
    let c = elroy_llm::chat_client_with_caching(
        endpoint(&server, Some("k")),
        fast_retry(),
        Timeouts {
            idle: Duration::from_millis(300),
            ..Timeouts::default()
        },
        false,
    )
    .unwrap();
    let err = c
        .chat_stream(&simple(false), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(err, LlmError::Timeout(0));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_base_url_without_key_sends_a_placeholder_key_and_a_v1_base_is_not_doubled() {
    let server = MockServer::start();
    server.fallback(Reply::text("ok"));
    let mut e = endpoint(&server, None);
    e.base_url = format!("{}/v1", server.root_url());
    let c =
        elroy_llm::chat_client_with_caching(e, fast_retry(), Timeouts::default(), false).unwrap();
    c.chat_stream(&simple(false), &mut |_| {}).await.unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert!(sent.header("x-api-key").is_some_and(|k| !k.is_empty()));
}

#[tokio::test]
async fn openai_protocol_endpoints_still_use_chat_completions() {
    let server = MockServer::start();
    server.push(Reply::text("hi"));
    let e = ModelEndpoint {
        protocol: Protocol::OpenAi,
        name: "testkit-model".into(),
        model: "testkit-model".into(),
        base_url: server.base_url(),
        api_key: None,
        organization: None,
    };
    let c = elroy_llm::chat_client(e, fast_retry(), Timeouts::default()).unwrap();
    c.chat_stream(&simple(false), &mut |_| {}).await.unwrap();
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

/// `thinking_delta` is provider reasoning (never text); a stream whose body ends without
/// `message_stop` ends there with what arrived.
#[tokio::test]
async fn thinking_deltas_are_reasoning_and_a_stream_may_end_without_message_stop() {
    let server = MockServer::start();
    server.push(Reply::AnthropicEvents(vec![
        json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant",
            "model":MODEL,"content":[],"usage":{"input_tokens":1,"output_tokens":0}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm, "}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"easy."}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Four."}}),
    ]));
    let mut deltas = Vec::new();
    let r = client(&server, false)
        .chat_stream(&simple(false), &mut |d| deltas.push(d))
        .await
        .unwrap();
    assert_eq!(r.reasoning, "Hmm, easy.");
    assert_eq!(r.content, "Four.");
    assert_eq!(r.finish_reason, None);
    assert_eq!(
        deltas,
        [
            StreamDelta::Reasoning("Hmm, ".into()),
            StreamDelta::Reasoning("easy.".into()),
            StreamDelta::Text("Four.".into()),
        ]
    );
}

/// `docs/behaviour.md#non-streaming-calls`: for Anthropic the JSON schema is described in the
/// system text (no `response_format`).
#[tokio::test]
async fn a_json_schema_is_described_in_the_system_text() {
    let server = MockServer::start();
    server.push(Reply::text(r#"{"ok":true}"#));
    let request = ChatRequest {
        json_schema: Some(json!({"type":"object","properties":{"ok":{"type":"boolean"}}})),
        ..simple(false)
    };
    let r = client(&server, false).chat(&request).await.unwrap();
    assert_eq!(r.content, r#"{"ok":true}"#);
    let sent = &server.requests()[0];
    let system = sent.system_prompt().unwrap();
    assert!(system.starts_with("You are elroy.\n\nAnswer with one JSON object that matches this JSON schema, and nothing else:\n{\"type\":\"object\""), "{system}");
    assert!(sent.body.get("response_format").is_none());
    assert!(sent.body.get("output_config").is_none());
}
