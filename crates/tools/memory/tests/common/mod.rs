//! A home with the database, transcript and memory store, running tools like a direct call:
//! validation by the registry, effects applied to the active context as one version.

#![allow(
    dead_code,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_core::{Message, Services, TimeContext, ToolContext, ToolRegistry, ToolResult, UserInfo};
use elroy_db::Db;
use elroy_memory::{MemoryStore, MemoryStoreOptions};
use elroy_transcript::TranscriptStore;

pub const TOKEN: &str = "fixture-user-public";

pub fn ts(s: &str) -> jiff::Timestamp {
    s.parse().unwrap()
}

pub fn ist() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::posix("IST-5:30").unwrap()
}

pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../testdata")
}

pub struct Env {
    pub dir: tempfile::TempDir,
    pub db: Arc<Db>,
    pub user: i64,
    pub transcript: Arc<TranscriptStore>,
    pub memory: Arc<MemoryStore>,
    pub registry: ToolRegistry,
    pub agenda: Option<Arc<elroy_agenda::AgendaStore>>,
}

impl Env {
    /// A fresh home for `token`; `memory_dir` and `elroy_db` as given (defaults: `<home>/memories`,
    /// no Elroy database).
    pub fn new(token: &str, setup: impl FnOnce(&Path) -> Option<PathBuf>) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let elroy_db = setup(dir.path());
        let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
        let now = ts("2026-03-15T00:00:00Z");
        let user = db.ensure_user(token, now).unwrap();
        let transcript = Arc::new(TranscriptStore::new(Arc::clone(&db)));
        let (memory, _) = MemoryStore::open(
            Arc::clone(&db),
            MemoryStoreOptions {
                elroy_home: dir.path().to_path_buf(),
                memory_dir: dir.path().join("memories"),
                elroy_db_path: elroy_db,
                user_id: user,
                embedder: None,
                cosine_threshold: 0.3,
            },
            now,
        )
        .unwrap();
        let mut registry = ToolRegistry::new();
        elroy_tools_memory::register(&mut registry);
        Env {
            dir,
            db,
            user,
            transcript,
            memory: Arc::new(memory),
            registry,
            agenda: None,
        }
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }

    pub fn context(&self) -> Vec<Message> {
        self.transcript
            .active_context(self.user)
            .unwrap()
            .into_iter()
            .map(|s| s.message)
            .collect()
    }

    fn ctx(&self, now: jiff::Timestamp) -> ToolContext {
        let mut services = Services::new();
        services.insert(Arc::clone(&self.db));
        services.insert(Arc::clone(&self.transcript));
        services.insert(Arc::clone(&self.memory));
        if let Some(agenda) = &self.agenda {
            services.insert(Arc::clone(agenda));
        }
        let mut ctx = ToolContext::new(UserInfo {
            id: Some(self.user),
            token: TOKEN.into(),
            elroy_home: self.home().to_path_buf(),
            user_home: self.home().to_path_buf(),
        });
        ctx.services = services;
        ctx.time = TimeContext::fixed(now, ist());
        ctx.conversation = self.context().into();
        ctx
    }

    /// Runs `tool` at `now` and applies its effects to the active context.
    pub fn call(&self, tool: &str, args: &str, now: jiff::Timestamp) -> ToolResult {
        let ctx = self.ctx(now);
        let future = self.registry.invoke(tool, Some(args), &ctx);
        let mut future = std::pin::pin!(future);
        let result = match future
            .as_mut()
            .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
        {
            std::task::Poll::Ready(r) => r,
            std::task::Poll::Pending => panic!("memory tools complete at once"),
        };
        let resolved = elroy_tools_memory::resolve_effects(&self.memory, &result.effects).unwrap();
        self.transcript
            .apply_effects(self.user, now, &resolved)
            .unwrap();
        result
    }

    /// The memory ids carried by recall messages of the active context.
    pub fn pinned(&self) -> Vec<i64> {
        self.context()
            .iter()
            .filter_map(Message::recall_metadata)
            .flatten()
            .map(|m| m.memory_id)
            .collect()
    }
}
