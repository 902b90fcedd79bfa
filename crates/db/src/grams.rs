//! Character bigrams for keyword recall in scripts written without spaces between words
//! (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar).
//!
//! The `recall_fts` index tokenizes with `unicode61`, which takes a whole run of such letters
//! (`土曜日に東京タワーへ行く予定`) as one token, so no word of it can be found. Beside it,
//! `recall_grams` (FTS5, `ascii` tokenizer: every non-ASCII character is a token character)
//! holds the overlapping character bigrams of those runs (`土曜 曜日 日に に東 東京 …`), the
//! classic CJK bigram indexing; a query's runs are cut the same way. A run of one character is
//! kept as a unigram. A base character and the combining marks after it (Thai vowel and tone
//! marks) count as one character. Text is put in NFC first, so composed and decomposed input
//! give the same grams.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Whether `c` belongs to a script written without spaces between words (the scripts whose
/// runs are cut into bigrams): Han (all planes), Hiragana, Katakana (with the prolonged sound
/// mark and half-width forms), Bopomofo, Hangul, Thai, Lao, Khmer and Myanmar letters and
/// digits. Punctuation (`、。・`) is not.
pub fn is_gram_char(c: char) -> bool {
    let cp = u32::from(c);
    let in_script = matches!(cp,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1100..=0x11FF // Hangul Jamo
        | 0x1780..=0x17FF // Khmer
        | 0x3005..=0x3007 // 々 〆 〇
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3100..=0x312F // Bopomofo
        | 0x3130..=0x318F // Hangul compatibility jamo
        | 0x31A0..=0x31FF // Bopomofo extended, Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xA960..=0xA97F // Hangul Jamo extended A
        | 0xAC00..=0xD7FF // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFFDC // half-width Katakana and Hangul
        | 0x20000..=0x3FFFF // CJK extensions B and later
    );
    in_script && (c.is_alphanumeric() || is_combining_mark(c))
}

/// The bigrams of every gram-script run in `text`, in order, duplicates kept (they weigh in
/// `bm25()` as repeated words do).
pub fn grams(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    // The units (base character plus following combining marks) of the current run.
    let mut run: Vec<String> = Vec::new();
    let flush = |run: &mut Vec<String>, out: &mut Vec<String>| {
        match run.len() {
            0 => {}
            1 => out.push(run[0].clone()),
            _ => out.extend(run.windows(2).map(|w| format!("{}{}", w[0], w[1]))),
        }
        run.clear();
    };
    for c in text.nfc() {
        if is_gram_char(c) {
            match run.last_mut() {
                Some(last) if is_combining_mark(c) => last.push(c),
                _ if is_combining_mark(c) => {} // a mark with no base: nothing to attach it to
                _ => run.push(c.to_string()),
            }
        } else if is_combining_mark(c) && !run.is_empty() {
            // A mark from another block on a gram character (e.g. U+0301): part of its unit.
            if let Some(last) = run.last_mut() {
                last.push(c);
            }
        } else {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The `recall_grams` text of an item: its bigrams separated by spaces (empty when the text has
/// no gram-script characters).
pub fn index_text(text: &str) -> String {
    grams(text).join(" ")
}

/// The `recall_grams` schema (migration 2): one FTS5 row per `recall_fts` row, same rowid.
pub(crate) const GRAMS_SCHEMA: &str =
    "CREATE VIRTUAL TABLE recall_grams USING fts5(grams, tokenize = 'ascii');";

/// Fills `recall_grams` from the rows already in `recall_fts` (databases made before migration
/// 2): only rows whose name or body has gram-script characters get a row.
pub(crate) fn backfill(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = {
        let mut st = conn.prepare("SELECT rowid, name, body FROM recall_fts")?;
        st.query_map([], |r| {
            let name: Option<String> = r.get(1)?;
            let body: Option<String> = r.get(2)?;
            Ok((
                r.get(0)?,
                format!("{}\n{}", name.unwrap_or_default(), body.unwrap_or_default()),
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let mut insert = conn.prepare("INSERT INTO recall_grams (rowid, grams) VALUES (?1, ?2)")?;
    for (rowid, text) in rows {
        let grams = index_text(&text);
        if !grams.is_empty() {
            insert.execute(rusqlite::params![rowid, grams])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigrams_of_runs() {
        assert_eq!(
            grams("東京タワーへ行く。"),
            ["東京", "京タ", "タワ", "ワー", "ーへ", "へ行", "行く"]
        );
        assert_eq!(
            grams("Tokyo 駅 and 서울에서"),
            ["駅", "서울", "울에", "에서"]
        );
        assert!(grams("plain English, café").is_empty());
        // Thai tone and vowel marks stay with their consonant: ที่ is one unit.
        assert_eq!(grams("ที่นี่"), ["ที่นี่"]);
        assert_eq!(grams("ไปทะเล"), ["ไป", "ปท", "ทะ", "ะเ", "เล"]);
        // Decomposed input gives the grams of the composed text.
        assert_eq!(grams("\u{30AB}\u{3099}\u{30B9}"), grams("ガス"));
        assert_eq!(index_text("日本語"), "日本 本語");
        assert_eq!(grams("\u{20BB7}野家"), ["\u{20BB7}野", "野家"]);
    }
}
