//! A temporary home with the agenda and due-item tools registered, calls at chosen instants.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_agenda::AgendaStore;
use elroy_core::{TimeContext, ToolContext, ToolRegistry, ToolResult, UserInfo};
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The shared directory beside the repository.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata")
}

pub struct Home {
    pub dir: tempfile::TempDir,
    pub registry: ToolRegistry,
    pub ctx: ToolContext,
}

impl Home {
    /// A fresh home for `token` in zone `tz`.
    pub fn new(token: &str, tz: TimeZone) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let elroy_home = dir.path().to_path_buf();
        let user_home = if token == "DEFAULT" {
            elroy_home.clone()
        } else {
            elroy_home.join("users").join(token)
        };
        let mut registry = ToolRegistry::new();
        elroy_tools_agenda::register(&mut registry);
        elroy_tools_due::register(&mut registry);
        let mut ctx = ToolContext::new(UserInfo {
            id: Some(1),
            token: token.to_owned(),
            elroy_home: elroy_home.clone(),
            user_home: user_home.clone(),
        });
        ctx.time = TimeContext::fixed(Timestamp::UNIX_EPOCH, tz);
        ctx.services.insert(Arc::new(
            AgendaStore::open(&elroy_home, &user_home, token).unwrap(),
        ));
        Home { dir, registry, ctx }
    }

    pub fn agenda_dir(&self) -> PathBuf {
        self.ctx.user.user_home.join("agenda")
    }

    pub fn set_now(&mut self, now: &str) {
        let tz = self.ctx.time.tz.clone();
        self.ctx.time = TimeContext::fixed(now.parse().unwrap(), tz);
    }

    /// Calls `tool` with raw JSON arguments at the current instant.
    pub fn call(&self, tool: &str, args: &str) -> ToolResult {
        let future = self.registry.invoke(tool, Some(args), &self.ctx);
        let mut future = std::pin::pin!(future);
        match future
            .as_mut()
            .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
        {
            std::task::Poll::Ready(result) => result,
            std::task::Poll::Pending => panic!("agenda tools complete at once"),
        }
    }

    /// The text of `agenda/{file}`.
    pub fn file(&self, file: &str) -> String {
        std::fs::read_to_string(self.agenda_dir().join(file)).unwrap()
    }

    /// The file names in `agenda/`, sorted.
    pub fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.agenda_dir())
            .map(|r| {
                r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// The 14 tools.
pub const TOOLS: [&str; 14] = [
    "add_agenda_item",
    "add_agenda_checklist_item",
    "add_agenda_item_update",
    "complete_agenda_checklist_item",
    "complete_agenda_item",
    "delete_agenda_item",
    "edit_agenda_checklist_item",
    "list_agenda_items",
    "create_due_item",
    "complete_due_item",
    "delete_due_item",
    "print_due_item",
    "rename_due_item",
    "update_due_item_text",
];

/// D7: Elroy prints `Trigger Time: {naive UTC}`; elroy prints local time with the offset. Rewrites
/// Elroy's line into ours so the rest of the text is compared exactly.
pub fn d7_trigger_time(text: &str, tz: &TimeZone) -> String {
    text.split('\n')
        .map(|line| match line.strip_prefix("Trigger Time: ") {
            Some(naive) => {
                let ts = elroy_agenda::parse_stored_trigger(naive).expect("Elroy's naive UTC time");
                format!(
                    "Trigger Time: {}",
                    elroy_agenda::format_local_with_offset(ts, tz)
                )
            }
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
