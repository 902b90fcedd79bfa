//! [`MemoryStore`]: memory files plus their index rows (`docs/formats.md#memories`,
//! `docs/formats.md#memory-index`, `docs/formats.md#search-index-and-embeddings`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use elroy_core::Embedder;
use elroy_db::{Db, format_db_time};
use elroy_markdown::{Document, HomeLock, Mapping, Value};
use jiff::Timestamp;
use md5::{Digest, Md5};
use rusqlite::{Connection, OptionalExtension, params};

use crate::model::{Memory, MemorySource, sources_from_json, sources_to_json};
use crate::{MemoryError, recall};

/// The `recall_fts.kind` of memories.
pub const KIND: &str = "memory";

/// Where a store's files live and what it may use.
#[derive(Debug, Clone)]
pub struct MemoryStoreOptions {
    /// `$ELROY_HOME` (the home lock, display paths).
    pub elroy_home: PathBuf,
    /// The memory directory (`memory_dir`); `archive/` is inside it.
    pub memory_dir: PathBuf,
    /// Elroy's own database for names and active flags
    /// (`docs/formats.md#names-from-elroys-database`). Set it only for the DEFAULT user home;
    /// `None` skips the import.
    pub elroy_db_path: Option<PathBuf>,
    /// The user the store acts for (`users.id`).
    pub user_id: i64,
    /// The embedding model, when one is configured (D9).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// `memory_relevance_cosine_threshold` (default 0.3).
    pub cosine_threshold: f32,
}

/// One user's memories.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    pub(crate) db: Arc<Db>,
    pub(crate) opts: MemoryStoreOptions,
    /// Ids deactivated by syncs since [`MemoryStore::take_deactivated`] (shared by clones).
    pub(crate) deactivated: Arc<std::sync::Mutex<Vec<i64>>>,
    /// Set when an op-tracked creation made consolidation due (`docs/behaviour.md#consolidation`
    /// trigger), shared by every clone of the store; the orchestrator takes it after the turn.
    pub(crate) consolidation_due: Arc<std::sync::atomic::AtomicBool>,
    /// Set while a background re-embedding runs in this process
    /// ([`MemoryStore::set_background_embedding`]); searches then embed no pending memory inline.
    pub(crate) background_embedding: Arc<std::sync::atomic::AtomicBool>,
    /// Inline embedding and vectors left to others (`crate::pending`), shared by clones.
    pub(crate) pending: Arc<crate::pending::PendingState>,
}

/// The most pending memory vectors a search computes inline, besides the question's, when no
/// background re-embedding runs in the process (`docs/behaviour.md#embeddings`): a one-shot
/// `elroy tools call examine_memories` after a few `create_memory` calls catches up on those, and
/// never embeds a whole home before answering. Sessions embed the rest in the background.
pub const INLINE_PENDING: usize = 4;

/// md5 (lower-case hex) of `text`.
pub fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The rendering of a memory (`docs/formats.md#renderings`): `#{name}\n{raw body}`; `#{name}\n`
/// when the file is missing.
pub fn render_memory(name: &str, raw_body: Option<&str>) -> String {
    format!("#{name}\n{}", raw_body.unwrap_or_default())
}

pub(crate) fn row_to_memory(r: &rusqlite::Row<'_>) -> rusqlite::Result<Memory> {
    Ok(Memory {
        id: r.get(0)?,
        name: r.get(1)?,
        file_name: r.get(2)?,
        is_active: r.get(3)?,
        sources: sources_from_json(&r.get::<_, String>(4)?),
    })
}

pub(crate) const MEMORY_COLUMNS: &str = "id, name, file_name, is_active, source_metadata";

/// Replaces the search-index rows of a memory: removed, then re-added when `body` is `Some`.
pub(crate) fn set_fts(
    c: &Connection,
    user_id: i64,
    id: i64,
    name: &str,
    body: Option<&str>,
) -> rusqlite::Result<()> {
    recall::delete_fts_row(c, user_id, KIND, id)?;
    if let Some(body) = body {
        recall::insert_fts_row(c, user_id, KIND, id, name, body)?;
    }
    Ok(())
}

impl MemoryStore {
    /// Opens the store and brings its index up to date with [`MemoryStore::sync_if_changed`]
    /// (`docs/formats.md#memory-index-sync` as elroy overrides it): nothing is listed when
    /// `memories/` and `archive/` are as the last listing left them. The report holds what this
    /// sync did (empty when nothing changed).
    ///
    /// # Errors
    /// [`MemoryError`] when the directory cannot be read, the home lock times out or the database
    /// fails. Files with invalid front matter are skipped (see [`crate::SyncReport::warnings`]).
    pub fn open(
        db: Arc<Db>,
        opts: MemoryStoreOptions,
        now: Timestamp,
    ) -> Result<(MemoryStore, crate::SyncReport), MemoryError> {
        let store = MemoryStore::new(db, opts);
        let report = match store.sync_if_changed(now) {
            Ok(report) => report.unwrap_or_default(),
            // Reads never need to write: when the index cannot be written (a read-only home, a
            // full disk) the store opens with the index as it stands; files are still checked
            // when a search returns them, and the next open that can write catches up.
            Err(e) if crate::error::cannot_write(&e, store.db()) => crate::SyncReport::default(),
            Err(e) => return Err(e),
        };
        // The caller gets them in the report.
        store.take_deactivated();
        Ok((store, report))
    }

    /// The store without any sync (`elroy doctor` runs [`MemoryStore::check_all`] on it).
    pub fn new(db: Arc<Db>, opts: MemoryStoreOptions) -> MemoryStore {
        MemoryStore {
            db,
            opts,
            deactivated: Arc::default(),
            consolidation_due: Arc::default(),
            background_embedding: Arc::default(),
            pending: Arc::default(),
        }
    }

    /// The store's options.
    pub fn options(&self) -> &MemoryStoreOptions {
        &self.opts
    }

    /// The database.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// The user id.
    pub fn user_id(&self) -> i64 {
        self.opts.user_id
    }

    pub(crate) fn archive_dir(&self) -> PathBuf {
        self.opts.memory_dir.join("archive")
    }

    /// A path as shown in messages: relative to `$ELROY_HOME` with `/` separators, else as is.
    pub(crate) fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.opts.elroy_home) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.display().to_string(),
        }
    }

    pub(crate) fn lock(&self) -> Result<HomeLock, MemoryError> {
        Ok(HomeLock::acquire(&self.opts.elroy_home)?)
    }

    /// The memory with `id` (any status).
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn get(&self, id: i64) -> Result<Option<Memory>, MemoryError> {
        Ok(self.db.with_conn(|c| {
            c.query_row(
                &format!("SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ?1 AND id = ?2"),
                params![self.opts.user_id, id],
                row_to_memory,
            )
            .optional()
        })?)
    }

    /// "The active memory named `name`" (`docs/tool-rules.md#finding-a-memory`): exact,
    /// case-sensitive, lowest id; names compare in NFC.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn active_by_name(&self, name: &str) -> Result<Option<Memory>, MemoryError> {
        let name = elroy_markdown::normalize_name(name);
        Ok(self.db.with_conn(|c| {
            c.query_row(
                &format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories
                     WHERE user_id = ?1 AND name = ?2 AND is_active = 1 ORDER BY id LIMIT 1"
                ),
                params![self.opts.user_id, &*name],
                row_to_memory,
            )
            .optional()
        })?)
    }

    /// Every memory named `name` (compared in NFC), any status, by id.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn all_by_name(&self, name: &str) -> Result<Vec<Memory>, MemoryError> {
        let name = elroy_markdown::normalize_name(name);
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ?1 AND name = ?2 ORDER BY id"
            ))?;
            st.query_map(params![self.opts.user_id, &*name], row_to_memory)?
                .collect()
        })?)
    }

    /// The names of the active memories, sorted.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn active_names(&self) -> Result<Vec<String>, MemoryError> {
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT DISTINCT name FROM memories WHERE user_id = ?1 AND is_active = 1 ORDER BY name",
            )?;
            st.query_map([self.opts.user_id], |r| r.get(0))?.collect()
        })?)
    }

    /// The absolute path of a memory's file.
    pub fn path_of(&self, memory: &Memory) -> PathBuf {
        self.opts.memory_dir.join(&memory.file_name)
    }

    /// The raw body of a memory's file (`docs/formats.md#reading-a-file` step 4), read from disk
    /// now; `None` when the file is missing.
    ///
    /// # Errors
    /// [`MemoryError::File`] for unreadable files and invalid front matter.
    pub fn raw_body(&self, memory: &Memory) -> Result<Option<String>, MemoryError> {
        let path = self.path_of(memory);
        if !path.is_file() {
            return Ok(None);
        }
        let display = self.display(&path);
        let text = elroy_markdown::read_text(&path, &display)?;
        Ok(Some(Document::parse(&text, &display)?.raw_body))
    }

    /// The memory's text (its raw body stripped), `""` when the file is missing.
    ///
    /// # Errors
    /// As [`MemoryStore::raw_body`].
    pub fn text(&self, memory: &Memory) -> Result<String, MemoryError> {
        Ok(self
            .raw_body(memory)?
            .map(|b| b.trim().to_owned())
            .unwrap_or_default())
    }

    /// The rendering `#{name}\n{raw body}` (`docs/formats.md#renderings`).
    ///
    /// # Errors
    /// As [`MemoryStore::raw_body`].
    pub fn rendering(&self, memory: &Memory) -> Result<String, MemoryError> {
        Ok(render_memory(
            &memory.name,
            self.raw_body(memory)?.as_deref(),
        ))
    }

    /// Creates a memory (`docs/tools.md#create_memory` steps 2–3): the next id
    /// (`docs/formats.md#memory-ids`), the file `{sanitize_filename(name, "memory")}[-N].md` with
    /// `---\nid: {id}\n---\n\n{text}`, the active index row with `sources`, the search row, then
    /// (outside the lock) its embedding. The operation tracker is the caller's business.
    ///
    /// # Errors
    /// [`MemoryError`] for lock, write and database failures; nothing is indexed when the write
    /// fails.
    pub fn create(
        &self,
        name: &str,
        text: &str,
        sources: &[MemorySource],
        now: Timestamp,
    ) -> Result<Memory, MemoryError> {
        let memory = {
            let _lock = self.lock()?;
            self.create_locked(name, text, sources, now)?
        };
        self.embed_new(memory.id);
        Ok(memory)
    }

    fn create_locked(
        &self,
        name: &str,
        text: &str,
        sources: &[MemorySource],
        now: Timestamp,
    ) -> Result<Memory, MemoryError> {
        let mut undo = crate::update::Undo::default();
        let made = self
            .db
            .with_conn_mapped(|c| -> Result<Memory, MemoryError> {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let before = self.dir_sigs();
                let memory = self.insert_new(&tx, name, text, sources, now, None, &mut undo)?;
                self.carry_dir_sigs(&tx, before)?;
                tx.commit()?;
                Ok(memory)
            });
        // A file written for an index row that was never committed (a full disk at the commit)
        // goes again, so the failed call leaves nothing and a retry makes no duplicate.
        if made.is_err() {
            undo.run();
        }
        made
    }

    /// Writes the file of a new active memory and adds its index and search rows inside `tx`
    /// (not committed); the file goes on `undo`. `replaces` is a file name of `memories/` that
    /// counts as free (the file an update replaces; its old version is already in `archive/`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_new(
        &self,
        tx: &Connection,
        name: &str,
        text: &str,
        sources: &[MemorySource],
        now: Timestamp,
        replaces: Option<&str>,
        undo: &mut crate::update::Undo,
    ) -> Result<Memory, MemoryError> {
        // Names are stored and compared in NFC (`elroy_markdown::normalize_name`).
        let name = &*elroy_markdown::normalize_name(name);
        let dir = &self.opts.memory_dir;
        std::fs::create_dir_all(dir)
            .map_err(|e| elroy_markdown::MarkdownError::write(self.display(dir), &e))?;
        let user = self.opts.user_id;
        let id: i64 = tx.query_row(
            "SELECT coalesce(max(id), 0) + 1 FROM memories WHERE user_id = ?1",
            [user],
            |r| r.get(0),
        )?;
        let base = elroy_markdown::sanitize_filename(name, "memory");
        let path = self.free_path(tx, "", &base, replaces)?;
        let mut fm = Mapping::new();
        fm.insert("id", Value::Int(id));
        let content = Document::render_with_body(&fm, text, true);
        let shown = self.display(&path);
        elroy_markdown::write_atomic(&path, content.as_bytes(), &shown)?;
        undo.written(path.clone(), shown);
        let file_name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let raw_body = format!("\n{text}");
        let rendering = render_memory(name, Some(&raw_body));
        let sig = crate::index::StampColumns::of_file(&path);
        let ts = format_db_time(now);
        tx.execute(
            "INSERT INTO memories (user_id, id, name, file_name, is_active, source_metadata,
               text_md5, file_size, file_mtime_ns, created_at, updated_at, file_ino,
               file_ctime_ns)
             VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7, ?8, ?9, ?9, ?10, ?11)",
            params![
                user,
                id,
                name,
                file_name,
                sources_to_json(sources),
                md5_hex(&rendering),
                sig.size,
                sig.mtime_ns,
                ts,
                sig.ino,
                sig.ctime_ns
            ],
        )?;
        set_fts(tx, user, id, name, Some(&rendering))?;
        Ok(Memory {
            id,
            name: name.to_owned(),
            file_name,
            is_active: true,
            sources: sources.to_vec(),
        })
    }

    /// Moves a memory's file into `archive/` (unique name there), marks the row inactive and
    /// removes it from the search index (`docs/formats.md#the-memory-archive`). Returns the updated
    /// row.
    ///
    /// # Errors
    /// [`MemoryError`] for lock, rename and database failures.
    pub fn archive(&self, memory: &Memory, now: Timestamp) -> Result<Memory, MemoryError> {
        let _lock = self.lock()?;
        self.archive_locked(memory, now)
    }

    fn archive_locked(&self, memory: &Memory, now: Timestamp) -> Result<Memory, MemoryError> {
        let mut undo = crate::update::Undo::default();
        let archived = self
            .db
            .with_conn_mapped(|c| -> Result<Memory, MemoryError> {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let before = self.dir_sigs();
                let archived = self.archive_in(&tx, memory, now, false, &mut undo)?;
                self.carry_dir_sigs(&tx, before)?;
                tx.commit()?;
                Ok(archived)
            });
        // The file moves back when its row could not be marked archived.
        if archived.is_err() {
            undo.run();
        }
        archived
    }

    /// Moves a memory's file into `archive/` and marks its row inactive inside `tx` (not
    /// committed); the move goes on `undo`. With `keep`, the file also stays where it was (a
    /// second name, [`elroy_markdown::link_file`]) until the caller replaces or removes it.
    pub(crate) fn archive_in(
        &self,
        tx: &Connection,
        memory: &Memory,
        now: Timestamp,
        keep: bool,
        undo: &mut crate::update::Undo,
    ) -> Result<Memory, MemoryError> {
        let from = self.path_of(memory);
        let user = self.opts.user_id;
        let mut file_name = memory.file_name.clone();
        if from.is_file() && !memory.file_name.starts_with("archive/") {
            let archive = self.archive_dir();
            std::fs::create_dir_all(&archive)
                .map_err(|e| elroy_markdown::MarkdownError::write(self.display(&archive), &e))?;
            let stem = Path::new(&memory.file_name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "memory".to_owned());
            let to = self.free_path(tx, "archive/", &stem, None)?;
            if keep {
                elroy_markdown::link_file(&from, &to, &self.display(&to))?;
                undo.linked(to.clone(), from.clone(), self.display(&from));
            } else {
                elroy_markdown::rename_file(&from, &to, &self.display(&to))?;
                undo.renamed(to.clone(), from.clone(), self.display(&from));
            }
            file_name = format!(
                "archive/{}",
                to.file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
        }
        let path = self.opts.memory_dir.join(&file_name);
        let sig = crate::index::StampColumns::of_file(&path);
        tx.execute(
            "UPDATE memories SET is_active = 0, file_name = ?3, file_size = ?4,
               file_mtime_ns = ?5, updated_at = ?6, file_ino = ?7, file_ctime_ns = ?8
             WHERE user_id = ?1 AND id = ?2",
            params![
                user,
                memory.id,
                file_name,
                sig.size,
                sig.mtime_ns,
                format_db_time(now),
                sig.ino,
                sig.ctime_ns
            ],
        )?;
        set_fts(tx, user, memory.id, &memory.name, None)?;
        Ok(Memory {
            file_name,
            is_active: false,
            ..memory.clone()
        })
    }

    /// Computes missing or stale embeddings (md5-gated,
    /// `docs/formats.md#search-index-and-embeddings`) of active memories — only `only` when given,
    /// else at most 32 — when an embedder is configured. Failures are ignored here (recall falls
    /// back to keywords); returns how many were stored.
    pub fn embed_pending(&self, only: Option<i64>) -> usize {
        let ids = match only {
            Some(id) => vec![id],
            None => self.pending_embeddings(32).unwrap_or_default(),
        };
        self.embed_memories(&ids)
    }

    /// The ids of active memories whose vector of the configured model is missing or stale
    /// (its `text_md5` is not the index's), by id, at most `limit`. Empty without an embedder.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn pending_embeddings(&self, limit: usize) -> Result<Vec<i64>, MemoryError> {
        let Some(embedder) = &self.opts.embedder else {
            return Ok(Vec::new());
        };
        let model = embedder.model().to_owned();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT m.id FROM memories m
                 LEFT JOIN embeddings e ON e.user_id = m.user_id AND e.kind = 'memory'
                   AND e.item_id = m.id AND e.model = ?2
                 WHERE m.user_id = ?1 AND m.is_active = 1
                   AND (e.text_md5 IS NULL OR e.text_md5 <> m.text_md5)
                 ORDER BY m.id LIMIT ?3",
            )?;
            st.query_map(params![self.opts.user_id, model, limit], |r| r.get(0))?
                .collect()
        })?)
    }

    /// Embeds the active memories among `ids` whose vector of the configured model is missing
    /// or stale (the others are skipped), then stores the vectors in one write transaction (the
    /// embedder runs outside the database lock, so a turn's own writes wait only for that short
    /// transaction). Returns how many were stored; failures (a file that cannot be read, an
    /// embedding or a write that fails) store nothing for those memories and are not errors
    /// (recall falls back to keywords, and they stay pending).
    pub fn embed_memories(&self, ids: &[i64]) -> usize {
        let Some(embedder) = self.opts.embedder.clone() else {
            return 0;
        };
        let user = self.opts.user_id;
        let model = embedder.model().to_owned();
        let pending: Vec<Memory> = self
            .db
            .with_conn(|c| {
                let mut st = c.prepare_cached(&format!(
                    "SELECT m.{} FROM memories m
                     LEFT JOIN embeddings e ON e.user_id = m.user_id AND e.kind = 'memory'
                       AND e.item_id = m.id AND e.model = ?2
                     WHERE m.user_id = ?1 AND m.is_active = 1 AND m.id = ?3
                       AND (e.text_md5 IS NULL OR e.text_md5 <> m.text_md5)",
                    MEMORY_COLUMNS.replace(", ", ", m.")
                ))?;
                let mut out = Vec::new();
                for id in ids {
                    out.extend(
                        st.query_row(params![user, model, id], row_to_memory)
                            .optional()?,
                    );
                }
                Ok(out)
            })
            .unwrap_or_default();
        let mut computed = Vec::with_capacity(pending.len());
        for memory in pending {
            let Ok(rendering) = self.rendering(&memory) else {
                continue;
            };
            let Ok(mut vector) = embedder.embed(&rendering) else {
                continue;
            };
            recall::normalize(&mut vector);
            computed.push((memory.id, vector, md5_hex(&rendering)));
        }
        if computed.is_empty() {
            return 0;
        }
        let now = format_db_time(Timestamp::now());
        let stored = self.db.with_conn(|c| {
            let tx = c.transaction()?;
            for (id, vector, md5) in &computed {
                store_vector(&tx, user, *id, &model, vector, md5, &now)?;
            }
            tx.commit()?;
            Ok(computed.len())
        });
        stored.unwrap_or(0)
    }

    /// The vector of the memory `id` just written, when the embedder is loaded
    /// ([`Embedder::is_loaded`]); else it is left pending for the next search (at most
    /// [`INLINE_PENDING`] of them) or session (all of them, in the background), so a one-shot
    /// `create_memory` never loads a model.
    pub(crate) fn embed_new(&self, id: i64) {
        if self.opts.embedder.as_ref().is_some_and(|e| e.is_loaded()) {
            self.embed_memories(&[id]);
        } else {
            self.note_vectors_pending();
        }
    }

    /// Marks whether a background re-embedding runs in this process (shared by every clone of
    /// the store): while it does, searches embed only their question and use the vectors that
    /// exist (plus keywords).
    pub fn set_background_embedding(&self, running: bool) {
        self.background_embedding
            .store(running, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether a background re-embedding runs in this process.
    pub fn background_embedding(&self) -> bool {
        self.background_embedding
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// What a search embeds inline before ranking by vectors: nothing while a background
    /// re-embedding runs, else at most [`INLINE_PENDING`] pending memories.
    pub(crate) fn embed_inline(&self) -> usize {
        if self.background_embedding() || !self.inline_embedding() {
            return 0;
        }
        let ids = self.pending_embeddings(INLINE_PENDING).unwrap_or_default();
        self.embed_memories(&ids)
    }
}

/// Stores (or replaces) the vector of memory `id` for `model`, computed from a rendering whose
/// md5 is `md5`: the one INSERT of memory vectors.
fn store_vector(
    c: &Connection,
    user: i64,
    id: i64,
    model: &str,
    vector: &[f32],
    md5: &str,
    now: &str,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT INTO embeddings (user_id, kind, item_id, model, dims, vector, text_md5, updated_at)
         VALUES (?1, 'memory', ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(user_id, kind, item_id, model) DO UPDATE SET dims = excluded.dims,
           vector = excluded.vector, text_md5 = excluded.text_md5, updated_at = excluded.updated_at",
    )?
    .execute(params![
        user,
        id,
        model,
        vector.len() as i64,
        recall::vector_to_blob(vector),
        md5,
        now
    ])?;
    Ok(())
}

impl MemoryStore {
    /// What a `Pin(("Memory", id))` adds (`docs/tool-rules.md#effects`): the recall metadata and
    /// the rendering of the memory, or `None` when no memory has that id. Inactive memories resolve
    /// too (a superseded version can be pinned by `add_memory_to_current_context`).
    ///
    /// # Errors
    /// [`MemoryError`] for database and file failures.
    pub fn recall_entry(
        &self,
        id: i64,
    ) -> Result<Option<(elroy_core::RecallMetadata, String)>, MemoryError> {
        let Some(mut memory) = self.get(id)? else {
            return Ok(None);
        };
        // A pinned memory's file is checked like a search hit (an edit in place is indexed).
        // (A check that cannot write the index, on a full disk, leaves the row as it is.)
        if self
            .revalidate(std::slice::from_ref(&memory), Timestamp::now())
            .is_ok_and(|r| r.is_some())
        {
            let Some(again) = self.get(id)? else {
                return Ok(None);
            };
            memory = again;
        }
        let rendering = self.rendering(&memory)?;
        let file = self.path_of(&memory).display().to_string();
        let rendering = crate::bounded_text(&rendering, &file).into_owned();
        Ok(Some((
            elroy_core::RecallMetadata {
                memory_type: elroy_core::RecallKind::Memory,
                memory_id: memory.id,
                name: memory.name,
            },
            rendering,
        )))
    }
}
