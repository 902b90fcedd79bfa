#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `elroy mcp` driven by a real MCP client (rmcp's client over a child process's stdio): the
//! tool list equals the golden schemas, calls write the files of the home, failures come back as
//! `isError: true`, and a plugin added while the server runs is announced with
//! `notifications/tools/list_changed`.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{TestHome, shared_dir};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Client {
    list_changed: Arc<Notify>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }
}

/// Starts `elroy mcp` in `home` (`ELROY_NOW` fixed) and connects a client to it.
async fn connect(home: &TestHome, client: Client) -> RunningService<RoleClient, Client> {
    connect_with(home, client, &[]).await
}

/// As [`connect`], with `global` options before `mcp`.
async fn connect_with(
    home: &TestHome,
    client: Client,
    global: &[&str],
) -> RunningService<RoleClient, Client> {
    let mut cmd = home.cmd();
    cmd.args(global)
        .arg("mcp")
        .env("ELROY_NOW", "2026-03-16T08:30:00Z");
    let transport = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn elroy mcp")
        .0;
    client.serve(transport).await.expect("MCP handshake")
}

/// `elroy history` of `home`.
fn history(home: &TestHome) -> String {
    let out = home.cmd().arg("history").output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    common::stdout(&out)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

async fn call(
    client: &RunningService<RoleClient, Client>,
    name: &str,
    args: Value,
) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(object(args)))
        .await
        .expect("tools/call answered")
}

#[tokio::test]
async fn tools_match_the_golden_schemas_and_calls_write_the_home() {
    let home = TestHome::new();
    let client = connect(&home, Client::default()).await;

    let info = client.peer_info().expect("server info");
    let tools_capability = info.capabilities.tools.clone().expect("tools capability");
    assert_eq!(tools_capability.list_changed, Some(true));

    // Every golden tool is listed with its exact name, description and schema.
    let tools = client.list_all_tools().await.expect("tools/list");
    let golden: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(shared_dir().join("golden/tools_schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(golden.len(), 40);
    let empty = json!({"type": "object", "properties": {}});
    for entry in &golden {
        let function = &entry["function"];
        let name = function["name"].as_str().unwrap();
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        assert_eq!(
            tool.description.as_deref(),
            function["description"].as_str(),
            "{name}"
        );
        let expected = function.get("parameters").unwrap_or(&empty);
        let listed = Value::Object((*tool.input_schema).clone());
        assert_eq!(&listed, expected, "{name}");
        // Key order too: the schema is the one a model sees.
        assert_eq!(
            serde_json::to_string(&listed).unwrap(),
            serde_json::to_string(expected).unwrap(),
            "{name}"
        );
    }

    // Each tool carries the hints of its declared effect, every one set explicitly.
    for (name, read_only, destructive, idempotent, open_world) in [
        ("get_current_date", true, false, true, false),
        ("read_file", true, false, true, false),
        ("add_agenda_item", false, false, false, false),
        ("create_memory", false, false, false, false),
        ("complete_agenda_item", false, true, false, false),
        (
            "update_outdated_or_incorrect_memory",
            false,
            true,
            false,
            false,
        ),
        ("fetch_page", true, false, true, true),
        ("web_search", true, false, true, true),
        ("create_contrib_repo", false, true, false, true),
    ] {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let hints = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            (
                hints.read_only_hint,
                hints.destructive_hint,
                hints.idempotent_hint,
                hints.open_world_hint
            ),
            (
                Some(read_only),
                Some(destructive),
                Some(idempotent),
                Some(open_world)
            ),
            "{name}"
        );
    }
    assert!(tools.iter().all(|t| t.annotations.is_some()));

    // Calls run against the home of the server.
    let added = call(
        &client,
        "add_agenda_item",
        json!({"text": "Water the plants", "item_date": "2026-03-18"}),
    )
    .await;
    assert_eq!(added.is_error, Some(false));
    assert_eq!(
        text(&added),
        "Agenda item added for 2026-03-18: Water the plants"
    );
    let agenda_file = home.home().join("agenda/Water_the_plants.md");
    let agenda = std::fs::read_to_string(&agenda_file).expect("agenda file written");
    assert!(agenda.contains("date: '2026-03-18'"), "{agenda}");
    assert!(agenda.ends_with("Water the plants"), "{agenda}");

    let created = call(
        &client,
        "create_memory",
        json!({"name": "Priya's coffee preference", "text": "Priya prefers a flat white."}),
    )
    .await;
    assert_eq!(created.is_error, Some(false));
    assert_eq!(
        text(&created),
        "New memory created: Priya's coffee preference"
    );
    let memory = std::fs::read_to_string(home.home().join("memories/Priya_s_coffee_preference.md"))
        .expect("memory file written");
    assert_eq!(memory, "---\nid: 1\n---\n\nPriya prefers a flat white.");

    // The same home answers reads through the protocol.
    let listed = call(
        &client,
        "list_agenda_items",
        json!({"item_date": "2026-03-18"}),
    )
    .await;
    assert!(
        text(&listed).contains("\"name\":\"Water_the_plants\""),
        "{}",
        text(&listed)
    );

    // Failures are tool results with isError, in the error contract's words.
    let duplicate = call(
        &client,
        "add_agenda_item",
        json!({"text": "Water the plants", "item_date": "2026-03-18"}),
    )
    .await;
    assert_eq!(duplicate.is_error, Some(true));
    assert_eq!(
        text(&duplicate),
        "Error invoking tool add_agenda_item: Task 'Water the plants' already exists"
    );
    let invalid = call(&client, "create_memory", json!({"name": "only a name"})).await;
    assert_eq!(invalid.is_error, Some(true));
    assert!(
        text(&invalid).starts_with("Error invoking tool create_memory: "),
        "{}",
        text(&invalid)
    );
    let unknown = call(&client, "no_such_tool", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown)
            .starts_with("Error invoking tool no_such_tool: Unknown tool 'no_such_tool'."),
        "{}",
        text(&unknown)
    );

    // The versioned home records calls made through MCP like any other.
    assert!(
        history(&home).contains(" add_agenda_item: agenda/Water_the_plants.md\n"),
        "{}",
        history(&home)
    );

    client.cancel().await.expect("close the connection");
}

#[cfg(unix)]
#[tokio::test]
async fn a_plugin_added_while_serving_is_announced() {
    use std::os::unix::fs::PermissionsExt;

    let home = TestHome::new();
    let listener = Client::default();
    let notified = Arc::clone(&listener.list_changed);
    let client = connect(&home, listener).await;
    let before = client.list_all_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name == "say_hello"));

    let contrib = home.home().join("contrib");
    std::fs::create_dir_all(&contrib).unwrap();
    let plugin = contrib.join("say_hello");
    let script = r#"#!/bin/sh
if [ "$1" = "--schema" ]; then
  echo '{"type":"function","function":{"name":"say_hello","description":"Greets someone.","parameters":{"type":"object","properties":{"who":{"type":"string","description":"Whom to greet."}},"required":["who"]}}}'
  exit 0
fi
read args
echo "hello from the plugin: $args"
"#;
    let staging = home.root().join("say_hello.tmp");
    std::fs::write(&staging, script).unwrap();
    std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&staging, &plugin).unwrap();
    // elroy runs it only once the person trusts it; trusting is what changes the tool list.
    let trusted = home
        .cmd()
        .args(["plugins", "trust"])
        .arg(&plugin)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", common::stderr(&trusted));

    tokio::time::timeout(Duration::from_secs(30), notified.notified())
        .await
        .expect("notifications/tools/list_changed within 30 s");
    let after = client.list_all_tools().await.unwrap();
    let tool = after
        .iter()
        .find(|t| t.name == "say_hello")
        .expect("plugin listed");
    assert_eq!(tool.description.as_deref(), Some("Greets someone."));
    assert_eq!(after.len(), before.len() + 1);
    let greeted = call(&client, "say_hello", json!({"who": "Priya"})).await;
    assert_eq!(greeted.is_error, Some(false), "{}", text(&greeted));
    assert!(text(&greeted).contains("Priya"), "{}", text(&greeted));
    // The rebuilt registry still reports calls to the versioned home.
    let added = call(
        &client,
        "add_agenda_item",
        json!({"text": "After the reload"}),
    )
    .await;
    assert_eq!(added.is_error, Some(false), "{}", text(&added));
    assert!(
        history(&home).contains(" add_agenda_item: agenda/After_the_reload.md\n"),
        "{}",
        history(&home)
    );

    client.cancel().await.expect("close the connection");
}

/// `elroy mcp` spoken to line by line: requests written to its stdin, answers read by `id`.
struct RawServer {
    stdin: tokio::process::ChildStdin,
    answers: tokio::sync::mpsc::UnboundedReceiver<Value>,
    _child: tokio::process::Child,
}

impl RawServer {
    async fn start(home: &TestHome) -> RawServer {
        use tokio::io::AsyncBufReadExt;

        let mut cmd = tokio::process::Command::from(home.cmd());
        cmd.arg("mcp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn elroy mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(value);
                }
            }
        });
        let mut server = RawServer {
            stdin: child.stdin.take().unwrap(),
            answers,
            _child: child,
        };
        server
            .send(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .await;
        assert!(server.answer().await.unwrap()["result"].is_object());
        server
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        server
    }

    async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    async fn send_line(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message from the server; `None` when it closed stdout. Waits at most 120 s (a
    /// bound on a hang, not a speed assertion).
    async fn answer(&mut self) -> Option<Value> {
        tokio::time::timeout(Duration::from_secs(120), self.answers.recv())
            .await
            .expect("the server neither answered nor closed the connection")
    }
}

/// A `tools/call` of `create_memory` whose `text` has `chars` characters, as one line.
fn create_memory_line(id: u64, chars: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "create_memory", "arguments": {"name": "Big", "text": "a".repeat(chars)}}})
    .to_string()
}

/// Kind: a request the server cannot read as a tool call: malformed `tools/call` params are
/// `-32602 Invalid params`, a message over the line limit is answered with an error carrying its
/// id (or `null` without one), and the server keeps serving afterwards.
#[tokio::test]
async fn every_request_gets_an_answer() {
    let home = TestHome::new();
    let mut server = RawServer::start(&home).await;

    for (id, params) in [
        (2, Value::Null),
        (3, json!({})),
        (4, json!({"arguments": {"name": "x", "text": "y"}})),
        (5, json!({"name": 42})),
    ] {
        server
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let answer = server.answer().await.unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Invalid params: tools/call with "),
            "{answer}"
        );
    }
    // An unknown method is still "Method not found".
    server
        .send(&json!({"jsonrpc": "2.0", "id": 6, "method": "no/such/method"}))
        .await;
    assert_eq!(server.answer().await.unwrap()["error"]["code"], -32601);

    // 8 MB: read, and refused by the argument size limit as a tool error.
    server.send_line(&create_memory_line(7, 8_000_000)).await;
    let answer = server.answer().await.unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["isError"], true, "{answer:.300}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("arguments exceed the 1048576-byte limit"),
        "{answer:.300}"
    );

    // 17,000,000 characters: over the 16 MiB line limit, answered with its id.
    let line = create_memory_line(8, 17_000_000);
    server.send_line(&line).await;
    let answer = server.answer().await.unwrap();
    assert_eq!(answer["id"], 8, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        format!(
            "message too large: the tools/call request is {} bytes, over elroy's limit of 16777216 bytes per message; it was not read (send less, for example a shorter text)",
            line.len()
        )
    );
    // The same with the id at the end of the line, after the long text.
    let text = "b".repeat(17_000_000);
    server
        .send_line(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{{\"name\":\"create_memory\",\"arguments\":{{\"name\":\"Big\",\"text\":\"{text}\"}}}},\"id\":\"last\"}}"
        ))
        .await;
    let answer = server.answer().await.unwrap();
    assert_eq!(answer["id"], "last", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");

    // Still serving.
    server
        .send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .await;
    let answer = server.answer().await.unwrap();
    assert_eq!(answer["id"], 9);
    assert!(!answer["result"]["tools"].as_array().unwrap().is_empty());
    // Nothing was stored by the refused calls (no memory file; the versioned home starts with the
    // first tool that runs, so there may be no history at all).
    let memories = home.home().join("memories");
    let stored = std::fs::read_dir(&memories).map_or(0, |d| d.count());
    assert_eq!(stored, 0, "{}", memories.display());

    // Over the limit without an id to answer: an error with `"id": null`, and the server goes on.
    server.send_line(&"c".repeat(17_000_000)).await;
    let answer = server.answer().await.unwrap();
    assert!(answer["id"].is_null(), "{answer:.300}");
    assert_eq!(answer["error"]["code"], -32600, "{answer:.300}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("message too large: the message is 17000000 bytes"),
        "{answer:.300}"
    );
    server
        .send(&json!({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
        .await;
    assert_eq!(server.answer().await.unwrap()["id"], 10);
}

/// Kind: a line that is not JSON (text, JSON cut short): each answered with `-32700 Parse
/// error` and `"id": null`, and the server answers the next request.
#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error() {
    let home = TestHome::new();
    let mut server = RawServer::start(&home).await;
    for (id, line) in [
        (2, "hello elroy"),
        (3, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\""),
    ] {
        server.send_line(line).await;
        let answer = server.answer().await.unwrap();
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert!(answer["id"].is_null(), "{answer}");
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Parse error: "),
            "{answer}"
        );
        server
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        assert_eq!(server.answer().await.unwrap()["id"], id);
    }
}

/// The names `elroy mcp` of `home` lists with `global` options and `config`.
async fn listed_names(home: &TestHome, global: &[&str]) -> Vec<String> {
    let client = connect_with(home, Client::default(), global).await;
    let names = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    client.cancel().await.expect("close the connection");
    names
}

/// Kind: the permissions decide what a client is shown. Deny rules (a name and a glob) hide
/// tools and refuse their calls; `read-only` mode (by flag, and by the configuration) hides what
/// writes, reaches the network or runs a program; `ask`, the default, lists `read`, `network`
/// and `execute` tools for the client to ask its person about.
#[tokio::test]
async fn the_permissions_decide_what_a_client_is_shown() {
    let has = |names: &[String], name: &str| names.iter().any(|n| n == name);

    let plain = TestHome::new();
    let names = listed_names(&plain, &[]).await;
    for name in [
        "fetch_page",
        "web_search",
        "create_contrib_repo",
        "read_file",
        "create_memory",
    ] {
        assert!(has(&names, name), "ask mode lists {name}: {names:?}");
    }

    let denying = TestHome::new();
    std::fs::create_dir_all(denying.home()).unwrap();
    std::fs::write(
        denying.home().join("elroy.conf.yaml"),
        "permissions:\n  deny: [web_search, \"delete_*\"]\n",
    )
    .unwrap();
    let names = listed_names(&denying, &[]).await;
    assert!(!has(&names, "web_search"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("delete_")), "{names:?}");
    assert!(
        has(&names, "fetch_page") && has(&names, "add_agenda_item"),
        "{names:?}"
    );
    // Called anyway: refused, and the tool did not run.
    let client = connect(&denying, Client::default()).await;
    let added = call(
        &client,
        "add_agenda_item",
        json!({"text": "Keep me", "item_date": "2026-03-18"}),
    )
    .await;
    assert_eq!(added.is_error, Some(false), "{}", text(&added));
    let deleted = call(
        &client,
        "delete_agenda_item",
        json!({"item_name": "Keep me"}),
    )
    .await;
    assert_eq!(deleted.is_error, Some(true));
    assert!(
        text(&deleted).contains("not permitted"),
        "{}",
        text(&deleted)
    );
    assert!(denying.home().join("agenda/Keep_me.md").exists());
    let searched = call(&client, "web_search", json!({"query": "elroy"})).await;
    assert_eq!(searched.is_error, Some(true));
    assert!(
        text(&searched).contains("not permitted"),
        "{}",
        text(&searched)
    );
    client.cancel().await.expect("close the connection");

    let by_flag = TestHome::new();
    let names = listed_names(&by_flag, &["--permission-mode", "read-only"]).await;
    let read_only = TestHome::new();
    std::fs::create_dir_all(read_only.home()).unwrap();
    std::fs::write(
        read_only.home().join("elroy.conf.yaml"),
        "permissions:\n  mode: read-only\n",
    )
    .unwrap();
    let configured = listed_names(&read_only, &[]).await;
    for names in [&names, &configured] {
        for shown in [
            "get_current_date",
            "examine_memories",
            "read_file",
            "list_agenda_items",
        ] {
            assert!(has(names, shown), "{shown}: {names:?}");
        }
        for hidden in [
            "create_memory",
            "add_agenda_item",
            "fetch_page",
            "web_search",
            "create_contrib_repo",
        ] {
            assert!(!has(names, hidden), "{hidden}: {names:?}");
        }
    }
}
