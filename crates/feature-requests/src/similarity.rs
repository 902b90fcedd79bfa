//! How Elroy decides that a new feature request duplicates an existing one
//! (`docs/tool-rules.md#matching-feature-requests`): normalised text, the difflib similarity `S`,
//! the token overlap `O`, and the best-match rule with its fixed thresholds. Source: Elroy 0.5.0
//! `repository/feature_requests/queries.py`.

use std::collections::BTreeSet;

use crate::difflib;

/// The runs of `[a-z0-9]+` in the lower-cased text (Python `re.findall("[a-z0-9]+", text.lower())`).
/// Lower-casing is Unicode lower-casing, as Python's `str.lower()`; every other character separates
/// runs, so non-ASCII letters are dropped. The text is put in NFC first
/// ([`elroy_markdown::normalize_name`]), so `cafe` + U+0301 is `café` (token `caf`) as typed
/// composed, not `cafe`.
fn tokens(text: &str) -> impl Iterator<Item = String> {
    let lower = elroy_markdown::normalize_name(text).to_lowercase();
    let mut out = Vec::new();
    let mut current = String::new();
    for c in lower.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            current.push(c);
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.into_iter()
}

/// Normalises text for lookup and matching: lower-case, the runs of `[a-z0-9]+`, joined by single
/// spaces. `Add calendar sync`, `add-calendar-sync` and `ADD  calendar_sync!` all give
/// `add calendar sync`.
pub fn normalize(text: &str) -> String {
    tokens(text).collect::<Vec<_>>().join(" ")
}

/// `S(a, b)`: Python's `SequenceMatcher(None, normalize(a), normalize(b)).ratio()`, in `[0, 1]`.
pub fn similarity(a: &str, b: &str) -> f64 {
    difflib::ratio(&normalize(a), &normalize(b))
}

/// `O(a, b)`: `|tokens(a) ∩ tokens(b)| / max(|tokens(a)|, |tokens(b)|)` over the token sets; `0.0`
/// when either set is empty.
pub fn token_overlap(a: &str, b: &str) -> f64 {
    let ta: BTreeSet<String> = tokens(a).collect();
    let tb: BTreeSet<String> = tokens(b).collect();
    if ta.is_empty() || tb.is_empty() {
        return 0.0;
    }
    let common = ta.intersection(&tb).count();
    common as f64 / ta.len().max(tb.len()) as f64
}

/// Why a request was judged a duplicate (the text after `match reason: ` in
/// `make_feature_request`'s merge message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchReason {
    /// best title similarity `>= 0.995`
    ExactTitle,
    /// best title similarity `>= 0.92`
    VerySimilarTitle,
    /// best title similarity `>= 0.8` and token overlap `>= 0.6`
    StrongTitleOverlap,
    /// anything else
    Weak,
    /// the description rule: summary similarity `>= 0.72` and title overlap `>= 0.25`
    SimilarBehaviorDescription,
}

impl MatchReason {
    /// Elroy's text for the reason, e.g. `strong title overlap`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchReason::ExactTitle => "exact title match",
            MatchReason::VerySimilarTitle => "very similar title",
            MatchReason::StrongTitleOverlap => "strong title overlap",
            MatchReason::Weak => "weak match",
            MatchReason::SimilarBehaviorDescription => "similar behavior description",
        }
    }
}

impl std::fmt::Display for MatchReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a candidate request offers for matching: its canonical title, its aliases and its summary.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The canonical title.
    pub title: &'a str,
    /// The aliases (earlier titles merged into it).
    pub aliases: &'a [String],
    /// The summary.
    pub summary: &'a str,
}

/// The score of one candidate against a new `(title, description)` (Elroy's `_score_match`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// max `S(title, t)` over the candidate's title and aliases
    pub best_title: f64,
    /// max `O(title, t)` over the same
    pub overlap: f64,
    /// `S(description, summary)`
    pub summary: f64,
    /// max(`best_title`, 0.7·`best_title` + 0.15·`summary` + 0.15·`overlap`)
    pub combined: f64,
    /// The reason by the title thresholds.
    pub reason: MatchReason,
}

/// Scores one candidate (Elroy's `_score_match`).
pub fn score(title: &str, description: &str, candidate: Candidate<'_>) -> Score {
    let names =
        std::iter::once(candidate.title).chain(candidate.aliases.iter().map(String::as_str));
    let mut best_title = 0.0f64;
    let mut overlap = 0.0f64;
    for name in names {
        best_title = best_title.max(similarity(title, name));
        overlap = overlap.max(token_overlap(title, name));
    }
    let summary = similarity(description, candidate.summary);
    let combined = best_title.max(best_title * 0.7 + summary * 0.15 + overlap * 0.15);
    let reason = if best_title >= 0.995 {
        MatchReason::ExactTitle
    } else if best_title >= 0.92 {
        MatchReason::VerySimilarTitle
    } else if best_title >= 0.8 && overlap >= 0.6 {
        MatchReason::StrongTitleOverlap
    } else {
        MatchReason::Weak
    };
    Score {
        best_title,
        overlap,
        summary,
        combined,
        reason,
    }
}

/// The duplicate a new `(title, description)` merges into, if any (Elroy's
/// `find_best_feature_request_match`): `(index into candidates, reason)`.
///
/// The candidate with the highest `combined` score wins (the first on ties). It is a match when
/// `combined >= 0.92`, or `combined >= 0.82` with reason `strong title overlap`, or when
/// `S(description, summary) >= 0.72` and `O(title, its title) >= 0.25` (reason
/// `similar behavior description`).
pub fn best_match(
    title: &str,
    description: &str,
    candidates: &[Candidate<'_>],
) -> Option<(usize, MatchReason)> {
    let mut best: Option<(usize, Score)> = None;
    for (index, candidate) in candidates.iter().enumerate() {
        let s = score(title, description, *candidate);
        // Python's max() keeps the first of equal keys.
        if best.as_ref().is_none_or(|(_, b)| s.combined > b.combined) {
            best = Some((index, s));
        }
    }
    let (index, s) = best?;
    if s.combined >= 0.92 {
        return Some((index, s.reason));
    }
    if s.combined >= 0.82 && s.reason == MatchReason::StrongTitleOverlap {
        return Some((index, s.reason));
    }
    let candidate = candidates[index];
    if similarity(description, candidate.summary) >= 0.72
        && token_overlap(title, candidate.title) >= 0.25
    {
        return Some((index, MatchReason::SimilarBehaviorDescription));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_examples() {
        for text in [
            "add-calendar-sync",
            "Add calendar sync",
            "ADD  calendar_sync!",
        ] {
            assert_eq!(normalize(text), "add calendar sync");
        }
        assert_eq!(normalize("Café — für"), "caf f r");
        // Kind: composed and decomposed spellings of one name are one name.
        assert_eq!(normalize("Cafe\u{301} — fu\u{308}r"), "caf f r");
        assert_eq!(normalize("!!!"), "");
    }

    #[test]
    fn overlap_of_empty_sets_is_zero() {
        assert_eq!(token_overlap("", "a"), 0.0);
        assert_eq!(token_overlap("—", "—"), 0.0);
    }
}
