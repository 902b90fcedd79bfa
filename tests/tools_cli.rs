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
