//! elroy's own work per turn against the testkit's loopback server (no model latency): load and
//! repair the context, store the user message, recall over 1,000 memories, build the request with
//! 200 context messages, stream two rounds, dispatch one tool call, persist.
//!
//! `cargo bench -p elroy-runtime --bench turn`
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use elroy_core::{
    Capabilities, Message, NoArgs, Services, TimeContext, ToolContext, ToolError, ToolOutput,
    ToolRegistry, TypedTool, UserInfo, sync_tool,
};
use elroy_db::Db;
use elroy_llm::{ModelEndpoint, OpenAiChat, Protocol, RetryPolicy, Timeouts};
use elroy_memory::{MemoryStore, MemoryStoreOptions};
use elroy_orchestrator::{Session, SessionParts, Settings, TurnInput};
use elroy_runtime::adapters::MemoryRecall;
use elroy_testkit::{MockServer, Reply};
use elroy_transcript::{ContextItem, Provider, TranscriptStore};

fn main() {
    divan::main();
}

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

const TOPICS: [&str; 10] = [
    "dog", "garden", "bicycle", "piano", "dentist", "mortgage", "sister", "marathon", "python",
    "holiday",
];

struct Bench {
    server: MockServer,
    _home: tempfile::TempDir,
    session: Session,
    transcript: TranscriptStore,
    base: Vec<i64>,
    runtime: tokio::runtime::Runtime,
}

fn setup(with_recall: bool) -> Bench {
    let server = MockServer::start();
    let home = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&home.path().join("state.db")).unwrap());
    let now = jiff::Timestamp::from_second(1_790_000_000).unwrap();
    let user_id = db.ensure_user("DEFAULT", now).unwrap();
    let (store, _) = MemoryStore::open(
        Arc::clone(&db),
        MemoryStoreOptions {
            elroy_home: home.path().to_path_buf(),
            memory_dir: home.path().join("memories"),
            elroy_db_path: None,
            user_id,
            embedder: None,
            cosine_threshold: 0.3,
        },
        now,
    )
    .unwrap();
    for i in 0..1000 {
        let topic = TOPICS[i % TOPICS.len()];
        store
            .create(
                &format!("User's {topic} note {i}"),
                &format!("Fact number {i} about the user's {topic}: detail {i} written on 2026-01-{:02}.", i % 28 + 1),
                &[],
                now,
            )
            .unwrap();
    }
    let transcript = TranscriptStore::new(Arc::clone(&db));
    let mut history = Vec::new();
    for i in 0..100 {
        let topic = TOPICS[i % TOPICS.len()];
        history.push(Message::user(format!(
            "Tell me something about my {topic}, item {i}."
        )));
        history.push(Message::assistant(
            Some(format!(
                "Here is what I remember about your {topic}: a reply of moderate length number {i}."
            )),
            vec![],
        ));
    }
    transcript.append(user_id, "import", now, &history).unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(sync_tool(Pwd));
    let endpoint = ModelEndpoint {
        protocol: Protocol::OpenAi,
        name: "testkit-model".into(),
        model: "testkit-model".into(),
        base_url: server.base_url(),
        api_key: None,
        organization: None,
    };
    let model =
        Arc::new(OpenAiChat::new(endpoint, RetryPolicy::default(), Timeouts::default()).unwrap());
    let session = Session::start(SessionParts {
        settings: Settings::default(),
        time: TimeContext::fixed(now, jiff::tz::TimeZone::UTC),
        user: UserInfo {
            id: Some(user_id),
            token: "DEFAULT".into(),
            elroy_home: home.path().to_path_buf(),
            user_home: home.path().to_path_buf(),
        },
        user_id,
        registry: Arc::new(registry),
        services: Services::new(),
        capabilities: Capabilities::default(),
        cwd: "/work/here".into(),
        db: Arc::clone(&db),
        transcript: transcript.clone(),
        model,
        fast_model: None,
        memory: None,
        reflections: None,
        history: None,
        provider: Provider::Other,
        recall: with_recall.then(|| {
            Arc::new(MemoryRecall(Arc::new(store))) as Arc<dyn elroy_orchestrator::RecallSource>
        }),
        due: None,
        pins: None,
    })
    .unwrap();
    let base: Vec<i64> = transcript
        .active_context(user_id)
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(base.len(), 201);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    Bench {
        server,
        _home: home,
        session,
        transcript,
        base,
        runtime,
    }
}

fn run(bencher: divan::Bencher, with_recall: bool) {
    let bench = setup(with_recall);
    let user_id = bench.session.parts().user_id;
    let now = jiff::Timestamp::from_second(1_790_000_000).unwrap();
    let base: Vec<ContextItem> = bench
        .base
        .iter()
        .map(|id| ContextItem::Stored(*id))
        .collect();
    let input = TurnInput::new("What is my dog called, and where am I?");
    bencher
        .with_inputs(|| {
            // Back to the same 200-message context before every turn; script its two rounds.
            bench
                .transcript
                .set_context(user_id, "bench", now, &base)
                .unwrap();
            bench
                .server
                .push(Reply::tool_call("pwd", ""))
                .push(Reply::text(
                    "You are in /work/here. Your dog is called Biscuit.",
                ));
        })
        .bench_local_values(|()| {
            let outcome = bench
                .runtime
                .block_on(bench.session.turn(&input, &mut |_| {}))
                .unwrap();
            assert_eq!(outcome.requests, 2);
        });
}

/// The headline figure: 1,000 memories searched, 200 context messages, one tool round.
#[divan::bench(sample_count = 200)]
fn turn_with_recall_and_one_tool_call(bencher: divan::Bencher) {
    run(bencher, true);
}

/// The same turn without recall, to show recall's share.
#[divan::bench(sample_count = 200)]
fn turn_without_recall(bencher: divan::Bencher) {
    run(bencher, false);
}
