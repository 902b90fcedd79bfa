//! The integration tests of `elroy-tools-due`: one test executable for the package
//! (`cargo test -p elroy-tools-due --test tools-due [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod effects;
mod natural_times;
mod schema;

/// The due-item tools and a context on `home` at `now` (RFC 3339) in `tz`, with the home's agenda
/// store: what every test here starts from.
#[allow(clippy::unwrap_used)]
pub(crate) fn setup(
    home: &std::path::Path,
    now: &str,
    tz: jiff::tz::TimeZone,
) -> (elroy_core::ToolRegistry, elroy_core::ToolContext) {
    let mut registry = elroy_core::ToolRegistry::new();
    elroy_tools_due::register(&mut registry);
    let mut ctx = elroy_core::ToolContext::new(elroy_core::UserInfo {
        id: Some(1),
        token: "DEFAULT".into(),
        elroy_home: home.to_path_buf(),
        user_home: home.to_path_buf(),
    });
    ctx.time = elroy_core::TimeContext::fixed(now.parse().unwrap(), tz);
    ctx.services.insert(std::sync::Arc::new(
        elroy_agenda::AgendaStore::open(home, home, "DEFAULT").unwrap(),
    ));
    (registry, ctx)
}

/// Runs `tool` through `registry` (the due-item tools complete at once: no runtime needed).
#[allow(clippy::panic)]
pub(crate) fn call(
    registry: &elroy_core::ToolRegistry,
    ctx: &elroy_core::ToolContext,
    tool: &str,
    args: &str,
) -> elroy_core::ToolResult {
    let future = registry.invoke(tool, Some(args), ctx);
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(result) => result,
        std::task::Poll::Pending => panic!("due-item tools complete at once"),
    }
}
