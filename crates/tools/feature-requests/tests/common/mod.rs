//! Shared helpers: a registry with this family, a context on a temporary home, and a poll-once
//! executor (sync tools are ready at once).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_core::{TimeContext, ToolContext, ToolRegistry, ToolResult, UserInfo};
use elroy_feature_requests::FeatureRequestStore;
use jiff::Timestamp;
use jiff::tz::TimeZone;

pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata")
}

pub fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    elroy_tools_feature_requests::register(&mut r);
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

/// A context for `token` on `elroy_home` (user home per `docs/formats.md#home-layout`) at `now` in
/// `tz`.
pub fn context(elroy_home: &Path, token: &str, now: &str, tz: TimeZone) -> ToolContext {
    let user_home = if token == "DEFAULT" {
        elroy_home.to_path_buf()
    } else {
        elroy_home.join("users").join(token)
    };
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: token.to_owned(),
        elroy_home: elroy_home.to_path_buf(),
        user_home: user_home.clone(),
    });
    ctx.time = TimeContext::fixed(now.parse::<Timestamp>().unwrap(), tz);
    ctx.services
        .insert(Arc::new(FeatureRequestStore::new(elroy_home, &user_home)));
    ctx
}

pub fn call(ctx: &ToolContext, tool: &str, args: &str) -> ToolResult {
    block_on(registry().invoke(tool, Some(args), ctx))
}

pub fn ist() -> TimeZone {
    TimeZone::posix("IST-5:30").unwrap()
}
