//! `elroy tools …`, `elroy config`, `elroy version`: the command-line contract of the first issue.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::{TestHome, stderr, stdout};

#[test]
fn read_file_returns_elroys_json_shape() {
    let home = TestHome::new();
    std::fs::write(home.root().join("notes.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    let out = home.call(
        "read_file",
        r#"{"path":"notes.txt","start_line":"2","end_line":"3"}"#,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "{\"path\":\"notes.txt\",\"start_line\":2,\"end_line\":3,\"total_lines\":4,\"truncated\":true,\"content\":\"2: beta\\n3: gamma\"}\n"
    );
}

#[test]
fn read_file_of_the_workspace_manifest() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tools",
            "call",
            "read_file",
            "--args",
            r#"{"path":"Cargo.toml","start_line":"2","end_line":"3"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let lines: Vec<&str> = manifest.lines().collect();
    assert_eq!(value["path"], "Cargo.toml");
    assert_eq!(
        (value["start_line"].as_i64(), value["end_line"].as_i64()),
        (Some(2), Some(3))
    );
    assert_eq!(
        value["content"],
        format!("2: {}\n3: {}", lines[1], lines[2])
    );
}

#[test]
fn failures_exit_1_with_the_error_on_stderr() {
    let home = TestHome::new();
    std::fs::create_dir(home.root().join("a_dir")).unwrap();
    for (args, message) in [
        ("[1,2]", "arguments must be a JSON object, got array"),
        ("{}", "missing required argument 'path'"),
        (
            r#"{"path":"a_dir"}"#,
            "Path is a directory, not a file: a_dir",
        ),
        (
            r#"{"path":"missing.txt"}"#,
            "Path does not exist: missing.txt",
        ),
        (
            r#"{"path":"#,
            "arguments are not valid JSON (8 bytes received); the call was not executed",
        ),
    ] {
        let out = home.call("read_file", args);
        assert_eq!(out.status.code(), Some(1), "{args}");
        assert_eq!(stdout(&out), "", "{args}");
        assert_eq!(
            stderr(&out),
            format!("Error invoking tool read_file: {message}\n"),
            "{args}"
        );
    }
}

#[test]
fn unknown_tool_names_the_available_tools() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .args(["tools", "call", "no_such_tool"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "Error invoking tool no_such_tool: Unknown tool 'no_such_tool'. Available tools: "
        ),
        "{err}"
    );
    for name in ["get_current_date", "ls", "pwd", "read_file"] {
        assert!(err.contains(name), "{name} missing from {err}");
    }
}

#[test]
fn args_absent_or_empty_mean_an_empty_object() {
    let home = TestHome::new();
    let work = home.root().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("a.txt"), "a").unwrap();
    let a = home
        .cmd()
        .current_dir(&work)
        .args(["tools", "call", "ls"])
        .output()
        .unwrap();
    let b = home
        .cmd()
        .current_dir(&work)
        .args(["tools", "call", "ls", "--args", ""])
        .output()
        .unwrap();
    assert!(a.status.success() && b.status.success(), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
    assert!(stdout(&a).starts_with(
        r#"{"path":".","type":"dir","recursive":true,"max_entries":50,"max_depth":2,"#
    ));
}

#[test]
fn fixed_clock_and_zone() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-11-30T03:53:00Z")
        .env("TZ", "IST-5:30")
        .args(["tools", "call", "get_current_date"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "Monday, November 30, 2026 09:23 AM IST\n");
    let out = home
        .cmd()
        .env("ELROY_NOW", "2026-11-30T03:53:00Z")
        .env("ELROY_TIMEZONE", "America/New_York")
        .args(["tools", "call", "get_current_date"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "Sunday, November 29, 2026 10:53 PM EST\n");
    let bad = home
        .cmd()
        .env("ELROY_NOW", "soon")
        .args(["tools", "call", "pwd"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("ELROY_NOW"), "{}", stderr(&bad));
}

fn config_line(home: &TestHome, configure: impl Fn(&mut std::process::Command)) -> String {
    let mut cmd = home.cmd();
    cmd.arg("config");
    configure(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .find(|l| l.starts_with("max_tokens "))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn config_shows_each_layer_and_its_source() {
    let home = TestHome::new();
    assert_eq!(config_line(&home, |_| {}), "max_tokens = 100000 (default)");
    std::fs::create_dir_all(home.home()).unwrap();
    let file = home.home().join("elroy.conf.yaml");
    std::fs::write(&file, "max_tokens: 2000\n").unwrap();
    assert_eq!(
        config_line(&home, |_| {}),
        format!("max_tokens = 2000 ({})", file.display())
    );
    assert_eq!(
        config_line(&home, |c| {
            c.env("ELROY_MAX_TOKENS", "3000");
        }),
        "max_tokens = 3000 (environment variable ELROY_MAX_TOKENS)"
    );
    let other = home.root().join("other.yaml");
    std::fs::write(&other, "max_tokens: 4000\n").unwrap();
    assert_eq!(
        config_line(&home, |c| {
            c.arg("--config").arg(&other);
        }),
        format!("max_tokens = 4000 ({})", other.display())
    );
}

#[test]
fn config_rejects_bad_values_naming_the_key() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .env("ELROY_MAX_TOKENS", "abc")
        .arg("config")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "elroy: invalid value for max_tokens (environment variable ELROY_MAX_TOKENS): expected an integer, got \"abc\"\n"
    );
}

#[test]
fn config_masks_secrets() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .env("OPENAI_API_KEY", "sk-test-1234567890abcdef")
        .arg("config")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(!text.contains("sk-test-1234567890"), "{text}");
    assert!(text.contains("****cdef"), "{text}");
}

#[test]
fn version_schema_list_and_completions() {
    let home = TestHome::new();
    let version = home.cmd().arg("version").output().unwrap();
    assert_eq!(
        stdout(&version),
        format!("elroy {}\n", env!("CARGO_PKG_VERSION"))
    );
    let schema = home
        .cmd()
        .args(["tools", "schema", "pwd"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&schema),
        "{\n  \"type\": \"function\",\n  \"function\": {\n    \"name\": \"pwd\",\n    \"description\": \"Return the current working directory for filesystem tool calls.\"\n  }\n}\n"
    );
    let unknown = home
        .cmd()
        .args(["tools", "schema", "nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(1));
    let list = home
        .cmd()
        .args(["tools", "list", "--names"])
        .output()
        .unwrap();
    let names: Vec<String> = stdout(&list).lines().map(str::to_owned).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "built-in tools are listed sorted by name");
    let completions = home.cmd().args(["completions", "bash"]).output().unwrap();
    assert!(stdout(&completions).contains("elroy"));
}

#[test]
fn usage_errors_exit_2() {
    let home = TestHome::new();
    let out = home.cmd().args(["tools", "frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = home.cmd().args(["tools", "call"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn user_token_selects_the_user_home() {
    let home = TestHome::new();
    let out = home
        .cmd()
        .args(["--user", "alice", "config"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains(&format!(
        "user home:   {}",
        home.home().join("users/alice").display()
    )));
    let bad = home
        .cmd()
        .args(["--user", "../x", "config"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("invalid user_token '../x'"));
}

/// Only what a command needs is opened (the kind: commands and tools that use no store open no
/// store). `state.db` is not a database and an agenda file is unreadable: `tools list`, `tools
/// schema` and `tools call get_current_date` work and say nothing about either, and leave
/// `state.db` as it was; a tool that needs the database gets a tool error naming the cause.
#[test]
fn commands_that_use_no_store_do_not_open_the_database_or_scan_stores() {
    let home = TestHome::new();
    let elroy_home = home.home();
    std::fs::create_dir_all(elroy_home.join("agenda")).unwrap();
    let garbage = b"this is not a SQLite database, and must stay exactly as it is\n".repeat(64);
    std::fs::write(elroy_home.join("state.db"), &garbage).unwrap();
    std::fs::write(
        elroy_home.join("agenda").join("Broken.md"),
        "---\nstatus: [unclosed\n---\nbody\n",
    )
    .unwrap();
    for args in [
        &["tools", "list", "--names"][..],
        &["tools", "schema", "get_current_date"],
        &["tools", "call", "get_current_date"],
        &["version"],
    ] {
        let out = home.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
        assert!(!stdout(&out).is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read(elroy_home.join("state.db")).unwrap(), garbage);
    // A tool that needs the database: a tool error with the cause, exit 1.
    let out = home.call("get_user_preferred_name", "{}");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("Error invoking tool get_user_preferred_name: ")
            && err.contains("could not be opened"),
        "{err}"
    );
    assert_eq!(std::fs::read(elroy_home.join("state.db")).unwrap(), garbage);
}

/// How the test's reader treats `elroy`'s standard output.
#[derive(Clone, Copy, Debug)]
enum Reader {
    /// The read end is closed before elroy starts: its first write finds the pipe closed.
    ClosedAtStart,
    /// One line is read, then the read end is closed (`| head -1`).
    ClosesAfterOneLine,
}

/// Runs `elroy ARGS` in `home` with `reader` on its standard output; returns (exit code, stderr).
fn run_into_closed_pipe(home: &TestHome, args: &[&str], reader: Reader) -> (Option<i32>, String) {
    use std::io::BufRead;
    use std::process::Stdio;

    let mut cmd = home.cmd();
    cmd.args(args)
        .env("ELROY_NOW", "2026-11-30T10:00:00Z")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if args == ["mcp"] {
        // A client that sends `initialize` and goes away before the answer (`elroy mcp | true`).
        let request = home.home().join("initialize.jsonl");
        std::fs::write(
            &request,
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
        )
        .unwrap();
        cmd.stdin(std::fs::File::open(request).unwrap());
    }
    let out = match reader {
        Reader::ClosedAtStart => {
            let (read_end, write_end) = std::io::pipe().unwrap();
            drop(read_end);
            cmd.stdout(write_end);
            let child = cmd.spawn().unwrap();
            // The parent's copy of the write end went with `cmd`'s `Stdio`; drop `cmd` too.
            drop(cmd);
            child.wait_with_output().unwrap()
        }
        Reader::ClosesAfterOneLine => {
            cmd.stdout(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            let mut first = String::new();
            let mut lines = std::io::BufReader::new(child.stdout.take().unwrap());
            lines.read_line(&mut first).unwrap();
            drop(lines);
            child.wait_with_output().unwrap()
        }
    };
    (out.status.code(), stderr(&out))
}

/// Kind: the reader of elroy's standard output goes away early (`elroy config | head -1`). Every command that prints stops quietly: exit 0, no panic (Rust's
/// `println!` panics with exit 101), no error line, and its work still happens (the turn runs,
/// the memory is written). Both a pipe closed before the first write (always a broken pipe)
/// and one closed after the first line are tried. `elroy mcp` too, with a client that sends
/// `initialize` and leaves (found by the adversarial run: it printed the transport error, exit 1).
#[test]
fn every_printing_command_stops_quietly_on_a_closed_pipe() {
    let server = elroy_testkit::MockServer::start();
    server.fallback(elroy_testkit::Reply::text(
        "First line of the reply.\nSecond line.\nThird line.",
    ));
    let commands: &[&[&str]] = &[
        &["version"],
        &["--version"],
        &["--help"],
        &["help"],
        &["tools", "--help"],
        &["config"],
        &["config", "--json"],
        &["tools", "list"],
        &["tools", "list", "--names"],
        &["tools", "schema"],
        &["tools", "schema", "read_file"],
        &["tools", "call", "pwd"],
        &["completions", "bash"],
        &["completions", "zsh"],
        &["remember", "The boat leaves at nine.\nBring the blue bag."],
        &["history"],
        &["undo"],
        &["message", "hello there"],
        &["message", "--json", "hello there"],
        &["mcp"],
    ];
    for reader in [Reader::ClosedAtStart, Reader::ClosesAfterOneLine] {
        let home = common::home_with_model(&server, "");
        for args in commands {
            if args[0] == "undo" {
                // Something to undo.
                let out = home.call("create_memory", r#"{"name":"Undo me","text":"x"}"#);
                assert!(out.status.success(), "{}", stderr(&out));
            }
            let (code, err) = run_into_closed_pipe(&home, args, reader);
            assert_eq!(code, Some(0), "elroy {args:?} ({reader:?}): {err}");
            for line in err.lines() {
                assert!(
                    line.starts_with("warning: "),
                    "elroy {args:?} ({reader:?}) wrote an error line: {line}"
                );
            }
        }
        // The work behind the output still happened: the memories are recorded.
        let history = home.cmd().arg("history").output().unwrap();
        assert!(
            stdout(&history).contains("create_memory"),
            "{}",
            stdout(&history)
        );
    }
    let turns = server
        .chat_requests()
        .iter()
        .filter(|r| r.last_user_text().as_deref() == Some("hello there"))
        .count();
    assert!(turns >= 4, "{turns} turns reached the model");
}

/// Kind: the reader of elroy's standard error goes away (`elroy … 2>&1 >/dev/null | true`) while
/// elroy has something to say there: it writes without panicking (Rust's `eprintln!` exits 101
/// on a closed pipe) and the command does its work. The built-in model is missing, so a question
/// warns of it; a write; then `elroy models embed`, which warns and reports its stopped progress,
/// and fails as it should (1), not by a panic.
#[test]
fn a_closed_standard_error_does_not_stop_the_command() {
    let home = TestHome::new();
    let cases: [(&[&str], i32); 3] = [
        (
            &[
                "tools",
                "call",
                "examine_memories",
                "--args",
                r#"{"question":"boat"}"#,
            ],
            0,
        ),
        (&["remember", "The boat leaves at nine."], 0),
        (&["models", "embed"], 1),
    ];
    for (args, code) in cases {
        let (read_end, write_end) = std::io::pipe().unwrap();
        drop(read_end);
        let mut cmd = home.cmd();
        cmd.args(args)
            .env("ELROY_EMBEDDING_MODEL", "builtin")
            .env("ELROY_EMBEDDING_MODEL_PATH", "/nonexistent/model")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(write_end);
        let child = cmd.spawn().unwrap();
        drop(cmd);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "elroy {args:?}: {}",
            stdout(&out)
        );
    }
    let out = home.call("examine_memories", r#"{"question":"boat"}"#);
    assert!(
        stdout(&out).contains("The boat leaves at nine."),
        "{}",
        stdout(&out)
    );
}

/// `elroy config` shows the chat model that will be used and why, not `null`.
#[test]
fn config_shows_the_inferred_chat_model() {
    let home = TestHome::new();
    let line = |configure: &dyn Fn(&mut std::process::Command)| {
        let mut cmd = home.cmd();
        cmd.arg("config");
        configure(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
            .lines()
            .find(|l| l.starts_with("chat_model "))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        line(&|c| {
            c.env("OPENAI_API_KEY", "sk-test");
        }),
        "chat_model = openai/gpt-5 (inferred from OPENAI_API_KEY)"
    );
    assert_eq!(
        line(&|_| {}),
        "chat_model = none (no chat_model and no provider key; see docs/models.md)"
    );
    assert_eq!(
        line(&|c| {
            c.args(["--model", "gpt-4o"]);
        }),
        "chat_model = gpt-4o (command-line flag --model)"
    );
}
