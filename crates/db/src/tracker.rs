//! The memory operation tracker (`docs/formats.md#memory-index`,
//! `docs/behaviour.md#automatic-memory-creation`): per user, the user messages stored since the
//! last memory was created and the memories created since the last consolidation.

use rusqlite::params;

use crate::{Db, DbError};

/// A user's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpTracker {
    /// User messages with non-empty content stored since the last memory was created.
    pub messages_since_memory: i64,
    /// Memories created since the last consolidation.
    pub memories_since_consolidation: i64,
}

impl Db {
    /// The user's counters (zeros when no row exists yet).
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn op_tracker(&self, user_id: i64) -> Result<OpTracker, DbError> {
        self.with_conn(|c| {
            use rusqlite::OptionalExtension;
            c.query_row(
                "SELECT messages_since_memory, memories_since_consolidation
                 FROM memory_op_tracker WHERE user_id = ?1",
                [user_id],
                |r| {
                    Ok(OpTracker {
                        messages_since_memory: r.get(0)?,
                        memories_since_consolidation: r.get(1)?,
                    })
                },
            )
            .optional()
            .map(Option::unwrap_or_default)
        })
    }

    /// Adds `n` to `messages_since_memory` and returns the new counters.
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn add_messages_since_memory(&self, user_id: i64, n: i64) -> Result<OpTracker, DbError> {
        self.with_conn(|c| {
            c.execute(
                "INSERT INTO memory_op_tracker (user_id, messages_since_memory) VALUES (?1, ?2)
                 ON CONFLICT(user_id) DO UPDATE SET
                 messages_since_memory = messages_since_memory + excluded.messages_since_memory",
                params![user_id, n],
            )
            .map(|_| ())
        })?;
        self.op_tracker(user_id)
    }

    /// Records that a memory was created (`docs/tools.md#create_memory` step 4):
    /// `messages_since_memory = 0`, `memories_since_consolidation += 1`; when that reaches
    /// `between_consolidation` (> 0) it is reset to 0 and `true` is returned (start consolidation).
    ///
    /// # Errors
    /// [`DbError::Sqlite`].
    pub fn record_memory_created(
        &self,
        user_id: i64,
        between_consolidation: i64,
    ) -> Result<bool, DbError> {
        self.with_conn(|c| {
            let tx = c.transaction()?;
            tx.execute(
                "INSERT INTO memory_op_tracker (user_id, messages_since_memory, memories_since_consolidation)
                 VALUES (?1, 0, 1)
                 ON CONFLICT(user_id) DO UPDATE SET messages_since_memory = 0,
                 memories_since_consolidation = memories_since_consolidation + 1",
                [user_id],
            )?;
            let n: i64 = tx.query_row(
                "SELECT memories_since_consolidation FROM memory_op_tracker WHERE user_id = ?1",
                [user_id],
                |r| r.get(0),
            )?;
            let due = between_consolidation > 0 && n >= between_consolidation;
            if due {
                tx.execute(
                    "UPDATE memory_op_tracker SET memories_since_consolidation = 0 WHERE user_id = ?1",
                    [user_id],
                )?;
            }
            tx.commit()?;
            Ok(due)
        })
    }
}
