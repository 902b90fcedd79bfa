//! Key-by-key merge of front-matter mappings (agenda items, memories, feature requests).

use elroy_markdown::{Mapping, Value, emit_yaml};

use super::text::pick3;

/// A key both sides changed differently.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyClash {
    /// The key (a path such as `checklist[2].text` for nested values).
    pub key: String,
    /// The value kept in the file (`None`: the key is absent).
    pub kept: Option<Value>,
    /// The other side's value (`None`: absent there).
    pub other: Option<Value>,
}

/// YAML text of a value for the report (`''` for the empty string; the empty text when absent).
pub(crate) fn yaml_text(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return String::new();
    };
    let mut map = Mapping::new();
    map.insert("v", value.clone());
    let yaml = emit_yaml(&map, false);
    yaml.strip_prefix("v:")
        .map(|rest| rest.trim_start_matches([' ', '\n']).to_owned())
        .unwrap_or(yaml)
}

/// Merges three mappings key by key: a key changed on one side takes that side's value; changed
/// differently on both, the later side (`theirs_later`) wins and the clash is recorded. Keys in
/// `skip` are left out (the caller merges them). Order: ours' keys in ours' order, then keys only
/// theirs has, in theirs' order.
pub(crate) fn merge_keys(
    base: &Mapping,
    ours: &Mapping,
    theirs: &Mapping,
    theirs_later: bool,
    skip: &[&str],
    clashes: &mut Vec<KeyClash>,
) -> Mapping {
    let mut keys: Vec<&str> = ours.keys().collect();
    for key in theirs.keys() {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let mut out = Mapping::new();
    for key in keys {
        if skip.contains(&key) {
            continue;
        }
        let (b, o, t) = (base.get(key), ours.get(key), theirs.get(key));
        let value = match pick3(&b, &o, &t) {
            Some(v) => *v,
            None => {
                let (kept, other) = if theirs_later { (t, o) } else { (o, t) };
                clashes.push(KeyClash {
                    key: key.to_owned(),
                    kept: kept.cloned(),
                    other: other.cloned(),
                });
                kept
            }
        };
        if let Some(value) = value {
            out.insert(key, value.clone());
        }
    }
    out
}

/// Three-way merge of sets kept as lists, by equality: ours' items in ours' order, minus items of
/// the base that theirs removed, plus theirs' new items (not in the base nor in ours) placed after
/// the item that precedes them in theirs.
pub(crate) fn merge_sets<T: PartialEq + Clone>(base: &[T], ours: &[T], theirs: &[T]) -> Vec<T> {
    let mut out: Vec<T> = ours
        .iter()
        .filter(|item| !base.contains(item) || theirs.contains(item))
        .cloned()
        .collect();
    // Items of ours that are not in the base (ours' additions) stay before theirs' additions at the
    // same place.
    let mut at = 0;
    for item in theirs {
        if let Some(pos) = out.iter().position(|x| x == item) {
            at = pos + 1;
            continue;
        }
        if base.contains(item) {
            // Removed on our side, unchanged on theirs: stays removed.
            continue;
        }
        while at < out.len() && !base.contains(&out[at]) && !theirs.contains(&out[at]) {
            at += 1;
        }
        out.insert(at, item.clone());
        at += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_merge_three_ways() {
        let merged = merge_sets(&["a", "b", "c"], &["a", "c", "o"], &["a", "b", "t", "c"]);
        assert_eq!(merged, vec!["a", "t", "c", "o"]);
        // Added on both sides: once.
        assert_eq!(merge_sets(&["a"], &["a", "x"], &["a", "x"]), vec!["a", "x"]);
        // Removed on both sides, or on one and unchanged on the other.
        assert_eq!(merge_sets(&["a", "b"], &["b"], &["a"]), Vec::<&str>::new());
        // Appended on both sides: ours first, then theirs.
        assert_eq!(
            merge_sets(&["a"], &["a", "o"], &["a", "t"]),
            vec!["a", "o", "t"]
        );
    }

    #[test]
    fn yaml_text_of_values() {
        assert_eq!(yaml_text(Some(&Value::String("Re: x".into()))), "'Re: x'");
        assert_eq!(yaml_text(Some(&Value::Bool(true))), "true");
        assert_eq!(yaml_text(None), "");
        let list = Value::List(vec!["a".into(), "b".into()]);
        assert_eq!(yaml_text(Some(&list)), "- a\n- b");
    }
}
