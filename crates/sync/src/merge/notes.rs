//! MEMORY.md and USER.md (formats.md §7): the `memory` tool's `- ` entries merge as sets, the
//! lines a person wrote stay in place.
//!
//! A line merge first (diff3): regions changed on one side take that side. Where both sides
//! changed a region, its lines merge as a set: ours' lines, minus lines of the base that theirs
//! removed (and ours kept unchanged), plus theirs' new lines. So an entry added on either side is
//! kept, removed on one side and unchanged on the other is removed, and removed on one side and
//! edited on the other keeps the edit (the edited line is new on its side). An entry both sides
//! added, in different places, is kept once.

use super::KindMerge;
use super::text::{Chunk, Lines, diff3, join, pick3};

pub(super) fn merge(base: &str, ours: &str, theirs: &str) -> KindMerge {
    let (b, o, t) = (Lines::split(base), Lines::split(ours), Lines::split(theirs));
    let mut out: Vec<&str> = Vec::new();
    for chunk in diff3(&b.lines, &o.lines, &t.lines) {
        match chunk {
            Chunk::Resolved(lines) => out.extend(lines),
            Chunk::Conflict { base, ours, theirs } => {
                out.extend(
                    ours.iter()
                        .filter(|l| !base.contains(l) || theirs.contains(l)),
                );
                out.extend(
                    theirs
                        .iter()
                        .filter(|l| !base.contains(l) && !ours.contains(l)),
                );
            }
        }
    }
    // An entry both sides added in different regions: keep its first occurrence (entries a side
    // holds several times stay as often as that side holds them).
    let count = |lines: &[&str], l: &str| lines.iter().filter(|x| **x == l).count();
    let mut seen: Vec<&str> = Vec::new();
    let mut deduped: Vec<&str> = Vec::new();
    for line in out {
        if line.starts_with("- ") {
            let n = seen.iter().filter(|x| **x == line).count();
            if n >= count(&o.lines, line).max(count(&t.lines, line)).max(1) {
                continue;
            }
            seen.push(line);
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
