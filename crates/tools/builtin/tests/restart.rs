//! `restart_session` (`docs/tools.md#restart_session`): its schema equals Elroy's, and it restarts
//! only where the front end can.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;

use elroy_core::{Capabilities, Effect, ToolContext, ToolRegistry, UserInfo};
use elroy_tools_restart::{DEFAULT_RESUME_MESSAGE, SCHEDULED, register};

fn ctx(can_restart: bool) -> ToolContext {
    let mut ctx = ToolContext::new(UserInfo {
        id: None,
        token: "DEFAULT".into(),
        elroy_home: "/h".into(),
        user_home: "/h".into(),
    });
    ctx.capabilities = Capabilities { can_restart };
    ctx
}

fn call(can_restart: bool, args: &str) -> elroy_core::ToolResult {
    let mut registry = ToolRegistry::new();
    register(&mut registry);
    let ctx = ctx(can_restart);
    let future = registry.invoke("restart_session", Some(args), &ctx);
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(r) => r,
        std::task::Poll::Pending => panic!("sync tool pending"),
    }
}

#[test]
fn schema_matches_the_golden_file() {
    let golden: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../testdata/golden/tools_schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let expected = golden
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "restart_session")
        .unwrap();
    let mut registry = ToolRegistry::new();
    register(&mut registry);
    assert_eq!(&registry.specs()[0].to_json(), expected);
}

#[test]
fn restarts_only_where_possible() {
    let r = call(false, "{}");
    assert_eq!(
        r.content,
        "Error invoking tool restart_session: Session restart is not available in this Elroy runtime."
    );
    assert!(r.is_error && r.effects.is_empty());

    let r = call(true, "{\"resume_message\":\"\"}");
    assert_eq!(r.content, SCHEDULED);
    assert_eq!(
        r.effects,
        [Effect::Restart {
            resume_message: DEFAULT_RESUME_MESSAGE.into()
        }]
    );
    let r = call(true, "{\"resume_message\":\"Back: continue the plan\"}");
    assert_eq!(
        r.effects,
        [Effect::Restart {
            resume_message: "Back: continue the plan".into()
        }]
    );
}
