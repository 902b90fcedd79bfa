//! Memories (`docs/formats.md#memories`): keys key by key; when both sides changed the text, ours
//! stays and theirs becomes a new memory `NAME (from HOST)` (a `name` key, no `id`: the sync
//! assigns one).

use elroy_markdown::{Mapping, Value, emit_yaml, sanitize_filename, unique_file_name};

use super::keys::merge_keys;
use super::text::pick3;
use super::{Ctx, KindMerge, render};

/// The memory's name: the one the caller knows, else a `name` key, else the stem with `_` read as
/// spaces (`docs/formats.md#memory-index-sync`).
fn memory_name(ctx: &Ctx<'_>, fronts: &[&Mapping]) -> String {
    if let Some(name) = ctx.input.memory_name {
        return name.to_owned();
    }
    if let Some(name) = fronts.iter().find_map(|f| {
        f.get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
    }) {
        return name.to_owned();
    }
    let file = ctx.input.path.rsplit('/').next().unwrap_or(ctx.input.path);
    file.strip_suffix(".md").unwrap_or(file).replace('_', " ")
}

pub(super) fn merge(
    ctx: &Ctx<'_>,
    base: Option<&str>,
    ours: &str,
    theirs: &str,
) -> Option<KindMerge> {
    let (b, o, t) = (ctx.parse_base(base)?, ctx.parse(ours)?, ctx.parse(theirs)?);
    let mut result = KindMerge::default();
    let front = merge_keys(
        &b.front_matter,
        &o.front_matter,
        &t.front_matter,
        ctx.theirs_later,
        &[],
        &mut result.clashes,
    );
    let raw_body = match pick3(&b.raw_body, &o.raw_body, &t.raw_body) {
        Some(body) => body.clone(),
        None => {
            // Both changed the text: theirs becomes a new memory next to this one.
            let name = format!(
                "{} (from {})",
                memory_name(ctx, &[&t.front_matter, &o.front_matter, &b.front_matter]),
                ctx.input.theirs.host
            );
            let dir = match ctx.input.path.rfind('/') {
                Some(i) => &ctx.input.path[..=i],
                None => "",
            };
            let file = unique_file_name(&sanitize_filename(&name, "memory"), |c| {
                !ctx.is_free(&format!("{dir}{c}"))
            });
            let new_path = format!("{dir}{file}");
            ctx.claim(&new_path);
            let mut copy_front = t.front_matter.clone();
            copy_front.remove("id");
            copy_front.insert("name", name.clone());
            let content = format!("---\n{}\n---\n{}", emit_yaml(&copy_front, true), t.raw_body);
            result.new_files.push((new_path, content, name));
            o.raw_body.clone()
        }
    };
    result.content = Some(render(&front, true, &raw_body, &[&o, &t]));
    Some(result)
}
