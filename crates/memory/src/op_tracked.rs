//! The consolidation trigger and what consolidation reads from the store
//! (`docs/behaviour.md#consolidation`): op-tracked creations, the active memories and their
//! vectors.

use std::sync::atomic::Ordering;

use rusqlite::{OptionalExtension, params};

use crate::store::{MEMORY_COLUMNS, row_to_memory};
use crate::{Memory, MemoryError, MemoryStore, recall};

impl MemoryStore {
    /// Records an op-tracked memory creation (`docs/tools.md#create_memory` step 4,
    /// `docs/behaviour.md#automatic-memory-creation`): `messages_since_memory = 0`,
    /// `memories_since_consolidation += 1`; when that reaches `between_consolidation` (> 0) the
    /// counter is reset to 0, the store's consolidation flag is set (see
    /// [`MemoryStore::take_consolidation_due`]) and `true` is returned.
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
    /// became due in a process that exits before running it is lost
    /// (`docs/behaviour.md#background-memory-work`).
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

    /// The `limit` active memories with the highest ids, in id order (what one consolidation
    /// clusters, `docs/behaviour.md#consolidation`): read by the primary key from its end, so the
    /// cost does not grow with the number of memories.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn newest_active(&self, limit: usize) -> Result<Vec<Memory>, MemoryError> {
        let mut out: Vec<Memory> = self.db.with_conn(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ?1 AND is_active = 1
                 ORDER BY id DESC LIMIT ?2"
            ))?;
            st.query_map(
                params![self.opts.user_id, i64::try_from(limit).unwrap_or(i64::MAX)],
                row_to_memory,
            )?
            .collect()
        })?;
        out.reverse();
        Ok(out)
    }

    /// The stored embeddings of `memories` for the configured embedding model, computing
    /// missing or stale ones first; `(id, vector)` by id. Memories whose embedding cannot be
    /// computed, and inactive ones, are left out. Empty without an embedder.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn embeddings_of(&self, memories: &[Memory]) -> Result<Vec<(i64, Vec<f32>)>, MemoryError> {
        let Some(embedder) = self.opts.embedder.clone() else {
            return Ok(Vec::new());
        };
        let ids: Vec<i64> = memories.iter().map(|m| m.id).collect();
        self.embed_memories(&ids);
        let model = embedder.model().to_owned();
        let mut out = Vec::new();
        self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT e.vector FROM memories m
                 JOIN embeddings e ON e.user_id = m.user_id AND e.kind = 'memory'
                   AND e.item_id = m.id AND e.model = ?2
                 WHERE m.user_id = ?1 AND m.id = ?3 AND m.is_active = 1",
            )?;
            let mut ids: Vec<i64> = memories.iter().map(|m| m.id).collect();
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                let found: Option<Vec<u8>> = st
                    .query_row(params![self.opts.user_id, model, id], |r| r.get(0))
                    .optional()?;
                if let Some(blob) = found {
                    out.push((id, recall::blob_to_vector(&blob)));
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The stored embeddings of the active memories for the configured embedding model
    /// (`docs/behaviour.md#consolidation` step 1), computing missing or stale ones first; `(id,
    /// vector)` by id. Memories whose embedding cannot be computed are left out. Empty without an
    /// embedder.
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
