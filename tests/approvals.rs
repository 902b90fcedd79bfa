//! Asking a person about a model's call (`docs/security.md`), with the real binary in a
//! pseudo-terminal against the loopback mock model: the full-screen interface's approval prompt
//! (deny, allow once, always allow saved to `elroy.conf.yaml`, Ctrl+C) and the line chat's
//! `[y/N/s/a]` question. Each is tried with a read outside the working directory (a path) and a
//! `fetch_page` (a URL). Every wait is bounded; nothing asserts a duration.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use elroy_testkit::{MockServer, RecordedRequest, Reply};

use crate::chat_interactive::PtyChat;
use crate::common::{self, TestHome};
use crate::interface::{Screen, ready};

/// A file outside the working directory and the home: reading it asks.
struct Outside {
    _dir: tempfile::TempDir,
    file: PathBuf,
}

fn outside() -> Outside {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("outside-notes.txt");
    std::fs::write(&file, "THE-OUTSIDE-TEXT").unwrap();
    let file = std::fs::canonicalize(file).unwrap();
    Outside { _dir: dir, file }
}

/// A home whose model is `model`, fetch_page allowed to reach loopback, a comment and the
/// given lines in its configuration.
fn home(model: &MockServer, extra: &str) -> TestHome {
    common::home_with_model(
        model,
        &format!("# my own note, kept\nfetch_allow_private_addresses: true\n{extra}"),
    )
}

fn read_call(file: &std::path::Path) -> Reply {
    Reply::tool_call("read_file", serde_json::json!({ "path": file }).to_string())
}

fn fetch_call(page: &MockServer) -> Reply {
    Reply::tool_call(
        "fetch_page",
        serde_json::json!({ "url": format!("{}/notes", page.root_url()) }).to_string(),
    )
}

/// The last tool result the model read in `request`.
fn last_result(request: &RecordedRequest) -> String {
    request
        .tool_results()
        .into_iter()
        .map(|(_, c)| c)
        .next_back()
        .unwrap_or_default()
}

fn page_hits(page: &MockServer) -> usize {
    page.requests().iter().filter(|r| r.method == "GET").count()
}

fn config_text(home: &TestHome) -> String {
    std::fs::read_to_string(home.home().join("elroy.conf.yaml")).unwrap()
}

#[test]
fn the_prompt_shows_what_is_reached_and_deny_does_not_run_it() {
    let model = MockServer::start();
    let page = MockServer::start();
    page.fallback(Reply::text("page text"));
    let out = outside();
    model
        .push(read_call(&out.file))
        .push(Reply::text("First done."))
        .push(fetch_call(&page))
        .push(Reply::text("Second done."));
    let home = home(&model, "");
    let mut screen = Screen::open(&home, &["chat"], 30, 140);
    ready(&screen);
    screen.send("read my notes\r");
    let prompt = screen.wait_text("Approval needed");
    assert!(prompt.contains("read_file (read"), "{prompt}");
    assert!(
        prompt.contains(&format!("path: {}", out.file.display())),
        "{prompt}"
    );
    screen.send("n");
    screen.wait_text("First done.");
    let sent = model.chat_requests();
    let result = last_result(&sent[1]);
    assert!(
        result.starts_with("Error invoking tool read_file: not permitted: the person declined"),
        "{result}"
    );
    // A URL, denied with a reason the model reads.
    screen.send("fetch the page\r");
    let prompt = screen.wait_text("fetch_page (network");
    assert!(
        prompt.contains(&format!("url: {}/notes", page.root_url())),
        "{prompt}"
    );
    screen.send("r");
    screen.wait_text("reason:");
    screen.send("not that site\r");
    screen.wait_text("Second done.");
    let result = last_result(&model.chat_requests()[3]);
    assert!(
        result.contains("declined this call: not that site"),
        "{result}"
    );
    assert_eq!(page_hits(&page), 0, "the page was fetched");
    let _ = screen.quit();
}

#[test]
fn allow_once_runs_the_call_once_and_the_next_call_asks_again() {
    let model = MockServer::start();
    let page = MockServer::start();
    page.fallback(Reply::text("the page's words"));
    let out = outside();
    model
        .push(read_call(&out.file))
        .push(Reply::text("Read it."))
        .push(read_call(&out.file))
        .push(Reply::text("Not again."))
        .push(fetch_call(&page))
        .push(Reply::text("Fetched."));
    let home = home(&model, "");
    let mut screen = Screen::open(&home, &["chat"], 30, 140);
    ready(&screen);
    screen.send("read my notes\r");
    screen.wait_text("Approval needed");
    screen.send("y");
    screen.wait_text("Read it.");
    assert!(last_result(&model.chat_requests()[1]).contains("THE-OUTSIDE-TEXT"));
    // The same call again: asked again (a denial now shows the first grant was for once only).
    screen.send("and again\r");
    screen.wait_text("Approval needed");
    screen.send("\x1b");
    screen.wait_text("Not again.");
    let again = last_result(&model.chat_requests()[3]);
    assert!(again.contains("not permitted"), "{again}");
    // A URL, allowed once: fetched once.
    screen.send("fetch the page\r");
    screen.wait_text("fetch_page (network");
    screen.send("1");
    screen.wait_text("Fetched.");
    assert_eq!(page_hits(&page), 1);
    assert!(last_result(&model.chat_requests()[5]).contains("the page's words"));
    let _ = screen.quit();
}

#[test]
fn always_allow_saves_the_rule_keeping_the_file_and_the_next_session_does_not_ask() {
    let model = MockServer::start();
    let page = MockServer::start();
    page.fallback(Reply::text("the page's words"));
    let out = outside();
    model
        .push(read_call(&out.file))
        .push(Reply::text("Read it."))
        .push(fetch_call(&page))
        .push(Reply::text("Fetched."));
    let home = home(&model, "");
    let mut screen = Screen::open(&home, &["chat"], 30, 140);
    ready(&screen);
    screen.send("read my notes\r");
    screen.wait_text("Approval needed");
    screen.send("a");
    screen.wait_text("Read it.");
    screen.send("fetch the page\r");
    screen.wait_text("fetch_page (network");
    screen.send("a");
    screen.wait_text("Fetched.");
    let _ = screen.quit();
    let saved = config_text(&home);
    assert!(saved.starts_with("chat_model: testkit-model\n"), "{saved}");
    assert!(
        saved.contains("# my own note, kept\nfetch_allow_private_addresses: true\n"),
        "{saved}"
    );
    assert!(
        saved.contains(&format!(
            "permissions:\n  allow:\n    - \"read_file({})\"\n    - \"fetch_page(domain:127.0.0.1)\"\n",
            out.file.display()
        )),
        "{saved}"
    );
    // The next session runs both without asking: a prompt would hold the turn, so the replies
    // after the calls could not appear.
    model
        .push(read_call(&out.file))
        .push(Reply::text("Read without asking."))
        .push(fetch_call(&page))
        .push(Reply::text("Fetched without asking."));
    let mut screen = Screen::open(&home, &["chat"], 30, 140);
    ready(&screen);
    screen.send("read my notes\r");
    screen.wait_text("Read without asking.");
    screen.send("fetch the page\r");
    let shown = screen.wait_text("Fetched without asking.");
    assert!(!shown.contains("Approval needed"), "{shown}");
    let sent = model.chat_requests();
    assert!(last_result(&sent[5]).contains("THE-OUTSIDE-TEXT"));
    assert!(last_result(&sent[7]).contains("the page's words"));
    assert_eq!(page_hits(&page), 2);
    let _ = screen.quit();
}

#[test]
fn ctrl_c_at_the_prompt_denies_and_cancels_the_turn() {
    let model = MockServer::start();
    let out = outside();
    model
        .push(read_call(&out.file))
        .push(Reply::text("The next answer."));
    let home = home(&model, "");
    let mut screen = Screen::open(&home, &["chat"], 30, 140);
    ready(&screen);
    screen.send("read my notes\r");
    screen.wait_text("Approval needed");
    screen.send("\x03");
    screen.wait_for("the prompt to close", |t| !t.contains("Approval needed"));
    screen.send("next\r");
    screen.wait_text("The next answer.");
    let sent = model.chat_requests();
    assert_eq!(sent.len(), 2, "the cancelled turn went on");
    assert!(
        sent[1]
            .tool_results()
            .iter()
            .all(|(_, c)| !c.contains("THE-OUTSIDE-TEXT")),
        "the file was read"
    );
    let _ = screen.quit();
}

#[test]
fn the_line_chat_asks_and_obeys_y_and_n() {
    let model = MockServer::start();
    let page = MockServer::start();
    page.fallback(Reply::text("the page's words"));
    let out = outside();
    model
        .push(read_call(&out.file))
        .push(Reply::text("READ-DONE"))
        .push(fetch_call(&page))
        .push(Reply::text("FETCH-REFUSED"))
        .push(read_call(&out.file))
        .push(Reply::text("READ-REFUSED"));
    let home = home(&model, "");
    let mut chat = PtyChat::start(&home);
    chat.wait_for(&|s| s.contains("> "), "the prompt");
    chat.type_keys(b"read my notes\r");
    let asked = chat.wait_for(
        &|s| s.contains("Allow read_file? [y/N/s/a]"),
        "the question",
    );
    assert!(
        asked.contains(&format!("path: {}", out.file.display())),
        "{asked}"
    );
    chat.type_keys(b"y\r");
    chat.wait_for(&|s| s.contains("READ-DONE"), "the reply");
    assert!(last_result(&model.chat_requests()[1]).contains("THE-OUTSIDE-TEXT"));
    // A URL, answered N.
    chat.type_keys(b"fetch the page\r");
    chat.wait_for(
        &|s| s.contains("Allow fetch_page? [y/N/s/a]"),
        "the question",
    );
    chat.type_keys(b"N\r");
    chat.wait_for(&|s| s.contains("FETCH-REFUSED"), "the reply");
    assert_eq!(page_hits(&page), 0);
    assert!(last_result(&model.chat_requests()[3]).contains("not permitted"));
    // An empty answer denies too, and a once-allowed read is asked about again.
    chat.type_keys(b"read it again\r");
    chat.wait_for(
        &|s| s.matches("Allow read_file? [y/N/s/a]").count() == 2,
        "the second question",
    );
    chat.type_keys(b"\r");
    chat.wait_for(&|s| s.contains("READ-REFUSED"), "the reply");
    assert!(last_result(&model.chat_requests()[5]).contains("not permitted"));
    chat.leave();
}
