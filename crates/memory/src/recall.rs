//! Recall building blocks (`docs/behaviour.md#recall`, decision D9): query tokens
//! (`docs/behaviour.md#query-tokens`), the FTS5 keyword leg with its coverage rule
//! (`docs/behaviour.md#keyword-leg`), the cosine embedding leg (`docs/behaviour.md#embedding-leg`)
//! and their fusion (`docs/behaviour.md#fusion-and-selection`: by score when both legs run, by
//! reciprocal rank within the keyword leg). They work on any
//! `recall_fts` kind (`memory` or `agenda`), so the agenda index can share them.

use std::collections::HashMap;

use rusqlite::Connection;

/// The stop words of `docs/behaviour.md#query-tokens`, sorted.
pub const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "else",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "gets",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "hello",
    "her",
    "here",
    "hers",
    "herself",
    "hey",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "made",
    "make",
    "many",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "need",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "okay",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "really",
    "remember",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "tell",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "user",
    "users",
    "very",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The most tokens taken from one message (`T_cur`, `T_prev`).
pub const MAX_TOKENS: usize = 16;

/// How many rows the keyword leg takes by `bm25()` before the coverage check.
pub const KEYWORD_CANDIDATES: usize = 20;

/// The reciprocal-rank-fusion constant: `score = Σ 1 / (RRF_K + rank)`.
pub const RRF_K: f64 = 60.0;

pub use crate::fusion::{KEYWORD_WEIGHT, fuse_scores};

/// The fuzzy fallback ([`widen_unmatched`]) widens tokens of at least this many letters.
pub const FUZZY_MIN_CHARS: usize = 3;

/// The fuzzy fallback takes at most this many near terms for one token.
pub const FUZZY_ALTERNATIVES: usize = 3;

/// The query tokens of a text (`docs/behaviour.md#query-tokens`): put in NFC, lower-cased, split at
/// every character that is neither a letter, a digit nor a combining mark (Thai vowel and tone
/// marks, decomposed accents belong to their word), kept when at least 3 characters long, 2 with a
/// digit, or 2 of a script written without spaces (`東京`, `서울`: a whole word there, see
/// [`elroy_db::grams`]), stop words dropped, de-duplicated (first occurrence kept), at most
/// [`MAX_TOKENS`].
pub fn recall_tokens(text: &str) -> Vec<String> {
    let mut out = recall_tokens_unbounded(text);
    out.truncate(MAX_TOKENS);
    out
}

/// `T_prev` of `docs/formats.md#item-names-and-stems`: the previous message's tokens minus
/// `current`, at most [`MAX_TOKENS`].
pub fn previous_tokens(previous_text: &str, current: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in recall_tokens_unbounded(previous_text) {
        if !current.contains(&t) && !out.contains(&t) {
            out.push(t);
            if out.len() == MAX_TOKENS {
                break;
            }
        }
    }
    out
}

fn recall_tokens_unbounded(text: &str) -> Vec<String> {
    let lower = elroy_markdown::normalize_name(text).to_lowercase();
    let mut out: Vec<String> = Vec::new();
    let is_word_char =
        |c: char| c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c);
    for t in lower.split(|c: char| !is_word_char(c)) {
        let n = t.chars().count();
        let keep = n >= 3
            || (n == 2
                && t.chars()
                    .any(|c| c.is_numeric() || elroy_db::grams::is_gram_char(c)));
        if keep && STOP_WORDS.binary_search(&t).is_err() && !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    }
    out
}

/// At most this many character bigrams of one message take part in a query (a word of a script
/// without spaces is one or two bigrams, so this is some 32–64 words, as [`MAX_TOKENS`] bounds the
/// words of other scripts). A long pasted CJK text then costs what a short one does: without the
/// bound a 20,000-character question took 17 s (thousands of `OR` terms).
pub const MAX_GRAMS: usize = 4 * MAX_TOKENS;

/// The character bigrams of `tokens` (their runs of scripts without spaces), de-duplicated, the
/// first [`MAX_GRAMS`] in order.
fn token_grams(tokens: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for t in tokens {
        for g in elroy_db::grams::grams(t) {
            if out.len() == MAX_GRAMS {
                return out;
            }
            if seen.insert(g.clone()) {
                out.push(g);
            }
        }
    }
    out
}

fn quote(token: &str) -> String {
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
    let mut words = word_ranking(conn, "recall_fts", user_id, kind, current, previous, None)?;
    if words.is_empty() {
        // The fuzzy fallback: tokens that match nothing are widened to near words. Only when
        // nothing qualified: finding near words reads the doclists of every indexed term sharing
        // the token's first letters (`fts5vocab`), which at 100,000 memories tripled the time of
        // a question that merely holds one word the memories lack (docs/performance.md).
        if let Some(terms) = widen_unmatched(conn, user_id, kind, current)? {
            let previous: Vec<String> = previous.iter().map(|t| quote(t)).collect();
            words = term_ranking(conn, "recall_fts", user_id, kind, &terms, &previous, None)?;
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
    let grams = word_ranking(
        conn,
        "recall_grams",
        user_id,
        kind,
        &current_grams,
        &rest,
        Some(1),
    )?;
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
    user_id: i64,
    kind: &str,
    current: &[String],
    previous: &[String],
    need: Option<usize>,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let current: Vec<String> = current.iter().map(|t| quote(t)).collect();
    let previous: Vec<String> = previous.iter().map(|t| quote(t)).collect();
    term_ranking(conn, table, user_id, kind, &current, &previous, need)
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
    user_id: i64,
    kind: &str,
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
    let lo = fts_rowid(user_id, kind, 0);
    let hi = fts_rowid(user_id + 1, kind, 0) - 1;
    let parity = lo & 1;
    let mut st = conn.prepare_cached(&format!(
        "SELECT rowid, rank FROM {table}
         WHERE {table} MATCH ?1 AND rowid BETWEEN ?2 AND ?3 AND (rowid & 1) = ?4
         ORDER BY rank, rowid LIMIT ?5"
    ))?;
    let rows: Vec<(i64, i64, f64)> = st
        .query_map(
            rusqlite::params![query, lo, hi, parity, KEYWORD_CANDIDATES as i64],
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

/// Whether the FTS5 expression `expression` matches a `recall_fts` row of `user_id` and `kind`.
fn matches_any(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    expression: &str,
) -> rusqlite::Result<bool> {
    let lo = fts_rowid(user_id, kind, 0);
    let hi = fts_rowid(user_id + 1, kind, 0) - 1;
    let mut st = conn.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM recall_fts
         WHERE recall_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3 AND (rowid & 1) = ?4 LIMIT 1)",
    )?;
    let n: i64 = st.query_row(rusqlite::params![expression, lo, hi, lo & 1], |r| r.get(0))?;
    Ok(n > 0)
}

/// The fuzzy fallback of `docs/behaviour.md#keyword-leg`: the terms of `current` with each
/// token that matches no row of the user widened, so that a shortened or misspelt word (a
/// nickname, a typo in a place name) still counts. A token of at least
/// [`FUZZY_MIN_CHARS`] letters becomes `("t" OR "t"*)` when some word starts with it, else
/// `("t" OR "u"* …)` with the [`FUZZY_ALTERNATIVES`] most frequent indexed terms `u` that share
/// its first two letters and lie within [`fuzzy_distance`] edits (insertion, deletion,
/// substitution, transposition) of it or of its stem ([`stem`]). `None` when no token was widened.
///
/// # Errors
/// `rusqlite::Error`.
fn widen_unmatched(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    current: &[String],
) -> rusqlite::Result<Option<Vec<String>>> {
    let mut terms: Vec<String> = current.iter().map(|t| quote(t)).collect();
    let mut widened = false;
    for (i, token) in current.iter().enumerate() {
        let chars: Vec<char> = token.chars().collect();
        if chars.len() < FUZZY_MIN_CHARS || !chars.iter().all(|c| c.is_alphabetic()) {
            continue;
        }
        if chars.iter().any(|c| elroy_db::grams::is_gram_char(*c)) {
            continue;
        }
        if matches_any(conn, user_id, kind, &terms[i])? {
            continue;
        }
        let prefix = format!("{}*", quote(token));
        if matches_any(conn, user_id, kind, &prefix)? {
            terms[i] = format!("({} OR {prefix})", quote(token));
            widened = true;
            continue;
        }
        let mut near = Vec::new();
        for (term, docs) in terms_near(conn, token, &stem(conn, token)?)? {
            let alternative = format!("{}*", quote(&term));
            if matches_any(conn, user_id, kind, &alternative)? {
                near.push((docs, alternative));
            }
        }
        if near.is_empty() {
            continue;
        }
        near.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        near.truncate(FUZZY_ALTERNATIVES);
        let alternatives: Vec<String> = near.into_iter().map(|(_, a)| a).collect();
        terms[i] = format!("({} OR {})", quote(token), alternatives.join(" OR "));
        widened = true;
    }
    Ok(widened.then_some(terms))
}

/// The tokenizer of `recall_fts` (migration 1 of `elroy_db::migrations`), which [`stem`] runs.
const RECALL_FTS_TOKENIZER: &str = "porter unicode61 remove_diacritics 2";

/// `token` as `recall_fts` indexes it: through its own tokenizer (Porter stemming, diacritics
/// removed), run on a private temporary table, so the stem is exactly the indexed term a word
/// written that way would have (`seatle` → `seatl`, `seattle` → `seattl`). `token` itself when
/// the tokenizer gives no single term.
///
/// # Errors
/// `rusqlite::Error`.
fn stem(conn: &Connection, token: &str) -> rusqlite::Result<String> {
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_stemmer
           USING fts5(t, tokenize = '{RECALL_FTS_TOKENIZER}');
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_stemmer_vocab
           USING fts5vocab(temp, recall_stemmer, 'row');
         DELETE FROM temp.recall_stemmer;"
    ))?;
    conn.execute("INSERT INTO temp.recall_stemmer (t) VALUES (?1)", [token])?;
    let mut st = conn.prepare_cached("SELECT term FROM temp.recall_stemmer_vocab")?;
    let terms: Vec<String> = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    conn.execute("DELETE FROM temp.recall_stemmer", [])?;
    Ok(match <[String; 1]>::try_from(terms) {
        Ok([term]) => term,
        Err(_) => token.to_owned(),
    })
}

/// Indexed terms (stems of any user's rows, from an `fts5vocab` table over `recall_fts`) that
/// share `token`'s first two characters and lie within [`fuzzy_distance`] edits of `token` or of
/// its indexed form `stemmed`, each by its own length ([`stem`]: a stem is compared with stems,
/// so `seatle`, stem `seatl`, finds `seattl` of `Seattle`), with the number of rows holding each.
fn terms_near(
    conn: &Connection,
    token: &str,
    stemmed: &str,
) -> rusqlite::Result<Vec<(String, i64)>> {
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_fts_vocab
         USING fts5vocab(main, recall_fts, 'row')",
    )?;
    let head: String = token.chars().take(2).collect();
    let mut end = head.clone();
    // The first string after every string starting with `head`.
    end.push(char::MAX);
    let mut st = conn.prepare_cached(
        "SELECT term, doc FROM temp.recall_fts_vocab WHERE term >= ?1 AND term < ?2",
    )?;
    let rows = st.query_map(rusqlite::params![head, end], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (term, docs) = row?;
        // Each word allows the edits of its own length: a short stem of a long word is held to
        // the stricter bound.
        let near = |word: &str| {
            let max = fuzzy_distance(word);
            term.chars().count().abs_diff(word.chars().count()) <= max
                && edit_distance(word, &term) <= max
        };
        if near(token) || (stemmed != token && near(stemmed)) {
            out.push((term, docs));
        }
    }
    Ok(out)
}

/// The edits [`widen_unmatched`] allows for `token`: 1 up to 7 characters, 2 from 8.
pub fn fuzzy_distance(token: &str) -> usize {
    if token.chars().count() >= 8 { 2 } else { 1 }
}

/// The optimal-string-alignment distance of `a` and `b` (insertions, deletions, substitutions
/// and transpositions of adjacent characters, each counting 1), over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// Writes the search rows of one item: `recall_fts` (name, body and the UNINDEXED columns) and,
/// when the name or body has characters of a script written without spaces, `recall_grams`
/// (their bigrams). Both rows must have been removed before ([`delete_fts_row`]).
///
/// # Errors
/// `rusqlite::Error`.
pub fn insert_fts_row(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    item_id: i64,
    name: &str,
    body: &str,
) -> rusqlite::Result<()> {
    let rowid = fts_rowid(user_id, kind, item_id);
    conn.prepare_cached(
        "INSERT INTO recall_fts (rowid, name, body, kind, user_id, item_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![rowid, name, body, kind, user_id, item_id])?;
    let grams = elroy_db::grams::index_text(&format!("{name}\n{body}"));
    if !grams.is_empty() {
        conn.prepare_cached("INSERT INTO recall_grams (rowid, grams) VALUES (?1, ?2)")?
            .execute(rusqlite::params![rowid, grams])?;
    }
    Ok(())
}

/// Removes the search rows (`recall_fts` and `recall_grams`) of one item.
///
/// # Errors
/// `rusqlite::Error`.
pub fn delete_fts_row(
    conn: &Connection,
    user_id: i64,
    kind: &str,
    item_id: i64,
) -> rusqlite::Result<()> {
    let rowid = fts_rowid(user_id, kind, item_id);
    conn.prepare_cached("DELETE FROM recall_fts WHERE rowid = ?1")?
        .execute([rowid])?;
    conn.prepare_cached("DELETE FROM recall_grams WHERE rowid = ?1")?
        .execute([rowid])?;
    Ok(())
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

/// The `recall_fts` rowid of an item: `(user_id << 40) | (item_id << 1) | k`, `k` = 0 for
/// memories and 1 for agenda items. A fixed rowid makes replacing or removing an item's row a
/// rowid lookup (the `kind`, `user_id` and `item_id` columns are `UNINDEXED`). Ids must stay
/// below 2^39 and user ids below 2^23.
pub fn fts_rowid(user_id: i64, kind: &str, item_id: i64) -> i64 {
    (user_id << 40) | (item_id << 1) | i64::from(kind != crate::store::KIND)
}

/// One item for [`replace_fts_items`]: its id, name and rendering (`docs/formats.md#renderings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsItem {
    /// The item id (`recall_metadata.memory_id`).
    pub id: i64,
    /// The item name.
    pub name: String,
    /// The rendering (search text).
    pub body: String,
}

/// Replaces every `recall_fts` (and `recall_grams`) row of `user_id` and `kind` (`agenda` for agenda and due items)
/// with `items`, in one transaction: the search index of a store that keeps no index of its own.
/// Pass only active items (`docs/formats.md#search-index-and-embeddings`). Nothing is written when
/// `items` are those of the last replacement (an MD5 digest of ids, names and bodies kept in
/// `meta`): every recall and `examine_memories` call passes the whole agenda, and rewriting 10,000
/// rows each time cost ~10,000 page writes per question on a large home.
///
/// # Errors
/// `rusqlite::Error`.
pub fn replace_fts_items(
    conn: &mut Connection,
    user_id: i64,
    kind: &str,
    items: &[FtsItem],
) -> rusqlite::Result<()> {
    replace_fts_items_inner(conn, user_id, kind, items, None)
}

/// The `meta` key of the source stamp of `kind`'s rows (see [`fts_source`]).
fn source_key(user_id: i64, kind: &str) -> String {
    format!("fts_source:{user_id}:{kind}")
}

/// The source stamp recorded by the last [`replace_fts_items_from`] for `user_id` and `kind`
/// (`None`: never, or the rows were replaced without one since): what the caller's store was
/// when the rows were built (for the agenda: its version and the time zone of the renderings).
/// Equal to the store's current stamp: the rows are current and need no rebuild.
///
/// # Errors
/// `rusqlite::Error`.
pub fn fts_source(conn: &Connection, user_id: i64, kind: &str) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        [source_key(user_id, kind)],
        |r| r.get(0),
    )
    .optional()
}

/// [`replace_fts_items`], recording `source` (the stamp of the store state `items` come from)
/// in the same transaction, for [`fts_source`]: a caller whose store has not changed since
/// skips loading its items (recall and `examine_memories` no longer read the whole
/// agenda per question).
///
/// # Errors
/// `rusqlite::Error`.
pub fn replace_fts_items_from(
    conn: &mut Connection,
    user_id: i64,
    kind: &str,
    source: &str,
    items: &[FtsItem],
) -> rusqlite::Result<()> {
    replace_fts_items_inner(conn, user_id, kind, items, Some(source))
}

fn replace_fts_items_inner(
    conn: &mut Connection,
    user_id: i64,
    kind: &str,
    items: &[FtsItem],
    source: Option<&str>,
) -> rusqlite::Result<()> {
    use md5::{Digest, Md5};
    use rusqlite::OptionalExtension;
    let mut hasher = Md5::new();
    for item in items {
        hasher.update(item.id.to_le_bytes());
        for text in [&item.name, &item.body] {
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
    }
    let digest = format!("{:x}", hasher.finalize());
    let key = format!("fts_digest:{user_id}:{kind}");
    let stored: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [&key], |r| {
            r.get(0)
        })
        .optional()?;
    let source_key = source_key(user_id, kind);
    if stored.as_deref() == Some(digest.as_str()) {
        let set_source = match source {
            Some(source) => conn.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [&source_key, source],
            ),
            None => Ok(0),
        };
        return set_source.map(|_| ());
    }
    let tx = conn.transaction()?;
    let lo = fts_rowid(user_id, kind, 0);
    let hi = fts_rowid(user_id + 1, kind, 0) - 1;
    for table in ["recall_fts", "recall_grams"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE rowid BETWEEN ?1 AND ?2 AND (rowid & 1) = ?3"),
            rusqlite::params![lo, hi, lo & 1],
        )?;
    }
    for item in items {
        insert_fts_row(&tx, user_id, kind, item.id, &item.name, &item.body)?;
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [&key, &digest],
    )?;
    match source {
        Some(source) => tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [&source_key, source],
        )?,
        // Rows replaced without a stamp: a stamp kept from before no longer describes them.
        None => tx.execute("DELETE FROM meta WHERE key = ?1", [&source_key])?,
    };
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn tokens_of_spec_example() {
        assert_eq!(recall_tokens("What is my dog called?"), ["dog", "called"]);
        assert_eq!(
            recall_tokens("Q2 report, q2 REPORT 42 x1 ab"),
            ["q2", "report", "42", "x1"]
        );
        assert_eq!(recall_tokens("Café in 京都 2026"), ["café", "京都", "2026"]);
        assert_eq!(recall_tokens("Cafe\u{301} x"), ["café"]);
        assert_eq!(recall_tokens("ที่ทะเล"), ["ที่ทะเล"]);
        assert_eq!(
            previous_tokens("the dog park", &["dog".to_owned()]),
            ["park"]
        );
    }

    #[test]
    fn fusion_orders() {
        assert_eq!(fuse(&[vec![3, 1, 2]]), [3, 1, 2]);
        // 1: 1/61 + 1/62; 2: 1/62 + 1/61 → tie → lower id first; 3 only once.
        assert_eq!(fuse(&[vec![1, 2, 3], vec![2, 1]]), [1, 2, 3]);
        assert_eq!(fuse(&[vec![5], vec![4]]), [4, 5]);
    }

    /// The fuzzy fallback's edit distance: transpositions count one.
    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("tenessee", "tennesse"), 2);
        assert_eq!(edit_distance("jon", "john"), 1);
        assert_eq!(edit_distance("recieve", "receive"), 1);
        assert_eq!(edit_distance("kayak", "kayak"), 0);
        assert_eq!(fuzzy_distance("tenessee"), 2);
        assert_eq!(fuzzy_distance("john"), 1);
    }

    /// A long text in a script without spaces (a pasted Chinese document) gives a bounded query:
    /// the first `MAX_GRAMS` distinct bigrams, in order (found by an adversarial run: 20,000
    /// characters made a query of ~20,000 terms). Another of the kind: the previous message.
    #[test]
    fn bigrams_of_a_long_text_are_bounded() {
        let text: String = (0..20_000u32)
            .filter_map(|i| char::from_u32(0x4E00 + (i * 7919) % 20_000))
            .collect();
        let grams = token_grams(&recall_tokens(&text));
        assert_eq!(grams.len(), MAX_GRAMS);
        let first: Vec<char> = text.chars().take(2).collect();
        assert_eq!(grams[0], first.iter().collect::<String>());
        let previous = token_grams(&previous_tokens(&text, &[]));
        assert_eq!(previous.len(), MAX_GRAMS);
        // Short texts are untouched.
        assert_eq!(token_grams(&recall_tokens("東京タワー")).len(), 4);
    }
}
