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

/// A question whose answer includes a memory written within the racy window
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

/// The built-in embedder asked for (`embedding_model: builtin`) with a model
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

/// Switching models re-embeds in the background. A home whose memories were embedded
/// with `testkit-embed` is opened by `elroy chat` with `embedding_model: testkit-embed-y`: the
/// REPL says on stderr that it embeds them in the background, a turn answers meanwhile, and every
/// memory gets a vector of the new model (one request each) while the vectors of the old one
/// stay; then `elroy models embed` does the same for a third model in the foreground. (That
/// searches do not wait for it is `elroy-runtime`'s
/// `switching_models_re_embeds_in_the_background_without_blocking_searches`.)
#[test]
fn switching_the_embedding_model_re_embeds_in_a_session_s_background() {
    use std::io::{BufRead, Write};
    let server = MockServer::start();
    let config = |model: &str| {
        format!(
            "chat_model: testkit-model\nchat_model_api_base: {0}\nembedding_model: {model}\nembedding_model_api_base: {0}\n",
            server.base_url()
        )
    };
    let home = home_with_model(&server, "");
    std::fs::write(home.home().join("elroy.conf.yaml"), config("testkit-embed")).unwrap();
    for i in 0..12 {
        let out = home.call(
            "create_memory",
            &json!({"name": format!("Hobby {i}"), "text": format!("The user took up hobby number {i}.")})
                .to_string(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let memory_requests = |model: &str| {
        server
            .requests()
            .iter()
            .filter(|r| {
                r.is_embeddings()
                    && embedding_input(r).starts_with('#')
                    && r.body.get("model").and_then(Value::as_str) == Some(model)
            })
            .count()
    };
    assert_eq!(memory_requests("testkit-embed"), 12);

    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        config("testkit-embed-y"),
    )
    .unwrap();
    server.push(Reply::text("Nice to see you again."));
    let mut child = home
        .cmd()
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hello again\n").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            seen.push(line);
        }
        seen
    });
    // Until the background embedding says it is done (the guard only stops a hang).
    let mut lines = Vec::new();
    while !lines
        .iter()
        .any(|l: &String| l.starts_with("Embedded ") && l.contains("with testkit-embed-y in"))
    {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => lines.push(line),
            Err(_) => panic!("no end of the background embedding: {lines:?}"),
        }
    }
    stdin.write_all(b"exit\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    lines.extend(reader.join().unwrap().into_iter().skip(lines.len()));
    assert!(out.status.success(), "{lines:?}");
    assert!(
        stdout(&out).contains("Nice to see you again."),
        "{}",
        stdout(&out)
    );
    assert!(
        lines.iter().any(|l| l.starts_with(
            "Embedding 12 memories with testkit-embed-y in the background (recall uses keywords for them until then)"
        )),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Embedded 12 of 12 memories with testkit-embed-y in")),
        "{lines:?}"
    );
    assert_eq!(memory_requests("testkit-embed-y"), 12);
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    let count = |model: &str| -> i64 {
        db.query_row(
            "SELECT count(*) FROM embeddings WHERE kind = 'memory' AND model = ?1",
            [model],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!((count("testkit-embed"), count("testkit-embed-y")), (12, 12));

    // The same switch done in the foreground: `elroy models embed`.
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        config("testkit-embed-z"),
    )
    .unwrap();
    let out = home.cmd().args(["models", "embed"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "12 memories embedded.\n");
    assert!(
        stderr(&out).contains("Embedded 12 of 12 memories with testkit-embed-z in"),
        "{}",
        stderr(&out)
    );
    // In the foreground it does not say "in the background".
    assert!(
        stderr(&out).starts_with("Embedding 12 memories with testkit-embed-z…\n"),
        "{}",
        stderr(&out)
    );
    assert_eq!(count("testkit-embed-z"), 12);
    // Nothing left: a second run embeds nothing.
    let out = home.cmd().args(["models", "embed"]).output().unwrap();
    assert_eq!(stdout(&out), "0 memories embedded.\n");
}
