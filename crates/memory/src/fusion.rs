//! Score fusion of the keyword leg with the embedding leg (`docs/behaviour.md#fusion-and-selection`):
//! every candidate of either leg scores its cosine similarity with the question plus
//! [`KEYWORD_WEIGHT`] × its keyword relevance.
//!
//! A memory without a current vector (written by a process that exited before its vector was
//! computed, or whose vector is stale) has no cosine. It is ranked on the same scale by what is
//! known of it: its cosine is estimated as the mean similarity of the keyword hits that have a
//! vector (else of the embedding leg's items), and it never ends below the place the keyword
//! leg alone gives it. So a store that is only partly embedded ranks its unembedded memories as
//! keywords alone would, and its embedded ones as the full fusion would.

use std::collections::HashMap;

/// The weight of the keyword relevance against the cosine similarity when both legs run
/// ([`fuse_scores`], `docs/behaviour.md#fusion-and-selection`): an item's score is its cosine
/// similarity plus this times its keyword relevance (the best keyword hit has relevance 1).
/// Tuned on LoCoMo's development conversations (`cargo xtask bench --recall --split dev`).
pub const KEYWORD_WEIGHT: f64 = 0.4;

/// Score fusion of the keyword leg with the embedding leg (`docs/behaviour.md#fusion-and-selection`).
///
/// - `keywords`: `(id, relevance)` from [`crate::recall::keyword_leg_scored`], best first
///   (relevance in `(0, 1]`).
/// - `embedding`: `(id, cosine)` of the embedding leg, best first.
/// - `similarity`: the cosine of keyword hits outside `embedding` that have a current vector.
///
/// The candidates are the items of either leg; each scores its cosine (from `embedding`, else
/// from `similarity`) plus [`KEYWORD_WEIGHT`] times its keyword relevance (0 when the keyword leg
/// did not find it). A keyword hit in neither map has no vector: its cosine is estimated (the
/// mean cosine of the keyword hits with a vector, else of `embedding`, else 0), and afterwards it
/// is moved up to its keyword rank when fusion placed it lower. Higher score first, ties by
/// lower id.
pub fn fuse_scores(
    keywords: &[(i64, f64)],
    embedding: &[(i64, f32)],
    similarity: &HashMap<i64, f32>,
) -> Vec<i64> {
    fuse_in_context(keywords, embedding, similarity, &Context::default())
}

/// The memories written next to the candidates of a search, and how much they count
/// ([`fuse_in_context`]).
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// For a candidate, the memories written just before and after it in the same sitting.
    pub neighbours: HashMap<i64, Vec<i64>>,
    /// How much of its best neighbour's score a memory gains (0: none).
    pub weight: f64,
}

/// [`fuse_scores`], where a memory also gains `context.weight` times the score of its best
/// neighbour (a turn of a conversation is understood with the turns around it: the question
/// before an answer names what the answer is about). A neighbour that neither leg found joins
/// the candidates with its own cosine (from `similarity`, else 0) plus that share of its
/// neighbour's score. Keyword hits without a vector keep their floor at their keyword rank.
pub fn fuse_in_context(
    keywords: &[(i64, f64)],
    embedding: &[(i64, f32)],
    similarity: &HashMap<i64, f32>,
    context: &Context,
) -> Vec<i64> {
    fuse_inner(keywords, embedding, similarity, context, true)
}

/// The keyword leg alone (no embedder) with `context`: each hit scores its keyword relevance
/// (times [`KEYWORD_WEIGHT`]) plus `context.weight` times its best neighbour's. Only hits are
/// returned: without vectors a memory that shares no word with the question is not offered.
pub fn keywords_in_context(keywords: &[(i64, f64)], context: &Context) -> Vec<i64> {
    let mut order = fuse_inner(keywords, &[], &HashMap::new(), context, false);
    order.retain(|id| keywords.iter().any(|(k, _)| k == id));
    order
}

fn fuse_inner(
    keywords: &[(i64, f64)],
    embedding: &[(i64, f32)],
    similarity: &HashMap<i64, f32>,
    context: &Context,
    floor: bool,
) -> Vec<i64> {
    let known: HashMap<i64, f64> = embedding
        .iter()
        .map(|(id, s)| (*id, f64::from(*s)))
        .chain(similarity.iter().map(|(id, s)| (*id, f64::from(*s))))
        .collect();
    let estimate = unknown_cosine(keywords, embedding, &known);
    let mut scores: HashMap<i64, f64> = embedding
        .iter()
        .map(|(id, s)| (*id, f64::from(*s)))
        .collect();
    // Keyword hits without a vector, with their keyword rank (0-based), in keyword order.
    let mut unembedded = Vec::new();
    for (rank, (id, relevance)) in keywords.iter().enumerate() {
        let cosine = known.get(id).copied().unwrap_or_else(|| {
            unembedded.push((rank, *id));
            estimate
        });
        scores.insert(*id, cosine + KEYWORD_WEIGHT * relevance);
    }
    if context.weight > 0.0 {
        let base = scores.clone();
        let own = |id: &i64| base.get(id).or_else(|| known.get(id)).copied();
        for (id, neighbours) in &context.neighbours {
            let Some(score) = base.get(id) else { continue };
            let best = neighbours
                .iter()
                .filter_map(own)
                .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
            if let Some(best) = best {
                *scores.entry(*id).or_default() += context.weight * best;
            }
            for n in neighbours.iter().filter(|n| !base.contains_key(n)) {
                let lifted = known.get(n).copied().unwrap_or(0.0) + context.weight * score;
                let e = scores.entry(*n).or_insert(lifted);
                *e = e.max(lifted);
            }
        }
    }
    let mut items: Vec<(i64, f64)> = scores.into_iter().collect();
    items.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut order: Vec<i64> = items.into_iter().map(|(id, _)| id).collect();
    if floor {
        floor_at_keyword_rank(&mut order, &unembedded);
    }
    order
}

/// The cosine assumed for a keyword hit without a vector: the mean cosine of the keyword hits
/// that have one, else of the embedding leg's items, else 0 (no vector is known at all: the
/// keyword relevance alone orders the items).
fn unknown_cosine(
    keywords: &[(i64, f64)],
    embedding: &[(i64, f32)],
    known: &HashMap<i64, f64>,
) -> f64 {
    let with_vectors: Vec<f64> = keywords
        .iter()
        .filter_map(|(id, _)| known.get(id).copied())
        .collect();
    let mean = |v: &[f64]| {
        if v.is_empty() {
            None
        } else {
            Some(v.iter().sum::<f64>() / v.len() as f64)
        }
    };
    mean(&with_vectors)
        .or_else(|| {
            mean(
                &embedding
                    .iter()
                    .map(|(_, s)| f64::from(*s))
                    .collect::<Vec<_>>(),
            )
        })
        .unwrap_or(0.0)
}

/// Moves each item of `unembedded` (`(keyword rank, id)`, in keyword order) up to its keyword
/// rank when `order` placed it lower. Taken in keyword order, an item moved later goes to a
/// place after every one already placed, so none of them is pushed back below its rank.
fn floor_at_keyword_rank(order: &mut Vec<i64>, unembedded: &[(usize, i64)]) {
    for &(rank, id) in unembedded {
        if let Some(at) = order.iter().position(|x| *x == id)
            && at > rank
        {
            order.remove(at);
            order.insert(rank, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cosine plus 0.4 × keyword relevance when every item has a vector. The best keyword hit
    /// (relevance 1) with a middling similarity (0.5 + 0.4) beats a closer vector that no keyword
    /// found (0.8); a far keyword hit (0.1 + 0.4 × 0.5) loses to it, and a keyword hit outside the
    /// embedding leg takes its similarity from `similarity` (0.45 + 0.4 × 0.25 = 0.55).
    #[test]
    fn score_fusion_weighs_keyword_relevance() {
        let keywords = [(1, 1.0), (2, 0.5), (3, 0.25)];
        let embedding = [(4, 0.8f32), (1, 0.5), (2, 0.1)];
        let similarity: HashMap<i64, f32> = [(3, 0.45)].into_iter().collect();
        assert_eq!(
            fuse_scores(&keywords, &embedding, &similarity),
            [1, 4, 3, 2]
        );
    }

    /// A keyword hit without a vector is estimated at the mean cosine of the keyword hits with
    /// one, not at 0: item 3 (no vector, relevance 0.5, keyword rank 3) scores (0.5 + 0.1) / 2 +
    /// 0.2 = 0.5 and ranks above 2 (0.1 + 0.36), where a cosine of 0 would have put it last
    /// (0.2); the floor does not move it (it is above its keyword rank).
    #[test]
    fn a_missing_vector_is_estimated_on_the_same_scale() {
        let keywords = [(1, 1.0), (2, 0.9), (3, 0.5)];
        let embedding = [(4, 0.8f32), (1, 0.5), (2, 0.1)];
        assert_eq!(
            fuse_scores(&keywords, &embedding, &HashMap::new()),
            [1, 4, 3, 2]
        );
    }

    /// The floor: a keyword hit without a vector never ends below its keyword rank, however
    /// close the other vectors are. Keyword order 10, 11, 12; 10 has no vector while five
    /// embedded memories no keyword found score far above it: it stays first. Another of the
    /// kind: two unembedded hits (ranks 0 and 2) both keep their places.
    #[test]
    fn a_missing_vector_never_ranks_below_keywords_alone() {
        let keywords = [(10, 1.0), (11, 0.9), (12, 0.8)];
        let embedding = [
            (1, 0.95f32),
            (2, 0.94),
            (3, 0.93),
            (4, 0.92),
            (5, 0.91),
            (11, 0.2),
        ];
        let sim: HashMap<i64, f32> = [(12, 0.1)].into_iter().collect();
        let order = fuse_scores(&keywords, &embedding, &sim);
        assert_eq!(order[0], 10);
        let keywords = [(10, 1.0), (11, 0.9), (12, 0.8)];
        let embedding = [(1, 0.95f32), (2, 0.94), (3, 0.93), (11, 0.9)];
        let order = fuse_scores(&keywords, &embedding, &HashMap::new());
        assert_eq!(order.iter().position(|x| *x == 10), Some(0));
        assert!(order.iter().position(|x| *x == 12).unwrap_or(usize::MAX) <= 2);
    }

    /// With no vector at all the keyword order stands exactly.
    #[test]
    fn no_vectors_keep_the_keyword_order() {
        let keywords = [(7, 1.0), (3, 0.6), (9, 0.6), (1, 0.2)];
        assert_eq!(fuse_scores(&keywords, &[], &HashMap::new()), [7, 3, 9, 1]);
    }

    /// Neighbour context: the turn after a strong hit (the answer to the question the hit asks)
    /// joins the candidates above a weaker hit that has no neighbour found, and a hit whose
    /// neighbour is strong rises above an equal one whose is not. Keywords alone the same way.
    #[test]
    fn a_strong_hit_lifts_its_neighbours() {
        let keywords = [(1, 1.0), (5, 0.5), (8, 0.5)];
        let embedding = [(1, 0.6f32), (5, 0.3), (8, 0.3)];
        let similarity: HashMap<i64, f32> = [(2, 0.35f32), (9, 0.1)].into_iter().collect();
        let context = Context {
            neighbours: [(1, vec![2]), (8, vec![9])].into_iter().collect(),
            weight: 0.5,
        };
        // 1: 1.0 + 0.5 × 0.35; 2: 0.35 + 0.5 × 1.0 = 0.85; 8: 0.5 + 0.05; 5: 0.5; 9: 0.1 + 0.25.
        assert_eq!(
            fuse_in_context(&keywords, &embedding, &similarity, &context),
            [1, 2, 8, 5, 9]
        );
        assert_eq!(fuse_scores(&keywords, &embedding, &similarity), [1, 5, 8]);
        let context = Context {
            neighbours: [(8, vec![1])].into_iter().collect(),
            weight: 0.5,
        };
        assert_eq!(
            keywords_in_context(&[(1, 1.0), (5, 0.5), (8, 0.5)], &context),
            [1, 8, 5]
        );
    }
}
