//! Recall end to end: the real binary against elroy-testkit's loopback embeddings endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use common::{TestHome, home_with_model, stderr, stdout};
use elroy_testkit::{MockServer, RecordedRequest, Reply};
use serde_json::{Value, json};

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

/// The embedding requests for anything but a memory (a memory is embedded as `#name\n\ntext`):
/// the questions.
fn question_embeddings(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter(|r| r.is_embeddings())
        .map(embedding_input)
        .filter(|input| !input.starts_with('#'))
        .collect()
}

/// A home whose chat and embedding models are `server`, holding two memories whose files carry
/// an mtime an hour ahead: the racy-file rule (a file changed within the last two seconds may
/// change again unseen) then holds for them on every look, as it does for a memory written a
/// moment before a question.
fn home_with_racy_memories(server: &MockServer) -> TestHome {
    let home = home_with_model(
        server,
        &format!(
            "embedding_model: testkit-embed\nembedding_model_api_base: {}\n",
            server.base_url()
        ),
    );
    for (name, text) in [
        ("Biscuit the dog", "The user's dog Biscuit is a beagle."),
        ("Kyoto trip", "The user goes to Kyoto in December."),
    ] {
        let out = home.call(
            "create_memory",
            &json!({"name": name, "text": text}).to_string(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let later = SystemTime::now() + Duration::from_secs(3600);
    for entry in std::fs::read_dir(home.home().join("memories")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let file = std::fs::File::options().append(true).open(&path).unwrap();
            file.set_modified(later).unwrap();
        }
    }
    home
}

/// Issue 27 point 4: a question whose answer includes a memory written within the racy window
/// re-ran its whole search up to four times, embedding the question each time. Two inputs of the
/// kind: `examine_memories` (`search_readable`) and the automatic recall of a chat turn
/// (`search`), each with racy memories among the hits.
#[test]
fn a_question_is_embedded_once_even_when_its_memories_are_racy() {
    let server = MockServer::start();
    let home = home_with_racy_memories(&server);
    let question = "What breed is the dog Biscuit?";
    let out = home.call(
        "examine_memories",
        &json!({ "question": question }).to_string(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Biscuit the dog"), "{}", stdout(&out));
    assert_eq!(question_embeddings(&server), [question]);

    // The same two racy files, looked at again by a chat turn's automatic recall.
    let server = MockServer::start();
    let home = home_with_racy_memories(&server);
    server.push(Reply::text("A beagle."));
    let out = home
        .cmd()
        .args(["message", "Which dog breed is Biscuit?"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = question_embeddings(&server);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("Which dog breed is Biscuit?"),
        "{asked:?}"
    );
}

/// Issue 27 point 1: the built-in embedder asked for (`embedding_model: builtin`) with a model
/// directory that cannot be used gives one clear warning per process and keyword recall. Two
/// inputs of the kind: a directory that does not exist, and one whose `config.json` is not JSON
/// (a broken download).
#[test]
fn an_unusable_model_directory_warns_once_and_recall_keeps_to_keywords() {
    let models = tempfile::tempdir().unwrap();
    let corrupt = models.path().join("broken-model");
    std::fs::create_dir_all(&corrupt).unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::write(corrupt.join(file), "{not json").unwrap();
    }
    for (dir, says) in [
        (models.path().join("nowhere"), "config.json is missing"),
        (corrupt, "cannot be used: config.json"),
    ] {
        let home = TestHome::new();
        std::fs::create_dir_all(home.home()).unwrap();
        std::fs::write(
            home.home().join("elroy.conf.yaml"),
            format!(
                "embedding_model: builtin\nembedding_model_path: {}\n",
                dir.display()
            ),
        )
        .unwrap();
        let out = home.call(
            "create_memory",
            r#"{"name":"Biscuit the dog","text":"The user's dog Biscuit is a beagle."}"#,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let out = home.call("examine_memories", r#"{"question":"Is Biscuit a beagle?"}"#);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("Biscuit the dog"), "{}", stdout(&out));
        let err = stderr(&out);
        let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{err}");
        assert!(warnings[0].contains(says), "{err}");
        assert!(warnings[0].contains(&dir.display().to_string()), "{err}");
        assert!(
            warnings[0]
                .contains("recall uses keywords only (get the model with `elroy models fetch`"),
            "{err}"
        );
    }
}

/// Without an embeddings API and without a model directory asked for, an absent default model
/// directory is no error: keyword recall, no warning.
#[test]
fn without_a_model_recall_keeps_to_keywords_silently() {
    let home = TestHome::new();
    let out = home.call(
        "create_memory",
        r#"{"name":"Biscuit the dog","text":"The user's dog Biscuit is a beagle."}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = home.call("examine_memories", r#"{"question":"Is Biscuit a beagle?"}"#);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Biscuit the dog"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("warning:"), "{}", stderr(&out));
}
