//! Building a [`SessionParts`] from an opened home ([`elroy_runtime::Runtime`]), with adapters
//! from the stores the runtime provides to the orchestrator's [`ports`](crate::ports).

use std::sync::Arc;

use elroy_agenda::AgendaStore;
use elroy_config::DatabaseLocation;
use elroy_core::{Capabilities, RecallItem, RecallKind, RecallMetadata, TimeContext};
use elroy_db::Db;
use elroy_llm::{ChatModel, Protocol};
use elroy_runtime::Runtime;
use elroy_transcript::{PinContent, Provider, TranscriptStore};

use crate::ports::{DueSource, PinResolver};
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

/// Pins of agenda items resolved from the agenda store (memories need the memory store).
#[derive(Debug, Clone)]
pub struct AgendaPins(pub Arc<AgendaStore>);

impl PinResolver for AgendaPins {
    fn resolve(&self, item: RecallItem, time: &TimeContext) -> Option<PinContent> {
        if item.memory_type != RecallKind::AgendaItem {
            return None;
        }
        let found = self.0.item_by_id(item.memory_id).ok()??;
        let rendering = self.0.fact_by_id(item.memory_id, &time.tz).ok()??;
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
    let mut services = runtime.services.clone();
    if services.get::<Db>().is_none() {
        services.insert(Arc::clone(&db));
    }
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
        provider: match protocol {
            Protocol::Anthropic => Provider::Anthropic,
            Protocol::OpenAi => Provider::Other,
        },
        recall: None,
        due: agenda
            .clone()
            .map(|a| Arc::new(AgendaDue(a)) as Arc<dyn DueSource>),
        pins: agenda.map(|a| Arc::new(AgendaPins(a)) as Arc<dyn PinResolver>),
    })
}
