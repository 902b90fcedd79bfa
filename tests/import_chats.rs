#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `elroy import SOURCE PATH` end to end, on fixtures written here from each source's documented
//! format (`docs/import.md`): a long conversation with one fact said once in its middle, found by
//! `examine_memories` with its original date; ChatGPT's abandoned branch left out; re-import and
//! a grown file; `--dry-run`; `elroy undo`; a broken line and a truncated export.

use crate::common;

use std::path::{Path, PathBuf};

use common::{TestHome, stderr, stdout};
use serde_json::{Value, json};

/// The fact said once, in the middle of a long conversation, and a question for it.
pub(crate) const FACT: &str =
    "By the way, my sister Beatrice keeps three beehives on the roof of her flat in Lisbon.";
const QUESTION: &str = r#"{"question":"Where does my sister keep her beehives?"}"#;
/// The date the conversation took place (the import runs at `ELROY_NOW`, much later).
pub(crate) const DAY: &str = "2024-03-05";
pub(crate) const START: i64 = 1_709_647_200; // 2024-03-05T14:00:00Z
const NOW: &str = "2026-06-01T09:00:00Z";

const TOPICS: [&str; 12] = [
    "sourdough starter that smells of acetone",
    "Rust borrow checker errors in a tree walker",
    "a cheap flight from Porto to Berlin in May",
    "repotting a fiddle leaf fig that drops leaves",
    "my sister's birthday present, maybe a book",
    "a budget spreadsheet for the kitchen renovation",
    "how to keep a cast iron pan from rusting",
    "the difference between TCP keepalive and HTTP keep-alive",
    "training for a half marathon in twelve weeks",
    "a polite email declining a conference invitation",
    "storing winter tyres in a small garage",
    "which board games work for four players",
];

/// Forty exchanges (a conversation takes the first 30, a grown one more): the fact in the user's 15th message, filler around it.
fn script() -> Vec<(String, String)> {
    (0..40)
        .map(|i| {
            if i == 14 {
                return (
                    FACT.to_owned(),
                    "That sounds lovely; rooftop hives do well with a water source nearby.".to_owned(),
                );
            }
            let topic = TOPICS[i % TOPICS.len()];
            (
                format!("Question {i}: can you help me with {topic}? I tried a few things already."),
                format!(
                    "Sure. For {topic}, start small and check one thing at a time. Step {i} is to write down what you saw, then change one variable, wait, and compare. Many people keep notes; it makes the next attempt easier."
                ),
            )
        })
        .collect()
}

fn at(i: usize) -> i64 {
    START + 120 * i as i64
}

pub(crate) fn iso(secs: i64) -> String {
    jiff::Timestamp::from_second(secs).unwrap().to_string()
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

pub(crate) fn import(home: &TestHome, args: &[&str]) -> String {
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .arg("import")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    stdout(&out)
}

fn examine(home: &TestHome, question: &str) -> String {
    let out = home
        .cmd()
        .env("ELROY_NOW", NOW)
        .args(["tools", "call", "examine_memories", "--args", question])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

pub(crate) fn memory_files(home: &TestHome) -> usize {
    std::fs::read_dir(home.home().join("memories"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
                .count()
        })
        .unwrap_or(0)
}

/// The fact is among the memories `examine_memories` returns, with the day it was said.
/// Every memory file's text, joined (in no particular order).
fn memory_texts(home: &TestHome) -> String {
    std::fs::read_dir(home.home().join("memories"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect()
}

fn assert_fact_found(home: &TestHome, tool: &str) {
    let found = examine(home, QUESTION);
    let section = found
        .split("## Memory: ")
        .find(|s| s.contains("Beatrice"))
        .unwrap_or_else(|| panic!("{tool}: the fact is not among the top 5:\n{found}"));
    assert!(section.contains(DAY), "{tool}: not dated {DAY}:\n{section}");
    assert!(
        section.contains(&format!("Imported from {tool}")),
        "{section}"
    );
}

/// A ChatGPT export: conversation trees with `current_node`. The first conversation has an
/// edited message: the abandoned branch says the colour is vermilion, the active one teal.
pub(crate) fn chatgpt_export(exchanges: usize, second: bool) -> String {
    let mut mapping = serde_json::Map::new();
    let node = |id: &str, parent: Option<&str>, role: &str, text: &str, t: i64, hidden: bool| {
        json!({"id": id, "parent": parent, "children": [],
               "message": {"id": id, "author": {"role": role, "name": null},
                           "create_time": t as f64 + 0.25, "recipient": "all",
                           "content": {"content_type": "text", "parts": [text]},
                           "metadata": {"is_visually_hidden_from_conversation": hidden}}})
    };
    mapping.insert(
        "root".into(),
        json!({"id": "root", "parent": null, "children": ["sys"], "message": null}),
    );
    mapping.insert(
        "sys".into(),
        node(
            "sys",
            Some("root"),
            "system",
            "You are ChatGPT. Secret system words: quokka.",
            START,
            true,
        ),
    );
    let mut parent = "sys".to_owned();
    for (i, (user, reply)) in script().into_iter().take(exchanges).enumerate() {
        let (u, a) = (format!("u{i}"), format!("a{i}"));
        if i == 3 {
            // The abandoned edit of message 3, with its own reply.
            mapping.insert(
                "u3old".into(),
                node(
                    "u3old",
                    Some(&parent),
                    "user",
                    "My favourite colour is vermilion.",
                    at(i),
                    false,
                ),
            );
            mapping.insert(
                "a3old".into(),
                node(
                    "a3old",
                    Some("u3old"),
                    "assistant",
                    "Vermilion is a bold choice.",
                    at(i),
                    false,
                ),
            );
            mapping.insert(
                u.clone(),
                node(
                    &u,
                    Some(&parent),
                    "user",
                    "My favourite colour is teal.",
                    at(i),
                    false,
                ),
            );
        } else {
            mapping.insert(
                u.clone(),
                node(&u, Some(&parent), "user", &user, at(i), false),
            );
        }
        mapping.insert(
            a.clone(),
            node(&a, Some(&u), "assistant", &reply, at(i) + 30, false),
        );
        if i == 5 {
            // A tool call and its result: one line each.
            let mut call = node(
                "call5",
                Some(&a),
                "assistant",
                "search('hives')",
                at(i) + 40,
                false,
            );
            call["message"]["recipient"] = json!("web");
            call["message"]["content"] =
                json!({"content_type": "code", "language": "unknown", "text": "search('hives')"});
            mapping.insert("call5".into(), call);
            let mut result = node(
                "res5",
                Some("call5"),
                "tool",
                "raw page text",
                at(i) + 45,
                false,
            );
            result["message"]["author"]["name"] = json!("web");
            mapping.insert("res5".into(), result);
            parent = "res5".into();
            continue;
        }
        parent = a;
    }
    let mut convs = vec![
        json!({"title": "Everyday questions", "create_time": START as f64,
        "update_time": at(exchanges) as f64, "conversation_id": "conv-1", "id": "conv-1",
        "current_node": parent, "mapping": Value::Object(mapping)}),
    ];
    if second {
        convs.push(json!({"title": "Packing list", "create_time": at(40) as f64, "conversation_id": "conv-2",
            "current_node": "p1", "mapping": {
                "p0": {"id": "p0", "parent": null, "message": {"author": {"role": "user"}, "create_time": at(40) as f64,
                       "content": {"content_type": "text", "parts": ["What should I pack for Iceland in October?"]}}},
                "p1": {"id": "p1", "parent": "p0", "message": {"author": {"role": "assistant"}, "create_time": at(41) as f64,
                       "content": {"content_type": "text", "parts": ["Layers, a waterproof shell and good boots."]}}}}}));
    }
    // The same conversation twice in one export counts once.
    convs.push(convs[0].clone());
    serde_json::to_string_pretty(&Value::Array(convs)).unwrap()
}

#[test]
fn chatgpt_active_branch_dated_found_and_idempotent() {
    let home = TestHome::new();
    let dir = home.root().join("export");
    let file = write(&dir, "conversations.json", &chatgpt_export(30, false));
    let path = file.to_str().unwrap();

    let dry = import(&home, &["chatgpt", path, "--dry-run"]);
    assert!(dry.contains("would import"), "{dry}");
    assert_eq!(memory_files(&home), 0, "--dry-run writes nothing");

    let first = import(&home, &["chatgpt", path]);
    assert!(first.contains("ChatGPT: imported"), "{first}");
    let written = memory_files(&home);
    assert!(
        written > 3,
        "a long conversation is several memories: {first}"
    );
    assert_fact_found(&home, "ChatGPT");

    let colour = examine(&home, r#"{"question":"What is my favourite colour?"}"#);
    assert!(colour.contains("teal"), "{colour}");
    assert!(
        !colour.contains("vermilion") && !colour.contains("Vermilion"),
        "abandoned branch: {colour}"
    );
    let all = memory_texts(&home);
    assert!(!all.contains("quokka"), "hidden system message imported");
    assert!(
        all.contains("[tool: web]") && all.contains("[tool result: web]"),
        "{all}"
    );
    assert!(!all.contains("raw page text"));

    // Re-import: nothing new.
    let again = import(&home, &["chatgpt", path]);
    assert!(again.contains("imported 0 memories"), "{again}");
    assert_eq!(memory_files(&home), written);

    // A newer export: the conversation grew by four exchanges and a second one was added.
    let file = write(&dir, "conversations.json", &chatgpt_export(34, true));
    let grown = import(&home, &["chatgpt", file.to_str().unwrap()]);
    assert!(
        grown.contains("(5 exchanges) from 2 of"),
        "4 new exchanges + 1: {grown}"
    );
    let after = memory_files(&home);
    assert!(
        after > written && after <= written + 3,
        "{written} → {after}: {grown}"
    );

    // One history entry per import; undo removes the last one.
    let history = stdout(&home.cmd().arg("history").output().unwrap());
    assert_eq!(history.matches("import chatgpt:").count(), 2, "{history}");
    let undo = home.cmd().arg("undo").output().unwrap();
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert_eq!(memory_files(&home), written);
    let undo = home.cmd().arg("undo").output().unwrap();
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert_eq!(memory_files(&home), 0);
    let gone = examine(&home, QUESTION);
    assert!(!gone.contains("Beatrice"), "{gone}");
    // Undone exchanges can be imported again.
    let back = import(&home, &["chatgpt", path]);
    assert!(!back.contains("imported 0 memories"), "{back}");
}

#[test]
fn chatgpt_truncated_export_keeps_whole_conversations_and_names_the_broken_one() {
    let home = TestHome::new();
    let text = chatgpt_export(30, true);
    // Cut inside the third conversation (the duplicate of the first).
    let cut = text.rfind("\"Everyday questions\"").unwrap() + 40;
    let file = write(home.root(), "conversations.json", &text[..cut]);
    let out = import(&home, &["chatgpt", file.to_str().unwrap()]);
    assert!(out.contains("from 2 of 2 conversations"), "{out}");
    assert!(
        out.contains("skipped:") && out.contains("conversation 3 of the file"),
        "{out}"
    );
    assert!(
        out.contains("conversations.json:"),
        "file and line named: {out}"
    );
    assert_fact_found(&home, "ChatGPT");

    // A second kind of bad input: a conversation without `current_node` is skipped whole.
    let home = TestHome::new();
    let mut convs: Value = serde_json::from_str(&chatgpt_export(30, true)).unwrap();
    convs[1].as_object_mut().unwrap().remove("current_node");
    let file = write(home.root(), "c.json", &convs.to_string());
    let out = import(&home, &["chatgpt", file.to_str().unwrap()]);
    assert!(
        out.contains("\"Packing list\"") && out.contains("current_node"),
        "{out}"
    );
    assert_fact_found(&home, "ChatGPT");
}

fn claude_export() -> String {
    let mut messages = Vec::new();
    for (i, (user, reply)) in script().into_iter().take(30).enumerate() {
        messages.push(json!({"uuid": format!("h{i}"), "sender": "human", "text": user,
            "content": [{"type": "text", "text": user}], "created_at": iso(at(i)),
            "parent_message_uuid": if i == 0 { "00000000-0000-4000-8000-000000000000".to_owned() } else { format!("a{}", i - 1) }}));
        let mut content = vec![json!({"type": "text", "text": reply})];
        if i == 2 {
            content.push(
                json!({"type": "tool_use", "name": "web_search", "input": {"query": "fig leaves"}}),
            );
        }
        messages.push(json!({"uuid": format!("a{i}"), "sender": "assistant", "text": reply, "content": content,
            "created_at": iso(at(i) + 30), "parent_message_uuid": format!("h{i}")}));
    }
    // A retry left behind: a branch from h10 that is not on the path to the last message.
    messages.insert(
        22,
        json!({"uuid": "retry", "sender": "assistant", "text": "My favourite colour is vermilion.",
        "created_at": iso(at(10) + 40), "parent_message_uuid": "h10"}),
    );
    let conv = json!({"uuid": "c-1", "name": "Everyday questions", "created_at": iso(START), "chat_messages": messages});
    Value::Array(vec![
        conv.clone(),
        json!({"uuid": "c-2", "name": "Broken"}),
        conv,
    ])
    .to_string()
}

#[test]
fn claude_export_found_branch_and_broken_conversation() {
    let home = TestHome::new();
    let file = write(home.root(), "data/conversations.json", &claude_export());
    let out = import(&home, &["claude", file.to_str().unwrap()]);
    assert!(
        out.contains("\"Broken\"") && out.contains("chat_messages"),
        "{out}"
    );
    assert_fact_found(&home, "Claude");
    let all = memory_texts(&home);
    assert!(all.contains("[tool: web_search fig leaves]"), "{all}");
    assert!(!all.contains("vermilion"), "retry branch imported");
    let again = import(&home, &["claude", file.to_str().unwrap()]);
    assert!(again.contains("imported 0 memories"), "{again}");
}

fn claude_code_session(n: usize, sid: &str) -> Vec<Value> {
    let mut out =
        vec![json!({"type": "summary", "summary": "Home projects chat", "leafUuid": "x"})];
    let mut parent: Option<String> = None;
    for (i, (user, reply)) in script().into_iter().take(n).enumerate() {
        let base = json!({"sessionId": sid, "cwd": "/work/garden", "version": "1.0.0", "isSidechain": false});
        let mut u = base.clone();
        u["type"] = json!("user");
        u["uuid"] = json!(format!("{sid}u{i}"));
        u["parentUuid"] = json!(parent);
        u["timestamp"] = json!(iso(at(i)));
        u["message"] = json!({"role": "user", "content": user});
        out.push(u);
        let mut a = base.clone();
        a["type"] = json!("assistant");
        a["uuid"] = json!(format!("{sid}a{i}"));
        a["timestamp"] = json!(iso(at(i) + 30));
        let mut content = vec![json!({"type": "text", "text": reply})];
        if i == 4 {
            content.push(json!({"type": "tool_use", "id": "t4", "name": "Edit", "input": {"file_path": "/work/garden/plan.md", "old_string": "SECRET FILE BODY", "new_string": "x"}}));
        }
        a["message"] = json!({"role": "assistant", "content": content});
        out.push(a.clone());
        if i == 4 {
            let mut r = base.clone();
            r["type"] = json!("user");
            r["uuid"] = json!("r4");
            r["timestamp"] = json!(iso(at(i) + 31));
            r["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t4", "content": "SECRET FILE BODY"}]});
            out.push(r);
            // A duplicate record (as a resumed session repeats its lines) and a sidechain.
            out.push(a);
            let mut side = base.clone();
            side["type"] = json!("user");
            side["isSidechain"] = json!(true);
            side["uuid"] = json!("side");
            side["message"] =
                json!({"role": "user", "content": "My favourite colour is vermilion."});
            out.push(side);
        }
        parent = Some(format!("{sid}a{i}"));
    }
    out
}

#[test]
fn claude_code_sessions_condense_tools_and_skip_broken_ones() {
    let home = TestHome::new();
    let projects = home.root().join(".claude/projects");
    let session = write(
        &projects,
        "-work-garden/s-1.jsonl",
        &lines(&claude_code_session(30, "s-1")),
    );
    let good = claude_code_session(3, "s-2");
    let broken = format!("{}{{\"type\": \"user\", \"uuid\": \"zz\"\n", lines(&good));
    write(&projects, "-work-garden/s-2.jsonl", &broken);
    let broken_line = format!("s-2.jsonl:{}", good.len() + 1);
    // The default folder is ~/.claude/projects.
    let out = import(&home, &["claude-code"]);
    assert!(
        out.contains(&broken_line) && out.contains("session s-2"),
        "file, line, session: {out}"
    );
    assert!(out.contains("from 1 of 1 conversations"), "{out}");
    assert_fact_found(&home, "Claude Code");
    let all = memory_texts(&home);
    assert!(all.contains("[tool: Edit /work/garden/plan.md]"), "{all}");
    assert!(
        all.contains("[tool result: Edit /work/garden/plan.md]"),
        "{all}"
    );
    assert!(
        !all.contains("SECRET FILE BODY") && !all.contains("vermilion"),
        "{all}"
    );
    assert_eq!(
        all.matches("Step 4 is").count(),
        1,
        "duplicate line imported twice"
    );

    // The session grows: only the new exchanges are written; --project filters by cwd.
    let before = memory_files(&home);
    let mut grown = std::fs::read_to_string(&session).unwrap();
    grown.push_str(&lines(&[json!({"type": "user", "sessionId": "s-1", "cwd": "/work/garden", "uuid": "late",
        "timestamp": iso(at(50)), "message": {"role": "user", "content": "Remind me to order seed potatoes."}})]));
    std::fs::write(&session, grown).unwrap();
    let elsewhere = import(&home, &["claude-code", "--project", "/work/other"]);
    assert!(elsewhere.contains("imported 0 memories"), "{elsewhere}");
    let out = import(&home, &["claude-code", "--project", "/work/garden"]);
    assert!(out.contains("imported 1 memories (1 exchanges)"), "{out}");
    assert_eq!(memory_files(&home), before + 1);
}

fn codex_rollout(n: usize) -> Vec<Value> {
    let mut out = vec![json!({"timestamp": iso(START), "type": "session_meta",
        "payload": {"id": "cx-1", "timestamp": iso(START), "cwd": "/work/garden", "cli_version": "0.40.0"}})];
    out.push(json!({"timestamp": iso(START), "type": "response_item", "payload": {"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/work/garden</cwd>\n</environment_context>"}]}}));
    for (i, (user, reply)) in script().into_iter().take(n).enumerate() {
        out.push(json!({"timestamp": iso(at(i)), "type": "response_item", "payload": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": user}]}}));
        out.push(json!({"timestamp": iso(at(i)), "type": "event_msg", "payload": {"type": "user_message", "message": user}}));
        if i == 6 {
            out.push(json!({"timestamp": iso(at(i) + 10), "type": "response_item", "payload": {"type": "function_call",
                "name": "shell", "arguments": "{\"command\":[\"cat\",\"notes.txt\"]}", "call_id": "c6"}}));
            out.push(json!({"timestamp": iso(at(i) + 11), "type": "response_item", "payload": {"type": "function_call_output",
                "call_id": "c6", "output": "My favourite colour is vermilion."}}));
        }
        out.push(json!({"timestamp": iso(at(i) + 30), "type": "response_item", "payload": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": reply}]}}));
        out.push(json!({"timestamp": iso(at(i) + 30), "type": "event_msg", "payload": {"type": "agent_message", "message": reply}}));
    }
    out
}

#[test]
fn codex_response_items_only_and_grown_file() {
    let home = TestHome::new();
    let sessions = home.root().join(".codex/sessions");
    let path = write(
        &sessions,
        "2024/03/05/rollout-2024-03-05T14-00-00-cx-1.jsonl",
        &lines(&codex_rollout(20)),
    );
    write(
        &sessions,
        "2024/03/05/rollout-2024-03-05T15-00-00-cx-2.jsonl",
        "{\"timestamp\": \"2024-03-05T15:00:00Z\", \"type\": \"session_meta\"\n",
    );
    let out = import(&home, &["codex"]);
    assert!(out.contains("cx-2.jsonl:1"), "{out}");
    assert_fact_found(&home, "Codex");
    let all = memory_texts(&home);
    assert_eq!(
        all.matches(FACT).count(),
        1,
        "event_msg repeats imported: {all}"
    );
    assert!(
        !all.contains("environment_context") && !all.contains("vermilion"),
        "{all}"
    );

    let before = memory_files(&home);
    std::fs::write(&path, lines(&codex_rollout(30))).unwrap();
    let out = import(&home, &["codex", path.to_str().unwrap()]);
    assert!(out.contains("(10 exchanges)"), "{out}");
    assert!(memory_files(&home) > before);
    let again = import(&home, &["codex"]);
    assert!(again.contains("imported 0 memories"), "{again}");
}

fn gemini_messages() -> Vec<Value> {
    let mut out = Vec::new();
    for (i, (user, reply)) in script().into_iter().take(30).enumerate() {
        out.push(json!({"id": format!("u{i}"), "timestamp": iso(at(i)), "type": "user", "content": user}));
        let mut g = json!({"id": format!("g{i}"), "timestamp": iso(at(i) + 30), "type": "gemini", "content": reply,
            "thoughts": [{"subject": "colour", "description": "My favourite colour is vermilion."}]});
        if i == 8 {
            g["toolCalls"] = json!([{"id": "tc", "name": "read_file", "args": {"absolute_path": "/work/garden/todo.md"}, "status": "success"}]);
        }
        out.push(g);
    }
    out
}

#[test]
fn gemini_json_and_jsonl_deduplicated_by_id() {
    let home = TestHome::new();
    let chats = home.root().join(".gemini/tmp/abc123/chats");
    let mut messages = gemini_messages();
    // A record written twice (the older format rewrites the file): the same id counts once.
    messages.insert(10, messages[9].clone());
    write(
        &chats,
        "session-2024-03-05T14-00-aaaa.json",
        &json!({"sessionId": "gs-1", "projectHash": "abc123",
        "startTime": iso(START), "lastUpdated": iso(at(30)), "messages": messages})
        .to_string(),
    );
    // The newer format: metadata, messages, an update of one by id, a $set batch and a rewind.
    let mut records = vec![
        json!({"type": "session_metadata", "sessionId": "gs-2", "projectHash": "abc123", "startTime": iso(at(60))}),
    ];
    records.push(json!({"id": "x0", "timestamp": iso(at(60)), "type": "user", "content": [{"text": "<session_context>tree</session_context>"}]}));
    records.push(json!({"id": "x1", "timestamp": iso(at(61)), "type": "user", "content": [{"text": "Plan a picnic menu."}]}));
    records.push(json!({"id": "x2", "timestamp": iso(at(61)), "type": "gemini", "content": [{"text": "Draft"}]}));
    records.push(json!({"type": "message_update", "id": "x2", "content": [{"text": "Sandwiches, fruit and lemonade."}]}));
    records.push(json!({"id": "x3", "timestamp": iso(at(62)), "type": "user", "content": "My favourite colour is vermilion."}));
    records.push(json!({"$rewindTo": "x3"}));
    records.push(json!({"$set": {"summary": "Picnic planning"}}));
    write(
        &chats,
        "session-2024-03-05T16-00-bbbb.jsonl",
        &lines(&records),
    );
    write(
        &chats,
        "session-2024-03-05T17-00-cccc.jsonl",
        "{\"type\": \"session_metadata\"}\nnot json\n",
    );

    let out = import(&home, &["gemini"]);
    assert!(out.contains("cccc.jsonl:2"), "{out}");
    assert!(out.contains("from 2 of 2 conversations"), "{out}");
    assert_fact_found(&home, "Gemini CLI");
    let all = memory_texts(&home);
    assert_eq!(
        all.matches("Step 4 is").count(),
        1,
        "duplicate id imported twice"
    );
    assert!(
        all.contains("Sandwiches, fruit and lemonade.") && !all.contains("Draft"),
        "{all}"
    );
    assert!(
        all.contains("Picnic planning") && all.contains("[tool: read_file /work/garden/todo.md]"),
        "{all}"
    );
    assert!(
        !all.contains("vermilion") && !all.contains("session_context"),
        "{all}"
    );
    let again = import(&home, &["gemini"]);
    assert!(again.contains("imported 0 memories"), "{again}");
}

#[test]
fn since_and_exclude_and_the_elroy_alias() {
    let home = TestHome::new();
    let file = write(home.root(), "conversations.json", &chatgpt_export(30, true));
    let path = file.to_str().unwrap();
    let out = import(
        &home,
        &["chatgpt", path, "--exclude", "everyday*", "--dry-run"],
    );
    assert!(
        out.contains("would import 1 memories (1 exchanges) from 1 of"),
        "{out}"
    );
    // The packing conversation was 80 minutes after START; the first one ended before that.
    let out = import(
        &home,
        &[
            "chatgpt",
            path,
            "--since",
            "2024-03-05T15:15:00Z",
            "--dry-run",
        ],
    );
    assert!(out.contains("from 1 of"), "{out}");
    let out = home
        .cmd()
        .args(["import", "chatgpt", path, "--project", "/work"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("--project applies to claude-code, codex and gemini"),
        "{err}"
    );
    let out = home
        .cmd()
        .args(["import", "elroy", "/nonexistent/elroy-home"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not a directory"),
        "{}",
        stderr(&out)
    );
}
