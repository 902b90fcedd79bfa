//! Contrib plugins end to end (`docs/tools.md#codex-and-contrib-plugins`): the model creates a
//! contrib repository with `create_contrib_repo`; after a restart (a new `elroy` process) its
//! sample plugin tool is offered to the model and called; a plugin that prints garbage for
//! `--schema` is skipped with a warning.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::process::{Output, Stdio};

use common::{TestHome, stderr, stdout};
use elroy_testkit::{MockServer, Reply};

fn home_for(server: &MockServer, extra_config: &str) -> TestHome {
    common::home_with_model(server, extra_config)
}

fn message(home: &TestHome, text: &str) -> Output {
    home.cmd()
        .env("ELROY_NOW", "2026-11-30T10:00:00Z")
        .args(["message", text])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn contrib_plugin_is_offered_and_called_after_a_restart() {
    let server = MockServer::start();
    let probe = TestHome::new();
    let repo = probe.root().join("my-contrib");
    // The model's calls that run programs need a person's yes, and `elroy message` has nobody to
    // ask: the person allowed these two beforehand (docs/security.md#rules).
    let home = home_for(
        &server,
        &format!(
            "contrib_tools_path: [\"{}\"]\npermissions:\n  allow: [create_contrib_repo, hello_contrib]\n",
            repo.display()
        ),
    );

    // Session 1: the model creates the repository.
    server
        .push(Reply::tool_call(
            "create_contrib_repo",
            serde_json::json!({ "path": repo.display().to_string() }).to_string(),
        ))
        .push(Reply::text("Created your contrib repo."));
    let first = message(&home, "Make me a contrib repo for plugins");
    assert!(first.status.success(), "{}", stderr(&first));
    let requests = server.chat_requests();
    assert!(
        !requests[0]
            .tool_names()
            .contains(&"hello_contrib".to_owned())
    );
    assert_eq!(
        requests[1].tool_results().last().unwrap().1,
        format!(
            "Created contrib repo at {r} (added hello_tool, hello_panel, README.md, .gitignore). Set contrib_tools_path to {r} and restart Elroy to load its tools and panels.",
            r = repo.display()
        )
    );
    assert!(repo.join("hello_tool").is_file());

    // Session 2 (a new process): the plugin tool is offered after the built-ins and called.
    server
        .push(Reply::tool_call("hello_contrib", r#"{"name":"team"}"#))
        .push(Reply::text("Said hello."));
    let second = message(&home, "Greet the team with the contrib tool");
    assert!(second.status.success(), "{}", stderr(&second));
    let requests = server.chat_requests();
    let names = requests[2].tool_names();
    assert_eq!(names.last().map(String::as_str), Some("hello_contrib"));
    assert!(
        names.contains(&"fetch_page".to_owned())
            && names.contains(&"list_codex_sessions".to_owned())
    );
    assert_eq!(
        requests[3].tool_results().last().unwrap().1,
        "Hello, team! (from the Elroy contrib repo)"
    );

    // `elroy tools list` shows where the plugin tool comes from.
    let list = home.cmd().args(["tools", "list"]).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    let line = stdout(&list)
        .lines()
        .find(|l| l.starts_with("hello_contrib"))
        .map(str::to_owned)
        .unwrap();
    assert!(
        line.ends_with(&format!(
            "Greet someone from the contrib plugin directory. [plugin: {}]",
            repo.join("hello_tool").display()
        )),
        "{line}"
    );
}

#[test]
fn garbage_schema_plugin_is_skipped_with_a_warning() {
    let home = TestHome::new();
    let contrib = home.home().join("contrib");
    std::fs::create_dir_all(&contrib).unwrap();
    let write = |name: &str, script: &str| {
        let path = contrib.join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let garbage = write(
        "garbage",
        "#!/bin/sh\necho 'usage: garbage [options] <<>>'\n",
    );
    write(
        "shout",
        "#!/bin/sh\n[ \"$1\" = --schema ] && echo '{\"type\":\"function\",\"function\":{\"name\":\"shout\",\"description\":\"Shout.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}}' && exit 0\ntr a-z A-Z\n",
    );
    let list = home
        .cmd()
        .args(["tools", "list", "--names"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(
        stderr(&list).contains(&format!(
            "warning: plugin {}: --schema output is not valid JSON",
            garbage.display()
        )),
        "{}",
        stderr(&list)
    );
    let names = stdout(&list);
    assert_eq!(names.lines().last(), Some("shout"));
    assert!(!names.contains("garbage"));
    let called = home.call("shout", r#"{"text":"hi there"}"#);
    assert_eq!(stdout(&called).trim_end(), "{\"TEXT\":\"HI THERE\"}");
}
