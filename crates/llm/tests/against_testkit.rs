//! The OpenAI-compatible client against elroy-testkit's loopback server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use elroy_core::{Message, ToolCall};
use elroy_llm::{
    ChatModel, ChatRequest, LlmError, ModelEndpoint, OpenAiChat, Protocol, RetryPolicy,
    StreamDelta, Timeouts,
};
use elroy_testkit::{MockServer, Reply};
use serde_json::json;

fn client(server: &MockServer, key: Option<&str>) -> OpenAiChat {
    let endpoint = ModelEndpoint {
        protocol: Protocol::OpenAi,
        name: "openai/testkit-model".into(),
        model: "testkit-model".into(),
        base_url: server.base_url(),
        api_key: key.map(Into::into),
        organization: None,
    };
    let retry = RetryPolicy {
        delays: vec![Duration::from_millis(10), Duration::from_millis(10)],
        max_retry_after: Duration::from_secs(30),
    };
    OpenAiChat::new(endpoint, retry, Timeouts::default()).unwrap()
}

fn request(with_tools: bool) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("S"), Message::user("hi")],
        tools: if with_tools {
            vec![json!({"type":"function","function":{"name":"pwd","description":"d"}})]
        } else {
            vec![]
        },
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn streams_text_and_records_the_request() {
    let server = MockServer::start();
    server.push(Reply::text("Hello there, friend.").chunked(3));
    let c = client(&server, Some("sk-test"));
    let mut deltas = Vec::new();
    let r = c
        .chat_stream(&request(false), &mut |d| deltas.push(d))
        .await
        .unwrap();
    assert_eq!(r.content, "Hello there, friend.");
    assert_eq!(deltas.len(), 7);
    assert_eq!(deltas[0], StreamDelta::Text("Hel".into()));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.body["model"], "testkit-model");
    assert_eq!(sent.body["stream"], true);
    assert!(sent.body.get("tools").is_none());
    assert!(sent.body.get("tool_choice").is_none());
    assert_eq!(sent.system_prompt().as_deref(), Some("S"));
}

#[tokio::test]
async fn tool_call_split_over_single_character_chunks() {
    let server = MockServer::start();
    server.push(Reply::tool_call("read_file", r#"{"path":"notes.txt","start_line":2}"#).chunked(1));
    let c = client(&server, None);
    let r = c.chat_stream(&request(true), &mut |_| {}).await.unwrap();
    assert_eq!(
        r.tool_calls,
        [ToolCall {
            id: "call_read_file_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"notes.txt","start_line":2}"#.into()
        }]
    );
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn raw_chunks_follow_the_accumulation_rules() {
    let server = MockServer::start();
    let chunk = |tc: serde_json::Value| json!({"choices":[{"index":0,"delta":{"tool_calls":tc}}]});
    server.push(Reply::chunks(vec![
        chunk(json!([{"index":0,"id":"a","function":{"name":"read_file","arguments":""}}])),
        chunk(json!([{"index":1,"id":"b","function":{"arguments":"{\"pa"}}])),
        chunk(json!([{"index":2,"id":"c","function":{"arguments":"th\":\"x\"}"}}])),
    ]));
    let r = client(&server, None)
        .chat_stream(&request(true), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].arguments, "{\"path\":\"x\"}");
}

#[tokio::test]
async fn retries_429_then_succeeds() {
    let server = MockServer::start();
    server
        .push(Reply::status(429, "slow down").retry_after(0))
        .push(Reply::status(503, "busy"))
        .push(Reply::text("ok"));
    let r = client(&server, None)
        .chat_stream(&request(false), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(r.content, "ok");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn gives_up_after_two_retries() {
    let server = MockServer::start();
    server.fallback(Reply::status(500, "down"));
    let err = client(&server, None)
        .chat(&request(false))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Status { status: 500, .. }), "{err}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn bad_key_is_reported_once_without_retry() {
    let server = MockServer::start();
    server.fallback(Reply::status(401, "Incorrect API key provided"));
    let err = client(&server, Some("wrong"))
        .chat_stream(&request(false), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the model server rejected the API key for openai/testkit-model (HTTP 401): Incorrect API key provided; check the key configured for it"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn empty_stream_with_tools_falls_back_to_non_streaming_and_remembers() {
    let server = MockServer::start();
    server.fallback(Reply::EmptyStreamUnlessNonStreaming(
        "from the non-streaming answer".into(),
    ));
    let c = client(&server, None);
    let mut deltas = Vec::new();
    let r = c
        .chat_stream(&request(true), &mut |d| deltas.push(d))
        .await
        .unwrap();
    assert_eq!(r.content, "from the non-streaming answer");
    assert_eq!(
        deltas,
        [StreamDelta::Text("from the non-streaming answer".into())]
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].is_stream());
    assert!(!sent[1].is_stream());
    // The same base URL now goes non-streaming at once.
    c.chat_stream(&request(true), &mut |_| {}).await.unwrap();
    assert_eq!(server.requests().len(), 3);
    assert!(!server.requests()[2].is_stream());
}

#[tokio::test]
async fn stream_without_done_still_ends() {
    let server = MockServer::start();
    server.push(elroy_testkit::Reply::Chunks {
        chunks: vec![json!({"choices":[{"delta":{"content":"partial"}}]})],
        done: false,
    });
    let r = client(&server, None)
        .chat_stream(&request(false), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(r.content, "partial");
}

#[tokio::test]
async fn unreachable_server_is_a_clear_error() {
    let server = MockServer::start();
    let base = server.base_url();
    drop(server);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let endpoint = ModelEndpoint {
        protocol: Protocol::OpenAi,
        name: "m".into(),
        model: "m".into(),
        base_url: base,
        api_key: None,
        organization: None,
    };
    let retry = RetryPolicy {
        delays: vec![Duration::from_millis(1)],
        max_retry_after: Duration::from_secs(1),
    };
    let c = OpenAiChat::new(endpoint, retry, Timeouts::default()).unwrap();
    let err = c.chat(&request(false)).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot reach the model server at"),
        "{err}"
    );
}
