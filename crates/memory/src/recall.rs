//! Recall building blocks (`docs/behaviour.md#recall`, decision D9): query tokens
//! (`docs/behaviour.md#query-tokens`), the FTS5 keyword leg with its coverage rule
//! (`docs/behaviour.md#keyword-leg`), the cosine embedding leg (`docs/behaviour.md#embedding-leg`)
//! and their fusion (`docs/behaviour.md#fusion-and-selection`: by score when both legs run, by
//! reciprocal rank within the keyword leg). They work on any
//! `recall_fts` kind (`memory` or `agenda`), so the agenda index can share them.

use std::collections::HashMap;

use rusqlite::Connection;

mod fts_index;
mod fuzzy;
mod tokens;

pub use fts_index::{
    FtsItem, delete_fts_row, fts_rowid, fts_source, insert_fts_row, replace_fts_items,
    replace_fts_items_from,
};
use fuzzy::widen_unmatched;
pub use fuzzy::{FUZZY_ALTERNATIVES, FUZZY_MIN_CHARS, edit_distance, fuzzy_distance};
use tokens::token_grams;
pub use tokens::{MAX_GRAMS, MAX_TOKENS, STOP_WORDS, previous_tokens, recall_tokens};

/// How many rows the keyword leg takes by `bm25()` before the coverage check.
pub const KEYWORD_CANDIDATES: usize = 20;

/// The reciprocal-rank-fusion constant: `score = Σ 1 / (RRF_K + rank)`.
pub const RRF_K: f64 = 60.0;

pub use crate::fusion::{KEYWORD_WEIGHT, fuse_scores};

pub(crate) fn quote(token: &str) -> String {
    format!("\"{}\"", token.replace('"', "\"\""))
}

/// The keyword leg (`docs/behaviour.md#keyword-leg`) over the user's rows of `kind`: the word
/// ranking (`recall_fts`, [`word_ranking`]) fused by reciprocal rank fusion ([`fuse`]) with the
/// bigram ranking of scripts written without spaces (`recall_grams`: the character bigrams of the
/// tokens, see [`elroy_db::grams`]; a row qualifies with one shared bigram other than a
/// kana-only one). A query without such characters has no
/// bigram ranking and gets exactly the word ranking. Returns item ids, best first. Empty
/// `current` finds nothing.
///
/// # Errors
/// `rusqlite::Error`.
pub fn keyword_leg(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    current: &[String],
    previous: &[String],
) -> rusqlite::Result<Vec<i64>> {
    Ok(keyword_leg_scored(conn, user_id, kind, current, previous)?
        .into_iter()
        .map(|(id, _)| id)
        .collect())
}

/// [`keyword_leg`] with each item's keyword relevance: its `bm25()` relevance divided by the
/// best one's (so in `(0, 1]`, the first item 1; with a bigram ranking fused in, the better of
/// its two relevances). Fusion with the embedding leg weighs it ([`fuse_scores`]).
///
/// # Errors
/// `rusqlite::Error`.
pub fn keyword_leg_scored(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    current: &[String],
    previous: &[String],
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let scope = Scope {
        user_id,
        kind,
        within: None,
    };
    keyword_leg_in(conn, scope, current, previous)
}

/// Which rows a ranking reads: the user's rows of one kind, or only those of the items
/// `within` (a period's memories, `crate::period`).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The user.
    pub user_id: i64,
    /// `memory` or `agenda`.
    pub kind: &'a str,
    /// Only these item ids, when given.
    pub within: Option<&'a [i64]>,
}

/// [`keyword_leg_scored`] over the rows of `scope`: with `within`, the leg as it would be over
/// those items alone (the best of them by `bm25()`, the coverage rule, relevances divided by the
/// best of them).
///
/// # Errors
/// `rusqlite::Error`.
pub fn keyword_leg_in(
    conn: &Connection,
    scope: Scope<'_>,
    current: &[String],
    previous: &[String],
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let Scope { user_id, kind, .. } = scope;
    let mut words = word_ranking(conn, "recall_fts", scope, current, previous, None)?;
    if words.is_empty() {
        // The fuzzy fallback: tokens that match nothing are widened to near words. Only when
        // nothing qualified: finding near words reads the doclists of every indexed term sharing
        // the token's first letters (`fts5vocab`), which at 100,000 memories tripled the time of
        // a question that merely holds one word the memories lack (docs/performance.md).
        if let Some(terms) = widen_unmatched(conn, user_id, kind, current)? {
            let previous: Vec<String> = previous.iter().map(|t| quote(t)).collect();
            words = term_ranking(conn, "recall_fts", scope, &terms, &previous, None)?;
        }
    }
    let all_grams = token_grams(current);
    if all_grams.is_empty() {
        return Ok(normalized(words));
    }
    // A word of these scripts is one or two bigrams, so one shared bigram qualifies a row. Bigrams
    // of kana particles alone (`がa`, `ある`) would match almost any Japanese text: they rank
    // but do not qualify a row unless the query has nothing else.
    let (content, particles): (Vec<String>, Vec<String>) = all_grams
        .into_iter()
        .partition(|g| !g.chars().all(|c| ('\u{3040}'..='\u{309F}').contains(&c)));
    let (current_grams, mut rest) = if content.is_empty() {
        (particles, Vec::new())
    } else {
        (content, particles)
    };
    for g in token_grams(previous) {
        if !current_grams.contains(&g) && !rest.contains(&g) {
            rest.push(g);
        }
    }
    let grams = word_ranking(conn, "recall_grams", scope, &current_grams, &rest, Some(1))?;
    if words.is_empty() {
        return Ok(normalized(grams));
    }
    // The two rankings fused by rank; each item keeps its better relevance of the two.
    let (words, grams) = (normalized(words), normalized(grams));
    let relevance: HashMap<i64, f64> =
        grams
            .iter()
            .chain(&words)
            .copied()
            .fold(HashMap::new(), |mut m, (id, r)| {
                let e = m.entry(id).or_insert(r);
                *e = e.max(r);
                m
            });
    let ids = |v: &[(i64, f64)]| v.iter().map(|(id, _)| *id).collect::<Vec<_>>();
    Ok(fuse(&[ids(&words), ids(&grams)])
        .into_iter()
        .map(|id| (id, relevance.get(&id).copied().unwrap_or(0.0)))
        .collect())
}

/// Relevances divided by the largest (the best item gets 1), order kept.
fn normalized(ranking: Vec<(i64, f64)>) -> Vec<(i64, f64)> {
    let max = ranking.iter().map(|(_, r)| *r).fold(0.0f64, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    ranking.into_iter().map(|(id, r)| (id, r / max)).collect()
}

/// One ranking of `docs/formats.md#checklist-entries` over the FTS5 table `table` (`recall_fts` or
/// `recall_grams`, rows keyed by
/// [`fts_rowid`]): `"t1" OR "t2" …` over `current` then `previous`, the [`KEYWORD_CANDIDATES`]
/// best rows by `bm25()` (ties by item id), kept when they match at least 1 term of `current`
/// (`|current| <= 3`) or at least 2 (`|current| >= 4`), or at least `need` when given. Returns
/// item ids in `bm25()` order.
///
/// # Errors
/// `rusqlite::Error`.
fn word_ranking(
    conn: &Connection,
    table: &str,
    scope: Scope<'_>,
    current: &[String],
    previous: &[String],
    need: Option<usize>,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let current: Vec<String> = current.iter().map(|t| quote(t)).collect();
    let previous: Vec<String> = previous.iter().map(|t| quote(t)).collect();
    term_ranking(conn, table, scope, &current, &previous, need)
}

/// [`word_ranking`] over FTS5 expressions, one per query term (a quoted token, or a token
/// widened by [`widen_unmatched`] to `("t" OR "u"*)`). Each item comes with its relevance, the
/// negated `bm25()` (higher is better, above 0).
///
/// # Errors
/// `rusqlite::Error`.
fn term_ranking(
    conn: &Connection,
    table: &str,
    scope: Scope<'_>,
    current: &[String],
    previous: &[String],
    need: Option<usize>,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    if current.is_empty() {
        return Ok(Vec::new());
    }
    let query: Vec<&str> = current.iter().chain(previous).map(String::as_str).collect();
    let query = query.join(" OR ");
    // Rows of this user and kind occupy one rowid range and parity (see [`fts_rowid`]), so the
    // filter needs no lookup of the UNINDEXED columns; within it rowid order is item-id order.
    let Scope {
        user_id,
        kind,
        within,
    } = scope;
    let lo = fts_rowid(user_id, kind, 0);
    let hi = fts_rowid(user_id + 1, kind, 0) - 1;
    let parity = lo & 1;
    // Only some items: their rowids as a JSON array (`json_each`), one statement for any count.
    let (only, rowids) = match within {
        Some(ids) => (
            "AND rowid IN (SELECT value FROM json_each(?6))",
            format!(
                "[{}]",
                ids.iter()
                    .map(|id| fts_rowid(user_id, kind, *id).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
        None => ("AND ?6 IS NOT NULL", String::new()),
    };
    let mut st = conn.prepare_cached(&format!(
        "SELECT rowid, rank FROM {table}
         WHERE {table} MATCH ?1 AND rowid BETWEEN ?2 AND ?3 AND (rowid & 1) = ?4 {only}
         ORDER BY rank, rowid LIMIT ?5"
    ))?;
    let rows: Vec<(i64, i64, f64)> = st
        .query_map(
            rusqlite::params![query, lo, hi, parity, KEYWORD_CANDIDATES as i64, rowids],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?)),
        )?
        .map(|r| r.map(|(rowid, rank)| (rowid, (rowid - lo) >> 1, -rank)))
        .collect::<rusqlite::Result<_>>()?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let need = need.unwrap_or(if current.len() <= 3 { 1 } else { 2 });
    if previous.is_empty() && need == 1 {
        // Every row matched the query, which holds only terms of `current`.
        return Ok(rows.into_iter().map(|(_, id, score)| (id, score)).collect());
    }
    // Coverage as one FTS expression: "at least `need` terms of `current`". With need 1 it is
    // the OR of the terms; with need 2 it is OR over i of (t_i AND (t_i+1 OR … OR t_n)), which is
    // linear in the term count. Each candidate row is then checked with a rowid seek.
    let quoted = current;
    let expression = if need == 1 {
        quoted.join(" OR ")
    } else {
        (0..quoted.len() - 1)
            .map(|i| format!("({} AND ({}))", quoted[i], quoted[i + 1..].join(" OR ")))
            .collect::<Vec<_>>()
            .join(" OR ")
    };
    let mut cover = conn.prepare_cached(&format!(
        "SELECT count(*) FROM {table} WHERE {table} MATCH ?1 AND rowid = ?2"
    ))?;
    let mut qualifying = std::collections::HashSet::new();
    for (rowid, _, _) in &rows {
        let hit: i64 = cover.query_row(rusqlite::params![expression, rowid], |r| r.get(0))?;
        if hit > 0 {
            qualifying.insert(*rowid);
        }
    }
    Ok(rows
        .into_iter()
        .filter(|(rowid, _, _)| qualifying.contains(rowid))
        .map(|(_, id, score)| (id, score))
        .collect())
}

/// L2-normalises `v` in place (all zeros stay zeros).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Vector <-> BLOB: `dims` little-endian `f32`s (`docs/formats.md#search-index-and-embeddings`).
pub fn vector_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Reads a vector BLOB; trailing bytes that do not make a whole `f32` are ignored.
pub fn blob_to_vector(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The dot product (cosine similarity of normalised vectors); 0 when the lengths differ.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Reciprocal rank fusion (`docs/behaviour.md#fusion-and-selection`): `score(item) = Σ 1 / (60 +
/// rank)` over the rankings containing it (rank from 1); higher first, ties by lower id. With one
/// ranking its order is kept.
pub fn fuse(rankings: &[Vec<i64>]) -> Vec<i64> {
    let mut scores: HashMap<i64, f64> = HashMap::new();
    for ranking in rankings {
        for (i, id) in ranking.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (RRF_K + (i + 1) as f64);
        }
    }
    let mut items: Vec<(i64, f64)> = scores.into_iter().collect();
    items.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    items.into_iter().map(|(id, _)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_orders() {
        assert_eq!(fuse(&[vec![3, 1, 2]]), [3, 1, 2]);
        // 1: 1/61 + 1/62; 2: 1/62 + 1/61 → tie → lower id first; 3 only once.
        assert_eq!(fuse(&[vec![1, 2, 3], vec![2, 1]]), [1, 2, 3]);
        assert_eq!(fuse(&[vec![5], vec![4]]), [4, 5]);
    }
}
