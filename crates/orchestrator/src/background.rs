//! Work after the reply (`orchestrator.md` §11): context compression when the active context
//! exceeds `max_tokens`.

use elroy_core::Role;
use elroy_transcript::{ContextItem, compress, estimate_tokens};

use crate::Session;

impl Session {
    /// Runs the post-turn background work: when the active context has a user message and more
    /// than `max_tokens` estimated tokens, it is compressed to `max_tokens / 3` (whole tool units,
    /// newest first, never older than `max_context_age_minutes`) and stored as one version (reason
    /// `refresh`). Returns whether the context was compressed.
    ///
    /// Not yet done here (needs the memory store): the memory of the whole context created before
    /// compressing, and the `context_summary` pair.
    ///
    /// # Errors
    /// A message when the database fails.
    pub fn after_turn(&self) -> Result<bool, String> {
        let p = &self.parts;
        let stored = p
            .transcript
            .active_context(p.user_id)
            .map_err(|e| e.to_string())?;
        let tokens: usize = stored.iter().map(|s| estimate_tokens(&s.message)).sum();
        let has_user = stored.iter().any(|s| s.message.role == Role::User);
        if !has_user || tokens <= p.settings.max_tokens {
            return Ok(false);
        }
        let messages: Vec<_> = stored.iter().map(|s| s.message.clone()).collect();
        let created: Vec<_> = stored.iter().map(|s| s.created_at).collect();
        let max_age =
            jiff::SignedDuration::from_secs((p.settings.max_context_age_minutes * 60.0) as i64);
        let now = p.time.now();
        let keep = compress(
            &messages,
            &created,
            p.settings.max_tokens / 3,
            Some(max_age),
            now,
        );
        let target: Vec<ContextItem> = keep
            .iter()
            .filter_map(|&i| stored.get(i).map(|s| ContextItem::Stored(s.id)))
            .collect();
        p.transcript
            .set_context(p.user_id, "refresh", now, &target)
            .map_err(|e| e.to_string())?;
        Ok(true)
    }
}
