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

    // --- elroy-agenda ---
    services.insert(Arc::new(elroy_agenda::AgendaStore::open(
        &_user.elroy_home,
        &_user.user_home,
        &_user.token,
    )));

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

    // --- elroy-transcript ---

    // --- web / codex / plugins ---
    // The web tools build their HTTP client on first use, so other commands pay no TLS set-up.
    // Codex sessions live in state.db (formats.md §9.7); rows left running by a process that died
    // are closed here. Plugins are loaded with the registry (`Runtime::open`).
    let (codex_sessions, codex_warning) = elroy_tools_codex::open_session_store(
        &services,
        _user.id,
        _time.now(),
        config.int("codex_timeout_seconds"),
    );
    _warnings.extend(codex_warning);
    services.insert(Arc::new(codex_sessions));

    Ok(services)
}
