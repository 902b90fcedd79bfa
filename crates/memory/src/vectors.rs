//! Recall's embedding leg at scale: compact sign-bit codes of the memory vectors,
//! scanned first, then the exact `f32` vectors of the best few hundred rescored.
//!
//! Scoring every stored vector per question reads all of them (100,000 memories × 384 `f32`s is
//! 150 MB). Instead each vector `x` of a model is kept, beside its exact row in `embeddings`, as
//! one bit per dimension — `x_i` above the basis mean `m_i` (0: the sign) — in chunks of 1,024
//! memory ids (`vector_codes`, migration 8 of `elroy-db`): 48 bytes per 384-dimension vector, 4.8 MB
//! for 100,000. A question `q` scores a code by the asymmetric estimate `Σ q_i · s_i · ±1` (`s_i`
//! a per-dimension weight, 1), a table lookup per code byte ([`QueryTable`]). The [`RESCORE_CANDIDATES`] best by code are then scored
//! exactly with their stored vectors, under the same conditions as the exact scan (an active
//! memory, a vector of its current text), and the threshold and order are applied to the exact
//! similarities. So every similarity reported is exact; what the codes can do is miss a memory
//! whose code ranks below the candidates (measured in `docs/performance.md`).
//!
//! Consistency: the codes derive from the `embeddings` and `memories` rows only. SQLite triggers
//! (migration 8) bump a per-chunk counter (`vector_chunks.seq`) on every change to those rows,
//! whoever writes them; a code row records the counter and the basis generation it was built at.
//! A stale code row is rebuilt before the scan (one chunk: at most 1,024 exact vectors read);
//! when that cannot be written (a read-only or busy database) or a code row does not parse, that
//! chunk's exact vectors are scored instead. A model without a basis gets one, and all its codes,
//! on its first question.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::recall;

/// Memory ids per chunk are `id >> CHUNK_SHIFT` (1,024 ids a chunk), as in migration 8's triggers.
pub const CHUNK_SHIFT: u32 = 10;

/// How many memories, best by code, are rescored with their exact vectors (at least; 16 times
/// the requested count when that is more).
pub const RESCORE_CANDIDATES: usize = 512;

/// How many vectors (lowest ids first) a basis is fitted on.
const FIT_SAMPLE: usize = 4096;

/// The rows the exact scan scores: active memories with a vector of their current text.
const EXACT_FROM: &str = "FROM embeddings e
     JOIN memories m ON m.user_id = e.user_id AND m.id = e.item_id
     WHERE e.user_id = ?1 AND e.kind = 'memory' AND e.model = ?2
       AND m.is_active = 1 AND e.text_md5 = m.text_md5";

/// What sign codes are taken against: per dimension the mean and the mean absolute deviation of
/// a sample of one model's vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Basis {
    /// Changes whenever the basis is fitted again; code rows of another generation are stale.
    pub generation: i64,
    /// The vector length the codes are for.
    pub dims: usize,
    /// How many vectors it was fitted on.
    pub fitted: usize,
    /// Per-dimension mean.
    pub mean: Vec<f32>,
    /// Per-dimension mean absolute deviation from `mean`.
    pub scale: Vec<f32>,
}

impl Basis {
    /// The basis for `vectors` (those of another length than the first are ignored): plain
    /// sign bits, mean 0 and weight 1 in every dimension; `None` when there is no vector.
    /// Centring on the sample mean and weighting by the mean absolute deviation were measured
    /// too, on all-MiniLM-L6-v2 vectors of LoCoMo (`cargo xtask vector-recall`), and found
    /// fewer of the exact top 10 at every rescoring depth (97.8 % against 99.1 % at 0.51 % of
    /// the corpus rescored), so the fields stay for a later basis but hold the neutral values.
    pub fn fit<'a>(vectors: impl IntoIterator<Item = &'a [f32]>, generation: i64) -> Option<Basis> {
        let mut vectors = vectors.into_iter().peekable();
        let dims = vectors.peek()?.len();
        let fitted = vectors.filter(|v| v.len() == dims).count();
        Some(Basis {
            generation,
            dims,
            fitted,
            mean: vec![0.0; dims],
            scale: vec![1.0; dims],
        })
    }

    /// A basis centred on the mean of `vectors` and weighting each dimension by its mean
    /// absolute deviation (measured against [`Basis::fit`] by `cargo xtask vector-recall`).
    pub fn fit_centred<'a>(
        vectors: impl IntoIterator<Item = &'a [f32]>,
        generation: i64,
    ) -> Option<Basis> {
        let vectors: Vec<&[f32]> = vectors.into_iter().collect();
        let dims = vectors.first()?.len();
        let same: Vec<&[f32]> = vectors.into_iter().filter(|v| v.len() == dims).collect();
        let n = same.len() as f32;
        let mut mean = vec![0f32; dims];
        for v in &same {
            mean.iter_mut().zip(*v).for_each(|(m, x)| *m += x);
        }
        mean.iter_mut().for_each(|m| *m /= n);
        let mut scale = vec![0f32; dims];
        for v in &same {
            scale
                .iter_mut()
                .zip(v.iter().zip(&mean))
                .for_each(|(s, (x, m))| *s += (x - m).abs());
        }
        scale.iter_mut().for_each(|s| *s /= n);
        Some(Basis {
            generation,
            dims,
            fitted: same.len(),
            mean,
            scale,
        })
    }

    /// Bytes of one code: one bit per dimension.
    pub fn code_bytes(&self) -> usize {
        self.dims.div_ceil(8)
    }

    /// Appends the code of `v` (bit `i % 8` of byte `i / 8` set when `v[i]` is above the mean).
    pub fn encode_into(&self, v: &[f32], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.code_bytes(), 0);
        for (i, (x, m)) in v.iter().zip(&self.mean).enumerate() {
            if x > m {
                out[start + i / 8] |= 1 << (i % 8);
            }
        }
    }

    /// The code of `v`.
    pub fn encode(&self, v: &[f32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.code_bytes());
        self.encode_into(v, &mut out);
        out
    }

    /// The scoring table of the normalised question `q`.
    pub fn query(&self, q: &[f32]) -> QueryTable {
        let bytes = self.code_bytes();
        let mut lut = vec![0f32; bytes * 256];
        for j in 0..bytes {
            let w: Vec<f32> = (0..8)
                .map(|t| {
                    let i = j * 8 + t;
                    match (q.get(i), self.scale.get(i)) {
                        (Some(q), Some(s)) => q * s,
                        _ => 0.0,
                    }
                })
                .collect();
            for b in 0..256usize {
                lut[j * 256 + b] = (0..8)
                    .map(|t| if b & (1 << t) != 0 { w[t] } else { -w[t] })
                    .sum();
            }
        }
        QueryTable { lut }
    }
}

/// A question's per-byte table: `score(code)` is one lookup and one add per code byte.
#[derive(Debug, Clone)]
pub struct QueryTable {
    lut: Vec<f32>,
}

impl QueryTable {
    /// The estimate of the question's similarity to the vector coded `code`, up to a constant
    /// (comparable between codes of one basis only).
    pub fn score(&self, code: &[u8]) -> f32 {
        code.iter()
            .enumerate()
            .map(|(j, b)| self.lut.get(j * 256 + *b as usize).copied().unwrap_or(0.0))
            .sum()
    }
}

/// The exact ranking: every stored vector of `model` of an active memory of `user` (of its
/// current text) scored against the normalised `q`; similarities at least `threshold`, best
/// first, ties by id, at most `k`.
///
/// # Errors
/// `rusqlite::Error`.
pub fn exact_ranking(
    c: &Connection,
    user: i64,
    model: &str,
    q: &[f32],
    threshold: f32,
    k: usize,
) -> rusqlite::Result<Vec<(i64, f32)>> {
    let mut out = Vec::new();
    exact_in(c, user, model, q, None, &mut out)?;
    Ok(finish(out, threshold, k))
}

/// Exact similarities of the vectors with ids in `range` (all when `None`), appended to `out`.
fn exact_in(
    c: &Connection,
    user: i64,
    model: &str,
    q: &[f32],
    range: Option<(i64, i64)>,
    out: &mut Vec<(i64, f32)>,
) -> rusqlite::Result<()> {
    let (lo, hi) = range.unwrap_or((i64::MIN, i64::MAX));
    let mut st = c.prepare_cached(&format!(
        "SELECT e.item_id, e.vector {EXACT_FROM} AND e.item_id BETWEEN ?3 AND ?4"
    ))?;
    let mut rows = st.query(params![user, model, lo, hi])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let blob = r.get_ref(1)?.as_blob()?;
        out.push((id, dot_blob(q, blob)));
    }
    Ok(())
}

/// `recall::dot(q, blob_to_vector(blob))` without the copy.
fn dot_blob(q: &[f32], blob: &[u8]) -> f32 {
    if blob.len() / 4 != q.len() {
        return 0.0;
    }
    blob.chunks_exact(4)
        .zip(q)
        .map(|(c, x)| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * x)
        .sum()
}

fn finish(mut scored: Vec<(i64, f32)>, threshold: f32, k: usize) -> Vec<(i64, f32)> {
    scored.retain(|(_, s)| *s >= threshold);
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.dedup_by_key(|(id, _)| *id);
    scored.truncate(k);
    scored
}

fn chunk_range(chunk: i64) -> (i64, i64) {
    let lo = chunk << CHUNK_SHIFT;
    (lo, lo + (1 << CHUNK_SHIFT) - 1)
}

/// The embedding ranking through the codes: what [`exact_ranking`] gives, except that a memory
/// whose code ranks below the [`RESCORE_CANDIDATES`] best is not seen. Codes are brought up to
/// date first (best effort); chunks whose codes are stale or broken are scored exactly.
///
/// # Errors
/// `rusqlite::Error` when the database cannot be read.
pub fn ranking(
    c: &mut Connection,
    user: i64,
    model: &str,
    q: &[f32],
    threshold: f32,
    k: usize,
) -> rusqlite::Result<Vec<(i64, f32)>> {
    ranking_with(
        c,
        user,
        model,
        q,
        threshold,
        k,
        RESCORE_CANDIDATES.max(k.saturating_mul(16)),
    )
}

/// [`ranking`] rescoring `rescore` candidates.
///
/// # Errors
/// `rusqlite::Error` when the database cannot be read.
pub fn ranking_with(
    c: &mut Connection,
    user: i64,
    model: &str,
    q: &[f32],
    threshold: f32,
    k: usize,
    rescore: usize,
) -> rusqlite::Result<Vec<(i64, f32)>> {
    // A failed refresh (read-only or busy database) leaves stale chunks to the exact scan below.
    let _ = refresh(c, user, model);
    let scan = {
        // One snapshot for the whole scan; where a transaction cannot begin (a read-only
        // connection refuses even `BEGIN`), each statement reads its own, and the per-row
        // staleness checks still hold.
        let began = c.transaction();
        match began {
            Ok(tx) => {
                let scan = scan(&tx, user, model, q, rescore)?;
                tx.finish()?;
                scan
            }
            Err(_) => {
                drop(began);
                scan(c, user, model, q, rescore)?
            }
        }
    };
    let Some(scan) = scan else {
        return exact_ranking(c, user, model, q, threshold, k);
    };
    if !scan.broken.is_empty() {
        // Marked stale (seq -1 matches no counter): the next question rebuilds them.
        for chunk in &scan.broken {
            let _ = c.execute(
                "UPDATE vector_codes SET seq = -1 WHERE user_id = ?1 AND model = ?2 AND chunk = ?3",
                params![user, model, chunk],
            );
        }
    }
    if scan.refit {
        let _ = build_all(c, user, model);
    }
    Ok(finish(scan.scored, threshold, k))
}

struct Scan {
    /// Exact similarities: of the rescored candidates and of every vector of a stale chunk.
    scored: Vec<(i64, f32)>,
    /// Chunks whose code rows did not parse.
    broken: Vec<i64>,
    /// The basis was fitted on far fewer vectors than there are now.
    refit: bool,
}

/// One consistent read of the codes (inside a read transaction); `None` when the model has no
/// usable basis.
fn scan(
    c: &Connection,
    user: i64,
    model: &str,
    q: &[f32],
    rescore: usize,
) -> rusqlite::Result<Option<Scan>> {
    let Some(basis) = load_basis(c, user, model)? else {
        return Ok(None);
    };
    if basis.dims != q.len() {
        return Ok(None);
    }
    let table = basis.query(q);
    let bytes = basis.code_bytes();
    let record = bytes + 2;
    let mut by_code: Vec<(f32, i64)> = Vec::new();
    let mut exact = Vec::new();
    let mut broken = Vec::new();
    let mut st = c.prepare_cached(
        "SELECT vc.chunk, vc.seq, vc.generation, vc.codes, coalesce(ch.seq, 0)
         FROM vector_codes vc
         LEFT JOIN vector_chunks ch ON ch.user_id = vc.user_id AND ch.chunk = vc.chunk
         WHERE vc.user_id = ?1 AND vc.model = ?2",
    )?;
    let mut rows = st.query(params![user, model])?;
    let mut stale = Vec::new();
    while let Some(r) = rows.next()? {
        let chunk: i64 = r.get(0)?;
        let seq: i64 = r.get(1)?;
        let generation: i64 = r.get(2)?;
        let current: i64 = r.get(4)?;
        if seq != current || generation != basis.generation {
            stale.push(chunk);
            continue;
        }
        let codes = r.get_ref(3)?.as_blob().unwrap_or_default();
        if codes.len() % record != 0 {
            broken.push(chunk);
            stale.push(chunk);
            continue;
        }
        let base = chunk << CHUNK_SHIFT;
        let before = by_code.len();
        for rec in codes.chunks_exact(record) {
            let slot = i64::from(u16::from_le_bytes([rec[0], rec[1]]));
            if slot >= 1 << CHUNK_SHIFT {
                by_code.truncate(before);
                broken.push(chunk);
                stale.push(chunk);
                break;
            }
            by_code.push((table.score(&rec[2..]), base + slot));
        }
    }
    drop(rows);
    // Chunks changed since the codes were built that have no code row at all.
    let mut st = c.prepare_cached(
        "SELECT ch.chunk FROM vector_chunks ch
         WHERE ch.user_id = ?1 AND NOT EXISTS (SELECT 1 FROM vector_codes vc
           WHERE vc.user_id = ch.user_id AND vc.model = ?2 AND vc.chunk = ch.chunk)",
    )?;
    for chunk in st.query_map(params![user, model], |r| r.get::<_, i64>(0))? {
        stale.push(chunk?);
    }
    for chunk in &stale {
        exact_in(c, user, model, q, Some(chunk_range(*chunk)), &mut exact)?;
    }
    let coded = by_code.len();
    if by_code.len() > rescore {
        by_code.select_nth_unstable_by(rescore - 1, |a, b| b.0.total_cmp(&a.0));
        by_code.truncate(rescore);
    }
    let ids: Vec<i64> = by_code.into_iter().map(|(_, id)| id).collect();
    exact.extend(exact_similarities(c, user, model, q, &ids)?);
    let refit = basis.fitted < FIT_SAMPLE && coded > 2 * basis.fitted + 64;
    Ok(Some(Scan {
        scored: exact,
        broken,
        refit,
    }))
}

/// The exact similarity of the normalised `q` with the current vector of `model` of each active
/// memory in `ids` (one primary-key read each), in the order of `ids`; memories without such a
/// vector are left out. The rescoring pass of [`ranking`] and score fusion's look-up of keyword
/// hits outside the embedding leg's best both read vectors this way.
///
/// # Errors
/// `rusqlite::Error`.
pub fn exact_similarities(
    c: &Connection,
    user: i64,
    model: &str,
    q: &[f32],
    ids: &[i64],
) -> rusqlite::Result<Vec<(i64, f32)>> {
    let mut st = c.prepare_cached(&format!("SELECT e.vector {EXACT_FROM} AND e.item_id = ?3"))?;
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        let sim = st
            .query_row(params![user, model, id], |r| {
                Ok(dot_blob(q, r.get_ref(0)?.as_blob()?))
            })
            .optional()?;
        if let Some(sim) = sim {
            out.push((id, sim));
        }
    }
    Ok(out)
}

fn f32s_to_blob(v: &[f32]) -> Vec<u8> {
    recall::vector_to_blob(v)
}

/// The basis of `user`'s `model`; `None` when there is none or it does not parse.
fn load_basis(c: &Connection, user: i64, model: &str) -> rusqlite::Result<Option<Basis>> {
    let row = c
        .prepare_cached(
            "SELECT generation, dims, fitted, mean, scale FROM vector_bases
             WHERE user_id = ?1 AND model = ?2",
        )?
        .query_row(params![user, model], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Vec<u8>>(3)?,
                r.get::<_, Vec<u8>>(4)?,
            ))
        })
        .optional()?;
    Ok(row.and_then(|(generation, dims, fitted, mean, scale)| {
        let dims = usize::try_from(dims).ok().filter(|d| *d > 0)?;
        let (mean, scale) = (
            recall::blob_to_vector(&mean),
            recall::blob_to_vector(&scale),
        );
        (mean.len() == dims && scale.len() == dims).then(|| Basis {
            generation,
            dims,
            fitted: usize::try_from(fitted).unwrap_or(0),
            mean,
            scale,
        })
    }))
}

/// Brings `user`'s codes of `model` up to date: all of them when the model has no (usable)
/// basis, else the stale chunks.
///
/// # Errors
/// `rusqlite::Error` (nothing is changed then).
pub fn refresh(c: &mut Connection, user: i64, model: &str) -> rusqlite::Result<()> {
    let Some(basis) = load_basis(c, user, model)? else {
        return build_all(c, user, model);
    };
    if stale_chunks(c, user, model, basis.generation)?.is_empty() {
        return Ok(());
    }
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Again inside the write transaction: another process may have refreshed meanwhile.
    let Some(basis) = load_basis(&tx, user, model)? else {
        return Ok(());
    };
    for chunk in stale_chunks(&tx, user, model, basis.generation)? {
        let mut codes = Vec::new();
        let (lo, hi) = chunk_range(chunk);
        {
            let mut st = tx.prepare_cached(&format!(
                "SELECT e.item_id, e.vector {EXACT_FROM} AND e.item_id BETWEEN ?3 AND ?4"
            ))?;
            let mut rows = st.query(params![user, model, lo, hi])?;
            while let Some(r) = rows.next()? {
                let id: i64 = r.get(0)?;
                push_code(&basis, id, r.get_ref(1)?.as_blob()?, &mut codes);
            }
        }
        let active: i64 = tx
            .prepare_cached(
                "SELECT count(*) FROM memories WHERE user_id = ?1 AND is_active = 1
                 AND id BETWEEN ?2 AND ?3",
            )?
            .query_row(params![user, lo, hi], |r| r.get(0))?;
        let coded = (codes.len() / (basis.code_bytes() + 2)) as i64;
        write_codes(
            &tx,
            user,
            model,
            chunk,
            basis.generation,
            &codes,
            (active - coded).max(0),
        )?;
    }
    tx.commit()
}

/// Whether some active memory of `user` may lack a vector of `model` for its current text (so
/// [`crate::MemoryStore::embed_pending`] has work): `false` only when the codes, brought up to
/// date first, are current everywhere and were built with every active memory coded. Answers
/// `true` when that cannot be known (no basis yet, an error).
pub fn may_need_vectors(c: &mut Connection, user: i64, model: &str) -> bool {
    let mut known = || -> rusqlite::Result<bool> {
        refresh(c, user, model)?;
        let Some(basis) = load_basis(c, user, model)? else {
            return Ok(true);
        };
        if !stale_chunks(c, user, model, basis.generation)?.is_empty() {
            return Ok(true);
        }
        let pending: i64 = c
            .prepare_cached(
                "SELECT coalesce(sum(pending), 0) FROM vector_codes WHERE user_id = ?1 AND model = ?2",
            )?
            .query_row(params![user, model], |r| r.get(0))?;
        Ok(pending > 0)
    };
    known().unwrap_or(true)
}

/// Appends `(slot, code)` of the vector `blob` of memory `id` when it has the basis' length.
fn push_code(basis: &Basis, id: i64, blob: &[u8], codes: &mut Vec<u8>) {
    if blob.len() != basis.dims * 4 {
        return;
    }
    let slot = (id & ((1 << CHUNK_SHIFT) - 1)) as u16;
    codes.extend_from_slice(&slot.to_le_bytes());
    basis.encode_into(&recall::blob_to_vector(blob), codes);
}

/// Chunks of `user` whose codes of `model` are missing or stale.
fn stale_chunks(
    c: &Connection,
    user: i64,
    model: &str,
    generation: i64,
) -> rusqlite::Result<Vec<i64>> {
    let mut st = c.prepare_cached(
        "SELECT ch.chunk FROM vector_chunks ch
         LEFT JOIN vector_codes vc ON vc.user_id = ch.user_id AND vc.model = ?2
           AND vc.chunk = ch.chunk
         WHERE ch.user_id = ?1 AND (vc.seq IS NULL OR vc.seq <> ch.seq OR vc.generation <> ?3)
         UNION
         SELECT vc.chunk FROM vector_codes vc
         LEFT JOIN vector_chunks ch ON ch.user_id = vc.user_id AND ch.chunk = vc.chunk
         WHERE vc.user_id = ?1 AND vc.model = ?2
           AND (vc.generation <> ?3 OR vc.seq <> coalesce(ch.seq, 0))",
    )?;
    st.query_map(params![user, model, generation], |r| r.get(0))?
        .collect()
}

/// Writes one chunk's code row at the chunk's current counter (made 1 when it has none).
fn write_codes(
    c: &Connection,
    user: i64,
    model: &str,
    chunk: i64,
    generation: i64,
    codes: &[u8],
    pending: i64,
) -> rusqlite::Result<()> {
    // Every code row has a counter of at least 1, so a lost counter row (`vector_chunks` emptied)
    // makes it stale rather than current.
    c.prepare_cached(
        "INSERT INTO vector_chunks (user_id, chunk, seq) VALUES (?1, ?2, 1)
         ON CONFLICT (user_id, chunk) DO NOTHING",
    )?
    .execute(params![user, chunk])?;
    c.prepare_cached(
        "INSERT INTO vector_codes (user_id, model, chunk, seq, generation, pending, codes)
         VALUES (?1, ?2, ?3,
           coalesce((SELECT seq FROM vector_chunks WHERE user_id = ?1 AND chunk = ?3), 0), ?4, ?6,
           ?5)
         ON CONFLICT (user_id, model, chunk) DO UPDATE SET seq = excluded.seq,
           generation = excluded.generation, pending = excluded.pending, codes = excluded.codes",
    )?
    .execute(params![user, model, chunk, generation, codes, pending])?;
    Ok(())
}

/// Fits `user`'s basis of `model` again and rebuilds all its codes, in one write transaction;
/// removes both when the model has no vectors.
///
/// # Errors
/// `rusqlite::Error` (nothing is changed then).
pub fn build_all(c: &mut Connection, user: i64, model: &str) -> rusqlite::Result<()> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let sample: Vec<Vec<f32>> = {
        let mut st = tx.prepare_cached(&format!(
            "SELECT e.vector {EXACT_FROM} ORDER BY e.item_id LIMIT ?3"
        ))?;
        st.query_map(params![user, model, FIT_SAMPLE as i64], |r| {
            Ok(recall::blob_to_vector(r.get_ref(0)?.as_blob()?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let generation: i64 = tx.query_row(
        "SELECT coalesce(max(generation), 0) + 1 FROM vector_bases WHERE user_id = ?1 AND model = ?2",
        params![user, model],
        |r| r.get(0),
    )?;
    tx.execute(
        "DELETE FROM vector_codes WHERE user_id = ?1 AND model = ?2",
        params![user, model],
    )?;
    let Some(basis) = Basis::fit(sample.iter().map(Vec::as_slice), generation) else {
        tx.execute(
            "DELETE FROM vector_bases WHERE user_id = ?1 AND model = ?2",
            params![user, model],
        )?;
        return tx.commit();
    };
    tx.execute(
        "INSERT INTO vector_bases (user_id, model, generation, dims, fitted, mean, scale)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (user_id, model) DO UPDATE SET generation = excluded.generation,
           dims = excluded.dims, fitted = excluded.fitted, mean = excluded.mean,
           scale = excluded.scale",
        params![
            user,
            model,
            basis.generation,
            basis.dims as i64,
            basis.fitted as i64,
            f32s_to_blob(&basis.mean),
            f32s_to_blob(&basis.scale)
        ],
    )?;
    let mut active: std::collections::HashMap<i64, i64> = {
        let mut st = tx.prepare_cached(&format!(
            "SELECT id >> {CHUNK_SHIFT}, count(*) FROM memories WHERE user_id = ?1 AND is_active = 1
             GROUP BY 1"
        ))?;
        st.query_map([user], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let record = basis.code_bytes() + 2;
    let mut written = std::collections::HashSet::new();
    {
        let mut st = tx.prepare_cached(&format!(
            "SELECT e.item_id, e.vector {EXACT_FROM} ORDER BY e.item_id"
        ))?;
        let mut rows = st.query(params![user, model])?;
        let mut current: Option<i64> = None;
        let mut codes = Vec::new();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let chunk = id >> CHUNK_SHIFT;
            if current != Some(chunk) {
                if let Some(done) = current {
                    let pending = active.remove(&done).unwrap_or(0) - (codes.len() / record) as i64;
                    write_codes(&tx, user, model, done, generation, &codes, pending.max(0))?;
                    written.insert(done);
                }
                codes.clear();
                current = Some(chunk);
            }
            push_code(&basis, id, r.get_ref(1)?.as_blob()?, &mut codes);
        }
        if let Some(done) = current {
            let pending = active.remove(&done).unwrap_or(0) - (codes.len() / record) as i64;
            write_codes(&tx, user, model, done, generation, &codes, pending.max(0))?;
            written.insert(done);
        }
    }
    // Chunks changed at some point, or with active memories, but without vectors now get an
    // empty, current row (with those memories pending).
    let touched: Vec<i64> = {
        let mut st = tx.prepare_cached("SELECT chunk FROM vector_chunks WHERE user_id = ?1")?;
        st.query_map([user], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    for chunk in touched {
        active.entry(chunk).or_insert(0);
    }
    let mut rest: Vec<(i64, i64)> = active.drain().collect();
    rest.sort_unstable();
    for (chunk, pending) in rest {
        if written.insert(chunk) {
            write_codes(&tx, user, model, chunk, generation, &[], pending)?;
        }
    }
    tx.commit()
}
