//! `elroy serve`'s `/mcp` (MCP over streamable HTTP) with elroy's own MCP client (rmcp) and a
//! raw JSON-RPC exchange, and the server with the official Python SDKs (`openai`, `mcp`) when a
//! venv with them can be made (`SKIPPED: reason` otherwise, as in `mcp_python_sdk`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::{self, TestHome, stderr, stdout};
use crate::serve::{KEY, Served, home, http};
use elroy_testkit::{MockServer, Reply};
use serde_json::{Value, json};

/// The JSON-RPC message of an MCP response (JSON, or the first `data:` event carrying an id).
fn rpc_result(body: &str) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return value;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {body:?}"))
}

/// Calls `tool` on `/mcp` as `key`'s user (initialize, initialized, tools/call) and returns the
/// text of its result.
pub(crate) fn call_tool(addr: &str, key: &str, tool: &str, arguments: Value) -> String {
    let accept = ("Accept", "application/json, text/event-stream");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "serve-test", "version": "1"}}});
    let resp = http(addr, "POST", "/mcp", Some(key), &[accept], Some(&init));
    assert_eq!(resp.status, 200, "{}", resp.body);
    assert_eq!(
        rpc_result(&resp.body)["result"]["serverInfo"]["name"],
        "elroy"
    );
    let session = resp.header("mcp-session-id").unwrap().to_owned();
    let with_session = [accept, ("Mcp-Session-Id", session.as_str())];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let resp = http(
        addr,
        "POST",
        "/mcp",
        Some(key),
        &with_session,
        Some(&initialized),
    );
    assert!(resp.status < 300, "{}: {}", resp.status, resp.body);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let resp = http(addr, "POST", "/mcp", Some(key), &with_session, Some(&call));
    assert_eq!(resp.status, 200, "{}", resp.body);
    let result = rpc_result(&resp.body);
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"))
        .to_owned()
}

/// A second home whose MCP server `srv` is the running `elroy serve` with `key`.
fn client_home(addr: &str, key: &str) -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "mcp_servers:\n  srv:\n    url: http://{addr}/mcp\n    headers:\n      Authorization: Bearer {key}\n"
        ),
    )
    .unwrap();
    home
}

#[test]
fn mcp_over_http_with_elroys_rmcp_client() {
    let server = MockServer::start();
    server.fallback(Reply::text("unused"));
    let home = home(&server, "");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let client = client_home(&served.addr, KEY);
    let list = client.cmd().args(["mcp", "list"]).output().unwrap();
    assert!(list.status.success(), "{}{}", stdout(&list), stderr(&list));
    let listing = stdout(&list);
    assert!(listing.contains("srv (http): ready"), "{listing}");
    assert!(listing.contains("mcp__srv__create_memory"), "{listing}");
    let created = client.call(
        "mcp__srv__create_memory",
        r#"{"name": "Garden plan", "text": "Tomatoes go in the south bed this year."}"#,
    );
    assert!(created.status.success(), "{}", stderr(&created));
    // The memory is in the served home, and reads back through /mcp.
    let memories = home.home().join("memories");
    assert_eq!(std::fs::read_dir(&memories).unwrap().count(), 1);
    let printed = client.call(
        "mcp__srv__print_memory",
        r#"{"memory_name": "Garden plan"}"#,
    );
    assert!(
        stdout(&printed).contains("south bed"),
        "{}",
        stdout(&printed)
    );
    assert!(
        call_tool(
            &served.addr,
            KEY,
            "print_memory",
            json!({"memory_name": "Garden plan"})
        )
        .contains("south bed")
    );
    // A wrong key reaches nothing.
    let wrong = client_home(&served.addr, "not-the-key-000");
    let out = wrong.cmd().args(["mcp", "list"]).output().unwrap();
    assert!(!out.status.success());
    assert!(stdout(&out).contains("failed"), "{}", stdout(&out));
}

/// The venv's python with `openai` and `mcp` importable, made once per test process.
fn sdk_python() -> Result<PathBuf, String> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON.get_or_init(make_venv).clone()
}

fn make_venv() -> Result<PathBuf, String> {
    common::python_venv("serve-python-sdks", &["openai", "mcp"], "openai, mcp")
}

macro_rules! python_or_skip {
    () => {
        match sdk_python() {
            Ok(python) => python,
            Err(reason) => {
                println!("SKIPPED: {reason}");
                eprintln!("SKIPPED: {reason}");
                return;
            }
        }
    };
}

fn run_python(python: &Path, script: &str, args: &[&str]) -> std::process::Output {
    Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap()
}

const OPENAI_CLIENT: &str = r#"
import sys, openai
addr, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"http://{addr}/v1", api_key=key, max_retries=0)
print("models:", [m.id for m in client.models.list().data])
r = client.chat.completions.create(model="elroy", messages=[{"role": "user", "content": "Hello from the SDK"}])
print("reply:", r.choices[0].message.content)
text = ""
for chunk in client.chat.completions.create(model="elroy", stream=True,
        messages=[{"role": "user", "content": "Hello from the SDK"},
                  {"role": "assistant", "content": r.choices[0].message.content},
                  {"role": "user", "content": "Stream please"}]):
    if chunk.choices and chunk.choices[0].delta.content:
        text += chunk.choices[0].delta.content
print("streamed:", text)
try:
    openai.OpenAI(base_url=f"http://{addr}/v1", api_key="wrong-key-000", max_retries=0).models.list()
    print("wrong key: accepted")
except openai.AuthenticationError as e:
    print("wrong key:", e.status_code, e.code)
"#;

#[test]
fn official_openai_python_sdk() {
    let python = python_or_skip!();
    let server = MockServer::start();
    server
        .push(Reply::text("Hi from elroy."))
        .push(Reply::text("Streaming from elroy."));
    let home = home(&server, "");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let out = run_python(&python, OPENAI_CLIENT, &[&served.addr, KEY]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("models: ['elroy']"), "{text}");
    assert!(text.contains("reply: Hi from elroy."), "{text}");
    assert!(text.contains("streamed: Streaming from elroy."), "{text}");
    assert!(text.contains("wrong key: 401 invalid_api_key"), "{text}");
    // The SDK's second request continued the first one's session.
    let second = server.chat_requests().into_iter().last().unwrap();
    let all: Vec<String> = second.messages().iter().map(Value::to_string).collect();
    assert!(all.join("\n").contains("Hello from the SDK"), "{all:?}");
}

const MCP_CLIENT: &str = r#"
import sys, asyncio
from mcp import ClientSession
addr, key = sys.argv[1], sys.argv[2]
url, headers = f"http://{addr}/mcp", {"Authorization": f"Bearer {key}"}
def transport():
    # mcp 2.x: streamable_http_client with an HTTP client carrying the headers; 1.x: headers=.
    try:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    except ImportError:
        from mcp.client.streamable_http import streamablehttp_client
        return streamablehttp_client(url, headers=headers)
async def main():
    async with transport() as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            tools = await s.list_tools()
            print("tools:", len(tools.tools), "create_memory" in [t.name for t in tools.tools])
            res = await s.call_tool("create_memory", {"name": "SDK note", "text": "Made by the Python SDK over HTTP."})
            print("created:", getattr(res, "is_error", getattr(res, "isError", None)))
            res = await s.call_tool("print_memory", {"memory_name": "SDK note"})
            print("printed:", res.content[0].text.replace("\n", " "))
asyncio.run(main())
"#;

#[test]
fn official_mcp_python_sdk_over_http() {
    let python = python_or_skip!();
    let server = MockServer::start();
    let home = home(&server, "");
    let served = Served::start(&home, &[("ELROY_SERVE_KEY", KEY)]);
    let out = run_python(&python, MCP_CLIENT, &[&served.addr, KEY]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.lines()
            .any(|l| l.starts_with("tools:") && l.ends_with("True")),
        "{text}"
    );
    assert!(text.contains("created: False"), "{text}");
    assert!(text.contains("Made by the Python SDK over HTTP."), "{text}");
    assert_eq!(
        std::fs::read_dir(home.home().join("memories"))
            .unwrap()
            .count(),
        1
    );
}
