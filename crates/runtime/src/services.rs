//! The stores as lazy [`Services`] entries: each is opened on the first lookup of its type, once,
//! and shared by every clone of the services (tool contexts, sessions). One block per store,
//! marked with its crate's name. A store that fails to open is an error for the tool (or session)
//! that asked for it, naming the store and the reason; other tools keep working.

use std::sync::{Arc, OnceLock};

use elroy_config::Config;
use elroy_core::{ServiceError, Services, TimeContext, UserId, UserInfo};
use elroy_db::Db;

use crate::WarningSink;

/// An opener shared between the services map and the openers of the stores that need it (the
/// agenda needs the database and the user id), so each is opened once.
pub(crate) struct Lazy<T> {
    cell: OnceLock<Result<Arc<T>, ServiceError>>,
    open: Box<dyn Fn() -> Result<Arc<T>, ServiceError> + Send + Sync>,
}

impl<T: Send + Sync + 'static> Lazy<T> {
    fn new(open: impl Fn() -> Result<Arc<T>, ServiceError> + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Lazy {
            cell: OnceLock::new(),
            open: Box::new(open),
        })
    }

    /// The value, opened now if it was not.
    ///
    /// # Errors
    /// The opener's error (now or at the first attempt).
    pub(crate) fn get(&self) -> Result<Arc<T>, ServiceError> {
        self.cell.get_or_init(|| (self.open)()).clone()
    }

    /// Registers this value in `services` (opened on the first lookup there).
    fn register(self: &Arc<Self>, services: &mut Services) {
        let this = Arc::clone(self);
        services.insert_lazy(move || this.get());
    }
}

/// A [`elroy_core::FileWarningSink`] over the front end's sink: every warning goes to the log,
/// and the sink gets [`elroy_core::summarize_warnings`] (a few one by one, many as one line).
pub(crate) fn file_warnings(warn: &WarningSink) -> elroy_core::FileWarningSink {
    let warn = Arc::clone(warn);
    Arc::new(move |warnings: Vec<elroy_core::FileWarning>| {
        if warnings.len() > elroy_core::ITEMIZED_WARNINGS {
            for w in &warnings {
                tracing::warn!(kind = w.kind, path = %w.path, "{}", w.message);
            }
        }
        for line in elroy_core::summarize_warnings(&warnings) {
            warn(&line);
        }
    })
}

/// The stores of `config`'s home for `user`, none opened yet. Problems with single files found
/// when a store reads them (an agenda file that does not parse, memory files without ids) go to
/// `warn` through [`file_warnings`].
pub(crate) fn open_services(
    config: &Arc<Config>,
    time: &TimeContext,
    user: &UserInfo,
    warn: &WarningSink,
) -> Services {
    let mut services = Services::new();
    services.insert(Arc::clone(config));

    // --- elroy-db (database, users) ---
    let db = {
        let location = config.paths.database.clone();
        Lazy::new(move || {
            let db = match &location {
                elroy_config::DatabaseLocation::File(path) => Db::open(path),
                elroy_config::DatabaseLocation::Memory => Db::open_in_memory(),
            };
            db.map(Arc::new).map_err(ServiceError::new)
        })
    };
    db.register(&mut services);
    let user_id = {
        let (db, token, time) = (Arc::clone(&db), user.token.clone(), time.clone());
        Lazy::new(move || {
            let id = db
                .get()?
                .ensure_user(&token, time.now())
                .map_err(ServiceError::new)?;
            Ok(Arc::new(UserId(id)))
        })
    };
    user_id.register(&mut services);

    // --- elroy-transcript ---
    let transcript = {
        let db = Arc::clone(&db);
        Lazy::new(move || Ok(Arc::new(elroy_transcript::TranscriptStore::new(db.get()?))))
    };
    transcript.register(&mut services);

    // --- elroy-agenda ---
    // Item ids (recall `memory_id`) live in the `agenda_items` table of state.db
    // (`docs/formats.md#agenda-index`).
    let agenda = {
        let (db, user_id, time, warn) = (
            Arc::clone(&db),
            Arc::clone(&user_id),
            time.clone(),
            Arc::clone(warn),
        );
        let (elroy_home, user_home) = (user.elroy_home.clone(), user.user_home.clone());
        Lazy::new(move || {
            // Nothing is read here: the first operation brings the index up to date, reading
            // only files whose stat changed; files it finds unreadable are warned about then
            // (robustness R2, R7), and `elroy doctor` lists them all.
            let agenda = elroy_agenda::AgendaStore::new(
                &elroy_home,
                &user_home,
                elroy_agenda::DbIndex::new(db.get()?, user_id.get()?.0)
                    .with_clock(Arc::clone(&time.clock)),
            )
            .with_warnings(file_warnings(&warn));
            Ok(Arc::new(agenda))
        })
    };
    agenda.register(&mut services);

    // --- elroy-feature-requests ---
    {
        let (elroy_home, user_home) = (user.elroy_home.clone(), user.user_home.clone());
        Lazy::new(move || {
            Ok(Arc::new(elroy_feature_requests::FeatureRequestStore::new(
                &elroy_home,
                &user_home,
            )))
        })
        .register(&mut services);
    }

    // --- elroy-notebook ---
    {
        let (elroy_home, user_home) = (user.elroy_home.clone(), user.user_home.clone());
        Lazy::new(move || {
            Ok(Arc::new(elroy_notebook::Notebook::new(
                &elroy_home,
                &user_home,
            )))
        })
        .register(&mut services);
    }

    // --- elroy-memory (with the embedder) ---
    {
        let (db, user_id, transcript, time, warn, config) = (
            Arc::clone(&db),
            Arc::clone(&user_id),
            Arc::clone(&transcript),
            time.clone(),
            Arc::clone(warn),
            Arc::clone(config),
        );
        let user = user.clone();
        Lazy::new(move || open_memory(&config, &user, &db, &user_id, &transcript, &time, &warn))
            .register(&mut services);
    }

    // --- web / codex / plugins ---
    // The web tools build their HTTP client on first use, so other commands pay no TLS set-up.
    // Codex sessions live in state.db (`docs/formats.md#codex-sessions`); rows left running by a
    // process that died are closed when the store opens. Plugins are loaded with the registry
    // (`Runtime::open`).
    {
        let (db, user_id, time, warn, config) = (
            Arc::clone(&db),
            Arc::clone(&user_id),
            time.clone(),
            Arc::clone(warn),
            Arc::clone(config),
        );
        Lazy::new(move || {
            let mut with_db = Services::new();
            with_db.insert(db.get()?);
            let (sessions, warning) = elroy_tools_codex::open_session_store(
                &with_db,
                Some(user_id.get()?.0),
                time.now(),
                i64::try_from(config.settings.codex_timeout_seconds).unwrap_or(i64::MAX),
            );
            if let Some(warning) = warning {
                warn(&warning);
            }
            Ok(Arc::new(sessions))
        })
        .register(&mut services);
    }

    services
}

/// Opens the memory store: syncs `memories/` with the index (warnings for files it could not
/// read), and unpins from the context the memories whose file left `memories/`
/// (`docs/formats.md#memory-index-sync`).
fn open_memory(
    config: &Config,
    user: &UserInfo,
    db: &Lazy<Db>,
    user_id: &Lazy<UserId>,
    transcript: &Lazy<elroy_transcript::TranscriptStore>,
    time: &TimeContext,
    warn: &WarningSink,
) -> Result<Arc<elroy_memory::MemoryStore>, ServiceError> {
    let user_id = user_id.get()?.0;
    // Elroy's database names memories only in the DEFAULT user home
    // (`docs/formats.md#names-from-elroys-database`).
    let elroy_db_path = (user.token == "DEFAULT").then(|| config.paths.elroy_db_path.clone());
    let keys = &config.settings;
    let threshold = keys
        .memory_relevance_cosine_threshold
        .unwrap_or(1.0 - keys.l2_memory_relevance_distance_threshold / 2.0);
    let (memory, sync) = elroy_memory::MemoryStore::open(
        db.get()?,
        elroy_memory::MemoryStoreOptions {
            elroy_home: user.elroy_home.clone(),
            memory_dir: config.paths.memory_dir.clone(),
            elroy_db_path,
            user_id,
            // The embedding model when one is available (`docs/behaviour.md#embeddings`), else the
            // built-in embedder when its model is there; else keyword recall only (D9).
            embedder: crate::embedder::recall_embedder(config, warn),
            cosine_threshold: threshold as f32,
        },
        time.now(),
    )
    .map_err(ServiceError::new)?;
    // Missing vectors are the detached worker's (`crate::embed_worker`): a question embeds
    // only itself.
    if crate::embed_worker::worker_available() {
        memory.set_inline_embedding(false);
    }
    file_warnings(warn)(sync.warnings.clone());
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
            .get()?
            .apply_effects(user_id, time.now(), &unpins)
            .map_err(ServiceError::new)?;
    }
    Ok(Arc::new(memory))
}
