//! A port of the part of Python's `difflib.SequenceMatcher` that [`ratio`] needs, with
//! `isjunk=None` and the default `autojunk=True` (CPython 3.12 `Lib/difflib.py`), over the
//! characters (Unicode scalar values) of two strings.
//!
//! Source: `docs/tool-rules.md#matching-feature-requests` ("Similarity") and CPython's
//! `SequenceMatcher.__chain_b`, `find_longest_match`, `get_matching_blocks` and `ratio`. Elroy
//! scores feature-request titles and summaries with it, so the numbers (and therefore the merge
//! decisions) must be identical.

use std::collections::HashMap;

/// Python's `SequenceMatcher(None, a, b).ratio()` for two strings compared character by
/// character: `2·M / (len(a) + len(b))`, where `M` is the total size of the matching blocks, or
/// `1.0` when both strings are empty. The result is in `[0.0, 1.0]`.
pub fn ratio(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let matches = Matcher::new(&a, &b).matched_len();
    let length = a.len() + b.len();
    if length == 0 {
        return 1.0;
    }
    // Python: 2.0 * matches / length (float multiply, then divide).
    2.0 * matches as f64 / length as f64
}

/// The `b`-side index of CPython's matcher: for each character of `b` that is not "popular", the
/// ascending positions where it occurs.
struct Matcher<'s> {
    a: &'s [char],
    b: &'s [char],
    b2j: HashMap<char, Vec<usize>>,
}

impl<'s> Matcher<'s> {
    /// `__chain_b` with `isjunk=None`, `autojunk=True`: when `len(b) >= 200`, every character that
    /// occurs more than `len(b) / 100 + 1` times (integer division) is popular and dropped from
    /// the index.
    fn new(a: &'s [char], b: &'s [char]) -> Self {
        let mut b2j: HashMap<char, Vec<usize>> = HashMap::new();
        for (j, &c) in b.iter().enumerate() {
            b2j.entry(c).or_default().push(j);
        }
        let n = b.len();
        if n >= 200 {
            let ntest = n / 100 + 1;
            b2j.retain(|_, positions| positions.len() <= ntest);
        }
        Matcher { a, b, b2j }
    }

    /// `find_longest_match(alo, ahi, blo, bhi)`: `(i, j, size)` of the first longest block of
    /// non-popular characters (smallest `i`, then smallest `j`), then extended on both sides by
    /// equal characters (popular ones included, since none is junk).
    fn find_longest_match(
        &self,
        alo: usize,
        ahi: usize,
        blo: usize,
        bhi: usize,
    ) -> (usize, usize, usize) {
        let (a, b) = (self.a, self.b);
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0usize);
        // j2len[j]: length of the match ending with a[i-1] and b[j].
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for (i, c) in a.iter().enumerate().take(ahi).skip(alo) {
            let mut newj2len: HashMap<usize, usize> = HashMap::new();
            if let Some(positions) = self.b2j.get(c) {
                for &j in positions {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let previous = match j.checked_sub(1) {
                        Some(pj) => j2len.get(&pj).copied().unwrap_or(0),
                        None => 0,
                    };
                    let k = previous + 1;
                    newj2len.insert(j, k);
                    if k > bestsize {
                        besti = i + 1 - k;
                        bestj = j + 1 - k;
                        bestsize = k;
                    }
                }
            }
            j2len = newj2len;
        }
        while besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && a[besti + bestsize] == b[bestj + bestsize]
        {
            bestsize += 1;
        }
        (besti, bestj, bestsize)
    }

    /// The total size of `get_matching_blocks()`: the longest block of the whole range, then the
    /// same recursively on the parts to its left and to its right. (Merging adjacent blocks, as
    /// CPython does afterwards, does not change the total.)
    fn matched_len(&self) -> usize {
        let mut total = 0;
        let mut queue = vec![(0, self.a.len(), 0, self.b.len())];
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let (i, j, k) = self.find_longest_match(alo, ahi, blo, bhi);
            if k == 0 {
                continue;
            }
            total += k;
            if alo < i && blo < j {
                queue.push((alo, i, blo, j));
            }
            if i + k < ahi && j + k < bhi {
                queue.push((i + k, ahi, j + k, bhi));
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_strings() {
        assert_eq!(ratio("", ""), 1.0);
        assert_eq!(ratio("abc", ""), 0.0);
        assert_eq!(ratio("", "abc"), 0.0);
    }

    #[test]
    fn python_docstring_example() {
        // difflib's docstring: SequenceMatcher(None, "abcd", "bcde").ratio() == 0.75;
        // and the "private Thread" example gives 0.866 (with isjunk, so not checked here).
        assert_eq!(ratio("abcd", "bcde"), 0.75);
        assert_eq!(ratio("abcd", "abcd"), 1.0);
    }

    #[test]
    fn first_longest_block_wins() {
        // The first longest block (smallest i, then j) is taken: "ab" at (0, 2) in b = "xyab ab".
        let a: Vec<char> = "ab".chars().collect();
        let b: Vec<char> = "xyab ab".chars().collect();
        let m = Matcher::new(&a, &b);
        assert_eq!(m.find_longest_match(0, 2, 0, 7), (0, 2, 2));
    }
}
