//! The built-in embedder of a process that may leave the model to the resident worker
//! (`crate::embed_server`): a question's vector comes from the worker that has the model loaded
//! when one runs; otherwise the process loads the model itself and starts a worker for the
//! questions that follow.

use std::path::PathBuf;
use std::time::Duration;

use elroy_config::Config;
use elroy_core::{EmbedError, Embedder};
use elroy_embed::LazyEmbedder;

use crate::embed_server::{AskError, ask, socket_path};
use crate::embed_worker::{in_worker, reap_in_background, start_for_question};

/// How long a question waits for the worker's answer (reads and writes each). A worker that is
/// loading its model answers within a second on a loaded machine; past this (a stopped or
/// overloaded worker) the process embeds the question itself.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The built-in embedder ([`LazyEmbedder`]) behind the resident worker.
///
/// [`Embedder::embed`] in a process whose model is not loaded asks the worker at the user home's
/// socket. When none listens it starts one (`elroy models embed --worker`, which keeps the model
/// for `embedding_worker_idle_seconds` after its last request) for the questions that follow, and
/// loads the model itself for this one: a worker's start and load before the first answer took
/// longer than loading in the process (~150 against ~90 ms, docs/performance.md). On any other
/// failure — no worker program (library use), another worker without a socket, a worker that
/// times out or refuses — it loads the model in the process, as without a worker. With
/// `embedding_worker_idle_seconds: 0`, in the worker itself, and once the model is loaded here, it
/// is the [`LazyEmbedder`] alone. The stored model name and [`Embedder::is_loaded`] are the
/// local embedder's, so a write still leaves its vector to the worker.
pub struct ResidentEmbedder {
    local: LazyEmbedder,
    socket: PathBuf,
    idle_seconds: u64,
    /// For starting a worker: its settings and paths.
    config: Config,
}

impl std::fmt::Debug for ResidentEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentEmbedder")
            .field("local", &self.local)
            .field("socket", &self.socket)
            .field("idle_seconds", &self.idle_seconds)
            .finish_non_exhaustive()
    }
}

impl ResidentEmbedder {
    /// `local` behind the worker of `config`'s user home.
    pub fn new(local: LazyEmbedder, config: &Config) -> Self {
        ResidentEmbedder {
            local,
            socket: socket_path(&config.paths.user_home),
            idle_seconds: config.settings.embedding_worker_idle_seconds,
            config: config.clone(),
        }
    }

    /// The vector from the running worker; `None` when none answered (the caller embeds
    /// locally). When none runs, one is started for the next questions: this one does not wait
    /// for it, so a lone question costs what it cost without a worker.
    fn ask_worker(&self, text: &str) -> Option<Vec<f32>> {
        match ask(&self.socket, self.local.name(), text, ANSWER_WAIT) {
            Ok(vector) => Some(vector),
            Err(e) => {
                tracing::debug!("{e}; the question is embedded here");
                // No worker, or one of another model (it is ending): one of this model is
                // started for the next questions. It waits a moment for an ending worker's
                // lock. A worker that is there but slow or stopped is left alone.
                let start = match e {
                    AskError::NoWorker => start_for_question(&self.config, false),
                    AskError::Refused(_) => start_for_question(&self.config, true),
                    AskError::Io(_) => None,
                };
                if let Some(child) = start {
                    reap_in_background(child);
                }
                None
            }
        }
    }
}

impl Embedder for ResidentEmbedder {
    fn model(&self) -> &str {
        self.local.name()
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if self.idle_seconds > 0
            && !in_worker()
            && !self.local.is_loaded()
            && let Some(vector) = self.ask_worker(text)
        {
            tracing::debug!("question embedded by the resident worker");
            return Ok(vector);
        }
        self.local.embed(text)
    }

    fn is_loaded(&self) -> bool {
        self.local.is_loaded()
    }
}
