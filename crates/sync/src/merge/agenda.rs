//! Agenda items and due items (`docs/formats.md#agenda-items`): keys key by key, checklist entries
//! by id, position and text, the main text as lines, the `## Updates` section as a union in time
//! order.

use elroy_markdown::{Mapping, Value};

use super::keys::{KeyClash, merge_keys, merge_sets};
use super::text::{merge_text, pick3};
use super::{Ctx, KindMerge, render};

/// Splits a stripped body into main text and updates (`docs/formats.md#the-updates-section`, as
/// elroy-agenda does).
fn split_updates(body: &str) -> (&str, &str) {
    const MARKER: &str = "\n## Updates\n\n";
    if let Some(pos) = body.find(MARKER) {
        return (
            body[..pos].trim_end(),
            body[pos + MARKER.len()..].trim_end(),
        );
    }
    if let Some(rest) = body.strip_prefix("## Updates\n") {
        return ("", rest.trim());
    }
    (body, "")
}

/// The entries of an updates section: each starts at a line `- **…`; other lines continue the
/// entry before them.
fn update_entries(updates: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for line in updates.lines() {
        match entries.last_mut() {
            Some(last) if !line.starts_with("- **") => {
                last.push('\n');
                last.push_str(line);
            }
            _ => entries.push(line.to_owned()),
        }
    }
    entries
}

/// An update's stamp (`YYYY-MM-DD HH:MM`), which orders updates in time.
fn stamp(entry: &str) -> Option<&str> {
    entry.strip_prefix("- **")?.split_once("**").map(|(s, _)| s)
}

/// Union of both sides' updates: ours in ours' order (minus base updates theirs removed or
/// edited), theirs' new updates inserted in time order.
fn merge_updates(base: &str, ours: &str, theirs: &str) -> Vec<String> {
    let (b, o, t) = (
        update_entries(base),
        update_entries(ours),
        update_entries(theirs),
    );
    let mut out: Vec<String> = o
        .iter()
        .filter(|e| !b.contains(e) || t.contains(e))
        .cloned()
        .collect();
    for entry in t {
        if b.contains(&entry) || out.contains(&entry) {
            continue;
        }
        let at = match stamp(&entry) {
            Some(s) => out
                .iter()
                .position(|x| stamp(x).is_some_and(|x| x > s))
                .unwrap_or(out.len()),
            None => out.len(),
        };
        out.insert(at, entry);
    }
    out
}

/// A checklist entry's id (`docs/formats.md#checklist-entries`: an integer, or a string holding
/// one).
fn entry_id(entry: &Value) -> Option<i64> {
    let Value::Map(map) = entry else { return None };
    match map.get("id")? {
        Value::Int(i) => Some(*i),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn entry_text(entry: &Value) -> Option<&str> {
    let Value::Map(map) = entry else { return None };
    map.get("text")?.as_str()
}

fn as_list(value: Option<&Value>) -> Vec<Value> {
    match value {
        Some(Value::List(items)) => items.clone(),
        _ => Vec::new(),
    }
}

/// Where a merged checklist entry came from.
#[derive(Clone, Copy, PartialEq)]
enum Origin {
    /// An entry of the base (its id).
    Base(i64),
    /// Added on our side.
    Ours,
    /// Added on theirs.
    Theirs,
}

/// Merges checklists: entries of the base matched by id (fields key by key; removed on one side
/// and unchanged on the other: removed; edited on the other: kept); entries added on each side
/// kept, theirs after ours at the same place, one entry when both added the same text; an added
/// entry whose id is taken gets max + 1.
fn merge_checklist(
    base: Option<&Value>,
    ours: Option<&Value>,
    theirs: Option<&Value>,
    theirs_later: bool,
    clashes: &mut Vec<KeyClash>,
) -> Vec<Value> {
    let (b, o, t) = (as_list(base), as_list(ours), as_list(theirs));
    // Entries without a usable id are opaque values: merged as a set.
    let opaque = |list: &[Value]| -> Vec<Value> {
        list.iter()
            .filter(|e| entry_id(e).is_none())
            .cloned()
            .collect()
    };
    let base_ids: Vec<i64> = b.iter().filter_map(entry_id).collect();
    let by_id = |list: &[Value], id: i64| list.iter().find(|e| entry_id(e) == Some(id)).cloned();
    let mut out: Vec<(Origin, Value)> = Vec::new();
    // A hand edit may repeat an id: only its first entry on a side is matched by id, the others
    // count as added on that side.
    let mut seen: Vec<i64> = Vec::new();
    for entry in &o {
        let Some(id) = entry_id(entry) else { continue };
        let repeated = seen.contains(&id);
        seen.push(id);
        if repeated || !base_ids.contains(&id) {
            out.push((Origin::Ours, entry.clone()));
            continue;
        }
        let base_entry = by_id(&b, id);
        match by_id(&t, id) {
            None if base_entry.as_ref() == Some(entry) => {} // removed by theirs
            None => out.push((Origin::Base(id), entry.clone())),
            Some(their_entry) => {
                let merged = merge_entry(
                    id,
                    base_entry.as_ref(),
                    entry,
                    &their_entry,
                    theirs_later,
                    clashes,
                );
                out.push((Origin::Base(id), merged));
            }
        }
    }
    let mut at = 0;
    seen.clear();
    for entry in &t {
        let Some(id) = entry_id(entry) else { continue };
        let repeated = seen.contains(&id);
        seen.push(id);
        let from_base = !repeated && base_ids.contains(&id);
        if from_base {
            if let Some(pos) = out
                .iter()
                .position(|(origin, _)| *origin == Origin::Base(id))
            {
                at = pos + 1;
                continue;
            }
            // Removed on our side: kept only when theirs edited it.
            if by_id(&b, id).as_ref() == Some(entry) {
                continue;
            }
        } else if out
            .iter()
            .any(|(origin, e)| *origin == Origin::Ours && entry_text(e) == entry_text(entry))
        {
            // Both sides added the same text: one entry (ours).
            continue;
        }
        let origin = if from_base {
            Origin::Base(id)
        } else {
            Origin::Theirs
        };
        let mut entry = entry.clone();
        if origin == Origin::Theirs && out.iter().any(|(_, e)| entry_id(e) == Some(id)) {
            let next = out
                .iter()
                .map(|(_, e)| e)
                .chain(&b)
                .chain(&t)
                .filter_map(entry_id)
                .max()
                .unwrap_or(0)
                .saturating_add(1);
            if let Value::Map(map) = &mut entry {
                map.insert("id", Value::Int(next));
            }
        }
        while at < out.len() && out[at].0 == Origin::Ours {
            at += 1;
        }
        out.insert(at, (origin, entry));
        at += 1;
    }
    let mut merged: Vec<Value> = out.into_iter().map(|(_, e)| e).collect();
    merged.extend(merge_sets(&opaque(&b), &opaque(&o), &opaque(&t)));
    merged
}

/// One checklist entry present on both sides: keys key by key, clashes named `checklist[ID].KEY`.
fn merge_entry(
    id: i64,
    base: Option<&Value>,
    ours: &Value,
    theirs: &Value,
    theirs_later: bool,
    clashes: &mut Vec<KeyClash>,
) -> Value {
    let empty = Mapping::new();
    let map = |v: Option<&Value>| match v {
        Some(Value::Map(m)) => m.clone(),
        _ => empty.clone(),
    };
    let mut inner = Vec::new();
    let merged = merge_keys(
        &map(base),
        &map(Some(ours)),
        &map(Some(theirs)),
        theirs_later,
        &[],
        &mut inner,
    );
    clashes.extend(inner.into_iter().map(|mut c| {
        c.key = format!("checklist[{id}].{}", c.key);
        c
    }));
    Value::Map(merged)
}

/// A `trigger_datetime` read back as a string is written unquoted, as elroy writes the instant
/// (`docs/formats.md#yaml-quoting-and-key-order`).
fn normalize_trigger(front: &mut Mapping) {
    let Some(Value::String(s)) = front.get("trigger_datetime") else {
        return;
    };
    let b = s.as_bytes();
    let canonical = b.len() == 25
        && s.ends_with("+00:00")
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 | 22 => *c == b':',
            19 => *c == b'+',
            _ => c.is_ascii_digit(),
        });
    if canonical {
        let s = s.clone();
        front.insert("trigger_datetime", Value::Timestamp(s));
    }
}

pub(super) fn merge(
    ctx: &Ctx<'_>,
    base: Option<&str>,
    ours: &str,
    theirs: &str,
) -> Option<KindMerge> {
    let (b, o, t) = (ctx.parse_base(base)?, ctx.parse(ours)?, ctx.parse(theirs)?);
    let mut result = KindMerge::default();

    // Front matter.
    let mut front = merge_keys(
        &b.front_matter,
        &o.front_matter,
        &t.front_matter,
        ctx.theirs_later,
        &["checklist"],
        &mut result.clashes,
    );
    let checklists = (
        b.front_matter.get("checklist"),
        o.front_matter.get("checklist"),
        t.front_matter.get("checklist"),
    );
    match pick3(&checklists.0, &checklists.1, &checklists.2) {
        Some(Some(v)) => front.insert("checklist", (*v).clone()),
        Some(None) => {}
        None => {
            let merged = merge_checklist(
                checklists.0,
                checklists.1,
                checklists.2,
                ctx.theirs_later,
                &mut result.clashes,
            );
            if !merged.is_empty() {
                front.insert("checklist", Value::List(merged));
            }
        }
    }
    normalize_trigger(&mut front);

    // Body: main text as lines, updates as a union.
    let (bm, bu) = split_updates(b.body_trimmed());
    let (om, ou) = split_updates(o.body_trimmed());
    let (tm, tu) = split_updates(t.body_trimmed());
    let main = match merge_text(bm, om, tm) {
        Some(main) => main,
        None => {
            result.sibling = true;
            om.to_owned()
        }
    };
    let updates = match pick3(bu, ou, tu) {
        Some(same) => same.to_owned(),
        None => merge_updates(bu, ou, tu).join("\n"),
    };
    let raw_body = if (main.as_str(), updates.as_str()) == (om, ou) {
        o.raw_body.clone()
    } else if (main.as_str(), updates.as_str()) == (tm, tu) {
        t.raw_body.clone()
    } else if updates.is_empty() {
        format!("\n{main}")
    } else {
        format!("\n{}", format!("{main}\n\n## Updates\n\n{updates}").trim())
    };
    result.content = Some(render(&front, true, &raw_body, &[&o, &t]));
    Some(result)
}
