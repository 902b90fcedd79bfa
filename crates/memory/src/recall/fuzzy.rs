//! The fuzzy fallback of the keyword leg (`docs/behaviour.md#keyword-leg`): tokens that match
//! no row widened to the indexed words near them.

use rusqlite::Connection;

use super::{fts_rowid, quote};

/// The fuzzy fallback ([`widen_unmatched`]) widens tokens of at least this many letters.
pub const FUZZY_MIN_CHARS: usize = 3;

/// The fuzzy fallback takes at most this many near terms for one token.
pub const FUZZY_ALTERNATIVES: usize = 3;

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
pub(super) fn widen_unmatched(
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
