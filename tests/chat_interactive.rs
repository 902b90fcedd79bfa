//! `elroy chat` end to end with piped input (the line editor reads plain lines when standard input
//! is not a terminal): history file, session-context pair, streamed reply, `exit`, and
//! `restart_session` re-executing elroy with a hidden resume turn.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, Reply};

fn home_for(server: &MockServer) -> TestHome {
    common::home_with_model(server, "")
}

fn chat(home: &TestHome, input: &str) -> Output {
    let mut child = home
        .cmd()
        .env("ELROY_NOW", "2026-11-30T10:00:00Z")
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn chat_answers_keeps_history_and_exits() {
    let server = MockServer::start();
    server.push(Reply::text("Hello! Nice to meet you."));
    let home = home_for(&server);
    let out = chat(&home, "hello there\nexit\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Hello! Nice to meet you."),
        "{}",
        stdout(&out)
    );
    assert_eq!(server.chat_requests().len(), 1);
    let sent = &server.chat_requests()[0];
    // The session-context pair comes before the user's message.
    let exchanges = sent.tool_exchanges();
    assert_eq!(exchanges[0].0, "get_session_context");
    assert!(exchanges[0].1.starts_with(
        "Current date/time: Monday, November 30, 2026 10:00 AM UTC. User has logged in."
    ));
    assert_eq!(sent.last_user_text().as_deref(), Some("hello there"));
    let history = std::fs::read_to_string(home.home().join("cache/history")).unwrap();
    assert!(history.contains("hello there"), "{history}");
}

#[test]
fn restart_session_re_executes_with_a_hidden_resume_turn() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call(
            "restart_session",
            r#"{"resume_message":"Say you are back."}"#,
        ))
        .push(Reply::text("Restarting now."))
        .push(Reply::text("I'm back and ready."));
    let home = home_for(&server);
    let out = chat(&home, "please restart yourself\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Restarting now."), "{text}");
    assert!(text.contains("I'm back and ready."), "{text}");
    let sent = server.chat_requests();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(
        sent[1].tool_results().last().unwrap().1,
        "Restart scheduled. Elroy will restart after this response completes."
    );
    // The new process ran a hidden turn: no tools, the resume message as the last user message.
    assert!(!sent[2].has_tools());
    assert_eq!(
        sent[2].last_user_text().as_deref(),
        Some("Say you are back.")
    );
    // The resume message itself was not stored: a later turn does not see it.
    server.push(Reply::text("ok"));
    let out = chat(&home, "anything new?\nexit\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let last = server.chat_requests().last().unwrap().clone();
    let users: Vec<String> = last
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, ["please restart yourself", "anything new?"]);
}

#[test]
fn ctrl_c_cancels_the_turn_and_keeps_the_message() {
    let slow = MockServer::start();
    slow.delay(std::time::Duration::from_secs(20))
        .fallback(Reply::text("too late"));
    let home = home_for(&slow);
    let mut child = home
        .cmd()
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"remember the milk\n")
        .unwrap();
    // Wait until the model request is in flight, then press Ctrl-C. (No time limit is asserted:
    // an elroy that exits without asking the model fails here.)
    while slow.chat_requests().is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "elroy exited before the model request"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // The reply would come after 20 s ("too late"): "(cancelled)" shows the turn was cut short.
    assert!(stdout(&out).contains("(cancelled)"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("too late"), "{}", stdout(&out));

    // The message was stored before the model was called: the next turn sends it again.
    let server = MockServer::start();
    server.push(Reply::text("Milk noted."));
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "chat_model: testkit-model\nchat_model_api_base: {}\n",
            server.base_url()
        ),
    )
    .unwrap();
    let out = home
        .cmd()
        .args(["message", "did you get that?"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let users: Vec<String> = server.chat_requests()[0]
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, ["remember the milk", "did you get that?"]);
}
