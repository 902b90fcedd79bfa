//! elroy as an MCP client, at the edges: what a stdio server may see of elroy's environment,
//! the effect each server tool declares, tools that can only run as tasks, servers left behind
//! when a one-shot command is ended by a signal, and transport failures said in one short line.
//! The server here is a small shell script speaking just enough MCP (one JSON-RPC message per
//! line), so that it can misbehave on purpose: it ignores SIGTERM and end of input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::mcp_client::{load_config, processes_with};

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{TestHome, stderr, stdout};
use elroy_core::{Changes, EffectClass, ToolSource};
use elroy_mcp_client::McpClients;

/// The tools the script lists: `env` (read-only, closed world), `wait` (no annotations),
/// `peek` (read-only, open world by MCP's default), `job` (only as a task).
const TOOLS: &str = r#"[{"name":"env","description":"Names of the environment variables.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true,"openWorldHint":false}},{"name":"wait","description":"Never answers.","inputSchema":{"type":"object","properties":{}}},{"name":"peek","description":"Reads.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true}},{"name":"job","description":"Runs as a task.","inputSchema":{"type":"object","properties":{}},"execution":{"taskSupport":"required"}}]"#;

/// Writes the shell MCP server into `dir`; its arguments are a pid file and a file it creates
/// when `wait` is called. It ignores SIGTERM, SIGHUP and SIGINT, and keeps running after end of
/// input, so only SIGKILL of its process group stops it.
fn shell_server(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("sh-mcp-server");
    let script = format!(
        r#"#!/bin/sh
trap '' TERM HUP INT
echo $$ > "$1"
reply() {{ printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$1" "$2"; }}
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) reply "$id" '{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"sh","version":"1"}}}}' ;;
    *'"method":"tools/list"'*) reply "$id" '{{"tools":{TOOLS}}}' ;;
    *'"name":"env"'*)
      names=$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | sort | tr '\n' ' ')
      reply "$id" "{{\"content\":[{{\"type\":\"text\",\"text\":\"$names\"}}]}}" ;;
    *'"name":"wait"'*) : > "$2"; while :; do sleep 1; done ;;
    *'"name":"peek"'*) reply "$id" '{{"content":[{{"type":"text","text":"peeked"}}]}}' ;;
  esac
done
while :; do sleep 1; done
"#
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A client home whose `mcp_servers` has the shell server as `sh` (with `extra` lines under
/// its entry); the pid and called files' paths.
fn shell_client(extra: &str) -> (TestHome, PathBuf, PathBuf) {
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    let script = shell_server(home.root());
    let pid = home.root().join("server.pid");
    let called = home.root().join("called");
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "mcp_startup_timeout_seconds: 30\nmcp_servers:\n  sh:\n    command: {}\n    args: [{}, {}]\n{extra}",
            script.display(),
            pid.display(),
            called.display()
        ),
    )
    .unwrap();
    (home, pid, called)
}

fn run(home: &TestHome, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = home.cmd();
    cmd.args(args).stdin(Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().unwrap()
}

/// Kind: secrets in elroy's environment (provider keys, a token, a cloud secret) reach a stdio
/// server only when its entry's `env` names them.
#[test]
fn a_stdio_server_gets_a_minimal_environment_plus_its_entry() {
    let secrets = [
        ("ANTHROPIC_API_KEY", "sk-ant-secret"),
        ("OPENAI_API_KEY", "sk-openai-secret"),
        ("GITHUB_TOKEN", "ghp_secret"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret"),
        ("LANG", "C.UTF-8"),
    ];
    let (plain, _, _) = shell_client("");
    let out = run(&plain, &["tools", "call", "mcp__sh__env"], &secrets);
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<String> = stdout(&out).split_whitespace().map(str::to_owned).collect();
    for kept in ["HOME", "PATH", "LANG"] {
        assert!(names.iter().any(|n| n == kept), "{kept}: {names:?}");
    }
    for secret in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "ELROY_HOME",
        "TZ",
    ] {
        assert!(
            !names.iter().any(|n| n == secret),
            "{secret} leaked: {names:?}"
        );
    }

    // Named in the entry (one by `${VAR}`, one literal): those and no other.
    let (named, _, _) = shell_client(
        "    env:\n      OPENAI_API_KEY: ${OPENAI_API_KEY}\n      GITHUB_TOKEN: literal\n",
    );
    let out = run(&named, &["tools", "call", "mcp__sh__env"], &secrets);
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<String> = stdout(&out).split_whitespace().map(str::to_owned).collect();
    assert!(names.iter().any(|n| n == "OPENAI_API_KEY"), "{names:?}");
    assert!(names.iter().any(|n| n == "GITHUB_TOKEN"), "{names:?}");
    assert!(!names.iter().any(|n| n == "ANTHROPIC_API_KEY"), "{names:?}");
    assert!(
        !names.iter().any(|n| n == "AWS_SECRET_ACCESS_KEY"),
        "{names:?}"
    );
}

/// Each server tool's effect follows its transport and annotations (never lower than `read`
/// over stdio, `network` over HTTP); a tool that requires task augmentation is not offered.
#[test]
fn server_tools_declare_their_effect_and_task_only_tools_are_not_offered() {
    let (home, _, _) = shell_client("");
    let listed = run(&home, &["tools", "list", "--names"], &[]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let names = stdout(&listed);
    for offered in ["mcp__sh__env", "mcp__sh__wait", "mcp__sh__peek"] {
        assert!(names.lines().any(|l| l == offered), "{offered}: {names}");
    }
    assert!(!names.contains("mcp__sh__job"), "{names}");
    let call = run(&home, &["tools", "call", "mcp__sh__job"], &[]);
    assert!(!call.status.success());

    let config = load_config(&home);
    let mcp = McpClients::new(&config, Arc::new(|_: &str| {}))
        .unwrap()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let effect = |name: &str| {
        rt.block_on(mcp.find(name))
            .unwrap_or_else(|| panic!("{name}"))
            .tool
            .spec()
            .effect
    };
    let env = effect("mcp__sh__env");
    assert_eq!(
        (env.class, env.changes),
        (EffectClass::Read, Changes::Nothing)
    );
    let wait = effect("mcp__sh__wait");
    assert_eq!(
        (wait.class, wait.changes),
        (EffectClass::Execute, Changes::Overwrites)
    );
    // Read-only but not closed-world: still a program that may reach anything.
    let peek = effect("mcp__sh__peek");
    assert_eq!(
        (peek.class, peek.changes),
        (EffectClass::Execute, Changes::Nothing)
    );
    mcp.shutdown();

    // Over HTTP every tool reaches another machine, whatever it says.
    use rmcp::model::{Tool, ToolAnnotations};
    let schema = Arc::new(serde_json::Map::new());
    let closed = Tool::new("t", "d", Arc::clone(&schema))
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    let bare = Tool::new("t", "d", Arc::clone(&schema));
    let additive = Tool::new("t", "d", schema)
        .with_annotations(ToolAnnotations::new().read_only(false).destructive(false));
    let http = elroy_mcp_client::tool_effect(true, &closed);
    assert_eq!(
        (http.class, http.changes),
        (EffectClass::Network, Changes::Nothing)
    );
    let http = elroy_mcp_client::tool_effect(true, &bare);
    assert_eq!(
        (http.class, http.changes),
        (EffectClass::Network, Changes::Overwrites)
    );
    let stdio = elroy_mcp_client::tool_effect(false, &additive);
    assert_eq!(
        (stdio.class, stdio.changes),
        (EffectClass::Execute, Changes::Adds)
    );
}

/// Waits until `done` holds, at most `limit` (a bound on a hang, not a speed assertion).
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// Whether process `pid` still runs (a zombie does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .is_ok_and(|status| !status.contains("State:\tZ"))
}

/// Kind: a one-shot `elroy tools call mcp__…` ended by a signal mid-call (SIGTERM, SIGHUP,
/// SIGINT) leaves no server behind, even one that ignores SIGTERM and end of input.
#[test]
fn a_one_shot_call_ended_by_a_signal_stops_its_server() {
    use rustix::process::{Pid, Signal, kill_process};
    for signal in [Signal::TERM, Signal::HUP, Signal::INT] {
        let (home, pid_file, called) = shell_client("");
        let mut elroy = home
            .cmd()
            .args(["tools", "call", "mcp__sh__wait"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(
            eventually(Duration::from_secs(60), || called.exists()),
            "{signal:?}: the call never reached the server"
        );
        let server: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(running(server));
        let elroy_pid = Pid::from_raw(i32::try_from(elroy.id()).unwrap()).unwrap();
        kill_process(elroy_pid, signal).unwrap();
        let mut status = None;
        assert!(
            eventually(Duration::from_secs(30), || {
                status = elroy.try_wait().unwrap();
                status.is_some()
            }),
            "{signal:?}: elroy did not end"
        );
        assert!(!status.unwrap().success(), "{signal:?}");
        assert!(
            eventually(Duration::from_secs(10), || !running(server)),
            "{signal:?}: the server {server} still runs"
        );
        let script = home.root().join("sh-mcp-server").display().to_string();
        assert!(
            eventually(Duration::from_secs(10), || processes_with(&script)
                .is_empty()),
            "{signal:?}: {:?}",
            processes_with(&script)
        );
    }
}

/// A loopback HTTP server answering every request with `head` and `body`; its address.
fn answering(head: &'static str, body: String) -> std::net::SocketAddr {
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
                format!(
                    "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    address
}

/// Kind: transport failures in one short line naming the cause: HTML error pages (a 404 and a
/// 502) never pasted, a refused connection said so (a closed port on IPv4 and on the port of a
/// listener just closed), and a start-up timeout of `npx` / `uvx` hinting at a first-run
/// download (a plain command gets no such hint).
#[test]
fn transport_failures_are_short_and_name_the_cause() {
    let page = format!(
        "<!DOCTYPE html><html><head><title>Not Found</title></head><body>{}</body></html>",
        "<p>The requested URL was not found on this server.</p>".repeat(200)
    );
    let missing = answering(
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/html",
        page.clone(),
    );
    let broken = answering("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html", page);
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let home = TestHome::new();
    std::fs::create_dir_all(home.home()).unwrap();
    let bin = home.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for program in ["npx", "uvx", "slowpoke"] {
        use std::os::unix::fs::PermissionsExt;
        let path = bin.join(program);
        std::fs::write(&path, "#!/bin/sh\nexec sleep 600\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        home.home().join("elroy.conf.yaml"),
        format!(
            "mcp_startup_timeout_seconds: 2\nmcp_servers:\n  missing:\n    url: http://{missing}/mcp\n  broken:\n    url: http://{broken}/mcp\n  closed:\n    url: http://{closed}/mcp\n  npx:\n    command: {b}/npx\n    args: [-y, some-server]\n  uvx:\n    command: {b}/uvx\n    args: [some-server]\n  slow:\n    command: {b}/slowpoke\n",
            b = bin.display()
        ),
    )
    .unwrap();
    let list = run(&home, &["mcp", "list"], &[]);
    let text = stdout(&list);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} (")))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .to_owned()
    };
    for (name, status) in [("missing", "404"), ("broken", "502")] {
        let line = line(name);
        assert!(line.contains(status), "{line}");
        assert!(!line.contains('<') && line.len() < 400, "{line}");
    }
    let closed_line = line("closed");
    assert!(closed_line.contains("connection refused"), "{closed_line}");
    assert!(closed_line.len() < 300, "{closed_line}");
    for name in ["npx", "uvx"] {
        let line = line(name);
        assert!(line.contains("within 2 s"), "{line}");
        assert!(
            line.contains(&format!("`{name}` may still be downloading")),
            "{line}"
        );
    }
    let slow = line("slow");
    assert!(
        slow.contains("within 2 s") && !slow.contains("downloading"),
        "{slow}"
    );
}
