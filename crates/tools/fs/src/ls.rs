//! `ls` (`docs/tools.md#ls`).

use std::path::{Path, PathBuf};

use elroy_core::{Lineage, ToolContext, ToolEffect, ToolError, ToolFamily, ToolOutput, TypedTool};
use serde_json::{Value, json};

use crate::path::{display, home_dir, resolve};

elroy_core::tool_args! {
    /// Arguments of `ls`.
    pub struct LsArgs {
        path: Option<String> => "File or directory path to inspect. Relative paths are resolved from the current working directory.",
        recursive: Option<bool> => "Whether to recursively expand directories.",
        max_entries: Option<i64> => "Maximum number of entries to include in the listing.",
        max_depth: Option<i64> => "Maximum directory depth to recurse into when recursive is true.",
    }
}

/// Lists a file or a directory (pre-order, directories first, bounded by `max_entries` and
/// `max_depth`): JSON `{"path","type","recursive","max_entries","max_depth","truncated","entries"}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ls;

impl TypedTool for Ls {
    type Args = LsArgs;
    const NAME: &'static str = "ls";
    const EFFECT: ToolEffect = ToolEffect::reads_path("path");
    const FAMILY: Option<&'static ToolFamily> = Some(&crate::FAMILY);
    const LINEAGE: Lineage = Lineage::Elroy050;
    const DESCRIPTION: &'static str =
        "List a file or directory, with bounded recursive expansion for directories.";

    fn run(&self, ctx: &ToolContext, args: LsArgs) -> Result<ToolOutput, ToolError> {
        let max_entries = args.max_entries.unwrap_or(50);
        let max_depth = args.max_depth.unwrap_or(2);
        let recursive = args.recursive.unwrap_or(true);
        if max_entries < 1 {
            return Err("max_entries must be at least 1".into());
        }
        if max_depth < 0 {
            return Err("max_depth must be at least 0".into());
        }
        let given = args.path.as_deref().unwrap_or(".");
        let target = resolve(given, &ctx.cwd, home_dir().as_deref())
            .canonicalize()
            .map_err(|_| ToolError::new(format!("Path does not exist: {given}")))?;
        let cwd = ctx.cwd.canonicalize().unwrap_or_else(|_| ctx.cwd.clone());
        let target_type = entry_type(&target);
        let listing = |ty: &str, recursive: bool, truncated: bool, entries: Vec<Value>| {
            json!({
                "path": display(&target, &cwd),
                "type": ty,
                "recursive": recursive,
                "max_entries": max_entries,
                "max_depth": max_depth,
                "truncated": truncated,
                "entries": entries,
            })
        };
        if target_type != "dir" {
            let entry = build_entry(&target, &cwd);
            return Ok(ToolOutput::json(&listing(
                target_type,
                false,
                false,
                vec![entry],
            )));
        }
        let mut walk = Walk {
            cwd: &cwd,
            recursive,
            max_entries: usize::try_from(max_entries).unwrap_or(usize::MAX),
            max_depth,
            entries: Vec::new(),
            truncated: false,
        };
        std::fs::read_dir(&target)
            .map_err(|e| ToolError::new(format!("Unable to list directory: {given} ({e})")))?;
        walk.walk(&target, 0);
        Ok(ToolOutput::json(&listing(
            target_type,
            recursive,
            walk.truncated,
            walk.entries,
        )))
    }
}

/// `symlink` if the entry itself is a link, else `dir`, else `file`.
fn entry_type(path: &Path) -> &'static str {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => "symlink",
        Ok(m) if m.is_dir() => "dir",
        _ => "file",
    }
}

/// `{"path","type","size_bytes"}`; `size_bytes` follows links and is `null` for directories and
/// for broken links (D1: Elroy crashes on those).
fn build_entry(path: &Path, cwd: &Path) -> Value {
    let size = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Value::Null,
        Ok(m) => Value::from(m.len()),
        Err(_) => Value::Null,
    };
    json!({"path": display(path, cwd), "type": entry_type(path), "size_bytes": size})
}

struct Walk<'a> {
    cwd: &'a Path,
    recursive: bool,
    max_entries: usize,
    max_depth: i64,
    entries: Vec<Value>,
    truncated: bool,
}

impl Walk<'_> {
    /// Pre-order walk; returns `false` once `max_entries` is reached. An unreadable directory
    /// lists as empty.
    fn walk(&mut self, dir: &Path, depth: i64) -> bool {
        let mut children: Vec<(bool, String, String, PathBuf)> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let path = e.path();
                    (entry_type(&path) != "dir", name.to_lowercase(), name, path)
                })
                .collect(),
            Err(_) => return true,
        };
        children.sort_by(|a, b| (a.0, &a.1, &a.2).cmp(&(b.0, &b.1, &b.2)));
        for (not_dir, _, _, child) in children {
            self.entries.push(build_entry(&child, self.cwd));
            if self.entries.len() >= self.max_entries {
                self.truncated = true;
                return false;
            }
            if self.recursive && depth < self.max_depth && !not_dir && !self.walk(&child, depth + 1)
            {
                return false;
            }
        }
        true
    }
}
