//! The integration tests of `elroy-tools-due`: one test executable for the package
//! (`cargo test -p elroy-tools-due --test tools-due [FILTER]`). Each file beside this one is a module;
//! add new tests to the file of their concern, or add a file and a `mod` line here
//! (docs/development.md, "Test layout").

mod effects;
mod natural_times;
mod schema;

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
