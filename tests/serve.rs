//! `elroy serve` end to end: the real binary on a loopback port, requests over plain HTTP/1.1
//! (a small client on `std::net`, so a test can drop a connection mid-stream), the chat model
//! the testkit's loopback mock.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::TestHome;
use elroy_testkit::{MockServer, RecordedRequest, Reply};
use serde_json::{Value, json};

pub(crate) const KEY: &str = "test-key-0123456789";

/// A running `elroy serve`; killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) addr: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (at most a minute, a hang is a failure) until `ready` holds.
pub(crate) fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gave up waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Served {
    /// `elroy serve --bind 127.0.0.1:0` in `home` with `env`; the address is read from the
    /// first stderr line, later lines are kept.
    pub(crate) fn start(home: &TestHome, env: &[(&str, &str)]) -> Served {
        let mut cmd = home.cmd();
        cmd.args(["serve", "--bind", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in the first line: {first:?}"))
            .to_owned();
        let lines = Arc::new(Mutex::new(vec![first.trim_end().to_owned()]));
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push(line);
            }
        });
        Served { child, addr, lines }
    }

    pub(crate) fn stderr(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A response: status, lower-case headers, body (de-chunked).
#[derive(Debug)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Resp {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    /// The `data:` payloads of an event stream.
    pub(crate) fn events(&self) -> Vec<String> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(str::to_owned)
            .collect()
    }
}

fn request_text(
    addr: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> String {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(key) = key {
        text.push_str(&format!("Authorization: Bearer {key}\r\n"));
    }
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(&body);
    text
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// One HTTP/1.1 request, read to the end.
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Resp {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .write_all(request_text(addr, method, path, key, headers, body).as_bytes())
        .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Resp {
        status,
        headers,
        body,
    }
}

/// `POST /v1/chat/completions` with `messages` (role, text pairs).
pub(crate) fn chat(
    addr: &str,
    key: &str,
    messages: &[(&str, &str)],
    stream: bool,
    headers: &[(&str, &str)],
) -> Resp {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(role, text)| json!({"role": role, "content": text}))
        .collect();
    let body = json!({"model": "elroy", "messages": messages, "stream": stream});
    http(
        addr,
        "POST",
        "/v1/chat/completions",
        Some(key),
        headers,
        Some(&body),
    )
}

/// The reply text of a non-streaming completion.
pub(crate) fn reply_of(resp: &Resp) -> String {
    assert_eq!(resp.status, 200, "{}", resp.body);
    resp.json()["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The concatenated content of a streamed completion (asserting the `[DONE]` end).
pub(crate) fn streamed_text(resp: &Resp) -> String {
    assert_eq!(resp.status, 200, "{}", resp.body);
    let events = resp.events();
    assert_eq!(
        events.last().map(String::as_str),
        Some("[DONE]"),
        "{events:?}"
    );
    let mut text = String::new();
    for event in &events[..events.len() - 1] {
        let chunk: Value = serde_json::from_str(event).unwrap();
        assert_eq!(chunk["object"], "chat.completion.chunk", "{event}");
        if let Some(t) = chunk["choices"][0]["delta"]["content"].as_str() {
            text.push_str(t);
        }
    }
    text
}

pub(crate) fn home(server: &MockServer, extra: &str) -> TestHome {
    common::home_with_model(server, extra)
}

fn all_text(request: &RecordedRequest) -> String {
    request
        .messages()
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

fn turn_request(server: &MockServer, user_text: &str) -> RecordedRequest {
    server
        .chat_requests()
        .into_iter()
        .find(|r| r.last_user_text().as_deref() == Some(user_text))
        .unwrap_or_else(|| panic!("no upstream request for {user_text:?}"))
}

#[test]
fn models_and_keys() {
    let server = MockServer::start();
    let home = home(&server, "");
    // No key: serve refuses to start and says how to make one.
    let out = home
        .cmd()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("openssl rand"),
        "{}",
        common::stderr(&out)
    );

    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let models = http(&served.addr, "GET", "/v1/models", Some(KEY), &[], None);
    assert_eq!(models.status, 200, "{}", models.body);
    assert_eq!(models.json()["data"][0]["id"], "elroy");
    assert_eq!(
        models.json()["data"][0]["elroy_chat_model"],
        "testkit-model"
    );
    // Missing, wrong and near-miss keys: 401 in OpenAI's shape, on every path.
    for key in [None, Some("wrong-key-0000"), Some(&KEY[..KEY.len() - 1])] {
        for (method, path) in [
            ("GET", "/v1/models"),
            ("POST", "/v1/chat/completions"),
            ("POST", "/mcp"),
        ] {
            let resp = http(&served.addr, method, path, key, &[], Some(&json!({})));
            assert_eq!(resp.status, 401, "{method} {path} {key:?}: {}", resp.body);
            assert_eq!(resp.json()["error"]["code"], "invalid_api_key");
            assert!(resp.json()["error"]["message"].is_string());
        }
    }
    // Client tools are refused with a clear 400; nothing reached the model.
    let body = json!({"model": "elroy", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]});
    let resp = http(
        &served.addr,
        "POST",
        "/v1/chat/completions",
        Some(KEY),
        &[],
        Some(&body),
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.json()["error"]["code"], "tools_not_supported");
    let resp = chat(
        &served.addr,
        KEY,
        &[("user", "hi"), ("assistant", "hello")],
        false,
        &[],
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.json()["error"]["code"], "last_message_not_user");
    assert!(server.chat_requests().is_empty());
    // One line per request.
    wait_until("the log lines", || {
        served.stderr().contains("POST /v1/chat/completions 400")
    });
    assert!(
        served.stderr().contains("GET /v1/models 200"),
        "{}",
        served.stderr()
    );
    assert!(
        served.stderr().contains("GET /v1/models 401"),
        "{}",
        served.stderr()
    );
}

#[test]
fn chat_streaming_and_not() {
    let server = MockServer::start();
    server
        .push(Reply::text("Hello there, friend."))
        .push(Reply::text("Streamed reply, in chunks."));
    let home = home(&server, "");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let resp = chat(
        &served.addr,
        KEY,
        &[("user", "Hello")],
        false,
        &[("X-Elroy-Session", "s1")],
    );
    assert_eq!(reply_of(&resp), "Hello there, friend.");
    assert_eq!(resp.json()["object"], "chat.completion");
    assert_eq!(resp.json()["choices"][0]["finish_reason"], "stop");
    assert_eq!(resp.header("x-elroy-session"), Some("s1"));
    let resp = chat(
        &served.addr,
        KEY,
        &[("user", "Again")],
        true,
        &[("X-Elroy-Session", "s1")],
    );
    assert!(
        resp.header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(streamed_text(&resp), "Streamed reply, in chunks.");
    // The second request continued the first one's context window.
    let second = turn_request(&server, "Again");
    assert!(
        all_text(&second).contains("Hello there, friend."),
        "{}",
        all_text(&second)
    );
}

#[test]
fn a_conversation_is_one_session_and_its_fact_is_remembered() {
    let server = MockServer::start();
    let fact = "My sister Priyanka moved to Lisbon last spring.";
    // Turns are answered by their user message; anything else is memory formation.
    for (asked, answer) in [
        (fact, "Lovely, Lisbon is a fine city."),
        ("How is the weather?", "It is sunny."),
        ("Where does my sister live?", "Your sister lives in Lisbon."),
        ("Hello, new chat", "Hi."),
    ] {
        server.when(
            move |r| r.last_user_text().as_deref() == Some(asked),
            Reply::text(answer),
        );
    }
    server.fallback(Reply::text(
        "# Priyanka lives in Lisbon\nThe user's sister Priyanka lives in Lisbon.",
    ));
    let home = home(&server, "messages_between_memory: 2\n");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let system = ("system", "You are a helpful assistant.");
    // A client without X-Elroy-Session resends the whole conversation each time.
    let r1 = chat(&served.addr, KEY, &[system, ("user", fact)], false, &[]);
    let a1 = reply_of(&r1);
    let r2 = chat(
        &served.addr,
        KEY,
        &[
            system,
            ("user", fact),
            ("assistant", &a1),
            ("user", "How is the weather?"),
        ],
        true,
        &[],
    );
    let a2 = streamed_text(&r2);
    let r3 = chat(
        &served.addr,
        KEY,
        &[
            system,
            ("user", fact),
            ("assistant", &a1),
            ("user", "How is the weather?"),
            ("assistant", &a2),
            ("user", "Where does my sister live?"),
        ],
        false,
        &[],
    );
    assert_eq!(reply_of(&r3), "Your sister lives in Lisbon.");
    let session = r1.header("x-elroy-session").unwrap();
    assert_eq!(r2.header("x-elroy-session"), Some(session));
    assert_eq!(r3.header("x-elroy-session"), Some(session));
    // The fact told in request 1 is in the upstream request of request 3, and a memory exists.
    let third = turn_request(&server, "Where does my sister live?");
    assert!(all_text(&third).contains(fact), "{}", all_text(&third));
    let memories = home.home().join("memories");
    let files: Vec<String> = std::fs::read_dir(&memories)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        files.iter().any(|f| f.contains("Priyanka lives in Lisbon")),
        "{files:?}"
    );
    // Another conversation (its first message differs) is another session.
    let other = chat(
        &served.addr,
        KEY,
        &[system, ("user", "Hello, new chat")],
        false,
        &[],
    );
    assert_eq!(reply_of(&other), "Hi.");
    assert_ne!(other.header("x-elroy-session"), Some(session));
    // Its context window is its own: request 1's message is not in it (the memory may be
    // recalled).
    let fresh = turn_request(&server, "Hello, new chat");
    assert!(
        !fresh
            .messages()
            .iter()
            .any(|m| m["role"] == "user" && m["content"] == fact),
        "{}",
        all_text(&fresh)
    );
}

#[test]
fn two_keys_see_separate_memories() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call(
            "create_memory",
            r#"{"name": "Alice's bike", "text": "Alice's bike is a red Gazelle."}"#,
        ))
        .push(Reply::text("Saved."))
        .push(Reply::text("I don't know your bike."));
    let home = home(
        &server,
        "serve:\n  keys:\n    alice-key-123456: alice\n    bob-key-98765432: bob\n",
    );
    let served = Served::start(&home, &[]);
    let a = chat(
        &served.addr,
        "alice-key-123456",
        &[("user", "Remember my bike is a red Gazelle")],
        false,
        &[],
    );
    assert_eq!(reply_of(&a), "Saved.");
    let b = chat(
        &served.addr,
        "bob-key-98765432",
        &[("user", "What bike do I have?")],
        false,
        &[],
    );
    assert_eq!(reply_of(&b), "I don't know your bike.");
    let alice = home.home().join("users/alice/memories");
    assert_eq!(std::fs::read_dir(&alice).unwrap().count(), 1);
    let bob = home.home().join("users/bob/memories");
    assert_eq!(std::fs::read_dir(&bob).map(Iterator::count).unwrap_or(0), 0);
    let bobs = turn_request(&server, "What bike do I have?");
    assert!(!all_text(&bobs).contains("Gazelle"), "{}", all_text(&bobs));
    // Through /mcp too: each key's examine_memories reaches its own user only.
    let served_mcp = |key: &str| {
        crate::serve_mcp::call_tool(
            &served.addr,
            key,
            "print_memory",
            json!({"memory_name": "Alice's bike"}),
        )
    };
    assert!(served_mcp("alice-key-123456").contains("red Gazelle"));
    assert!(!served_mcp("bob-key-98765432").contains("red Gazelle"));
}

#[test]
fn twenty_concurrent_sessions_lose_nothing() {
    let server = MockServer::start();
    server.fallback(Reply::text("ok"));
    let home = home(&server, "");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let addr = served.addr.clone();
    let round = |word: &'static str| {
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let addr = addr.clone();
                std::thread::spawn(move || {
                    let session = format!("client-{i}");
                    let text = format!("{word} from client {i}");
                    let resp = chat(
                        &addr,
                        KEY,
                        &[("user", &text)],
                        i % 2 == 0,
                        &[("X-Elroy-Session", &session)],
                    );
                    if i % 2 == 0 {
                        streamed_text(&resp)
                    } else {
                        reply_of(&resp)
                    }
                })
            })
            .collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), "ok");
        }
    };
    round("first");
    round("second");
    // Each session's second turn saw its own first message and no other session's.
    for i in 0..20 {
        let request = turn_request(&server, &format!("second from client {i}"));
        let text = all_text(&request);
        assert!(
            text.contains(&format!("first from client {i}\"")),
            "{i}: {text}"
        );
        let others = (0..20)
            .filter(|j| *j != i && text.contains(&format!("from client {j}\"")))
            .count();
        assert_eq!(others, 0, "{i}: {text}");
    }
}

#[test]
fn a_disconnect_cancels_the_turn() {
    let server = MockServer::start();
    let (held, _release) = Reply::held("Partial ", "answer never sent");
    server.push(held).push(Reply::text("Fresh answer."));
    let home = home(&server, "serve:\n  keep_alive_seconds: 1\n");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let body = json!({"model": "elroy", "stream": true,
        "messages": [{"role": "user", "content": "Tell me a long story"}]});
    let mut stream = TcpStream::connect(&served.addr).unwrap();
    stream
        .write_all(
            request_text(
                &served.addr,
                "POST",
                "/v1/chat/completions",
                Some(KEY),
                &[("X-Elroy-Session", "d")],
                Some(&body),
            )
            .as_bytes(),
        )
        .unwrap();
    // Read until the first words of the reply arrived, then go away.
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("Partial") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    drop(stream);
    wait_until("the cancel line", || {
        served.stderr().contains("turn cancelled: session=d")
    });
    // The session is free again; the cancelled turn's user message stayed, its reply did not.
    let resp = chat(
        &served.addr,
        KEY,
        &[("user", "Are you there?")],
        false,
        &[("X-Elroy-Session", "d")],
    );
    assert_eq!(reply_of(&resp), "Fresh answer.");
    let next = turn_request(&server, "Are you there?");
    let text = all_text(&next);
    assert!(text.contains("Tell me a long story"), "{text}");
    assert!(!text.contains("answer never sent"), "{text}");
}

#[test]
fn sigterm_drains_the_turn_in_progress() {
    let server = MockServer::start();
    let (held, release) = Reply::held("The first half, ", "and the second half.");
    server.push(held);
    let home = home(&server, "");
    let mut served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let addr = served.addr.clone();
    let client = std::thread::spawn(move || chat(&addr, KEY, &[("user", "Go on")], false, &[]));
    wait_until("the upstream request", || {
        !server.chat_requests().is_empty()
    });
    let pid = rustix::process::Pid::from_raw(i32::try_from(served.pid()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    wait_until("the stopping line", || {
        served.stderr().contains("elroy serve: stopping")
    });
    release.release();
    let resp = client.join().unwrap();
    assert_eq!(reply_of(&resp), "The first half, and the second half.");
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status:?}: {}", served.stderr());
    wait_until("the stopped line", || {
        served.stderr().contains("elroy serve: stopped")
    });
    // The reply was stored (the transcript in state.db).
    let db = rusqlite::Connection::open(home.home().join("state.db")).unwrap();
    let stored: i64 = db
        .query_row(
            "SELECT count(*) FROM messages WHERE role = 'assistant' AND content = 'The first half, and the second half.'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(stored, 1);
}

/// The server runs the built-in embedder's forward passes on one thread (it replaces itself with
/// `RAYON_NUM_THREADS=1`, keeping its process id), and keeps a value the person set.
#[test]
#[cfg(target_os = "linux")]
fn the_server_runs_inference_on_one_thread_unless_told_otherwise() {
    let server = MockServer::start();
    let home = home(&server, "");
    let environ = |served: &Served| {
        std::fs::read(format!("/proc/{}/environ", served.pid()))
            .unwrap()
            .split(|b| *b == 0)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .filter(|v| v.starts_with("RAYON_NUM_THREADS="))
            .collect::<Vec<_>>()
    };
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    assert_eq!(environ(&served), ["RAYON_NUM_THREADS=1"]);
    let models = http(&served.addr, "GET", "/v1/models", Some(KEY), &[], None);
    assert_eq!(models.status, 200, "{}", models.body);
    drop(served);
    let told = Served::start(
        &home,
        &[("ELROY_SERVE_KEY", KEY), ("RAYON_NUM_THREADS", "2")],
    );
    assert_eq!(environ(&told), ["RAYON_NUM_THREADS=2"]);
}
