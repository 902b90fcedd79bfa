//! elroy as an MCP client, against servers nobody wrote for these tests: elroy's own
//! `elroy mcp` of a second home over stdio (always runs), and the official MCP Python SDK's
//! FastMCP server over stdio and streamable HTTP (`python_sdk.rs`, when PyPI is reachable).
//! Listing, calls, error results, `--mcp-config`, env passing, servers that cannot start or never
//! answer, a crash mid-call with its one restart, list_changed, shutdown of the children, and a
//! turn against the loopback model that calls an MCP tool.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{TestHome, stderr, stdout};
use elroy_core::{ToolContext, ToolSource, UserInfo};
use elroy_mcp_client::{McpClients, Phase};
use elroy_testkit::{MockServer, Reply};
use serde_json::{Value, json};

const NOW: &str = "2026-03-16T08:30:00Z";

/// The elroy binary, as a server command.
fn elroy_bin() -> String {
    env!("CARGO_BIN_EXE_elroy").to_owned()
}

/// A home whose `elroy mcp` serves as the server; its `.elroy` exists.
fn server_home() -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    home
}

/// A YAML `mcp_servers` entry running `elroy mcp` of `server`, its home passed in `env` (so a
/// server that did not get the variables would serve the client's home instead).
fn elroy_entry(name: &str, server: &TestHome) -> String {
    format!(
        "  {name}:\n    command: {bin}\n    args: [mcp]\n    env:\n      ELROY_HOME: {home}\n      ELROY_NOW: \"{NOW}\"\n",
        bin = elroy_bin(),
        home = server.home().display()
    )
}

/// A client home with `config` as its elroy.conf.yaml.
fn client_home(config: &str) -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(home.home().join("elroy.conf.yaml"), config).unwrap();
    home
}

fn run(home: &TestHome, args: &[&str]) -> Output {
    home.cmd()
        .env("ELROY_NOW", NOW)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn agenda_files(home: &TestHome) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(home.home().join("agenda"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Processes whose command line contains `marker` (from /proc).
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
            // Zombies still show their command line for a moment; they are not running.
            if cmdline.contains(marker) && !status.contains("State:\tZ") {
                found.push(cmdline);
            }
        }
    }
    found
}

/// Waits until `done` holds, at most `limit` (for what happens in the background).
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// Listing, schema, a call, an error result, `exclude_tools`, `elroy mcp list`, `elroy config`
/// masking, env passing (the server's home comes only from `env`), and `elroy mcp` of the client
/// not re-exporting the server's tools.
#[test]
fn elroy_mcp_of_a_second_home_lends_its_tools() {
    let server = server_home();
    let config = format!(
        "exclude_tools: [mcp__other__pwd]\nmcp_servers:\n{}",
        elroy_entry("other", &server)
    );
    let client = client_home(&config);

    let list = run(&client, &["tools", "list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let listed = stdout(&list);
    let line = listed
        .lines()
        .find(|l| l.starts_with("mcp__other__add_agenda_item "))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.ends_with("[mcp: other]"), "{line}");
    // After the built-in tools (sorted), as plugins come after them too.
    let first_mcp = listed.find("\nmcp__").unwrap();
    assert!(
        listed.find("\nweb_search ").unwrap() < first_mcp,
        "{listed}"
    );
    assert!(!listed.contains("mcp__other__pwd"), "excluded: {listed}");
    assert!(listed.contains("\nmcp__other__ls "), "{listed}");

    // The schema is the server's: the built-in one under the exposed name.
    let schema = run(&client, &["tools", "schema", "mcp__other__add_agenda_item"]);
    assert!(schema.status.success(), "{}", stderr(&schema));
    let exposed: Value = serde_json::from_str(&stdout(&schema)).unwrap();
    let builtin: Value = serde_json::from_str(&stdout(&run(
        &client,
        &["tools", "schema", "add_agenda_item"],
    )))
    .unwrap();
    assert_eq!(exposed["function"]["name"], "mcp__other__add_agenda_item");
    assert_eq!(
        exposed["function"]["parameters"],
        builtin["function"]["parameters"]
    );

    // A call writes the server's home, not the client's.
    let call = run(
        &client,
        &[
            "tools",
            "call",
            "mcp__other__add_agenda_item",
            "--args",
            r#"{"text":"Water the plants"}"#,
        ],
    );
    assert!(call.status.success(), "{}", stderr(&call));
    assert!(
        stdout(&call).contains("Water the plants"),
        "{}",
        stdout(&call)
    );
    assert_eq!(agenda_files(&server).len(), 1);
    assert!(agenda_files(&client).is_empty());

    // An error result of the server is the client's tool error.
    let failed = run(
        &client,
        &[
            "tools",
            "call",
            "mcp__other__complete_agenda_item",
            "--args",
            r#"{"name":"No such item"}"#,
        ],
    );
    assert_eq!(failed.status.code(), Some(1));
    assert!(stdout(&failed).is_empty());
    assert!(
        stderr(&failed).starts_with("Error invoking tool mcp__other__complete_agenda_item: "),
        "{}",
        stderr(&failed)
    );

    let servers = run(&client, &["mcp", "list"]);
    assert!(servers.status.success(), "{}", stderr(&servers));
    let text = stdout(&servers);
    assert!(text.starts_with("other (stdio): ready, "), "{text}");
    assert!(text.contains("\n  mcp__other__add_agenda_item "), "{text}");

    // `elroy config` shows the server with its env values masked.
    let shown = stdout(&run(&client, &["config"]));
    let row = shown
        .lines()
        .find(|l| l.starts_with("mcp_servers "))
        .unwrap();
    assert!(row.contains(r#""ELROY_HOME":"****""#), "{row}");
    assert!(!row.contains(&server.home().display().to_string()), "{row}");

    // `elroy mcp` of the client serves elroy's own tools only.
    let tools = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(served_tool_names(&client));
    assert!(tools.iter().any(|t| t == "add_agenda_item"), "{tools:?}");
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
}

/// The tool names `elroy mcp` of `home` lists to an MCP client.
async fn served_tool_names(home: &TestHome) -> Vec<String> {
    use rmcp::ServiceExt;
    let mut cmd = home.cmd();
    cmd.arg("mcp");
    let transport = rmcp::transport::TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
        .0;
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let _ = client.cancel().await;
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

/// `--mcp-config FILE` in Claude Code's `.mcp.json` shape (`type`, an unknown field) is merged
/// over the key: its entry of the same name wins.
#[test]
fn mcp_config_file_is_merged_over_the_key() {
    let server = server_home();
    let client =
        client_home("mcp_servers:\n  other:\n    command: /nonexistent/elroy-no-such-server\n");
    let file = client.root().join(".mcp.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"other": {
            "type": "stdio",
            "command": elroy_bin(),
            "args": ["mcp"],
            "env": {"ELROY_HOME": server.home(), "ELROY_NOW": NOW},
            "alwaysAllow": ["pwd"]
        }}})
        .to_string(),
    )
    .unwrap();
    let flag = file.display().to_string();
    let list = run(&client, &["--mcp-config", &flag, "mcp", "list"]);
    assert!(list.status.success(), "{}{}", stdout(&list), stderr(&list));
    assert!(
        stdout(&list).starts_with("other (stdio): ready"),
        "{}",
        stdout(&list)
    );
    // Without the flag the key's dead command is what runs.
    let dead = run(&client, &["mcp", "list"]);
    assert_eq!(dead.status.code(), Some(1));
    assert!(
        stdout(&dead)
            .contains("other (stdio): failed: could not start `/nonexistent/elroy-no-such-server`"),
        "{}",
        stdout(&dead)
    );
}

/// A dead command, a server that never answers `initialize` (killed at the startup timeout,
/// nothing left running) and one that exits at once are each reported once, by name, with
/// their stderr's last lines; every other tool keeps working, and a direct call of a built-in
/// tool starts no server.
#[test]
fn servers_that_fail_are_reported_and_other_tools_keep_working() {
    let marker = format!("37.{}", std::process::id());
    let locked = unauthorized_server();
    let server = server_home();
    let ok = elroy_entry("ok", &server);
    let client = client_home(&format!(
        "mcp_startup_timeout_seconds: 2\nmcp_servers:\n{ok}  locked:\n    url: http://{locked}/mcp\n  dead:\n    command: /nonexistent/elroy-dead-server\n  silent:\n    command: sh\n    args: [-c, \"echo waiting for a token >&2; exec sleep {marker}\"]\n  exits:\n    command: sh\n    args: [-c, \"echo bad credentials >&2; exit 3\"]\n"
    ));
    let list = run(&client, &["mcp", "list"]);
    assert_eq!(list.status.code(), Some(1), "{}", stderr(&list));
    let text = stdout(&list);
    assert!(text.contains("ok (stdio): ready, "), "{text}");
    assert!(
        text.contains("dead (stdio): failed: could not start `/nonexistent/elroy-dead-server`"),
        "{text}"
    );
    assert!(
        text.contains(
            "silent (stdio): failed: did not answer initialize and tools/list within 2 s"
        ),
        "{text}"
    );
    assert!(text.contains("waiting for a token"), "{text}");
    assert!(
        text.contains("exits (stdio): failed: exited during start-up (exit status: 3)")
            || text.contains("exits (stdio): failed: the MCP handshake failed"),
        "{text}"
    );
    assert!(text.contains("bad credentials"), "{text}");
    // A 401 is a plain error at once, not a hang until the timeout.
    assert!(text.contains("locked (http): failed: "), "{text}");
    assert!(text.contains("HTTP 401 Unauthorized"), "{text}");
    assert!(!text.contains("rmcp::transport"), "{text}");
    assert!(
        !text.contains("locked (http): failed: did not answer"),
        "{text}"
    );
    assert!(
        processes_with(&marker).is_empty(),
        "{:?}",
        processes_with(&marker)
    );

    // `tools list` still lists the built-in tools; each failure is one warning on stderr.
    let tools = run(&client, &["tools", "list", "--names"]);
    assert!(tools.status.success(), "{}", stderr(&tools));
    assert!(stdout(&tools).lines().any(|l| l == "get_current_date"));
    let warnings = stderr(&tools);
    for name in ["locked", "dead", "silent", "exits"] {
        let needle = format!("warning: MCP server {name} failed: ");
        assert_eq!(warnings.matches(&needle).count(), 1, "{name}: {warnings}");
    }
    // Nothing of elroy's own output or stderr came from the servers themselves (their stderr
    // is in the log): the quoted line appears only inside elroy's warning.
    assert_eq!(warnings.matches("bad credentials").count(), 1, "{warnings}");

    let date = run(&client, &["tools", "call", "get_current_date"]);
    assert!(date.status.success(), "{}", stderr(&date));
    assert!(
        stderr(&date).is_empty(),
        "no server was started: {}",
        stderr(&date)
    );
    // A call of one server's tool starts only that server: no failure of the others is reported.
    let other = run(&client, &["tools", "call", "mcp__ok__get_current_date"]);
    assert!(other.status.success(), "{}", stderr(&other));
    assert_eq!(stdout(&other), stdout(&date));
    assert!(stderr(&other).is_empty(), "{}", stderr(&other));
    let log = std::fs::read_to_string(client.home().join("logs/elroy.log")).unwrap_or_default();
    assert!(
        log.contains("bad credentials"),
        "the server's stderr is in the log"
    );
}

/// A loopback HTTP server answering every request with `401 Unauthorized`; its address.
fn unauthorized_server() -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    address
}

/// The client library in-process against `elroy mcp --home B`: a plugin that kills its server
/// mid-call is a tool error naming the server; the server is restarted once (its tools work
/// again), a second crash leaves it failed; a plugin added while it runs reaches the client
/// through `notifications/tools/list_changed`; shutdown leaves no server process behind.
#[test]
fn crash_mid_call_restart_once_list_changed_and_shutdown() {
    let server = server_home();
    let contrib = server.home().join("contrib");
    std::fs::create_dir_all(&contrib).unwrap();
    write_plugin(
        &contrib.join("crash"),
        "#!/bin/sh\nif [ \"$1\" = --schema ]; then\n  echo '{\"type\":\"function\",\"function\":{\"name\":\"crash\",\"description\":\"Kill the server.\"}}'\n  exit 0\nfi\nkill -9 $PPID\n",
    );
    trust_plugin(&server, &contrib.join("crash"));
    let client = client_home(&format!(
        "mcp_servers:\n  other:\n    command: {}\n    args: [mcp, --home, {}]\n",
        elroy_bin(),
        server.home().display()
    ));
    let config = load_config(&client);
    let warnings = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&warnings);
    let mcp = McpClients::new(
        &config,
        Arc::new(move |w: &str| seen.lock().unwrap().push(w.to_owned())),
    )
    .unwrap()
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = ToolContext::new(UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: client.home(),
        user_home: client.home(),
    });
    let call = |name: &str| {
        rt.block_on(async {
            let tool = mcp
                .find(name)
                .await
                .unwrap_or_else(|| panic!("{name}: {:?}", mcp.statuses()));
            let args = elroy_core::validate_arguments(tool.tool.spec(), None).unwrap();
            tool.tool.call(&ctx, args).await
        })
    };
    let tools = rt.block_on(mcp.ready());
    assert!(
        tools
            .iter()
            .any(|t| t.tool.spec().name == "mcp__other__crash")
    );
    assert!(call("mcp__other__pwd").is_ok());

    let crashed = call("mcp__other__crash").unwrap_err();
    assert!(
        crashed
            .message()
            .starts_with("the MCP server other failed during the call of crash: "),
        "{}",
        crashed.message()
    );
    // Restarted once: a call right after the crash waits for the restart and works.
    let again = call("mcp__other__pwd");
    assert!(
        again.is_ok(),
        "{:?}",
        again.err().map(|e| e.message().to_owned())
    );
    assert_eq!(mcp.statuses()[0].phase, Phase::Ready);

    // list_changed: a plugin added while the server runs is offered without a restart.
    write_plugin(
        &contrib.join("greet"),
        "#!/bin/sh\n[ \"$1\" = --schema ] && echo '{\"type\":\"function\",\"function\":{\"name\":\"greet\",\"description\":\"Say hello.\"}}' && exit 0\necho hello from the plugin\n",
    );
    trust_plugin(&server, &contrib.join("greet"));
    assert!(
        eventually(Duration::from_secs(30), || mcp
            .available()
            .iter()
            .any(|t| t.tool.spec().name == "mcp__other__greet")),
        "{:?}",
        mcp.statuses()
    );
    let greeting = call("mcp__other__greet").unwrap().content;
    assert!(greeting.contains("hello from the plugin"), "{greeting}");

    // A second crash: failed for the rest of the session, reported once.
    assert!(call("mcp__other__crash").is_err());
    assert!(eventually(Duration::from_secs(20), || matches!(
        mcp.statuses()[0].phase,
        Phase::Failed(_)
    )));
    let Phase::Failed(reason) = mcp.statuses()[0].phase.clone() else {
        unreachable!()
    };
    assert!(reason.contains("restarted once already"), "{reason}");
    assert!(
        call("mcp__other__pwd")
            .unwrap_err()
            .message()
            .starts_with("the MCP server other is not available: ")
    );
    assert_eq!(
        warnings.lock().unwrap().len(),
        1,
        "{:?}",
        warnings.lock().unwrap()
    );

    // Shutdown: no process of the server's home is left.
    let marker = server.home().display().to_string();
    drop(mcp);
    assert!(
        eventually(Duration::from_secs(5), || processes_with(&marker)
            .is_empty()),
        "{:?}",
        processes_with(&marker)
    );
}

/// `elroy plugins trust PATH` in `home`: elroy runs no plugin it has not been told to trust.
fn trust_plugin(home: &TestHome, path: &Path) {
    let out = home
        .cmd()
        .args(["plugins", "trust"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write_plugin(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, script).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The configuration of `home` as the binary would load it (no process environment).
pub fn load_config(home: &TestHome) -> elroy_config::Config {
    elroy_config::Config::load(&elroy_config::LoadOptions {
        home: Some(home.home()),
        cwd: home.root().to_path_buf(),
        user_dir: Some(home.root().to_path_buf()),
        env: [
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            (
                "MCP_TEST_GREETING".to_owned(),
                "hello from the client's environment".to_owned(),
            ),
        ]
        .into(),
        ..elroy_config::LoadOptions::default()
    })
    .unwrap()
}

/// A turn against the loopback model: the MCP tool is offered with the built-in tools, the
/// model calls it, the server's home changes, and the result goes back to the model.
#[test]
fn a_turn_calls_an_mcp_tool() {
    let model = MockServer::start();
    model
        .push(Reply::tool_call(
            "mcp__other__add_agenda_item",
            r#"{"text":"Call the plumber"}"#,
        ))
        .push(Reply::text("Added it to the other agenda."));
    let server = server_home();
    // A model's call of a tool of a server elroy starts runs a program: the person allowed this
    // server's tools beforehand, since `elroy message` has nobody to ask (docs/security.md).
    let client = common::home_with_model(
        &model,
        &format!(
            "mcp_servers:\n{}permissions:\n  allow: [\"mcp__other__*\"]\n",
            elroy_entry("other", &server)
        ),
    );
    let out = client
        .cmd()
        .env("ELROY_NOW", NOW)
        .args(["message", "Put calling the plumber on the other agenda"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Added it to the other agenda.\n");
    let requests = model.chat_requests();
    assert_eq!(requests.len(), 2);
    let names = requests[0].tool_names();
    assert!(names.contains(&"add_agenda_item".to_owned()), "{names:?}");
    assert!(
        names.contains(&"mcp__other__add_agenda_item".to_owned()),
        "{names:?}"
    );
    let results = requests[1].tool_results();
    assert!(results[0].1.contains("Call the plumber"), "{results:?}");
    assert_eq!(agenda_files(&server).len(), 1);
    assert!(agenda_files(&client).is_empty());
}

/// Where the official SDK's virtual environment is kept between runs.
pub fn sdk_venv() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-sdk")
}

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= elroy_mcp_client::naming::MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Sanitising: a dotted server name (one kind of forbidden character) and a tool name with a
/// space, a slash and a non-ASCII letter (others); a second server whose name sanitises alike
/// gets a hashed label.
#[test]
fn naming_sanitises_to_what_providers_accept() {
    use elroy_mcp_client::naming::{could_belong, exposed_name, server_label};
    let label = server_label("my.server", |_| false);
    assert_eq!(label, "my_server");
    assert_eq!(
        exposed_name("fs", "fs", "read_file", |_| false),
        "mcp__fs__read_file"
    );
    assert_eq!(
        exposed_name(&label, "my.server", "list files/ä", |_| false),
        "mcp__my_server__list_files__"
    );
    assert!(could_belong("mcp__my_server__x", &label));
    assert!(!could_belong("mcp__other__x", &label));
    // FNV-1a (32 bits) of "my_server", computed independently.
    assert_eq!(
        server_label("my_server", |l| l == "my_server"),
        "my_server_957f0187"
    );
}

/// Too long: cut to 55 characters plus `_` and the hash of server and tool (stable: the value is
/// computed independently); two long names sharing their first 55 characters differ; a name
/// taken by an earlier tool gets the hashed form; a long server name still routes its calls.
#[test]
fn naming_shortens_long_and_colliding_names_stably() {
    use elroy_mcp_client::naming::{MAX_NAME_LEN, could_belong, exposed_name};
    let tool_a = format!("{}_alpha", "x".repeat(70));
    let tool_b = format!("{}_beta", "x".repeat(70));
    let a = exposed_name("srv", "srv", &tool_a, |_| false);
    let b = exposed_name("srv", "srv", &tool_b, |_| false);
    assert_eq!(a, format!("mcp__srv__{}_96db0d3d", "x".repeat(45)));
    assert_eq!(a.len(), MAX_NAME_LEN);
    assert!(valid_tool_name(&a) && valid_tool_name(&b), "{a} {b}");
    assert_ne!(a, b);
    let taken = exposed_name("s", "s", "a.b", |n| n == "mcp__s__a_b");
    assert!(
        taken.starts_with("mcp__s__a_b_") && valid_tool_name(&taken),
        "{taken}"
    );
    let long_server = "s".repeat(80);
    let name = exposed_name(&long_server, &long_server, "t", |_| false);
    assert!(
        valid_tool_name(&name) && could_belong(&name, &long_server),
        "{name}"
    );
}
