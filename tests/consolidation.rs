//! Memory consolidation (`docs/behaviour.md#consolidation`) end to end: the real binary against
//! elroy-testkit. Three memories come from `elroy tools call create_memory` (op-tracked: the
//! counter reaches 3), the fourth from a `create_memory` call of the model during a turn (the
//! counter reaches `memories_between_consolidation` = 4), and after the reply the similar ones are
//! merged by one structured fast-model call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::{Output, Stdio};

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, RecordedRequest, Reply};
use serde_json::{Value, json};

const NOW: &str = "2026-11-30T10:00:00Z";

/// (name, text) of the memories, in creation order (ids 1–4). By TF-IDF (N = 4) the dog memories
/// are at distances 0.105 (2–3), 0.181 (2–4) and 0.252 (3–4); the bicycle is ~0.8 from each. Only
/// memory 2 is a core point (3 neighbours with itself); 3 and 4 join its cluster through it.
const MEMORIES: [(&str, &str); 4] = [
    ("User's bicycle", "The user rides a red bicycle to work."),
    (
        "User's dog Biscuit",
        "The user's dog is a beagle named Biscuit.",
    ),
    ("Biscuit the dog", "The user's dog Biscuit is a beagle."),
    (
        "User's beagle Biscuit",
        "The user's dog is a beagle named Biscuit. Biscuit sleeps a lot.",
    ),
];

const MERGED_NAME: &str = "User's dog Biscuit, the beagle";
const MERGED_TEXT: &str = "The user's dog is a beagle named Biscuit who sleeps a lot.";

fn home_for(server: &MockServer) -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "chat_model: testkit-model\nchat_model_api_base: {}\nmemories_between_consolidation: 4\n",
            server.base_url()
        ),
    )
    .unwrap();
    home
}

fn call(home: &TestHome, tool: &str, args: &Value) -> Output {
    home.cmd()
        .env("ELROY_NOW", NOW)
        .args(["tools", "call", tool, "--args", &args.to_string()])
        .output()
        .unwrap()
}

fn is_structured(r: &RecordedRequest) -> bool {
    r.body.get("response_format").is_some()
}

/// Memories 1–3 by direct calls, then a turn whose model calls `create_memory` for memory 4.
fn three_calls_and_a_turn(server: &MockServer, home: &TestHome) {
    for (name, text) in &MEMORIES[..3] {
        let out = call(home, "create_memory", &json!({"name": name, "text": text}));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(
        server.requests().is_empty(),
        "no consolidation before the 4th op-tracked creation"
    );
    let (name, text) = MEMORIES[3];
    server
        .push(Reply::tool_call(
            "create_memory",
            json!({"name": name, "text": text}).to_string(),
        ))
        .push(Reply::text("Noted: Biscuit sleeps a lot."));
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .args(["message", "My beagle Biscuit sleeps a lot."])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Noted: Biscuit sleeps a lot.");
}

fn memory_files(home: &TestHome, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.home().join(dir))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The recall metadata ids of the tool messages in the active context, and the reason of the
/// newest context version.
fn pinned_and_last_reason(home: &TestHome) -> (Vec<i64>, String) {
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    let mut st = db
        .prepare(
            "SELECT m.content FROM context_entries e JOIN messages m ON m.id = e.message_id
             WHERE e.removed_version IS NULL AND m.role = 'tool' ORDER BY e.ord",
        )
        .unwrap();
    let contents: Vec<Option<String>> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut ids = Vec::new();
    for content in contents.into_iter().flatten() {
        if let Ok(payload) = serde_json::from_str::<Value>(&content)
            && let Some(items) = payload["recall_metadata"].as_array()
        {
            ids.extend(
                items
                    .iter()
                    .filter(|m| m["memory_type"] == "Memory")
                    .filter_map(|m| m["memory_id"].as_i64()),
            );
        }
    }
    let reason: String = db
        .query_row(
            "SELECT reason FROM context_versions ORDER BY version DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (ids, reason)
}

#[test]
fn similar_memories_are_merged_after_the_turn() {
    let server = MockServer::start();
    server.when(
        is_structured,
        Reply::text(
            json!({
                "reasoning": "All three describe the same dog.",
                "memories": [{"name": MERGED_NAME, "text": MERGED_TEXT}]
            })
            .to_string(),
        ),
    );
    let home = home_for(&server);
    three_calls_and_a_turn(&server, &home);

    // One structured request, after the two turn requests.
    let chats = server.chat_requests();
    let structured: Vec<&RecordedRequest> = chats.iter().filter(|r| is_structured(r)).collect();
    assert_eq!(structured.len(), 1, "{chats:#?}");
    let request = structured[0];
    assert!(!request.is_stream());
    assert!(!request.has_tools());
    assert_eq!(
        request.body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "result", "schema": {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string"},
                "memories": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
                    "required": ["name", "text"],
                    "additionalProperties": false
                }}
            },
            "required": ["reasoning", "memories"],
            "additionalProperties": false
        }}})
    );
    assert_eq!(
        request.system_prompt().unwrap(),
        "These memories overlap. Rewrite them as one memory, or as a few memories if they cover \
         clearly different topics. Keep every fact that is still true, prefer the newest \
         information when they disagree, write dates as YYYY-MM-DD, give each memory a specific \
         single-topic title, and keep each under 300 words. The current time is \
         2026-11-30 10:00:00+00:00, or 2026-11-30 10:00:00 UTC."
    );
    assert_eq!(
        request.last_user_text().unwrap(),
        "#Memory Cluster:\n\
         ## Memory Title:\nUser's dog Biscuit\nThe user's dog is a beagle named Biscuit.\n\
         ## Memory Title:\nBiscuit the dog\nThe user's dog Biscuit is a beagle.\n\
         ## Memory Title:\nUser's beagle Biscuit\nThe user's dog is a beagle named Biscuit. Biscuit sleeps a lot."
    );

    // The new memory (id 5) and the archived members; the bicycle is untouched.
    assert_eq!(
        memory_files(&home, "memories"),
        ["User_s_bicycle.md", "User_s_dog_Biscuit__the_beagle.md"]
    );
    assert_eq!(
        std::fs::read_to_string(
            home.home()
                .join("memories/User_s_dog_Biscuit__the_beagle.md")
        )
        .unwrap(),
        format!("---\nid: 5\n---\n\n{MERGED_TEXT}")
    );
    assert_eq!(
        memory_files(&home, "memories/archive"),
        [
            "Biscuit_the_dog.md",
            "User_s_beagle_Biscuit.md",
            "User_s_dog_Biscuit.md"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(home.home().join("memories/archive/Biscuit_the_dog.md")).unwrap(),
        "---\nid: 3\n---\n\nThe user's dog Biscuit is a beagle."
    );

    // The members are no longer active; the merged memory is.
    let out = call(
        &home,
        "print_memory",
        &json!({"memory_name": "Biscuit the dog"}),
    );
    assert_eq!(
        stdout(&out).trim_end(),
        "Memory 'Biscuit the dog' not found for the current user."
    );
    let out = call(&home, "print_memory", &json!({"memory_name": MERGED_NAME}));
    assert_eq!(
        stdout(&out).trim_end(),
        format!("#{MERGED_NAME}\n\n{MERGED_TEXT}")
    );

    // Its sources are the three members, in id order (Memory sources, resolved in the archive).
    let source = |index: i64| {
        let out = call(
            &home,
            "get_source_content_for_memory",
            &json!({"memory_name": MERGED_NAME, "index": index}),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).trim_end().to_owned()
    };
    assert_eq!(
        source(0),
        format!(
            "# Source content for memory: {MERGED_NAME} (0 / 2)\n\n#User's dog Biscuit\n\nThe user's dog is a beagle named Biscuit."
        )
    );
    assert_eq!(
        source(2),
        format!(
            "# Source content for memory: {MERGED_NAME} (2 / 2)\n\n#User's beagle Biscuit\n\nThe user's dog is a beagle named Biscuit. Biscuit sleeps a lot."
        )
    );

    // The files are one versioned-home commit, after the turn's create_memory commit.
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .arg("history")
        .output()
        .unwrap();
    let history = stdout(&out);
    let newest: Vec<&str> = history.lines().take(2).collect();
    assert!(
        newest[0].ends_with(
            " 2026-11-30 10:00:00 consolidation: memories/Biscuit_the_dog.md, \
             memories/User_s_beagle_Biscuit.md, memories/User_s_dog_Biscuit.md and 4 more"
        ),
        "{history}"
    );
    assert!(
        newest[1].ends_with("create_memory: memories/User_s_beagle_Biscuit.md"),
        "{history}"
    );

    // The members were unpinned (the last version, reason `unpin`); the merged memory is not
    // pinned; the bicycle's pin from its create_memory call stays.
    let (pinned, reason) = pinned_and_last_reason(&home);
    assert_eq!(reason, "unpin");
    assert_eq!(pinned, vec![1]);

    // `elroy undo` reverts the consolidation: the members are back and active, the merge gone.
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .arg("undo")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = call(
        &home,
        "print_memory",
        &json!({"memory_name": "Biscuit the dog"}),
    );
    assert_eq!(
        stdout(&out).trim_end(),
        "#Biscuit the dog\n\nThe user's dog Biscuit is a beagle."
    );
    let out = call(&home, "print_memory", &json!({"memory_name": MERGED_NAME}));
    assert_eq!(
        stdout(&out).trim_end(),
        format!("Memory '{MERGED_NAME}' not found for the current user.")
    );
}

#[test]
fn a_failed_merge_call_leaves_the_cluster_untouched() {
    let server = MockServer::start();
    // Not the schema: one retry, then the cluster is left alone.
    server.when(is_structured, Reply::text("I would rather not."));
    let home = home_for(&server);
    three_calls_and_a_turn(&server, &home);
    let structured = server
        .chat_requests()
        .into_iter()
        .filter(is_structured)
        .count();
    assert_eq!(structured, 2);
    assert_eq!(
        memory_files(&home, "memories"),
        [
            "Biscuit_the_dog.md",
            "User_s_beagle_Biscuit.md",
            "User_s_bicycle.md",
            "User_s_dog_Biscuit.md"
        ]
    );
    assert!(!home.home().join("memories/archive").exists());
    let out = call(
        &home,
        "print_memory",
        &json!({"memory_name": "Biscuit the dog"}),
    );
    assert_eq!(
        stdout(&out).trim_end(),
        "#Biscuit the dog\n\nThe user's dog Biscuit is a beagle."
    );
    let (pinned, reason) = pinned_and_last_reason(&home);
    assert_ne!(reason, "unpin");
    assert_eq!(pinned, vec![1, 2, 3, 4]);
}

/// The embedding request's first input.
fn embedding_input(r: &RecordedRequest) -> String {
    match r.body.get("input") {
        Some(Value::Array(items)) => items
            .first()
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

#[test]
fn with_an_embedding_model_the_stored_embeddings_decide_the_clusters() {
    let server = MockServer::start();
    // Texts without a word in common (TF-IDF would find no cluster), embedded as unit vectors:
    // the three "cat" memories within 10 degrees of each other, the fourth far away.
    let texts = [
        ("Tea", "Prefers oolong.", 90.0_f64),
        ("Cat one", "Whiskers adores sardines.", 0.0),
        ("Cat two", "Feline enjoys tuna daily.", 5.0),
        ("Cat three", "Kitty naps constantly.", 10.0),
    ];
    for (name, _, degrees) in texts {
        let marker = format!("#{name}\n");
        let r = degrees.to_radians();
        server.when(
            move |req| req.is_embeddings() && embedding_input(req).starts_with(&marker),
            Reply::Embedding(vec![r.cos() as f32, r.sin() as f32]),
        );
    }
    server.when(
        is_structured,
        Reply::text(
            json!({"reasoning": "one cat", "memories": [{"name": "The cat", "text": "A cat."}]})
                .to_string(),
        ),
    );
    let home = home_for(&server);
    let config = home.home().join("elroy.conf.yaml");
    let mut yaml = std::fs::read_to_string(&config).unwrap();
    yaml.push_str(&format!(
        "embedding_model: testkit-embed\nembedding_model_api_base: {}\n",
        server.base_url()
    ));
    std::fs::write(&config, yaml).unwrap();
    for (name, text, _) in &texts[..3] {
        let out = call(&home, "create_memory", &json!({"name": name, "text": text}));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let (name, text, _) = texts[3];
    server
        .push(Reply::tool_call(
            "create_memory",
            json!({"name": name, "text": text}).to_string(),
        ))
        .push(Reply::text("Noted."));
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .args(["message", "Kitty naps constantly."])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let structured: Vec<RecordedRequest> = server
        .chat_requests()
        .into_iter()
        .filter(is_structured)
        .collect();
    assert_eq!(structured.len(), 1);
    assert_eq!(
        structured[0].last_user_text().unwrap(),
        "#Memory Cluster:\n## Memory Title:\nCat one\nWhiskers adores sardines.\n\
         ## Memory Title:\nCat two\nFeline enjoys tuna daily.\n\
         ## Memory Title:\nCat three\nKitty naps constantly."
    );
    assert_eq!(memory_files(&home, "memories"), ["Tea.md", "The_cat.md"]);
}
