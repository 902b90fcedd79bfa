//! Shared helpers: a context on a temporary home with a [`Notebook`], the tool called through the
//! registry (validator first, as a model's call) or directly (no validator).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use elroy_core::{ToolContext, ToolRegistry, ToolResult, UserInfo, ValidatedArgs};
use elroy_notebook::Notebook;
use serde_json::Value;

pub fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    elroy_tools_notebook::register(&mut r);
    r
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("sync tools are ready at once"),
    }
}

/// A context for the DEFAULT user of `home` (the user home is the home itself).
pub fn context(home: &Path) -> ToolContext {
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: home.to_path_buf(),
        user_home: home.to_path_buf(),
    });
    ctx.services.insert(Arc::new(Notebook::new(home, home)));
    ctx
}

/// A call as a model makes it: validation (`docs/tool-rules.md#argument-validation`) first.
pub fn call(ctx: &ToolContext, args: &Value) -> ToolResult {
    block_on(registry().invoke("memory", Some(&args.to_string()), ctx))
}

/// The tool executed without the validator (an embedder or a unit test).
pub fn call_direct(ctx: &ToolContext, args: &Value) -> ToolResult {
    let registry = registry();
    let tool = registry.get("memory").unwrap();
    let map = args.as_object().unwrap().clone();
    match block_on(tool.call(ctx, ValidatedArgs::unchecked(map))) {
        Ok(output) => ToolResult::ok(output),
        Err(e) => ToolResult::error("memory", e.message()),
    }
}

pub fn read(home: &Path, file: &str) -> String {
    std::fs::read_to_string(home.join(file)).unwrap()
}
