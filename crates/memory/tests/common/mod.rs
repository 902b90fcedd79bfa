//! Helpers shared by the memory store tests.

#![allow(
    dead_code,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_core::Embedder;
use elroy_db::Db;
use elroy_memory::{MemoryStore, MemoryStoreOptions};

pub fn ts(s: &str) -> jiff::Timestamp {
    s.parse().unwrap()
}

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/fixtures/elroy-home-0.5.0")
}

pub struct Home {
    pub dir: tempfile::TempDir,
    pub db: Arc<Db>,
    pub user: i64,
}

impl Home {
    pub fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(&dir.path().join("state.db")).unwrap());
        let user = db
            .ensure_user("DEFAULT", ts("2026-03-16T13:00:00Z"))
            .unwrap();
        Home { dir, db, user }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn memory_dir(&self) -> PathBuf {
        self.path().join("memories")
    }

    pub fn options(&self, embedder: Option<Arc<dyn Embedder>>) -> MemoryStoreOptions {
        MemoryStoreOptions {
            elroy_home: self.path().to_path_buf(),
            memory_dir: self.memory_dir(),
            elroy_db_path: Some(self.path().join("elroy.db")),
            user_id: self.user,
            embedder,
            cosine_threshold: 0.3,
        }
    }

    pub fn open(&self, embedder: Option<Arc<dyn Embedder>>) -> MemoryStore {
        MemoryStore::open(
            Arc::clone(&self.db),
            self.options(embedder),
            ts("2026-03-17T04:00:00Z"),
        )
        .unwrap()
        .0
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
