//! Opening the database and the stores into [`Services`].
//!
//! One block per store, each marked with its crate's name. A store that fails to open stops
//! start-up with its message; tools find their store with `ctx.services.require::<Store>()`.

use std::sync::Arc;

use elroy_config::Config;
use elroy_core::{Services, TimeContext, UserInfo};

use crate::RuntimeError;

pub(crate) fn open_services(
    config: &Arc<Config>,
    _time: &TimeContext,
    _user: &mut UserInfo,
    _warnings: &mut Vec<String>,
) -> Result<Services, RuntimeError> {
    let mut services = Services::new();
    services.insert(Arc::clone(config));

    // --- elroy-db (database, users): set `user.id` here ---
    let open_err = |e: elroy_db::DbError| RuntimeError::Open(e.to_string());
    let db = Arc::new(match &config.paths.database {
        elroy_config::DatabaseLocation::File(path) => elroy_db::Db::open(path).map_err(open_err)?,
        elroy_config::DatabaseLocation::Memory => {
            elroy_db::Db::open_in_memory().map_err(open_err)?
        }
    });
    let user_id = db
        .ensure_user(&_user.token, _time.now())
        .map_err(open_err)?;
    _user.id = Some(user_id);
    services.insert(Arc::clone(&db));

    // --- elroy-agenda ---
    // Item ids (recall `memory_id`) live in the `agenda_items` table of state.db (formats.md §9.5).
    let agenda = Arc::new(elroy_agenda::AgendaStore::new(
        &_user.elroy_home,
        &_user.user_home,
        Box::new(
            elroy_agenda::DbIndex::new(Arc::clone(&db), user_id)
                .with_clock(Arc::clone(&_time.clock)),
        ),
    ));
    // Files whose front matter cannot be read are skipped by every tool and reported here by name
    // (robustness R2, R7). The scan also fills the store's cache for the first tool call.
    match agenda.broken_files() {
        Ok(broken) => _warnings.extend(broken.into_iter().map(|(_, message)| message)),
        Err(e) => _warnings.push(e.to_string()),
    }
    services.insert(agenda);

    // --- elroy-feature-requests ---
    services.insert(Arc::new(elroy_feature_requests::FeatureRequestStore::new(
        &_user.elroy_home,
        &_user.user_home,
    )));

    // --- elroy-notebook ---
    services.insert(Arc::new(elroy_notebook::Notebook::new(
        &_user.elroy_home,
        &_user.user_home,
    )));

    // --- elroy-memory ---
    // Elroy's database names memories only in the DEFAULT user home (formats.md §6.3.1).
    let elroy_db_path = (_user.token == "DEFAULT").then(|| config.paths.elroy_db_path.clone());
    let keys = &config.settings;
    let threshold = keys
        .memory_relevance_cosine_threshold
        .unwrap_or(1.0 - keys.l2_memory_relevance_distance_threshold / 2.0);
    let (memory, sync) = elroy_memory::MemoryStore::open(
        Arc::clone(&db),
        elroy_memory::MemoryStoreOptions {
            elroy_home: _user.elroy_home.clone(),
            memory_dir: config.paths.memory_dir.clone(),
            elroy_db_path,
            user_id,
            // The embedding model when one is available (orchestrator.md §14.7); else keyword
            // recall only (D9).
            embedder: elroy_llm::connect_blocking_embedder(config),
            cosine_threshold: threshold as f32,
        },
        _time.now(),
    )
    .map_err(|e| RuntimeError::Open(e.to_string()))?;
    _warnings.extend(sync.warnings);
    services.insert(Arc::new(memory));

    // --- elroy-transcript ---
    let transcript = Arc::new(elroy_transcript::TranscriptStore::new(Arc::clone(&db)));
    // Memories whose file left memories/ leave the context (formats.md §6.3).
    let unpins: Vec<elroy_transcript::ResolvedEffect> = sync
        .deactivated
        .iter()
        .map(|id| {
            elroy_transcript::ResolvedEffect::Unpin(elroy_core::RecallItem {
                memory_type: elroy_core::RecallKind::Memory,
                memory_id: *id,
            })
        })
        .collect();
    if !unpins.is_empty() {
        transcript
            .apply_effects(user_id, _time.now(), &unpins)
            .map_err(|e| RuntimeError::Open(e.to_string()))?;
    }
    services.insert(transcript);

    // --- web / codex / plugins ---
    // The web tools build their HTTP client on first use, so other commands pay no TLS set-up.
    // Codex sessions live in state.db (formats.md §9.7); rows left running by a process that died
    // are closed here. Plugins are loaded with the registry (`Runtime::open`).
    let (codex_sessions, codex_warning) = elroy_tools_codex::open_session_store(
        &services,
        _user.id,
        _time.now(),
        i64::try_from(config.settings.codex_timeout_seconds).unwrap_or(i64::MAX),
    );
    _warnings.extend(codex_warning);
    services.insert(Arc::new(codex_sessions));

    Ok(services)
}
