//! Turns against elroy-testkit's scripted server, with an in-memory database.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use elroy_core::{
    Capabilities, NoArgs, RecallKind, RecallMetadata, RecallPayload, Role, Services, TimeContext,
    ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool, UserInfo, sync_tool,
};
use elroy_db::Db;
use elroy_llm::{ModelEndpoint, OpenAiChat, Protocol, RetryPolicy, Timeouts};
use elroy_orchestrator::{
    ChangeRecorder, DueSource, PortError, RecallQuery, RecallSource, Reflection, ReflectionSink,
    Session, SessionParts, Settings, TurnEvent, TurnInput,
};
use elroy_testkit::{MockServer, Reply};
use elroy_transcript::{Provider, TranscriptStore};

struct Pwd;
impl TypedTool for Pwd {
    type Args = NoArgs;
    const NAME: &'static str = "pwd";
    const EFFECT: elroy_core::ToolEffect = elroy_core::ToolEffect::HOME_OVERWRITES;
    const DESCRIPTION: &'static str = "Print the working directory.";
    fn run(&self, ctx: &ToolContext, _: NoArgs) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(ctx.cwd.display().to_string()))
    }
}

elroy_core::tool_args! {
    struct NoteArgs {
        text: String => "The note.",
    }
}

/// Fails for the text `bad`, else records the note.
struct Note(Arc<Mutex<Vec<String>>>);
impl TypedTool for Note {
    type Args = NoteArgs;
    const NAME: &'static str = "note";
    const EFFECT: elroy_core::ToolEffect = elroy_core::ToolEffect::HOME_OVERWRITES;
    const DESCRIPTION: &'static str = "Write a note.";
    fn run(&self, _: &ToolContext, args: NoteArgs) -> Result<ToolOutput, ToolError> {
        if args.text == "bad" {
            return Err(ToolError::new("a note cannot say 'bad'"));
        }
        self.0.lock().unwrap().push(args.text);
        Ok(ToolOutput::success())
    }
}

struct Fixture {
    server: MockServer,
    home: tempfile::TempDir,
    db: Arc<Db>,
    notes: Arc<Mutex<Vec<String>>>,
    settings: Settings,
    recall: Option<Arc<dyn RecallSource>>,
    due: Option<Arc<dyn DueSource>>,
    memory: Option<Arc<elroy_memory::MemoryStore>>,
    reflections: Option<Arc<dyn ReflectionSink>>,
    history: Option<Arc<dyn ChangeRecorder>>,
    /// The base URL of a fast model other than the chat model.
    fast_url: Option<String>,
}

/// An OpenAI-compatible client of the server at `base_url`, retrying twice after 5 ms.
fn client(base_url: String) -> Arc<OpenAiChat> {
    let endpoint = ModelEndpoint {
        protocol: Protocol::OpenAi,
        name: "testkit-model".into(),
        model: "testkit-model".into(),
        base_url,
        api_key: None,
        organization: None,
    };
    let retry = RetryPolicy {
        delays: vec![Duration::from_millis(5), Duration::from_millis(5)],
        max_retry_after: Duration::from_secs(1),
    };
    Arc::new(OpenAiChat::new(endpoint, retry, Timeouts::default()).unwrap())
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            server: MockServer::start(),
            home: tempfile::tempdir().unwrap(),
            db: Arc::new(Db::open_in_memory().unwrap()),
            notes: Arc::default(),
            settings: Settings::default(),
            recall: None,
            due: None,
            memory: None,
            reflections: None,
            history: None,
            fast_url: None,
        }
    }

    fn memory_store(&self) -> elroy_memory::MemoryStore {
        let now = jiff::Timestamp::from_second(1_790_000_000).unwrap();
        let user_id = self.db.ensure_user("DEFAULT", now).unwrap();
        elroy_memory::MemoryStore::open(
            Arc::clone(&self.db),
            elroy_memory::MemoryStoreOptions {
                elroy_home: self.home.path().to_path_buf(),
                memory_dir: self.home.path().join("memories"),
                elroy_db_path: None,
                user_id,
                embedder: None,
                cosine_threshold: 0.3,
            },
            now,
        )
        .unwrap()
        .0
    }

    fn session(&self) -> Session {
        let model = client(self.server.base_url());
        let mut registry = ToolRegistry::new();
        registry
            .register(sync_tool(Pwd))
            .register(sync_tool(Note(Arc::clone(&self.notes))));
        let now = jiff::Timestamp::from_second(1_790_000_000).unwrap();
        let user_id = self.db.ensure_user("DEFAULT", now).unwrap();
        Session::start(SessionParts {
            settings: self.settings.clone(),
            time: TimeContext::fixed(now, jiff::tz::TimeZone::UTC),
            user: UserInfo {
                id: Some(user_id),
                token: "DEFAULT".into(),
                elroy_home: self.home.path().to_path_buf(),
                user_home: self.home.path().to_path_buf(),
            },
            user_id,
            registry: Arc::new(registry),
            services: Services::new(),
            capabilities: Capabilities::default(),
            cwd: "/work/here".into(),
            db: Arc::clone(&self.db),
            transcript: TranscriptStore::new(Arc::clone(&self.db)),
            model,
            fast_model: self
                .fast_url
                .clone()
                .map(|url| client(url) as Arc<dyn elroy_llm::ChatModel>),
            memory: self.memory.clone(),
            reflections: self.reflections.clone(),
            history: self.history.clone(),
            provider: Provider::Other,
            recall: self.recall.clone(),
            due: self.due.clone(),
            pins: None,
        })
        .unwrap()
    }

    fn stored(&self) -> Vec<elroy_core::Message> {
        TranscriptStore::new(Arc::clone(&self.db))
            .active_context(1)
            .unwrap()
            .into_iter()
            .map(|s| s.message)
            .collect()
    }
}

async fn run(
    session: &Session,
    text: &str,
) -> (
    Result<elroy_orchestrator::TurnOutcome, String>,
    Vec<TurnEvent>,
) {
    let mut events = Vec::new();
    let r = session
        .turn(&TurnInput::new(text), &mut |e| events.push(e))
        .await
        .map_err(|e| e.to_string());
    (r, events)
}

fn shape(messages: &[elroy_core::Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m.role {
            Role::System => "S".to_owned(),
            Role::User => "U".to_owned(),
            Role::Assistant if !m.tool_calls.is_empty() => "A(call)".to_owned(),
            Role::Assistant => format!("A({})", m.content.clone().unwrap_or_default()),
            Role::Tool => "T".to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn loop_bound_vector_16_7() {
    for (max_loops, with_tools) in [(4usize, 5usize), (0, 1)] {
        let mut f = Fixture::new();
        f.settings.max_assistant_loops = max_loops;
        f.server
            .when(|r| r.has_tools(), Reply::tool_call("pwd", ""))
            .when(|r| !r.has_tools(), Reply::text("done"));
        let session = f.session();
        let (r, _) = run(&session, "where am I?").await;
        assert_eq!(r.unwrap().reply, "done");
        let chat = f.server.chat_requests();
        assert_eq!(chat.iter().filter(|r| r.has_tools()).count(), with_tools);
        assert_eq!(chat.iter().filter(|r| !r.has_tools()).count(), 1);
        let mut expected = vec!["S".to_owned(), "U".to_owned()];
        for _ in 0..with_tools {
            expected.push("A(call)".into());
            expected.push("T".into());
        }
        expected.push("A(done)".into());
        assert_eq!(shape(&f.stored()), expected);
        // The tool result reached the model.
        assert_eq!(chat[1].tool_results()[0].1, "/work/here");
    }
}

#[tokio::test]
async fn tool_error_reaches_the_model_and_the_retry_succeeds() {
    let f = Fixture::new();
    f.server
        .push(Reply::tool_call("note", r#"{"text":"bad"}"#))
        .push(Reply::tool_call("note", r#"{"text":"good"}"#))
        .push(Reply::text("Noted."));
    let session = f.session();
    let (r, events) = run(&session, "note something").await;
    assert_eq!(r.unwrap().reply, "Noted.");
    let second = &f.server.chat_requests()[1];
    assert_eq!(
        second.tool_results()[0].1,
        "Error invoking tool note: a note cannot say 'bad'"
    );
    assert_eq!(*f.notes.lock().unwrap(), ["good"]);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolResult { is_error: true, .. }))
    );
    assert_eq!(events.last(), Some(&TurnEvent::Done));
    let stored = f.stored();
    let errors: Vec<bool> = stored
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.is_error)
        .collect();
    assert_eq!(errors, [true, false]);
}

#[tokio::test]
async fn r3_repeated_failures_stop_the_tool() {
    let f = Fixture::new();
    f.server
        .when(
            |r| r.has_tools(),
            Reply::tool_call("note", r#"{"text":"bad"}"#),
        )
        .when(|r| !r.has_tools(), Reply::text("I could not write it."));
    let session = f.session();
    let (r, _) = run(&session, "note something").await;
    assert_eq!(r.unwrap().reply, "I could not write it.");
    let last = f.server.chat_requests().last().unwrap().clone();
    let results: Vec<String> = last.tool_results().into_iter().map(|(_, c)| c).collect();
    let stop = "Error invoking tool note: this tool already failed 3 times in this turn; stop retrying it and answer the user";
    assert_eq!(results.len(), 5);
    assert!(
        results[..3]
            .iter()
            .all(|c| c == "Error invoking tool note: a note cannot say 'bad'")
    );
    assert_eq!(results[3], stop);
    assert_eq!(results[4], stop);
    // The counter starts again with the next user message.
    let (r, _) = run(&session, "again").await;
    r.unwrap();
    let first_of_turn2 = f.server.chat_requests()[7].clone();
    assert_eq!(
        first_of_turn2.tool_results().last().unwrap().1,
        "Error invoking tool note: a note cannot say 'bad'"
    );
}

#[tokio::test]
async fn malformed_arguments_and_unknown_tools_are_reported() {
    let f = Fixture::new();
    f.server
        .push(Reply::tool_calls(vec![
            ("note".into(), "[1,2]".into()),
            ("frobnicate".into(), "{}".into()),
            ("note".into(), "{\"text\":\"cut".into()),
            ("get_due_items".into(), "{}".into()),
        ]))
        .push(Reply::text("ok"));
    let session = f.session();
    run(&session, "try things").await.0.unwrap();
    let results: Vec<String> = f.server.chat_requests()[1]
        .tool_results()
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(
        results,
        [
            "Error invoking tool note: arguments must be a JSON object, got array",
            "Error invoking tool frobnicate: Unknown tool 'frobnicate'. Available tools: note, pwd",
            "Error invoking tool note: arguments are not valid JSON (12 bytes received); the call was not executed",
            "OK",
        ]
    );
    assert!(f.notes.lock().unwrap().is_empty());
}

#[tokio::test]
async fn failed_turn_keeps_only_the_user_message() {
    let f = Fixture::new();
    f.server.fallback(Reply::status(500, "model exploded"));
    let session = f.session();
    let (r, events) = run(&session, "remember me").await;
    let err = r.unwrap_err();
    assert!(err.contains("HTTP 500: model exploded"), "{err}");
    assert!(matches!(events.last(), Some(TurnEvent::Error(_))));
    assert_eq!(shape(&f.stored()), ["S", "U"]);
    assert_eq!(f.stored()[1].content.as_deref(), Some("remember me"));
    assert_eq!(f.db.op_tracker(1).unwrap().messages_since_memory, 1);
}

struct FixedRecall;
impl RecallSource for FixedRecall {
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, PortError> {
        let already = query
            .conversation
            .iter()
            .any(|m| m.recall_metadata().is_some());
        Ok((!already).then(|| RecallPayload {
            content: "#User's dog\n\nThe user's dog is named Biscuit.".into(),
            recall_metadata: vec![RecallMetadata {
                memory_type: RecallKind::Memory,
                memory_id: 7,
                name: "User's dog".into(),
            }],
        }))
    }
}

struct FixedDue;
impl DueSource for FixedDue {
    fn due_text(&self, _: &TimeContext) -> Result<Option<String>, PortError> {
        Ok(Some("⏰ DUE ITEM: 'Call mom' - Ring her\n\nThis item was scheduled for 2026-01-01 09:00:00+00:00 and is now due. Please inform the user about it and then use the delete_due_item tool to remove it from active due items.".into()))
    }
}

#[tokio::test]
async fn recall_and_due_pairs_are_injected_after_the_user_message() {
    let mut f = Fixture::new();
    f.recall = Some(Arc::new(FixedRecall));
    f.due = Some(Arc::new(FixedDue));
    f.server.fallback(Reply::text("Biscuit! Also, call mom."));
    let session = f.session();
    let (r, events) = run(&session, "What is my dog called?").await;
    r.unwrap();
    let sent = &f.server.chat_requests()[0];
    let roles: Vec<String> = sent
        .messages()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "tool"]
    );
    let exchanges = sent.tool_exchanges();
    assert_eq!(exchanges[0].0, "get_fast_recall");
    assert!(exchanges[0].1.contains("Biscuit"));
    assert_eq!(exchanges[1].0, "get_due_items");
    assert!(exchanges[1].1.starts_with("⏰ DUE ITEM: 'Call mom'"));
    let m = &sent.messages()[2];
    // A synthetic call has no content; it goes out as "" (llama-cpp-python rejects null).
    assert_eq!(m["content"], "");
    assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::Injected { .. }))
    );
    // Stored: S, U, recall pair, due pair, reply.
    assert_eq!(
        shape(&f.stored()),
        [
            "S",
            "U",
            "A(call)",
            "T",
            "A(call)",
            "T",
            "A(Biscuit! Also, call mom.)"
        ]
    );
    // Next turn: the memory is in context, so no new recall pair; the due pair comes again.
    run(&session, "And my dog's breed?").await.0.unwrap();
    let second = &f.server.chat_requests()[1];
    let names: Vec<String> = second
        .tool_exchanges()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["get_fast_recall", "get_due_items", "get_due_items"]);
}

#[tokio::test]
async fn soul_is_in_the_system_prompt_and_frozen() {
    let f = Fixture::new();
    std::fs::write(f.home.path().join("MEMORY.md"), "- The user likes tea\n").unwrap();
    f.server.fallback(Reply::text("ok"));
    let session = f.session();
    assert!(session.system_prompt().contains("<soul>\n"));
    assert!(
        session
            .system_prompt()
            .contains("## MEMORY.md\n\n- The user likes tea")
    );
    run(&session, "hi").await.0.unwrap();
    std::fs::write(f.home.path().join("MEMORY.md"), "- The user likes coffee\n").unwrap();
    run(&session, "hi again").await.0.unwrap();
    for r in f.server.chat_requests() {
        let prompt = r.system_prompt().unwrap();
        assert!(prompt.contains("likes tea") && !prompt.contains("coffee"));
    }
    // A new session re-reads the files and replaces the stored system prompt.
    let next = f.session();
    assert!(next.system_prompt().contains("likes coffee"));
    assert_eq!(f.stored()[0].content.as_deref(), Some(next.system_prompt()));
}

#[tokio::test]
async fn thoughts_are_not_in_the_reply_but_are_stored() {
    let f = Fixture::new();
    f.server.push(
        Reply::text("<internal_thought>They want a greeting</internal_thought>Hello!").chunked(1),
    );
    let session = f.session();
    let (r, events) = run(&session, "hello").await;
    assert_eq!(r.unwrap().reply, "Hello!");
    let thought: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ThoughtDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thought, "They want a greeting");
    assert_eq!(
        f.stored().last().unwrap().content.as_deref(),
        Some("<internal_thought>They want a greeting</internal_thought>Hello!")
    );
}

#[tokio::test]
async fn hidden_turn_stores_no_user_message_and_offers_no_tools() {
    let f = Fixture::new();
    f.server.fallback(Reply::text("I'm back."));
    let session = f.session();
    let mut events = Vec::new();
    let outcome = session
        .turn(&TurnInput::hidden("Elroy just restarted."), &mut |e| {
            events.push(e)
        })
        .await
        .unwrap();
    assert_eq!(outcome.reply, "I'm back.");
    let sent = &f.server.chat_requests()[0];
    assert!(!sent.has_tools());
    assert_eq!(
        sent.last_user_text().as_deref(),
        Some("Elroy just restarted.")
    );
    assert_eq!(shape(&f.stored()), ["S", "A(I'm back.)"]);
}

#[tokio::test]
async fn automatic_memory_every_n_user_messages() {
    let mut f = Fixture::new();
    f.settings.messages_between_memory = 2;
    f.memory = Some(Arc::new(f.memory_store()));
    f.server
        .when(
            |r| {
                r.system_prompt()
                    .is_some_and(|p| p.starts_with("You write long-term memories for Elroy"))
            },
            Reply::text("# User's dog Biscuit\n\nThe user's dog is named Biscuit."),
        )
        .fallback(Reply::text("ok"));
    let session = f.session();
    run(&session, "My dog is called Biscuit.").await.0.unwrap();
    assert_eq!(session.after_turn().await.memory_created, None);
    run(&session, "He is three years old.").await.0.unwrap();
    let report = session.after_turn().await;
    assert_eq!(report.memory_created.as_deref(), Some("User's dog Biscuit"));
    // The memory prompt carried the conversation.
    let asked = f
        .server
        .chat_requests()
        .into_iter()
        .find(|r| {
            r.system_prompt()
                .is_some_and(|p| p.starts_with("You write"))
        })
        .unwrap();
    let body = asked.last_user_text().unwrap();
    assert!(body.contains("USER ("), "{body}");
    assert!(body.contains("My dog is called Biscuit."));
    assert!(!body.starts_with("Conversation Summary"));
    // Counter reset, memory file written and pinned into the context.
    assert_eq!(f.db.op_tracker(1).unwrap().messages_since_memory, 0);
    let store = f.memory.as_ref().unwrap();
    assert!(
        store
            .active_by_name("User's dog Biscuit")
            .unwrap()
            .is_some()
    );
    let last = f.stored().last().unwrap().clone();
    assert!(last.content.unwrap().contains("Biscuit"));
}

#[tokio::test]
async fn session_context_pair_for_interactive_sessions() {
    let f = Fixture::new();
    f.server.fallback(Reply::text("Hi!"));
    let session = f.session();
    session.add_session_context().unwrap();
    let stored = f.stored();
    let n = stored.len();
    assert_eq!(stored[n - 2].tool_calls[0].name, "get_session_context");
    assert_eq!(
        stored[n - 1].content.as_deref(),
        Some(
            "Current date/time: Monday, September 21, 2026 02:13 PM UTC. User has logged in. I haven't chatted with User yet today. I should offer a brief greeting (less than 50 words)."
        )
    );
    run(&session, "hello").await.0.unwrap();
    session.add_session_context().unwrap();
    assert_eq!(
        f.stored().last().unwrap().content.as_deref(),
        Some(
            "Current date/time: Monday, September 21, 2026 02:13 PM UTC. User has logged in. I first started chatting with User today at 02:13 PM."
        )
    );
}

#[tokio::test]
async fn inline_tool_calls_mode() {
    let mut f = Fixture::new();
    f.settings.inline_tool_calls = true;
    f.server
        .push(Reply::text(
            "<internal_thought>I need pwd</internal_thought><tool_call>{\"name\": \"pwd\", \"arguments\": {}}</tool_call>",
        ).chunked(2))
        .push(Reply::text("You are in /work/here."));
    let session = f.session();
    assert!(
        session
            .system_prompt()
            .contains("<tool_call_schemas>\n[\n  {\n    \"type\": \"function\"")
    );
    let (r, events) = run(&session, "where am I?").await;
    assert_eq!(r.unwrap().reply, "You are in /work/here.");
    let sent = f.server.chat_requests();
    assert!(!sent[0].has_tools());
    assert_eq!(sent[1].tool_results()[0].1, "/work/here");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolCall { name, .. } if name == "pwd"))
    );
    // The stored assistant message keeps the raw text and carries the parsed call.
    let stored = f.stored();
    let call = stored.iter().find(|m| !m.tool_calls.is_empty()).unwrap();
    assert!(call.content.as_deref().unwrap().contains("<tool_call>"));
    assert_eq!(call.tool_calls[0].id.len(), 32);
}

#[tokio::test]
async fn refresh_over_max_tokens_compresses_and_appends_a_summary() {
    let mut f = Fixture::new();
    f.settings.max_tokens = 2000;
    f.settings.messages_between_memory = 0;
    f.memory = Some(Arc::new(f.memory_store()));
    f.server
        .when(
            |r| {
                r.system_prompt()
                    .is_some_and(|p| p.starts_with("You write long-term memories"))
            },
            Reply::text("# Garden plans\n\nThe user plans a vegetable garden."),
        )
        .when(
            |r| {
                r.system_prompt().is_some_and(|p| {
                    p.starts_with("Summarise this conversation from the point of view of Elroy")
                })
            },
            Reply::text("We planned the garden."),
        )
        .fallback(Reply::text("Sure. ".repeat(300)));
    let session = f.session();
    for i in 0..3 {
        run(
            &session,
            &format!("Tell me about the garden, part {i}. {}", "x".repeat(1000)),
        )
        .await
        .0
        .unwrap();
    }
    let report = session.after_turn().await;
    assert!(report.compressed);
    let stored = f.stored();
    assert_eq!(stored[0].role, Role::System);
    let tokens: usize = stored
        .iter()
        .skip(1)
        .map(elroy_transcript::estimate_tokens)
        .sum();
    // Kept messages fit a third of max_tokens; the summary pair comes after them.
    let n = stored.len();
    assert_eq!(stored[n - 2].tool_calls[0].name, "context_summary");
    assert_eq!(
        stored[n - 1].content.as_deref(),
        Some("Recent conversation summary: We planned the garden.")
    );
    assert!(tokens < 2000, "{tokens}");
    assert!(
        f.memory
            .as_ref()
            .unwrap()
            .active_by_name("Garden plans")
            .unwrap()
            .is_some()
    );
}

/// A fake history port: logs `begin {label}` / `end {label}` around the work it runs.
struct LogRecorder(Arc<Mutex<Vec<String>>>);
impl ChangeRecorder for LogRecorder {
    fn record(&self, _now: jiff::Timestamp, label: &str, work: &mut dyn FnMut()) {
        self.0.lock().unwrap().push(format!("begin {label}"));
        work();
        self.0.lock().unwrap().push(format!("end {label}"));
    }
}

/// A fake feature-request port: logs the reflection's phrase (inside the recorder's commit).
struct LogReflections(Arc<Mutex<Vec<String>>>);
impl ReflectionSink for LogReflections {
    fn record_reflection(
        &self,
        _now: jiff::Timestamp,
        reflection: &Reflection,
    ) -> Result<(), PortError> {
        assert_eq!(reflection.title, elroy_orchestrator::REFLECTION_TITLE);
        self.0.lock().unwrap().push(format!(
            "reflect {}: {}",
            reflection.phrase, reflection.excerpt
        ));
        Ok(())
    }
}

/// Background store changes go through the ports (the kind: every background write — memory,
/// reflection — is one recorded change): self-reflection reaches the feature-request port inside
/// one `self-reflection` change of the history port, automatic memory one `automatic memory`
/// change; no runtime, no versioned home.
#[tokio::test]
async fn background_changes_go_through_the_history_and_reflection_ports() {
    let mut f = Fixture::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    f.settings.messages_between_self_reflection = 1;
    f.settings.messages_between_memory = 1;
    f.memory = Some(Arc::new(f.memory_store()));
    f.reflections = Some(Arc::new(LogReflections(Arc::clone(&log))));
    f.history = Some(Arc::new(LogRecorder(Arc::clone(&log))));
    f.server
        .when(
            |r| {
                r.system_prompt()
                    .is_some_and(|p| p.starts_with("You write long-term memories"))
            },
            Reply::text("# Dentist\n\nThe user has a dentist appointment."),
        )
        .fallback(Reply::text("Sorry!"));
    let session = f.session();
    run(&session, "You forgot my   dentist appointment")
        .await
        .0
        .unwrap();
    let report = session.after_turn().await;
    assert_eq!(report.failures, []);
    assert_eq!(report.reflected.as_deref(), Some("you forgot"));
    assert_eq!(report.memory_created.as_deref(), Some("Dentist"));
    assert_eq!(
        *log.lock().unwrap(),
        [
            "begin automatic memory",
            "end automatic memory",
            "begin self-reflection",
            "reflect you forgot: You forgot my dentist appointment",
            "end self-reflection",
        ]
    );
}

/// A failing port is a typed error that keeps its source (the kind: store errors above the
/// stores are values, not text).
#[tokio::test]
async fn a_failing_reflection_port_is_a_typed_background_error() {
    struct Broken;
    impl ReflectionSink for Broken {
        fn record_reflection(&self, _: jiff::Timestamp, _: &Reflection) -> Result<(), PortError> {
            Err(PortError::new(std::io::Error::other("disk full")))
        }
    }
    let mut f = Fixture::new();
    f.settings.messages_between_self_reflection = 1;
    f.reflections = Some(Arc::new(Broken));
    f.server.fallback(Reply::text("Sorry!"));
    let session = f.session();
    run(&session, "That's wrong.").await.0.unwrap();
    let report = session.after_turn().await;
    assert_eq!(report.reflected, None);
    assert_eq!(
        report.failures,
        [elroy_orchestrator::BackgroundFailure {
            step: elroy_orchestrator::BackgroundStep::SelfReflection,
            message: "disk full".into(),
        }]
    );
}

/// The `response_format` schema's property names of a recorded request (empty when none).
fn schema_properties(request: &elroy_testkit::RecordedRequest) -> Vec<String> {
    request
        .body
        .pointer("/response_format/json_schema/schema/properties")
        .and_then(serde_json::Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn is_classifier(request: &elroy_testkit::RecordedRequest) -> bool {
    request.system_prompt().as_deref() == Some(elroy_orchestrator::CLASSIFIER_PROMPT)
}

fn is_reflection(request: &elroy_testkit::RecordedRequest) -> bool {
    request.system_prompt().as_deref() == Some(elroy_orchestrator::REFLECTIVE_RECALL_PROMPT)
}

fn statuses(events: &[TurnEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Status(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// The turn's own (streamed) chat requests, without structured side calls.
fn turn_requests(server: &MockServer) -> Vec<elroy_testkit::RecordedRequest> {
    server
        .chat_requests()
        .into_iter()
        .filter(|r| r.body.get("response_format").is_none())
        .collect()
}

fn recall_tools(request: &elroy_testkit::RecordedRequest) -> Vec<String> {
    request
        .tool_exchanges()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|n| n.contains("recall"))
        .collect()
}

#[tokio::test]
async fn recall_classifier_is_asked_on_the_fast_model_and_obeyed() {
    let fast = MockServer::start();
    // "No" for small talk, "yes" for the question about the dog.
    fast.when(
        |r| {
            is_classifier(r)
                && r.last_user_text()
                    .is_some_and(|t| t.ends_with("Latest message: How was your weekend?"))
        },
        Reply::text(r#"{"needs_recall": false, "reasoning": "small talk"}"#),
    )
    .when(
        is_classifier,
        Reply::text(r#"{"needs_recall": true, "reasoning": "asks about the user's dog"}"#),
    );
    let mut f = Fixture::new();
    f.settings.memory_recall_classifier_enabled = true;
    f.settings.memory_recall_classifier_window = 2;
    f.recall = Some(Arc::new(FixedRecall));
    f.fast_url = Some(fast.base_url());
    f.server.fallback(Reply::text("Lovely."));
    let session = f.session();

    let (r, events) = run(&session, "How was your weekend?").await;
    r.unwrap();
    let seen = statuses(&events);
    assert!(
        seen.contains(&"classifying recall...".to_owned()),
        "{seen:?}"
    );
    // The classifier said no: recall did not run.
    assert!(
        !seen.contains(&"fetching memories...".to_owned()),
        "{seen:?}"
    );
    assert!(recall_tools(&turn_requests(&f.server)[0]).is_empty());

    let (r, events) = run(&session, "What is my dog called?").await;
    r.unwrap();
    assert!(statuses(&events).contains(&"fetching memories...".to_owned()));
    assert_eq!(
        recall_tools(&turn_requests(&f.server)[1]),
        ["get_fast_recall"]
    );

    // Two structured calls, both to the fast model, none to the chat model.
    let asked = fast.chat_requests();
    assert_eq!(asked.len(), 2);
    assert!(f.server.chat_requests().iter().all(|r| !is_classifier(r)));
    assert!(asked.iter().all(|r| !r.is_stream() && is_classifier(r)));
    assert_eq!(schema_properties(&asked[0]), ["needs_recall", "reasoning"]);
    // The window: the last 2 conversation messages before the latest one.
    assert_eq!(
        asked[1].last_user_text().unwrap(),
        "user: How was your weekend?\nassistant: Lovely.\nLatest message: What is my dog called?"
    );
}

#[tokio::test]
async fn recall_classifier_failure_means_recall_runs() {
    // Kind: the classifier gives no usable answer (HTTP 500, or replies that never validate);
    // either way recall runs (`docs/behaviour.md#whether-to-recall` step 3).
    for (reply, structured_requests) in [
        (Reply::status(500, "fast model down"), 3),
        (Reply::text("I think so?"), 2),
    ] {
        let fast = MockServer::start();
        fast.fallback(reply);
        let mut f = Fixture::new();
        f.settings.memory_recall_classifier_enabled = true;
        f.recall = Some(Arc::new(FixedRecall));
        f.fast_url = Some(fast.base_url());
        f.server.fallback(Reply::text("Biscuit."));
        let session = f.session();
        let (r, _) = run(&session, "What is my dog called?").await;
        r.unwrap();
        // 500: the first request and the client's 2 retries; invalid: the request and one retry.
        assert_eq!(fast.chat_requests().len(), structured_requests);
        assert_eq!(
            recall_tools(&turn_requests(&f.server)[0]),
            ["get_fast_recall"]
        );
    }
}

#[tokio::test]
async fn without_classifier_or_reflect_no_structured_recall_requests() {
    let fast = MockServer::start();
    fast.fallback(Reply::text(r#"{"needs_recall": false, "reasoning": ""}"#));
    let mut f = Fixture::new();
    f.recall = Some(Arc::new(FixedRecall));
    f.fast_url = Some(fast.base_url());
    f.server.fallback(Reply::text("Biscuit."));
    let session = f.session();
    let (r, events) = run(&session, "What is my dog called?").await;
    r.unwrap();
    assert!(!statuses(&events).contains(&"classifying recall...".to_owned()));
    assert!(fast.requests().is_empty());
    let sent = f.server.chat_requests();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].body.get("response_format").is_none());
    assert_eq!(recall_tools(&sent[0]), ["get_fast_recall"]);
}

#[tokio::test]
async fn reflective_recall_injects_the_chat_models_reflection() {
    let fast = MockServer::start();
    let mut f = Fixture::new();
    f.settings.reflect = true;
    f.recall = Some(Arc::new(FixedRecall));
    f.fast_url = Some(fast.base_url());
    f.server
        .when(
            is_reflection,
            Reply::text(
                r#"{"content": "The user's dog is Biscuit; I should use his name.", "is_relevant": true}"#,
            ),
        )
        .fallback(Reply::text("He is called Biscuit."));
    let session = f.session();
    let (r, events) = run(&session, "What is my dog called?").await;
    r.unwrap();

    // The reflection went to the chat model (not the fast one), structured, with the
    // renderings and the latest messages.
    assert!(fast.requests().is_empty());
    let asked: Vec<_> = f
        .server
        .chat_requests()
        .into_iter()
        .filter(is_reflection)
        .collect();
    assert_eq!(asked.len(), 1);
    assert!(!asked[0].is_stream());
    assert_eq!(schema_properties(&asked[0]), ["content", "is_relevant"]);
    let text = asked[0].last_user_text().unwrap();
    assert!(
        text.starts_with(
            "Memories and reminders:\n#User's dog\n\nThe user's dog is named Biscuit."
        ),
        "{text}"
    );
    assert!(
        text.ends_with("Recent conversation:\nuser: What is my dog called?"),
        "{text}"
    );

    // The turn carries a get_reflective_recall pair with the reflection and the same metadata,
    // and no plain recall pair.
    let turn = &turn_requests(&f.server)[0];
    assert_eq!(recall_tools(turn), ["get_reflective_recall"]);
    let (_, content) = turn
        .tool_exchanges()
        .into_iter()
        .find(|(n, _)| n == "get_reflective_recall")
        .unwrap();
    let payload: serde_json::Value = serde_json::from_str(&content).unwrap();
    assert_eq!(
        payload,
        serde_json::json!({
            "content": "The user's dog is Biscuit; I should use his name.",
            "recall_metadata": [{"memory_type": "Memory", "memory_id": 7, "name": "User's dog"}]
        })
    );
    assert!(events.iter().any(|e| matches!(
        e,
        TurnEvent::Injected { text, .. } if text == "The user's dog is Biscuit; I should use his name."
    )));
    // Stored with the turn: the reflective pair counts as the item being in context.
    let stored = f.stored();
    assert!(stored.iter().any(|m| {
        m.tool_calls
            .iter()
            .any(|c| c.name == "get_reflective_recall")
    }));
    run(&session, "And his breed?").await.0.unwrap();
    assert_eq!(
        f.server
            .chat_requests()
            .iter()
            .filter(|r| is_reflection(r))
            .count(),
        1
    );
}

#[tokio::test]
async fn reflective_recall_not_relevant_or_failing() {
    // Not relevant: no recall pair at all.
    let mut f = Fixture::new();
    f.settings.reflect = true;
    f.recall = Some(Arc::new(FixedRecall));
    f.server
        .when(
            is_reflection,
            Reply::text(r#"{"content": "", "is_relevant": false}"#),
        )
        .fallback(Reply::text("No idea."));
    let session = f.session();
    run(&session, "What is my dog called?").await.0.unwrap();
    assert!(recall_tools(&turn_requests(&f.server)[0]).is_empty());

    // Kind: the reflection gives no usable answer (HTTP 500 after retries, or a reply that never
    // validates); the plain get_fast_recall pair is injected instead.
    for reply in [
        Reply::status(500, "reflection failed"),
        Reply::text(r#"{"content": "   ", "is_relevant": true}"#),
    ] {
        let mut f = Fixture::new();
        f.settings.reflect = true;
        f.recall = Some(Arc::new(FixedRecall));
        f.server
            .when(is_reflection, reply)
            .fallback(Reply::text("Biscuit."));
        let session = f.session();
        run(&session, "What is my dog called?").await.0.unwrap();
        let turn = &turn_requests(&f.server)[0];
        assert_eq!(recall_tools(turn), ["get_fast_recall"]);
        let (_, content) = turn.tool_exchanges().into_iter().next().unwrap();
        assert!(content.contains("The user's dog is named Biscuit."));
    }
}

#[tokio::test]
async fn background_steps_run_after_a_failing_fast_model() {
    // Kind: the fast model fails (an HTTP 500 server, or an address nothing listens on). The
    // automatic memory fails first; the refresh still compresses the context.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let failing = MockServer::start();
    failing.fallback(Reply::status(500, "fast model down"));
    for fast_url in [failing.base_url(), closed] {
        let mut f = Fixture::new();
        f.settings.max_tokens = 2000;
        f.settings.messages_between_memory = 1;
        f.memory = Some(Arc::new(f.memory_store()));
        f.fast_url = Some(fast_url.clone());
        f.server.fallback(Reply::text("Sure. ".repeat(300)));
        let session = f.session();
        for i in 0..3 {
            run(
                &session,
                &format!("Tell me about the garden, part {i}. {}", "x".repeat(1000)),
            )
            .await
            .0
            .unwrap();
        }
        let before = f.stored().len();
        let report = session.after_turn().await;
        assert!(report.compressed, "{fast_url}: {report:?}");
        assert_eq!(report.memory_created, None);
        let steps: Vec<_> = report.failures.iter().map(|x| x.step).collect();
        assert_eq!(
            steps,
            [
                elroy_orchestrator::BackgroundStep::AutomaticMemory,
                elroy_orchestrator::BackgroundStep::ContextRefresh,
                elroy_orchestrator::BackgroundStep::ContextRefresh,
            ],
            "{fast_url}: {report:?}"
        );
        if fast_url.contains(&failing.base_url()) {
            assert!(
                report.failures[0].to_string().contains("fast model down"),
                "{}",
                report.failures[0]
            );
        }
        // Compressed: fewer messages, under a third of max_tokens, no summary pair, stored as
        // a `refresh` version.
        let stored = f.stored();
        assert!(stored.len() < before, "{} < {before}", stored.len());
        assert_eq!(stored[0].role, Role::System);
        let tokens: usize = stored
            .iter()
            .skip(1)
            .map(elroy_transcript::estimate_tokens)
            .sum();
        assert!(tokens <= 2000 / 3, "{tokens}");
        assert!(
            stored
                .iter()
                .all(|m| m.tool_calls.iter().all(|c| c.name != "context_summary"))
        );
        let reason: String =
            f.db.with_conn(|c| {
                c.query_row(
                    "SELECT reason FROM context_versions ORDER BY version DESC LIMIT 1",
                    [],
                    |row| row.get(0),
                )
            })
            .unwrap();
        assert_eq!(reason, "refresh");
    }
}
