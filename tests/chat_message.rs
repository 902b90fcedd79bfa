//! `elroy message` end to end: the real binary against elroy-testkit's scripted OpenAI-compatible
//! server, asserting both what elroy printed and stored and what it sent to the model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, RecordedRequest, Reply};
use serde_json::{Value, json};

const NOW: &str = "2026-11-30T10:00:00Z";

/// A home whose chat model is the mock server.
fn home_for(server: &MockServer, extra_config: &str) -> TestHome {
    common::home_with_model(server, extra_config)
}

fn message(home: &TestHome, args: &[&str]) -> Output {
    home.cmd()
        .env("ELROY_NOW", NOW)
        .arg("message")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn agenda_files(home: &TestHome) -> Vec<(String, String)> {
    let dir = home.home().join("agenda");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read_to_string(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn results(request: &RecordedRequest) -> Vec<String> {
    request
        .tool_results()
        .into_iter()
        .map(|(_, content)| content)
        .collect()
}

#[test]
fn agenda_request_becomes_a_tool_call_and_a_file() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call(
            "add_agenda_item",
            r#"{"text":"Water the plants"}"#,
        ))
        .push(Reply::text("Added **Water the plants** to today's agenda."));
    let home = home_for(&server, "");
    let out = message(&home, &["Add an agenda item: water the plants"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Added **Water the plants** to today's agenda.\n"
    );
    let files = agenda_files(&home);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].1.contains("Water the plants"), "{}", files[0].1);

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].is_stream());
    assert!(sent[0].tool_names().contains(&"add_agenda_item".to_owned()));
    assert_eq!(
        sent[0].last_user_text().as_deref(),
        Some("Add an agenda item: water the plants")
    );
    let result = &results(&sent[1])[0];
    assert!(!result.starts_with("Error"), "{result}");
}

#[test]
fn tool_error_reaches_the_model_and_its_retry_succeeds() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call("add_agenda_item", r#"{"txt":"Water"}"#))
        .push(Reply::tool_call("add_agenda_item", r#"{"text":"Water"}"#))
        .push(Reply::text("Done."));
    let home = home_for(&server, "");
    let out = message(&home, &["add water to my agenda"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = server.chat_requests();
    assert_eq!(
        results(&sent[1]),
        [
            "Error invoking tool add_agenda_item: missing required argument 'text'; unknown argument 'txt' — did you mean 'text'?"
        ]
    );
    assert!(!results(&sent[2])[1].starts_with("Error"));
    assert_eq!(agenda_files(&home).len(), 1);
}

#[test]
fn loop_stops_after_max_assistant_loops() {
    let server = MockServer::start();
    server
        .when(|r| r.has_tools(), Reply::tool_call("pwd", ""))
        .when(|r| !r.has_tools(), Reply::text("Enough tools."));
    let home = home_for(&server, "max_assistant_loops: 2\n");
    let out = message(&home, &["where am I?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Enough tools.\n");
    let sent = server.chat_requests();
    assert_eq!(sent.iter().filter(|r| r.has_tools()).count(), 3);
    assert_eq!(sent.len(), 4);
    assert!(!sent[3].has_tools());
}

#[test]
fn due_item_whose_time_passed_is_injected() {
    let server = MockServer::start();
    server.fallback(Reply::text("Reminder: call the plumber."));
    let home = home_for(&server, "");
    let created = home
        .cmd()
        .env("ELROY_NOW", "2026-11-30T08:00:00Z")
        .args([
            "tools",
            "call",
            "create_due_item",
            "--args",
            r#"{"name":"Call the plumber","text":"About the leak","trigger_time":"2026-11-30 09:00"}"#,
        ])
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", stderr(&created));
    let out = message(&home, &["good morning"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = &server.chat_requests()[0];
    // create_due_item pinned the item into the context (a direct call applies its effects); the
    // turn then injects the due-item pair after the user message.
    let exchanges = sent.tool_exchanges();
    let due: Vec<&(String, String)> = exchanges
        .iter()
        .filter(|(name, _)| name == "get_due_items")
        .collect();
    assert_eq!(due.len(), 1, "{exchanges:?}");
    assert_eq!(
        due[0].1,
        "⏰ DUE ITEM: 'Call the plumber' - About the leak\n\nThis item was scheduled for 2026-11-30 09:00:00+00:00 and is now due. Please inform the user about it and then use the delete_due_item tool to remove it from active due items."
    );
    let messages = sent.messages();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect();
    let n = roles.len();
    assert_eq!(roles[n - 3..], ["user", "assistant", "tool"]);
    assert_eq!(
        messages[n - 2]["tool_calls"][0]["function"]["name"],
        "get_due_items"
    );
}

#[test]
fn malformed_arguments_are_reported_and_not_run() {
    let server = MockServer::start();
    server
        .push(Reply::tool_calls(vec![
            ("add_agenda_item".into(), "[1,2]".into()),
            ("add_agenda_item".into(), r#"{"text":"Water the pl"#.into()),
        ]))
        .push(Reply::text("Sorry."));
    let home = home_for(&server, "");
    let out = message(&home, &["add water"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        results(&server.chat_requests()[1]),
        [
            "Error invoking tool add_agenda_item: arguments must be a JSON object, got array",
            "Error invoking tool add_agenda_item: arguments are not valid JSON (21 bytes received); the call was not executed",
        ]
    );
    assert!(agenda_files(&home).is_empty());
}

#[test]
fn unknown_tool_is_reported_with_the_available_tools() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call("frobnicate", "{}"))
        .push(Reply::text("I cannot do that."));
    let home = home_for(&server, "");
    let out = message(&home, &["frobnicate"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = &results(&server.chat_requests()[1])[0];
    assert!(
        result.starts_with(
            "Error invoking tool frobnicate: Unknown tool 'frobnicate'. Available tools: add_agenda_checklist_item, add_agenda_item, "
        ),
        "{result}"
    );
}

#[test]
fn tool_call_delta_split_over_many_chunks() {
    let server = MockServer::start();
    let chunk =
        |tool_calls: Value| json!({"choices":[{"index":0,"delta":{"tool_calls":tool_calls}}]});
    let mut chunks = vec![chunk(
        json!([{"index":0,"id":"call_split","type":"function","function":{"name":"add_agenda_item","arguments":""}}]),
    )];
    for c in r#"{"text":"Water the plants"}"#.chars() {
        chunks.push(chunk(
            json!([{"index":0,"function":{"arguments":c.to_string()}}]),
        ));
    }
    chunks.push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}));
    server
        .push(Reply::chunks(chunks))
        .push(Reply::text("Added."));
    let home = home_for(&server, "");
    let out = message(&home, &["add water the plants"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let second = &server.chat_requests()[1];
    assert_eq!(second.tool_results()[0].0, "call_split");
    let files = agenda_files(&home);
    assert_eq!(files.len(), 1);
    assert!(files[0].1.contains("Water the plants"));
}

#[test]
fn rate_limit_is_retried() {
    let server = MockServer::start();
    server
        .push(Reply::status(429, "Rate limit reached").retry_after(0))
        .push(Reply::text("Hello after the retry."));
    let home = home_for(&server, "");
    let out = message(&home, &["hello there"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello after the retry.\n");
    assert_eq!(server.chat_requests().len(), 2);
}

#[test]
fn soul_is_in_the_system_prompt_and_a_memory_write_does_not_change_it() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call(
            "memory",
            r#"{"action":"add","text":"The user prefers green tea"}"#,
        ))
        .push(Reply::text("Noted."));
    let home = home_for(&server, "");
    std::fs::write(
        home.home().join("MEMORY.md"),
        "- The user lives in Lisbon\n",
    )
    .unwrap();
    let out = message(&home, &["remember that I prefer green tea"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = server.chat_requests();
    let first = sent[0].system_prompt().unwrap();
    assert!(
        first.contains(
            "<soul>\nThese files from my home directory were loaded when this session started."
        ),
        "{first}"
    );
    assert!(first.contains("## MEMORY.md\n\n- The user lives in Lisbon"));
    // The tool wrote the file, but the session's prompt is frozen.
    let on_disk = std::fs::read_to_string(home.home().join("MEMORY.md")).unwrap();
    assert!(on_disk.contains("green tea"), "{on_disk}");
    assert!(
        !results(&sent[1])[0].starts_with("Error"),
        "{:?}",
        results(&sent[1])
    );
    assert_eq!(sent[1].system_prompt().unwrap(), first);
    // The next session sees the new notes.
    server.push(Reply::text("ok"));
    let out = message(&home, &["hi again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        server.chat_requests()[2]
            .system_prompt()
            .unwrap()
            .contains("green tea")
    );
}

#[test]
fn json_events_and_stdin() {
    let server = MockServer::start();
    server.push(Reply::tool_call("pwd", "")).push(Reply::text(
        "<internal_thought>easy</internal_thought>You are home.",
    ));
    let home = home_for(&server, "");
    let mut child = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .args(["message", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"where am I?\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types[0], "tool_call");
    assert_eq!(events[0]["name"], "pwd");
    assert_eq!(types[1], "tool_result");
    assert_eq!(events[1]["is_error"], false);
    assert!(types.contains(&"thought"));
    assert_eq!(*types.last().unwrap(), "final");
    assert_eq!(events.last().unwrap()["content"], "You are home.");
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "You are home.");
    assert_eq!(
        server.chat_requests()[0].last_user_text().as_deref(),
        Some("where am I?")
    );
}

#[test]
fn failed_turn_exits_1_with_one_line_and_keeps_the_message() {
    let server = MockServer::start();
    server.fallback(Reply::status(401, "Incorrect API key provided"));
    let home = home_for(&server, "chat_model_api_key: wrong\n");
    let out = message(&home, &["are you there?"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "elroy: the model server rejected the API key for testkit-model (HTTP 401): Incorrect API key provided; check the key configured for it\n"
    );
    assert_eq!(stdout(&out), "");
    // The user message was stored before the model was called: the next turn sends it again.
    server.when(|_| true, Reply::text("yes"));
    let out = message(&home, &["hello?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let users: Vec<String> = server
        .chat_requests()
        .last()
        .unwrap()
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, ["are you there?", "hello?"]);
}

#[test]
fn no_model_configured_is_one_clear_line() {
    let home = TestHome::new();
    let out = message(&home, &["hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "elroy: Could not infer chat model: set chat_model (ELROY_CHAT_MODEL) or one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, or ELROY_CHAT_MODEL_API_BASE with ELROY_CHAT_MODEL for a local server; without a model, `elroy tools` calls every tool and `elroy` on a terminal opens the interface\n"
    );
}

#[test]
fn empty_stream_with_tools_falls_back_to_a_non_streaming_request() {
    let server = MockServer::start();
    server.fallback(Reply::EmptyStreamUnlessNonStreaming(
        "Answered without streaming.".into(),
    ));
    let home = home_for(&server, "");
    let out = message(&home, &["hello there"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Answered without streaming.\n");
    let sent = server.chat_requests();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].is_stream() && !sent[1].is_stream());
}

#[test]
fn forced_tool_is_sent_as_tool_choice() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call("list_agenda_items", "{}"))
        .push(Reply::text("Nothing today."));
    let home = home_for(&server, "");
    let out = message(&home, &["--tool", "list_agenda_items", "what's on?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = server.chat_requests();
    assert_eq!(
        sent[0].body["tool_choice"],
        json!({"type":"function","function":{"name":"list_agenda_items"}})
    );
    assert_eq!(sent[1].body["tool_choice"], "auto");
    let bad = message(&home, &["--tool", "nope", "x"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).starts_with("elroy: Unknown tool 'nope'. Available tools: "));
}

#[test]
fn bare_elroy_reads_a_message_from_stdin() {
    let server = MockServer::start();
    server.push(Reply::text("Hi from stdin."));
    let home = home_for(&server, "");
    let mut child = home
        .cmd()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello elroy")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hi from stdin.\n");
}

/// With `scripts/local-model.sh` running, set `ELROY_LOCAL_LLM_URL` (for example
/// `http://127.0.0.1:8765/v1`) and run `cargo test -p elroy --test chat_message -- --ignored`.
#[test]
#[ignore = "needs a local OpenAI-compatible model server (ELROY_LOCAL_LLM_URL)"]
fn local_model_completes_an_agenda_turn() {
    let Ok(url) = std::env::var("ELROY_LOCAL_LLM_URL") else {
        panic!("set ELROY_LOCAL_LLM_URL to the local server's base URL");
    };
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        // A 135M model on a small CPU needs minutes for a prompt with every tool schema.
        format!("chat_model: smollm2\nchat_model_api_base: {url}\nllm_timeout_seconds: 900\n"),
    )
    .unwrap();
    let out = home
        .cmd()
        .args(["message", "--json", "Add an agenda item: water the plants"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    eprintln!("{}", stdout(&out));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .lines()
            .last()
            .unwrap()
            .contains("\"type\":\"final\"")
    );
}

/// A home whose chat model is `server`, holding the memories `User's dog` (Biscuit) and `User's
/// bicycle`, both out of the context so that recall has work to do.
fn home_with_memories(server: &MockServer, extra_config: &str) -> TestHome {
    let home = home_for(server, extra_config);
    let call = |tool: &str, args: &str| {
        let out = home
            .cmd()
            .env("ELROY_NOW", NOW)
            .args(["tools", "call", tool, "--args", args])
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {}", stderr(&out));
    };
    call(
        "create_memory",
        r#"{"name":"User's dog","text":"The user's dog is named Biscuit."}"#,
    );
    call(
        "create_memory",
        r#"{"name":"User's bicycle","text":"The user rides a red bicycle to work."}"#,
    );
    // create_memory pins what it creates; take them out of the context so recall has work to do.
    call(
        "drop_memory_from_current_context",
        r#"{"memory_name":"User's dog"}"#,
    );
    call(
        "drop_memory_from_current_context",
        r#"{"memory_name":"User's bicycle"}"#,
    );
    home
}

/// Whether a recorded request is a structured call (`response_format`), not a turn round.
fn is_structured(request: &RecordedRequest) -> bool {
    request.body.get("response_format").is_some()
}

/// The recall pairs' tool names in a turn request.
fn recall_tools(request: &RecordedRequest) -> Vec<String> {
    request
        .tool_exchanges()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.contains("recall"))
        .collect()
}

#[test]
fn relevant_memory_is_injected_as_a_fast_recall_pair() {
    let server = MockServer::start();
    server.fallback(Reply::text("Your dog is Biscuit."));
    let home = home_with_memories(&server, "");
    let out = message(&home, &["What is my dog called?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Neither the recall classifier nor reflective recall is on: the turn's round is the only
    // request.
    assert_eq!(server.chat_requests().len(), 1);
    let sent = &server.chat_requests()[0];
    assert!(!is_structured(sent));
    let messages = sent.messages();
    let n = messages.len();
    assert_eq!(messages[n - 3]["role"], "user");
    assert_eq!(
        messages[n - 2]["tool_calls"][0]["function"]["name"],
        "get_fast_recall"
    );
    let payload: Value =
        serde_json::from_str(messages[n - 1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        payload["recall_metadata"],
        json!([{"memory_type": "Memory", "memory_id": payload["recall_metadata"][0]["memory_id"], "name": "User's dog"}])
    );
    assert!(payload["content"].as_str().unwrap().contains("Biscuit"));
}

#[test]
fn recall_classifier_setting_decides_whether_recall_runs() {
    let server = MockServer::start();
    let classifier = |r: &RecordedRequest| {
        r.system_prompt()
            .is_some_and(|p| p.starts_with("Decide whether answering the user's latest message"))
    };
    server
        .when(
            move |r| {
                classifier(r)
                    && r.last_user_text()
                        .is_some_and(|t| t.ends_with("Latest message: Nice dog weather."))
            },
            Reply::text(r#"{"needs_recall": false, "reasoning": "small talk"}"#),
        )
        .when(
            classifier,
            Reply::text(r#"{"needs_recall": true, "reasoning": "about the dog"}"#),
        )
        .fallback(Reply::text("Indeed."));
    let home = home_with_memories(
        &server,
        "memory_recall_classifier_enabled: true\nmemory_recall_classifier_window: 2\n",
    );
    // "dog" would recall the dog memory by keyword; the classifier says no.
    let out = message(&home, &["Nice dog weather."]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = message(&home, &["What is my dog called?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = server.chat_requests();
    let asked: Vec<&RecordedRequest> = sent.iter().filter(|r| classifier(r)).collect();
    let turns: Vec<&RecordedRequest> = sent.iter().filter(|r| !is_structured(r)).collect();
    assert_eq!(asked.len(), 2);
    assert!(asked.iter().all(|r| is_structured(r) && !r.is_stream()));
    assert_eq!(
        asked[1].last_user_text().unwrap(),
        "user: Nice dog weather.\nassistant: Indeed.\nLatest message: What is my dog called?"
    );
    assert_eq!(turns.len(), 2);
    assert!(recall_tools(turns[0]).is_empty());
    assert_eq!(recall_tools(turns[1]), ["get_fast_recall"]);
}

#[test]
fn reflect_setting_injects_the_models_reflection() {
    let server = MockServer::start();
    let reflection = |r: &RecordedRequest| {
        r.system_prompt()
            .is_some_and(|p| p.starts_with("Here are memories and reminders that may bear"))
    };
    server
        .when(
            reflection,
            Reply::text(r#"{"content": "Their dog is Biscuit.", "is_relevant": true}"#),
        )
        .fallback(Reply::text("Biscuit."));
    let home = home_with_memories(&server, "reflect: true\n");
    let out = message(&home, &["What is my dog called?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = server.chat_requests();
    let asked: Vec<&RecordedRequest> = sent.iter().filter(|r| reflection(r)).collect();
    assert_eq!(asked.len(), 1);
    assert!(is_structured(asked[0]));
    let text = asked[0].last_user_text().unwrap();
    assert!(text.contains("The user's dog is named Biscuit."), "{text}");
    assert!(text.ends_with("user: What is my dog called?"), "{text}");
    let turn = sent.iter().find(|r| !is_structured(r)).unwrap();
    assert_eq!(recall_tools(turn), ["get_reflective_recall"]);
    let (_, content) = turn.tool_exchanges().into_iter().next().unwrap();
    let payload: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(payload["content"], "Their dog is Biscuit.");
    assert_eq!(payload["recall_metadata"][0]["name"], "User's dog");
}

#[test]
fn a_correction_is_recorded_by_self_reflection() {
    let server = MockServer::start();
    server.fallback(Reply::text("Sorry, I will fix that."));
    let home = home_for(&server, "messages_between_self_reflection: 2\n");
    let first = message(&home, &["Add milk to my list"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(!home.home().join("feature-requests").exists());
    let out = message(&home, &["No, that's wrong: you forgot the milk."]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = home.home().join("feature-requests");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(files.len(), 1);
    assert!(
        files[0].contains("Improve response handling after direct user corrections"),
        "{}",
        files[0]
    );
    assert!(
        files[0].contains("- Trigger phrase: you forgot"),
        "{}",
        files[0]
    );
    assert!(
        files[0].contains("- Recent user feedback: No, that's wrong: you forgot the milk."),
        "{}",
        files[0]
    );
}

/// The agenda items in this turn's recall payload (`recall_metadata` of `memory_type`
/// `AgendaItem` in the last message; earlier turns' pairs stay in the context).
fn recalled_agenda(request: &RecordedRequest) -> Vec<String> {
    let messages = request.messages();
    let mut names = Vec::new();
    let Some(m) = messages.last().filter(|m| m["role"] == "tool") else {
        return names;
    };
    let payload: Value =
        serde_json::from_str(m["content"].as_str().unwrap_or_default()).unwrap_or(Value::Null);
    for r in payload["recall_metadata"].as_array().into_iter().flatten() {
        if r["memory_type"] == "AgendaItem" {
            names.push(r["name"].as_str().unwrap_or_default().to_owned());
        }
    }
    names
}

/// Turn recall rebuilds the agenda rows of its index only when the agenda changed. An
/// item added between two turns is recalled by the second; once completed, by none after.
#[test]
fn agenda_item_added_or_completed_between_turns_is_seen_by_the_next_recall() {
    let server = MockServer::start();
    server.fallback(Reply::text("Noted."));
    let home = home_for(&server, "");
    let call = |tool: &str, args: &str| {
        let out = home
            .cmd()
            .env("ELROY_NOW", NOW)
            .args(["tools", "call", tool, "--args", args])
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {}", stderr(&out));
    };
    call("add_agenda_item", r#"{"text":"Water the plants"}"#);
    let question = "Did I book the opera tickets?";
    let out = message(&home, &[question]);
    assert!(out.status.success(), "{}", stderr(&out));
    call("add_agenda_item", r#"{"text":"Book the opera tickets"}"#);
    let out = message(&home, &[question]);
    assert!(out.status.success(), "{}", stderr(&out));
    call(
        "complete_agenda_item",
        r#"{"item_name":"Book the opera tickets"}"#,
    );
    let out = message(&home, &[question]);
    assert!(out.status.success(), "{}", stderr(&out));
    let turns = server.chat_requests();
    assert_eq!(turns.len(), 3);
    assert_eq!(recalled_agenda(&turns[0]), Vec::<String>::new());
    assert_eq!(recalled_agenda(&turns[1]), ["Book the opera tickets"]);
    assert_eq!(recalled_agenda(&turns[2]), Vec::<String>::new());
}
