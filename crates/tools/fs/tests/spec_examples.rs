//! The examples of `docs/tool-rules.md#paths` and robustness R17/R18, through the registry
//! (validation included).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use elroy_core::{ToolContext, ToolRegistry, ToolResult, UserInfo};

fn call(cwd: &Path, tool: &str, args: &str) -> ToolResult {
    let mut registry = ToolRegistry::new();
    elroy_tools_fs::register(&mut registry);
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: cwd.into(),
        user_home: cwd.into(),
    });
    ctx.cwd = cwd.canonicalize().unwrap();
    let future = registry.invoke(tool, Some(args), &ctx);
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(result) => result,
        std::task::Poll::Pending => panic!("filesystem tools complete at once"),
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("project/nested")).unwrap();
    std::fs::write(p.join("project/nested/c.txt"), "c").unwrap();
    std::fs::write(p.join("project/nested/d.txt"), "dd").unwrap();
    std::fs::write(p.join("project/a.txt"), "aaa").unwrap();
    std::fs::write(p.join("notes.txt"), "12345").unwrap();
    dir
}

#[test]
fn ls_examples() {
    let dir = project();
    let r = call(
        dir.path(),
        "ls",
        r#"{"path":"project","max_entries":3,"max_depth":2}"#,
    );
    assert_eq!(
        r.content,
        r#"{"path":"project","type":"dir","recursive":true,"max_entries":3,"max_depth":2,"truncated":true,"entries":[{"path":"project/nested","type":"dir","size_bytes":null},{"path":"project/nested/c.txt","type":"file","size_bytes":1},{"path":"project/nested/d.txt","type":"file","size_bytes":2}]}"#
    );
    let r = call(dir.path(), "ls", r#"{"path":"notes.txt"}"#);
    assert_eq!(
        r.content,
        r#"{"path":"notes.txt","type":"file","recursive":false,"max_entries":50,"max_depth":2,"truncated":false,"entries":[{"path":"notes.txt","type":"file","size_bytes":5}]}"#
    );
    let r = call(
        dir.path(),
        "ls",
        r#"{"path":"project","recursive":"false"}"#,
    );
    assert_eq!(
        r.content,
        r#"{"path":"project","type":"dir","recursive":false,"max_entries":50,"max_depth":2,"truncated":false,"entries":[{"path":"project/nested","type":"dir","size_bytes":null},{"path":"project/a.txt","type":"file","size_bytes":3}]}"#
    );
    let r = call(dir.path(), "ls", r#"{"path":"project","max_depth":0}"#);
    assert!(r.content.contains(r#""entries":[{"path":"project/nested","type":"dir","size_bytes":null},{"path":"project/a.txt""#));
}

#[test]
fn ls_errors() {
    let dir = project();
    assert_eq!(
        call(dir.path(), "ls", r#"{"max_entries":0}"#).content,
        "Error invoking tool ls: max_entries must be at least 1"
    );
    assert_eq!(
        call(dir.path(), "ls", r#"{"max_depth":-1}"#).content,
        "Error invoking tool ls: max_depth must be at least 0"
    );
    assert_eq!(
        call(dir.path(), "ls", r#"{"path":"nope"}"#).content,
        "Error invoking tool ls: Path does not exist: nope"
    );
}

#[cfg(unix)]
#[test]
fn ls_symlinks_sort_with_files_and_broken_links_have_no_size() {
    let dir = project();
    std::os::unix::fs::symlink(
        dir.path().join("project/nested"),
        dir.path().join("project/link"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", dir.path().join("project/broken")).unwrap();
    let r = call(dir.path(), "ls", r#"{"path":"project","recursive":false}"#);
    assert_eq!(
        r.content,
        r#"{"path":"project","type":"dir","recursive":false,"max_entries":50,"max_depth":2,"truncated":false,"entries":[{"path":"project/nested","type":"dir","size_bytes":null},{"path":"project/a.txt","type":"file","size_bytes":3},{"path":"project/broken","type":"symlink","size_bytes":null},{"path":"project/link","type":"symlink","size_bytes":null}]}"#
    );
}

#[test]
fn read_file_is_opaque_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.json"), "{}").unwrap();
    let r = call(dir.path(), "read_file", r#"{"path":"notes.json"}"#);
    assert_eq!(
        r.content,
        r#"{"path":"notes.json","start_line":1,"end_line":1,"total_lines":1,"truncated":false,"content":"1: {}"}"#
    );
    std::fs::write(dir.path().join("bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
    assert_eq!(
        call(dir.path(), "read_file", r#"{"path":"bin.dat"}"#).content,
        "Error invoking tool read_file: Unable to decode file as text: bin.dat"
    );
}

#[cfg(unix)]
#[test]
fn read_file_refuses_devices() {
    // A device or FIFO is never read (`/dev/zero` would be read until memory runs out).
    let dir = tempfile::tempdir().unwrap();
    for path in ["/dev/null", "/dev/zero"] {
        assert_eq!(
            call(dir.path(), "read_file", &format!(r#"{{"path":"{path}"}}"#)).content,
            format!("Error invoking tool read_file: Unable to read file: {path}")
        );
    }
}

#[test]
fn read_file_bounded_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), text).unwrap();
    let get = |args: &str| -> serde_json::Value {
        serde_json::from_str(&call(dir.path(), "read_file", args).content).unwrap()
    };
    let v = get(r#"{"path":"big.txt"}"#);
    assert_eq!(
        (
            v["end_line"].as_i64(),
            v["total_lines"].as_i64(),
            v["truncated"].as_bool()
        ),
        (Some(200), Some(100_000), Some(true))
    );
    let v = get(r#"{"path":"big.txt","start_line":1,"end_line":100000}"#);
    assert_eq!(
        (v["end_line"].as_i64(), v["truncated"].as_bool()),
        (Some(2000), Some(true))
    );
    assert!(v["content"].as_str().unwrap().ends_with("2000: line 2000"));
    let v = get(r#"{"path":"big.txt","start_line":99990}"#);
    assert_eq!(
        (v["end_line"].as_i64(), v["truncated"].as_bool()),
        (Some(100_000), Some(false))
    );
    assert_eq!(
        call(
            dir.path(),
            "read_file",
            r#"{"path":"big.txt","start_line":0}"#
        )
        .content,
        "Error invoking tool read_file: start_line must be at least 1"
    );
    assert_eq!(
        call(
            dir.path(),
            "read_file",
            r#"{"path":"big.txt","start_line":5,"end_line":4}"#
        )
        .content,
        "Error invoking tool read_file: end_line must be greater than or equal to start_line"
    );
}

#[test]
fn tilde_expands_to_home() {
    // D17: `~/x` is the user's home, never a folder named `~` in the working directory.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("~")).unwrap();
    std::fs::write(dir.path().join("~/only-here.txt"), "x").unwrap();
    let r = call(dir.path(), "read_file", r#"{"path":"~/only-here.txt"}"#);
    assert!(r.is_error, "{}", r.content);
}
