//! The user tools through the registry, with Elroy's strings (`docs/tools.md#user-profile`), and
//! their schemas against the golden file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use elroy_core::{Services, TimeContext, ToolContext, ToolRegistry, ToolResult, UserInfo};
use elroy_db::Db;
use serde_json::Value;

struct Env {
    registry: ToolRegistry,
    ctx: ToolContext,
}

fn env() -> Env {
    let db = Arc::new(Db::open_in_memory().unwrap());
    let now: jiff::Timestamp = "2026-03-16T13:30:00Z".parse().unwrap();
    let user = db.ensure_user("fixture-user-public", now).unwrap();
    let mut services = Services::new();
    services.insert(db);
    let mut ctx = ToolContext::new(UserInfo {
        id: Some(user),
        token: "fixture-user-public".into(),
        elroy_home: std::env::temp_dir(),
        user_home: std::env::temp_dir(),
    });
    ctx.services = services;
    ctx.time = TimeContext::fixed(now, jiff::tz::TimeZone::posix("IST-5:30").unwrap());
    let mut registry = ToolRegistry::new();
    elroy_tools_user::register(&mut registry);
    Env { registry, ctx }
}

fn call(env: &Env, tool: &str, args: &str) -> ToolResult {
    let future = env.registry.invoke(tool, Some(args), &env.ctx);
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(r) => r,
        std::task::Poll::Pending => panic!("user tools complete at once"),
    }
}

#[test]
fn full_name_flow() {
    let e = env();
    assert_eq!(call(&e, "get_user_full_name", "").content, "Unknown name");
    assert_eq!(
        call(&e, "set_user_full_name", r#"{"full_name":"Priya Raman"}"#).content,
        "Full name set to Priya Raman. Previous value was User."
    );
    assert_eq!(call(&e, "get_user_full_name", "{}").content, "Priya Raman");
    assert_eq!(
        call(&e, "set_user_full_name", r#"{"full_name":"P. R."}"#).content,
        "Full name already set to Priya Raman. If this should be changed, set override_existing=True."
    );
    let r = call(
        &e,
        "set_user_full_name",
        r#"{"full_name":"A. N. Example","override_existing":"true"}"#,
    );
    assert!(!r.is_error);
    assert_eq!(
        r.content,
        "Full name set to A. N. Example. Previous value was Priya Raman."
    );
    // A stored value "User" counts as unset.
    call(
        &e,
        "set_user_full_name",
        r#"{"full_name":"User","override_existing":true}"#,
    );
    assert_eq!(
        call(&e, "set_user_full_name", r#"{"full_name":"Ann"}"#).content,
        "Full name set to Ann. Previous value was User."
    );
}

#[test]
fn preferred_name_flow() {
    let e = env();
    assert_eq!(call(&e, "get_user_preferred_name", "").content, "User");
    assert_eq!(
        call(
            &e,
            "set_user_preferred_name",
            r#"{"preferred_name":"Priya"}"#
        )
        .content,
        "Set user preferred name to Priya. Was User."
    );
    assert_eq!(
        call(
            &e,
            "set_user_preferred_name",
            r#"{"preferred_name":"Pri","override_existing":false}"#
        )
        .content,
        "Preferred name already set to Priya. If this should be changed, use override_existing=True."
    );
    assert_eq!(
        call(
            &e,
            "set_user_preferred_name",
            r#"{"preferred_name":"Pri","override_existing":true}"#
        )
        .content,
        "Set user preferred name to Pri. Was Priya."
    );
    assert_eq!(call(&e, "get_user_preferred_name", "").content, "Pri");
    let r = call(&e, "set_user_preferred_name", "{}");
    assert!(r.is_error);
    assert_eq!(
        r.content,
        "Error invoking tool set_user_preferred_name: missing required argument 'preferred_name'"
    );
}

#[test]
fn schemas_equal_golden() {
    let golden: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../testdata/golden/tools_schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let e = env();
    assert_eq!(e.registry.len(), 4);
    for name in e.registry.names() {
        let entry = golden
            .iter()
            .find(|g| g["function"]["name"] == name)
            .unwrap();
        assert_eq!(
            serde_json::to_string(&e.registry.get(name).unwrap().spec().to_json()).unwrap(),
            serde_json::to_string(entry).unwrap(),
            "{name}"
        );
    }
}
