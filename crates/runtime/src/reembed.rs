//! Background embedding: when a session starts (`elroy chat`, the full-screen
//! interface, `elroy mcp`) and active memories lack a vector of the configured embedding model
//! (a new home imported, `embedding_model` switched, memories written by one-shot commands that
//! left their vectors pending), one thread embeds them in batches of [`BATCH`] and reports its
//! progress. It never blocks a turn: while it runs, searches embed only their question and rank
//! with the vectors that exist plus keywords (`elroy_memory::MemoryStore::set_background_embedding`);
//! each batch is written in one short transaction through the store's one connection, so a turn's
//! writes wait at most for that transaction, and other processes for SQLite's busy timeout.
//!
//! A process that ends while the thread runs loses only the batch in flight (each batch commits
//! on its own): the next session embeds the rest.

use std::sync::Arc;
use std::time::{Duration, Instant};

use elroy_memory::MemoryStore;

use crate::Runtime;

/// Memories embedded per batch (one write transaction each).
pub const BATCH: usize = 16;

/// How often a [`EmbedProgress::Progress`] is reported while embedding.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

/// What the background embedding reports to the front end.
#[derive(Debug, Clone, PartialEq)]
pub enum EmbedProgress {
    /// The thread starts: `total` memories lack a vector of `model`.
    Started {
        /// The embedding model (`embeddings.model`).
        model: String,
        /// Memories to embed.
        total: usize,
    },
    /// Every [`PROGRESS_INTERVAL`]: `done` of `total` stored so far.
    Progress {
        /// The embedding model.
        model: String,
        /// Vectors stored so far.
        done: usize,
        /// Memories to embed.
        total: usize,
    },
    /// The thread ends: `done` of `total` stored in `seconds`; `stopped` when a whole batch
    /// failed (the model cannot be loaded, the API does not answer) and the rest was left for
    /// the next session.
    Finished {
        /// The embedding model.
        model: String,
        /// Vectors stored.
        done: usize,
        /// Memories that lacked a vector (plus those written while it ran).
        total: usize,
        /// Wall-clock seconds.
        seconds: f64,
        /// Whether it stopped early on failures.
        stopped: bool,
    },
}

impl std::fmt::Display for EmbedProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmbedProgress::Started { model, total } => write!(
                f,
                "Embedding {total} memor{} with {model} in the background (recall uses keywords for {} until then)…",
                if *total == 1 { "y" } else { "ies" },
                if *total == 1 { "it" } else { "them" }
            ),
            EmbedProgress::Progress { model, done, total } => {
                write!(f, "Embedded {done} of {total} memories with {model}…")
            }
            EmbedProgress::Finished {
                model,
                done,
                total,
                seconds,
                stopped,
            } => {
                write!(
                    f,
                    "Embedded {done} of {total} memories with {model} in {seconds:.1} s"
                )?;
                if *stopped {
                    f.write_str("; stopped on failures (the next session tries the rest)")?;
                }
                f.write_str(".")
            }
        }
    }
}

/// Where [`EmbedProgress`] goes: stderr for the REPL, the status bar for the full-screen
/// interface, the log (and stderr) for `elroy mcp`.
pub type ProgressSink = Arc<dyn Fn(&EmbedProgress) + Send + Sync>;

/// A [`ProgressSink`] that logs each report and prints it to stderr.
pub fn stderr_progress() -> ProgressSink {
    Arc::new(|p: &EmbedProgress| {
        tracing::info!("{p}");
        crate::output::eprintln(&p.to_string());
    })
}

/// The running background embedding; dropping it lets the thread run on.
#[derive(Debug)]
pub struct BackgroundEmbedding {
    handle: std::thread::JoinHandle<usize>,
}

impl BackgroundEmbedding {
    /// Waits for the thread; the number of vectors it stored (0 when it panicked).
    pub fn join(self) -> usize {
        self.handle.join().unwrap_or(0)
    }
}

impl Runtime {
    /// Starts the background embedding of the memories that lack a vector of the configured
    /// embedding model (see the module documentation), reporting to `progress`. `None` (nothing
    /// started) without an embedder, when the memory store cannot be opened, when one already
    /// runs in this process, or when the thread cannot be spawned. When nothing is pending the
    /// thread ends at once without a report.
    pub fn start_background_embedding(
        &self,
        progress: ProgressSink,
    ) -> Option<BackgroundEmbedding> {
        let store = self.services.try_get::<MemoryStore>().ok()??;
        store.options().embedder.as_ref()?;
        if store.background_embedding() {
            return None;
        }
        store.set_background_embedding(true);
        let thread_store = Arc::clone(&store);
        let user_home = self.config.paths.user_home.clone();
        let lock = crate::embed_worker::lock_path(&user_home);
        let spawned = std::thread::Builder::new()
            .name("elroy-embed".into())
            .spawn(move || {
                // One embedding at a time per home: a detached worker (`crate::embed_worker`)
                // that runs now finishes first, and none starts while this one runs.
                // Nothing pending: no lock taken, a resident worker keeps serving.
                if thread_store
                    .pending_embeddings(1)
                    .map_or(true, |p| p.is_empty())
                {
                    thread_store.set_background_embedding(false);
                    return 0;
                }
                // A resident worker is asked to finish what it has in hand and exit, so the
                // wait is for that work, not for its idle time.
                let lock = crate::embed_worker::WorkerLock::try_acquire(&lock).or_else(|| {
                    crate::embed_server::ask_to_yield(&crate::embed_server::socket_path(
                        &user_home,
                    ));
                    crate::embed_worker::WorkerLock::acquire(&lock)
                });
                let (stored, _) = embed_all(&thread_store, &progress);
                drop(lock);
                thread_store.set_background_embedding(false);
                stored
            });
        match spawned {
            Ok(handle) => Some(BackgroundEmbedding { handle }),
            Err(e) => {
                store.set_background_embedding(false);
                tracing::warn!("cannot start the background embedding: {e}");
                None
            }
        }
    }
}

/// [`embed_all`] without reports: `(vectors stored, stopped on a failed batch)`. The detached
/// worker's loop (`crate::embed_worker`).
pub(crate) fn embed_pending_quietly(store: &MemoryStore) -> (usize, bool) {
    let silent: ProgressSink = Arc::new(|p: &EmbedProgress| tracing::debug!("{p}"));
    embed_all(store, &silent)
}

/// Embeds every pending memory of `store` in batches; memories written or edited while it runs
/// are picked up by a second look at the end (each memory is tried at most once, so a file whose
/// text differs from the index until the next sync cannot keep it busy). Returns the vectors
/// stored and whether it stopped on a batch that stored nothing.
fn embed_all(store: &MemoryStore, progress: &ProgressSink) -> (usize, bool) {
    let Some(model) = store
        .options()
        .embedder
        .as_ref()
        .map(|e| e.model().to_owned())
    else {
        return (0, false);
    };
    let mut pending = store.pending_embeddings(usize::MAX).unwrap_or_default();
    if pending.is_empty() {
        return (0, false);
    }
    let start = Instant::now();
    let mut tried = std::collections::HashSet::new();
    let mut total = pending.len();
    progress(&EmbedProgress::Started {
        model: model.clone(),
        total,
    });
    let (mut done, mut stopped) = (0, false);
    let mut last_report = Instant::now();
    'passes: loop {
        for batch in pending.chunks(BATCH) {
            tried.extend(batch.iter().copied());
            let stored = store.embed_memories(batch);
            done += stored;
            // A whole batch failed: the model cannot be loaded or the API does not answer.
            // (A memory whose vector is already current, or that was deleted meanwhile, is no
            // failure: it is no longer pending.)
            if stored == 0 && still_pending(store, batch) {
                stopped = true;
                break 'passes;
            }
            if last_report.elapsed() >= PROGRESS_INTERVAL {
                last_report = Instant::now();
                progress(&EmbedProgress::Progress {
                    model: model.clone(),
                    done,
                    total,
                });
            }
        }
        pending = store
            .pending_embeddings(usize::MAX)
            .unwrap_or_default()
            .into_iter()
            .filter(|id| !tried.contains(id))
            .collect();
        if pending.is_empty() {
            break;
        }
        total += pending.len();
    }
    progress(&EmbedProgress::Finished {
        model,
        done,
        total,
        seconds: start.elapsed().as_secs_f64(),
        stopped,
    });
    (done, stopped)
}

/// Whether every memory of `batch` still lacks a current vector.
fn still_pending(store: &MemoryStore, batch: &[i64]) -> bool {
    let pending: std::collections::HashSet<i64> = store
        .pending_embeddings(usize::MAX)
        .unwrap_or_default()
        .into_iter()
        .collect();
    batch.iter().all(|id| pending.contains(id))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    use std::sync::{Condvar, Mutex};

    use elroy_core::{EmbedError, Embedder};
    use elroy_memory::{HashEmbedder, MemoryQuery, MemoryStoreOptions};

    /// The fixture's hash embedder whose memory embeddings (texts starting with `#`, the
    /// rendering) wait for permits the test hands out; questions pass at once.
    #[derive(Debug)]
    struct Gated {
        inner: HashEmbedder,
        permits: Mutex<usize>,
        opened: Condvar,
    }

    impl Gated {
        fn allow(&self, n: usize) {
            *self.permits.lock().unwrap() += n;
            self.opened.notify_all();
        }
    }

    impl Embedder for Gated {
        fn model(&self) -> &str {
            self.inner.model()
        }

        fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
            if text.starts_with('#') {
                let mut permits = self.permits.lock().unwrap();
                while *permits == 0 {
                    permits = self.opened.wait(permits).unwrap();
                }
                *permits -= 1;
            }
            self.inner.embed(text)
        }
    }

    fn now() -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_790_000_000).unwrap()
    }

    /// A runtime over `home` whose memory store embeds with `embedder`.
    fn runtime(home: &std::path::Path, embedder: Arc<dyn Embedder>) -> (Runtime, Arc<MemoryStore>) {
        let options = elroy_config::LoadOptions {
            home: Some(home.to_path_buf()),
            cwd: home.to_path_buf(),
            user_dir: Some(home.to_path_buf()),
            ..elroy_config::LoadOptions::default()
        };
        let config = elroy_config::Config::load(&options).unwrap();
        let mut runtime = Runtime::open_with(config, crate::logged_warnings()).unwrap();
        let db = runtime.services.get::<elroy_db::Db>().unwrap();
        let user_id = runtime.services.get::<elroy_core::UserId>().unwrap().0;
        let (store, _) = MemoryStore::open(
            db,
            MemoryStoreOptions {
                elroy_home: home.to_path_buf(),
                memory_dir: runtime.config.paths.memory_dir.clone(),
                elroy_db_path: None,
                user_id,
                embedder: Some(embedder),
                cosine_threshold: 0.5,
            },
            now(),
        )
        .unwrap();
        let store = Arc::new(store);
        runtime.services.insert(Arc::clone(&store));
        (runtime, store)
    }

    /// `(memory id, text_md5)` rows.
    type Md5s = Vec<(i64, String)>;

    /// `(memory id, text_md5)` of the stored vectors of `model`, and of the active memories.
    fn vectors(store: &MemoryStore, model: &str) -> (Md5s, Md5s) {
        store
            .db()
            .with_conn(|c| {
                let rows = |sql: &str| -> rusqlite::Result<Md5s> {
                    c.prepare(sql)?
                        .query_map([model], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                };
                Ok((
                    rows(
                        "SELECT e.item_id, e.text_md5 FROM embeddings e JOIN memories m
                         ON m.id = e.item_id AND m.user_id = e.user_id
                         WHERE e.model = ?1 AND m.is_active = 1 ORDER BY e.item_id",
                    )?,
                    rows(
                        "SELECT id, text_md5 FROM memories WHERE is_active = 1 AND ?1 = ?1
                         ORDER BY id",
                    )?,
                ))
            })
            .unwrap()
    }

    use elroy_db::rusqlite;

    /// Switching models re-embeds in the background. A home embedded with model X
    /// (`hash-32`) opened with model Y (`hash-64`): the thread embeds in batches while a search
    /// answers at once (it would wait forever if it embedded a pending memory: the gate holds
    /// them) with the vectors that exist plus keywords. Two inputs of the kind happen during the
    /// re-embedding: a memory edited by hand and one archived; at the end every active memory has
    /// a current vector of Y, and the vectors of X are kept.
    #[test]
    fn switching_models_re_embeds_in_the_background_without_blocking_searches() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".elroy");
        let x: Arc<dyn Embedder> = Arc::new(HashEmbedder::with_dims(32));
        let (_rt, store) = runtime(&home, Arc::clone(&x));
        let mut made = Vec::new();
        for i in 0..40 {
            made.push(
                store
                    .create(
                        &format!("Memory {i}"),
                        &format!("The user likes topic{i} and the number {i}."),
                        &[],
                        now(),
                    )
                    .unwrap(),
            );
        }
        assert_eq!(vectors(&store, "hash-32").0.len(), 40);
        drop((_rt, store));

        let gated = Arc::new(Gated {
            inner: HashEmbedder::with_dims(64),
            permits: Mutex::new(BATCH),
            opened: Condvar::new(),
        });
        let (rt, store) = runtime(&home, Arc::clone(&gated) as Arc<dyn Embedder>);
        assert_eq!(store.pending_embeddings(usize::MAX).unwrap().len(), 40);
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink: ProgressSink = {
            let reports = Arc::clone(&reports);
            Arc::new(move |p: &EmbedProgress| reports.lock().unwrap().push(p.clone()))
        };
        let running = rt.start_background_embedding(sink).unwrap();
        // A second start while it runs starts nothing.
        assert!(rt.start_background_embedding(stderr_progress()).is_none());
        // The first batch is stored; the thread then waits in the second one.
        while vectors(&store, "hash-64").0.len() < BATCH {
            std::thread::yield_now();
        }
        assert!(store.background_embedding());

        // A search meanwhile: answered with the vectors there are plus keywords, embedding
        // only its question (the gate would hold a memory's embedding forever).
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let hits = store
                    .search_readable(&MemoryQuery::from_text("topic39"), 5)
                    .unwrap();
                let _ = tx.send(
                    hits.hits
                        .into_iter()
                        .map(|(m, _)| m.name)
                        .collect::<Vec<_>>(),
                );
            });
        }
        let names = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the search waited for the background embedding");
        assert!(names.iter().any(|n| n == "Memory 39"), "{names:?}");

        // A memory edited by hand and one archived, both still pending.
        let edited = &made[30];
        std::fs::write(
            store.path_of(edited),
            format!(
                "---\nid: {}\n---\n\nThe user now likes sailing instead.\n",
                edited.id
            ),
        )
        .unwrap();
        store.archive(&made[35], now()).unwrap();
        gated.allow(1000);
        let stored = running.join();
        assert!(!store.background_embedding());
        // 39 active memories; the edited one is embedded from its file as it is now.
        assert_eq!(stored, 39);
        store.sync(now()).unwrap();
        let (y, active) = vectors(&store, "hash-64");
        assert_eq!(active.len(), 39);
        assert_eq!(
            y, active,
            "every active memory has a current vector of the new model"
        );
        assert!(store.pending_embeddings(usize::MAX).unwrap().is_empty());
        assert_eq!(vectors(&store, "hash-32").0.len(), 39);

        let reports = reports.lock().unwrap();
        assert_eq!(
            reports.first(),
            Some(&EmbedProgress::Started {
                model: "hash-64".into(),
                total: 40
            })
        );
        assert!(
            matches!(
                reports.last(),
                Some(EmbedProgress::Finished {
                    done: 39,
                    total: 40,
                    stopped: false,
                    ..
                })
            ),
            "{reports:?}"
        );
        assert!(
            reports
                .first()
                .unwrap()
                .to_string()
                .starts_with("Embedding 40 memories with hash-64 in the background")
        );
    }

    /// The built-in embedder's model named by its content: its directory renamed and moved, a
    /// home's vectors are still used (nothing pending, the background embeds nothing); other
    /// numbers in `config.json` under the same directory are another model, whose vectors are
    /// made in the background.
    #[cfg(feature = "builtin-embedder")]
    #[test]
    fn a_renamed_model_directory_keeps_the_home_s_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".elroy");
        let first = dir.path().join("models").join("all-MiniLM-L6-v2");
        elroy_embed::test_support::write_tiny_model(&first);
        let lazy = |dir: &std::path::Path| -> Arc<dyn Embedder> {
            Arc::new(elroy_embed::LazyEmbedder::new(
                dir.to_path_buf(),
                Box::new(|e| panic!("{e}")),
            ))
        };
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink: ProgressSink = {
            let reports = Arc::clone(&reports);
            Arc::new(move |p: &EmbedProgress| reports.lock().unwrap().push(p.clone()))
        };
        let embedder = lazy(&first);
        let model = embedder.model().to_owned();
        let (rt, store) = runtime(&home, embedder);
        for i in 0..5 {
            store
                .create(
                    &format!("Memory {i}"),
                    &format!("the dog is a beagle {i}"),
                    &[],
                    now(),
                )
                .unwrap();
        }
        let running = rt.start_background_embedding(Arc::clone(&sink)).unwrap();
        assert_eq!(running.join(), 5);
        assert_eq!(vectors(&store, &model).0.len(), 5);
        drop((rt, store));

        let moved = dir.path().join("elsewhere").join("minilm");
        std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
        std::fs::rename(&first, &moved).unwrap();
        reports.lock().unwrap().clear();
        let embedder = lazy(&moved);
        assert_eq!(embedder.model(), model);
        let (rt, store) = runtime(&home, embedder);
        assert!(store.pending_embeddings(usize::MAX).unwrap().is_empty());
        let running = rt.start_background_embedding(Arc::clone(&sink)).unwrap();
        assert_eq!(running.join(), 0);
        assert!(reports.lock().unwrap().is_empty(), "{reports:?}");
        drop((rt, store));

        // The same directory with another config.json: another model, embedded anew.
        let config = moved.join("config.json");
        let mut value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
        value["layer_norm_eps"] = 1e-3.into();
        std::fs::write(&config, value.to_string()).unwrap();
        let embedder = lazy(&moved);
        let other = embedder.model().to_owned();
        assert_ne!(other, model);
        let (rt, store) = runtime(&home, embedder);
        assert_eq!(store.pending_embeddings(usize::MAX).unwrap().len(), 5);
        assert_eq!(rt.start_background_embedding(sink).unwrap().join(), 5);
        assert_eq!(vectors(&store, &other).0.len(), 5);
        assert_eq!(vectors(&store, &model).0.len(), 5);
    }
}
