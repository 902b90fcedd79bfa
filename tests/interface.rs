//! The full-screen interface end to end: the real binary in a pseudo-terminal (opened with
//! rustix), its screen read with the vt100 crate, against the loopback mock model. Every wait is
//! bounded (the test fails showing the screen); nothing asserts a duration.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs::File;
use std::io::{Read, Write};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use elroy_testkit::{MockServer, Reply};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

use crate::common::{self, TestHome};

/// How long a test waits for the screen to show something.
const WAIT: Duration = Duration::from_secs(30);

pub(crate) struct Screen {
    master: File,
    parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte elroy wrote to the terminal.
    raw: Arc<Mutex<Vec<u8>>>,
    child: Child,
}

/// The modes a program leaves the terminal in: what a user finds after it ends or stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Modes {
    /// The alternate screen is shown.
    alternate: bool,
    /// The cursor is hidden.
    cursor_hidden: bool,
    /// Mouse reporting is on (mouse moves would type escape codes).
    mouse: bool,
    /// Bracketed paste is on.
    bracketed_paste: bool,
    /// The terminal is in raw mode (no line editing, no echo).
    raw: bool,
}

/// What a shell needs after elroy: the main screen, cursor shown, no reporting, line mode.
const RESTORED: Modes = Modes {
    alternate: false,
    cursor_hidden: false,
    mouse: false,
    bracketed_paste: false,
    raw: false,
};

fn winsize(rows: u16, cols: u16) -> Winsize {
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl Screen {
    /// `elroy ARGS` on a `rows`×`cols` pseudo-terminal.
    pub(crate) fn open(home: &TestHome, args: &[&str], rows: u16, cols: u16) -> Screen {
        Self::open_with(home, args, rows, cols, &[])
    }

    /// [`Screen::open`] with extra environment variables.
    pub(crate) fn open_with(
        home: &TestHome,
        args: &[&str],
        rows: u16,
        cols: u16,
        env: &[(&str, &str)],
    ) -> Screen {
        let env: Vec<(&str, Option<&str>)> = env.iter().map(|(k, v)| (*k, Some(*v))).collect();
        Self::spawn(home, args, rows, cols, &env, false)
    }

    /// The general form: `env` sets (`Some`) or removes (`None`) variables after `TERM` is set
    /// to `xterm-256color`; `own_group` starts elroy in a process group of its own, as a shell
    /// with job control starts a job (so the kernel lets SIGTSTP stop it).
    fn spawn(
        home: &TestHome,
        args: &[&str],
        rows: u16,
        cols: u16,
        env: &[(&str, Option<&str>)],
        own_group: bool,
    ) -> Screen {
        use std::os::unix::process::CommandExt;
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        tcsetwinsize(&master, winsize(rows, cols)).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        let mut cmd = home.cmd();
        cmd.env_remove("VISUAL");
        cmd.env("TERM", "xterm-256color");
        for (name, value) in env {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        if own_group {
            cmd.process_group(0);
        }
        let child = cmd
            .args(args)
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave)
            .spawn()
            .unwrap();
        let master = File::from(master);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let feed = Arc::clone(&parser);
        let keep = Arc::clone(&raw);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                feed.lock().unwrap().process(&buf[..n]);
                keep.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Screen {
            master,
            parser,
            raw,
            child,
        }
    }

    pub(crate) fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen satisfies `done`; fails with the screen after [`WAIT`].
    pub(crate) fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if done(&text) {
                return text;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}; the screen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn wait_text(&self, needle: &str) -> String {
        self.wait_for(&format!("{needle:?}"), |t| t.contains(needle))
    }

    pub(crate) fn send(&mut self, bytes: &str) {
        self.master.write_all(bytes.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        tcsetwinsize(&self.master, winsize(rows, cols)).unwrap();
        self.parser
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(rows, cols);
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::WINCH).unwrap();
    }

    /// The terminal's modes now: the screen's from what elroy wrote, raw mode from the pty's
    /// line discipline.
    fn modes(&self) -> Modes {
        use rustix::termios::LocalModes;
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let termios = rustix::termios::tcgetattr(&self.master).unwrap();
        Modes {
            alternate: screen.alternate_screen(),
            cursor_hidden: screen.hide_cursor(),
            mouse: screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None,
            bracketed_paste: screen.bracketed_paste(),
            raw: !termios
                .local_modes
                .intersects(LocalModes::ICANON | LocalModes::ECHO),
        }
    }

    /// Waits until the modes satisfy `done`; fails showing them after [`WAIT`].
    fn wait_modes(&self, what: &str, done: impl Fn(Modes) -> bool) -> Modes {
        let start = Instant::now();
        loop {
            let modes = self.modes();
            if done(modes) {
                return modes;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}: {modes:?}; the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn pid(&self) -> rustix::process::Pid {
        rustix::process::Pid::from_child(&self.child)
    }

    fn signal(&self, signal: rustix::process::Signal) {
        rustix::process::kill_process(self.pid(), signal).unwrap();
    }

    /// The process state from `/proc/PID/stat` (`T`: stopped).
    fn state(&self) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        let after = stat.rsplit_once(')').unwrap().1;
        after.trim_start().chars().next().unwrap()
    }

    fn wait_stopped(&self) {
        let start = Instant::now();
        while self.state() != 'T' {
            assert!(
                start.elapsed() < WAIT,
                "elroy did not stop; the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Blanks the screen as seen by the test, so what is on it afterwards was drawn again.
    fn forget_screen(&self) {
        self.parser.lock().unwrap().process(b"\x1b[H\x1b[2J");
    }

    /// Waits for elroy to end by itself; its exit status.
    pub(crate) fn wait_exit(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // What elroy wrote last reaches the parser.
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            assert!(
                start.elapsed() < WAIT,
                "elroy did not exit; the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Ctrl+D on an empty input, then waits for the process to end; returns the last screen.
    pub(crate) fn quit(mut self) -> String {
        self.send("\x04");
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "elroy exited with {status}; the screen:\n{}",
                    self.text()
                );
                // What elroy printed after leaving the full-screen interface reaches the screen.
                std::thread::sleep(Duration::from_millis(200));
                return self.text();
            }
            assert!(
                start.elapsed() < WAIT,
                "elroy did not exit; the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for the session to be open: the status bar names the model (the first screen is drawn
/// before the home is opened).
pub(crate) fn ready(screen: &Screen) {
    screen.wait_for("the session", |t| {
        t.contains("testkit-model") && t.contains("INSERT")
    });
}

#[test]
fn a_reply_streams_in_visibly_before_it_ends() {
    let server = MockServer::start();
    let (held, release) = Reply::held("The first words arrive", " and then the rest of it.");
    server.push(held);
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 80);
    ready(&screen);
    screen.send("hello there\r");
    let during = screen.wait_text("The first words arrive");
    assert!(!during.contains("the rest of it"), "{during}");
    assert!(during.contains("hello there"), "{during}");
    release.release();
    screen.wait_text("and then the rest of it.");
    let _ = screen.quit();
}

#[test]
fn ctrl_c_cancels_mid_stream_and_the_next_message_works() {
    let server = MockServer::start();
    let (held, _release) = Reply::held("Partial answer so far", " never sent");
    server.push(held);
    server.push(Reply::text("The second answer."));
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 100);
    ready(&screen);
    screen.send("first\r");
    screen.wait_text("Partial answer so far");
    screen.send("\x03");
    let cancelled = screen.wait_text("(cancelled)");
    assert!(cancelled.contains("Partial answer so far"), "{cancelled}");
    screen.send("second\r");
    screen.wait_text("The second answer.");
    assert_eq!(server.chat_requests().len(), 2);
    let _ = screen.quit();
}

#[test]
fn a_resize_redraws_and_shows_the_sidebar_when_wide_enough() {
    let server = MockServer::start();
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 80);
    ready(&screen);
    let narrow = screen.text();
    assert!(
        !narrow.contains("│ Agenda"),
        "no sidebar below 100 columns:\n{narrow}"
    );
    screen.resize(30, 120);
    screen.wait_text("│ Agenda");
    screen.resize(24, 80);
    screen.wait_for("the sidebar to hide again", |t| {
        !t.contains("│ Agenda") && t.contains("INSERT")
    });
    let _ = screen.quit();
}

#[test]
fn a_tool_runs_from_the_palette_and_c_in_the_agenda_tab_completes_it() {
    let server = MockServer::start();
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 30, 120);
    ready(&screen);
    // Ctrl+P, filter, Enter opens the form; the required field first.
    screen.send("\x10");
    screen.wait_text("Palette");
    screen.send("add_agenda_item");
    screen.wait_text("> add_agenda_item");
    screen.send("\r");
    screen.wait_text("*text:");
    screen.send("Buy oat milk\r");
    screen.wait_text("⚙ add_agenda_item");
    // The Agenda tab (refreshed after the tool) lists it; browse mode, `c` completes it.
    screen.wait_for("the item in the Agenda tab", |t| {
        t.lines().any(|l| l.contains("│Buy oat milk"))
    });
    screen.send("\x1b");
    screen.wait_text("BROWSE");
    screen.send("g");
    // `c` asks first; the second completes.
    screen.send("c");
    screen.wait_text("c again to complete 'Buy oat milk'");
    screen.send("c");
    screen.wait_text("⚙ complete_agenda_item");
    screen.wait_for("the Agenda tab without the item", |t| {
        !t.lines().any(|l| l.contains("│Buy oat milk"))
    });
    screen.send("\x1b");
    screen.wait_text("INSERT");
    screen.quit();
    assert!(
        server.chat_requests().is_empty(),
        "no model request for tools run from the interface"
    );
    let history = home.cmd().arg("history").output().unwrap();
    let text = common::stdout(&history);
    assert!(text.contains("complete_agenda_item"), "{text}");
    assert!(text.contains("add_agenda_item"), "{text}");
}

#[test]
fn slash_agenda_lists_without_a_model_request_and_unknown_words_list_the_commands() {
    let server = MockServer::start();
    let home = common::home_with_model(&server, "");
    let added = home.call("add_agenda_item", r#"{"text": "Water the ferns"}"#);
    assert!(added.status.success(), "{}", common::stderr(&added));
    // 80 columns: no sidebar, so the item can only come from the command's output.
    let mut screen = Screen::open(&home, &["chat"], 24, 80);
    ready(&screen);
    screen.send("/agenda\r");
    screen.wait_text("Water the ferns");
    screen.send("/nonsense\r");
    screen.wait_text("Unknown command /nonsense");
    // `/help` lists the keys after the commands, from the interface's key table.
    screen.send("/help\r");
    screen.wait_text("Esc, q — back");
    screen.quit();
    assert!(
        server.chat_requests().is_empty(),
        "{:?}",
        server.chat_requests().len()
    );
}

#[test]
fn a_due_item_that_comes_due_appears_as_a_reminder_without_any_key() {
    let server = MockServer::start();
    let home = common::home_with_model(&server, "");
    let screen = Screen::open(&home, &["chat"], 24, 120);
    ready(&screen);
    // Created by another process while the interface is open, due two seconds later.
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2);
    let args = serde_json::json!({
        "name": "Stretch break",
        "text": "Stand up and stretch",
        "trigger_time": at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    });
    let created = home.call("create_due_item", &args.to_string());
    assert!(created.status.success(), "{}", common::stderr(&created));
    let text = screen.wait_text("Stretch break — Stand up and stretch");
    assert!(text.contains('⏰'), "{text}");
    assert!(
        server.chat_requests().is_empty(),
        "the reminder needs no model request"
    );
    let _ = screen.quit();
}

#[test]
fn with_proactive_reminders_the_assistant_speaks_first_when_an_item_comes_due() {
    let server = MockServer::start();
    server.push(Reply::text("Time to stretch, as you asked."));
    let home = common::home_with_model(&server, "proactive_reminders: true\n");
    let screen = Screen::open(&home, &["chat"], 24, 120);
    ready(&screen);
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2);
    let args = serde_json::json!({
        "name": "Stretch break",
        "text": "Stand up and stretch",
        "trigger_time": at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    });
    let created = home.call("create_due_item", &args.to_string());
    assert!(created.status.success(), "{}", common::stderr(&created));
    screen.wait_text("Time to stretch, as you asked.");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1, "one turn, started by elroy");
    let sent = requests[0].body.to_string();
    assert!(
        sent.contains("Stretch break") && sent.contains("No message from the user"),
        "the model is told which item came due: {sent}"
    );
    assert!(
        sent.contains("\"tools\""),
        "tools stay on in a proactive turn"
    );
    let _ = screen.quit();
}

#[test]
fn a_turn_that_ends_while_background_work_runs_accepts_the_next_message_at_once() {
    let server = MockServer::start();
    server.push(Reply::text("First reply."));
    server.push(Reply::text("Second reply."));
    // The fast model (automatic memory after every message) answers slowly.
    let fast = MockServer::start();
    fast.delay(Duration::from_secs(8));
    fast.fallback(Reply::text("# Memory\nThe user said hello."));
    let extra = format!(
        "fast_model: testkit-fast\nfast_model_api_base: {}\nmessages_between_memory: 1\n",
        fast.base_url()
    );
    let home = common::home_with_model(&server, &extra);
    let mut screen = Screen::open(&home, &["chat"], 24, 80);
    ready(&screen);
    screen.send("hello\r");
    screen.wait_text("First reply.");
    screen.wait_text("memory and context work");
    screen.send("and again\r");
    let second = screen.wait_text("Second reply.");
    assert!(
        second.contains("memory and context work"),
        "the second reply came while the first one's background work still ran:\n{second}"
    );
    assert!(
        !fast.requests().is_empty(),
        "the background work asked the fast model"
    );
    // Quitting waits at most 5 s for the slow background work, then says it did not finish.
    let after = screen.quit();
    assert!(after.contains("did not finish"), "{after}");
}

#[test]
fn e_in_the_detail_view_opens_the_editor_and_the_view_shows_the_file_again() {
    let server = MockServer::start();
    let home = common::home_with_model(&server, "");
    let added = home.call("add_agenda_item", r#"{"text": "Plan the garden"}"#);
    assert!(added.status.success(), "{}", common::stderr(&added));
    let mut screen = Screen::open_with(
        &home,
        &["chat"],
        30,
        120,
        &[(
            "EDITOR",
            "sh -c 'printf \"\\nTomatoes along the fence\\n\" >> \"$0\"'",
        )],
    );
    ready(&screen);
    screen.wait_for("the item in the Agenda tab", |t| {
        t.lines().any(|l| l.contains("│Plan the garden"))
    });
    screen.send("\x1b");
    screen.wait_text("BROWSE");
    screen.send("g");
    screen.send("\r");
    screen.wait_text("e edit");
    screen.send("e");
    screen.wait_text("Tomatoes along the fence");
    screen.send("\x1b");
    screen.wait_for("the detail view to close", |t| {
        !t.contains("e edit") && t.contains("BROWSE")
    });
    screen.send("\x1b");
    screen.wait_text("INSERT");
    screen.quit();
    let files = std::fs::read_dir(home.home().join("agenda")).unwrap();
    let text: String = files
        .map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap())
        .collect();
    assert!(text.contains("Tomatoes along the fence"), "{text}");
}

#[test]
fn restart_session_re_executes_into_the_interface_with_a_hidden_resume_turn() {
    let server = MockServer::start();
    server
        .push(Reply::tool_call(
            "restart_session",
            r#"{"resume_message":"Say you are back."}"#,
        ))
        .push(Reply::text("Restarting now."))
        .push(Reply::text("I'm back and ready."));
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 100);
    ready(&screen);
    screen.send("please restart yourself\r");
    screen.wait_text("I'm back and ready.");
    let sent = server.chat_requests();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(!sent[2].has_tools(), "the resume turn is hidden: no tools");
    assert_eq!(
        sent[2].last_user_text().as_deref(),
        Some("Say you are back.")
    );
    let _ = screen.quit();
}

#[test]
fn a_plugin_panel_gets_its_own_sidebar_tab() {
    let server = MockServer::start();
    let probe = TestHome::new();
    let repo = probe.root().join("my-contrib");
    let home = common::home_with_model(
        &server,
        &format!("contrib_tools_path: [\"{}\"]\n", repo.display()),
    );
    let args = serde_json::json!({ "path": repo.display().to_string() }).to_string();
    let created = home.call("create_contrib_repo", &args);
    assert!(created.status.success(), "{}", common::stderr(&created));
    // Not trusted yet: the session says so in one line and has no panel tab.
    let screen = Screen::open(&home, &["chat"], 30, 120);
    ready(&screen);
    let first = screen.wait_text("2 plugins not run because not trusted");
    assert!(!first.contains("Hel…"), "{first}");
    let _ = screen.quit();
    let trusted = home
        .cmd()
        .args(["plugins", "trust"])
        .arg(repo.join("hello_tool"))
        .arg(repo.join("hello_panel"))
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", common::stderr(&trusted));
    let mut screen = Screen::open(&home, &["chat"], 30, 120);
    ready(&screen);
    // At 120 columns the panel's tab is on the row (abbreviated), not cut off silently.
    screen.wait_text("Hel…");
    screen.send("\x1b");
    screen.wait_text("BROWSE");
    // Left from the first tab wraps to the last one: the panel.
    screen.send("\x1b[D");
    screen.wait_text("This tab is drawn by hello_panel.");
    // Its number key reaches it too (the sixth tab), from another tab.
    screen.send("g");
    screen.wait_for("the Agenda tab", |t| {
        !t.contains("This tab is drawn by hello_panel.")
    });
    screen.send("6");
    screen.wait_text("This tab is drawn by hello_panel.");
    screen.send("\x1b");
    screen.wait_text("INSERT");
    let _ = screen.quit();
}

/// Tabs are drawn as spaces where they appear: an agenda item's text in the sidebar (a reported
/// case, `Pack:\tpassport`) and a code block in a reply (a Makefile recipe keeps its indent).
#[test]
fn tabs_show_as_spaces_in_the_sidebar_and_in_code_blocks() {
    let server = MockServer::start();
    server.push(Reply::text(
        "The recipe:\n\n```make\nall:\n\tcc -o hello hello.c\n```\n",
    ));
    let home = common::home_with_model(&server, "");
    let added = home.call("add_agenda_item", r#"{"text": "Pack:\tpassport"}"#);
    assert!(added.status.success(), "{}", common::stderr(&added));
    let mut screen = Screen::open(&home, &["chat"], 30, 120);
    ready(&screen);
    screen.wait_text("│Pack:   passport");
    screen.send("show me\r");
    screen.wait_text("    cc -o hello hello.c");
    let _ = screen.quit();
}

/// Every signal that ends elroy leaves the terminal as it found it: main screen, cursor shown,
/// mouse reporting and bracketed paste off, line mode; the exit status is 128 + the signal's
/// number. Cases: SIGTERM, SIGHUP and SIGINT (reported examples: `kill`, a closed window or
/// dropped ssh connection) and SIGQUIT (another ending signal).
#[test]
fn each_ending_signal_restores_the_terminal() {
    use rustix::process::Signal;
    for (signal, code) in [
        (Signal::TERM, 143),
        (Signal::HUP, 129),
        (Signal::INT, 130),
        (Signal::QUIT, 131),
    ] {
        let server = MockServer::start();
        let home = common::home_with_model(&server, "");
        let mut screen = Screen::open(&home, &["chat"], 24, 100);
        ready(&screen);
        let during = screen.modes();
        assert!(
            during.alternate && during.mouse && during.bracketed_paste && during.raw,
            "{during:?}"
        );
        screen.signal(signal);
        let status = screen.wait_exit();
        assert_eq!(status.code(), Some(code), "{signal:?}: {status}");
        assert_eq!(screen.modes(), RESTORED, "after {signal:?}");
    }
}

/// Ctrl+Z suspends like a shell job: the terminal is restored before elroy stops (a shell
/// with job control, as this test's own process group stands for, gets it back usable); on
/// SIGCONT the interface sets raw mode and the alternate screen up again and redraws with the
/// typed input intact, and Enter sends it.
#[test]
fn ctrl_z_suspends_and_sigcont_redraws_with_the_input_intact() {
    let server = MockServer::start();
    server.push(Reply::text("Sent after the pause."));
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::spawn(&home, &["chat"], 24, 100, &[], true);
    ready(&screen);
    screen.send("draft words");
    screen.wait_text("draft words");
    screen.send("\x1a");
    screen.wait_stopped();
    // The restoring bytes were written before the stop; the reader may still be parsing them.
    screen.wait_modes("the terminal restored while stopped", |m| m == RESTORED);
    screen.forget_screen();
    screen.signal(rustix::process::Signal::CONT);
    screen.wait_text("draft words");
    let modes = screen.wait_modes("the interface set up again", |m| {
        m.alternate && m.raw && m.mouse
    });
    assert!(modes.bracketed_paste, "{modes:?}");
    screen.send("\r");
    screen.wait_text("Sent after the pause.");
    let requests = server.chat_requests();
    let last = requests.last().unwrap().messages();
    assert_eq!(last.last().unwrap()["content"], "draft words");
    let _ = screen.quit();
}

/// An outside `kill -STOP` / `kill -CONT` (nothing restores the terminal before a SIGSTOP) is
/// handled as a resume: the shell's line mode set meanwhile is replaced by raw mode again, the
/// screen is drawn again, and Enter sends instead of inserting a newline.
#[test]
fn an_outside_stop_and_continue_puts_the_terminal_back_in_raw_mode() {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let server = MockServer::start();
    server.push(Reply::text("Enter still sends."));
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 100);
    ready(&screen);
    screen.send("after the stop");
    screen.wait_text("after the stop");
    screen.signal(rustix::process::Signal::STOP);
    screen.wait_stopped();
    // What a shell does when its job stops: line mode back.
    let mut termios = tcgetattr(&screen.master).unwrap();
    termios.local_modes |= LocalModes::ICANON | LocalModes::ECHO;
    tcsetattr(&screen.master, OptionalActions::Now, &termios).unwrap();
    assert!(!screen.modes().raw);
    screen.forget_screen();
    screen.signal(rustix::process::Signal::CONT);
    screen.wait_text("after the stop");
    screen.wait_modes("raw mode again", |m| m.raw && m.alternate);
    screen.send("\r");
    screen.wait_text("Enter still sends.");
    let _ = screen.quit();
}

/// Below the minimum size one line says the window is too small, and back at a usable size the
/// typed input shows without pressing Home. Cases: 101x5 (reported example: too few rows)
/// and 20x30 (too few columns).
#[test]
fn tiny_sizes_show_a_notice_and_the_input_comes_back() {
    let server = MockServer::start();
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 40, 120);
    ready(&screen);
    screen.send("typed before shrinking");
    screen.wait_text("typed before shrinking");
    for (rows, cols) in [(5, 101), (30, 20)] {
        screen.resize(rows, cols);
        let text = screen.wait_for("the too-small notice", |t| {
            t.split_whitespace().collect::<Vec<_>>().join(" ") == "window too small (needs 30×6)"
        });
        assert!(!text.contains("typed"), "{text}");
    }
    screen.resize(40, 120);
    screen.wait_for("the input again", |t| {
        t.contains("typed before shrinking") && t.contains("INSERT")
    });
    screen.send("\x03");
    let _ = screen.quit();
}

/// Backspace deletes what a person sees as one character, and the model receives exactly what
/// the input shows. Cases: a ZWJ sequence (reported example: `👩‍🔬x`, Backspace twice, `ok`
/// sent `👩\u{200d}ok`) and a flag (two regional indicators).
#[test]
fn backspace_deletes_a_whole_grapheme_and_the_model_gets_what_is_shown() {
    let server = MockServer::start();
    server.push(Reply::text("First reply."));
    server.push(Reply::text("Second reply."));
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 100);
    ready(&screen);
    for (typed, expected, reply) in [
        ("👩\u{200d}🔬x\x7f\x7fok\r", "ok", "First reply."),
        ("go 🇵🇹\x7ffar\r", "go far", "Second reply."),
    ] {
        screen.send(typed);
        screen.wait_text(reply);
        let requests = server.chat_requests();
        let messages = requests.last().unwrap().messages();
        assert_eq!(messages.last().unwrap()["content"], expected);
    }
    let _ = screen.quit();
}

/// Without a terminal able to draw a screen the line chat runs and says so in one line, with no
/// alternate screen. Cases: `TERM=dumb` (a reported case) and `TERM` unset.
#[test]
fn a_dumb_or_missing_term_uses_the_line_chat() {
    for term in [Some("dumb"), None] {
        let server = MockServer::start();
        let home = common::home_with_model(&server, "");
        let mut screen = Screen::spawn(&home, &["chat"], 24, 100, &[("TERM", term)], false);
        screen.wait_text("the line chat runs instead of the full-screen interface");
        screen.wait_text("/help for commands");
        screen.send("/exit\r");
        let status = screen.wait_exit();
        assert!(status.success(), "{term:?}: {status}");
        let raw = screen.raw.lock().unwrap().clone();
        let raw = String::from_utf8_lossy(&raw);
        assert!(!raw.contains("\x1b[?1049h"), "{term:?}: {raw:?}");
        assert!(!screen.modes().alternate);
    }
}

/// A paste start marker without its end marker cannot lock the keyboard: after about a second
/// the text so far becomes input and keys work again. Cases: `ESC[200~abc` then typing and
/// Enter (a reported case; the model receives `abcdef`), and a multi-line paste cut short,
/// then Esc (browse mode) and Ctrl+C.
#[test]
fn an_unterminated_paste_times_out_into_the_input() {
    let server = MockServer::start();
    server.push(Reply::text("Got the paste."));
    let home = common::home_with_model(&server, "");
    let mut screen = Screen::open(&home, &["chat"], 24, 100);
    ready(&screen);
    screen.send("\x1b[200~abc");
    screen.wait_text("abc");
    screen.send("def\r");
    screen.wait_text("Got the paste.");
    let requests = server.chat_requests();
    let messages = requests.last().unwrap().messages();
    assert_eq!(messages.last().unwrap()["content"], "abcdef");
    screen.send("\x1b[200~first line\nsecond");
    screen.wait_text("second");
    screen.send("\x1b");
    screen.wait_text("BROWSE");
    screen.send("\x1b");
    screen.wait_text("INSERT");
    screen.send("\x03");
    screen.wait_for("the input cleared", |t| !t.contains("second"));
    let _ = screen.quit();
}
