//! Exposed tool names: `mcp__<server>__<tool>` (Claude Code's naming), made to fit what OpenAI
//! and Anthropic accept for a tool name, `^[a-zA-Z0-9_-]{1,64}$`.
//!
//! - Every character outside `a-z A-Z 0-9 _ -` becomes `_` (`my.server` → `my_server`).
//! - A name longer than [`MAX_NAME_LEN`] (64) is cut to its first 55 characters followed by `_`
//!   and 8 hex digits of the FNV-1a (32-bit) hash of `<server>\0<tool>` as configured and
//!   listed, so the shortening is stable across runs and machines and two long names that share
//!   their first 55 characters still differ.
//! - A name that is already taken (two tools whose names differ only in characters that became
//!   `_`) gets the same hashed form. Two servers whose names sanitise alike (`a.b`, `a_b`): the
//!   later one (by name) is labelled `<sanitised>_<8 hex digits of the hash of its name>`.
//!
//! Tested through this API by the root package (`tests/mcp_client.rs`, `naming_*`).
//!
//! The exposed name is looked up in a table from exposed name to (server, tool); it is never
//! split on `__` (server and tool names may contain `__` themselves).

/// The longest tool name the providers accept.
pub const MAX_NAME_LEN: usize = 64;

/// Characters kept before `_` and the hash in a shortened name (64 − 1 − 8).
const KEPT: usize = MAX_NAME_LEN - 9;

/// `text` with every character outside `a-zA-Z0-9_-` replaced by `_`.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a, 32 bits: small, stable, documented (not for security).
fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// The label of `server` in its tools' names: its sanitised name, or when an earlier server
/// already has that label, the sanitised name, `_` and the hash of the name.
pub fn server_label(server: &str, taken: impl Fn(&str) -> bool) -> String {
    let label = sanitize(server);
    if taken(&label) {
        format!("{label}_{:08x}", fnv1a(server.as_bytes()))
    } else {
        label
    }
}

/// The prefix every tool of the server labelled `label` starts with: `mcp__<label>__`.
pub fn prefix(label: &str) -> String {
    format!("mcp__{label}__")
}

/// The hashed form of the name of `tool` of `server` (see the module docs).
fn hashed(full: &str, server: &str, tool: &str) -> String {
    let kept: String = full.chars().take(KEPT).collect();
    let key = format!("{server}\0{tool}");
    format!("{kept}_{:08x}", fnv1a(key.as_bytes()))
}

/// The exposed name of `tool` of `server` (labelled `label`, see [`server_label`]); `taken`
/// tells whether a name is already used (by an earlier tool of the same server), in which case
/// the hashed form is used.
pub fn exposed_name(label: &str, server: &str, tool: &str, taken: impl Fn(&str) -> bool) -> String {
    let full = format!("{}{}", prefix(label), sanitize(tool));
    if full.len() <= MAX_NAME_LEN && !taken(&full) {
        full
    } else {
        hashed(&full, server, tool)
    }
}

/// Whether an exposed `name` could belong to `server`: it starts with the server's prefix (or,
/// for a prefix longer than a shortened name keeps, with the part of it that is kept). Used to
/// start only the servers that could provide a called tool.
pub fn could_belong(name: &str, label: &str) -> bool {
    let prefix = prefix(label);
    let kept: String = prefix.chars().take(KEPT).collect();
    name.starts_with(&prefix) || (prefix.len() > KEPT && name.starts_with(&kept))
}
