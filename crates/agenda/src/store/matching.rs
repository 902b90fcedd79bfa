//! Finding items: by `item_name` for agenda tools (`docs/tool-rules.md#finding-an-agenda-item`) and
//! by exact name for due-item tools (`docs/tool-rules.md#finding-a-due-item`), with the D6 rules
//! (exact matches win, sorted candidate lists, stems of Elroy-written files).

use std::sync::Arc;

use elroy_markdown::sanitize_filename;

use super::AGENDA_FALLBACK;
use crate::item::ItemView;
use crate::scan::{Entry, Snapshot};
use crate::{AgendaError, Kind};

pub(super) fn active_items(snap: &Snapshot) -> impl Iterator<Item = &ItemView> {
    snap.entries
        .iter()
        .filter_map(|e| e.item())
        .filter(|i| i.is_active())
}

pub(super) fn active_due(snap: &Snapshot) -> impl Iterator<Item = &ItemView> {
    active_items(snap).filter(|i| i.kind() == Kind::Due)
}

/// Finds an active due item by exact name, or (no `name` key) by sanitized name = stem (D6).
/// Names compare in NFC ([`elroy_markdown::normalize_name`]).
pub(super) fn find_due<'a>(snap: &'a Snapshot, name: &str) -> Option<&'a ItemView> {
    let name = &*elroy_markdown::normalize_name(name);
    let sanitized = sanitize_filename(name, AGENDA_FALLBACK);
    let mut by_key = None;
    let mut by_stem = None;
    for item in active_due(snap) {
        match &item.name_key {
            Some(key) if key == name => {
                by_key.get_or_insert(item);
            }
            None if elroy_markdown::normalize_name(&item.stem) == sanitized => {
                by_stem.get_or_insert(item);
            }
            _ => {}
        }
    }
    by_key.or(by_stem)
}

/// The most candidates [`candidate_stems`] hands to one query; more (a short substring) and the
/// match is made on every row.
const MAX_CANDIDATES: usize = 256;

/// The stems worth checking for `item_name` (`docs/tool-rules.md#finding-an-agenda-item`), from the
/// index's names (`(stem, name, always)`, [`crate::DbIndex`]'s `name_candidates`): the exact
/// matches (stem or name, ignoring case, in NFC) if any, else the stems containing it, plus the
/// rows marked `always` (to be read again, or broken). `None` when there are too many to ask for by
/// stem.
pub(super) fn candidate_stems(
    rows: &[(String, String, bool)],
    item_name: &str,
) -> Option<Vec<String>> {
    if item_name.trim().is_empty() {
        return Some(Vec::new());
    }
    let query = elroy_markdown::normalize_name(item_name).to_lowercase();
    let (mut exact, mut subs, mut always) = (Vec::new(), Vec::new(), Vec::new());
    for (stem, name, is_always) in rows {
        if *is_always {
            always.push(stem.clone());
            continue;
        }
        let stem_lower = elroy_markdown::normalize_name(stem).to_lowercase();
        if stem_lower == query || elroy_markdown::normalize_name(name).to_lowercase() == query {
            exact.push(stem.clone());
        } else if stem_lower.contains(query.as_str()) {
            subs.push(stem.clone());
        }
    }
    let mut stems = if exact.is_empty() { subs } else { exact };
    stems.extend(always);
    stems.sort_unstable();
    stems.dedup();
    (stems.len() <= MAX_CANDIDATES).then_some(stems)
}

/// Finds an agenda item by `item_name` (`docs/tool-rules.md#finding-an-agenda-item`, D6); returns
/// its stem.
pub(super) fn find_item(snap: &Snapshot, item_name: &str) -> Result<String, AgendaError> {
    let not_found = || AgendaError::new(format!("No agenda item found matching '{item_name}'."));
    if item_name.trim().is_empty() {
        return Err(not_found());
    }
    let query = elroy_markdown::normalize_name(item_name).to_lowercase();
    // Candidates: active parsed items, and unparsable files through their stem.
    let candidates: Vec<&Arc<Entry>> = snap
        .entries
        .iter()
        .filter(|e| e.item().is_none_or(ItemView::is_active))
        .collect();
    fn stem_lower(e: &Entry) -> std::borrow::Cow<'_, str> {
        match e {
            Entry::Item(i) => std::borrow::Cow::Borrowed(i.stem_lower.as_str()),
            Entry::Broken { stem, .. } => std::borrow::Cow::Owned(stem.to_lowercase()),
        }
    }
    let exact: Vec<&Arc<Entry>> = candidates
        .iter()
        .copied()
        .filter(|e| stem_lower(e) == query || e.item().is_some_and(|i| i.name_lower == query))
        .collect();
    let chosen = if exact.is_empty() {
        let subs: Vec<&Arc<Entry>> = candidates
            .iter()
            .copied()
            .filter(|e| stem_lower(e).contains(query.as_str()))
            .collect();
        pick(subs, item_name, not_found)?
    } else {
        pick(exact, item_name, not_found)?
    };
    match chosen.as_ref() {
        Entry::Item(item) => Ok(item.stem.clone()),
        Entry::Broken { message, .. } => Err(AgendaError::new(message.clone())),
    }
}

fn pick<'a>(
    matches: Vec<&'a Arc<Entry>>,
    item_name: &str,
    not_found: impl FnOnce() -> AgendaError,
) -> Result<&'a Arc<Entry>, AgendaError> {
    match matches.as_slice() {
        [] => Err(not_found()),
        [one] => Ok(one),
        many => {
            let mut stems: Vec<&str> = many.iter().map(|e| e.stem()).collect();
            stems.sort_unstable();
            Err(AgendaError::new(format!(
                "Multiple agenda items match '{item_name}': {}. Be more specific.",
                stems.join(", ")
            )))
        }
    }
}
