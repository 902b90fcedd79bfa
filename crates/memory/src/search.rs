//! Memory search: the keyword leg always, the embedding leg when an embedder is configured, fused
//! by score: cosine similarity plus weighted keyword relevance (`docs/behaviour.md#recall`,
//! decision D9).

use rusqlite::params;

use crate::model::Memory;
use std::collections::HashMap;

use crate::fusion::{Context, fuse_in_context, keywords_in_context};
use crate::period::Period;
use crate::recall::{self, Scope, keyword_leg_in};
use crate::store::{MEMORY_COLUMNS, row_to_memory};
use crate::{MemoryError, MemoryStore};

/// The most items the embedding leg ranks.
pub const EMBEDDING_CANDIDATES: usize = 10;

/// A period a question names is looked at only when it holds at most this many memories (a
/// wider one, such as a year of a large home, says little about which memory is meant).
pub const PERIOD_MAX_MEMORIES: usize = 2000;

/// How many of the best memories written in the period a question names come first
/// (`docs/behaviour.md#the-time-a-question-names`); the rest of the answer is the ranking
/// over every memory. Tuned on LoCoMo's development conversations.
pub const PERIOD_FIRST: usize = 5;

/// How much of its best neighbour's score a memory gains ([`crate::fusion::Context`]).
pub const NEIGHBOUR_WEIGHT: f64 = 0.5;

/// Memories written at most this many seconds apart, one id apart, are neighbours.
pub const NEIGHBOUR_SECONDS: f64 = 1800.0;

/// Memories found by [`MemoryStore::search_readable`]: each with its raw body, and the files
/// that could not be read.
#[derive(Debug, Clone, Default)]
pub struct ReadableHits {
    /// `(memory, raw body)`, best first; the body is `None` when the file is missing.
    pub hits: Vec<(Memory, Option<String>)>,
    /// `(display path, reason)` of each matching memory whose file could not be read (invalid
    /// front matter, not UTF-8, unreadable): skipped, not fatal.
    pub skipped: Vec<(String, String)>,
}

impl ReadableHits {
    /// One line per skipped file: `Skipped unreadable file {file}: {reason}`, joined by `\n`;
    /// empty when nothing was skipped.
    pub fn skipped_lines(&self) -> String {
        self.skipped
            .iter()
            .map(|(file, reason)| format!("Skipped unreadable file {file}: {reason}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A memory search.
#[derive(Debug, Clone, Default)]
pub struct MemoryQuery {
    /// `T_cur`: tokens of the current message ([`recall::recall_tokens`]).
    pub current: Vec<String>,
    /// `T_prev`: tokens of the previous user message minus `current`.
    pub previous: Vec<String>,
    /// The text embedded for the embedding leg (ignored without an embedder; empty skips it).
    pub embedding_text: Option<String>,
    /// The period the question names ([`crate::period::named_period`]): memories written then
    /// rank first.
    pub period: Option<Period>,
}

impl MemoryQuery {
    /// A query from one text: its tokens are `T_cur` and the text itself is embedded
    /// (`examine_memories`, `docs/tools.md#examine_memories`).
    pub fn from_text(text: &str) -> Self {
        MemoryQuery {
            current: recall::recall_tokens(text),
            previous: Vec::new(),
            embedding_text: Some(text.to_owned()),
            period: crate::period::named_period(text),
        }
    }

    /// [`MemoryQuery::from_text`] for a question asked on `today` (the person's day): a time it
    /// names relative to that day (`last week`, `last May`, `three days ago`) is read too
    /// ([`crate::period::named_period_on`]).
    pub fn from_text_on(text: &str, today: jiff::civil::Date) -> Self {
        MemoryQuery {
            period: crate::period::named_period_on(text, today),
            ..MemoryQuery::from_text(text)
        }
    }
}

impl MemoryStore {
    /// The keyword ranking of active memories (item ids, best first).
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn keyword_ranking(&self, query: &MemoryQuery) -> Result<Vec<i64>, MemoryError> {
        Ok(self
            .keywords(query, None)?
            .into_iter()
            .map(|(id, _)| id)
            .collect())
    }

    /// The keyword leg with relevances over every active memory, or over `within` alone.
    fn keywords(
        &self,
        query: &MemoryQuery,
        within: Option<&[i64]>,
    ) -> Result<Vec<(i64, f64)>, MemoryError> {
        let scope = Scope {
            user_id: self.opts.user_id,
            kind: crate::store::KIND,
            within,
        };
        Ok(self
            .db
            .with_conn(|c| keyword_leg_in(c, scope, &query.current, &query.previous))?)
    }

    /// The active memories written in `period` (by `created_at`, UTC), by id; `None` when there
    /// are more than [`PERIOD_MAX_MEMORIES`].
    fn period_ids(&self, period: &Period) -> Result<Option<Vec<i64>>, MemoryError> {
        let user = self.opts.user_id;
        let ids: Vec<i64> = self.db.with_conn(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT id FROM memories WHERE user_id = ?1 AND is_active = 1 AND {}
                 ORDER BY id LIMIT ?2",
                period.sql_condition("created_at")
            ))?;
            st.query_map(params![user, PERIOD_MAX_MEMORIES as i64 + 1], |r| r.get(0))?
                .collect()
        })?;
        Ok((ids.len() <= PERIOD_MAX_MEMORIES).then_some(ids))
    }

    /// The embedding ranking of active memories: cosine similarity with the embedded
    /// `embedding_text` at least the threshold, best first, ties by id, at most
    /// [`EMBEDDING_CANDIDATES`]. A few missing or stale vectors are computed first
    /// ([`crate::INLINE_PENDING`], none while a background re-embedding runs).
    /// `None` when no embedder is configured, the text is empty, or embedding the query failed.
    ///
    /// # Errors
    /// [`MemoryError::Db`].
    pub fn embedding_ranking(&self, query: &MemoryQuery) -> Result<Option<Vec<i64>>, MemoryError> {
        match self.query_vector(query) {
            Some(q) => self.vector_ranking(&q).map(Some),
            None => Ok(None),
        }
    }

    /// The normalised embedding of `query.embedding_text`: one request to the embedder. `None`
    /// without an embedder, for empty text, or when embedding failed (recall then uses keywords).
    fn query_vector(&self, query: &MemoryQuery) -> Option<Vec<f32>> {
        let (Some(embedder), Some(text)) = (&self.opts.embedder, &query.embedding_text) else {
            return None;
        };
        if text.trim().is_empty() {
            return None;
        }
        let mut q = embedder.embed(text).ok()?;
        recall::normalize(&mut q);
        Some(q)
    }

    /// The embedding ranking for the normalised query vector `q` (see
    /// [`MemoryStore::embedding_ranking`]); a few missing or stale memory vectors are computed
    /// first, the rest are left to the background (memories without a vector of the model rank
    /// by keywords only).
    fn vector_ranking(&self, q: &[f32]) -> Result<Vec<i64>, MemoryError> {
        Ok(self
            .vector_scores(q)?
            .into_iter()
            .map(|(id, _)| id)
            .collect())
    }

    /// [`MemoryStore::vector_ranking`] with each item's cosine similarity: `(id, similarity)`,
    /// best first.
    fn vector_scores(&self, q: &[f32]) -> Result<Vec<(i64, f32)>, MemoryError> {
        let Some(embedder) = &self.opts.embedder else {
            return Ok(Vec::new());
        };
        let user = self.opts.user_id;
        let model = embedder.model().to_owned();
        // The codes know when every active memory has its vector: then the search for missing
        // ones (a look at every memory row) is skipped.
        if self
            .db
            .with_conn(|c| Ok(crate::vectors::may_need_vectors(c, user, &model)))
            .unwrap_or(true)
        {
            self.note_vectors_pending();
            self.embed_inline();
        }
        let threshold = self.opts.cosine_threshold;
        // Sign-bit codes first, then the exact vectors of the best few hundred
        // (`crate::vectors`): the order exact cosine gives, without reading every vector.
        let scored = self.db.with_conn(|c| {
            crate::vectors::ranking(c, user, &model, q, threshold, EMBEDDING_CANDIDATES)
        })?;
        Ok(scored)
    }

    /// The cosine similarity of the normalised query vector `q` with the current vectors of the
    /// active memories `ids` (those without one are left out): what score fusion needs for the
    /// keyword hits outside the embedding leg's best [`EMBEDDING_CANDIDATES`].
    fn similarities(&self, q: &[f32], ids: &[i64]) -> Result<HashMap<i64, f32>, MemoryError> {
        let Some(embedder) = &self.opts.embedder else {
            return Ok(HashMap::new());
        };
        let user = self.opts.user_id;
        let model = embedder.model().to_owned();
        Ok(self
            .db
            .with_conn(|c| crate::vectors::exact_similarities(c, user, &model, q, ids))?
            .into_iter()
            .collect())
    }

    /// [`MemoryStore::search`] with each memory's file read: memories whose file cannot be read
    /// are skipped and named in [`ReadableHits::skipped`] (one broken file never hides the
    /// others), and up to `limit` readable memories are returned.
    ///
    /// # Errors
    /// [`MemoryError::Db`] (file errors are not errors here).
    pub fn search_readable(
        &self,
        query: &MemoryQuery,
        limit: usize,
    ) -> Result<ReadableHits, MemoryError> {
        let mut out = ReadableHits::default();
        // The question is embedded once, however often the loop below asks again.
        let vector = self.query_vector(query);
        // Ask for more than `limit` so that skipped files do not shorten the answer.
        let mut want = limit;
        loop {
            let found = self.search_with(query, vector.as_deref(), want)?;
            let exhausted = found.len() < want;
            out.hits.clear();
            out.skipped.clear();
            for memory in found {
                if out.hits.len() == limit {
                    break;
                }
                match self.raw_body(&memory) {
                    Ok(body) => out.hits.push((memory, body)),
                    Err(MemoryError::File(e)) => out.skipped.push((
                        e.file()
                            .map_or_else(|| self.display(&self.path_of(&memory)), str::to_owned),
                        e.reason(),
                    )),
                    Err(e) => return Err(e),
                }
            }
            if out.hits.len() == limit || exhausted {
                // Files of `memories/` that could not be read are not in the index at all
                // (written by hand, never readable): they are named too.
                for (file, reason) in self.unreadable_files() {
                    if !out.skipped.iter().any(|(f, _)| *f == file) {
                        out.skipped.push((file, reason));
                    }
                }
                return Ok(out);
            }
            want = limit + out.skipped.len();
        }
    }

    /// [`MemoryStore::unreadable_files_checked`]; when a changed file cannot be indexed (a
    /// full disk), the files as last recorded; empty when the database cannot be read.
    pub fn unreadable_files(&self) -> Vec<(String, String)> {
        self.unreadable_files_checked(jiff::Timestamp::now())
            .or_else(|_| self.unreadable_recorded())
            .unwrap_or_default()
    }

    /// Active memories for `query`, best first: the keyword ranking fused with the embedding
    /// ranking (when available) by score ([`recall::fuse_scores`]), at most `limit`. The files of the
    /// memories found are checked by `stat` first ([`MemoryStore::revalidate`]): when one changed
    /// since it was indexed, it is indexed again, and when that changed what the index holds (its
    /// text, or whether it is active) the ranking runs again, so the answer is about the files as
    /// they are. A file read again only because it was written within the racy window, its text
    /// unchanged, costs no second ranking; the question is embedded once in any case.
    ///
    /// # Errors
    /// [`MemoryError::Db`] when the index cannot be read.
    pub fn search(&self, query: &MemoryQuery, limit: usize) -> Result<Vec<Memory>, MemoryError> {
        let vector = self.query_vector(query);
        self.search_with(query, vector.as_deref(), limit)
    }

    /// [`MemoryStore::search`] with the query already embedded (`vector`, `None`: keywords only).
    fn search_with(
        &self,
        query: &MemoryQuery,
        vector: Option<&[f32]>,
        limit: usize,
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut found = self.search_index(query, vector, limit)?;
        // A few rounds: each re-indexes the files that changed among the hits.
        // A check that cannot write the index (a full disk) leaves the answer as the index has
        // it: the bodies shown are read from the files anyway.
        for _ in 0..3 {
            match self.revalidate(&found, jiff::Timestamp::now()) {
                Ok(Some(report)) if report.changed > 0 => {
                    found = self.search_index(query, vector, limit)?;
                }
                Ok(_) | Err(_) => break,
            }
        }
        Ok(found)
    }

    /// The ranking of the active memories (or of `within` alone): the keyword leg, fused with
    /// the embedding leg when `vector` is given.
    fn ranking(
        &self,
        query: &MemoryQuery,
        vector: Option<&[f32]>,
        within: Option<&[i64]>,
    ) -> Result<Vec<i64>, MemoryError> {
        let keywords = self.keywords(query, within)?;
        let weight = NEIGHBOUR_WEIGHT;
        let Some(q) = vector else {
            if weight > 0.0 {
                let ids: Vec<i64> = keywords.iter().map(|(id, _)| *id).collect();
                let context = Context {
                    neighbours: self.neighbours(&ids)?,
                    weight,
                };
                return Ok(keywords_in_context(&keywords, &context));
            }
            return Ok(keywords.into_iter().map(|(id, _)| id).collect());
        };
        // Score fusion (`docs/behaviour.md#fusion-and-selection`): the keyword hits'
        // similarities are read by id when the embedding leg did not rank them.
        let embedding = match within {
            None => self.vector_scores(q)?,
            Some(ids) => {
                let mut scored: Vec<(i64, f32)> = self
                    .similarities(q, ids)?
                    .into_iter()
                    .filter(|(_, s)| *s >= self.opts.cosine_threshold)
                    .collect();
                scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                scored.truncate(EMBEDDING_CANDIDATES);
                scored
            }
        };
        let outside: Vec<i64> = keywords
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !embedding.iter().any(|(e, _)| e == id))
            .collect();
        let mut similarity = self.similarities(q, &outside)?;
        let mut context = Context {
            neighbours: HashMap::new(),
            weight,
        };
        if weight > 0.0 {
            let mut ids: Vec<i64> = keywords.iter().map(|(id, _)| *id).collect();
            for (id, _) in &embedding {
                if !ids.contains(id) {
                    ids.push(*id);
                }
            }
            context.neighbours = self.neighbours(&ids)?;
            let unknown: Vec<i64> = context
                .neighbours
                .values()
                .flatten()
                .copied()
                .filter(|n| !ids.contains(n) && !similarity.contains_key(n))
                .collect();
            similarity.extend(self.similarities(q, &unknown)?);
        }
        Ok(fuse_in_context(
            &keywords,
            &embedding,
            &similarity,
            &context,
        ))
    }

    /// For each of `ids`, the active memories written just before and after it (ids one apart)
    /// within [`NEIGHBOUR_SECONDS`] of it: the same sitting.
    fn neighbours(&self, ids: &[i64]) -> Result<HashMap<i64, Vec<i64>>, MemoryError> {
        let user = self.opts.user_id;
        let list = format!(
            "[{}]",
            ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        );
        let seconds = NEIGHBOUR_SECONDS;
        let pairs: Vec<(i64, i64)> = self.db.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT m.id, n.id FROM memories m JOIN memories n
                   ON n.user_id = m.user_id AND n.id IN (m.id - 1, m.id + 1) AND n.is_active = 1
                 WHERE m.user_id = ?1 AND m.id IN (SELECT value FROM json_each(?2))
                   AND abs(julianday(n.created_at) - julianday(m.created_at)) * 86400.0 <= ?3",
            )?;
            st.query_map(params![user, list, seconds], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })?;
        let mut out: HashMap<i64, Vec<i64>> = HashMap::new();
        for (m, n) in pairs {
            out.entry(m).or_default().push(n);
        }
        Ok(out)
    }

    /// The ranking of [`MemoryStore::search`] as the index has it, without a look at the files.
    fn search_index(
        &self,
        query: &MemoryQuery,
        vector: Option<&[f32]>,
        limit: usize,
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut ids = self.ranking(query, vector, None)?;
        if let Some(period) = &query.period
            && let Some(within) = self.period_ids(period)?
            && !within.is_empty()
        {
            let first = self.ranking(query, vector, Some(&within))?;
            ids = period_first(first, ids, PERIOD_FIRST);
        }
        let user = self.opts.user_id;
        let mut out = Vec::new();
        for id in ids {
            if out.len() == limit {
                break;
            }
            let m = self.db.with_conn(|c| {
                c.query_row(
                    &format!(
                        "SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ?1 AND id = ?2 AND is_active = 1"
                    ),
                    params![user, id],
                    row_to_memory,
                )
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })
            })?;
            out.extend(m);
        }
        Ok(out)
    }
}

/// The best `first` of `in_period` (the ranking over the period a question names), then the
/// rest of `all` (the ranking over every memory) without them.
fn period_first(in_period: Vec<i64>, all: Vec<i64>, first: usize) -> Vec<i64> {
    let mut out: Vec<i64> = in_period.into_iter().take(first).collect();
    for id in all {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}
