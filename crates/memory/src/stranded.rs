//! Memories stranded in the archive (`elroy doctor`): an archived memory that no active memory
//! replaced — no active memory has its name and none names it as a source. Elroy archives a
//! memory only when a new version or a consolidated memory takes its place, so such a memory is
//! what an update that failed halfway left behind (an older elroy archived the old version and
//! then could not write the new one). [`MemoryStore::restore_stranded`] puts it back.

use std::collections::HashSet;

use jiff::Timestamp;
use rusqlite::params;

use crate::store::{MEMORY_COLUMNS, row_to_memory};
use crate::{Memory, MemoryError, MemoryStore};

impl MemoryStore {
    /// The archived memories whose file is in `archive/` and that nothing replaced (see the
    /// module documentation), by id.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn stranded_in_archive(&self) -> Result<Vec<Memory>, MemoryError> {
        let all: Vec<Memory> = self.db.with_conn(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ?1 ORDER BY id"
            ))?;
            st.query_map(params![self.opts.user_id], row_to_memory)?
                .collect()
        })?;
        let replaced: HashSet<i64> = all
            .iter()
            .flat_map(|m| m.sources.iter())
            .filter(|s| s.source_type == "Memory")
            .map(|s| s.id)
            .collect();
        let active_names: HashSet<&str> = all
            .iter()
            .filter(|m| m.is_active)
            .map(|m| m.name.as_str())
            .collect();
        Ok(all
            .iter()
            .filter(|m| {
                !m.is_active
                    && m.file_name.starts_with("archive/")
                    && !replaced.contains(&m.id)
                    && !active_names.contains(m.name.as_str())
                    && self.path_of(m).is_file()
            })
            .cloned()
            .collect())
    }

    /// Moves a memory of [`MemoryStore::stranded_in_archive`] back into `memories/` (a free
    /// name there) and indexes it as active again. Returns the file name it got.
    ///
    /// # Errors
    /// [`MemoryError`] for lock, move and database failures.
    pub fn restore_stranded(&self, memory: &Memory, now: Timestamp) -> Result<String, MemoryError> {
        let name = {
            let _lock = self.lock()?;
            let from = self.path_of(memory);
            let stem = std::path::Path::new(&memory.file_name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "memory".to_owned());
            let to = self
                .db
                .with_conn_mapped(|c| self.free_path(c, "", &stem, None))?;
            elroy_markdown::rename_file(&from, &to, &self.display(&to))?;
            to.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        // A file that came back from the archive is active again (`came_back`).
        self.sync(now)?;
        Ok(name)
    }
}
