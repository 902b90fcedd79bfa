//! The pure part of memory consolidation (`docs/behaviour.md#consolidation` steps 1–5): TF-IDF
//! vectors, cosine distance, the DBSCAN variant, trimming and ordering of clusters. No IO: the
//! caller gathers the active memories (ids and renderings, or stored embeddings) and runs the model
//! call.
//!
//! Floating-point ties: mean distances are compared after rounding to 1e-9, so two means that
//! differ only by rounding noise count as equal and the id decides, as the spec's "ties by id"
//! intends.

use std::collections::{HashMap, VecDeque};

/// The clustering settings (`docs/configuration.md` keys).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClusterParams {
    /// `memory_cluster_similarity_threshold` (default 0.21125): the largest cosine distance at
    /// which two memories are neighbours (inclusive).
    pub threshold: f64,
    /// `min_memory_cluster_size` (default 3): neighbours (the point itself included) a core point
    /// needs.
    pub min_size: usize,
    /// `max_memory_cluster_size` (default 5): members kept per cluster.
    pub max_size: usize,
    /// How many clusters are kept (3).
    pub keep: usize,
}

impl Default for ClusterParams {
    fn default() -> Self {
        ClusterParams {
            threshold: 0.21125,
            min_size: 3,
            max_size: 5,
            keep: 3,
        }
    }
}

/// The TF-IDF tokens of a text: lower-cased (Unicode), split at every character that is neither
/// a letter nor a digit, empty pieces dropped; no stop-word or length filter, no de-duplication
/// (`docs/behaviour.md#consolidation` step 1).
pub fn tfidf_tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// TF-IDF vectors of `documents` (`docs/behaviour.md#consolidation` step 1): term frequency =
/// count, `idf = ln(N / df) + 1` over the `N` documents, L2-normalised. The dimensions are the
/// terms in order of first appearance; all vectors have the same length. A document without tokens
/// gets the zero vector.
pub fn tfidf_vectors(documents: &[&str]) -> Vec<Vec<f64>> {
    let tokenized: Vec<Vec<String>> = documents.iter().map(|d| tfidf_tokens(d)).collect();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut df: Vec<usize> = Vec::new();
    for tokens in &tokenized {
        let mut seen_here: Vec<usize> = Vec::new();
        for t in tokens {
            let next = index.len();
            let i = *index.entry(t.as_str()).or_insert(next);
            if i == df.len() {
                df.push(0);
            }
            if !seen_here.contains(&i) {
                seen_here.push(i);
                df[i] += 1;
            }
        }
    }
    let n = documents.len() as f64;
    let idf: Vec<f64> = df.iter().map(|&d| (n / d as f64).ln() + 1.0).collect();
    tokenized
        .iter()
        .map(|tokens| {
            let mut v = vec![0.0; idf.len()];
            for t in tokens {
                if let Some(&i) = index.get(t.as_str()) {
                    v[i] += 1.0;
                }
            }
            for (x, w) in v.iter_mut().zip(&idf) {
                *x *= w;
            }
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
            v
        })
        .collect()
}

/// Cosine distance `1 − cos(a, b)` (`docs/behaviour.md#consolidation` step 2); 1 when either vector
/// is zero or the lengths differ.
pub fn cosine_distance(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return 1.0;
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    1.0 - dot / (na * nb)
}

/// The symmetric distance matrix of `vectors`: [`cosine_distance`] of every pair, with each
/// vector's norm and non-zero entries computed once. The sums run over the same terms in the same
/// order as in [`cosine_distance`] (a zero term changes no sum), so the distances are the same
/// bits; but the work is the shared non-zero entries, not the dimensions: 500 TF-IDF vectors
/// over a vocabulary of thousands took seconds pair by pair (after-turn work).
pub fn distance_matrix(vectors: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = vectors.len();
    let sparse: Vec<Vec<(usize, f64)>> = vectors
        .iter()
        .map(|v| {
            v.iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .map(|(i, x)| (i, *x))
                .collect()
        })
        .collect();
    let norms: Vec<f64> = vectors
        .iter()
        .map(|v| v.iter().map(|x| x * x).sum::<f64>().sqrt())
        .collect();
    let mut d = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let x = if vectors[i].len() != vectors[j].len() || norms[i] == 0.0 || norms[j] == 0.0 {
                1.0
            } else {
                1.0 - sparse_dot(&sparse[i], &sparse[j]) / (norms[i] * norms[j])
            };
            d[i][j] = x;
            d[j][i] = x;
        }
    }
    d
}

/// The dot product of two vectors given by their non-zero entries in index order.
fn sparse_dot(a: &[(usize, f64)], b: &[(usize, f64)]) -> f64 {
    let (mut i, mut j) = (0, 0);
    let mut products = Vec::new();
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                products.push(a[i].1 * b[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    products.into_iter().sum()
}

/// DBSCAN as `docs/behaviour.md#consolidation` step 3 describes, over points `0..n` in that order
/// (the caller orders them by memory id). A point is core when at least `min_size` points, itself
/// included, lie within `threshold` (inclusive). Clusters grow from core points in point order:
/// every point within the threshold of a core point of the cluster joins it (core points it
/// reaches grow it further); a non-core point stays in the first cluster that reached it. Points
/// in no cluster are left out. Returns the clusters in creation order, members ascending.
pub fn dbscan(dist: &[Vec<f64>], threshold: f64, min_size: usize) -> Vec<Vec<usize>> {
    let n = dist.len();
    let neighbours: Vec<Vec<usize>> = (0..n)
        .map(|i| (0..n).filter(|&j| dist[i][j] <= threshold).collect())
        .collect();
    let core: Vec<bool> = neighbours.iter().map(|nb| nb.len() >= min_size).collect();
    let mut label: Vec<Option<usize>> = vec![None; n];
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for start in 0..n {
        if !core[start] || label[start].is_some() {
            continue;
        }
        let c = clusters.len();
        let mut members = vec![start];
        label[start] = Some(c);
        let mut queue = VecDeque::from([start]);
        while let Some(p) = queue.pop_front() {
            for &q in &neighbours[p] {
                if label[q].is_some() {
                    continue;
                }
                label[q] = Some(c);
                members.push(q);
                if core[q] {
                    queue.push_back(q);
                }
            }
        }
        members.sort_unstable();
        clusters.push(members);
    }
    clusters
}

/// `x` rounded to 1e-9, for tie-aware comparisons.
fn tie_key(x: f64) -> i64 {
    (x * 1e9).round() as i64
}

/// The mean distance of `member` to the other points of `cluster` (0 for a single point).
fn mean_to_others(member: usize, cluster: &[usize], dist: &[Vec<f64>]) -> f64 {
    let others: Vec<f64> = cluster
        .iter()
        .filter(|&&o| o != member)
        .map(|&o| dist[member][o])
        .collect();
    if others.is_empty() {
        0.0
    } else {
        others.iter().sum::<f64>() / others.len() as f64
    }
}

/// The mean distance over all pairs of `cluster` (0 below two points).
pub fn mean_pairwise_distance(cluster: &[usize], dist: &[Vec<f64>]) -> f64 {
    let mut sum = 0.0;
    let mut pairs = 0usize;
    for (k, &i) in cluster.iter().enumerate() {
        for &j in &cluster[k + 1..] {
            sum += dist[i][j];
            pairs += 1;
        }
    }
    if pairs == 0 { 0.0 } else { sum / pairs as f64 }
}

/// Trims `cluster` to the `max_size` members with the lowest mean distance to the other members
/// (`docs/behaviour.md#consolidation` step 4; ties by lower point index, i.e. lower id). The result
/// is ascending.
pub fn trim(cluster: &[usize], dist: &[Vec<f64>], max_size: usize) -> Vec<usize> {
    if cluster.len() <= max_size {
        return cluster.to_vec();
    }
    let mut scored: Vec<(i64, usize)> = cluster
        .iter()
        .map(|&m| (tie_key(mean_to_others(m, cluster, dist)), m))
        .collect();
    scored.sort_unstable();
    let mut kept: Vec<usize> = scored.into_iter().take(max_size).map(|(_, m)| m).collect();
    kept.sort_unstable();
    kept
}

/// The clusters to merge, as memory ids (`docs/behaviour.md#consolidation` steps 3–5): `items` are
/// `(memory id, vector)` (ordered by id here), clustered with [`dbscan`], each cluster trimmed
/// with [`trim`], ordered by size (descending), then mean pairwise distance (ascending), then
/// smallest member id; the first `params.keep` are returned, members ascending by id.
pub fn clusters(items: &[(i64, Vec<f64>)], params: &ClusterParams) -> Vec<Vec<i64>> {
    let mut sorted: Vec<&(i64, Vec<f64>)> = items.iter().collect();
    sorted.sort_by_key(|(id, _)| *id);
    let vectors: Vec<Vec<f64>> = sorted.iter().map(|(_, v)| v.clone()).collect();
    let dist = distance_matrix(&vectors);
    let mut found: Vec<(usize, i64, i64, Vec<i64>)> =
        dbscan(&dist, params.threshold, params.min_size)
            .iter()
            .map(|c| trim(c, &dist, params.max_size))
            .map(|c| {
                let ids: Vec<i64> = c.iter().map(|&i| sorted[i].0).collect();
                let smallest = ids.first().copied().unwrap_or(i64::MAX);
                (
                    c.len(),
                    tie_key(mean_pairwise_distance(&c, &dist)),
                    smallest,
                    ids,
                )
            })
            .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    found
        .into_iter()
        .take(params.keep)
        .map(|(_, _, _, ids)| ids)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit vector at `degrees` on the plane: the distance of two such vectors is
    /// `1 − cos(Δ)`, so with the default threshold 0.21125 points up to ~37.9° apart are
    /// neighbours (35° → 0.1808, 40° → 0.2340).
    fn at(degrees: f64) -> Vec<f64> {
        let r = degrees.to_radians();
        vec![r.cos(), r.sin()]
    }

    fn params(min_size: usize, max_size: usize) -> ClusterParams {
        ClusterParams {
            min_size,
            max_size,
            ..ClusterParams::default()
        }
    }

    #[test]
    fn tokens_keep_everything_and_repeat() {
        assert_eq!(
            tfidf_tokens("#Dog\n\nThe dog, a Dog: is 2 y/o."),
            ["dog", "the", "dog", "a", "dog", "is", "2", "y", "o"]
        );
    }

    #[test]
    fn tfidf_by_hand() {
        // N = 2. "a": df 2 → idf 1; "b" and "c": df 1 → idf ln 2 + 1.
        let v = tfidf_vectors(&["a a b", "a c"]);
        let w = 2f64.ln() + 1.0;
        // doc 0: tf a=2, b=1 → (2, w, 0) / sqrt(4 + w²)
        let n0 = (4.0 + w * w).sqrt();
        let n1 = (1.0 + w * w).sqrt();
        let expect0 = [2.0 / n0, w / n0, 0.0];
        let expect1 = [1.0 / n1, 0.0, w / n1];
        for (got, want) in v[0].iter().zip(expect0) {
            assert!((got - want).abs() < 1e-12, "{v:?}");
        }
        for (got, want) in v[1].iter().zip(expect1) {
            assert!((got - want).abs() < 1e-12, "{v:?}");
        }
        let d = cosine_distance(&v[0], &v[1]);
        assert!((d - (1.0 - 2.0 / (n0 * n1))).abs() < 1e-12);
        // Identical documents are at distance 0; a document without tokens is at distance 1.
        let v = tfidf_vectors(&["x y", "x y", "!!"]);
        assert!(cosine_distance(&v[0], &v[1]).abs() < 1e-12);
        assert_eq!(cosine_distance(&v[0], &v[2]), 1.0);
    }

    /// The sparse distance matrix gives the same bits as [`cosine_distance`] pair by pair, for
    /// TF-IDF vectors (mostly zeros) and for dense ones, zero vectors and lengths that differ.
    #[test]
    fn the_distance_matrix_is_cosine_distance_pair_by_pair() {
        let docs = [
            "the dog Biscuit is a beagle",
            "Biscuit the beagle likes the park",
            "green tea no sugar",
            "",
            "tea in the park",
        ];
        let mut vectors = tfidf_vectors(&docs);
        vectors.push(vec![0.3, -0.2, 0.9]);
        vectors.push(vec![0.1, 0.4, -0.5]);
        let d = distance_matrix(&vectors);
        for i in 0..vectors.len() {
            for j in 0..vectors.len() {
                if i != j {
                    assert_eq!(
                        d[i][j].to_bits(),
                        cosine_distance(&vectors[i], &vectors[j]).to_bits(),
                        "{i} {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn core_points_need_min_size_neighbours_including_themselves() {
        // Three points within 10° of each other and one far away.
        let d = distance_matrix(&[at(0.0), at(5.0), at(10.0), at(120.0)]);
        assert_eq!(dbscan(&d, 0.21125, 3), vec![vec![0, 1, 2]]);
        // With min_size 4 nobody is core: no cluster.
        assert!(dbscan(&d, 0.21125, 4).is_empty());
        // A pair alone never makes a cluster of min_size 3.
        let d = distance_matrix(&[at(0.0), at(5.0), at(90.0), at(180.0)]);
        assert!(dbscan(&d, 0.21125, 3).is_empty());
    }

    #[test]
    fn a_non_core_point_joins_the_first_cluster_that_reaches_it() {
        // Two groups of four (0°–15°, 85°–100°) and X at 50°: 35° from 15° and from 85°
        // (neighbours), 40° from 10° and 90° (not). X has 3 neighbours with itself: not core for
        // min_size 4, but reachable from a core point of each group.
        let x = at(50.0);
        let left = [at(0.0), at(5.0), at(10.0), at(15.0)];
        let right = [at(85.0), at(90.0), at(95.0), at(100.0)];
        // Ids: left 1–4, right 5–8, X 9 → the left cluster grows first and takes X.
        let mut items: Vec<(i64, Vec<f64>)> = Vec::new();
        for (i, v) in left.iter().enumerate() {
            items.push((i as i64 + 1, v.clone()));
        }
        for (i, v) in right.iter().enumerate() {
            items.push((i as i64 + 5, v.clone()));
        }
        items.push((9, x.clone()));
        let p = params(4, 10);
        assert_eq!(
            clusters(&items, &p),
            vec![vec![1, 2, 3, 4, 9], vec![5, 6, 7, 8]]
        );
        // Ids swapped between the groups: now the right group grows first and takes X.
        let swapped: Vec<(i64, Vec<f64>)> = items
            .iter()
            .map(|(id, v)| match id {
                1..=4 => (id + 4, v.clone()),
                5..=8 => (id - 4, v.clone()),
                _ => (*id, v.clone()),
            })
            .collect();
        assert_eq!(
            clusters(&swapped, &p),
            vec![vec![1, 2, 3, 4, 9], vec![5, 6, 7, 8]]
        );
        // (the same ids, but now 1–4 are the right group: X went to the right group.)
        let right_ids: Vec<i64> = swapped
            .iter()
            .filter(|(_, v)| v[0] < 0.2)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(right_ids, vec![1, 2, 3, 4]);
    }

    #[test]
    fn core_points_chain_clusters_together() {
        // 0°, 30°, 60°, 90°: neighbours only at 30°; with min_size 2 every point is core and the
        // chain makes one cluster although 0° and 90° are far apart.
        let d = distance_matrix(&[at(0.0), at(30.0), at(60.0), at(90.0)]);
        assert_eq!(dbscan(&d, 0.21125, 2), vec![vec![0, 1, 2, 3]]);
    }

    #[test]
    fn trimming_keeps_the_densest_members_with_ties_by_id() {
        // Six points at 0°, 10°, …, 50° (a chain of core points). The two ends have the same,
        // largest mean distance; trimming to 5 drops the end with the higher id.
        let items: Vec<(i64, Vec<f64>)> = (0..6)
            .map(|k| (k as i64 + 1, at(10.0 * k as f64)))
            .collect();
        assert_eq!(clusters(&items, &params(3, 5)), vec![vec![1, 2, 3, 4, 5]]);
        // Reverse the ids (0° gets id 6, 50° id 1): the tie now keeps 50° (id 1) and drops 0°.
        let items: Vec<(i64, Vec<f64>)> = (0..6)
            .map(|k| (6 - k as i64, at(10.0 * k as f64)))
            .collect();
        assert_eq!(clusters(&items, &params(3, 5)), vec![vec![1, 2, 3, 4, 5]]);
        // Trimming to 4 drops both ends (the next means are the 10° and 40° points, tied).
        let items: Vec<(i64, Vec<f64>)> = (0..6)
            .map(|k| (k as i64 + 1, at(10.0 * k as f64)))
            .collect();
        assert_eq!(clusters(&items, &params(3, 4)), vec![vec![2, 3, 4, 5]]);
    }

    #[test]
    fn clusters_are_ordered_by_size_then_tightness_then_id_and_three_are_kept() {
        let mut items: Vec<(i64, Vec<f64>)> = Vec::new();
        let mut add = |id: i64, deg: f64| items.push((id, at(deg)));
        // A: ids 1–3, loose (0°, 15°, 30°).
        add(1, 0.0);
        add(2, 15.0);
        add(3, 30.0);
        // B: ids 4–6, tight (90°, 92°, 94°).
        add(4, 90.0);
        add(5, 92.0);
        add(6, 94.0);
        // C: ids 7–10, four members (180°…186°): the largest.
        add(7, 180.0);
        add(8, 182.0);
        add(9, 184.0);
        add(10, 186.0);
        // D: ids 11–13, as tight as B (270°, 272°, 274°): ties with B, smaller id first.
        add(11, 270.0);
        add(12, 272.0);
        add(13, 274.0);
        let all = clusters(
            &items,
            &ClusterParams {
                keep: 10,
                ..ClusterParams::default()
            },
        );
        assert_eq!(
            all,
            vec![
                vec![7, 8, 9, 10],
                vec![4, 5, 6],
                vec![11, 12, 13],
                vec![1, 2, 3]
            ]
        );
        // Only three are kept by default.
        assert_eq!(
            clusters(&items, &ClusterParams::default()),
            all[..3].to_vec()
        );
    }
}
