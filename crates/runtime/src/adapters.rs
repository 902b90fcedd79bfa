//! The session's wiring: adapters from the stores and the versioned home to the orchestrator's
//! ports ([`elroy_orchestrator::ports`]), and [`session_parts`], which assembles a
//! [`SessionParts`] from an opened [`Runtime`](crate::Runtime).

use std::sync::Arc;

use elroy_agenda::AgendaStore;
use elroy_core::{
    Capabilities, Message, RecallItem, RecallKind, RecallMetadata, RecallPayload, Role,
    TimeContext, UserId,
};
use elroy_db::Db;
use elroy_llm::Protocol;
use elroy_memory::{MemoryQuery, MemoryStore, recall};
use elroy_orchestrator::{
    ChangeRecorder, DueSource, PinResolver, PortError, RecallQuery, RecallSource, Reflection,
    ReflectionSink, SessionParts, Settings,
};
use elroy_transcript::{PinContent, Provider, TranscriptStore};

use crate::models::Models;
use crate::{Runtime, RuntimeError};

/// Due items from the agenda store (`docs/behaviour.md#due-items-in-a-turn`): the active items
/// whose trigger time has passed, one `⏰ DUE ITEM` block each, joined by `\n`.
#[derive(Debug, Clone)]
pub struct AgendaDue(pub Arc<AgendaStore>);

impl DueSource for AgendaDue {
    fn due_text(&self, time: &TimeContext) -> Result<Option<String>, PortError> {
        let due = self.0.due_now(time.now()).map_err(PortError::new)?;
        if due.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            due.iter()
                .map(|d| d.due_notice(&time.tz))
                .collect::<Vec<_>>()
                .join("\n"),
        ))
    }
}

/// How many memories one recall pair carries (`docs/behaviour.md#fusion-and-selection` step 3).
pub const RECALLED_MEMORIES: usize = 2;

/// Memory recall from the memory store (`docs/behaviour.md#recall`): `T_cur` from the message,
/// `T_prev` from the previous user message, the embedding text from the last 6 messages; the
/// fused ranking minus memories already carried by a recall message in the conversation; the top
/// [`RECALLED_MEMORIES`]. [`StoreRecall`] adds the agenda side.
#[derive(Debug, Clone)]
pub struct MemoryRecall(pub Arc<MemoryStore>);

/// The embedding query text of `docs/behaviour.md#embedding-leg` step 1: the last 6 non-system,
/// non-tool messages with content, `{role}: {content}`, joined by `\n`.
pub fn embedding_query_text(conversation: &[Message]) -> String {
    let lines: Vec<String> = conversation
        .iter()
        .filter(|m| !matches!(m.role, Role::System | Role::Tool))
        .filter_map(|m| {
            let c = m.content.as_deref()?;
            (!c.is_empty()).then(|| format!("{}: {c}", m.role.as_str()))
        })
        .collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}

/// The query tokens and in-context items of a recall query (`docs/behaviour.md#query-tokens`,
/// `docs/behaviour.md#fusion-and-selection` step 2).
struct Prepared {
    current: Vec<String>,
    previous: Vec<String>,
    in_context: std::collections::HashSet<RecallItem>,
}

fn prepare(query: &RecallQuery<'_>) -> Prepared {
    let current = recall::recall_tokens(query.message);
    // The conversation ends with the current user message; the previous one comes before it.
    let previous_text = query
        .conversation
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .nth(1)
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    let previous = recall::previous_tokens(&previous_text, &current);
    let in_context = query
        .conversation
        .iter()
        .filter_map(Message::recall_metadata)
        .flatten()
        .map(|m| m.item())
        .collect();
    Prepared {
        current,
        previous,
        in_context,
    }
}

impl MemoryRecall {
    fn select(
        &self,
        query: &RecallQuery<'_>,
        prepared: &Prepared,
    ) -> Result<Vec<(RecallMetadata, String)>, PortError> {
        // Each turn sees files added, removed or renamed since the last listing (two `stat`s
        // when nothing changed, `docs/formats.md#memory-index-sync` as elroy overrides it); a
        // sync that cannot write the index (a full disk) leaves the recall to the index as it is.
        let _ = self.0.sync_if_changed(query.time.now());
        let search = MemoryQuery {
            current: prepared.current.clone(),
            previous: prepared.previous.clone(),
            embedding_text: Some(embedding_query_text(query.conversation)),
            period: None,
        };
        let found = self
            .0
            .search(&search, RECALLED_MEMORIES + prepared.in_context.len())
            .map_err(PortError::new)?;
        let mut out = Vec::new();
        for memory in found {
            let item = RecallItem {
                memory_type: RecallKind::Memory,
                memory_id: memory.id,
            };
            if prepared.in_context.contains(&item) {
                continue;
            }
            // A memory whose file cannot be read (hand-broken front matter) is left out of the
            // recall; the others are still recalled.
            let rendering = match self.0.rendering(&memory) {
                Ok(r) => r,
                Err(elroy_memory::MemoryError::File(e)) => {
                    tracing::warn!("recall skipped an unreadable memory file: {e}");
                    continue;
                }
                Err(e) => return Err(PortError::new(e)),
            };
            out.push((
                RecallMetadata {
                    memory_type: RecallKind::Memory,
                    memory_id: memory.id,
                    name: memory.name.clone(),
                },
                rendering,
            ));
            if out.len() == RECALLED_MEMORIES {
                break;
            }
        }
        Ok(out)
    }
}

fn payload(selected: Vec<(RecallMetadata, String)>) -> Option<RecallPayload> {
    if selected.is_empty() {
        return None;
    }
    let (recall_metadata, renderings): (Vec<_>, Vec<_>) = selected.into_iter().unzip();
    Some(RecallPayload {
        content: renderings.join("\n"),
        recall_metadata,
    })
}

impl RecallSource for MemoryRecall {
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, PortError> {
        let prepared = prepare(query);
        Ok(payload(self.select(query, &prepared)?))
    }
}

/// How many due items and how many plain agenda items one recall pair carries
/// (`docs/behaviour.md#fusion-and-selection` step 3).
pub const RECALLED_AGENDA_ITEMS: usize = 2;

/// How many ranked agenda hits one lookup checks against their files.
const HIT_CHUNK: usize = 16;

/// Recall over every store (`docs/behaviour.md#recall`): memories (keyword and embedding legs,
/// through
/// [`MemoryRecall`]) and agenda items by keyword. The agenda's active items are indexed in
/// `recall_fts` (kind `agenda`), rebuilt only when the agenda's recall stamp changed
/// (`AgendaStore::recall_stamp`); the keyword leg ranks them, only the hits' files are stat'ed,
/// and the ranking is split into due items and plain items. The payload carries at most 2
/// memories, 2 due items and 2 plain items, in that order, leaving out items already in context.
#[derive(Debug, Clone)]
pub struct StoreRecall {
    /// The memory store, if open.
    pub memory: Option<Arc<MemoryStore>>,
    /// The agenda store, if open.
    pub agenda: Option<Arc<AgendaStore>>,
    /// The database holding `recall_fts`.
    pub db: Arc<Db>,
    /// `users.id`.
    pub user_id: i64,
}

impl StoreRecall {
    fn agenda_items(
        &self,
        agenda: &AgendaStore,
        query: &RecallQuery<'_>,
        prepared: &Prepared,
    ) -> Result<Vec<(RecallMetadata, String)>, PortError> {
        let tz = &query.time.tz;
        // The agenda rows of `recall_fts` are rebuilt only when the agenda changed since they
        // were built: an unchanged agenda costs one directory stat, not a stat per item.
        let loaded =
            elroy_tools_memory::refresh_agenda_recall_rows(agenda, &self.db, self.user_id, tz)
                .map_err(PortError::new)?;
        let ranking: Vec<i64> = self
            .db
            .with_conn(|c| {
                recall::keyword_leg(
                    c,
                    self.user_id,
                    "agenda",
                    &prepared.current,
                    &prepared.previous,
                )
            })
            .map_err(PortError::new)?
            .into_iter()
            .filter(|id| {
                !prepared.in_context.contains(&RecallItem {
                    memory_type: RecallKind::AgendaItem,
                    memory_id: *id,
                })
            })
            .collect();
        let mut due = Vec::new();
        let mut plain = Vec::new();
        // The hits are looked up a few at a time, in ranking order, until both kinds are full.
        for chunk in ranking.chunks(HIT_CHUNK) {
            let entries = match &loaded {
                Some(all) => chunk
                    .iter()
                    .filter_map(|id| all.iter().find(|e| e.id == *id).cloned())
                    .collect(),
                None => agenda
                    .recall_entries_by_ids(chunk, tz)
                    .map_err(PortError::new)?,
            };
            for id in chunk {
                let Some(entry) = entries.iter().find(|e| e.id == *id) else {
                    continue;
                };
                let bucket = match entry.kind {
                    elroy_agenda::Kind::Due => &mut due,
                    elroy_agenda::Kind::Agenda => &mut plain,
                };
                if bucket.len() < RECALLED_AGENDA_ITEMS {
                    bucket.push((
                        RecallMetadata {
                            memory_type: RecallKind::AgendaItem,
                            memory_id: *id,
                            name: entry.name.clone(),
                        },
                        entry.fact.clone(),
                    ));
                }
            }
            if due.len() == RECALLED_AGENDA_ITEMS && plain.len() == RECALLED_AGENDA_ITEMS {
                break;
            }
        }
        due.extend(plain);
        Ok(due)
    }
}

impl RecallSource for StoreRecall {
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, PortError> {
        let prepared = prepare(query);
        let mut selected = Vec::new();
        if let Some(memory) = &self.memory {
            selected.extend(MemoryRecall(Arc::clone(memory)).select(query, &prepared)?);
        }
        if let Some(agenda) = &self.agenda {
            selected.extend(self.agenda_items(agenda, query, &prepared)?);
        }
        Ok(payload(selected))
    }
}

/// Pins resolved from the stores: memories from the memory store, agenda items from the agenda
/// store.
#[derive(Debug, Clone, Default)]
pub struct StorePins {
    /// The agenda store, if open.
    pub agenda: Option<Arc<AgendaStore>>,
    /// The memory store, if open.
    pub memory: Option<Arc<MemoryStore>>,
}

impl PinResolver for StorePins {
    fn resolve(&self, item: RecallItem, time: &TimeContext) -> Option<PinContent> {
        if item.memory_type == RecallKind::Memory {
            let (metadata, rendering) =
                self.memory.as_ref()?.recall_entry(item.memory_id).ok()??;
            return Some(PinContent {
                metadata,
                rendering,
            });
        }
        let agenda = self.agenda.as_ref()?;
        let found = agenda.item_by_id(item.memory_id).ok()??;
        let rendering = agenda.fact_by_id(item.memory_id, &time.tz).ok()??;
        Some(PinContent {
            metadata: RecallMetadata {
                memory_type: RecallKind::AgendaItem,
                memory_id: item.memory_id,
                name: found.name().to_owned(),
            },
            rendering,
        })
    }
}

/// The versioned home as the orchestrator's history port: one commit `{label}: {paths}` per
/// background change ([`elroy_history::VersionedHome::record`]).
#[derive(Debug, Clone)]
pub struct HistoryPort(pub elroy_history::VersionedHome);

impl ChangeRecorder for HistoryPort {
    fn record(&self, now: jiff::Timestamp, label: &str, work: &mut dyn FnMut()) {
        self.0.record(now, label, work);
    }
}

/// The feature-request store as self-reflection's sink (`docs/behaviour.md#self-reflection`): the
/// reflection is recorded as (or merged into) the feature request of its title.
#[derive(Debug, Clone)]
pub struct FeatureRequestsPort(pub Arc<elroy_feature_requests::FeatureRequestStore>);

impl ReflectionSink for FeatureRequestsPort {
    fn record_reflection(
        &self,
        now: jiff::Timestamp,
        reflection: &Reflection,
    ) -> Result<(), PortError> {
        let proposal = elroy_feature_requests::ReflectionProposal {
            title: reflection.title.clone(),
            summary: reflection.summary.clone(),
            rationale: reflection.rationale.clone(),
            phrase: reflection.phrase.clone(),
            excerpt: reflection.excerpt.clone(),
        };
        self.0
            .record_reflection(now, &proposal)
            .map(|_| ())
            .map_err(PortError::new)
    }
}

/// The parts of a session over `runtime`'s home: its configuration, clock, user, registry, the
/// models, the stores (opened now: database, transcript, memories, agenda, feature requests) and
/// the adapters to the orchestrator's ports; the versioned home is started (its `external edit`
/// commit) when `versioned_home` is on.
///
/// # Errors
/// [`RuntimeError::Store`] when the database or a store the session needs cannot be opened.
pub fn session_parts(
    runtime: &Runtime,
    models: Models,
    capabilities: Capabilities,
) -> Result<SessionParts, RuntimeError> {
    let services = &runtime.services;
    let history = runtime.change_recorder();
    let db = services.try_get::<Db>()?.ok_or_else(missing::<Db>)?;
    let user_id = services
        .try_get::<UserId>()?
        .ok_or_else(missing::<UserId>)?
        .0;
    let mut user = runtime.user.clone();
    user.id = Some(user_id);
    let transcript = services
        .try_get::<TranscriptStore>()?
        .map_or_else(|| TranscriptStore::new(Arc::clone(&db)), |t| (*t).clone());
    let agenda = services.try_get::<AgendaStore>()?;
    let memory = services.try_get::<MemoryStore>()?;
    let reflections = services
        .try_get::<elroy_feature_requests::FeatureRequestStore>()?
        .map(|store| Arc::new(FeatureRequestsPort(store)) as Arc<dyn ReflectionSink>);
    let recall: Arc<dyn RecallSource> = Arc::new(StoreRecall {
        memory: memory.clone(),
        agenda: agenda.clone(),
        db: Arc::clone(&db),
        user_id,
    });
    Ok(SessionParts {
        settings: Settings::from_config(&runtime.config),
        time: runtime.time.clone(),
        user,
        user_id,
        registry: Arc::new(runtime.registry.clone()),
        services: services.clone(),
        capabilities,
        cwd: std::env::current_dir().unwrap_or_else(|_| runtime.user.user_home.clone()),
        db,
        transcript,
        model: models.chat,
        fast_model: models.fast,
        memory: memory.clone(),
        reflections,
        history,
        provider: match models.protocol {
            Protocol::Anthropic => Provider::Anthropic,
            Protocol::OpenAi => Provider::Other,
        },
        recall: Some(recall),
        due: agenda
            .clone()
            .map(|a| Arc::new(AgendaDue(a)) as Arc<dyn DueSource>),
        pins: Some(Arc::new(StorePins { agenda, memory }) as Arc<dyn PinResolver>),
    })
}

/// The error for a service the runtime always registers but that is missing (a runtime built
/// by hand without it).
fn missing<T>() -> RuntimeError {
    RuntimeError::Store(elroy_core::ServiceError::new(std::io::Error::other(
        format!(
            "{} is not available in this runtime",
            std::any::type_name::<T>()
        ),
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use elroy_memory::MemoryStoreOptions;

    fn now() -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_790_000_000).unwrap()
    }

    fn recall_for(source: &dyn RecallSource, conversation: &[Message]) -> Option<RecallPayload> {
        let time = TimeContext::fixed(now(), jiff::tz::TimeZone::UTC);
        let message = conversation
            .last()
            .and_then(|m| m.content.clone())
            .unwrap_or_default();
        source
            .recall(&RecallQuery {
                message: &message,
                conversation,
                time: &time,
            })
            .unwrap()
    }

    /// Recall vector `docs/behaviour.md#whether-to-recall` through the memory store: the relevant
    /// memory is recalled, and not again once a recall message in the conversation carries it.
    #[test]
    fn memory_recall_vector_16_6_through_the_memory_store() {
        let home = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open_in_memory().unwrap());
        let user_id = db.ensure_user("DEFAULT", now()).unwrap();
        let (store, _) = MemoryStore::open(
            Arc::clone(&db),
            MemoryStoreOptions {
                elroy_home: home.path().to_path_buf(),
                memory_dir: home.path().join("memories"),
                elroy_db_path: None,
                user_id,
                embedder: None,
                cosine_threshold: 0.3,
            },
            now(),
        )
        .unwrap();
        store
            .create("User's dog", "The user's dog is named Biscuit.", &[], now())
            .unwrap();
        store
            .create("User's car", "The user drives a red bicycle.", &[], now())
            .unwrap();
        let source = MemoryRecall(Arc::new(store));
        let mut conversation = vec![Message::user("What is my dog called?")];
        let payload = recall_for(&source, &conversation).unwrap();
        assert_eq!(payload.recall_metadata.len(), 1);
        assert_eq!(payload.recall_metadata[0].name, "User's dog");
        assert!(payload.content.contains("Biscuit"));
        // The same question with the memory already in context recalls nothing new.
        conversation.extend(Message::synthetic_pair(
            "call-1",
            "get_fast_recall",
            payload.to_json_string(),
        ));
        conversation.push(Message::user("What is my dog called?"));
        assert_eq!(recall_for(&source, &conversation), None);
    }

    /// Agenda items are recalled by keyword and split into due and plain items.
    #[test]
    fn agenda_items_are_recalled_by_keyword_and_split_into_due_and_plain() {
        let home = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open_in_memory().unwrap());
        let user_id = db.ensure_user("DEFAULT", now()).unwrap();
        let agenda = AgendaStore::open(home.path(), home.path(), "DEFAULT").unwrap();
        let today = now().to_zoned_datetime(jiff::tz::TimeZone::UTC).date();
        agenda
            .add_item("Water the plants on the balcony", today, now())
            .unwrap();
        agenda.add_item("Buy stamps", today, now()).unwrap();
        let source = StoreRecall {
            memory: None,
            agenda: Some(Arc::new(agenda)),
            db,
            user_id,
        };
        let payload =
            recall_for(&source, &[Message::user("Did I plan to water the plants?")]).unwrap();
        let names: Vec<&str> = payload
            .recall_metadata
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(names, ["Water the plants on the balcony"]);
        assert_eq!(
            payload.recall_metadata[0].memory_type,
            RecallKind::AgendaItem
        );
    }
}
