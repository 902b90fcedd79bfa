//! elroy's MCP client against the official MCP Python SDK (`pip install mcp`, its FastMCP server,
//! `MCPServer` in mcp 2.x): `tests/data/mcp_sdk_server.py` over stdio and over streamable HTTP.
//! The SDK is installed into a virtual environment under the target directory on first use; when
//! that is impossible (no `python3 -m venv`, PyPI unreachable) each test prints
//! `SKIPPED: <reason>` and passes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::mcp_client::{load_config, sdk_venv};

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use common::{TestHome, stderr, stdout};
use elroy_core::ToolSource;
use serde_json::Value;

fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mcp_sdk_server.py")
}

/// The venv's python with `mcp` importable, made once per test process.
fn sdk_python() -> Result<PathBuf, String> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON.get_or_init(make_venv).clone()
}

fn make_venv() -> Result<PathBuf, String> {
    let venv = sdk_venv();
    let name = venv
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("mcp-python-sdk");
    common::python_venv(name, &["mcp"], "mcp, pydantic")
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

fn client_home(config: &str) -> TestHome {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(home.home().join("elroy.conf.yaml"), config).unwrap();
    home
}

fn run(home: &TestHome, args: &[&str]) -> Output {
    home.cmd()
        .env("MCP_TEST_GREETING", "hello from the client's environment")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn call(home: &TestHome, tool: &str, args: &str) -> Output {
    run(home, &["tools", "call", tool, "--args", args])
}

/// What both transports must do: list (the nested schema kept whole), call, error result,
/// nested arguments; `crash` only over stdio (over HTTP the server is not elroy's child).
fn check_server(home: &TestHome, stdio: bool) {
    let list = run(home, &["mcp", "list"]);
    assert!(list.status.success(), "{}{}", stdout(&list), stderr(&list));
    let text = stdout(&list);
    assert!(text.contains("py ("), "{text}");
    for tool in [
        "echo", "fail", "ship", "env", "where", "slow", "crash", "learn",
    ] {
        assert!(
            text.contains(&format!("\n  mcp__py__{tool} ")),
            "{tool}: {text}"
        );
    }

    let echo = call(home, "mcp__py__echo", r#"{"text":"hi"}"#);
    assert!(echo.status.success(), "{}", stderr(&echo));
    // Text content, not the structuredContent sent beside it.
    assert_eq!(stdout(&echo), "echo: hi\n");

    let fail = call(home, "mcp__py__fail", r#"{"reason":"no budget"}"#);
    assert_eq!(fail.status.code(), Some(1));
    let message = stderr(&fail);
    assert!(
        message.starts_with("Error invoking tool mcp__py__fail: ")
            && message.contains("refused: no budget"),
        "{message}"
    );

    let schema: Value =
        serde_json::from_str(&stdout(&run(home, &["tools", "schema", "mcp__py__ship"]))).unwrap();
    let parameters = &schema["function"]["parameters"];
    assert_eq!(parameters["properties"]["to"]["$ref"], "#/$defs/Address");
    assert_eq!(
        parameters["$defs"]["Address"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(parameters["properties"]["note"]["default"], Value::Null);
    let shipped = call(
        home,
        "mcp__py__ship",
        r#"{"to":{"city":"Paris","zip":"75001"},"note":"fragile"}"#,
    );
    assert!(shipped.status.success(), "{}", stderr(&shipped));
    assert_eq!(stdout(&shipped), "shipping to Paris (75001) fragile\n");
    let missing = call(home, "mcp__py__ship", r#"{"to":{"zip":"75001"}}"#);
    assert_eq!(missing.status.code(), Some(1), "{}", stdout(&missing));

    if stdio {
        // env: set over the minimal environment (PATH kept), ${VAR} expanded. A variable whose
        // name does not say it is a credential is not redacted from results.
        let greeting = call(home, "mcp__py__env", r#"{"name":"PY_GREETING"}"#);
        assert_eq!(stdout(&greeting), "hello from the client's environment\n");
        // elroy's own environment beyond the minimal set does not reach the server.
        let inherited = call(home, "mcp__py__env", r#"{"name":"MCP_TEST_GREETING"}"#);
        assert_eq!(stdout(&inherited), "<unset>\n");
        let path = call(home, "mcp__py__env", r#"{"name":"PATH"}"#);
        assert!(!stdout(&path).contains("<unset>"), "{}", stdout(&path));

        // cwd: the configured directory.
        let cwd = call(home, "mcp__py__where", "");
        let expected = std::fs::canonicalize(home.root()).unwrap();
        assert_eq!(stdout(&cwd).trim_end(), expected.display().to_string());

        // A call past mcp_call_timeout_seconds is an error naming the timeout, not a hang.
        let slow = call(home, "mcp__py__slow", "");
        assert_eq!(slow.status.code(), Some(1));
        assert!(
            stderr(&slow).starts_with(
                "Error invoking tool mcp__py__slow: the MCP server py did not answer the call of slow within 2 s (mcp_call_timeout_seconds)"
            ),
            "{}",
            stderr(&slow)
        );

        let crash = call(home, "mcp__py__crash", "");
        assert_eq!(crash.status.code(), Some(1));
        let message = stderr(&crash);
        assert!(
            message.starts_with(
                "Error invoking tool mcp__py__crash: the MCP server py failed during the call of crash: "
            ),
            "{message}"
        );
    }
}

/// `learn` adds a tool and sends `notifications/tools/list_changed`: the client offers it.
fn check_list_changed(home: &TestHome) {
    let config = load_config(home);
    let mcp = elroy_mcp_client::McpClients::new(&config, Arc::new(|_: &str| {}))
        .unwrap()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = elroy_core::ToolContext::new(elroy_core::UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: home.home(),
        user_home: home.home(),
    });
    let tools = rt.block_on(mcp.ready());
    assert!(!tools.iter().any(|t| t.tool.spec().name == "mcp__py__shout"));
    let learned = rt.block_on(async {
        let learn = mcp.find("mcp__py__learn").await.unwrap();
        let args = elroy_core::validate_arguments(learn.tool.spec(), None).unwrap();
        learn.tool.call(&ctx, args).await
    });
    assert_eq!(learned.unwrap().content, "learned shout");
    let start = Instant::now();
    while !mcp
        .available()
        .iter()
        .any(|t| t.tool.spec().name == "mcp__py__shout")
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            mcp.statuses()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn official_python_sdk_over_stdio() {
    let python = python_or_skip!();
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "mcp_startup_timeout_seconds: 30\nmcp_call_timeout_seconds: 2\nmcp_servers:\n  py:\n    command: {}\n    args: [{}]\n    cwd: {}\n    env:\n      PY_GREETING: ${{MCP_TEST_GREETING}}\n",
            python.display(),
            server_script().display(),
            home.root().display()
        ),
    )
    .unwrap();
    check_server(&home, true);
    check_list_changed(&home);
}

/// The Python server on a free loopback port, killed when dropped.
struct HttpServer(Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn official_python_sdk_over_streamable_http() {
    let python = python_or_skip!();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = HttpServer(
        Command::new(&python)
            .arg(server_script())
            .args(["http", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the SDK server did not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let home = client_home(&format!(
        "mcp_servers:\n  py:\n    url: http://127.0.0.1:{port}/mcp\n    headers:\n      X-Elroy-Test: ${{MCP_TEST_GREETING}}\n"
    ));
    check_server(&home, false);
    check_list_changed(&home);
    drop(server);
}
