//! Contrib plugins end to end (`docs/tools.md#codex-and-contrib-plugins`): the model creates a
//! contrib repository with `create_contrib_repo`; its sample plugins are not run until the person
//! trusts them; after that and a restart (a new `elroy` process) its sample plugin tool is offered
//! to the model and called; a plugin that prints garbage for `--schema` is skipped with a
//! warning; an untrusted or changed plugin is run by no command (`docs/tool-rules.md#plugin-trust`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
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
            "Created contrib repo at {r} (added hello_tool, hello_panel, README.md, .gitignore). Set contrib_tools_path to {r} and restart Elroy to load its tools and panels. Elroy runs them only after the person has read and trusted them: elroy plugins trust {r}/hello_tool {r}/hello_panel",
            r = repo.display()
        )
    );
    assert!(repo.join("hello_tool").is_file());

    // What the tool wrote is not run until the person trusts it, with the command it gave.
    let untrusted = home
        .cmd()
        .args(["tools", "list", "--names"])
        .output()
        .unwrap();
    assert!(!stdout(&untrusted).contains("hello_contrib"));
    assert!(
        stderr(&untrusted).contains(
            "2 plugins not run because not trusted: hello_panel (new), hello_tool (new);"
        ),
        "{}",
        stderr(&untrusted)
    );
    let trusted = home
        .cmd()
        .args(["plugins", "trust"])
        .arg(repo.join("hello_tool"))
        .arg(repo.join("hello_panel"))
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));

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
    // Both are trusted first: the garbage is then probed (and skipped), not left unrun.
    let trusted = home
        .cmd()
        .args(["plugins", "trust", "--all"])
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
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

/// A plugin `name` in `dir` declaring the tool `name` and a panel; every run, with any argument,
/// appends `{name} {args}` to `marker`. `variant` changes its bytes, not what it does.
fn marked(dir: &Path, name: &str, marker: &Path, variant: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\n# {variant}\necho \"{name} $*\" >> '{marker}'\n\
         if [ \"$1\" = --schema ]; then\n  \
         echo '[{{\"type\":\"function\",\"function\":{{\"name\":\"{name}\",\"description\":\"Marked.\"}}}},{{\"type\":\"panel\",\"title\":\"{name} panel\"}}]'\n  exit 0\nfi\n\
         echo 'ran {name}'\n",
        marker = marker.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The lines the marker file holds: one per run of a marked plugin.
fn runs(marker: &Path) -> Vec<String> {
    std::fs::read_to_string(marker)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// How many lines of `text` are the untrusted-plugins summary.
fn summaries(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("not run because not trusted"))
        .count()
}

/// `elroy mcp` of `home`, spoken to line by line: `initialize`, `tools/list`, a `tools/call` of
/// `tool`; the listed names and the call's answer.
fn mcp_list_and_call(home: &TestHome, tool: &str) -> (Vec<String>, serde_json::Value) {
    use std::io::{BufRead, Write};
    let mut child = home
        .cmd()
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |message: serde_json::Value, answer: bool| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        answer.then(|| {
            serde_json::from_str::<serde_json::Value>(&lines.next().unwrap().unwrap()).unwrap()
        })
    };
    ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        true,
    );
    ask(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        false,
    );
    let listed = ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        true,
    )
    .unwrap();
    let called = ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}}),
        true,
    )
    .unwrap();
    drop(stdin);
    child.wait().unwrap();
    let names = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    (names, called)
}

/// Kind: a plugin elroy has not been told to trust, in `contrib/` and in a configured plugin
/// path. No command runs it — not for `--schema`, not for a call — and each says so in one line;
/// `elroy plugins` and `elroy doctor` list both; once trusted, it works as before.
#[test]
fn an_untrusted_plugin_is_run_by_no_command_until_trusted() {
    let server = MockServer::start();
    let probe = TestHome::new();
    let extra = probe.root().join("my-plugins");
    let home = home_for(
        &server,
        &format!("custom_tools_path: [\"{}\"]\n", extra.display()),
    );
    let marker = probe.root().join("ran.log");
    let in_contrib = marked(&home.home().join("contrib"), "marked", &marker, "1");
    let configured = marked(&extra, "other", &marker, "1");

    // remember, tools list, tools schema, tools call: one summary line each, nothing run.
    let remembered = home
        .cmd()
        .args(["remember", "--name", "Milk", "Buy oat milk"])
        .output()
        .unwrap();
    let list = home
        .cmd()
        .args(["tools", "list", "--names"])
        .output()
        .unwrap();
    let schema = home.cmd().args(["tools", "schema"]).output().unwrap();
    let call = home.call("marked", "{}");
    for out in [&remembered, &list, &schema] {
        assert!(out.status.success(), "{}", stderr(out));
    }
    assert!(!call.status.success());
    for out in [&remembered, &list, &schema, &call] {
        assert_eq!(summaries(&stderr(out)), 1, "{}", stderr(out));
        assert!(
            stderr(out).contains(
                "warning: 2 plugins not run because not trusted: marked (new), other (new); \
                 `elroy plugins` lists them, `elroy plugins trust PATH` trusts one after you \
                 have read it"
            ),
            "{}",
            stderr(out)
        );
    }
    assert!(!stdout(&list).lines().any(|l| l == "marked" || l == "other"));
    assert!(!stdout(&schema).contains("Marked."));
    assert!(
        stderr(&call).contains("Unknown tool 'marked'"),
        "{}",
        stderr(&call)
    );

    // A model turn is not offered the tools.
    server.push(Reply::text("Hello."));
    let turn = message(&home, "hi");
    assert!(turn.status.success(), "{}", stderr(&turn));
    assert_eq!(summaries(&stderr(&turn)), 1, "{}", stderr(&turn));
    let offered = server.chat_requests().last().unwrap().tool_names();
    assert!(!offered.iter().any(|n| n == "marked" || n == "other"));

    // elroy mcp neither lists nor runs it.
    let (names, called) = mcp_list_and_call(&home, "marked");
    assert!(names.contains(&"create_memory".to_owned()));
    assert!(
        !names.iter().any(|n| n == "marked" || n == "other"),
        "{names:?}"
    );
    assert!(
        called["result"]["isError"] == true || called["error"].is_object(),
        "{called}"
    );
    assert_eq!(runs(&marker), Vec::<String>::new());

    // elroy plugins and elroy doctor list both, and run neither.
    let plugins = home.cmd().arg("plugins").output().unwrap();
    assert!(plugins.status.success(), "{}", stderr(&plugins));
    assert_eq!(
        stdout(&plugins),
        format!(
            "untrusted  {}  (new)\nuntrusted  {}  (new)\n",
            in_contrib.display(),
            configured.display()
        )
    );
    let doctor = home.cmd().arg("doctor").output().unwrap();
    assert_eq!(doctor.status.code(), Some(1), "{}", stdout(&doctor));
    for path in [&in_contrib, &configured] {
        assert!(
            stdout(&doctor).contains(&format!(
                "plugins: {p} is not trusted (new), so elroy does not run it; read it, then run \
                 `elroy plugins trust {p}`\n",
                p = path.display()
            )),
            "{}",
            stdout(&doctor)
        );
    }
    assert_eq!(runs(&marker), Vec::<String>::new());

    // `trust` needs paths or --all; a path that is no plugin trusts nothing.
    let bare = home.cmd().args(["plugins", "trust"]).output().unwrap();
    assert_eq!(bare.status.code(), Some(2));
    let readme = home.home().join("contrib/README.md");
    std::fs::write(&readme, "notes\n").unwrap();
    let wrong = home
        .cmd()
        .args(["plugins", "trust"])
        .arg(&in_contrib)
        .arg(&readme)
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        stderr(&wrong).contains("README.md: not a plugin"),
        "{}",
        stderr(&wrong)
    );
    assert!(!home.home().join("plugins-trusted.json").exists());

    // Trusted (both kinds, one by --all): they run as before.
    let trusted = home
        .cmd()
        .args(["plugins", "trust"])
        .arg(&in_contrib)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let list: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.home().join("plugins-trusted.json")).unwrap())
            .unwrap();
    assert_eq!(
        stdout(&trusted),
        format!(
            "trusted {}  sha256:{}\n",
            in_contrib.display(),
            list["plugins"][0]["sha256"].as_str().unwrap()
        )
    );
    let all = home
        .cmd()
        .args(["plugins", "trust", "--all"])
        .output()
        .unwrap();
    assert!(stdout(&all).starts_with(&format!("trusted {}  sha256:", configured.display())));
    let called = home.call("marked", "{}");
    assert_eq!(stdout(&called), "ran marked\n", "{}", stderr(&called));
    assert_eq!(summaries(&stderr(&called)), 0, "{}", stderr(&called));
    assert_eq!(stdout(&home.call("other", "{}")), "ran other\n");
    let ran = runs(&marker);
    assert!(ran.contains(&"marked --schema".to_owned()) && ran.contains(&"marked ".to_owned()));
    let plugins = home.cmd().arg("plugins").output().unwrap();
    assert_eq!(
        stdout(&plugins),
        format!(
            "trusted  {}\ntrusted  {}\n",
            in_contrib.display(),
            configured.display()
        )
    );
}

/// Kind: a trusted plugin that changes is untrusted again — its content edited in place (in
/// `contrib/`), or its symlink pointed at another file with the same bytes (in a configured
/// path). Neither runs; `elroy plugins` and `elroy doctor` say why; untrusting works on both.
#[test]
fn a_changed_plugin_is_untrusted_again() {
    let server = MockServer::start();
    let probe = TestHome::new();
    let extra = probe.root().join("my-plugins");
    let home = home_for(
        &server,
        &format!("contrib_tools_path: [\"{}\"]\n", extra.display()),
    );
    let marker = probe.root().join("ran.log");
    let edited = marked(&home.home().join("contrib"), "edited", &marker, "1");
    let store = probe.root().join("store");
    let one = marked(&store, "linked", &marker, "same");
    let two = store.join("linked-copy");
    std::fs::copy(&one, &two).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    let link = extra.join("linked");
    std::os::unix::fs::symlink(&one, &link).unwrap();
    let trusted = home
        .cmd()
        .args(["plugins", "trust", "--all"])
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    assert!(
        stdout(&trusted).contains(&format!("trusted {}  sha256:", link.display()))
            && stdout(&trusted).contains(&format!("(-> {})", one.display())),
        "{}",
        stdout(&trusted)
    );
    let names = home
        .cmd()
        .args(["tools", "list", "--names"])
        .output()
        .unwrap();
    assert!(
        stdout(&names).ends_with("edited\nlinked\n"),
        "{}",
        stdout(&names)
    );

    // Edited in place; the link retargeted to identical bytes elsewhere.
    marked(&home.home().join("contrib"), "edited", &marker, "2");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&two, &link).unwrap();
    std::fs::remove_file(&marker).unwrap();

    let names = home
        .cmd()
        .args(["tools", "list", "--names"])
        .output()
        .unwrap();
    assert!(!stdout(&names).contains("edited") && !stdout(&names).contains("linked"));
    assert!(
        stderr(&names).contains(
            "warning: 2 plugins not run because not trusted: edited (changed), linked (changed);"
        ),
        "{}",
        stderr(&names)
    );
    assert!(!home.call("edited", "{}").status.success());
    assert_eq!(runs(&marker), Vec::<String>::new());

    let plugins = home.cmd().arg("plugins").output().unwrap();
    assert_eq!(
        stdout(&plugins),
        format!(
            "untrusted  {}  (changed since trusted)\nuntrusted  {}  (changed since trusted: now points to {})\n",
            edited.display(),
            link.display(),
            two.display()
        )
    );
    let doctor = home.cmd().arg("doctor").output().unwrap();
    assert_eq!(doctor.status.code(), Some(1));
    assert!(
        stdout(&doctor).contains(&format!(
            "plugins: {} is not trusted (changed since trusted), so elroy does not run it",
            edited.display()
        )) && stdout(&doctor).contains(&format!(
            "plugins: {} is not trusted (changed since trusted: now points to {}), so elroy does \
             not run it",
            link.display(),
            two.display()
        )),
        "{}",
        stdout(&doctor)
    );
    assert_eq!(runs(&marker), Vec::<String>::new());

    // Untrusting: the entries go; the plugins are new again; a path never trusted is refused.
    let untrusted = home
        .cmd()
        .args(["plugins", "untrust"])
        .arg(&edited)
        .arg(&link)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&untrusted),
        format!(
            "no longer trusted: {}\nno longer trusted: {}\n",
            edited.display(),
            link.display()
        )
    );
    let again = home
        .cmd()
        .args(["plugins", "untrust"])
        .arg(&edited)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("is not trusted"),
        "{}",
        stderr(&again)
    );
    let plugins = home.cmd().arg("plugins").output().unwrap();
    assert!(
        stdout(&plugins).starts_with(&format!("untrusted  {}  (new)\n", edited.display())),
        "{}",
        stdout(&plugins)
    );
}
