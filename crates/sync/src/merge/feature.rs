//! Feature requests (`docs/formats.md#feature-requests`): keys key by key in the file's order
//! (`aliases` as a set, `updated_at` the later instant), sections as lines, the entries of `##
//! Supporting Context` as a set.

use elroy_markdown::Value;

use super::keys::{merge_keys, merge_sets};
use super::text::{merge_text, pick3};
use super::{Ctx, KindMerge, render};

/// The section whose blank-line-separated entries (one per capture or edit) merge as a set.
const RELATED: &str = "Supporting Context";

/// A body cut at its `## ` lines: the text before the first one, and (heading line, content
/// without trailing whitespace) per section.
fn sections(body: &str) -> (&str, Vec<(&str, &str)>) {
    let mut starts: Vec<usize> = Vec::new();
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        if line.starts_with("## ") {
            starts.push(offset);
        }
        offset += line.len();
    }
    let Some(&first) = starts.first() else {
        return (body, Vec::new());
    };
    let mut out = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(body.len());
        let block = &body[start..end];
        let (heading, content) = block.split_once('\n').unwrap_or((block, ""));
        out.push((heading, content.trim_end()));
    }
    (&body[..first], out)
}

fn name(heading: &str) -> &str {
    heading.trim_start_matches('#').trim()
}

/// A section's identity: its name and which occurrence of that name it is (a body may repeat a
/// heading; each occurrence merges with the same occurrence on the other sides).
type Key = (String, usize);

/// The sections of a body keyed by [`Key`].
fn keyed<'s>(list: &[(&'s str, &'s str)]) -> Vec<(Key, &'s str, &'s str)> {
    let mut out: Vec<(Key, &str, &str)> = Vec::new();
    for (heading, content) in list {
        let n = out
            .iter()
            .filter(|((k, _), _, _)| k == name(heading))
            .count();
        out.push(((name(heading).to_owned(), n), heading, content));
    }
    out
}

fn content_of<'s>(list: &[(Key, &'s str, &'s str)], key: &Key) -> Option<(&'s str, &'s str)> {
    list.iter()
        .find(|(k, _, _)| k == key)
        .map(|(_, h, c)| (*h, *c))
}

/// Merges one section's content; `None` when its lines conflict.
fn merge_section(section: &str, base: &str, ours: &str, theirs: &str) -> Option<String> {
    if section == RELATED {
        let entries = |s: &str| -> Vec<String> {
            s.split("\n\n")
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_owned)
                .collect()
        };
        return Some(merge_sets(&entries(base), &entries(ours), &entries(theirs)).join("\n\n"));
    }
    merge_text(base, ours, theirs)
}

pub(super) fn merge(
    ctx: &Ctx<'_>,
    base: Option<&str>,
    ours: &str,
    theirs: &str,
) -> Option<KindMerge> {
    let (b, o, t) = (ctx.parse_base(base)?, ctx.parse(ours)?, ctx.parse(theirs)?);
    let mut result = KindMerge::default();

    let mut front = merge_keys(
        &b.front_matter,
        &o.front_matter,
        &t.front_matter,
        ctx.theirs_later,
        &[],
        &mut result.clashes,
    );
    result
        .clashes
        .retain(|c| c.key != "aliases" && c.key != "updated_at");
    let key3 = |key: &str| {
        (
            b.front_matter.get(key),
            o.front_matter.get(key),
            t.front_matter.get(key),
        )
    };
    let (bu, ou, tu) = key3("updated_at");
    if pick3(&bu, &ou, &tu).is_none()
        && let (Some(ov), Some(tv)) = (ou, tu)
    {
        // Both edited: the later instant (same ISO 8601 form, so text order is time order).
        let later = if tv.as_str() > ov.as_str() { tv } else { ov };
        front.insert("updated_at", later.clone());
    }
    let (ba, oa, ta) = key3("aliases");
    if pick3(&ba, &oa, &ta).is_none() {
        let list = |v: Option<&Value>| match v {
            Some(Value::List(items)) => items.clone(),
            _ => Vec::new(),
        };
        front.insert(
            "aliases",
            Value::List(merge_sets(&list(ba), &list(oa), &list(ta))),
        );
    }

    // Body: section by section.
    let raw_body = match pick3(&b.raw_body, &o.raw_body, &t.raw_body) {
        Some(body) => body.clone(),
        None => {
            let (bp, bs) = sections(&b.raw_body);
            let (op, os) = sections(&o.raw_body);
            let (tp, ts) = sections(&t.raw_body);
            let (bs, os, ts) = (keyed(&bs), keyed(&os), keyed(&ts));
            let preamble = match merge_text(bp, op, tp) {
                Some(p) => p,
                None => {
                    result.sibling = true;
                    op.to_owned()
                }
            };
            // Every section of either side, ours' order first; each decided below.
            let keys = |list: &[(Key, &str, &str)]| -> Vec<Key> {
                list.iter().map(|(k, _, _)| k.clone()).collect()
            };
            let order = merge_sets(&[], &keys(&os), &keys(&ts));
            let mut merged: Vec<String> = Vec::new();
            for key in &order {
                let (bc, oc, tc) = (
                    content_of(&bs, key),
                    content_of(&os, key),
                    content_of(&ts, key),
                );
                let heading = oc.or(tc).map(|(h, _)| h).unwrap_or_default();
                let content = match (oc, tc) {
                    (Some((_, o)), Some((_, t))) => {
                        match merge_section(&key.0, bc.map(|(_, c)| c).unwrap_or_default(), o, t) {
                            Some(c) => Some(c),
                            None => {
                                result.sibling = true;
                                Some(o.to_owned())
                            }
                        }
                    }
                    // Removed on one side: gone when the other left it unchanged, else kept.
                    (Some((_, c)), None) | (None, Some((_, c))) => {
                        (bc.map(|(_, b)| b) != Some(c)).then(|| c.to_owned())
                    }
                    (None, None) => None,
                };
                if let Some(content) = content {
                    merged.push(if content.is_empty() {
                        heading.to_owned()
                    } else {
                        format!("{heading}\n{content}")
                    });
                }
            }
            if merged.is_empty() {
                preamble
            } else {
                format!("{preamble}{}\n", merged.join("\n\n"))
            }
        }
    };
    result.content = Some(render(&front, false, &raw_body, &[&o, &t]));
    Some(result)
}
