//! The first run without a model: the full-screen interface opens anyway with its first-run
//! panel (the real binary in a pseudo-terminal, `crate::interface::Screen`), offers the local
//! servers the shared search finds, and a choice starts the conversation and is saved. The
//! searched ports are replaced with `ELROY_LOCAL_SERVER_PORTS`, so the tests never depend on what
//! runs on the machine's usual ports and never collide with each other.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use elroy_testkit::{MockServer, Reply};
use serde_json::json;

use crate::common::{TestHome, stderr};
use crate::interface::Screen;

/// A loopback port nobody listens on (bound, then released).
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port().to_string()
}

fn port_of(server: &MockServer) -> String {
    server
        .base_url()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1")
        .to_owned()
}

#[test]
fn without_a_model_or_a_server_the_interface_opens_with_the_panel_and_exit_is_clean() {
    let home = TestHome::new();
    let added = home.call("add_agenda_item", r#"{"text": "Water the plants"}"#);
    assert!(added.status.success(), "{}", stderr(&added));
    let ports = closed_port();
    let mut screen = Screen::open_with(
        &home,
        &[],
        30,
        120,
        &[("ELROY_LOCAL_SERVER_PORTS", ports.as_str())],
    );
    screen.wait_text("No chat model yet");
    screen.wait_text("No local model server answered");
    let shown = screen.wait_text("paste a provider key");
    assert!(shown.contains("no model"), "the status bar: {shown}");
    // The sidebar reads the home.
    screen.wait_text("Water the plants");
    // Commands run; a message waits for a model.
    screen.send("/due\r");
    screen.wait_text("No due items");
    screen.send("hello there\r");
    screen.wait_text("Not sent: there is no chat model yet");
    screen.send("/exit\r");
    let status = screen.wait_exit();
    assert!(status.success(), "{status}; the screen:\n{}", screen.text());
}

#[test]
fn a_server_on_a_searched_port_is_offered_and_choosing_it_starts_the_conversation() {
    let server = MockServer::start();
    server.when(
        |r| r.method == "GET" && r.path == "/v1/models",
        Reply::Json(json!({"object": "list", "data": [{"id": "testkit-model"}]})),
    );
    server.push(Reply::text("Hello from the local model."));
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    let config = home.home().join("elroy.conf.yaml");
    std::fs::write(&config, "# my settings\nmax_tokens: 9000 # plenty\n").unwrap();
    let ports = format!("{},{}", closed_port(), port_of(&server));
    let mut screen = Screen::open_with(
        &home,
        &[],
        30,
        120,
        &[("ELROY_LOCAL_SERVER_PORTS", ports.as_str())],
    );
    let offer = format!(
        "1  a local server at {} (model testkit-model)",
        server.base_url()
    );
    screen.wait_text(&offer);
    screen.send("1\r");
    screen.wait_text("Saved chat_model and");
    screen.wait_for("the model in the status bar", |t| {
        !t.contains("No chat model yet") && t.contains("testkit-model")
    });
    screen.send("hello there\r");
    screen.wait_text("Hello from the local model.");
    assert_eq!(server.chat_requests().len(), 1);
    assert_eq!(
        server.chat_requests()[0].last_user_text().as_deref(),
        Some("hello there")
    );
    screen.send("/exit\r");
    assert!(screen.wait_exit().success(), "{}", screen.text());

    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        format!(
            "# my settings\nmax_tokens: 9000 # plenty\nchat_model: testkit-model\nchat_model_api_base: {}\n",
            server.base_url()
        )
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&config).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // The next start uses the saved choice without asking.
    server.push(Reply::text("Still here."));
    let out = home.cmd().args(["message", "again"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Still here.\n");
}

#[test]
fn a_command_that_fails_before_doing_anything_leaves_no_home_behind() {
    let home = TestHome::new();
    for args in [
        &["message", "hi"][..],
        &["--model", "", "message", "hi"][..],
    ] {
        let out = home
            .cmd()
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        for named in ["ELROY_CHAT_MODEL_API_BASE", "`elroy tools`", "interface"] {
            assert!(err.contains(named), "{named} in {err}");
        }
        assert!(
            !home.home().exists(),
            "{args:?} made {:?}",
            std::fs::read_dir(home.home()).map(|d| d.count())
        );
    }
}

/// Kind: the line chat without a model (`--plain`, and `TERM=dumb` which picks it). It opens
/// after one advice block: slash commands and the tools they run work, a message is not sent and
/// says how to configure a model, `/exit` leaves with status 0.
#[test]
fn the_line_chat_opens_without_a_model() {
    let ports = closed_port();
    for (args, term) in [(&["--plain"][..], None), (&[][..], Some("dumb"))] {
        let home = TestHome::new();
        let mut env = vec![("ELROY_LOCAL_SERVER_PORTS", ports.as_str())];
        if let Some(term) = term {
            env.push(("TERM", term));
        }
        let mut screen = Screen::open_with(&home, args, 40, 160, &env);
        screen.wait_text("model none");
        screen.send("/due\r");
        screen.wait_text("No due items");
        screen.send("/remember Tea is green\r");
        screen.wait_text("New memory created: Tea is green");
        screen.send("/memories\r");
        screen.wait_text("Memories (1)");
        screen.send("hello there\r");
        screen.wait_text("Not sent: there is no chat model yet");
        screen.send("/exit\r");
        let status = screen.wait_exit();
        let text = screen.text();
        assert!(
            status.success(),
            "{args:?} {term:?}: {status}; the screen:\n{text}"
        );
        // One advice block, not the advice and then the one-line error.
        assert_eq!(text.matches("Three ways to get one").count(), 1, "{text}");
        assert!(!text.contains("Could not infer chat model"), "{text}");
        assert!(text.contains("/model NAME"), "how to configure one: {text}");
        assert!(text.contains("ELROY_CHAT_MODEL_API_BASE"), "{text}");
        assert!(home.home().join("memories").read_dir().unwrap().count() > 0);
    }
}

/// Kind: `elroy message --json` failing before its turn (no model; a bad configuration value):
/// the error is one NDJSON `error` event on standard output, as a failed turn's, exit 1, no
/// plain `elroy: …` line, and no home is made.
#[test]
fn message_json_errors_are_json() {
    for (name, value, says) in [
        (
            "ELROY_LOCAL_SERVER_PORTS",
            closed_port(),
            "ELROY_CHAT_MODEL_API_BASE",
        ),
        ("ELROY_MAX_TOKENS", "abc".to_owned(), "expected an integer"),
    ] {
        let home = TestHome::new();
        let out = home
            .cmd()
            .env(name, &value)
            .args(["message", "--json", "hi"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        let event: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(event["type"], "error", "{event}");
        assert!(
            event["message"].as_str().unwrap().contains(says),
            "{says} in {event}"
        );
        assert!(!stderr(&out).contains("elroy:"), "{}", stderr(&out));
        assert!(!home.home().exists(), "{name}: a home was made");
    }
}
