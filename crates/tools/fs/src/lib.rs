//! # elroy-tools-fs
//!
//! The filesystem tools of `docs/tool-rules.md#paths`: `pwd`, `ls` and `read_file`. Paths resolve
//! against the call's working directory (`ToolContext::cwd`); a leading `~` is expanded to `$HOME`
//! first (decision D17). File contents are opaque text (robustness R17) and come back in bounded
//! pieces (R18).

mod ls;
mod path;
mod pwd;
mod read_file;

use elroy_core::{ToolFamily, ToolRegistry, sync_tool};

pub use ls::{Ls, LsArgs};
pub use pwd::Pwd;
pub use read_file::{ReadFile, ReadFileArgs};

/// The family `docs/tools.md` lists these tools under; every tool of the crate names it.
pub const FAMILY: ToolFamily = ToolFamily {
    title: "Files",
    guide: "Read-only access to local files, relative to the directory elroy was started in.",
};

/// Registers `pwd`, `ls` and `read_file`.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(Pwd))
        .register(sync_tool(Ls))
        .register(sync_tool(ReadFile));
}

// The integration tests (`tests/*.rs`) run in this crate's unit-test executable, so the package
// builds one test executable (docs/development.md, "Test layout"); they use the crate by its name.
#[cfg(test)]
extern crate self as elroy_tools_fs;
#[cfg(test)]
#[path = "../tests/main.rs"]
mod integration_tests;
