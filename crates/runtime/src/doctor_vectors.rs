//! `elroy doctor`'s look at memory vectors: active memories that still lack a current vector of
//! the embedding model a session would use (written by commands that ended before their vector
//! was computed, and no worker has finished them yet). Recall ranks those by keywords only.

use std::sync::Arc;

use elroy_config::Config;
use elroy_db::Db;

/// The line `elroy doctor` shows under `memories` when `count` memories lack a vector of
/// `model`; `worker` when a detached worker is computing them now.
pub fn missing_vectors_message(count: usize, model: &str, worker: bool) -> String {
    let what = if count == 1 {
        "1 memory has".to_owned()
    } else {
        format!("{count} memories have")
    };
    let remedy = if worker {
        "a background worker is computing them now"
    } else {
        "`elroy models embed` computes them now (the next write or question starts a worker)"
    };
    format!(
        "{what} no vector of {model} yet; recall ranks {} by keywords until then: {remedy}",
        if count == 1 { "it" } else { "them" }
    )
}

/// The memories of `user` without a current vector of the configured embedding model, as
/// [`missing_vectors_message`]; `None` when none is missing, no embedding model is configured or
/// the index cannot be read, or the built-in model cannot be used (that is reported on its own).
pub(crate) fn missing_vectors(config: &Config, db: &Arc<Db>, user: i64) -> Option<String> {
    // A model that cannot be used is its own problem (`embedding-model`): no vector is coming.
    if crate::embedder::builtin_model_problem(config).is_some() {
        return None;
    }
    let embedder = crate::embedder::recall_embedder(config, &crate::logged_warnings())?;
    let paths = &config.paths;
    let store = elroy_memory::MemoryStore::new(
        Arc::clone(db),
        elroy_memory::MemoryStoreOptions {
            elroy_home: paths.elroy_home.clone(),
            memory_dir: paths.memory_dir.clone(),
            elroy_db_path: None,
            user_id: user,
            embedder: Some(Arc::clone(&embedder)),
            cosine_threshold: 0.3,
        },
    );
    let count = store.pending_embeddings(usize::MAX).ok()?.len();
    (count > 0).then(|| {
        missing_vectors_message(
            count,
            embedder.model(),
            crate::embed_worker::worker_running(&paths.user_home),
        )
    })
}
