//! Self-reflection's feature request (`docs/behaviour.md#self-reflection` step 4): record a
//! proposal the orchestrator derived from a user correction, merging into the best existing request
//! as Elroy 0.5.0 does (`repository/self_reflection/orchestrator.py`, `_persist_feature_request`).

use elroy_markdown::HomeLock;
use jiff::Timestamp;

use crate::similarity::{Candidate, best_match};
use crate::store::{Result, merge_context};
use crate::{FeatureRequest, FeatureRequestStore, isoformat_utc};

/// What self-reflection proposes. The wording of `title`, `summary` and `rationale` is the
/// orchestrator's; the supporting context is built here from `phrase` and `excerpt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReflectionProposal {
    /// The request title (`Improve response handling after direct user corrections`).
    pub title: String,
    /// The summary of a new request (also the description scored against summaries).
    pub summary: String,
    /// The rationale of a new request.
    pub rationale: String,
    /// The correction phrase found (`you forgot`, …).
    pub phrase: String,
    /// The user message excerpt (whitespace collapsed, at most 240 characters).
    pub excerpt: String,
}

/// What [`FeatureRequestStore::record_reflection`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReflectionAction {
    /// No match: a new request with `source: self_reflection` was written.
    Created,
    /// Merged into the best match (alias and supporting context; reopened when it was an
    /// inactive self-reflection request).
    Merged,
    /// The match already holds this excerpt; it was only reopened.
    Reopened,
    /// The match already holds this excerpt and is active: nothing was written.
    Unchanged,
}

impl FeatureRequestStore {
    /// Records a self-reflection proposal at `now` (`docs/behaviour.md#self-reflection` step 4)
    /// under the home lock. The supporting context is `- Reflected at: {UTC ISO now}`, `- Trigger
    /// phrase: {phrase}`, `- Recent user feedback: {excerpt}`.
    ///
    /// # Errors
    /// Lock, listing and write failures.
    pub fn record_reflection(
        &self,
        now: Timestamp,
        proposal: &ReflectionProposal,
    ) -> Result<(FeatureRequest, ReflectionAction)> {
        let stamp = isoformat_utc(now);
        let block = format!(
            "- Reflected at: {stamp}\n- Trigger phrase: {}\n- Recent user feedback: {}",
            proposal.phrase, proposal.excerpt
        );
        let _lock = HomeLock::acquire(self.elroy_home())?;
        let requests = self.requests()?;
        let candidates: Vec<Candidate<'_>> = requests
            .iter()
            .map(|r| Candidate {
                title: &r.title,
                aliases: &r.aliases,
                summary: &r.summary,
            })
            .collect();
        let Some((index, _)) = best_match(&proposal.title, &proposal.summary, &candidates) else {
            let request = self.new_request(
                &proposal.title,
                &proposal.summary,
                Some(proposal.rationale.clone()).filter(|r| !r.is_empty()),
                block,
                "self_reflection",
                &stamp,
            )?;
            return Ok((request, ReflectionAction::Created));
        };
        let mut request = requests[index].clone();
        let reopen = request.source == "self_reflection" && !request.is_active();
        if reopen {
            request.status = "open".to_owned();
        }
        let marker = format!("- Recent user feedback: {}", proposal.excerpt);
        let known = request
            .supporting_context
            .as_deref()
            .is_some_and(|c| !c.is_empty() && c.contains(&marker));
        let action = if known {
            if !reopen {
                return Ok((request, ReflectionAction::Unchanged));
            }
            ReflectionAction::Reopened
        } else {
            let mut aliases = request.aliases.clone();
            aliases.push(proposal.title.clone());
            aliases.retain(|a| *a != request.title);
            aliases.sort();
            aliases.dedup();
            request.aliases = aliases;
            request.supporting_context =
                Some(merge_context(request.supporting_context.as_deref(), &block));
            ReflectionAction::Merged
        };
        if request.created_at.is_empty() {
            request.created_at = stamp.clone();
        }
        request.updated_at = stamp;
        Ok((self.write_request(&request)?, action))
    }
}
