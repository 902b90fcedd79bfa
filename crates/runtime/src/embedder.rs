//! Which embedder recall uses: the configured embeddings API when there is one, else the
//! built-in embedder over the model directory (`embedding_model_path`), else none (keywords
//! only). `embedding_model: builtin` asks for the built-in embedder even when an API is
//! configured; an empty `embedding_model` disables embeddings. `elroy doctor` asks the same
//! decision whether the model would be used, and loads it ([`builtin_model_problem`]).

use std::path::PathBuf;
use std::sync::Arc;

use elroy_config::Config;

use crate::WarningSink;

/// The `embedding_model` value that asks for the built-in embedder.
pub const BUILTIN: &str = "builtin";

/// The embedder recall uses for a configuration, decided before anything is loaded.
enum Choice {
    /// Keyword recall only.
    Keywords,
    /// The configured embeddings API.
    Api(Arc<dyn elroy_core::Embedder>),
    /// The built-in embedder over this model directory.
    Builtin(PathBuf),
}

/// The one decision of [`recall_embedder`] and [`builtin_model_problem`] (see
/// [`recall_embedder`]).
fn choose(config: &Config) -> Choice {
    let keys = &config.settings;
    let asked = keys.embedding_model.as_deref() == Some(BUILTIN);
    if !asked {
        if keys.embedding_model.is_none() {
            return Choice::Keywords;
        }
        if let Some(api) = elroy_llm::connect_blocking_embedder(config) {
            return Choice::Api(api);
        }
    }
    let dir = config.paths.embedding_model_dir.clone();
    let explicit = asked || keys.embedding_model_path.is_some();
    // Absent, not merely unreadable: a default directory elroy cannot look into is reported
    // (as unreadable) when it loads.
    if !explicit && matches!(dir.try_exists(), Ok(false)) {
        return Choice::Keywords;
    }
    Choice::Builtin(dir)
}

/// The embedder for the memory store, `None` for keyword recall only.
///
/// The built-in embedder is used when `embedding_model` is [`BUILTIN`], or when no embeddings
/// API resolves (no key, no base URL). Its model is loaded on the first embedding; when it cannot
/// be (the directory or a file is missing or unreadable, a file is corrupt) `warn` gets one
/// warning saying how to get the model ([`load_warning`]), and recall keeps to keywords. Without
/// an explicit request (`builtin` or `embedding_model_path`) an absent default directory is not
/// an error: recall keeps to keywords silently (`elroy models fetch` gets the model).
///
/// A process whose built-in model is not loaded asks the resident worker for a question's
/// vector first, and starts one when none runs ([`crate::resident::ResidentEmbedder`]).
pub fn recall_embedder(
    config: &Config,
    warn: &WarningSink,
) -> Option<Arc<dyn elroy_core::Embedder>> {
    match choose(config) {
        Choice::Keywords => None,
        Choice::Api(api) => Some(api),
        Choice::Builtin(dir) => builtin(dir, config, warn),
    }
}

/// Whether recall of `config` uses the built-in embedder (the decision of [`recall_embedder`];
/// nothing is loaded).
pub fn uses_builtin(config: &Config) -> bool {
    matches!(choose(config), Choice::Builtin(_))
}

/// For `elroy doctor`: when a session of `config` would use the built-in embedder (the same
/// decision as [`recall_embedder`]) and its model cannot be loaded (it is loaded here), the
/// model directory and the warning the session gives. `None` when the session would not use
/// the built-in embedder (an API, keywords only, an absent default directory nobody asked for)
/// or its model loads.
pub fn builtin_model_problem(config: &Config) -> Option<(PathBuf, String)> {
    match choose(config) {
        Choice::Keywords | Choice::Api(_) => None,
        Choice::Builtin(dir) => builtin_problem(dir),
    }
}

/// The warning a session gives when the built-in embedder's model cannot be loaded: the load
/// error and how to get the model.
#[cfg(feature = "builtin-embedder")]
pub fn load_warning(e: &elroy_embed::LoadError) -> String {
    format!(
        "{e}; recall uses keywords only (get the model with `elroy models fetch`, or set embedding_model_path)"
    )
}

#[cfg(feature = "builtin-embedder")]
fn builtin(
    dir: PathBuf,
    config: &Config,
    warn: &WarningSink,
) -> Option<Arc<dyn elroy_core::Embedder>> {
    let warn = warn.clone();
    let on_error: elroy_embed::OnLoadError =
        Box::new(move |e: &elroy_embed::LoadError| warn(&load_warning(e)));
    let local = elroy_embed::LazyEmbedder::new(dir, on_error);
    Some(Arc::new(crate::resident::ResidentEmbedder::new(
        local, config,
    )))
}

#[cfg(feature = "builtin-embedder")]
fn builtin_problem(dir: PathBuf) -> Option<(PathBuf, String)> {
    let e = elroy_embed::BuiltinEmbedder::load(&dir).err()?;
    Some((dir, load_warning(&e)))
}

/// What a build without the built-in embedder warns when a session would use it.
#[cfg(not(feature = "builtin-embedder"))]
const NOT_BUILT: &str = "this elroy was built without the built-in embedder (cargo feature builtin-embedder); recall uses keywords only";

#[cfg(not(feature = "builtin-embedder"))]
fn builtin(
    _dir: PathBuf,
    _config: &Config,
    warn: &WarningSink,
) -> Option<Arc<dyn elroy_core::Embedder>> {
    warn(NOT_BUILT);
    None
}

#[cfg(not(feature = "builtin-embedder"))]
fn builtin_problem(dir: PathBuf) -> Option<(PathBuf, String)> {
    Some((dir, NOT_BUILT.to_owned()))
}
