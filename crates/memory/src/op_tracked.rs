//! The consolidation trigger and what consolidation reads from the store (`orchestrator.md`
//! §12.2): op-tracked creations, the active memories and their vectors.

use std::sync::atomic::Ordering;

use rusqlite::params;

use crate::store::{MEMORY_COLUMNS, row_to_memory};
use crate::{Memory, MemoryError, MemoryStore, recall};

impl MemoryStore {
    /// Records an op-tracked memory creation (`tools.md` §3.1 step 4, `orchestrator.md` §12.1):
    /// `messages_since_memory = 0`, `memories_since_consolidation += 1`; when that reaches
    /// `between_consolidation` (> 0) the counter is reset to 0, the store's consolidation flag is
    /// set (see [`MemoryStore::take_consolidation_due`]) and `true` is returned.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn record_op_tracked(&self, between_consolidation: i64) -> Result<bool, MemoryError> {
        let due = self
            .db
            .record_memory_created(self.opts.user_id, between_consolidation)?;
        if due {
            self.consolidation_due.store(true, Ordering::SeqCst);
        }
        Ok(due)
    }

    /// Whether consolidation became due since the last call (clears the flag). The flag lives in
    /// the process, shared by clones of the store: like every background job, a consolidation that
    /// became due in a process that exits before running it is lost (`orchestrator.md` §12).
    pub fn take_consolidation_due(&self) -> bool {
        self.consolidation_due.swap(false, Ordering::SeqCst)
    }

    /// The user's active memories, by id.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn active_memories(&self) -> Result<Vec<Memory>, MemoryError> {
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ?1 AND is_active = 1 ORDER BY id"
            ))?;
            st.query_map([self.opts.user_id], row_to_memory)?
                .collect()
        })?)
    }

    /// The stored embeddings of the active memories for the configured embedding model
    /// (`orchestrator.md` §12.2 step 1), computing missing or stale ones first; `(id, vector)` by
    /// id. Memories whose embedding cannot be computed are left out. Empty without an embedder.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn active_embeddings(&self) -> Result<Vec<(i64, Vec<f32>)>, MemoryError> {
        let Some(embedder) = self.opts.embedder.clone() else {
            return Ok(Vec::new());
        };
        // `embed_pending` stores at most 32 per call; stop when a call makes no progress, and
        // after enough rounds for every active memory (a row whose md5 is stale stays pending).
        let rounds = self.active_memories()?.len() / 32 + 1;
        for _ in 0..rounds {
            if self.embed_pending(None) == 0 {
                break;
            }
        }
        let model = embedder.model().to_owned();
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT m.id, e.vector FROM memories m
                 JOIN embeddings e ON e.user_id = m.user_id AND e.kind = 'memory'
                   AND e.item_id = m.id AND e.model = ?2
                 WHERE m.user_id = ?1 AND m.is_active = 1 ORDER BY m.id",
            )?;
            st.query_map(params![self.opts.user_id, model], |r| {
                Ok((r.get(0)?, recall::blob_to_vector(&r.get::<_, Vec<u8>>(1)?)))
            })?
            .collect()
        })?)
    }
}
