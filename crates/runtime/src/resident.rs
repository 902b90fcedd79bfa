//! The built-in embedder of a process that may leave the model to the resident worker
//! (`crate::embed_server`): a question's vector comes from the worker that has the model loaded
//! when one runs, or from one this process starts; the process loads the model itself only when
//! no worker can answer.

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use elroy_config::Config;
use elroy_core::{EmbedError, Embedder};
use elroy_embed::LazyEmbedder;

use crate::embed_server::{AskError, ask, socket_path};
use crate::embed_worker::{in_worker, reap_in_background, start_for_question};

/// How long a question waits for the worker's answer (reads and writes each). A worker that is
/// loading its model answers within a second on a loaded machine; past this the process embeds
/// the question itself.
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// How long a question waits for a worker it started to listen.
const START_WAIT: Duration = Duration::from_secs(5);

/// How often it looks whether the started worker listens.
const START_POLL: Duration = Duration::from_millis(5);

/// The built-in embedder ([`LazyEmbedder`]) behind the resident worker.
///
/// [`Embedder::embed`] in a process whose model is not loaded asks the worker at the user home's
/// socket; when none listens it starts one (`elroy models embed --worker`, which keeps the model
/// for `embedding_worker_idle_seconds` after its last request) and asks it once it listens. On
/// any failure — no worker program (library use), another worker without a socket, a worker that
/// exits, times out or refuses — it loads the model in the process, as without a worker. With
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

    /// The vector from a worker: the running one, else one started now. `None` when no worker
    /// answered (the caller embeds locally).
    fn ask_worker(&self, text: &str) -> Option<Vec<f32>> {
        let model = self.local.name();
        match ask(&self.socket, model, text, ANSWER_WAIT) {
            Ok(vector) => return Some(vector),
            Err(AskError::NoWorker) => {}
            Err(e) => {
                tracing::debug!("{e}; the question is embedded here");
                return None;
            }
        }
        let mut child = start_for_question(&self.config)?;
        let answer = self.ask_started(&mut child, model, text);
        reap_in_background(child);
        answer
    }

    /// Waits (at most [`START_WAIT`]) for the started worker to listen, then asks it; gives up
    /// as soon as the worker exits (another one held the lock, or it could not bind).
    fn ask_started(&self, child: &mut Child, model: &str, text: &str) -> Option<Vec<f32>> {
        let start = Instant::now();
        while start.elapsed() < START_WAIT {
            match ask(&self.socket, model, text, ANSWER_WAIT) {
                Ok(vector) => return Some(vector),
                Err(AskError::NoWorker) => {}
                Err(e) => {
                    tracing::debug!("{e}; the question is embedded here");
                    return None;
                }
            }
            if !matches!(child.try_wait(), Ok(None)) {
                return None;
            }
            std::thread::sleep(START_POLL);
        }
        None
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
