//! `elroy chat` end to end with piped input (the line editor reads plain lines when standard input
//! is not a terminal): history file, session-context pair, streamed reply, slash commands, `exit`,
//! background work, and `restart_session` re-executing elroy with a hidden resume turn; and the
//! plain REPL in a pseudo-terminal (rustix pty): Tab completion, a reminder above the prompt.
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

/// A running `elroy chat` with piped standard input kept open and its standard output collected
/// as it arrives.
struct LiveChat {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    out: std::sync::Arc<std::sync::Mutex<String>>,
}

impl LiveChat {
    fn start(home: &TestHome) -> Self {
        let mut child = home
            .cmd()
            .env("ELROY_NOW", "2026-11-30T10:00:00Z")
            .arg("chat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&out);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        LiveChat { child, stdin, out }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn output(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// Waits (at most 30 s) until standard output contains `text`; returns the output then.
    fn wait_for(&self, text: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let out = self.output();
            if out.contains(text) {
                return out;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {text:?} within 30 s; output so far:\n{out}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Closes standard input and waits for the exit.
    fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        drop(self.stdin.take());
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
        }
        let status = self.child.wait().unwrap();
        // The reader thread ends with the pipe; give it the last bytes.
        std::thread::sleep(std::time::Duration::from_millis(50));
        (status, self.output(), err)
    }
}

/// A reply is shown while it streams — the first words are on screen while the
/// server still holds the rest.
#[test]
fn a_reply_streams_before_it_ends() {
    let server = MockServer::start();
    let (reply, release) = Reply::held("The first words ", "and the rest of the reply.");
    server.push(reply);
    let home = home_for(&server);
    let mut chat = LiveChat::start(&home);
    chat.send("hello");
    let shown = chat.wait_for("The first words");
    assert!(!shown.contains("and the rest"), "{shown}");
    release.release();
    chat.wait_for("and the rest of the reply.");
    chat.send("/exit");
    let (status, _, err) = chat.finish();
    assert!(status.success(), "{err}");
}

/// The banner names the model and the home; slash commands run without the model; an unknown
/// `/word` lists the commands and reaches no model; `//x` reaches the model as `/x`.
#[test]
fn slash_commands_banner_and_escape() {
    let server = MockServer::start();
    let home = home_for(&server);
    let added = home.call(
        "add_agenda_item",
        r#"{"text":"Water the plants","item_date":"2026-11-30"}"#,
    );
    assert!(added.status.success(), "{}", stderr(&added));
    let out = chat(&home, "/agenda\n/help\n/nope\n/exit\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "elroy · model testkit-model · home {} · /help for commands, Ctrl-D to leave",
            home.home().display()
        )
    );
    assert!(text.contains("**Agenda for 2026-11-30**"), "{text}");
    // The name a person wrote, not the file stem `Water_the_plants`.
    assert!(text.contains("- **Water the plants**"), "{text}");
    assert!(
        text.contains("Unknown command /nope. The commands are:"),
        "{text}"
    );
    assert!(text.contains("`/agenda [DATE]`"), "{text}");
    assert!(text.contains("`/remember TEXT`"), "{text}");
    assert!(
        server.requests().is_empty(),
        "a command or an unknown /word reached the model: {:?}",
        server.requests()
    );

    server.push(Reply::text("Slash noted."));
    let out = chat(&home, "//x marks the spot\nexit\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Slash noted."), "{}", stdout(&out));
    let sent = server.chat_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].last_user_text().as_deref(),
        Some("/x marks the spot")
    );
}

/// A turn that ends while the background work (here automatic memory
/// creation on a slow fast model) still runs takes the next input at once (a reading command runs
/// before that work is done); leaving waits for the background work.
#[test]
fn background_work_does_not_hold_the_prompt() {
    let server = MockServer::start();
    server.push(Reply::text("Hello there."));
    let slow = MockServer::start();
    slow.delay(std::time::Duration::from_secs(4))
        .fallback(Reply::text("# Greeting\nThe user said hello."));
    let home = common::home_with_model(
        &server,
        &format!(
            "fast_model: testkit-fast\nfast_model_api_base: {}\nmessages_between_memory: 1\n",
            slow.base_url()
        ),
    );
    let mut chat = LiveChat::start(&home);
    chat.send("hello");
    chat.wait_for("Hello there.");
    // The next prompt is printed while the fast model still holds its request.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while slow.requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no background request"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A command typed now runs at once, while the fast model still holds its request.
    chat.send("/agenda");
    chat.wait_for("No agenda items for");
    // The memory is written only when the fast model answers (4 s after its request): the
    // command ran before that.
    let memories = || {
        std::fs::read_dir(home.home().join("memories"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    assert_eq!(memories(), 0, "the command waited for the background work");
    let (status, _, err) = chat.finish();
    assert!(status.success(), "{err}");
    // Leaving waited for the background work: the memory was written.
    assert_eq!(memories(), 1, "{err}");
}

/// Leaving while the background work hangs waits at most 5 s and says what did not finish.
#[test]
fn leaving_waits_for_background_work_at_most_five_seconds() {
    let server = MockServer::start();
    server.push(Reply::text("Hello there."));
    let stuck = MockServer::start();
    stuck
        .delay(std::time::Duration::from_secs(60))
        .fallback(Reply::text("# Too late\nNever written."));
    let home = common::home_with_model(
        &server,
        &format!(
            "fast_model: testkit-fast\nfast_model_api_base: {}\nmessages_between_memory: 1\n",
            stuck.base_url()
        ),
    );
    let mut chat = LiveChat::start(&home);
    chat.send("hello");
    chat.wait_for("Hello there.");
    let (status, out, err) = chat.finish();
    assert!(status.success(), "{err}");
    assert!(
        out.contains("Stopped waiting after 5 s: the background work after the last reply"),
        "{out}\n{err}"
    );
}

/// A pseudo-terminal: the master side, and the path of the terminal side.
fn open_pty() -> (std::fs::File, std::fs::File) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: 30,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    (std::fs::File::from(master), terminal)
}

/// `elroy chat --plain` in a pseudo-terminal, its screen output collected as it arrives.
pub(crate) struct PtyChat {
    child: std::process::Child,
    master: std::fs::File,
    screen: std::sync::Arc<std::sync::Mutex<String>>,
}

impl PtyChat {
    pub(crate) fn start(home: &TestHome) -> Self {
        let (master, terminal) = open_pty();
        let child = home
            .cmd()
            .args(["chat", "--plain"])
            .stdin(terminal.try_clone().unwrap())
            .stdout(terminal.try_clone().unwrap())
            .stderr(terminal)
            .spawn()
            .unwrap();
        let screen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&screen);
        let mut reader = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with an error (EIO) once elroy has closed the terminal.
            while let Ok(n) = std::io::Read::read(&mut reader, &mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        PtyChat {
            child,
            master,
            screen,
        }
    }

    pub(crate) fn type_keys(&mut self, keys: &[u8]) {
        self.master.write_all(keys).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits (at most 30 s) until the screen output satisfies `what`; returns it.
    pub(crate) fn wait_for(&self, what: &dyn Fn(&str) -> bool, label: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let seen = self.screen.lock().unwrap().clone();
            if what(&seen) {
                return seen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {label} within 30 s; screen so far:\n{seen:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Waits for the prompt on the last line (the line editor reads again, in raw mode), then
    /// clears the line (Ctrl-U), leaves (Ctrl-D) and checks the exit (at most 30 s). Keys sent
    /// before the prompt meet the terminal in line mode, which takes Ctrl-D as an end of file
    /// that the line editor's switch to raw mode then drops (an occasional hang under load).
    pub(crate) fn leave(mut self) {
        self.wait_for(
            &|s| {
                s.rsplit('\n')
                    .next()
                    .is_some_and(|last| last.contains("> "))
            },
            "the prompt on the last line",
        );
        self.type_keys(b"\x15\x04");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success());
                return;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "elroy did not leave on Ctrl-D: {:?}",
                    self.screen.lock().unwrap()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// A reminder that comes due while the plain REPL waits for input is printed
/// above the prompt, and the text being typed is still there (redrawn after it).
#[test]
fn a_reminder_appears_above_the_prompt_with_the_typed_text_intact() {
    let server = MockServer::start();
    let home = home_for(&server);
    // Real clock: the item comes due 8 s from now, after the REPL has started.
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(8);
    let args = serde_json::json!({
        "name": "Call the dentist",
        "text": "Ask about the invoice",
        "trigger_time": at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    });
    let created = home.call("create_due_item", &args.to_string());
    assert!(created.status.success(), "{}", stderr(&created));

    let mut chat = PtyChat::start(&home);
    chat.wait_for(
        &|s| s.contains("/help for commands") && s.contains("> "),
        "prompt",
    );
    chat.type_keys(b"hello wor");
    chat.wait_for(&|s| s.contains("hello wor"), "typed text");
    let seen = chat.wait_for(
        &|s| s.find("⏰").is_some_and(|at| s[at..].contains("hello wor")),
        "reminder followed by the typed text",
    );
    let at = seen.find("⏰").unwrap();
    assert!(
        seen[at..].contains("Call the dentist — Ask about the invoice"),
        "{seen:?}"
    );
    // The typed text was never sent.
    chat.leave();
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

/// Tab completes a command name in the line editor; the completed command runs without the model.
#[test]
fn tab_completes_command_names() {
    let server = MockServer::start();
    let home = home_for(&server);
    let mut chat = PtyChat::start(&home);
    chat.wait_for(
        &|s| s.contains("/help for commands") && s.contains("> "),
        "prompt",
    );
    chat.type_keys(b"/ag\t");
    chat.wait_for(&|s| s.contains("/agenda"), "completion");
    chat.type_keys(b" tomorrow\r");
    chat.wait_for(&|s| s.contains("No agenda items for"), "agenda output");
    chat.leave();
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
