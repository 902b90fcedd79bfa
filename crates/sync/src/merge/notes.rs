//! MEMORY.md and USER.md (`docs/formats.md#notes-and-bootstrap-files`): the `memory` tool's `- `
//! entries merge as sets, the lines a person wrote stay in place.
//!
//! A line merge first (diff3): regions changed on one side take that side. Where both sides
//! changed a region, its lines merge as a set: ours' lines, minus lines of the base that theirs
//! removed (and ours kept unchanged), plus theirs' new lines. So an entry added on either side is
//! kept, removed on one side and unchanged on the other is removed, and removed on one side and
//! edited on the other keeps the edit (the edited line is new on its side). An entry both sides
//! added, in different places, is kept once.

use std::collections::{HashMap, HashSet};

use super::KindMerge;
use super::text::{Chunk, Lines, diff3, join, pick3};

/// How often each line occurs.
fn counts<'a>(lines: &[&'a str]) -> HashMap<&'a str, usize> {
    let mut out = HashMap::new();
    for line in lines {
        *out.entry(*line).or_insert(0) += 1;
    }
    out
}

pub(super) fn merge(base: &str, ours: &str, theirs: &str) -> KindMerge {
    let (b, o, t) = (Lines::split(base), Lines::split(ours), Lines::split(theirs));
    let mut out: Vec<&str> = Vec::new();
    for chunk in diff3(&b.lines, &o.lines, &t.lines) {
        match chunk {
            Chunk::Resolved(lines) => out.extend(lines),
            Chunk::Conflict { base, ours, theirs } => {
                let set = |lines: &[&'_ str]| -> HashSet<String> {
                    lines.iter().map(|l| (*l).to_owned()).collect()
                };
                let (bs, os, ts) = (set(&base), set(&ours), set(&theirs));
                out.extend(
                    ours.iter()
                        .filter(|l| !bs.contains(**l) || ts.contains(**l)),
                );
                out.extend(
                    theirs
                        .iter()
                        .filter(|l| !bs.contains(**l) && !os.contains(**l)),
                );
            }
        }
    }
    // An entry both sides added in different regions: keep its first occurrence (entries a side
    // holds several times stay as often as that side holds them).
    let (oc, tc) = (counts(&o.lines), counts(&t.lines));
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut deduped: Vec<&str> = Vec::new();
    for line in out {
        if line.starts_with("- ") {
            let allowed = oc
                .get(line)
                .copied()
                .unwrap_or(0)
                .max(tc.get(line).copied().unwrap_or(0))
                .max(1);
            let n = seen.entry(line).or_insert(0);
            if *n >= allowed {
                continue;
            }
            *n += 1;
        }
        deduped.push(line);
    }
    let trailing = *pick3(
        &b.trailing_newline,
        &o.trailing_newline,
        &t.trailing_newline,
    )
    .unwrap_or(&true);
    KindMerge::clean(join(&deduped, trailing))
}
