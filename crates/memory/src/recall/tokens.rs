//! Query tokens (`docs/behaviour.md#query-tokens`): the words of a message recall looks for,
//! and the character bigrams of scripts written without spaces.

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
pub(super) fn token_grams(tokens: &[String]) -> Vec<String> {
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
