//! # elroy-tools-fs
//!
//! The filesystem tools of `shared/spec/tools.md` §6: `pwd`, `ls` and `read_file`. Paths resolve
//! against the call's working directory (`ToolContext::cwd`); a leading `~` is expanded to `$HOME`
//! first (decision D17). File contents are opaque text (robustness R17) and come back in bounded
//! pieces (R18).

mod ls;
mod path;
mod pwd;
mod read_file;

use elroy_core::{ToolRegistry, sync_tool};

pub use ls::{Ls, LsArgs};
pub use pwd::Pwd;
pub use read_file::{ReadFile, ReadFileArgs};

/// Registers `pwd`, `ls` and `read_file`.
pub fn register(registry: &mut ToolRegistry) {
    registry
        .register(sync_tool(Pwd))
        .register(sync_tool(Ls))
        .register(sync_tool(ReadFile));
}
