//! Three-way line merge (diff3) on top of `similar`'s line matching.
//!
//! `similar` gives the longest-common-subsequence matching of the base against each side; the
//! diff3 walk below cuts the three texts at lines matched on both sides ("stable" lines) and
//! classifies each region between them: changed on one side (take it), changed identically on
//! both (take it once), or changed differently on both (a [`Chunk::Conflict`] that the caller
//! resolves by its file kind's rules). No conflict markers are ever produced.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

/// A text split into lines without their `\n`, and whether it ended with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lines<'a> {
    /// The lines, without terminators.
    pub lines: Vec<&'a str>,
    /// Whether the text ended with a line break.
    pub trailing_newline: bool,
}

impl<'a> Lines<'a> {
    /// Splits `text` at `\n`.
    pub fn split(text: &'a str) -> Lines<'a> {
        if text.is_empty() {
            return Lines {
                lines: Vec::new(),
                trailing_newline: false,
            };
        }
        let mut lines: Vec<&str> = text.split('\n').collect();
        let trailing_newline = text.ends_with('\n');
        if trailing_newline {
            lines.pop();
        }
        Lines {
            lines,
            trailing_newline,
        }
    }
}

/// Joins lines with `\n`, with a final `\n` when `trailing_newline` (and there is a line).
pub(crate) fn join(lines: &[&str], trailing_newline: bool) -> String {
    let mut out = lines.join("\n");
    if trailing_newline && !lines.is_empty() {
        out.push('\n');
    }
    out
}

/// One region of a three-way line merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Chunk<'a> {
    /// Lines both sides agree on (unchanged, or changed on one side only, or the same change).
    Resolved(Vec<&'a str>),
    /// A region both sides changed differently.
    Conflict {
        /// The base's lines of the region.
        base: Vec<&'a str>,
        /// Our lines of the region.
        ours: Vec<&'a str>,
        /// Their lines of the region.
        theirs: Vec<&'a str>,
    },
}

/// For each base line, the index of the line it is matched with in `other` (LCS matching).
fn matching(base: &[&str], other: &[&str]) -> Vec<Option<usize>> {
    // A deadline keeps a pathological pair of large files bounded; past it `similar` returns a
    // valid, less minimal diff (more conflicts, never a wrong merge).
    let deadline = Instant::now().checked_add(Duration::from_secs(2));
    let mut out = vec![None; base.len()];
    for op in capture_diff_slices_deadline(Algorithm::Myers, base, other, deadline) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                if let Some(slot) = out.get_mut(old_index + k) {
                    *slot = Some(new_index + k);
                }
            }
        }
    }
    out
}

/// The diff3 chunks of three line sequences.
pub(crate) fn diff3<'a>(base: &[&'a str], ours: &[&'a str], theirs: &[&'a str]) -> Vec<Chunk<'a>> {
    let mo = matching(base, ours);
    let mt = matching(base, theirs);
    let (mut b, mut o, mut t) = (0, 0, 0);
    let mut chunks: Vec<Chunk<'a>> = Vec::new();
    let push_resolved = |chunks: &mut Vec<Chunk<'a>>, lines: &[&'a str]| {
        if lines.is_empty() {
            return;
        }
        if let Some(Chunk::Resolved(last)) = chunks.last_mut() {
            last.extend_from_slice(lines);
        } else {
            chunks.push(Chunk::Resolved(lines.to_vec()));
        }
    };
    loop {
        let start = b;
        while b < base.len() && mo[b] == Some(o) && mt[b] == Some(t) {
            b += 1;
            o += 1;
            t += 1;
        }
        push_resolved(&mut chunks, &base[start..b]);
        if b >= base.len() && o >= ours.len() && t >= theirs.len() {
            break;
        }
        // The next base line matched on both sides (monotone matchings: its partners are at or
        // after `o` and `t`), or the ends.
        let mut k = b;
        let (oe, te) = loop {
            if k >= base.len() {
                break (ours.len(), theirs.len());
            }
            if let (Some(x), Some(y)) = (mo[k], mt[k]) {
                break (x, y);
            }
            k += 1;
        };
        let (bc, oc, tc) = (&base[b..k], &ours[o..oe], &theirs[t..te]);
        if oc == bc {
            push_resolved(&mut chunks, tc);
        } else if tc == bc || oc == tc {
            push_resolved(&mut chunks, oc);
        } else {
            chunks.push(Chunk::Conflict {
                base: bc.to_vec(),
                ours: oc.to_vec(),
                theirs: tc.to_vec(),
            });
        }
        (b, o, t) = (k, oe, te);
    }
    chunks
}

/// The three-way choice for a value: the side that changed it, or `None` when both changed it
/// differently.
pub(crate) fn pick3<'v, T: PartialEq + ?Sized>(
    base: &'v T,
    ours: &'v T,
    theirs: &'v T,
) -> Option<&'v T> {
    if ours == theirs || theirs == base {
        Some(ours)
    } else if ours == base {
        Some(theirs)
    } else {
        None
    }
}

/// Merges three texts line by line; `None` when a region was changed differently on both sides.
/// The final line break follows the side that changed it.
pub(crate) fn merge_text(base: &str, ours: &str, theirs: &str) -> Option<String> {
    if let Some(same) = pick3(base, ours, theirs) {
        return Some(same.to_owned());
    }
    let (b, o, t) = (Lines::split(base), Lines::split(ours), Lines::split(theirs));
    let mut out: Vec<&str> = Vec::new();
    for chunk in diff3(&b.lines, &o.lines, &t.lines) {
        match chunk {
            Chunk::Resolved(lines) => out.extend(lines),
            Chunk::Conflict { .. } => return None,
        }
    }
    let trailing = *pick3(
        &b.trailing_newline,
        &o.trailing_newline,
        &t.trailing_newline,
    )
    .unwrap_or(&o.trailing_newline);
    Some(join(&out, trailing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sided_and_disjoint_changes_merge() {
        let base = "a\nb\nc\nd\ne\n";
        let ours = "a\nB\nc\nd\ne\n";
        let theirs = "a\nb\nc\nd\nE\nf\n";
        assert_eq!(
            merge_text(base, ours, theirs).as_deref(),
            Some("a\nB\nc\nd\nE\nf\n")
        );
    }

    #[test]
    fn the_same_change_on_both_sides_is_taken_once() {
        assert_eq!(
            merge_text("a\nb", "a\nx\nb", "a\nx\nb").as_deref(),
            Some("a\nx\nb")
        );
        assert_eq!(
            merge_text("a\nb\nc", "a\nc", "a\nc\nd").as_deref(),
            Some("a\nc\nd")
        );
    }

    #[test]
    fn overlapping_changes_conflict() {
        assert_eq!(merge_text("a\nb\nc", "a\nX\nc", "a\nY\nc"), None);
        assert_eq!(merge_text("", "one", "two"), None);
        let chunks = diff3(&["a", "b", "c"], &["a", "X", "c"], &["a", "Y", "c"]);
        assert_eq!(
            chunks,
            vec![
                Chunk::Resolved(vec!["a"]),
                Chunk::Conflict {
                    base: vec!["b"],
                    ours: vec!["X"],
                    theirs: vec!["Y"]
                },
                Chunk::Resolved(vec!["c"]),
            ]
        );
    }

    #[test]
    fn the_final_line_break_follows_the_side_that_changed_it() {
        assert_eq!(
            merge_text("a\nb", "a\nb\n", "A\nb").as_deref(),
            Some("A\nb\n")
        );
        assert_eq!(
            merge_text("a\nb\n", "a\nb\n", "A\nb").as_deref(),
            Some("A\nb")
        );
    }
}
