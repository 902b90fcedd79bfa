//! Memory consolidation after the turn (`docs/behaviour.md#consolidation`): when an op-tracked
//! creation made it due, the active memories are clustered ([`elroy_memory::consolidate`]) and each
//! kept cluster is merged by one structured fast-model call; the new memories are sourced from
//! every member, the members are archived (`docs/formats.md#the-memory-archive`) and unpinned.

use elroy_core::{Message, RecallItem, RecallKind};
use elroy_llm::ChatRequest;
use elroy_memory::consolidate::{self, ClusterParams};
use elroy_memory::{Memory, MemorySource, MemoryStore};
use elroy_transcript::ResolvedEffect;
use serde_json::{Value, json};

use crate::ports::recorded;
use crate::{BackgroundError, Session};

/// The system text of a merge call (`docs/behaviour.md#consolidation` step 6, ours); the current
/// times follow it.
pub const CONSOLIDATION_PROMPT: &str = "These memories overlap. Rewrite them as one memory, or as a few memories if they cover clearly different topics. Keep every fact that is still true, prefer the newest information when they disagree, write dates as YYYY-MM-DD, give each memory a specific single-topic title, and keep each under 300 words.";

/// The versioned-home commit label of the files one merged cluster wrote.
pub const CONSOLIDATION_LABEL: &str = "consolidation";

/// How many clusters one consolidation merges (`docs/behaviour.md#consolidation` step 5).
pub const CLUSTERS_KEPT: usize = 3;

/// The response schema of a merge call (`docs/behaviour.md#consolidation` step 6):
/// `{"reasoning": string, "memories": [{"name": string, "text": string}]}`.
pub fn consolidation_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "memories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "text": {"type": "string"}
                    },
                    "required": ["name", "text"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["reasoning", "memories"],
        "additionalProperties": false
    })
}

/// The system text of a merge call: [`CONSOLIDATION_PROMPT`] plus
/// ` The current time is {local, YYYY-MM-DD HH:MM:SS±HH:MM}, or {UTC, YYYY-MM-DD HH:MM:SS} UTC.`
pub fn consolidation_system_text(time: &elroy_core::TimeContext) -> String {
    let local = time
        .now_local()
        .strftime("%Y-%m-%d %H:%M:%S%:z")
        .to_string();
    let utc = time
        .now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string();
    format!("{CONSOLIDATION_PROMPT} The current time is {local}, or {utc} UTC.")
}

/// The user text of a merge call (`docs/behaviour.md#consolidation` step 6): `#Memory Cluster:`
/// followed by one `## Memory Title:\n{name}\n{text}` block per member, joined by `\n` (Elroy's
/// layout).
pub fn cluster_prompt(members: &[(String, String)]) -> String {
    let blocks: Vec<String> = members
        .iter()
        .map(|(name, text)| format!("## Memory Title:\n{name}\n{text}"))
        .collect();
    format!("#Memory Cluster:\n{}", blocks.join("\n"))
}

/// Reads a merge reply: the JSON object (the whole reply, or its first `{` … last `}` when the
/// model wrapped it in prose or a code fence) with a `memories` array of `{name, text}` strings.
/// `None` when it does not validate: not JSON, no `memories` array, an entry without string
/// `name` and `text`, an empty text, or no memory at all (merging into nothing would archive the
/// members and keep nothing of them).
pub fn parse_consolidation(reply: &str) -> Option<Vec<(String, String)>> {
    let trimmed = reply.trim();
    let value: Value = serde_json::from_str(trimmed).ok().or_else(|| {
        let start = trimmed.find('{')?;
        let end = trimmed.rfind('}')?;
        serde_json::from_str(trimmed.get(start..=end)?).ok()
    })?;
    let items = value.get("memories")?.as_array()?;
    let mut out = Vec::new();
    for item in items {
        let name = item.get("name")?.as_str()?;
        let text = item.get("text")?.as_str()?;
        if text.trim().is_empty() {
            return None;
        }
        out.push((name.to_owned(), text.to_owned()));
    }
    (!out.is_empty()).then_some(out)
}

/// What one consolidation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consolidation {
    /// Per merged cluster: the member ids (archived) and the ids of the memories created.
    pub merged: Vec<(Vec<i64>, Vec<i64>)>,
    /// Member ids of clusters whose call failed (left untouched).
    pub failed: Vec<Vec<i64>>,
}

impl Session {
    /// Runs consolidation when an op-tracked creation made it due since the last check
    /// ([`MemoryStore::take_consolidation_due`]); `None` when it was not due.
    pub(crate) async fn maybe_consolidate(&self) -> Result<Option<Consolidation>, BackgroundError> {
        let Some(store) = &self.parts.memory else {
            return Ok(None);
        };
        if !store.take_consolidation_due() {
            return Ok(None);
        }
        self.consolidate().await.map(Some)
    }

    /// Consolidation (`docs/behaviour.md#consolidation` steps 1–8), whether or not it is due:
    /// vectors of the active memories (stored embeddings with an embedding model, else TF-IDF of
    /// the renderings), clusters ([`consolidate::clusters`] with
    /// `memory_cluster_similarity_threshold`, `min_memory_cluster_size`, `max_memory_cluster_size`,
    /// 3 kept), one structured fast-model call per cluster (one retry when the reply does not
    /// validate), the returned memories created with every member as a `Memory` source (not
    /// op-tracked, not pinned), then every member archived and unpinned (one context version,
    /// reason `unpin`). A failed call leaves its cluster untouched.
    ///
    /// # Errors
    /// [`BackgroundError`] when the store or the database fails (clusters merged before that stay
    /// merged).
    pub async fn consolidate(&self) -> Result<Consolidation, BackgroundError> {
        let p = &self.parts;
        let mut report = Consolidation::default();
        let Some(store) = &p.memory else {
            return Ok(report);
        };
        let memories = store.newest_active(CONSOLIDATION_WINDOW)?;
        let items = vectors(store, &memories)?;
        let params = ClusterParams {
            threshold: p.settings.memory_cluster_similarity_threshold,
            min_size: p.settings.min_memory_cluster_size.max(1),
            max_size: p.settings.max_memory_cluster_size.max(1),
            keep: CLUSTERS_KEPT,
        };
        for ids in consolidate::clusters(&items, &params) {
            let members: Vec<&Memory> = ids
                .iter()
                .filter_map(|id| memories.iter().find(|m| m.id == *id))
                .collect();
            match self.merge_cluster(store, &members).await {
                Ok(created) => report.merged.push((ids, created)),
                Err(e) => {
                    tracing::warn!("consolidation: cluster {ids:?} left untouched: {e}");
                    report.failed.push(ids);
                }
            }
        }
        Ok(report)
    }

    /// One cluster: the model call, the new memories, the archive and the unpins. Nothing is
    /// written when the call fails.
    async fn merge_cluster(
        &self,
        store: &MemoryStore,
        members: &[&Memory],
    ) -> Result<Vec<i64>, BackgroundError> {
        let p = &self.parts;
        let texts: Vec<(String, String)> = members
            .iter()
            .map(|m| Ok((m.name.clone(), store.text(m)?)))
            .collect::<Result<_, BackgroundError>>()?;
        let request = ChatRequest {
            messages: vec![
                Message::system(consolidation_system_text(&p.time)),
                Message::user(cluster_prompt(&texts)),
            ],
            json_schema: Some(consolidation_schema()),
            ..ChatRequest::default()
        };
        let model = p.fast_model.as_ref().unwrap_or(&p.model);
        let mut merged = None;
        for _attempt in 0..2 {
            let reply = model.chat(&request).await?;
            if let Some(found) = parse_consolidation(&reply.content) {
                merged = Some(found);
                break;
            }
        }
        let merged = merged.ok_or(BackgroundError::ConsolidationSchema)?;
        let now = p.time.now();
        let sources: Vec<MemorySource> =
            members.iter().map(|m| MemorySource::memory(m.id)).collect();
        let write = || -> Result<Vec<i64>, BackgroundError> {
            let mut created = Vec::new();
            for (name, text) in &merged {
                let memory = store.create(name, text, &sources, now)?;
                created.push(memory.id);
            }
            for member in members {
                store.archive(member, now)?;
            }
            Ok(created)
        };
        // With a versioned home the files one cluster wrote are one commit,
        // `consolidation: {paths}` (undoable like a tool call).
        let created = recorded(p.history.as_deref(), now, CONSOLIDATION_LABEL, write)??;
        let unpins: Vec<ResolvedEffect> = members
            .iter()
            .map(|member| {
                ResolvedEffect::Unpin(RecallItem {
                    memory_type: RecallKind::Memory,
                    memory_id: member.id,
                })
            })
            .collect();
        p.transcript.apply_effects(p.user_id, now, &unpins)?;
        Ok(created)
    }
}

/// `(id, vector)` of the active memories (`docs/behaviour.md#consolidation` step 1): stored
/// embeddings when an embedding model is configured, else TF-IDF vectors of the renderings.
/// How many active memories one consolidation clusters: the newest (highest ids). Clustering
/// needs every pairwise distance (and TF-IDF a dense vector per memory over the vocabulary), so
/// all of a home's memories would not fit in memory at scale: 100,000 memories asked for more
/// than 24 GiB and the process was killed (the scale benchmark). Elroy 0.5.0 clusters all
/// active memories; older ones here are left as they are (a deliberate difference).
/// They are read with [`MemoryStore::newest_active`] (by the primary key from its end), and with
/// an embedding model only their vectors are computed and read
/// ([`MemoryStore::embeddings_of`]).
pub const CONSOLIDATION_WINDOW: usize = 500;

fn vectors(
    store: &MemoryStore,
    memories: &[Memory],
) -> Result<Vec<(i64, Vec<f64>)>, BackgroundError> {
    if store.options().embedder.is_some() {
        // Only the window's vectors are computed and read (not every memory's).
        return Ok(store
            .embeddings_of(memories)?
            .into_iter()
            .map(|(id, v)| (id, v.into_iter().map(f64::from).collect()))
            .collect());
    }
    let renderings: Vec<String> = memories
        .iter()
        .map(|m| store.rendering(m))
        .collect::<Result<_, _>>()?;
    let docs: Vec<&str> = renderings.iter().map(String::as_str).collect();
    Ok(memories
        .iter()
        .map(|m| m.id)
        .zip(consolidate::tfidf_vectors(&docs))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_prompt_layout() {
        assert_eq!(
            cluster_prompt(&[
                ("Dog".into(), "Biscuit.".into()),
                ("Dog 2".into(), "A beagle.".into())
            ]),
            "#Memory Cluster:\n## Memory Title:\nDog\nBiscuit.\n## Memory Title:\nDog 2\nA beagle."
        );
    }

    #[test]
    fn replies_are_validated() {
        assert_eq!(
            parse_consolidation(
                r#"{"reasoning": "same dog", "memories": [{"name": "Dog", "text": "Biscuit, a beagle."}]}"#
            ),
            Some(vec![("Dog".into(), "Biscuit, a beagle.".into())])
        );
        assert_eq!(
            parse_consolidation(
                "```json\n{\"memories\": [{\"name\": \"a\", \"text\": \"b\"}]}\n```"
            ),
            Some(vec![("a".into(), "b".into())])
        );
        assert_eq!(parse_consolidation("not json"), None);
        assert_eq!(parse_consolidation(r#"{"memories": []}"#), None);
        assert_eq!(
            parse_consolidation(r#"{"memories": [{"name": "a"}]}"#),
            None
        );
        assert_eq!(
            parse_consolidation(r#"{"memories": [{"name": "a", "text": "  "}]}"#),
            None
        );
    }
}
