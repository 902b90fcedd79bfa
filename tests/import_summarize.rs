#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `elroy import` beyond the words said: `--summarize` (one memory per conversation formed by the
//! chat model the way elroy forms its own, here the loopback mock model) and `--project` for
//! Gemini CLI sessions, whose folders name their project by a `.project_root` file or by the
//! SHA-256 of its path (`docs/import.md`).

use crate::common;
use crate::import_chats::{DAY, FACT, START, chatgpt_export, import, iso, memory_files, write};

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, Reply};
use serde_json::json;

/// SHA-256 of `/work/garden` and `/work/kitchen` (computed outside elroy): the folder names an
/// older Gemini CLI gives those projects under `~/.gemini/tmp`.
const GARDEN_SHA256: &str = "46f96ce750feca9a2834d8e4fb550398b5b21b4e5b60fb7faf90263f11f89283";
const KITCHEN_SHA256: &str = "eee4b2a3165f730db01d8b42e4177f4584b34016218613dfe12bd03f905be479";

#[test]
fn gemini_project_folders_by_project_root_file_and_by_path_hash() {
    let home = TestHome::new();
    let tmp = home.root().join(".gemini/tmp");
    let session = |folder: &str, id: &str, words: &str| {
        write(
            &tmp.join(folder).join("chats"),
            &format!("session-{id}.json"),
            &json!({"sessionId": id, "startTime": iso(START), "messages": [
                {"id": "u0", "timestamp": iso(START), "type": "user", "content": words},
                {"id": "g0", "timestamp": iso(START + 30), "type": "gemini", "content": "Noted."}]})
            .to_string(),
        );
    };
    // Newer Gemini CLI: a slug folder with the project's path in `.project_root`.
    session("garden", "g-new", "Plan the herb bed by the south wall.");
    write(&tmp.join("garden"), ".project_root", "/work/garden\n");
    session("kitchen", "k-new", "List the tiles for the kitchen floor.");
    write(&tmp.join("kitchen"), ".project_root", "/work/kitchen");
    // Older Gemini CLI: the folder is the SHA-256 of the project's path.
    session(
        GARDEN_SHA256,
        "g-old",
        "Which roses climb the garden fence?",
    );
    session(
        KITCHEN_SHA256,
        "k-old",
        "Which oven fits the kitchen niche?",
    );
    // A folder that names no project is left out by --project.
    session("unknown", "u-1", "Nothing about any project.");

    let garden = import(&home, &["gemini", "--project", "/work/garden", "--dry-run"]);
    assert!(garden.contains("from 2 of 5 conversations"), "{garden}");
    assert!(
        garden.contains("Plan the herb bed") && garden.contains("Which roses climb"),
        "{garden}"
    );
    assert!(!garden.contains("kitchen"), "{garden}");
    let kitchen = import(
        &home,
        &["gemini", "--project", "/work/kitchen/", "--dry-run"],
    );
    assert!(kitchen.contains("from 2 of 5 conversations"), "{kitchen}");
    assert!(kitchen.contains("Which oven fits"), "{kitchen}");
    // A parent folder: the sessions whose path is known and inside it; a hashed folder names
    // one path, which is not /work.
    let work = import(&home, &["gemini", "--project", "/work", "--dry-run"]);
    assert!(work.contains("from 2 of 5 conversations"), "{work}");
    assert!(
        work.contains("Plan the herb bed") && work.contains("List the tiles"),
        "{work}"
    );
}

/// `created_at` of the memory named `name`, from state.db.
fn created_at(home: &TestHome, name: &str) -> String {
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    db.query_row(
        "SELECT created_at FROM memories WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn summarize_forms_one_memory_per_conversation_with_the_chat_model() {
    let server = MockServer::start();
    server.push(Reply::text(
        "# Beatrice's rooftop beehives\nThe user's sister Beatrice keeps three beehives on her roof in Lisbon.",
    ));
    let home = common::home_with_model(&server, "");
    let file = write(
        &home.root().join("export"),
        "conversations.json",
        &chatgpt_export(30, false),
    );
    let path = file.to_str().unwrap();
    let out = import(&home, &["chatgpt", path, "--summarize"]);
    assert!(
        out.contains("summarised 1 conversations with the chat model"),
        "{out}"
    );
    // One request (the conversation is twice in the export, its second copy adds nothing),
    // with elroy's own memory-formation prompt and the conversation's words.
    let chats: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.is_chat())
        .collect();
    assert_eq!(chats.len(), 1, "{out}");
    let system = chats[0].system_prompt().unwrap_or_default();
    assert!(system.contains("You write long-term memories"), "{system}");
    let asked = chats[0].last_user_text().unwrap_or_default();
    assert!(asked.contains(FACT), "{asked}");
    assert!(
        !asked.contains("vermilion"),
        "abandoned branch sent: {asked}"
    );

    // The model's answer is a memory, headed by the conversation's source and dated when the
    // conversation took place.
    let memory = home.home().join("memories/Beatrice_s_rooftop_beehives.md");
    let text = std::fs::read_to_string(&memory).unwrap();
    assert!(
        text.contains(&format!(
            "Summarised from ChatGPT: conversation \"Everyday questions\", {DAY} 14:00 ("
        )),
        "{text}"
    );
    assert!(
        text.contains("three beehives on her roof in Lisbon"),
        "{text}"
    );
    let created = created_at(&home, "Beatrice's rooftop beehives");
    assert!(created.starts_with(DAY), "{created}");

    // Again: nothing new, no model call; the whole import was one history entry.
    let again = import(&home, &["chatgpt", path, "--summarize"]);
    assert!(again.contains("imported 0 memories"), "{again}");
    assert!(!again.contains("summar"), "{again}");
    assert_eq!(server.requests().iter().filter(|r| r.is_chat()).count(), 1);
    let history = stdout(&home.cmd().arg("history").output().unwrap());
    assert_eq!(history.matches("import chatgpt:").count(), 1, "{history}");
    let undo = home.cmd().arg("undo").output().unwrap();
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert!(!memory.exists());
    assert_eq!(memory_files(&home), 0);
}

#[test]
fn summarize_without_a_chat_model_fails_before_reading() {
    let home = TestHome::new();
    let file = write(
        home.root(),
        "conversations.json",
        &chatgpt_export(30, false),
    );
    let out = home
        .cmd()
        .args(["import", "chatgpt", file.to_str().unwrap(), "--summarize"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("--summarize needs a chat model"), "{err}");
    assert!(
        err.contains("chat_model"),
        "names how to configure one: {err}"
    );
    assert_eq!(memory_files(&home), 0);
    // A second source of the same kind: the agent sessions fail the same way.
    let out = home
        .cmd()
        .args([
            "import",
            "codex",
            home.root().to_str().unwrap(),
            "--summarize",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--summarize needs a chat model"));
    // An Elroy home has no conversations to summarise: refused, not ignored.
    let out = home
        .cmd()
        .args([
            "import",
            "elroy",
            home.root().to_str().unwrap(),
            "--summarize",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--summarize applies to chat histories"),
        "{}",
        stderr(&out)
    );
}
