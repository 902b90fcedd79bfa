//! Which embedder recall uses: the configured embeddings API when there is one, else the
//! built-in embedder over the model directory (`embedding_model_path`), else none (keywords
//! only). `embedding_model: builtin` asks for the built-in embedder even when an API is
//! configured; an empty `embedding_model` disables embeddings.

use std::sync::Arc;

use elroy_config::Config;

use crate::WarningSink;

/// The `embedding_model` value that asks for the built-in embedder.
pub const BUILTIN: &str = "builtin";

/// The embedder for the memory store, `None` for keyword recall only.
///
/// The built-in embedder is used when `embedding_model` is [`BUILTIN`], or when no embeddings
/// API resolves (no key, no base URL). Its model is loaded on the first embedding; when it cannot
/// be (the directory or a file is missing, a file is corrupt) `warn` gets one warning saying how
/// to get the model, and recall keeps to keywords. Without an explicit request (`builtin` or
/// `embedding_model_path`) an absent default directory is not an error: recall keeps to keywords
/// silently (`elroy models fetch` gets the model).
pub fn recall_embedder(
    config: &Config,
    warn: &WarningSink,
) -> Option<Arc<dyn elroy_core::Embedder>> {
    let keys = &config.settings;
    let asked = keys.embedding_model.as_deref() == Some(BUILTIN);
    if !asked {
        keys.embedding_model.as_ref()?;
        if let Some(api) = elroy_llm::connect_blocking_embedder(config) {
            return Some(api);
        }
    }
    let dir = config.paths.embedding_model_dir.clone();
    let explicit = asked || keys.embedding_model_path.is_some();
    if !explicit && !dir.exists() {
        return None;
    }
    builtin(dir, warn)
}

#[cfg(feature = "builtin-embedder")]
fn builtin(dir: std::path::PathBuf, warn: &WarningSink) -> Option<Arc<dyn elroy_core::Embedder>> {
    let warn = warn.clone();
    let on_error: elroy_embed::OnLoadError = Box::new(move |e: &elroy_embed::LoadError| {
        warn(&format!(
            "{e}; recall uses keywords only (get the model with `elroy models fetch`, or set embedding_model_path)"
        ));
    });
    Some(Arc::new(elroy_embed::LazyEmbedder::new(dir, on_error)))
}

#[cfg(not(feature = "builtin-embedder"))]
fn builtin(_dir: std::path::PathBuf, warn: &WarningSink) -> Option<Arc<dyn elroy_core::Embedder>> {
    warn(
        "this elroy was built without the built-in embedder (cargo feature builtin-embedder); recall uses keywords only",
    );
    None
}
