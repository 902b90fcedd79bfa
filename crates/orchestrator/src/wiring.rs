//! Building a [`SessionParts`] from an opened home ([`elroy_runtime::Runtime`]), with adapters
//! from the stores the runtime provides to the orchestrator's [`ports`](crate::ports).

use std::sync::Arc;

use elroy_agenda::AgendaStore;
use elroy_config::DatabaseLocation;
use elroy_core::{
    Capabilities, Message, RecallItem, RecallKind, RecallMetadata, RecallPayload, Role, TimeContext,
};
use elroy_db::Db;
use elroy_llm::{ChatModel, Protocol};
use elroy_memory::{MemoryQuery, MemoryStore, recall};
use elroy_runtime::Runtime;
use elroy_transcript::{PinContent, Provider, TranscriptStore};

use crate::ports::{DueSource, PinResolver, RecallQuery, RecallSource};
use crate::{SessionError, SessionParts, Settings};

/// Due items from the agenda store (`orchestrator.md` §5): the active items whose trigger time
/// has passed, one `⏰ DUE ITEM` block each, joined by `\n`.
#[derive(Debug, Clone)]
pub struct AgendaDue(pub Arc<AgendaStore>);

impl DueSource for AgendaDue {
    fn due_text(&self, time: &TimeContext) -> Result<Option<String>, String> {
        let due = self.0.due_now(time.now()).map_err(|e| e.to_string())?;
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

/// How many memories one recall pair carries (`orchestrator.md` §4.5 step 3).
pub const RECALLED_MEMORIES: usize = 2;

/// Memory recall from the memory store (`orchestrator.md` §4.2–§4.6): `T_cur` from the message,
/// `T_prev` from the previous user message, the embedding text from the last 6 messages; the
/// fused ranking minus memories already carried by a recall message in the conversation; the top
/// [`RECALLED_MEMORIES`]. [`StoreRecall`] adds the agenda side.
#[derive(Debug, Clone)]
pub struct MemoryRecall(pub Arc<MemoryStore>);

/// The embedding query text of §4.4 step 1: the last 6 non-system, non-tool messages with
/// content, `{role}: {content}`, joined by `\n`.
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

/// The query tokens and in-context items of a recall query (§4.2, §4.5 step 2).
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
    ) -> Result<Vec<(RecallMetadata, String)>, String> {
        let search = MemoryQuery {
            current: prepared.current.clone(),
            previous: prepared.previous.clone(),
            embedding_text: Some(embedding_query_text(query.conversation)),
        };
        let found = self
            .0
            .search(&search, RECALLED_MEMORIES + prepared.in_context.len())
            .map_err(|e| e.to_string())?;
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
                Err(e) => return Err(e.to_string()),
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
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, String> {
        let prepared = prepare(query);
        Ok(payload(self.select(query, &prepared)?))
    }
}

/// How many due items and how many plain agenda items one recall pair carries (§4.5 step 3).
pub const RECALLED_AGENDA_ITEMS: usize = 2;

/// Recall over every store (`orchestrator.md` §4): memories (keyword and embedding legs, through
/// [`MemoryRecall`]) and agenda items by keyword. Each turn the agenda's active items are
/// re-indexed into `recall_fts` (kind `agenda`), the keyword leg ranks them, and the ranking is
/// split into due items and plain items. The payload carries at most 2 memories, 2 due items and
/// 2 plain items, in that order, leaving out items already in context.
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
    ) -> Result<Vec<(RecallMetadata, String)>, String> {
        let entries = agenda
            .recall_entries(&query.time.tz)
            .map_err(|e| e.to_string())?;
        let items: Vec<recall::FtsItem> = entries
            .iter()
            .map(|e| recall::FtsItem {
                id: e.id,
                name: e.name.clone(),
                body: e.fact.clone(),
            })
            .collect();
        let ranking = self
            .db
            .with_conn(|c| {
                recall::replace_fts_items(c, self.user_id, "agenda", &items)?;
                recall::keyword_leg(
                    c,
                    self.user_id,
                    "agenda",
                    &prepared.current,
                    &prepared.previous,
                )
            })
            .map_err(|e| e.to_string())?;
        let mut due = Vec::new();
        let mut plain = Vec::new();
        for id in ranking {
            let item = RecallItem {
                memory_type: RecallKind::AgendaItem,
                memory_id: id,
            };
            if prepared.in_context.contains(&item) {
                continue;
            }
            let Some(entry) = entries.iter().find(|e| e.id == id) else {
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
                        memory_id: id,
                        name: entry.name.clone(),
                    },
                    entry.fact.clone(),
                ));
            }
        }
        due.extend(plain);
        Ok(due)
    }
}

impl RecallSource for StoreRecall {
    fn recall(&self, query: &RecallQuery<'_>) -> Result<Option<RecallPayload>, String> {
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

/// The parts of a session over `runtime`'s home: its configuration, clock, user, registry and
/// stores. The database and transcript come from the runtime's services when it provides them,
/// else they are opened here (`database_url`). Due items and agenda pins come from the agenda store
/// when present.
///
/// # Errors
/// [`SessionError::Store`] when the database cannot be opened.
pub fn session_parts(
    runtime: &Runtime,
    model: Arc<dyn ChatModel>,
    protocol: Protocol,
    capabilities: Capabilities,
) -> Result<SessionParts, SessionError> {
    let db = match runtime.services.get::<Db>() {
        Some(db) => db,
        None => Arc::new(match &runtime.config.paths.database {
            DatabaseLocation::File(path) => Db::open(path)?,
            DatabaseLocation::Memory => Db::open_in_memory()?,
        }),
    };
    let user_id = match runtime.user.id {
        Some(id) => id,
        None => db.ensure_user(&runtime.user.token, runtime.time.now())?,
    };
    let mut user = runtime.user.clone();
    user.id = Some(user_id);
    let transcript = runtime
        .services
        .get::<TranscriptStore>()
        .map_or_else(|| TranscriptStore::new(Arc::clone(&db)), |t| (*t).clone());
    let agenda = runtime.services.get::<AgendaStore>();
    let memory = runtime.services.get::<MemoryStore>();
    let mut services = runtime.services.clone();
    if services.get::<Db>().is_none() {
        services.insert(Arc::clone(&db));
    }
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
        services,
        capabilities,
        cwd: std::env::current_dir().unwrap_or_else(|_| runtime.user.user_home.clone()),
        db,
        transcript,
        model,
        fast_model: None,
        memory: memory.clone(),
        feature_requests: runtime
            .services
            .get::<elroy_feature_requests::FeatureRequestStore>(),
        provider: match protocol {
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
