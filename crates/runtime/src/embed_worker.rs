//! The detached embedding worker: memory vectors computed soon after a memory is written, even
//! when the process that wrote it exits at once (`elroy remember`, `elroy tools call
//! create_memory`, a script).
//!
//! A process that leaves memories without a current vector (it created one without loading the
//! model, or a search met some) starts, when it ends, `elroy models embed --worker`
//! ([`WORKER_ARGS`]) detached from it: in its own process group, no standard streams. The worker
//! runs only while it holds the user home's worker lock ([`lock_path`], an exclusive `flock`), so
//! one runs at a time per home and user; a second one started meanwhile exits at once. It embeds
//! every pending memory in batches (`crate::reembed`, each batch one transaction), lets go of
//! the lock, looks once more (a memory written while it let go would otherwise be left: its
//! writer saw the lock held and started none) and exits when nothing is pending or a whole batch
//! failed. A worker that is killed leaves only its batch in flight undone, and the kernel drops
//! its lock: the next write or question that meets a missing vector starts another.
//!
//! Why a worker and not inline embedding: loading the built-in model costs ~70–90 ms per
//! process and a memory ~20 ms, against ~50 ms for the whole `create_memory` process; embedding
//! inline would triple every one-shot write. The worker loads the model once for however many
//! writes arrive while it runs (docs/performance.md, "Vectors soon after a write").

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use elroy_memory::MemoryStore;

use crate::Runtime;
use crate::embed_server::{Ended, Notified, Server, notify_pending, socket_path};

/// The arguments that run the worker (`elroy models embed --worker`).
pub const WORKER_ARGS: [&str; 3] = ["models", "embed", "--worker"];

/// The program started as the worker; unset (no worker is ever started) until a front end
/// names it with [`set_worker_program`].
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// How long a starting worker waits for the lock before it leaves the work to the holder.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// The lock of `path`, waiting at most `wait` for its holder to let go.
fn acquire_within(path: &Path, wait: Duration) -> Option<WorkerLock> {
    let start = std::time::Instant::now();
    loop {
        if let Some(lock) = WorkerLock::try_acquire(path) {
            return Some(lock);
        }
        if start.elapsed() >= wait {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Set in the worker process: its embedder embeds in the process, never through its own socket.
static IN_WORKER: AtomicBool = AtomicBool::new(false);

/// Whether this process is the embedding worker ([`Runtime::run_embed_worker`]).
pub(crate) fn in_worker() -> bool {
    IN_WORKER.load(Ordering::Relaxed)
}

/// Whether `args` (the process's, without the program) run the worker ([`WORKER_ARGS`]).
pub fn is_worker_command(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .map(|a| a.as_os_str())
        .eq(WORKER_ARGS.map(std::ffi::OsStr::new))
}

/// Closes every descriptor above standard error that this process inherited, so a worker that
/// stays for minutes does not hold its starter's pipes open (a `$(elroy remember …)` or a test
/// harness waiting for the end of a pipe it passed on as descriptor 3 would wait that long).
/// Call it first thing in the worker process, before it opens anything: every descriptor above 2
/// is then an inherited one.
pub fn close_inherited_descriptors() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    // The directory's own descriptor is among them and already closed: EBADF, ignored.
    for fd in fds {
        let _ = nix::unistd::close(fd);
    }
}

/// Names the elroy executable that [`WORKER_ARGS`] run (the CLI: its own path). Without it,
/// memories left without a vector wait for the next session (library users and tests).
pub fn set_worker_program(path: PathBuf) {
    let _ = PROGRAM.set(path);
}

/// Whether a worker program was named ([`set_worker_program`]): then searches leave missing
/// vectors to the worker instead of computing some inline.
pub fn worker_available() -> bool {
    PROGRAM.get().is_some()
}

/// The worker lock of a user home: `<user home>/.embed-worker.lock`.
pub fn lock_path(user_home: &Path) -> PathBuf {
    user_home.join(".embed-worker.lock")
}

/// The held worker lock (an exclusive advisory `flock` on [`lock_path`]); dropping it lets go.
#[derive(Debug)]
pub struct WorkerLock {
    _file: File,
}

impl WorkerLock {
    /// Takes the lock when no one holds it; `None` when another process (or another handle
    /// in this one) holds it, or the file cannot be opened (a read-only home: no worker runs).
    pub fn try_acquire(path: &Path) -> Option<WorkerLock> {
        let file = open_lock(path)?;
        match file.try_lock() {
            Ok(()) => Some(WorkerLock { _file: file }),
            Err(_) => None,
        }
    }

    /// Waits for the lock (a session's background embedding waits for a worker to finish);
    /// `None` when the file cannot be opened or locked.
    pub fn acquire(path: &Path) -> Option<WorkerLock> {
        let file = open_lock(path)?;
        file.lock().ok()?;
        Some(WorkerLock { _file: file })
    }
}

/// Opens (creates) the lock file; its directory must exist (a worker never makes a home that
/// was removed meanwhile).
fn open_lock(path: &Path) -> Option<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .ok()
}

/// Whether a worker holds the lock of `user_home` now.
pub fn worker_running(user_home: &Path) -> bool {
    let path = lock_path(user_home);
    path.exists() && WorkerLock::try_acquire(&path).is_none()
}

/// What [`Runtime::run_embed_worker`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerRun {
    /// Another worker holds the lock: nothing was done.
    AlreadyRunning,
    /// Every pending memory has its vector (`stored` were computed).
    Done {
        /// Vectors stored.
        stored: usize,
    },
    /// A whole batch failed (the model cannot be loaded, the API does not answer): the rest is
    /// left for the next worker.
    Stopped {
        /// Vectors stored before.
        stored: usize,
    },
    /// No embedder is configured, or the memory store cannot be opened.
    NoEmbedder,
}

impl Runtime {
    /// The worker's whole run (see the module documentation): under the lock, every pending
    /// memory embedded, the model kept and served on the socket while requests come
    /// (`embedding_worker_idle_seconds`, built-in embedder only); after letting go, one more look.
    pub fn run_embed_worker(&self) -> WorkerRun {
        IN_WORKER.store(true, Ordering::Relaxed);
        let path = lock_path(&self.config.paths.user_home);
        // The lock first: opening the store may already read the model's files. A worker that
        // is ending (idle, yielded, out of date) holds it a moment longer: wait that long.
        let Some(mut lock) = acquire_within(&path, LOCK_WAIT) else {
            return WorkerRun::AlreadyRunning;
        };
        let Some(store) = self.services.try_get::<MemoryStore>().ok().flatten() else {
            return WorkerRun::NoEmbedder;
        };
        if store.options().embedder.is_none() {
            return WorkerRun::NoEmbedder;
        }
        // Bound before the first look at what is pending, so a writer that finds the lock held
        // can always reach this worker.
        let mut server = self.bind_resident_server();
        let mut stored = 0;
        loop {
            let (done, stopped, ended) = match server.take() {
                Some(server) => serve_while_embedding(&store, server, self.idle()),
                None => {
                    let (done, stopped) = crate::reembed::embed_pending_quietly(&store);
                    (done, stopped, Ended::Idle)
                }
            };
            stored += done;
            drop(lock);
            store.clear_vectors_pending();
            if stopped {
                return WorkerRun::Stopped { stored };
            }
            // Asked to yield: the process that asked takes the lock and embeds what is pending
            // with its own progress. Out of date: a worker of the current model takes over.
            if matches!(ended, Ended::Yielded | Ended::OtherModel) {
                return WorkerRun::Done { stored };
            }
            if store.pending_embeddings(1).map_or(true, |p| p.is_empty()) {
                return WorkerRun::Done { stored };
            }
            // Written while the lock was let go: this worker goes on unless another took over
            // (that one looks again after letting go itself).
            match WorkerLock::try_acquire(&path) {
                Some(again) => lock = again,
                None => return WorkerRun::Done { stored },
            }
        }
    }

    /// How long a worker keeps its model after the last request (`embedding_worker_idle_seconds`).
    fn idle(&self) -> Duration {
        Duration::from_secs(self.config.settings.embedding_worker_idle_seconds)
    }

    /// The worker's socket, when it is worth keeping the model: the built-in embedder (an API
    /// costs a process nothing to load) and a non-zero idle time. `None` also when the socket
    /// cannot be bound (then the worker embeds and exits, as with no idle time).
    fn bind_resident_server(&self) -> Option<Server> {
        if self.idle().is_zero() || !crate::embedder::uses_builtin(&self.config) {
            return None;
        }
        let path = socket_path(&self.config.paths.user_home);
        Server::bind(&path)
            .inspect_err(|e| {
                tracing::debug!("embedding worker: no socket at {}: {e}", path.display())
            })
            .ok()
    }

    /// Starts the detached worker when this process left memories without a current vector
    /// ([`MemoryStore::vectors_left_pending`]) and no worker holds the lock. Does nothing
    /// without a worker program ([`set_worker_program`]), when the memory store was never
    /// opened, or without an embedder. Called when the runtime is dropped.
    pub fn start_embed_worker_if_needed(&self) -> bool {
        let Some(program) = PROGRAM.get() else {
            return false;
        };
        if !self.services.is_open::<MemoryStore>() {
            return false;
        }
        let Some(store) = self.services.get::<MemoryStore>() else {
            return false;
        };
        let Some(embedder) = store.options().embedder.clone() else {
            return false;
        };
        if !store.vectors_left_pending() {
            return false;
        }
        self.wake_or_start_worker(program, embedder.model())
    }

    /// Tells the running worker that memories of `model` wait (a staying worker embeds them
    /// only when told), or starts one: when none runs, when the running one is of another model
    /// (it is ending), or when it has no socket although it should (it is ending). A worker
    /// started while another still holds the lock waits for it a moment ([`LOCK_WAIT`]). A
    /// worker without a socket by design (an embeddings API's) is left to look once more after
    /// letting go of its lock, as a writer that saw it running starts none.
    fn wake_or_start_worker(&self, program: &Path, model: &str) -> bool {
        let user_home = &self.config.paths.user_home;
        if worker_running(user_home) {
            match notify_pending(&socket_path(user_home), model) {
                Notified::Taken => return true,
                Notified::OtherModel => {}
                Notified::NoWorker => {
                    if self.idle().is_zero() || !crate::embedder::uses_builtin(&self.config) {
                        return false;
                    }
                }
            }
        }
        start(program, &self.config).is_ok()
    }
}

impl Runtime {
    /// Starts the detached worker when some active memory of the user lacks a current vector of
    /// the configured embedder and no worker holds the lock: for commands that wrote memories
    /// through a store of their own without an embedder (`elroy import`), so their vectors are
    /// filled in the background right after, not at the next session. Does nothing without a
    /// worker program ([`set_worker_program`]) or an embedder; never loads the model.
    pub fn start_embed_worker_for_pending(&self) -> bool {
        let Some(program) = PROGRAM.get() else {
            return false;
        };
        let Some(store) = self.services.get::<MemoryStore>() else {
            return false;
        };
        let Some(embedder) = store.options().embedder.clone() else {
            return false;
        };
        if store
            .pending_embeddings(1)
            .map_or(true, |ids| ids.is_empty())
        {
            return false;
        }
        self.wake_or_start_worker(program, embedder.model())
    }
}

/// Embeds what is pending while `server` answers questions on another thread, and again each
/// time a writer says more is pending, until the server ends ([`Ended`]: idle, socket gone,
/// asked to yield, a client of another model). A pass that stops on failures (the model cannot
/// be loaded) ends serving too. Returns the vectors stored, whether a pass stopped, and why
/// serving ended.
fn serve_while_embedding(
    store: &MemoryStore,
    server: Server,
    idle: Duration,
) -> (usize, bool, Ended) {
    let Some(embedder) = store.options().embedder.clone() else {
        return (0, false, Ended::SocketGone);
    };
    let model = embedder.model().to_owned();
    let socket = server.path().to_owned();
    let embed = move |text: &str| embedder.embed(text);
    let (tx, rx) = std::sync::mpsc::channel();
    let (mut stored, mut stopped) = (0, false);
    let ended = std::thread::scope(|s| {
        let serving = s.spawn(move || server.serve(idle, &model, &embed, tx));
        loop {
            let (done, failed) = crate::reembed::embed_pending_quietly(store);
            stored += done;
            if failed {
                stopped = true;
                // The serving thread sees its socket gone within a second and ends.
                let _ = std::fs::remove_file(&socket);
                break;
            }
            if rx.recv().is_err() {
                break;
            }
            while rx.try_recv().is_ok() {}
        }
        serving.join().unwrap_or(Ended::SocketGone)
    });
    (stored, stopped, ended)
}

/// Starts the worker for a process that wants a question's vector and found no worker to ask,
/// or one of another model (`even_if_running`: that one is ending, and the new one waits a moment
/// for its lock). `None` without a worker program, while another worker holds the lock and
/// `even_if_running` is false (a worker without a socket: an embeddings API's, or one that could
/// not bind), or when it cannot be started.
pub(crate) fn start_for_question(
    config: &elroy_config::Config,
    even_if_running: bool,
) -> Option<Child> {
    let program = PROGRAM.get()?;
    if !even_if_running && worker_running(&config.paths.user_home) {
        return None;
    }
    spawn_worker(program, config).ok()
}

/// Starts the worker and reaps it on a thread, so a long-lived process (a chat, `elroy mcp`)
/// keeps no zombie.
fn start(program: &Path, config: &elroy_config::Config) -> std::io::Result<()> {
    let child = spawn_worker(program, config)?;
    reap_in_background(child);
    Ok(())
}

/// Waits for `child` on a thread of its own.
pub(crate) fn reap_in_background(mut child: Child) {
    let _ = std::thread::Builder::new()
        .name("elroy-embed-worker-reaper".into())
        .spawn(move || child.wait());
}

/// Starts `program models embed --worker` detached: its own process group (a Ctrl-C in the
/// terminal does not reach it), no standard streams, the resolved home, user, configuration
/// file and embedding settings in its environment (flags are not passed on).
fn spawn_worker(program: &Path, config: &elroy_config::Config) -> std::io::Result<Child> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
    let mut cmd = std::process::Command::new(program);
    // The root as its directory: a worker that stays must not keep its starter's directory busy
    // (an unmount); every path it gets is absolute.
    cmd.args(WORKER_ARGS)
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .env("ELROY_HOME", absolute(&config.paths.elroy_home))
        .env("ELROY_USER_TOKEN", &config.settings.user_token)
        .env(
            "ELROY_EMBEDDING_WORKER_IDLE_SECONDS",
            config.settings.embedding_worker_idle_seconds.to_string(),
        );
    if let Some(file) = &config.config_file {
        cmd.env("ELROY_CONFIG_PATH", absolute(file));
    }
    let s = &config.settings;
    if s.embedding_model_path.is_some() {
        cmd.env(
            "ELROY_EMBEDDING_MODEL_PATH",
            absolute(&config.paths.embedding_model_dir),
        );
    }
    for (var, value) in [
        ("ELROY_EMBEDDING_MODEL", &s.embedding_model),
        (
            "ELROY_EMBEDDING_MODEL_API_BASE",
            &s.embedding_model_api_base,
        ),
    ] {
        if let Some(value) = value {
            cmd.env(var, value);
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// One holder at a time: a second handle (another open of the file, as another process
    /// would make) cannot take it until the first lets go; the check that a worker runs says so.
    #[test]
    fn the_worker_lock_admits_one_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_path(dir.path());
        assert!(!worker_running(dir.path()));
        let first = WorkerLock::try_acquire(&path).expect("free lock");
        assert!(WorkerLock::try_acquire(&path).is_none());
        assert!(worker_running(dir.path()));
        drop(first);
        assert!(!worker_running(dir.path()));
        assert!(WorkerLock::try_acquire(&path).is_some());
    }
}
